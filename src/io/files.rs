//! Files written whole or not at all: a temporary name beside the target, synced, then
//! renamed; reads whose errors name the file.

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};

use super::output_dir::list_written;

pub(super) fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The hidden temporary file beside `path` that this process writes before renaming it to
/// `path` (named by the process, so that one a killed run left behind is never in the way).
pub fn temp_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Renames the synced temporary file `tmp` to `path` and syncs their folder, so that the new
/// name survives a crash (where a folder can be opened for that: not on Windows). A `path` in
/// a claimed folder is listed there first ([`list_written`]).
pub fn rename_into_place(tmp: &Path, path: &Path) -> std::io::Result<()> {
    list_written(path)?;
    std::fs::rename(tmp, path)?;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Ok(folder) = std::fs::File::open(folder.unwrap_or(Path::new("."))) {
        folder.sync_all()?;
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_path(path);
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .and_then(|_| rename_into_place(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(path, e));
    }
    Ok(())
}

/// Checks, before any work and without creating anything, that `dir` exists as a writable
/// folder or could be created: a probe file is written into its nearest existing ancestor.
pub fn check_writable(dir: &Path) -> Result<()> {
    let existing = dir
        .ancestors()
        .find(|a| a.as_os_str().is_empty() || a.exists());
    let existing = match existing {
        Some(a) if a.as_os_str().is_empty() => Path::new("."),
        Some(a) => a,
        None => Path::new("/"),
    };
    if !existing.is_dir() {
        let e = std::io::Error::other(format!("{} is not a folder", existing.display()));
        return Err(io_error(dir, e));
    }
    let probe = existing.join(format!(".wafer-emu-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| io_error(dir, e))?;
    std::fs::remove_file(&probe).map_err(|e| io_error(dir, e))
}

/// Creates `dir` and its parents if needed.
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))
}

/// The bytes of the file at `path`; the error names it.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| crate::invalid!("cannot read {}: {e}", path.display()))
}
