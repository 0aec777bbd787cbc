//! What runs a problem, as a value: decided once ([`super::plan`]), the only thing engines
//! are built from ([`super::simulator`]), printed and written to JSON as data.

use serde::Serialize;

/// Where the arithmetic runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// The CPU backend (rayon), no adapter.
    Cpu,
    /// A wgpu adapter (a GPU, or a software one).
    Adapter,
}

/// The engine a problem runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "engine", rename_all = "snake_case")]
pub enum EnginePlan {
    /// The plain global-grid kernel: no PEs, no translation (the reference).
    Global { on: Backend },
    /// The CPU backend's emulated wafer, a row of PEs at a time, in time blocks of
    /// `time_block` steps (1: none).
    CpuWafer { time_block: u32 },
    /// The emulated wafer on an adapter: each stage as Table 3's `sendrecv` and `compute`
    /// dispatches, or `fused` into one (whose shape the adapter's tuning picks: tiles of PEs in
    /// workgroup memory, or direct reads); in time blocks of `time_block` steps (fused only;
    /// 1: none); each wafer asked for run as a block of `sub_wafers` that fit a binding.
    GpuWafer {
        fused: bool,
        time_block: u32,
        sub_wafers: [u32; 2],
    },
}

impl EnginePlan {
    /// The emulated wafer on an adapter as one wafer, explicit or `fused`, in time blocks of
    /// `time_block` steps (1: none).
    pub fn gpu_wafer(fused: bool, time_block: u32) -> Self {
        Self::GpuWafer {
            fused,
            time_block,
            sub_wafers: [1, 1],
        }
    }

    /// Steps per time block (1: none).
    pub fn time_block(&self) -> u32 {
        match *self {
            Self::Global { .. } => 1,
            Self::CpuWafer { time_block } | Self::GpuWafer { time_block, .. } => time_block,
        }
    }

    /// The plan in a line: `gpu_wafer fused time_block=5 sub_wafers=1x1`.
    pub fn line(&self) -> String {
        match *self {
            Self::Global { on } => format!("global on={}", backend_name(on)),
            Self::CpuWafer { time_block } => format!("cpu_wafer time_block={time_block}"),
            Self::GpuWafer {
                fused,
                time_block,
                sub_wafers: [x, y],
            } => format!(
                "gpu_wafer {} time_block={time_block} sub_wafers={x}x{y}",
                if fused { "fused" } else { "explicit" }
            ),
        }
    }
}

fn backend_name(on: Backend) -> &'static str {
    match on {
        Backend::Cpu => "cpu",
        Backend::Adapter => "adapter",
    }
}
