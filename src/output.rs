//! Output files: fields as `.npy` and as PNG pictures with a colour bar. Every file is written
//! to a temporary name beside its target and renamed, so no half-written file is ever left.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::field::GlobalField;
use crate::{Error, Result};

fn io_error(path: &Path, source: std::io::Error) -> Error {
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

/// The lock file of a folder a run is writing.
const LOCK: &str = ".wafer-emu.lock";

/// Whether `lock` was left by a run that is gone (killed, or crashed inside a driver): the
/// process id it holds names no live process. Only where `/proc` tells (Linux); elsewhere a
/// lock always counts as held.
fn is_stale(lock: &Path) -> bool {
    let pid = std::fs::read_to_string(lock).map(|text| text.trim().parse::<u32>());
    match pid {
        Ok(Ok(pid)) => {
            Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.to_string()).exists()
        }
        _ => false,
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
const WRITTEN: &str = ".wafer-emu.written";

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
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
        claimed.retain(|(dir, _)| *dir != self.dir);
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// Creates `dir` and takes its lock, from a run that is gone too (refused while another run
/// holds it), then keeps or removes the files earlier runs listed there.
pub fn claim_dir(dir: &Path, earlier: Earlier) -> Result<OutputDir> {
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
    let claim = OutputDir {
        dir: absolute(dir),
        lock,
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

/// Creates `dir` and its parents if needed.
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))
}

/// The bytes of the file at `path`; the error names it.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| crate::invalid!("cannot read {}: {e}", path.display()))
}

/// Reads a 2-D little-endian f32 `.npy` file as written by [`field_npy`].
pub fn read_field_npy(path: &Path) -> Result<GlobalField> {
    let bytes = read_bytes(path)?;
    let bad = |why: &str| crate::invalid!("{}: {why}", path.display());
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file"));
    }
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(
        bytes
            .get(10..10 + header_len)
            .ok_or_else(|| bad("short header"))?,
    )
    .map_err(|_| bad("header is not text"))?;
    if !header.contains("'<f4'") || header.contains("'fortran_order': True") {
        return Err(bad("not a C-order little-endian f32 array"));
    }
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let dims: Vec<u32> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    let [ny, nx] = dims[..] else {
        return Err(bad("not 2-D"));
    };
    let data: Vec<f32> = bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if data.len() != nx as usize * ny as usize {
        return Err(bad("data does not fill the shape"));
    }
    Ok(GlobalField { nx, ny, data })
}

/// A NumPy `.npy` file (version 1.0, C order) of little-endian values of type `descr`
/// (`<f4`, `<f8`) with the given shape.
pub fn npy_bytes(descr: &str, shape: &[usize], payload: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let dims = if dims.len() == 1 {
        format!("{},", dims[0])
    } else {
        dims.join(", ")
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    // Magic (6) + version (2) + header length (2) + dict + newline, padded to 64 bytes.
    let header_len = (10 + dict.len() + 1).div_ceil(64) * 64 - 10;
    let mut bytes = Vec::with_capacity(10 + header_len + payload.len());
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header_len as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.resize(10 + header_len - 1, b' ');
    bytes.push(b'\n');
    bytes.extend_from_slice(payload);
    bytes
}

/// A field as `.npy`: f32, shape `(ny, nx)`, row `y` upward.
pub fn field_npy(field: &GlobalField) -> Vec<u8> {
    let payload: Vec<u8> = field.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy_bytes("<f4", &[field.ny as usize, field.nx as usize], &payload)
}

/// Viridis at nine evenly spaced stops.
const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// Blue, white, red (ColorBrewer RdBu, reversed) at seven evenly spaced stops.
const DIVERGING: [[u8; 3]; 7] = [
    [33, 102, 172],
    [103, 169, 207],
    [209, 229, 240],
    [247, 247, 247],
    [253, 219, 199],
    [239, 138, 98],
    [178, 24, 43],
];

/// The colours of a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    /// Viridis, for fields of one sign.
    Sequential,
    /// Blue to red through white at the middle of the range, for anomalies.
    Diverging,
}

