//! Global relief (ocean depth and land height) for the shallow-water kernel.
//!
//! The grids are the ETOPO1 files in `assets/relief/` (see its README for the sources, the
//! license and the exact layout): raw little-endian `i16`, metres positive up, rows north to
//! south, column 0 at longitude -180. They ship with the crate, so nothing outside it is read.

use std::path::Path;

use crate::{invalid, Result};

/// The 1° grid is small (130 KB), so it is compiled in: the default run needs no file at all.
const ONE_DEGREE: &[u8] =
    include_bytes!("../../../assets/relief/etopo1_icefix_1deg_cell_360x180.i16");

/// The 0.1° grid is 13 MB raw; stored as zlib of its byte planes it is 7.5 MB, which keeps the
/// packaged crate under crates.io's 10 MiB.
const TENTH_DEGREE: &[u8] =
    include_bytes!("../../../assets/relief/etopo1_icefix_6min_grid_3600x1801.i16.zlib");

/// CRC-32 of the decoded 0.1° grid, as its `.json` sidecar records it.
const TENTH_DEGREE_CRC32: u32 = 4_248_134_495;

/// The relief grids that ship with the crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReliefGrid {
    /// 360 x 180 cell means of 1° cells, embedded in the binary.
    OneDegree,
    /// 3600 x 1801 point samples every 0.1°, pole to pole, embedded compressed.
    TenthDegree,
}

impl ReliefGrid {
    /// The name used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            ReliefGrid::OneDegree => "etopo1-1deg",
            ReliefGrid::TenthDegree => "etopo1-6min",
        }
    }

    /// Parses a command-line name; the error lists the allowed names.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "etopo1-1deg" => Ok(ReliefGrid::OneDegree),
            "etopo1-6min" => Ok(ReliefGrid::TenthDegree),
            _ => Err(invalid!(
                "unknown relief '{s}': allowed etopo1-1deg, etopo1-6min"
            )),
        }
    }
}

/// A global elevation grid in metres (positive up), rows north to south, column 0 at -180°.
#[derive(Clone, Debug)]
pub struct Relief {
    /// Samples per row, spread evenly over 360° of longitude (no duplicate column at +180°).
    pub nx: u32,
    /// Rows, from north to south.
    pub ny: u32,
    /// True when a sample is the mean of a cell (centres half a step in from the edges); false
    /// when it is a point value at a node (the first and last rows lie on the poles).
    cell_centred: bool,
    data: Vec<i16>,
}

impl Relief {
    /// Loads one of the grids that ship with the crate.
    pub fn builtin(grid: ReliefGrid) -> Result<Relief> {
        match grid {
            ReliefGrid::OneDegree => Relief::from_bytes(ONE_DEGREE, 360, 180, true),
            ReliefGrid::TenthDegree => {
                let (nx, ny) = (3600, 1801);
                let bytes = Encoding::ZlibBytePlanes.decode(TENTH_DEGREE, 2 * nx * ny)?;
                check_crc32(&bytes, TENTH_DEGREE_CRC32)?;
                Relief::from_bytes(&bytes, nx as u32, ny as u32, false)
            }
        }
    }

