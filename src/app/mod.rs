//! The command line: the arguments of every command and their conversion into validated
//! configurations, a file per command; the library's commands take only those configurations.

mod args;
mod bench;
mod config_file;
mod predict;
mod reproduce;
mod resume;
mod run;
mod sweep;
mod tsunami;

pub use args::{ClusterArgs, EngineArgs, JsonArgs, TimeBlockArg};
pub use bench::BenchArgs;
pub use config_file::{toml_flags, with_config};
pub use predict::PredictArgs;
pub use reproduce::ReproduceArgs;
pub use resume::{kept_command_line, ResumeArgs};
pub use run::{HeatArgs, RunArgs, SweArgs};
pub use sweep::{SweepAction, SweepArgs, SweepCommandLine};
pub use tsunami::TsunamiArgs;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "wafer-emu",
    version,
    args_override_self = true,
    about = "Emulates wafer-scale dataflow processors on any GPU and runs Domain Translation stencil codes on them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The parser, with each command's `--config FILE.toml` (a run file, which
    /// [`with_config`] expands before parsing), its help naming the command and its keys.
    pub fn command_line() -> clap::Command {
        let mut cli = <Cli as clap::CommandFactory>::command();
        let names: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for name in names {
            let example = match name.as_str() {
                "run" => "`kernel = \"swe\"`, `steps = 100`, `check = true`, `link = [\"0,0,up:delay=1\"]`",
                "tsunami" => "`duration = \"6h\"`, `resolution = \"30min\"`, `gauges = \"g.csv\"`",
                "predict" => "`kernel = \"heat5\"`, `n = 2`, `set = [\"hop_latency_ns=2\"]`",
                "bench" => "`kernel = \"heat5\"`, `grid = 2048`, `n = \"2,8\"`",
                "reproduce" => "`pes = \"cs3\"`, `link_jitter = 5`",
                "sweep" => "`out = \"sweep\"`, `shard = \"0/4\"`",
                _ => "`json = \"out.json\"`",
            };
            let help = format!(
                "A run file of `wafer-emu {name}`'s flags, given after the command: TOML whose keys \
                 are its long flags ({example}); flags given on the command line override it, \
                 unknown keys are refused by name"
            );
            let config = clap::Arg::new("config")
                .long("config")
                .value_name("FILE.toml")
                .help(help);
            cli = cli.mut_subcommand(name, |c| c.arg(config));
        }
        cli
    }

    /// Parses a command line (the program's name first) with [`Cli::command_line`].
    pub fn parse_line<I, T>(line: I) -> std::result::Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::FromArgMatches;
        Self::command_line()
            .try_get_matches_from(line)
            .and_then(|matches| Self::from_arg_matches(&matches))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a stencil kernel on an emulated wafer or cluster of wafers and write the field (.npy,
    /// .png), a summary and the link statistics.
    Run(RunArgs),
    /// List the GPU adapters wgpu finds, best first, with the limits that matter here.
    Adapters(AdaptersArgs),
    /// Time the emulated wafer (and a cluster) against the global kernel, the CPU backend and the
    /// copy ceilings.
    Bench(BenchArgs),
    /// Predict the real machine's speed from the timing model (cycles, steps/s, utilisation).
    Predict(PredictArgs),
    /// Regenerate the paper's performance results from the timing model (CSV, PNG, report.md).
    Reproduce(ReproduceArgs),
    /// The asteroid tsunami of the paper's section 5.2.3 on real relief: frames, maps, gauges
    /// and a CF NetCDF file.
    Tsunami(TsunamiArgs),
    /// Continue a run or tsunami from the checkpoint in its folder, with the command line that
    /// wrote it (`wafer-emu resume DIR --steps 500`: only the run's length and outputs may change).
    Resume(ResumeArgs),
    /// Run many `run` or `predict` cases from a sweep file (TOML: `command`, `[base]`,
    /// `[vary]` lists, `[[case]]`): one folder per case and one results table (JSONL and
    /// CSV); resumable, and shardable for Slurm array jobs.
    Sweep(SweepArgs),
}

#[derive(Debug, Args)]
pub struct AdaptersArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub json: JsonArgs,
}