impl Palette {
    /// The colour at `t` in `[0, 1]` (clamped; not a number draws the lowest colour).
    fn colour(self, t: f32) -> [u8; 3] {
        let stops: &[[u8; 3]] = match self {
            Palette::Sequential => &VIRIDIS,
            Palette::Diverging => &DIVERGING,
        };
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let last = stops.len() - 2;
        let x = t * (stops.len() - 1) as f32;
        let (k, f) = ((x as usize).min(last), x - (x as usize).min(last) as f32);
        let (a, b) = (stops[k], stops[k + 1]);
        [0, 1, 2].map(|c| (a[c] as f32 + (b[c] as f32 - a[c] as f32) * f).round() as u8)
    }
}

/// The colour of a point with no value (NaN) over water, such as a place the wave never
/// reached: a pale blue, unlike the greys of land.
const NO_DATA: [u8; 3] = [206, 222, 240];
/// The coastline between land and water.
const COAST: [u8; 3] = [40, 40, 40];

/// How a field is drawn: the values coloured over a range, and the land, if any, in grey.
#[derive(Clone, Debug)]
pub struct Picture {
    /// The values to colour (for example the surface height above sea level).
    pub values: GlobalField,
    /// What the colour bar shows, with units.
    pub label: String,
    pub palette: Palette,
    pub range: (f32, f32),
    /// Grey level (0 black to 1 white) of each point that is land, `None` on water.
    pub land: Option<Vec<Option<f32>>>,
    /// A line above the picture.
    pub title: Option<String>,
    /// Tick marks with their labels.
    pub axes: Option<Axes>,
    pub scale: Scale,
    /// Points drawn over the picture with their names (gauges).
    pub marks: Vec<Mark>,
}

/// Ticks of a picture's axes: positions as fractions of its width (from the left) and of its
/// height (from the bottom), with labels.
#[derive(Clone, Debug, Default)]
pub struct Axes {
    pub x: Vec<(f64, String)>,
    pub y: Vec<(f64, String)>,
}

impl Axes {
    /// Grid-point ticks of an `nx x ny` field: column and row numbers.
    pub fn grid(nx: u32, ny: u32) -> Self {
        let axis = |n: u32| {
            let last = n.saturating_sub(1) as f64;
            let steps = [
                1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
                10000.0,
            ];
            ticks(
                (0.0, last),
                |v| (v + 0.5) / n as f64,
                |v| v.to_string(),
                &steps,
            )
        };
        Self {
            x: axis(nx),
            y: axis(ny),
        }
    }
}

/// Ticks from `lo` to `hi` every step of `steps` that gives at most seven, at `at(value)` (a
/// fraction of the axis), labelled by `label(value)`.
pub fn ticks(
    (lo, hi): (f64, f64),
    at: impl Fn(f64) -> f64,
    label: impl Fn(f64) -> String,
    steps: &[f64],
) -> Vec<(f64, String)> {
    let step = steps
        .iter()
        .copied()
        .find(|s| (hi - lo) / s <= 7.0)
        .unwrap_or(hi - lo);
    let mut v = (lo / step).ceil() * step;
    let mut out = vec![];
    while v <= hi + 1e-9 && step > 0.0 {
        out.push((at(v), label(v)));
        v += step;
    }
    out
}

/// A number as a person writes it: `0`, `2`, `0.25`, `-1.5`, `1200`, and `1e-4` or `2.5e6` only
/// where plain digits would run long; at most `digits` significant digits.
pub fn plain_number(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-3..6).contains(&magnitude) {
        let text = format!("{:.*e}", digits.saturating_sub(1), v);
        let (mantissa, exponent) = text.split_once('e').expect("an exponent");
        let mantissa = trim_zeros(mantissa);
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    trim_zeros(&format!("{v:.decimals$}")).to_string()
}

/// `1.500` as `1.5`, `2.000` as `2`.
fn trim_zeros(text: &str) -> &str {
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.'),
        false => text,
    }
}

/// How values map to colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic, for a range of positive values over decades (below it: the lowest colour).
    Log,
}

/// A named point drawn over a picture: its position as fractions of the picture's width
/// (from the left) and height (from the bottom).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub at: (f64, f64),
    pub label: String,
}

