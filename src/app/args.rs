//! Arguments and parsers that several commands share.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::cluster::{ClusterGeometry, LinkConfig, LinkSpec};
use crate::engine::gpu::Placement;
use crate::engine::EngineRequest;
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
    /// advance this many steps at once (1, 3, 5, 7, 9, 15 or 21; 1: none; every kernel)
    #[arg(long, default_value_t = 1)]
    pub time_block: u32,
}

impl ClusterArgs {
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
            time_block: self.time_block,
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
