//! `wafer-emu bench`: its arguments and the validated `BenchConfig`.

use clap::Args;

use crate::commands::bench::BenchConfig;
use crate::kernels::KernelKind;
use crate::Result;

use super::args::{kernel_help, parse_pes, parse_time_block, EngineArgs, JsonArgs, TimeBlockArg};

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    #[arg(default_value = "heat5", help = kernel_help())]
    pub kernel: String,
    /// Side of the square global grid, the same for every variant
    #[arg(long, default_value_t = 1024)]
    pub grid: u32,
    /// Points per PE side to compare (comma-separated); the wafer has grid/n PEs per side
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32", value_parser = clap::value_parser!(u32).range(1..=crate::wafer::MAX_N as i64))]
    pub n: Vec<u32>,
    /// Steps per timed repetition (rounded up to whole time blocks)
    #[arg(long, default_value_t = 20)]
    pub steps: u64,
    /// Repetitions (the median is reported)
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Skip the CPU backend
    #[arg(long)]
    pub no_cpu: bool,
    /// Also time the grid as a cluster of WxH wafers (one device, and --devices)
    #[arg(long, default_value = "1x1", value_parser = parse_pes)]
    pub wafers: (u32, u32),
    /// Devices for the multi-device cluster row
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// Steps per time block of extra rows: the GPU's fused engine and the CPU backend, every kernel; auto: each engine's own, as `run --engine auto` takes them (on a GPU 5, on a CPU adapter 5 for heat and 3 for shallow water, in registers; on the CPU backend 15 for heat, 9 for swe and 5 for swe-c; shorter where the wafer is too small); or 1, 3, 5, 7, 9, 15 or 21 for every engine (1: none)
    #[arg(long, default_value = "auto", value_parser = parse_time_block)]
    pub time_block: TimeBlockArg,
    /// After the timed runs, run each GPU variant once more with a GPU timestamp before and after every dispatch, and print the GPU time per step of each kernel
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}

impl BenchArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<BenchConfig> {
        let config = BenchConfig {
            kernel: KernelKind::parse(&self.kernel)?,
            grid: self.grid,
            ns: self.n.clone(),
            steps: self.steps,
            reps: self.reps,
            engine: self.engine.request()?,
            cpu: !self.no_cpu,
            wafers: self.wafers,
            devices: self.devices,
            time_block: self.time_block.0,
            profile: self.profile,
        };
        config.validate()?;
        Ok(config)
    }
}