impl Picture {
    /// The field itself: viridis from its minimum to its maximum, or blue-white-red symmetric
    /// about zero when it has both signs.
    pub fn plain(field: &GlobalField, label: &str) -> Self {
        let (lo, hi) = field.range();
        let (palette, range) = match lo < 0.0 && hi > 0.0 {
            true => (Palette::Diverging, (-hi.max(-lo), hi.max(-lo))),
            false => (Palette::Sequential, (lo, hi)),
        };
        Self {
            values: field.clone(),
            label: label.into(),
            palette,
            range,
            land: None,
            title: None,
            axes: None,
            scale: Scale::Linear,
            marks: vec![],
        }
    }

    /// Whether point `(x, y)` is land.
    fn is_land(&self, x: u32, y: u32) -> bool {
        let land = self.land.as_ref();
        land.is_some_and(|l| l[(y * self.values.nx + x) as usize].is_some())
    }

    /// Where `v` falls in the range, 0 to 1 (unclamped).
    fn position(&self, v: f32) -> f32 {
        let (lo, hi) = self.range;
        match self.scale {
            Scale::Linear => (v - lo) / if hi > lo { hi - lo } else { 1.0 },
            Scale::Log => {
                let (lo, hi) = (
                    lo.max(f32::MIN_POSITIVE).ln(),
                    hi.max(f32::MIN_POSITIVE).ln(),
                );
                (v.max(f32::MIN_POSITIVE).ln() - lo) / if hi > lo { hi - lo } else { 1.0 }
            }
        }
    }

    /// The values at the bottom, middle and top of the colour bar.
    fn bar_values(&self) -> [f32; 3] {
        let (lo, hi) = self.range;
        let middle = match self.scale {
            Scale::Linear => (lo + hi) / 2.0,
            Scale::Log => (lo.max(f32::MIN_POSITIVE) * hi.max(f32::MIN_POSITIVE)).sqrt(),
        };
        [hi, middle, lo]
    }

    /// The colour of point `(x, y)`.
    fn colour(&self, x: u32, y: u32) -> [u8; 3] {
        let land = self
            .land
            .as_ref()
            .and_then(|l| l[(y * self.values.nx + x) as usize]);
        if let Some(grey) = land {
            return [(grey.clamp(0.0, 1.0) * 255.0).round() as u8; 3];
        }
        match self.values.at(x, y) {
            v if v.is_nan() => NO_DATA,
            v => self.palette.colour(self.position(v)),
        }
    }
}

/// The typeface of every picture and figure: DejaVu Sans, shipped in `assets/fonts` with its
/// licence.
static FONT: std::sync::LazyLock<ab_glyph::FontRef<'static>> = std::sync::LazyLock::new(|| {
    ab_glyph::FontRef::try_from_slice(include_bytes!("../assets/fonts/DejaVuSans.ttf"))
        .expect("the shipped font parses")
});

/// Pixel height of the font at text scale `s`: capitals are about `5 s` pixels tall.
fn font_scale(s: usize) -> ab_glyph::PxScale {
    ab_glyph::PxScale::from(7.0 * s as f32)
}