    /// Reads a grid described by a JSON file like those in `assets/relief/`: `file` (a grid
    /// beside the JSON), `nx`, `ny` and `registration` (`cell-centred ...` for cell means,
    /// anything else for node samples with the poles as first and last rows); optionally
    /// `encoding` (`raw` or `zlib-byte-planes`) and the decoded grid's `crc32`.
    pub fn from_descriptor(path: &Path) -> Result<Relief> {
        #[derive(serde::Deserialize)]
        struct Descriptor {
            file: String,
            nx: u32,
            ny: u32,
            registration: String,
            dtype: Option<String>,
            byte_order: Option<String>,
            header_bytes: Option<u64>,
            encoding: Option<String>,
            crc32: Option<u32>,
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid!("cannot read relief descriptor {}: {e}", path.display()))?;
        let d: Descriptor = serde_json::from_str(&text).map_err(|e| {
            invalid!(
                "relief descriptor {}: {e} (it needs file, nx, ny and registration)",
                path.display()
            )
        })?;
        let bad = |key: &str, value: &str, allowed: &str| {
            invalid!(
                "relief descriptor {}: {key} = {value}: allowed {allowed}",
                path.display()
            )
        };
        if let Some(dtype) = d.dtype.filter(|t| t != "int16") {
            return Err(bad("dtype", &dtype, "int16"));
        }
        if let Some(order) = d.byte_order.filter(|o| o != "little-endian") {
            return Err(bad("byte_order", &order, "little-endian"));
        }
        if let Some(header) = d.header_bytes.filter(|&h| h != 0) {
            return Err(bad("header_bytes", &header.to_string(), "0"));
        }
        let cell_centred = match d.registration.split_whitespace().next() {
            Some(r) if r.starts_with("cell") => true,
            Some(r) if r.starts_with("grid") => false,
            _ => {
                let allowed = "cell-centred or grid (node) registration";
                return Err(bad("registration", &d.registration, allowed));
            }
        };
        let encoding = match d.encoding.as_deref() {
            None | Some("raw") => Encoding::Raw,
            Some("zlib-byte-planes") => Encoding::ZlibBytePlanes,
            Some(other) => return Err(bad("encoding", other, "raw or zlib-byte-planes")),
        };
        let file = path.parent().unwrap_or(Path::new(".")).join(&d.file);
        let stored = std::fs::read(&file)
            .map_err(|e| invalid!("cannot read relief file {}: {e}", file.display()))?;
        let bytes = encoding
            .decode(&stored, 2 * d.nx as usize * d.ny as usize)
            .and_then(|bytes| {
                d.crc32.map_or(Ok(()), |crc| check_crc32(&bytes, crc))?;
                Ok(bytes)
            })
            .map_err(|e| invalid!("relief file {}: {e}", file.display()))?;
        Relief::from_bytes(&bytes, d.nx, d.ny, cell_centred)
            .map_err(|e| invalid!("relief file {}: {e}", file.display()))
    }

    /// Decodes raw little-endian `i16` samples, row-major, `nx` per row. The size must be
    /// exactly `2 * nx * ny` bytes, since a header or a wrong shape would silently shear the map.
    pub fn from_bytes(bytes: &[u8], nx: u32, ny: u32, cell_centred: bool) -> Result<Relief> {
        let min_ny = if cell_centred { 1 } else { 2 };
        if nx == 0 || ny < min_ny {
            return Err(invalid!(
                "relief grid {nx} x {ny} is too small: needs nx >= 1 and ny >= {min_ny}"
            ));
        }
        let expected = 2 * nx as usize * ny as usize;
        if bytes.len() != expected {
            return Err(invalid!(
                "relief grid has {} bytes, expected {expected} (2 x {nx} x {ny})",
                bytes.len()
            ));
        }
        let data = bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        Ok(Relief {
            nx,
            ny,
            cell_centred,
            data,
        })
    }

    /// Longitude and latitude in degrees of the sample in column `i`, row `j`.
    pub fn lon_lat(&self, i: u32, j: u32) -> (f64, f64) {
        let lon = -180.0 + (f64::from(i) + self.offset()) * 360.0 / f64::from(self.nx);
        let lat = 90.0 - (f64::from(j) + self.offset()) * 180.0 / self.lat_intervals();
        (lon, lat)
    }

    /// Elevation in metres at any point, by bilinear interpolation between the four nearest
    /// samples. Longitude is periodic (any value, wrapped onto the globe, so -180° and +180° are
    /// the same point); latitude is clamped to the first and last rows, because there are no
    /// samples beyond them to interpolate towards.
    pub fn elevation(&self, lon_deg: f64, lat_deg: f64) -> f64 {
        let (i0, i1, fx) = self.column_pair(lon_deg);
        let (j0, j1, fy) = self.row_pair(lat_deg);
        let north = lerp(self.sample(i0, j0), self.sample(i1, j0), fx);
        let south = lerp(self.sample(i0, j1), self.sample(i1, j1), fx);
        lerp(north, south, fy)
    }

    /// The two columns around `lon_deg` (wrapping at the date line) and the weight of the second.
    fn column_pair(&self, lon_deg: f64) -> (u32, u32, f64) {
        let nx = f64::from(self.nx);
        // Multiply before dividing so that sample longitudes map back onto whole columns.
        let x = ((lon_deg + 180.0) * nx / 360.0 - self.offset()).rem_euclid(nx);
        let i0 = x.floor();
        // `rem_euclid` can round up to `nx` itself, hence the modulo.
        let i0_index = i0 as u32 % self.nx;
        (i0_index, (i0_index + 1) % self.nx, x - i0)
    }

