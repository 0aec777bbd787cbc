//! Output folders: checked before any work, locked while a run writes them, and the list of
//! what each run wrote, so that `--force` removes an earlier run's files and nothing else;
//! `--json` targets.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::Result;

use super::files::{check_writable, create_dir, io_error, write_atomic};

/// The lock file of a folder a run is writing.
const LOCK: &str = ".wafer-emu.lock";

/// Whether `lock` was left by a run that is gone (killed, or crashed inside a driver): the
/// process id it holds names no live process. Only where `/proc` tells (Linux); elsewhere a
/// lock always counts as held.
fn is_stale(lock: &Path) -> bool {
    let pid = std::fs::read_to_string(lock).map(|text| text.trim().parse::<u32>());
    matches!(pid, Ok(Ok(pid)) if is_gone(pid))
}

/// Whether process `pid` is gone (only where `/proc` tells).
fn is_gone(pid: u32) -> bool {
    Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the temporary files (`.NAME.tmp-PID`, [`super::files`]) that a run which is gone
/// left in `dir` mid-write (killed outright); a checkpoint's own are its to recover.
fn remove_stale_temporaries(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .rsplit_once(".tmp-")
            .and_then(|(_, p)| p.parse::<u32>().ok());
        let temporary = name.starts_with('.') && !name.starts_with(".checkpoint.");
        if temporary && pid.is_some_and(is_gone) && entry.path().is_file() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Checks, before any work, that `dir` can receive a run's results: writable, not locked by
/// another run (a stale lock does not count), and holding no results yet (visible entries)
/// unless `force` (the run then replaces an earlier run's files, [`Earlier::Replace`]).
pub fn check_output_dir(dir: &Path, force: bool) -> Result<()> {
    check_writable(dir)?;
    if dir.join(LOCK).exists() && !is_stale(&dir.join(LOCK)) {
        return Err(crate::invalid!(
            "another wafer-emu run is writing {} (lock file {}): wait for it, or remove the lock if no run is alive",
            dir.display(),
            dir.join(LOCK).display()
        ));
    }
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let result = entries
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| !name.starts_with('.'));
    match (result, force) {
        (Some(name), false) => Err(crate::invalid!(
            "output folder {} already holds results ({name}, ...): choose another --out, or pass --force to replace them",
            dir.display()
        )),
        _ => Ok(()),
    }
}

/// The list, in a folder runs claimed, of the entries they wrote there (a name a line), so
/// that a run with `--force` removes an earlier run's files and no others.
pub const WRITTEN: &str = ".wafer-emu.written";

/// The folders this process has claimed (absolute) and the names listed in each. Global
/// because every writer lists its file through [`rename_into_place`], wherever it is called.
static CLAIMED: Mutex<Vec<(PathBuf, BTreeSet<String>)>> = Mutex::new(Vec::new());

/// What a run does with the files an earlier run wrote into its folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Earlier {
    /// Goes on from them (`--resume`).
    Keep,
    /// Removes them before it writes: those listed in the folder's `.wafer-emu.written`.
    Replace,
}

/// A folder a run writes, locked against other runs until it is dropped.
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    lock: PathBuf,
    /// The claim created the folder: dropped empty (a run refused before it wrote), it goes.
    created: bool,
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
        claimed.retain(|(dir, _)| *dir != self.dir);
        let _ = std::fs::remove_file(&self.lock);
        if self.created {
            // Only an empty folder is removed; one holding anything stays.
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// Creates `dir` and takes its lock, from a run that is gone too (refused while another run
/// holds it), then keeps or removes the files earlier runs listed there.
pub fn claim_dir(dir: &Path, earlier: Earlier) -> Result<OutputDir> {
    let created = std::fs::symlink_metadata(dir).is_err();
    create_dir(dir)?;
    let lock = dir.join(LOCK);
    if is_stale(&lock) {
        let _ = std::fs::remove_file(&lock);
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
    {
        Ok(mut file) => {
            let _ = writeln!(file, "{}", std::process::id());
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(crate::invalid!(
                "another wafer-emu run is writing {} (lock file {})",
                dir.display(),
                lock.display()
            ))
        }
        Err(e) => return Err(io_error(&lock, e)),
    }
    remove_stale_temporaries(dir);
    let claim = OutputDir {
        dir: absolute(dir),
        lock,
        created,
    };
    let mut listed = read_written(dir)?;
    if earlier == Earlier::Replace {
        remove_written(dir, &listed)?;
        listed.clear();
    }
    let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
    claimed.push((claim.dir.clone(), listed));
    Ok(claim)
}

/// The names listed in `dir`'s [`WRITTEN`]: plain entries of the folder, none hidden.
fn read_written(dir: &Path) -> Result<BTreeSet<String>> {
    let path = dir.join(WRITTEN);
    let bytes = match std::fs::read(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        read => read.map_err(|e| io_error(&path, e))?,
    };
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|name| is_listable(name))
        .map(str::to_owned)
        .collect())
}

