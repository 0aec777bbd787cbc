//! Arguments and parsers that several commands share.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::cluster::{ClusterGeometry, LinkConfig, LinkSpec};
use crate::engine::gpu::Placement;
use crate::engine::{EngineKind, EngineRequest};
use crate::io::JsonTarget;
use crate::kernels::swe::relief::ReliefGrid;
use crate::kernels::swe::Bathymetry;
use crate::kernels::KernelKind;
use crate::timing::params::node_preset;
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// `--json FILE` on every command.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Also write the report, with every parameter, as JSON to FILE (`-` for standard output)
    #[arg(long = "json", value_name = "FILE")]
    pub path: Option<PathBuf>,
}

impl JsonArgs {
    /// The validated target (a file is checked before any work).
    pub fn target(&self) -> Result<Option<JsonTarget>> {
        self.path.as_deref().map(JsonTarget::parse).transpose()
    }

    /// The validated target of a command that writes into the output folder `out`
    /// ([`JsonTarget::check_beside`]).
    pub fn target_beside(&self, out: Option<&std::path::Path>) -> Result<Option<JsonTarget>> {
        let target = self.target()?;
        if let (Some(target), Some(out)) = (&target, out) {
            target.check_beside(out)?;
        }
        Ok(target)
    }
}

/// Where to run.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// auto (best adapter, CPU backend if none), cpu, vulkan, gl, metal or dx12 [env: WGPU_BACKEND]
    #[arg(long)]
    pub backend: Option<String>,
    /// Use the adapter whose name contains this (case-insensitive) [env: WGPU_ADAPTER_NAME]
    #[arg(long)]
    pub adapter: Option<String>,
}

impl EngineArgs {
    pub fn request(&self) -> Result<EngineRequest> {
        EngineRequest::new(self.backend.as_deref(), self.adapter.as_deref())
    }
}

/// The cluster: wafers, their links, and the devices they run on.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Wafers of the cluster, WxH, each with --pes PEs, joined on a torus by links
    #[arg(long, default_value = "1x1", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// Delay of every link, in rounds (one round = one step of an unhindered wafer)
    #[arg(long, default_value_t = LinkSpec::default().delay, value_parser = clap::value_parser!(u32).range(0..=crate::cluster::link::MAX_DELAY as i64))]
    pub link_delay: u32,
    /// Capacity of every link, in packages (0 cannot progress and is reported)
    #[arg(long, default_value_t = LinkSpec::default().capacity)]
    pub link_capacity: u32,
    /// One link's own delay and capacity, WX,WY,right|up:delay=D,capacity=C (repeatable)
    #[arg(long = "link", value_name = "SPEC")]
    pub links: Vec<String>,
    /// Devices to spread the wafers over, each with its own queue and thread (several
    /// adapters of the same kind are used in turn)
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// Seconds a device thread waits for a package or link room before it reports a hang
    #[arg(long, default_value_t = 60.0)]
    pub link_timeout: f64,
    /// Steps per time block (the fused engine on a GPU, or the CPU backend): the PEs clear
    /// of the bands along the wafer's left and low edges (whose points read the links)
    /// advance this many steps at once (1, 3, 5, 7, 9, 15 or 21; 1: none; every kernel), or
    /// auto: what `--engine auto` picks (none for an engine named by --engine)
    #[arg(long, default_value = "auto", value_parser = parse_time_block)]
    pub time_block: TimeBlockArg,
}

/// `--time-block`: `auto` (`None`) or a number of steps (1: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBlockArg(pub Option<u32>);

/// `auto` or a number of steps, checked with the rest of the configuration.
pub(crate) fn parse_time_block(s: &str) -> std::result::Result<TimeBlockArg, String> {
    match s {
        "auto" => Ok(TimeBlockArg(None)),
        k => k.parse().map(|k| TimeBlockArg(Some(k))).map_err(|_| {
            format!("'{s}' is not a time block: use auto or a number of steps such as 5")
        }),
    }
}

impl ClusterArgs {
    /// The engine `--engine NAME` asks for, with `--time-block 1` keeping `auto` from
    /// blocking in time.
    pub(crate) fn engine_kind(&self, name: &str) -> Result<EngineKind> {
        Ok(match (EngineKind::parse(name)?, self.time_block.0) {
            (EngineKind::Auto, Some(1)) => EngineKind::AutoWithoutBlocks,
            (kind, _) => kind,
        })
    }

    /// The cluster of wafers of `wafer`, its links, and the placement.
    pub(crate) fn config(
        &self,
        wafer: WaferGeometry,
    ) -> Result<(ClusterGeometry, LinkConfig, Placement)> {
        let cluster = ClusterGeometry::new(self.wafers.0, self.wafers.1, wafer)?;
        let mut links = LinkConfig::uniform(self.link_delay, self.link_capacity);
        for spec in &self.links {
            let parsed = links.parse_override(spec)?;
            links.overrides.push(parsed);
        }
        links.resolve(&cluster)?;
        if !(self.link_timeout > 0.0 && self.link_timeout <= 86_400.0) {
            return Err(invalid!(
                "link-timeout = {} s is out of range: allowed (0, 86400]",
                self.link_timeout
            ));
        }
        let placement = Placement {
            devices: self.devices,
            time_block: self.time_block.0.unwrap_or(1),
            timeout: Duration::from_secs_f64(self.link_timeout),
            ..Placement::default()
        };
        placement.validate(&cluster)?;
        Ok((cluster, links, placement))
    }
}