    /// The two rows around `lat_deg` (clamped to the grid) and the weight of the second.
    fn row_pair(&self, lat_deg: f64) -> (u32, u32, f64) {
        let last = f64::from(self.ny - 1);
        let y = ((90.0 - lat_deg) * self.lat_intervals() / 180.0 - self.offset()).clamp(0.0, last);
        let j0 = y.floor();
        let j0_index = j0 as u32;
        (j0_index, (j0_index + 1).min(self.ny - 1), y - j0)
    }

    /// Cell means sit half a step in from the cell edges; node samples sit on them.
    fn offset(&self) -> f64 {
        if self.cell_centred {
            0.5
        } else {
            0.0
        }
    }

    /// How many latitude steps span pole to pole: one per row for cells, one fewer for nodes
    /// (both poles are rows).
    fn lat_intervals(&self) -> f64 {
        f64::from(if self.cell_centred {
            self.ny
        } else {
            self.ny - 1
        })
    }

    fn sample(&self, i: u32, j: u32) -> f64 {
        f64::from(self.data[j as usize * self.nx as usize + i as usize])
    }
}

/// Linear interpolation written as `a + t (b - a)`, so that `t = 0` returns `a` exactly.
/// How a grid's `i16` samples are stored in its file.
#[derive(Clone, Copy)]
enum Encoding {
    /// The samples themselves, little-endian.
    Raw,
    /// A zlib stream of the little-endian samples split into byte planes (every low byte,
    /// then every high byte): relief varies slowly, so the high bytes compress well apart.
    ZlibBytePlanes,
}

impl Encoding {
    /// The little-endian samples; a stream that decodes to other than `len` bytes is refused
    /// here, and `from_bytes` then checks `len` against the shape.
    fn decode(self, stored: &[u8], len: usize) -> Result<Vec<u8>> {
        match self {
            Encoding::Raw => Ok(stored.to_vec()),
            Encoding::ZlibBytePlanes => {
                use std::io::Read;
                let mut planes = Vec::with_capacity(len);
                flate2::read::ZlibDecoder::new(stored)
                    .take(len as u64 + 1)
                    .read_to_end(&mut planes)
                    .map_err(|e| invalid!("not a zlib stream: {e}"))?;
                if planes.len() != len {
                    return Err(invalid!(
                        "decodes to other than the {len} bytes of the grid"
                    ));
                }
                let (low, high) = planes.split_at(len / 2);
                Ok(low.iter().zip(high).flat_map(|(&l, &h)| [l, h]).collect())
            }
        }
    }
}