/// Whether a folder's entry `name` is listed as a run's: a plain name (no separator, drive or
/// control character), not hidden (locks, temporary files).
fn is_listable(name: &str) -> bool {
    let plain = !name.contains(['/', '\\', ':']) && !name.contains(char::is_control);
    plain && !name.is_empty() && !name.starts_with('.')
}

/// Removes the entries of `dir` named in `listed` (files, or folders with all they hold), then
/// the list.
fn remove_written(dir: &Path, listed: &BTreeSet<String>) -> Result<()> {
    for path in listed.iter().map(|name| dir.join(name)) {
        let removed = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
        };
        removed.map_err(|e| io_error(&path, e))?;
    }
    match std::fs::remove_file(dir.join(WRITTEN)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(dir, e)),
        _ => Ok(()),
    }
}

/// Lists the entry that `path` lies in (itself, or a folder of it) in the `.wafer-emu.written`
/// of the innermost claimed folder that holds it, unless listed or hidden. A path in no claimed
/// folder is left.
pub fn list_written(path: &Path) -> std::io::Result<()> {
    let path = absolute(path);
    let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
    let holders = claimed.iter_mut().filter(|(dir, _)| path.starts_with(dir));
    let Some((dir, listed)) = holders.max_by_key(|(dir, _)| dir.components().count()) else {
        return Ok(());
    };
    let Some(name) = path.strip_prefix(&*dir).ok().and_then(|p| p.iter().next()) else {
        return Ok(());
    };
    let name = name.to_string_lossy();
    if !is_listable(&name) || listed.contains(&*name) {
        return Ok(());
    }
    let mut list = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(WRITTEN))?;
    writeln!(list, "{name}")?;
    list.sync_all()?;
    listed.insert(name.into_owned());
    Ok(())
}

/// Checks, before any work, that `path` (named `what` in messages) can become a regular file:
/// absent or already a regular file (not a folder, a device or a symbolic link), in a folder
/// that is writable.
pub fn check_file_target(path: &Path, what: &str) -> Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_file() {
            return Err(crate::invalid!(
                "{what} {}: not a regular file (a folder, a device or a symbolic link): allowed a new or a regular file",
                path.display()
            ));
        }
    }
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => check_writable(dir),
        _ => check_writable(Path::new(".")),
    }
}

/// Where a command's JSON report goes: standard output (`-`) or a regular file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonTarget {
    Stdout,
    File(PathBuf),
}

impl JsonTarget {
    /// `-` or a path that can become a regular file (checked now, before any work).
    pub fn parse(path: &Path) -> Result<Self> {
        if path == Path::new("-") {
            return Ok(Self::Stdout);
        }
        check_file_target(path, "--json")?;
        Ok(Self::File(path.to_path_buf()))
    }

    /// Refuses a report file inside the output folder `out` where the run's own files may lie:
    /// a name not ending in `.json`, or anything in its checkpoint.
    pub fn check_beside(&self, out: &Path) -> Result<()> {
        let Self::File(path) = self else {
            return Ok(());
        };
        let inside = |dir: &Path| absolute(path).starts_with(absolute(dir));
        let json = path.extension().is_some_and(|e| e == "json");
        match inside(out) && (!json || inside(&out.join("checkpoint"))) {
            true => Err(crate::invalid!(
                "--json {}: inside the output folder {} the run writes files of its own: allowed a NAME.json outside its checkpoint, or a path elsewhere",
                path.display(),
                out.display()
            )),
            false => Ok(()),
        }
    }

    /// Writes `value` into the file (atomically, its folder created); `None` for standard
    /// output, whose text is returned for the caller to print.
    pub fn write(&self, value: &serde_json::Value) -> Result<Option<String>> {
        let text = format!("{value:#}\n");
        match self {
            Self::Stdout => Ok(Some(text)),
            Self::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    create_dir(dir)?;
                }
                write_atomic(path, text.as_bytes())?;
                Ok(None)
            }
        }
    }
}

/// `path` made absolute against the working folder, without touching the file system.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list that names a path outside the folder, a hidden entry, one below another or with a
    /// drive or control character names nothing: `--force` removes plain entries of the folder
    /// only. A line that is not UTF-8 is read as best it can be.
    #[test]
    fn a_written_list_names_plain_entries_only() {
        let dir = std::env::temp_dir().join(format!("wafer-emu-written-{}", std::process::id()));
        create_dir(&dir).unwrap();
        let lines = [
            "a.npy", "../up", "/abs", ".lock", "", "sub/x", "c:x", "t\tab", "my run",
        ];
        let mut bytes = lines.join("\n").into_bytes();
        bytes.extend(b"\nnot \xff utf-8");
        std::fs::write(dir.join(WRITTEN), bytes).unwrap();
        let listed = read_written(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let expected = ["a.npy", "my run", "not \u{fffd} utf-8"].map(String::from);
        assert_eq!(listed, BTreeSet::from(expected));
    }
}
