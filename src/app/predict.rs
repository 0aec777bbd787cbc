//! `wafer-emu predict`: its arguments and the validated `PredictCommand`.

use std::path::PathBuf;

use clap::Args;

use crate::commands::predict::PredictCommand;
use crate::kernels::KernelKind;
use crate::timing::{ClusterShape, PredictConfig, TelemetryPlan, TimingParams};
use crate::{invalid, Result};

use super::args::{kernel_help, parse_node, parse_pes, renamed, EngineArgs, JsonArgs};

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct PredictArgs {
    #[arg(default_value = "heat5", help = kernel_help())]
    pub kernel: String,
    /// Wafers (nodes) of the cluster, WxH
    #[arg(long, default_value = "8x8", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// PEs per wafer: cs3 (744x1116), square (720x720) or WxH
    #[arg(long, default_value = "cs3")]
    pub pes: String,
    /// Grid points per PE side
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: u32,
    /// dt (domain translation, the default), static, or ghosts:G (overlapping ghosts of width G)
    #[arg(long)]
    pub method: Option<String>,
    /// Clock in GHz (the paper: 0.75 and 1.2)
    #[arg(long)]
    pub clock_ghz: Option<f64>,
    /// Inter-wafer link latency in microseconds (default 10)
    #[arg(long)]
    pub link_latency_us: Option<f64>,
    /// Bandwidth per wafer side and direction in Gbit/s (default 300)
    #[arg(long)]
    pub link_bandwidth_gbps: Option<f64>,
    /// Any other parameter, KEY=VALUE (a0, a1, a2, hop_latency_ns or hop_latency_s,
    /// link_capacity, node_power_kw or node_power_w, ...)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A file of KEY = VALUE lines, or JSON (`predict --json` output, or an object of
    /// parameters), applied before the flags
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Simulate every wafer instead of one wafer linked to itself (slow for large clusters)
    #[arg(long)]
    pub full: bool,
    /// Give up on a steady state after this many steps
    #[arg(long, default_value_t = 20_000)]
    pub max_steps: u64,
    /// Run the clocks on cpu or gpu
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Write sampled clocks as .npy, shape (wafers_x, wafers_y, pes_x/stride, pes_y/stride,
    /// samples), of the simulated wafers (1 x 1 without --full)
    #[arg(long, value_name = "FILE")]
    pub telemetry: Option<PathBuf>,
    /// Sample the clocks every K steps
    #[arg(long, value_name = "K", default_value_t = 16)]
    pub sample_every_steps: u64,
    #[arg(long, hide = true)]
    pub sample_every: Option<String>,
    /// Sample every S-th PE in each direction
    #[arg(long, default_value_t = 32)]
    pub sample_stride: u32,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

impl PredictArgs {
    /// The validated command.
    pub fn command(&self) -> Result<PredictCommand> {
        let model = self.config()?;
        let gpu = match self.device.as_str() {
            "gpu" => Some(self.engine.request()?),
            _ => None,
        };
        Ok(PredictCommand {
            model,
            gpu,
            telemetry: self.telemetry.clone(),
        })
    }

    /// The validated model configuration.
    fn config(&self) -> Result<PredictConfig> {
        if let Some(k) = &self.sample_every {
            let new = format!("--sample-every-steps {k} (predict counts steps)");
            return Err(renamed("sample-every", k, &new));
        }
        let kernel = KernelKind::parse(&self.kernel)?;
        let mut params = TimingParams::paper(kernel);
        if let Some(path) = &self.params {
            params.load(path)?;
        }
        let flags = [
            ("clock_ghz", self.clock_ghz),
            ("link_latency_us", self.link_latency_us),
            ("link_bandwidth_gbps", self.link_bandwidth_gbps),
        ];
        for (key, value) in flags {
            if let Some(v) = value {
                params.set(key, &v.to_string())?;
            }
        }
        if let Some(method) = &self.method {
            params.set("method", method)?;
        }
        for pair in &self.set {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| invalid!("--set '{pair}' is not KEY=VALUE"))?;
            params.set(key.trim(), value)?;
        }
        params.validate()?;
        let (pes_x, pes_y) = parse_node(&self.pes)?;
        let shape = ClusterShape {
            wafers_x: self.wafers.0,
            wafers_y: self.wafers.1,
            pes_x,
            pes_y,
            n: self.n,
            p: kernel.spec().shift_per_step(),
        };
        shape.validate()?;
        let at_peak =
            kernel.flops_per_point() as f64 * (self.n as f64).powi(2) / params.peak_flops_per_cycle;
        if params.cost.cycles(self.n) < at_peak {
            return Err(invalid!(
                "the cost model gives f({n}) = {:.0} cycles per step, fewer than the FLOPs need at peak ({at_peak:.0}): allowed a model at or below peak (raise a0, a1, a2 or lower peak_flops_per_cycle)",
                params.cost.cycles(self.n),
                n = self.n
            ));
        }
        if self.max_steps == 0 {
            return Err(invalid!("max-steps = 0: allowed 1 or more"));
        }
        if !matches!(self.device.as_str(), "cpu" | "gpu") {
            return Err(invalid!(
                "unknown device '{}': allowed cpu, gpu",
                self.device
            ));
        }
        let telemetry = match &self.telemetry {
            None => None,
            Some(_) if self.sample_every_steps == 0 || self.sample_stride == 0 => {
                return Err(invalid!(
                    "sample-every-steps = {} and sample-stride = {} must both be >= 1",
                    self.sample_every_steps,
                    self.sample_stride
                ))
            }
            Some(_) => {
                let wafers = match self.full {
                    true => shape.wafer_count() as u64,
                    false => 1,
                };
                let per_sample = wafers
                    * shape.pes_x.div_ceil(self.sample_stride) as u64
                    * shape.pes_y.div_ceil(self.sample_stride) as u64;
                let samples = self.max_steps / self.sample_every_steps + 1;
                // The samples, then their flattened copy, 8 bytes each.
                let bytes = per_sample.saturating_mul(samples).saturating_mul(16);
                crate::memory::check_host_memory(
                    "the telemetry",
                    bytes,
                    "sample less often (--sample-every-steps), fewer PEs (--sample-stride) or fewer steps (--max-steps)",
                )?;
                Some(TelemetryPlan {
                    every: self.sample_every_steps,
                    stride: self.sample_stride,
                })
            }
        };
        Ok(PredictConfig {
            params,
            shape,
            full: self.full,
            max_steps: self.max_steps,
            telemetry,
        })
    }
}
