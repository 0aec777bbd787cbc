//! Checkpoints of a run folder, `OUT/checkpoint`: every state field at a step, the files a
//! command adds (a tsunami's maps, gauges and frames), and a hash of what must match to
//! continue (the problem, and the command's own settings). A new checkpoint replaces the last
//! only once it is complete.

use std::path::{Path, PathBuf};

use crate::field::GlobalField;
use crate::model::Problem;
use crate::{invalid, Error, Result};

/// The checkpoint of a run folder.
pub(crate) fn dir(out: &Path) -> PathBuf {
    out.join("checkpoint")
}

/// The newest complete checkpoint of `out`: `checkpoint`, or, after a crash between the two
/// renames that swap a new one in, the complete new (or else old) one left beside it.
pub(crate) fn latest(out: &Path) -> PathBuf {
    let main = dir(out);
    if main.join("meta.json").exists() {
        return main;
    }
    [".checkpoint.tmp-", ".checkpoint.old-"]
        .iter()
        .find_map(|prefix| {
            leftovers(out)
                .into_iter()
                .find(|p| name_starts(p, prefix) && p.join("meta.json").exists())
        })
        .unwrap_or(main)
}

/// Claims the run folder `out` ([`crate::io::claim_dir`]): a resumed run keeps what earlier runs
/// wrote there; any other replaces it, and removes the copies an interrupted checkpoint swap
/// left (hidden, so never listed), which a later `--resume` would take up.
pub(crate) fn claim(out: &Path, resume: bool) -> Result<crate::io::OutputDir> {
    if resume {
        return crate::io::claim_dir(out, crate::io::Earlier::Keep);
    }
    let claim = crate::io::claim_dir(out, crate::io::Earlier::Replace)?;
    for stale in leftovers(out) {
        std::fs::remove_dir_all(&stale).map_err(|source| Error::Io {
            path: stale.clone(),
            source,
        })?;
    }
    Ok(claim)
}

/// The folders a checkpoint swap leaves beside `checkpoint` when it is interrupted.
fn leftovers(out: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return vec![];
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| name_starts(p, ".checkpoint."))
        .collect()
}

fn name_starts(path: &Path, prefix: &str) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

/// The command line a checkpoint keeps for `wafer-emu resume` ([`record_command_line`]).
static COMMAND_LINE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Keeps `line` (the command, its positional arguments and flags, without where it writes) in
/// every checkpoint this process writes, so that `wafer-emu resume DIR` can replay it.
pub fn record_command_line(line: Vec<String>) {
    let _ = COMMAND_LINE.set(line);
}

/// The latest checkpoint's folder in run folder `out`, and its `meta.json`.
fn latest_meta(out: &Path) -> Result<(PathBuf, serde_json::Value)> {
    let dir = latest(out);
    let meta = std::fs::read_to_string(dir.join("meta.json"))
        .map_err(|e| invalid!("no checkpoint to resume in {}: {e}", dir.display()))?;
    let meta = serde_json::from_str(&meta).map_err(|e| invalid!("{}: {e}", dir.display()))?;
    Ok((dir, meta))
}

/// The command line kept in the checkpoint of run folder `out`.
pub fn command_line(out: &Path) -> Result<Vec<String>> {
    let (dir, meta) = latest_meta(out)?;
    serde_json::from_value(meta["command"].clone()).map_err(|_| {
        invalid!(
            "{}: the checkpoint keeps no command line (written by an earlier wafer-emu, or by the library): resume with the command line that wrote it and --resume",
            dir.display()
        )
    })
}

/// What must match for a checkpoint to continue a run: the kernel with its parameters, the
/// cluster and its links, and `key`, the command's own settings (FNV-1a of their
/// description, stable across runs of one version).
fn hash(problem: &Problem, key: &str) -> String {
    let text = format!(
        "{} {:?} {:?} {:?} {} {key}",
        problem.spec().name,
        problem.kernel.parameters(),
        problem.cluster,
        problem.link_specs,
        env!("CARGO_PKG_VERSION")
    );
    let hash = text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    format!("{hash:016x}")
}

