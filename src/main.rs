//! The `wafer-emu` command: a thin layer over the library's commands.

use std::process::ExitCode;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use wafer_emu::app::{
    kept_command_line, AdaptersArgs, BenchArgs, Cli, Command, PredictArgs, ReproduceArgs, RunArgs,
    SweepAction, SweepArgs, SweepCommandLine, TsunamiArgs,
};
use wafer_emu::commands;
use wafer_emu::engine::cpu::ranks;
use wafer_emu::io::JsonTarget;

fn main() -> ExitCode {
    quiet_headless();
    // Under `mpirun -n K` (K > 1) every rank parses the same command line; rank 0 runs the
    // command and writes everything, the others step their wafers as it orders.
    #[cfg(feature = "mpi")]
    let _universe = wafer_emu::engine::cpu::mpi::start();
    let follower = ranks::world().is_some_and(|w| w.rank != 0);
    let args = match wafer_emu::app::with_config(std::env::args().collect()) {
        Ok(args) => args,
        Err(e) => return fail(anyhow::Error::from(e), follower),
    };
    let command = match Cli::parse_line(&args) {
        Ok(cli) => cli.command,
        Err(e) if follower => return ExitCode::from(e.exit_code() as u8),
        Err(e) => e.exit(),
    };
    if !matches!(command, Command::Resume(_)) {
        commands::record_command_line(kept_command_line(&args));
    }
    let done = match ranks::world() {
        Some(world) => over_ranks(command, *world),
        None => dispatch(command),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e, follower),
    }
}

/// Says the error (on rank 0 only, or naming the rank where only it failed) and gives its
/// exit code: 2 bad input, 3 a blow-up, 1 anything else. Under mpirun a rank that exits with
/// an error ends every rank.
fn fail(e: anyhow::Error, follower: bool) -> ExitCode {
    let cause = e.downcast_ref::<wafer_emu::Error>();
    let code = match cause {
        Some(e) if e.is_bad_input() => 2,
        Some(wafer_emu::Error::BlowUp { .. }) => 3,
        _ => 1,
    };
    match (follower, ranks::world()) {
        (false, _) => say(&format!("error: {e:#}")),
        (true, Some(world)) if code == 1 => say(&format!("error on rank {}: {e:#}", world.rank)),
        _ => {}
    }
    ExitCode::from(code)
}

/// The command under mpirun: `run` and `tsunami` spread their wafers over the ranks, `bench`
/// times a cluster over them; rank 0 runs the command, the others follow. Other commands run
/// in one process.
fn over_ranks(command: Command, world: ranks::World) -> Result<()> {
    match (command, world.rank) {
        (Command::Run(args), 0) => run(&args),
        (Command::Run(args), _) => Ok(commands::run::follow(&args.config()?)?),
        (Command::Tsunami(args), 0) => tsunami(&args),
        (Command::Tsunami(args), _) => Ok(commands::tsunami::follow(&args.config()?)?),
        (Command::Bench(args), 0) => bench(&args),
        (Command::Bench(args), _) => Ok(commands::bench::follow(&args.config()?)?),
        _ => Err(wafer_emu::Error::InvalidInput(format!(
            "under mpirun ({} ranks) only `run`, `tsunami` and `bench` spread wafers over the ranks: run this command in one process",
            world.size
        ))
        .into()),
    }
}

/// Mesa's Vulkan window-system code writes an error to stderr for every instance when
/// `XDG_RUNTIME_DIR` is unset, as on a headless machine; this program opens no window, so
/// any existing folder will do.
fn quiet_headless() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
}

/// Writes a line to standard error; one that cannot be written (a full or closed stderr)
/// is lost rather than ending the program with a panic.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
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

/// Prints the text report, or with `--json -` the JSON alone; writes a JSON file.
fn report(
    text: &str,
    json: Option<JsonTarget>,
    value: impl FnOnce() -> serde_json::Value,
) -> Result<()> {
    match json.map(|target| target.write(&value())).transpose()? {
        Some(Some(stdout)) => emit(&stdout),
        _ => emit(text),
    }
}

fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run(&args),
        Command::Adapters(args) => adapters(&args),
        Command::Reproduce(args) => reproduce(&args),
        Command::Predict(args) => predict(&args),
        Command::Tsunami(args) => tsunami(&args),
        Command::Sweep(args) => sweep(args),
        Command::Bench(args) => bench(&args),
        Command::Resume(args) => {
            let line = args.command_line("wafer-emu")?;
            commands::record_command_line(kept_command_line(&line));
            dispatch(Cli::parse_line(line)?.command)
        }
    }
}

/// Warnings go to standard error as they come.
fn warn(w: &str) {
    say(w);
}

fn run(args: &RunArgs) -> Result<()> {
    let config = args.config()?;
    let json = args.json.target_beside(config.out.as_deref())?;
    let bar = ProgressBar::new(config.steps).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps, {per_sec}, eta {eta}")
            .expect("valid template"),
    );
    let result = commands::run::run(&config, &mut warn, &mut |done, _| bar.set_position(done))?;
    bar.finish_and_clear();
    report(&result.to_string(), json, || result.json())
}

