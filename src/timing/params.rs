//! Parameters of the timing model (docs/design.md, section 6), with the paper's values as defaults.
//! Every value can be overridden from the command line or from a `key = value` file.

use std::path::Path;

use crate::cluster::link::MAX_CAPACITY;
use crate::kernels::{CostModel, KernelKind};
use crate::{invalid, Result};

/// How the grid is split across PEs and wafers (the paper's Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Data flows right and up only; the grid shifts by (p, p) per step.
    DomainTranslation,
    /// Fixed subdomains exchanging halos with all neighbours every step.
    StaticDecomposition,
    /// Fixed subdomains with ghost zones `g` wide, exchanged every `g` steps at the cost of
    /// redundant work on the ghost volume.
    OverlappingGhosts { g: u32 },
}

impl Method {
    /// Parses `dt`, `static` or `ghosts:G`.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || invalid!("unknown method '{s}': allowed dt, static, ghosts:G with G >= 1");
        match s.split_once(':') {
            None if s == "dt" => Ok(Self::DomainTranslation),
            None if s == "static" => Ok(Self::StaticDecomposition),
            Some(("ghosts", g)) => match g.parse() {
                Ok(g) if g >= 1 => Ok(Self::OverlappingGhosts { g }),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// The spelling [`Method::parse`] reads: `dt`, `static`, `ghosts:G`.
    pub fn flag(&self) -> String {
        match self {
            Self::DomainTranslation => "dt".into(),
            Self::StaticDecomposition => "static".into(),
            Self::OverlappingGhosts { g } => format!("ghosts:{g}"),
        }
    }

    /// A short name for reports.
    pub fn name(&self) -> String {
        match self {
            Self::DomainTranslation => "domain translation".into(),
            Self::StaticDecomposition => "static decomposition".into(),
            Self::OverlappingGhosts { g } => format!("overlapping ghosts (g = {g})"),
        }
    }
}

/// The wafer presets of the paper's Table 5.
pub fn node_preset(name: &str) -> Result<(u32, u32)> {
    match name {
        "cs3" | "744x1116" => Ok((744, 1116)),
        "square" | "720x720" => Ok((720, 720)),
        _ => Err(invalid!(
            "unknown node size '{name}': allowed cs3 (744x1116), square (720x720) or WxH"
        )),
    }
}

/// Everything the timing model needs besides the cluster shape.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingParams {
    pub kernel: KernelKind,
    pub cost: CostModel,
    /// Clock frequency in Hz (0.75 GHz and 1.2 GHz in the paper).
    pub clock_hz: f64,
    /// Peak FLOPs per cycle per PE.
    pub peak_flops_per_cycle: f64,
    /// Latency of one on-wafer hop between neighbouring PEs, in seconds (< 2 ns).
    pub hop_latency_s: f64,
    /// Latency of an inter-wafer link (ethernet and switch), in seconds.
    pub link_latency_s: f64,
    /// Most extra latency of one link (its cables and switches), in seconds: each link
    /// draws its own from `[0, jitter]`, the same in every run.
    pub link_jitter_s: f64,
    /// Bandwidth of one wafer side in one direction, bits per second.
    pub link_bandwidth_bps: f64,
    /// Packages a link holds before its sender stalls.
    pub link_capacity: u32,
    /// Power of one node in watts.
    pub node_power_w: f64,
    pub method: Method,
}

impl TimingParams {
    /// The paper's values for a kernel: 0.75 GHz, 2 FLOP/cycle, 1.5 ns hops, 10 us and
    /// 300 Gbit/s per side and direction between wafers, 23 kW per node.
    pub fn paper(kernel: KernelKind) -> Self {
        Self {
            kernel,
            cost: kernel.spec().cost,
            clock_hz: 0.75e9,
            peak_flops_per_cycle: 2.0,
            hop_latency_s: 1.5e-9,
            link_latency_s: 10e-6,
            link_jitter_s: 0.0,
            link_bandwidth_bps: 300e9,
            link_capacity: 64,
            node_power_w: 23e3,
            method: Method::DomainTranslation,
        }
    }