/// Writes every field at `step` and the `extra` files into `out/checkpoint`, replacing the
/// last checkpoint only once the new one is complete.
pub(crate) fn write(
    out: &Path,
    (problem, key): (&Problem, &str),
    step: u64,
    state: &[GlobalField],
    extra: &[(&str, Vec<u8>)],
) -> Result<()> {
    let pid = std::process::id();
    let fresh = out.join(format!(".checkpoint.tmp-{pid}"));
    crate::io::create_dir(&fresh)?;
    let fields = problem.spec().fields.iter().zip(state);
    let fields = fields.map(|(name, field)| (format!("{name}.npy"), crate::io::field_npy(field)));
    let extra = extra
        .iter()
        .map(|(name, bytes)| (name.to_string(), bytes.clone()));
    let mut checksums = serde_json::Map::new();
    for (name, bytes) in fields.chain(extra) {
        crate::io::write_atomic(&fresh.join(&name), &bytes)?;
        checksums.insert(name, crc32fast::hash(&bytes).into());
    }
    let meta = serde_json::json!({
        "step": step,
        "problem": hash(problem, key),
        "crc32": checksums,
        "command": COMMAND_LINE.get(),
    });
    crate::io::write_atomic(&fresh.join("meta.json"), format!("{meta:#}\n").as_bytes())?;
    let (last, old) = (dir(out), out.join(format!(".checkpoint.old-{pid}")));
    let io = |e: std::io::Error| Error::Io {
        path: last.clone(),
        source: e,
    };
    crate::io::list_written(&last).map_err(io)?;
    if last.exists() {
        std::fs::rename(&last, &old).map_err(io)?;
    }
    std::fs::rename(&fresh, &last).map_err(io)?;
    // This one's old checkpoint, and whatever an interrupted earlier swap left.
    for stale in leftovers(out) {
        std::fs::remove_dir_all(&stale).map_err(io)?;
    }
    Ok(())
}

/// The step of the checkpoint in `out`, checked against `problem` and `key`, and `problem`
/// starting from its fields.
pub(crate) fn resume(out: &Path, (problem, key): (&Problem, &str)) -> Result<(u64, Problem)> {
    let (dir, meta) = latest_meta(out)?;
    if meta["problem"].as_str() != Some(&hash(problem, key)) {
        return Err(invalid!(
            "the checkpoint in {} belongs to another problem (kernel, parameters, cluster, links or the command's settings differ): resume with the command line that wrote it",
            dir.display()
        ));
    }
    let step = meta["step"]
        .as_u64()
        .ok_or_else(|| invalid!("{}: no step", dir.display()))?;
    let read = |name: &&str| {
        let path = dir.join(format!("{name}.npy"));
        let field = crate::io::read_field_npy(&path)?;
        match field.data.iter().position(|v| !v.is_finite()) {
            None => Ok(field),
            Some(at) => Err(invalid!(
                "{}: {} at point ({}, {}): the checkpoint is damaged or its run blew up; nothing to resume",
                path.display(),
                field.data[at],
                at % field.nx as usize,
                at / field.nx as usize
            )),
        }
    };
    let fields: Vec<GlobalField> = problem
        .spec()
        .fields
        .iter()
        .map(read)
        .collect::<Result<_>>()?;
    check_files(&dir, &meta["crc32"])?;
    Ok((step, problem.clone().starting_from(fields)?))
}

/// Checks every file of the checkpoint in `dir` against its CRC-32 in `checksums` (meta.json's
/// `crc32`): a value changed on disk, finite or not, refuses the resume.
fn check_files(dir: &Path, checksums: &serde_json::Value) -> Result<()> {
    let checksums = checksums.as_object().ok_or_else(|| {
        invalid!(
            "{}: meta.json holds no checksums (damaged, or written by an older wafer-emu); nothing to resume",
            dir.display()
        )
    })?;
    for (name, expected) in checksums {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|e| invalid!("{}: {e}", path.display()))?;
        if expected.as_u64() != Some(u64::from(crc32fast::hash(&bytes))) {
            return Err(invalid!(
                "{}: its checksum differs from the one written with it: the checkpoint is damaged; nothing to resume",
                path.display()
            ));
        }
    }
    Ok(())
}

/// The error of a run stopped by a signal at `step` after writing its checkpoint in `out`.
pub(crate) fn stopped(out: &Path, step: u64) -> Error {
    Error::Aborted(format!(
        "stopped by a signal at step {step}; its checkpoint is in {}: continue with --resume {}",
        dir(out).display(),
        out.display()
    ))
}