/// Refuses bytes whose CRC-32 is not the one recorded with them.
fn check_crc32(bytes: &[u8], expected: u32) -> Result<()> {
    let actual = crc32fast::hash(bytes);
    if actual != expected {
        return Err(invalid!(
            "CRC-32 {actual:08x} differs from the recorded {expected:08x}: the file is damaged"
        ));
    }
    Ok(())
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + t * (b - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_degree() -> Relief {
        Relief::builtin(ReliefGrid::OneDegree).unwrap()
    }

    #[test]
    fn names_round_trip_and_unknown_is_named() {
        for grid in [ReliefGrid::OneDegree, ReliefGrid::TenthDegree] {
            assert_eq!(ReliefGrid::parse(grid.name()).unwrap(), grid);
        }
        let err = ReliefGrid::parse("gebco").unwrap_err().to_string();
        assert!(
            err.contains("'gebco'") && err.contains("etopo1-6min"),
            "{err}"
        );
    }

    /// Descriptors of another sample type, byte order, header or registration are refused by
    /// the key; the shipped ones load.
    #[test]
    fn descriptors_name_what_they_cannot_describe() {
        let dir = std::env::temp_dir().join(format!("wafer-emu-relief-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("g.i16"), [0u8; 2 * 4 * 3]).unwrap();
        let base = r#""file": "g.i16", "nx": 4, "ny": 3, "registration": "cell-centred""#;
        let descriptor = |extra: &str| {
            let path = dir.join("g.json");
            std::fs::write(&path, format!("{{{base}{extra}}}")).unwrap();
            Relief::from_descriptor(&path).map(|r| (r.nx, r.ny))
        };
        assert_eq!(
            descriptor(r#", "dtype": "int16", "header_bytes": 0"#).unwrap(),
            (4, 3)
        );
        for (extra, needle) in [
            (r#", "dtype": "float64""#, "dtype = float64: allowed int16"),
            (r#", "byte_order": "big-endian""#, "byte_order = big-endian"),
            (r#", "header_bytes": 10"#, "header_bytes = 10: allowed 0"),
            (r#", "encoding": "gzip""#, "encoding = gzip: allowed raw or"),
            (r#", "crc32": 1"#, "the file is damaged"),
            (r#", "encoding": "zlib-byte-planes""#, "not a zlib stream"),
        ] {
            let error = descriptor(extra).unwrap_err().to_string();
            assert!(error.contains(needle), "{extra}: {error}");
        }
        let odd = dir.join("odd.json");
        std::fs::write(
            &odd,
            format!("{{{}}}", base.replace("cell-centred", "corner")),
        )
        .unwrap();
        let error = Relief::from_descriptor(&odd).unwrap_err().to_string();
        assert!(error.contains("registration = corner"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/relief");
        for name in [
            "etopo1_icefix_1deg_cell_360x180.json",
            "etopo1_icefix_6min_grid_3600x1801.json",
        ] {
            Relief::from_descriptor(&assets.join(name)).unwrap();
        }
    }

    #[test]
    fn builtin_one_degree_loads() {
        let relief = one_degree();
        assert_eq!((relief.nx, relief.ny), (360, 180));
        assert_eq!(relief.lon_lat(0, 0), (-179.5, 89.5));
        assert_eq!(relief.lon_lat(359, 179), (179.5, -89.5));
    }

    #[test]
    fn deep_pacific_is_deep_and_tibet_is_high() {
        let relief = one_degree();
        let pacific = relief.elevation(-150.0, 0.0);
        assert!(pacific < -3000.0, "0N 150W: {pacific} m");
        let tibet = relief.elevation(88.0, 32.0);
        assert!(tibet > 3000.0, "32N 88E: {tibet} m");
    }

    #[test]
    fn interpolation_at_a_sample_returns_the_sample() {
        let relief = one_degree();
        for (i, j) in [(0, 0), (17, 90), (210, 90), (359, 179), (268, 58)] {
            let (lon, lat) = relief.lon_lat(i, j);
            assert_eq!(
                relief.elevation(lon, lat),
                relief.sample(i, j),
                "({i}, {j})"
            );
        }
    }

    #[test]
    fn longitude_wraps() {
        let relief = one_degree();
        for lat in [-89.9, -45.3, 0.0, 12.7, 89.9] {
            let west = relief.elevation(-180.0, lat);
            assert_eq!(west, relief.elevation(180.0, lat), "lat {lat}");
            assert_eq!(west, relief.elevation(540.0, lat), "lat {lat}");
        }
    }

    #[test]
    fn grid_registered_nodes_span_pole_to_pole() {
        // 4 x 3 nodes: rows at 90N, 0, 90S; columns at -180, -90, 0, 90.
        let values: [i16; 12] = [10, 10, 10, 10, 0, 100, 200, 300, -5, -5, -5, -5];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let relief = Relief::from_bytes(&bytes, 4, 3, false).unwrap();
        assert_eq!(relief.lon_lat(1, 2), (-90.0, -90.0));
        assert_eq!(relief.elevation(-45.0, 0.0), 150.0);
        assert_eq!(relief.elevation(135.0, 0.0), 150.0, "wraps from 90E to 180");
        assert_eq!(relief.elevation(30.0, 95.0), 10.0, "clamped at the pole");
    }

    #[test]
    fn wrong_size_names_both_sizes() {
        let err = Relief::from_bytes(&[0; 10], 2, 3, true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("10 bytes") && err.contains("expected 12"),
            "{err}"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let dir = std::env::temp_dir().join(format!("wafer-emu-nofile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.json");
        let text = r#"{"file": "no/such/relief.i16", "nx": 2, "ny": 2, "registration": "cell"}"#;
        std::fs::write(&path, text).unwrap();
        let err = Relief::from_descriptor(&path).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("no/such/relief.i16"), "{err}");
    }

    #[test]
    fn builtin_tenth_degree_loads() {
        let relief = Relief::builtin(ReliefGrid::TenthDegree).unwrap();
        assert_eq!((relief.nx, relief.ny), (3600, 1801));
        let (min, max) = relief
            .data
            .iter()
            .fold((0, 0), |(lo, hi), &z| (z.min(lo), z.max(hi)));
        assert_eq!((min, max), (-10714, 8266), "the sidecar's min and max");
        let pacific = relief.elevation(-160.0, 0.0);
        assert!(pacific < -4000.0, "0N 160W: {pacific} m");
    }
}