/// An RGB canvas.
pub(crate) struct Canvas {
    pub width: usize,
    pub height: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            rgb: vec![255; width * height * 3],
        }
    }

    pub fn put(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.width && y < self.height {
            let k = (y * self.width + x) * 3;
            self.rgb[k..k + 3].copy_from_slice(&c);
        }
    }

    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.put(xx, yy, c);
            }
        }
    }

    /// The canvas as PNG bytes.
    pub fn png(&self) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let png_error = |e: png::EncodingError| Error::Encode(format!("the PNG picture: {e}"));
        let mut writer = encoder.write_header().map_err(png_error)?;
        writer.write_image_data(&self.rgb).map_err(png_error)?;
        writer.finish().map_err(png_error)?;
        Ok(bytes)
    }

    /// Blends `c` over the pixel at `(x, y)` with opacity `alpha`.
    fn blend(&mut self, x: usize, y: usize, c: [u8; 3], alpha: f32) {
        if x < self.width && y < self.height {
            let k = (y * self.width + x) * 3;
            for (old, new) in self.rgb[k..k + 3].iter_mut().zip(c) {
                *old = (*old as f32 * (1.0 - alpha) + new as f32 * alpha).round() as u8;
            }
        }
    }

    /// Width in pixels of `text` at scale `s`.
    pub fn text_width(s: usize, text: &str) -> usize {
        use ab_glyph::{Font, ScaleFont};
        let font = FONT.as_scaled(font_scale(s));
        let ids: Vec<_> = text.chars().map(|c| font.glyph_id(c)).collect();
        let advance: f32 = ids.iter().map(|&id| font.h_advance(id)).sum();
        let kerning: f32 = ids.windows(2).map(|p| font.kern(p[0], p[1])).sum();
        (advance + kerning).ceil() as usize
    }

    /// Anti-aliased text at scale `s` (capitals about `5 s` pixels tall), top of the capitals
    /// at `(x, y)`.
    pub fn text(&mut self, x: usize, y: usize, s: usize, text: &str) {
        use ab_glyph::{Font, ScaleFont};
        let scale = font_scale(s);
        let font = FONT.as_scaled(scale);
        let mut caret = ab_glyph::point(x as f32, (y + 5 * s) as f32);
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(previous) = previous {
                caret.x += font.kern(previous, id);
            }
            previous = Some(id);
            if let Some(outline) = FONT.outline_glyph(id.with_scale_and_position(scale, caret)) {
                let origin = outline.px_bounds().min;
                outline.draw(|gx, gy, alpha| {
                    let (px, py) = (origin.x as i64 + gx as i64, origin.y as i64 + gy as i64);
                    if px >= 0 && py >= 0 {
                        self.blend(px as usize, py as usize, [0, 0, 0], alpha);
                    }
                });
            }
            caret.x += font.h_advance(id);
        }
    }
}

/// Longest side of the field part of a picture; larger fields are subsampled.
const MAX_PICTURE: usize = 2048;
/// Longest side small fields are scaled up to (a region of a few dozen cells stays legible).
const MIN_PICTURE: usize = 512;

