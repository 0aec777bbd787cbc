//! `wafer-emu sweep`: its arguments, and the command line its cases run through.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{toml_flags, Cli, Command};
use crate::commands::{self, sweep::CommandLine};
use crate::{invalid, Result};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// The sweep file
    pub file: Option<PathBuf>,
    /// The sweep's folder: a folder per case, results.jsonl and results.csv
    #[arg(long, default_value = "sweep")]
    pub out: PathBuf,
    /// Run every N-th case starting at case I (default: SLURM_ARRAY_TASK_ID /
    /// SLURM_ARRAY_TASK_COUNT when set, else every case); a shard writes its own table
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SweepAction {
    /// Join the shards' tables of a sweep folder into results.jsonl and results.csv
    Merge {
        /// The sweep folder
        dir: PathBuf,
    },
    /// Draw a figure of the results against a parameter, one line per value of another
    Plot {
        /// The sweep folder
        dir: PathBuf,
        /// The parameter (or figure) along x, a column of results.csv
        #[arg(long)]
        x: String,
        /// The figure along y, a column of results.csv
        #[arg(long)]
        y: String,
        /// One line per value of this column
        #[arg(long)]
        by: Option<String>,
        /// Logarithmic x axis
        #[arg(long)]
        log_x: bool,
        /// Logarithmic y axis
        #[arg(long)]
        log_y: bool,
        /// The PNG to write (default DIR/Y_vs_X.png)
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// The sweep's cases through this command line: their flags from the run-file keys, parsed
/// and run as `run` and `predict` are.
pub struct SweepCommandLine;

impl CommandLine for SweepCommandLine {
    fn flags(
        &self,
        source: &str,
        command: &str,
        table: &toml::Table,
    ) -> Result<(Option<String>, Vec<String>)> {
        toml_flags(source, command, table)
    }

    fn check(&self, line: &[String]) -> std::result::Result<(), String> {
        Cli::parse_line(line)
            .map(|_| ())
            .map_err(|e| e.to_string().lines().next().unwrap_or("").to_string())
    }

    fn run(&self, line: &[String], warn: &mut dyn FnMut(&str)) -> Result<Value> {
        let cli = Cli::parse_line(line).map_err(|e| invalid!("{e}"))?;
        match cli.command {
            Command::Run(args) => {
                let config = args.config()?;
                Ok(commands::run::run(&config, warn, &mut |_, _| {})?.json())
            }
            Command::Predict(args) => {
                let command = args.command()?;
                let (_, prediction) = commands::predict::predict(&command, warn, &mut |_, _| {})?;
                Ok(prediction.json())
            }
            _ => Err(invalid!("sweeps run `run` or `predict` cases")),
        }
    }
}