    /// Sets one parameter by name from text; the error names the key and the allowed values.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let number = || -> Result<f64> {
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| invalid!("{key} = '{value}' is not a number"))
        };
        match key {
            "a0" => self.cost.a0 = number()?,
            "a1" => self.cost.a1 = number()?,
            "a2" => self.cost.a2 = number()?,
            "clock_ghz" => self.clock_hz = number()? * 1e9,
            "clock_hz" => self.clock_hz = number()?,
            "peak_flops_per_cycle" => self.peak_flops_per_cycle = number()?,
            "hop_latency_ns" => self.hop_latency_s = number()? * 1e-9,
            "hop_latency_s" => self.hop_latency_s = number()?,
            "link_latency_us" => self.link_latency_s = number()? * 1e-6,
            "link_latency_s" => self.link_latency_s = number()?,
            "link_jitter_us" => self.link_jitter_s = number()? * 1e-6,
            "link_jitter_s" => self.link_jitter_s = number()?,
            "link_bandwidth_gbps" => self.link_bandwidth_bps = number()? * 1e9,
            "link_bandwidth_bps" => self.link_bandwidth_bps = number()?,
            "link_capacity" => {
                let v = number()?;
                if v.fract() != 0.0 || !(0.0..=u32::MAX as f64).contains(&v) {
                    return Err(invalid!("link_capacity = {value} must be a whole number"));
                }
                self.link_capacity = v as u32;
            }
            "node_power_kw" => self.node_power_w = number()? * 1e3,
            "node_power_w" => self.node_power_w = number()?,
            "method" => self.method = Method::parse(value.trim())?,
            _ => {
                return Err(invalid!(
                    "unknown timing parameter '{key}': allowed {}",
                    KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// The parameters in SI units, under the names [`TimingParams::set`] reads back exactly.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "a0": self.cost.a0, "a1": self.cost.a1, "a2": self.cost.a2,
            "clock_hz": self.clock_hz,
            "peak_flops_per_cycle": self.peak_flops_per_cycle,
            "hop_latency_s": self.hop_latency_s,
            "link_latency_s": self.link_latency_s,
            "link_jitter_s": self.link_jitter_s,
            "link_bandwidth_bps": self.link_bandwidth_bps,
            "link_capacity": self.link_capacity,
            "node_power_w": self.node_power_w,
            "method": self.method.flag(),
        })
    }

    /// Reads `key = value` lines (`#` starts a comment) from a file, or JSON: an object of
    /// parameters, or a `predict --json` report (its `parameters`).
    pub fn load(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid!("cannot read timing parameters from {}: {e}", path.display()))?;
        if text.trim_start().starts_with('{') {
            return self.load_json(path, &text);
        }
        for (k, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line.split_once('=').ok_or_else(|| {
                invalid!(
                    "{}:{}: expected key = value, found '{line}'",
                    path.display(),
                    k + 1
                )
            })?;
            self.set(key.trim(), value)?;
        }
        Ok(())
    }

    fn load_json(&mut self, path: &Path, text: &str) -> Result<()> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid!("timing parameters {}: {e}", path.display()))?;
        let object = value.get("parameters").unwrap_or(&value);
        let serde_json::Value::Object(entries) = object else {
            return Err(invalid!(
                "timing parameters {}: expected an object of parameters",
                path.display()
            ));
        };
        for (key, value) in entries {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(x) => x.to_string(),
                other => {
                    return Err(invalid!(
                        "timing parameters {}: {key} = {other}: allowed a number or a string",
                        path.display()
                    ))
                }
            };
            self.set(key, &text)
                .map_err(|e| invalid!("timing parameters {}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Checks every value; errors name the value and the allowed range.
    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("clock_ghz", self.clock_hz / 1e9),
            ("peak_flops_per_cycle", self.peak_flops_per_cycle),
            ("link_bandwidth_gbps", self.link_bandwidth_bps / 1e9),
            ("node_power_kw", self.node_power_w / 1e3),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid!("{name} = {v} must be a finite number > 0"));
            }
        }
        let non_negative = [
            ("a0", self.cost.a0),
            ("a1", self.cost.a1),
            ("a2", self.cost.a2),
            ("hop_latency_ns", self.hop_latency_s * 1e9),
            ("link_latency_us", self.link_latency_s * 1e6),
            ("link_jitter_us", self.link_jitter_s * 1e6),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid!("{name} = {v} must be a finite number >= 0"));
            }
        }
        if self.cost.a0 + self.cost.a1 + self.cost.a2 == 0.0 {
            return Err(invalid!(
                "the cost model a0 = 0, a1 = 0, a2 = 0 costs no cycles per step: allowed a0, a1, a2 >= 0 with one of them > 0"
            ));
        }
        if self.link_capacity == 0 || self.link_capacity > MAX_CAPACITY {
            return Err(invalid!(
                "link_capacity = {}: allowed 1..={MAX_CAPACITY} packages",
                self.link_capacity
            ));
        }
        Ok(())
    }

    /// Words each PE receives per step, from the kernel's real package layout (its comm
    /// layers, and the constant fields that travel with their points).
    pub fn io_words_per_pe(&self, n: u32) -> u64 {
        self.kernel.spec().io_words_per_pe(n)
    }

    /// Seconds per cycle.
    pub fn cycle_s(&self) -> f64 {
        1.0 / self.clock_hz
    }
}

/// Names accepted by [`TimingParams::set`]: each quantity with a unit in two spellings, the
/// flags' units and SI (as `predict --json` writes them).
pub const KEYS: [&str; 18] = [
    "a0",
    "a1",
    "a2",
    "clock_ghz",
    "clock_hz",
    "peak_flops_per_cycle",
    "hop_latency_ns",
    "hop_latency_s",
    "link_latency_us",
    "link_latency_s",
    "link_jitter_us",
    "link_jitter_s",
    "link_bandwidth_gbps",
    "link_bandwidth_bps",
    "link_capacity",
    "node_power_kw",
    "node_power_w",
    "method",
];