/// The picture as a PNG: `y` upward, a colour bar with the lowest, middle and highest values
/// of the range to the right and the label above it.
pub fn png_bytes(picture: &Picture) -> Result<Vec<u8>> {
    let field = &picture.values;
    let (nx, ny) = (field.nx as usize, field.ny as usize);
    let longest = nx.max(ny);
    let (up, down) = if longest >= MIN_PICTURE {
        (1, longest.div_ceil(MAX_PICTURE))
    } else {
        (MIN_PICTURE.div_ceil(longest), 1)
    };
    let (fw, fh) = (nx.div_ceil(down) * up, ny.div_ceil(down) * up);
    let labels = picture.bar_values().map(|v| plain_number(v as f64, 3));
    let text_w = labels
        .iter()
        .map(|l| Canvas::text_width(2, l))
        .max()
        .unwrap_or(0);
    let (margin, bar_w, line_h) = (10, 20, 16);
    let axes = picture.axes.clone().unwrap_or_default();
    let y_label_w = axes.y.iter().map(|(_, l)| Canvas::text_width(2, l)).max();
    let left = margin + y_label_w.map_or(0, |w| w + 8);
    let top = margin + line_h * (1 + picture.title.is_some() as usize);
    let bottom = margin + if axes.x.is_empty() { 0 } else { line_h + 4 };
    let height = fh.max(60) + top + bottom;
    let title_w = picture
        .title
        .as_deref()
        .map_or(0, |t| Canvas::text_width(2, t));
    let width = (left + fw + margin + bar_w + 6 + text_w + margin)
        .max(left + fw + Canvas::text_width(2, &picture.label) + margin)
        .max(left + title_w + margin);
    let mut canvas = Canvas::new(width, height);
    // The field point under pixel (px, py) of the field part.
    let point =
        |px: usize, py: usize| ((px / up * down) as u32, ((fh - 1 - py) / up * down) as u32);
    for py in 0..fh {
        for px in 0..fw {
            let (x, y) = point(px, py);
            canvas.put(left + px, top + py, picture.colour(x, y));
        }
    }
    // Coastlines: land pixels next to a water pixel.
    if picture.land.is_some() {
        for py in 0..fh {
            for px in 0..fw {
                let (x, y) = point(px, py);
                let beside = [
                    (px + 1, py),
                    (px.wrapping_sub(1), py),
                    (px, py + 1),
                    (px, py.wrapping_sub(1)),
                ];
                let water_beside = beside.iter().any(|&(qx, qy)| {
                    qx < fw && qy < fh && {
                        let (u, v) = point(qx, qy);
                        !picture.is_land(u, v)
                    }
                });
                if picture.is_land(x, y) && water_beside {
                    canvas.put(left + px, top + py, COAST);
                }
            }
        }
    }
    for mark in &picture.marks {
        let (mx, my) = (
            left as f64 + mark.at.0 * fw as f64,
            top as f64 + (1.0 - mark.at.1) * fh as f64,
        );
        if !(mx >= left as f64
            && mx < (left + fw) as f64
            && my >= top as f64
            && my < (top + fh) as f64)
        {
            continue;
        }
        let (mx, my) = (mx as usize, my as usize);
        canvas.rect(mx.saturating_sub(3), my.saturating_sub(3), 7, 7, [0, 0, 0]);
        canvas.rect(
            mx.saturating_sub(2),
            my.saturating_sub(2),
            5,
            5,
            [255, 255, 255],
        );
        canvas.text(
            (mx + 6).min(left + fw),
            my.saturating_sub(5),
            2,
            &mark.label,
        );
    }
    for (at, label) in &axes.x {
        let x = left + (at * fw as f64).round().min(fw as f64 - 1.0) as usize;
        canvas.rect(x, top + fh, 1, 4, [0, 0, 0]);
        let w = Canvas::text_width(2, label);
        canvas.text(x.saturating_sub(w / 2).max(1), top + fh + 6, 2, label);
    }
    for (at, label) in &axes.y {
        let y = top + fh - 1 - (at * fh as f64).round().min(fh as f64 - 1.0) as usize;
        canvas.rect(left - 4, y, 4, 1, [0, 0, 0]);
        let w = Canvas::text_width(2, label);
        canvas.text(left - 6 - w, y.saturating_sub(5), 2, label);
    }
    if let Some(title) = &picture.title {
        canvas.text(left, margin - 4, 2, title);
    }
    let bar_x = left + fw + margin;
    let bar_h = height - top - bottom;
    for k in 0..bar_h {
        let t = 1.0 - k as f32 / (bar_h - 1) as f32;
        canvas.rect(bar_x, top + k, bar_w, 1, picture.palette.colour(t));
    }
    for (k, label) in labels.iter().enumerate() {
        let y = top + k * (bar_h - 10) / 2;
        canvas.text(bar_x + bar_w + 6, y, 2, label);
    }
    let label_w = Canvas::text_width(2, &picture.label);
    canvas.text(
        bar_x.min(width - label_w),
        top - line_h + 2,
        2,
        &picture.label,
    );
    canvas.png()
}

/// Writes `stem.npy` and `stem.png` of the field into `dir`; returns the paths.
/// The PNG shows `picture`.
pub fn write_field(
    dir: &Path,
    stem: &str,
    field: &GlobalField,
    picture: &Picture,
) -> Result<Vec<PathBuf>> {
    let npy = dir.join(format!("{stem}.npy"));
    let png = dir.join(format!("{stem}.png"));
    write_atomic(&npy, &field_npy(field))?;
    write_atomic(&png, &png_bytes(picture)?)?;
    Ok(vec![npy, png])
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

    #[test]
    fn npy_header_is_aligned_and_data_follows() {
        let field = GlobalField::from_fn(3, 2, |x, y| (x + 10 * y) as f32);
        let bytes = field_npy(&field);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes[10 + header_len - 1], b'\n');
        assert!(String::from_utf8_lossy(&bytes[10..10 + header_len]).contains("'shape': (2, 3)"));
        let last = &bytes[bytes.len() - 4..];
        assert_eq!(f32::from_le_bytes(last.try_into().unwrap()), 12.0);
    }
}
