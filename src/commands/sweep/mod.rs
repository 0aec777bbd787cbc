//! `wafer-emu sweep FILE.toml --out DIR`: many `run` or `predict` cases, one folder each, and
//! one results table. The file names the command, the flags of every case (`[base]`), lists of
//! values whose Cartesian product gives the cases (`[vary]`) and explicit cases
//! (`[[case]]`). A case is done when its `result.json` exists (ok or failed), so a sweep that
//! was stopped resumes where it was (a done case of other flags is refused); `--shard I/N`
//! runs every N-th case (Slurm array jobs set it through `SLURM_ARRAY_TASK_ID` and
//! `SLURM_ARRAY_TASK_COUNT`) and writes its own table, which `sweep merge` joins.

mod tables;

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::{invalid, Result};
pub use tables::merge;
use tables::{table_path, write_tables};

/// One case: its name (its varied parameters) and the flags of its command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    pub params: Vec<(String, String)>,
    /// Every parameter of the case, `[base]`'s and the varied ones, with its TOML type.
    pub table: Map<String, Value>,
    pub args: Vec<String>,
}

/// The command line a sweep runs its cases through (the application's, `crate::app`): a
/// case's flags from a TOML table, a check that its line parses, and its run.
pub trait CommandLine {
    /// The kernel and the flags of `command` that `table` says, unknown keys refused by name
    /// (`source` names the file in messages).
    fn flags(
        &self,
        source: &str,
        command: &str,
        table: &toml::Table,
    ) -> Result<(Option<String>, Vec<String>)>;
    /// Whether `line` (program name first) parses; the parser's first line where not.
    fn check(&self, line: &[String]) -> std::result::Result<(), String>;
    /// Runs `line` (a `run` or `predict` case) in this process and returns its JSON report.
    fn run(&self, line: &[String], warn: &mut dyn FnMut(&str)) -> Result<Value>;
}

/// A validated sweep.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    pub command: String,
    pub cases: Vec<Case>,
    pub out: PathBuf,
    /// Run case `k` when `k % shard.1 == shard.0`.
    pub shard: (usize, usize),
}

/// `I/N`, or Slurm's array variables when `--shard` is not given.
pub fn shard(arg: Option<&str>) -> Result<(usize, usize)> {
    let slurm = || {
        let id = std::env::var("SLURM_ARRAY_TASK_ID").ok()?;
        let count = std::env::var("SLURM_ARRAY_TASK_COUNT").ok()?;
        Some(format!("{id}/{count}"))
    };
    let Some(text) = arg.map(String::from).or_else(slurm) else {
        return Ok((0, 1));
    };
    let bad = || invalid!("shard '{text}': allowed I/N with 0 <= I < N");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    match i < n {
        true => Ok((i, n)),
        false => Err(bad()),
    }
}

fn text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// A folder name from the varied parameters.
fn case_name(params: &[(String, String)]) -> String {
    let name: String = params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "._=,-".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    if name.is_empty() {
        "base".into()
    } else {
        name
    }
}

impl SweepPlan {
    /// What tells one sweep from another (its command and every case's flags, CRC-32), kept
    /// beside each shard's table so that `sweep merge` joins the shards of one sweep only.
    pub fn fingerprint(&self) -> String {
        let cases = self
            .cases
            .iter()
            .map(|c| format!("{} {}", c.name, c.args.join(" ")));
        let text = [self.command.clone()]
            .into_iter()
            .chain(cases)
            .collect::<Vec<_>>();
        format!("{:08x}\n", crc32fast::hash(text.join("\n").as_bytes()))
    }

