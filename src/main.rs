//! The `wafer-emu` command: a thin layer over the library's commands.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use wafer_emu::cli::{Cli, Command};
use wafer_emu::commands;

fn main() -> ExitCode {
    match dispatch(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            let code = match e.downcast_ref::<wafer_emu::Error>() {
                Some(e) if e.is_bad_input() => 2,
                Some(wafer_emu::Error::BlowUp(_)) => 3,
                _ => 1,
            };
            ExitCode::from(code)
        }
    }
}

/// Prints to standard output; a reader that closed the pipe (`... | head -1`) ends the
/// program quietly, with success.
fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        result => Ok(result?),
    }
}

fn dispatch(command: Command) -> Result<()> {
    let mut warn = |w: &str| eprintln!("{w}");
    match command {
        Command::Run(args) => {
            let config = args.config()?;
            let bar = ProgressBar::new(config.steps).with_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} steps, {per_sec}, eta {eta}")
                    .expect("valid template"),
            );
            let report =
                commands::run::run(&config, &mut warn, &mut |done, _| bar.set_position(done))?;
            bar.finish_and_clear();
            emit(&report.to_string())?;
        }
        Command::Adapters(args) => {
            for line in commands::adapters::adapters(&args.request()?) {
                emit(&format!("{line}\n"))?;
            }
        }
        Command::Reproduce(args) => {
            let config = args.config()?;
            let bar = ProgressBar::new_spinner();
            let spinner = bar.clone();
            let progress =
                Box::new(move |what: &str| spinner.set_message(format!("model: {what}")));
            let files = commands::reproduce::reproduce(&config, progress)?;
            bar.finish_and_clear();
            for file in files {
                emit(&format!("wrote {}\n", file.display()))?;
            }
        }
        Command::Predict(args) => {
            emit(&commands::predict::predict(&args.command()?, &mut warn)?)?;
        }
        Command::Tsunami(args) => {
            let config = args.config()?;
            let bar = ProgressBar::new(1000).with_style(
                ProgressStyle::with_template(
                    "{bar:40} model {msg}, wall {elapsed_precise}, eta {eta}",
                )
                .expect("valid template"),
            );
            let report = commands::tsunami::tsunami(&config, &mut warn, &mut |done, total| {
                bar.set_position((1000.0 * done / total) as u64);
                bar.set_message(format!("{:.2} h of {:.2} h", done / 3600.0, total / 3600.0));
            })?;
            bar.finish_and_clear();
            emit(&report.to_string())?;
        }
        Command::Bench(args) => {
            let config = args.config()?;
            emit(&format!(
                "{}\n",
                commands::bench::bench(&config, &mut warn)?
            ))?;
        }
    }
    Ok(())
}
