//! The `wafer-emu` command: a thin layer over the library.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use wafer_emu::cli::{Cli, Command, EngineArgs};
use wafer_emu::engine::BackendChoice;
use wafer_emu::gpu::{list_adapters, AdapterRequest, NATIVE_BACKENDS};

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
                wafer_emu::run::run(&config, &mut warn, &mut |done, _| bar.set_position(done))?;
            bar.finish_and_clear();
            print!("{report}");
        }
        Command::Adapters(args) => adapters(&args)?,
        Command::Reproduce(args) => {
            let config = args.config()?;
            let bar = ProgressBar::new_spinner();
            let spinner = bar.clone();
            let progress =
                Box::new(move |what: &str| spinner.set_message(format!("model: {what}")));
            let files = wafer_emu::timing::reproduce::reproduce(&config, progress)?;
            bar.finish_and_clear();
            for file in files {
                println!("wrote {}", file.display());
            }
        }
        Command::Predict(args) => {
            let config = args.config()?;
            let ctx = match args.device.as_str() {
                "gpu" => {
                    let (ctx, warnings) = args.engine.request()?.open()?;
                    warnings.iter().for_each(|w| warn(w));
                    Some(ctx.ok_or_else(|| anyhow::anyhow!("--device gpu needs a GPU adapter"))?)
                }
                _ => None,
            };
            let prediction = wafer_emu::timing::predict(&config, ctx)?;
            print!("{prediction}");
            if let (Some(path), Some(t)) = (&args.telemetry, &prediction.telemetry) {
                let payload: Vec<u8> = t.cycles.iter().flat_map(|c| c.to_le_bytes()).collect();
                wafer_emu::output::write_atomic(
                    path,
                    &wafer_emu::output::npy_bytes("<f8", &t.shape, &payload),
                )?;
                println!("telemetry      {} {:?} (cycles)", path.display(), t.shape);
            }
        }
        Command::Bench(args) => {
            let config = args.config()?;
            println!("{}", wafer_emu::bench::bench(&config, &mut warn)?);
        }
    }
    Ok(())
}

fn adapters(args: &EngineArgs) -> Result<()> {
    let request = args.request()?;
    let backends = match request.backend {
        BackendChoice::Gpu(backends) => backends,
        BackendChoice::Auto => NATIVE_BACKENDS,
        BackendChoice::Cpu => {
            println!("the CPU backend runs without an adapter");
            return Ok(());
        }
    };
    let found = list_adapters(&AdapterRequest {
        backends,
        name: request.adapter,
    });
    if found.is_empty() {
        println!("no GPU adapter found; `run --backend auto` falls back to the CPU backend");
    }
    for (k, adapter) in found.iter().enumerate() {
        let tag = if adapter.is_software() {
            " [software]"
        } else {
            ""
        };
        println!("{k}: {}{tag}", adapter.line());
    }
    Ok(())
}