fn adapters(args: &AdaptersArgs) -> Result<()> {
    let (request, json) = (args.engine.request()?, args.json.target()?);
    let listing = commands::adapters::adapters(&request);
    let text: String = listing.lines().iter().map(|l| format!("{l}\n")).collect();
    report(&text, json, || listing.json())
}

fn reproduce(args: &ReproduceArgs) -> Result<()> {
    let config = args.config()?;
    let json = args.json.target_beside(Some(&config.out))?;
    let bar = ProgressBar::new_spinner();
    let spinner = bar.clone();
    let progress = Box::new(move |what: &str| spinner.set_message(format!("model: {what}")));
    let files = commands::reproduce::reproduce(&config, progress)?;
    bar.finish_and_clear();
    let text: String = files
        .iter()
        .map(|f| format!("wrote {}\n", f.display()))
        .collect();
    report(&text, json, || {
        serde_json::json!({
            "command": "reproduce",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "pes": config.sizes.iter().map(|s| [s.0, s.1]).collect::<Vec<_>>(),
            "link_jitter_s": config.link_jitter_s,
            "out": config.out,
            "files": files,
        })
    })
}

fn predict(args: &PredictArgs) -> Result<()> {
    let (command, json) = (args.command()?, args.json.target()?);
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let mut progress = |steps, most| {
        let agree = "stops when two windows agree";
        let elapsed = bar.elapsed();
        bar.set_message(format!(
            "model: {steps} steps simulated ({agree}, at most {most}), {elapsed:.0?}"
        ));
        bar.tick();
    };
    let (text, prediction) = commands::predict::predict(&command, &mut warn, &mut progress)?;
    bar.finish_and_clear();
    report(&text, json, || prediction.json())
}

fn tsunami(args: &TsunamiArgs) -> Result<()> {
    let config = args.config()?;
    let json = args.json.target_beside(Some(&config.out))?;
    let bar = ProgressBar::new(1000).with_style(
        ProgressStyle::with_template("{bar:40} model {msg}, wall {elapsed_precise}, eta {eta}")
            .expect("valid template"),
    );
    let result = commands::tsunami::tsunami(&config, &mut warn, &mut |done, total| {
        bar.set_position((1000.0 * done / total) as u64);
        bar.set_message(format!("{:.2} h of {:.2} h", done / 3600.0, total / 3600.0));
    })?;
    bar.finish_and_clear();
    report(&result.to_string(), json, || result.json())
}

fn sweep(args: SweepArgs) -> Result<()> {
    match (args.action, args.file) {
        (Some(SweepAction::Merge { dir }), _) => {
            let table = commands::sweep::merge(&dir)?;
            emit(&format!("wrote {}\n", table.display()))
        }
        (
            Some(SweepAction::Plot {
                dir,
                x,
                y,
                by,
                log_x,
                log_y,
                out,
            }),
            _,
        ) => {
            let out = out.unwrap_or_else(|| dir.join(format!("{y}_vs_{x}.png")));
            wafer_emu::io::check_file_target(&out, "--out")?;
            let request = commands::sweep::PlotRequest {
                x,
                y,
                by,
                log_x,
                log_y,
            };
            let png = commands::sweep::plot(&dir, &request)?;
            wafer_emu::io::write_atomic(&out, &png)?;
            emit(&format!("wrote {}\n", out.display()))
        }
        (None, None) => anyhow::bail!(wafer_emu::Error::InvalidInput(
            "sweep needs a sweep file: wafer-emu sweep FILE.toml --out DIR".into()
        )),
        (None, Some(file)) => {
            let shard = commands::sweep::shard(args.shard.as_deref())?;
            let plan = commands::sweep::SweepPlan::load(&file, args.out, shard, &SweepCommandLine)?;
            run_sweep(&plan)
        }
    }
}

fn run_sweep(plan: &commands::sweep::SweepPlan) -> Result<()> {
    let bar = ProgressBar::new_spinner();
    let done = commands::sweep::sweep(plan, &SweepCommandLine, &mut warn, &mut |k, n, name| {
        bar.set_message(format!("case {} of {n}: {name}", k + 1));
        bar.tick();
    })?;
    bar.finish_and_clear();
    let stopped = match done.stopped {
        true => "; stopped by a signal: run the same command to resume",
        false => "",
    };
    emit(&format!(
        "{} case(s) run ({} failed), {} already done{stopped}; table {}\n",
        done.ran,
        done.failed,
        done.skipped_done,
        done.table.display()
    ))?;
    match (done.stopped, done.failed_in_table) {
        (true, _) => Err(anyhow::anyhow!("stopped by a signal")),
        (false, 0) => Ok(()),
        (false, failed) => Err(anyhow::anyhow!(
            "{failed} case(s) failed: their errors are in the table's \"error\" column"
        )),
    }
}

fn bench(args: &BenchArgs) -> Result<()> {
    let (config, json) = (args.config()?, args.json.target()?);
    let result = commands::bench::bench(&config, &mut warn)?;
    report(&format!("{result}\n"), json, || result.json())
}