    /// Reads the sweep file and checks every case's command line before any work.
    pub fn load(
        path: &Path,
        out: PathBuf,
        shard: (usize, usize),
        line: &dyn CommandLine,
    ) -> Result<Self> {
        let file = SweepFile::read(path)?;
        let explicit = file
            .explicit
            .iter()
            .map(|t| t.clone().into_iter().collect());
        let mut cases = vec![];
        for params in combinations(&file.source, &file.vary)?
            .into_iter()
            // The base alone is a case only where there is nothing else.
            .filter(|c| !c.is_empty() || (file.vary.is_empty() && file.explicit.is_empty()))
            .chain(explicit)
        {
            let case = file.case(params, &out, line)?;
            if let Some(twin) = cases.iter().find(|c: &&Case| c.name == case.name) {
                return Err(invalid!(
                    "sweep file {}: cases {:?} and {:?} share the folder '{}': give them values that differ in letters, digits or ._=,-",
                    file.source,
                    twin.params,
                    case.params,
                    case.name
                ));
            }
            cases.push(case);
        }
        Ok(Self {
            command: file.command,
            cases,
            out,
            shard,
        })
    }
}

/// A sweep file's parts: its command, `[base]`, `[vary]` and `[[case]]` tables.
struct SweepFile {
    /// The file's path, for messages.
    source: String,
    command: String,
    base: toml::Table,
    vary: toml::Table,
    explicit: Vec<toml::Table>,
}

impl SweepFile {
    fn read(path: &Path) -> Result<Self> {
        let source = path.display().to_string();
        let text_of = std::fs::read_to_string(path)
            .map_err(|e| invalid!("cannot read sweep file {source}: {e}"))?;
        let mut file: toml::Table = text_of
            .parse()
            .map_err(|e| invalid!("sweep file {source}: {e}"))?;
        let command = match file.remove("command") {
            Some(toml::Value::String(c)) if c == "run" || c == "predict" => c,
            other => {
                return Err(invalid!(
                    "sweep file {source}: command = {}: allowed \"run\" or \"predict\"",
                    other.map_or("(missing)".into(), |v| text(&v))
                ))
            }
        };
        let table = |key: &str, value: Option<toml::Value>| match value {
            None => Ok(toml::Table::new()),
            Some(toml::Value::Table(t)) => Ok(t),
            Some(_) => Err(invalid!("sweep file {source}: [{key}] must be a table")),
        };
        let base = table("base", file.remove("base"))?;
        let vary = table("vary", file.remove("vary"))?;
        let explicit = match file.remove("case") {
            None => vec![],
            Some(toml::Value::Array(cases)) => cases
                .into_iter()
                .map(|c| table("case", Some(c)))
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(invalid!("sweep file {source}: [[case]] must be tables")),
        };
        if let Some(key) = file.keys().next() {
            return Err(invalid!(
                "sweep file {source}: unknown key '{key}': allowed command, [base], [vary], [[case]]"
            ));
        }
        Ok(Self {
            source,
            command,
            base,
            vary,
            explicit,
        })
    }

    /// The case of `params` over `[base]`, whose command line parses (a `run` writing under
    /// `out`).
    fn case(
        &self,
        params: Vec<(String, toml::Value)>,
        out: &Path,
        line: &dyn CommandLine,
    ) -> Result<Case> {
        let mut merged = self.base.clone();
        merged.extend(params.iter().cloned());
        let (kernel, flags) = line.flags(&self.source, &self.command, &merged)?;
        let table = merged
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(Value::Null)))
            .collect();
        let params: Vec<(String, String)> =
            params.iter().map(|(k, v)| (k.clone(), text(v))).collect();
        let args: Vec<String> = kernel.into_iter().chain(flags).collect();
        let case = Case {
            name: case_name(&params),
            params,
            table,
            args,
        };
        // Every case line must parse before any case runs.
        line.check(&command_line(&self.command, &case, out))
            .map_err(|why| invalid!("sweep case {}: {why}", case.name))?;
        Ok(case)
    }
}