/// The sea floor named on the command line.
pub(crate) fn bathymetry(relief: &str) -> Result<Bathymetry> {
    Ok(match relief.split_once(':') {
        Some(("flat", depth)) => Bathymetry::Flat(depth.trim().parse().map_err(|_| {
            invalid!("relief '{relief}': flat:DEPTH_M needs a depth in metres")
        })?),
        _ if relief.ends_with(".json") => Bathymetry::File(relief.into()),
        _ => Bathymetry::Etopo(ReliefGrid::parse(relief).map_err(|_| {
            invalid!(
                "unknown relief '{relief}': allowed etopo1-1deg, etopo1-6min, flat:DEPTH_M or FILE.json"
            )
        })?),
    })
}

/// A node preset name or WxH.
pub(crate) fn parse_node(s: &str) -> Result<(u32, u32)> {
    node_preset(s).or_else(|e| parse_pes(s).map_err(|_| e))
}

pub(crate) fn parse_pair(s: &str) -> std::result::Result<(f64, f64), String> {
    let bad = || format!("'{s}' is not a pair of numbers: use SOUTH,NORTH such as -70,70");
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

/// The kernels of the registry with their summaries, for help texts.
pub(crate) fn kernel_help() -> String {
    let kernels: Vec<String> = KernelKind::ALL
        .iter()
        .map(|k| format!("{}: {}", k.name(), k.spec().summary))
        .collect();
    format!("Kernel: {}", kernels.join("; "))
}

pub(crate) fn parse_pes(s: &str) -> std::result::Result<(u32, u32), String> {
    let bad = || format!("'{s}' is not a count WxH: use two counts such as 64x64, or one number");
    let (w, h) = s.split_once(['x', 'X']).unwrap_or((s, s));
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

/// The most model time any flag takes: 10 days.
pub(crate) const MAX_MODEL_SECONDS: f64 = 240.0 * 3600.0;

/// Model time with its unit, `60s`, `10min` or `2h` (decimals allowed), as seconds, above 0
/// and at most [`MAX_MODEL_SECONDS`]. A bare number is refused: `old_unit` is the unit the
/// flag took before units were required, so the message gives the old value's new spelling.
pub(crate) fn parse_model_time(s: &str, old_unit: &str) -> std::result::Result<f64, String> {
    let units = [("min", 60.0), ("s", 1.0), ("h", 3600.0)];
    let Some((number, scale)) = units
        .iter()
        .find_map(|&(unit, scale)| s.strip_suffix(unit).map(|n| (n, scale)))
    else {
        return Err(match s.trim().parse::<f64>() {
            Ok(_) => format!("model time needs its unit: {s}{old_unit} (or s, min, h)"),
            Err(_) => {
                format!("'{s}' is not a model time: use a number and s, min or h (60s, 10min, 2h)")
            }
        });
    };
    let seconds = number
        .trim()
        .parse::<f64>()
        .map(|v| v * scale)
        .map_err(|_| {
            format!("'{s}' is not a model time: use a number and s, min or h (60s, 10min, 2h)")
        })?;
    match seconds > 0.0 && seconds <= MAX_MODEL_SECONDS {
        true => Ok(seconds),
        false => Err(format!("{s}: allowed above 0s, at most 240h")),
    }
}

/// A picture's colour range: `auto` (`None`: each picture its own) or `LO,HI`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColourRange(pub Option<(f64, f64)>);

/// `auto` or `LO,HI`, finite with LO < HI.
pub(crate) fn parse_colour_range(s: &str) -> std::result::Result<ColourRange, String> {
    if s == "auto" {
        return Ok(ColourRange(None));
    }
    let bad = || format!("'{s}' is not a range: use auto or LO,HI such as -2,2");
    let (lo, hi) = s.split_once(',').ok_or_else(bad)?;
    let (lo, hi): (f64, f64) = (
        lo.trim().parse().map_err(|_| bad())?,
        hi.trim().parse().map_err(|_| bad())?,
    );
    match lo.is_finite() && hi.is_finite() && lo < hi {
        true => Ok(ColourRange(Some((lo, hi)))),
        false => Err(format!("{s}: allowed finite LO < HI, or auto")),
    }
}

/// The refusal of a flag that was renamed: its new spelling with the value given.
pub(crate) fn renamed(old: &str, value: &str, new: &str) -> crate::Error {
    invalid!("--{old} {value}: renamed, use {new}")
}
