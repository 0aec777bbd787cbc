//! A sweep's results tables: one row per done case (its parameters, status and the numbers
//! of its report), per shard and merged, as JSON lines and CSV.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{record, Case};
use crate::{invalid, Result};

pub(super) fn table_path(out: &Path, (i, n): (usize, usize), ext: &str) -> PathBuf {
    match n {
        1 => out.join(format!("results.{ext}")),
        _ => out.join(format!("results.shard-{i}-of-{n}.{ext}")),
    }
}

/// The done cases' rows: the case, its parameters, its status and error, and the numbers at
/// the top level of its report.
fn rows(out: &Path, cases: &[&Case]) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for case in cases {
        let Some(record) = record(out, case)? else {
            continue;
        };
        let outcome = &record["outcome"];
        let mut row = Map::new();
        row.insert("case".into(), record["case"].clone());
        if let Some(params) = record["params"].as_object() {
            row.extend(params.clone());
        }
        row.insert("status".into(), outcome["status"].clone());
        for key in ["error", "blew_up_at_step"] {
            row.insert(key.into(), outcome.get(key).cloned().unwrap_or(Value::Null));
        }
        if let Some(result) = outcome["result"].as_object() {
            row.extend(diagnostics(result));
        }
        rows.push(Value::Object(row));
    }
    Ok(rows)
}

/// Orders case names naturally: runs of digits (with a decimal part) by their value, so that
/// `n=2` comes before `n=16` and `x=0.25` before `x=0.5`.
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(name: &str) -> Vec<(f64, &str)> {
        let mut key = vec![];
        let mut rest = name;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let (number, after) = rest.split_at(digits);
            let text = after
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(after.len());
            key.push((number.parse().unwrap_or(-1.0), &after[..text]));
            rest = &after[text..];
        }
        key
    }
    let (a, b) = (key(a), key(b));
    let pairs = a.iter().zip(&b);
    let first = pairs
        .map(|((x, s), (y, t))| x.total_cmp(y).then_with(|| s.cmp(t)))
        .find(|o| o.is_ne());
    first.unwrap_or(a.len().cmp(&b.len()))
}

/// The numbers of a case's report that its row carries: the top-level ones, each field's
/// final range (`u_min`, `u_max`) and the emulated cluster's (`emulated_steps_per_second`).
fn diagnostics(result: &Map<String, Value>) -> Vec<(String, Value)> {
    let numbers = |prefix: &str, map: &Map<String, Value>| -> Vec<(String, Value)> {
        let numeric = map.iter().filter(|(_, v)| v.is_number());
        numeric
            .map(|(k, v)| (format!("{prefix}{k}"), v.clone()))
            .collect()
    };
    let mut columns = numbers("", result);
    if let Some(emulated) = result.get("emulated").and_then(Value::as_object) {
        columns.extend(numbers("emulated_", emulated));
    }
    let ranges = result.get("field_range").and_then(Value::as_object);
    for (name, range) in ranges.into_iter().flatten() {
        columns.push((format!("{name}_min"), range[0].clone()));
        columns.push((format!("{name}_max"), range[1].clone()));
    }
    columns
}

/// Writes the rows, in the natural order of their case names, as JSON lines and CSV.
fn write_rows((jsonl, csv): (PathBuf, PathBuf), rows: &[Value]) -> Result<()> {
    let mut rows = rows.to_vec();
    let name = |r: &Value| r["case"].as_str().unwrap_or("").to_string();
    rows.sort_by(|a, b| natural_order(&name(a), &name(b)));
    let rows = &rows[..];
    let lines: String = rows.iter().map(|r| format!("{r}\n")).collect();
    crate::io::write_atomic(&jsonl, lines.as_bytes())?;
    let mut columns: Vec<String> = vec![];
    for row in rows {
        for key in row.as_object().into_iter().flat_map(|o| o.keys()) {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    let cell = |v: Option<&Value>| match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => format!("\"{}\"", s.replace('"', "\"\"")),
        Some(v) => v.to_string(),
    };
    let mut text = columns.join(",") + "\n";
    for row in rows {
        let cells: Vec<String> = columns.iter().map(|c| cell(row.get(c))).collect();
        text += &(cells.join(",") + "\n");
    }
    crate::io::write_atomic(&csv, text.as_bytes())
}

/// Writes the shard's table of its done `cases`; how many of them failed.
pub(super) fn write_tables(out: &Path, shard: (usize, usize), cases: &[&Case]) -> Result<usize> {
    let rows = rows(out, cases)?;
    let paths = (
        table_path(out, shard, "jsonl"),
        table_path(out, shard, "csv"),
    );
    write_rows(paths, &rows)?;
    Ok(rows.iter().filter(|r| r["status"] == "failed").count())
}

/// The shard tables of sweep folder `out` (`results.shard-I-of-N.jsonl`), in shard order;
/// an error unless they are all `N` shards of one sweep.
fn shard_tables(out: &Path) -> Result<Vec<PathBuf>> {
    let shard_of = |name: &str| {
        let (i, n) = name
            .strip_prefix("results.shard-")?
            .strip_suffix(".jsonl")?
            .split_once("-of-")?;
        Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?))
    };
    let mut shards: Vec<((usize, usize), PathBuf)> = std::fs::read_dir(out)
        .map_err(|e| invalid!("cannot read sweep folder {}: {e}", out.display()))?
        .flatten()
        .filter_map(|e| Some((shard_of(&e.file_name().to_string_lossy())?, e.path())))
        .collect();
    shards.sort();
    let Some(&((_, n), _)) = shards.first() else {
        return Err(invalid!(
            "{} holds no shard tables (results.shard-I-of-N.jsonl)",
            out.display()
        ));
    };
    if let Some(((_, other), _)) = shards.iter().find(|((_, m), _)| *m != n) {
        return Err(invalid!(
            "{} holds shard tables of {n} and of {other} shards: merge the tables of one sweep only",
            out.display()
        ));
    }
    let missing: Vec<String> = (0..n)
        .filter(|i| !shards.iter().any(|((j, _), _)| j == i))
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(invalid!(
            "{} lacks the table of shard(s) {}: run them (--shard I/N) before merging",
            out.display(),
            missing.join(", ")
        ));
    }
    let fingerprint = |path: &Path| std::fs::read_to_string(path.with_extension("sweep")).ok();
    let ((first, _), first_table) = &shards[0];
    let same = |table: &PathBuf| fingerprint(table) == fingerprint(first_table);
    if let Some(((i, _), _)) = shards.iter().find(|(_, table)| !same(table)) {
        return Err(invalid!(
            "{}: shards {first}/{n} and {i}/{n} come from different sweeps (another sweep file or other flags): merge the shards of one sweep only",
            out.display()
        ));
    }
    Ok(shards.into_iter().map(|(_, path)| path).collect())
}

/// `sweep merge DIR`: joins the shards' tables of a sweep folder into `results.jsonl` and
/// `results.csv` (rows in case order, each case once).
pub fn merge(out: &Path) -> Result<PathBuf> {
    let mut rows: Vec<Value> = vec![];
    let shards = shard_tables(out)?;
    for shard in shards {
        let text =
            std::fs::read_to_string(&shard).map_err(|e| invalid!("{}: {e}", shard.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Value =
                serde_json::from_str(line).map_err(|e| invalid!("{}: {e}", shard.display()))?;
            if !rows.iter().any(|r| r["case"] == row["case"]) {
                rows.push(row);
            }
        }
    }
    let jsonl = out.join("results.jsonl");
    write_rows((jsonl.clone(), out.join("results.csv")), &rows)?;
    Ok(jsonl)
}