/// Every combination of one value per `[vary]` list, in the file's order.
fn combinations(source: &str, vary: &toml::Table) -> Result<Vec<Vec<(String, toml::Value)>>> {
    let mut combos: Vec<Vec<(String, toml::Value)>> = vec![vec![]];
    for (key, values) in vary {
        let toml::Value::Array(values) = values else {
            return Err(invalid!("sweep file {source}: [vary] {key} must be a list"));
        };
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    Ok(combos)
}

/// The command line of a case; a `run` writes into the case's own folder.
fn command_line(command: &str, case: &Case, out: &Path) -> Vec<String> {
    let mut line = vec!["wafer-emu".to_string(), command.to_string()];
    line.extend(case.args.iter().cloned());
    if command == "run" {
        let dir = out.join(&case.name).join("out");
        line.extend(["--out".into(), dir.display().to_string(), "--force".into()]);
    }
    line
}

/// What a sweep did.
#[derive(Clone, Debug)]
pub struct SweepReport {
    pub ran: usize,
    pub skipped_done: usize,
    pub failed: usize,
    /// Failed cases in the shard's table, this run's and earlier runs'.
    pub failed_in_table: usize,
    pub stopped: bool,
    pub table: PathBuf,
}

/// Runs the plan's cases of this shard that are not done yet, writing each case's
/// `result.json` and, after each, the table; stops cleanly between cases on SIGINT/SIGTERM.
pub fn sweep(
    plan: &SweepPlan,
    line: &dyn CommandLine,
    warn: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<SweepReport> {
    crate::io::check_writable(&plan.out)?;
    check_sweep_folder(&plan.out)?;
    crate::io::create_dir(&plan.out)?;
    super::watch_signals();
    let mine: Vec<&Case> = plan
        .cases
        .iter()
        .enumerate()
        .filter(|(k, _)| k % plan.shard.1 == plan.shard.0)
        .map(|(_, c)| c)
        .collect();
    for case in &mine {
        check_done_matches(&plan.out, &plan.command, case)?;
    }
    if plan.shard.1 > 1 {
        let path = table_path(&plan.out, plan.shard, "sweep");
        crate::io::write_atomic(&path, plan.fingerprint().as_bytes())?;
    }
    let mut report = SweepReport {
        ran: 0,
        skipped_done: 0,
        failed: 0,
        failed_in_table: 0,
        stopped: false,
        table: table_path(&plan.out, plan.shard, "jsonl"),
    };
    for (k, case) in mine.iter().enumerate() {
        if super::stop_requested() {
            report.stopped = true;
            break;
        }
        let dir = plan.out.join(&case.name);
        if dir.join("result.json").exists() {
            report.skipped_done += 1;
            continue;
        }
        progress(k, mine.len(), &case.name);
        crate::io::create_dir(&dir)?;
        let row = match line.run(&command_line(&plan.command, case, &plan.out), warn) {
            Ok(result) => json!({"status": "ok", "result": result}),
            Err(e) => {
                report.failed += 1;
                let blew_up = match &e {
                    crate::Error::BlowUp { step, .. } => Some(*step),
                    _ => None,
                };
                json!({"status": "failed", "error": e.to_string(), "blew_up_at_step": blew_up})
            }
        };
        let record =
            json!({"case": case.name, "params": case.table, "args": case.args, "outcome": row});
        crate::io::write_atomic(&dir.join("result.json"), format!("{record:#}\n").as_bytes())?;
        report.ran += 1;
        write_tables(&plan.out, plan.shard, &mine)?;
    }
    report.failed_in_table = write_tables(&plan.out, plan.shard, &mine)?;
    Ok(report)
}

/// The record of `case` in sweep folder `out`, if it is done.
fn record(out: &Path, case: &Case) -> Result<Option<Value>> {
    let path = out.join(&case.name).join("result.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let record = serde_json::from_str(&text).map_err(|e| invalid!("{}: {e}", path.display()))?;
    Ok(Some(record))
}

/// Refuses a folder that holds another command's results: one that a `run` or `tsunami`
/// wrote (its list of written files, or its summary, at the top), where a sweep keeps those of
/// its cases a folder down. Other files (the sweep file, job logs) may be there.
fn check_sweep_folder(out: &Path) -> Result<()> {
    let marks = [crate::io::WRITTEN, "summary.txt"];
    match marks.into_iter().find(|name| out.join(name).is_file()) {
        Some(name) => Err(invalid!(
            "{} holds another command's results ({name}), not a sweep's: choose another --out",
            out.display()
        )),
        None => Ok(()),
    }
}

/// Refuses a done `case` whose record ran other flags: the folder holds another sweep's
/// results (its file changed), which resuming would pass off as this one's.
fn check_done_matches(out: &Path, command: &str, case: &Case) -> Result<()> {
    // Records of earlier versions keep no flags: nothing to compare.
    let Some(record) = record(out, case)?.filter(|r| r.get("args").is_some()) else {
        return Ok(());
    };
    let done: Vec<&str> = record["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let done_command = record["command"].as_str().unwrap_or(command);
    match done == case.args && done_command == command {
        true => Ok(()),
        false => Err(invalid!(
            "sweep folder {} holds case '{}' run as `{done_command} {}`, not this sweep's `{command} {}`: use another --out folder, or remove that case's folder to run it again",
            out.display(),
            case.name,
            done.join(" "),
            case.args.join(" ")
        )),
    }
}

/// What `sweep plot` draws: figure `y` against parameter `x`, one line per value of `by`.
#[derive(Clone, Debug)]
pub struct PlotRequest {
    pub x: String,
    pub y: String,
    pub by: Option<String>,
    pub log_x: bool,
    pub log_y: bool,
}

/// Refuses a log axis over values at or below zero, which it cannot show.
fn check_log_axes(request: &PlotRequest, series: &[crate::render::plot::Series]) -> Result<()> {
    let points = || series.iter().flat_map(|s| s.points.iter());
    for (log, flag, column, value) in [
        (request.log_x, "--log-x", &request.x, 0),
        (request.log_y, "--log-y", &request.y, 1),
    ] {
        let at_or_below = points().filter(|p| [p.0, p.1][value] <= 0.0).count();
        if log && at_or_below > 0 {
            return Err(invalid!(
                "{flag}: {at_or_below} value(s) of '{column}' are 0 or less, which a log axis cannot show: allowed without {flag}"
            ));
        }
    }
    Ok(())
}

/// Draws a figure from a sweep folder's `results.jsonl` (ok rows with numeric `x` and `y`);
/// returns the PNG bytes. Unknown columns are refused with the table's columns.
pub fn plot(dir: &Path, request: &PlotRequest) -> Result<Vec<u8>> {
    let path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid!(
            "cannot read {}: {e} (run the sweep, or sweep merge, first)",
            path.display()
        )
    })?;
    let rows: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| invalid!("{}: {e}", path.display())))
        .collect::<Result<_>>()?;
    let columns: Vec<String> = rows
        .iter()
        .flat_map(|r| r.as_object().into_iter().flat_map(|o| o.keys().cloned()))
        .fold(vec![], |mut all, k| {
            if !all.contains(&k) {
                all.push(k);
            }
            all
        });
    for name in [Some(&request.x), Some(&request.y), request.by.as_ref()]
        .into_iter()
        .flatten()
    {
        if !columns.contains(name) {
            return Err(invalid!(
                "column '{name}' is not in {}: allowed {}",
                path.display(),
                columns.join(", ")
            ));
        }
    }
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    let mut series: Vec<crate::render::plot::Series> = vec![];
    for row in rows.iter().filter(|r| r["status"] == "ok") {
        let (Some(x), Some(y)) = (number(&row[&request.x]), number(&row[&request.y])) else {
            continue;
        };
        let name = match &request.by {
            Some(by) => format!(
                "{by} = {}",
                match &row[by] {
                    Value::String(s) => s.clone(),
                    Value::Null => "(default)".into(),
                    v => v.to_string(),
                }
            ),
            None => request.y.clone(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(crate::render::plot::Series {
                name,
                points: vec![(x, y)],
                markers: true,
            }),
        }
    }
    check_log_axes(request, &series)?;
    if series.is_empty() {
        return Err(invalid!(
            "no finished case of {} has numbers in '{}' and '{}'",
            path.display(),
            request.x,
            request.y
        ));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    crate::render::plot::Plot {
        title: format!("{} against {}", request.y, request.x),
        x_label: request.x.clone(),
        y_label: request.y.clone(),
        log_x: request.log_x,
        log_y: request.log_y,
        series,
        markers: vec![],
    }
    .png()
}
