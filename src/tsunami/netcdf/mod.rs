//! A tsunami run as NetCDF following the CF conventions (classic format with 64-bit offsets;
//! xarray, ncview and netCDF-C read it). The header is encoded by the pure-Rust `netcdf3`
//! crate; the file then grows frame by frame as netCDF itself grows a file: each frame is
//! appended as a record and only then counted in the header, so a run stopped at any point
//! leaves a file that reads, holding every frame written before it stopped.
//!
//! Coordinates: `time` (frames), `sample_time` (gauge samples), `lat`, `lon`, `gauge`. Per
//! frame: `eta`, `u`, `v` at the cell centres. Maps: `max_eta`, `max_speed`, `arrival_time`,
//! `depth`. Gauges: `gauge_name`, `gauge_lat`, `gauge_lon`, `gauge_depth` and the series
//! `gauge_eta`, `gauge_u`, `gauge_v` (the rows of gauges.csv). Times in seconds since the
//! impact, placed at a nominal epoch so that CF readers decode them. Land, never-reached
//! points and samples not yet taken are NaN.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use netcdf3::{DataSet, FileWriter, Version};

use crate::field::GlobalField;
use crate::{Error, Result};

mod layout;

use layout::{data_set, fixed_sizes, header_size, write_fixed, Buffered};

/// The impact's nominal epoch: times are `seconds since` it.
pub const TIME_UNITS: &str = "seconds since 2000-01-01 00:00:00";

/// A global attribute: a number (with its unit in its name) or text.
#[derive(Clone, Debug, PartialEq)]
pub enum Attribute {
    Number(f64),
    Text(String),
}

/// A gauge as the file lists it.
#[derive(Clone, Debug)]
pub struct GaugeHeader {
    pub name: String,
    /// Latitude and longitude (degrees) of the cell that records it.
    pub at: (f64, f64),
    pub depth: f64,
}

/// What the file holds besides the frames, maps and series it takes in as the run goes.
pub struct Header<'a> {
    /// Latitude of every row (south to north) and longitude of every column, degrees.
    pub lat: Vec<f64>,
    pub lon: Vec<f64>,
    /// The depth at rest, NaN on land.
    pub depth: &'a GlobalField,
    pub gauges: Vec<GaugeHeader>,
    /// Samples the run takes, the first at the impact.
    pub samples: usize,
    /// Whether frames of `eta`, `u`, `v` are written.
    pub frames: bool,
    /// Global attributes (the run's parameters).
    pub attributes: Vec<(String, Attribute)>,
}

/// What the tracker holds at a frame: the maps and the gauges' series so far.
pub struct Maps<'a> {
    pub max_eta: &'a GlobalField,
    pub max_speed: &'a GlobalField,
    pub arrival: &'a GlobalField,
    /// Per gauge, its samples so far as `(eta, u, v)`.
    pub series: Vec<Vec<(f32, f32, f32)>>,
    /// The times of the samples so far.
    pub sample_times: Vec<f64>,
}

/// A variable: name, dimensions, CF attributes.
struct Var {
    name: &'static str,
    dims: &'static [&'static str],
    kind: Kind,
    attrs: &'static [(&'static str, &'static str)],
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    F32,
    F64,
    Char,
}

const FRAME: &[&str] = &["time", "lat", "lon"];
const MAP: &[&str] = &["lat", "lon"];
const SERIES: &[&str] = &["gauge", "sample"];

/// Every variable, fixed ones first in the order their data lies in the file, then the
/// record variables in the order they lie in each record.
const VARS: [Var; 18] = [
    Var {
        name: "lat",
        dims: &["lat"],
        kind: Kind::F64,
        attrs: &[
            ("standard_name", "latitude"),
            ("units", "degrees_north"),
            ("axis", "Y"),
        ],
    },
    Var {
        name: "lon",
        dims: &["lon"],
        kind: Kind::F64,
        attrs: &[
            ("standard_name", "longitude"),
            ("units", "degrees_east"),
            ("axis", "X"),
        ],
    },
    Var {
        name: "depth",
        dims: MAP,
        kind: Kind::F32,
        attrs: &[
            ("standard_name", "sea_floor_depth_below_sea_level"),
            ("units", "m"),
        ],
    },
    Var {
        name: "max_eta",
        dims: MAP,
        kind: Kind::F32,
        attrs: &[
            ("long_name", "largest |eta| at the samples so far"),
            ("units", "m"),
        ],
    },
    Var {
        name: "max_speed",
        dims: MAP,
        kind: Kind::F32,
        attrs: &[
            (
                "long_name",
                "largest current speed at the cell centre at the samples so far",
            ),
            ("units", "m s-1"),
        ],
    },
    Var {
        name: "arrival_time",
        dims: MAP,
        kind: Kind::F32,
        attrs: &[
            (
                "long_name",
                "first sample at which |eta| passed the arrival threshold, after the impact",
            ),
            ("units", "s"),
        ],
    },
    Var {
        name: "gauge_name",
        dims: &["gauge", "name_length"],
        kind: Kind::Char,
        attrs: &[("long_name", "gauge name")],
    },
    Var {
        name: "gauge_lat",
        dims: &["gauge"],
        kind: Kind::F64,
        attrs: &[
            ("long_name", "latitude of the cell that records the gauge"),
            ("units", "degrees_north"),
        ],
    },
    Var {
        name: "gauge_lon",
        dims: &["gauge"],
        kind: Kind::F64,
        attrs: &[
            ("long_name", "longitude of the cell that records the gauge"),
            ("units", "degrees_east"),
        ],
    },
    Var {
        name: "gauge_depth",
        dims: &["gauge"],
        kind: Kind::F32,
        attrs: &[("long_name", "depth at rest at the gauge"), ("units", "m")],
    },
    Var {
        name: "sample_time",
        dims: &["sample"],
        kind: Kind::F64,
        attrs: &[
            ("long_name", "time of the gauge sample"),
            ("units", TIME_UNITS),
            ("calendar", "standard"),
        ],
    },
    Var {
        name: "gauge_eta",
        dims: SERIES,
        kind: Kind::F32,
        attrs: &[
            (
                "long_name",
                "surface elevation above the sea at rest at the gauge",
            ),
            ("units", "m"),
        ],
    },
    Var {
        name: "gauge_u",
        dims: SERIES,
        kind: Kind::F32,
        attrs: &[
            ("long_name", "eastward current at the gauge"),
            ("units", "m s-1"),
        ],
    },
    Var {
        name: "gauge_v",
        dims: SERIES,
        kind: Kind::F32,
        attrs: &[
            ("long_name", "northward current at the gauge"),
            ("units", "m s-1"),
        ],
    },
    Var {
        name: "time",
        dims: &["time"],
        kind: Kind::F64,
        attrs: &[
            ("standard_name", "time"),
            ("units", TIME_UNITS),
            ("calendar", "standard"),
            ("axis", "T"),
        ],
    },
    Var {
        name: "eta",
        dims: FRAME,
        kind: Kind::F32,
        attrs: &[
            ("standard_name", "sea_surface_height_above_mean_sea_level"),
            ("long_name", "surface elevation above the sea at rest"),
            ("units", "m"),
        ],
    },
    Var {
        name: "u",
        dims: FRAME,
        kind: Kind::F32,
        attrs: &[
            ("standard_name", "eastward_sea_water_velocity"),
            ("long_name", "eastward current at the cell centre"),
            ("units", "m s-1"),
        ],
    },
    Var {
        name: "v",
        dims: FRAME,
        kind: Kind::F32,
        attrs: &[
            ("standard_name", "northward_sea_water_velocity"),
            ("long_name", "northward current at the cell centre"),
            ("units", "m s-1"),
        ],
    },
];

/// The record variables (the last four of [`VARS`]).
const RECORD_VARS: usize = 4;

fn encode(path: &Path, e: impl std::fmt::Debug) -> Error {
    Error::Encode(format!("the NetCDF file {}: {e:?}", path.display()))
}

/// Writes one shallow-water state as CF NetCDF at `path` (through a temporary file): `eta`,
/// `u`, `v` at the cell centres (NaN on land) over `lat` and `lon`, at `time` seconds after the
/// start, with `attributes`.
pub fn write_surface(
    path: &Path,
    (lat, lon): (&[f64], &[f64]),
    time: f64,
    fields: [&GlobalField; 3],
    attributes: &[(String, Attribute)],
) -> Result<()> {
    let fail = |e: &dyn std::fmt::Debug| encode(path, e);
    let mut set = DataSet::new();
    let dims = |set: &mut DataSet| -> std::result::Result<(), netcdf3::InvalidDataSet> {
        set.add_fixed_dim("lat", lat.len())?;
        set.add_fixed_dim("lon", lon.len())?;
        for var in VARS.iter().filter(|v| ["lat", "lon"].contains(&v.name)) {
            set.add_var_f64(var.name, var.dims)?;
            for (key, value) in var.attrs {
                set.add_var_attr_string(var.name, key, value)?;
            }
        }
        for var in VARS.iter().filter(|v| ["eta", "u", "v"].contains(&v.name)) {
            set.add_var_f32(var.name, MAP)?;
            for (key, value) in var.attrs {
                set.add_var_attr_string(var.name, key, value)?;
            }
        }
        set.add_global_attr_string("Conventions", "CF-1.8")?;
        set.add_global_attr_f64("time_s", vec![time])?;
        set.add_global_attr_string("source", format!("wafer-emu {}", env!("CARGO_PKG_VERSION")))?;
        for (key, value) in attributes {
            match value {
                Attribute::Number(v) => set.add_global_attr_f64(key, vec![*v])?,
                Attribute::Text(t) => set.add_global_attr_string(key, t)?,
            }
        }
        Ok(())
    };
    dims(&mut set).map_err(|e| fail(&e))?;
    let temp = crate::io::temp_path(path);
    let written = (|| -> std::result::Result<(), netcdf3::error::WriteError> {
        let file = BufWriter::with_capacity(1 << 20, File::create(&temp)?);
        let buffered = Buffered(std::rc::Rc::new(std::cell::RefCell::new(file)));
        let mut writer = FileWriter::open_seek_write(&temp.to_string_lossy(), Box::new(buffered))?;
        writer.set_def(&set, Version::Offset64Bit, 0)?;
        writer.write_var_f64("lat", lat)?;
        writer.write_var_f64("lon", lon)?;
        for (name, field) in ["eta", "u", "v"].into_iter().zip(fields) {
            writer.write_var_f32(name, &field.data)?;
        }
        writer.close()?;
        File::open(&temp)?.sync_all()?;
        Ok(())
    })();
    let placed = written
        .map_err(|e| fail(&e))
        .and_then(|()| crate::io::rename_into_place(&temp, path).map_err(|e| fail(&e)));
    if placed.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    placed
}

/// The tsunami's NetCDF file, open for frames.
pub struct TsunamiFile {
    path: PathBuf,
    file: File,
    /// Where each fixed variable's data begins.
    offsets: Vec<(&'static str, u64)>,
    records_start: u64,
    record_size: u64,
    frames: u64,
    cells: usize,
    with_frames: bool,
}

impl TsunamiFile {
    /// Writes the header and the fixed variables (`lat`, `lon`, `depth`, the gauges; the maps
    /// and series as NaN) through a temporary file, places it at `path` and opens it for
    /// frames.
    pub fn create(path: &Path, header: &Header) -> Result<Self> {
        let set = data_set(header).map_err(|e| encode(path, e))?;
        let temp = crate::io::temp_path(path);
        let written = write_fixed(&temp, &set, header).map_err(|e| encode(path, e));
        let placed = written
            .and_then(|()| crate::io::rename_into_place(&temp, path).map_err(|e| encode(path, e)));
        if let Err(e) = placed {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        Self::open(path, header, 0)
    }

    /// Opens the file at `path` to continue after its first `frames` frames (a resumed run):
    /// frames past them are forgotten. A file written for another number of samples (a run
    /// resumed to more hours) is written anew for `header` with those frames copied in.
    pub fn resume(path: &Path, header: &Header, frames: u64) -> Result<Self> {
        let mut old = netcdf3::FileReader::open(path).map_err(|e| encode(path, e))?;
        let samples = old.data_set().dim_size("sample").unwrap_or(0);
        if samples == header.samples.max(1) {
            return Self::open(path, header, frames);
        }
        let temp = crate::io::temp_path(path);
        let copied = (|| {
            let set = data_set(header).map_err(|e| encode(path, e))?;
            write_fixed(&temp, &set, header).map_err(|e| encode(path, e))?;
            let mut new = Self::open(&temp, header, 0)?;
            for k in 0..frames as usize {
                let mut record = |name: &str| -> Result<Vec<f32>> {
                    match old.read_record(name, k).map_err(|e| encode(path, e))? {
                        netcdf3::DataVector::F32(values) => Ok(values),
                        _ => Err(encode(path, format!("{name} is not f32"))),
                    }
                };
                let (eta, u, v) = (record("eta")?, record("u")?, record("v")?);
                let time = match old.read_record("time", k).map_err(|e| encode(path, e))? {
                    netcdf3::DataVector::F64(t) => t[0],
                    _ => return Err(encode(path, "time is not f64")),
                };
                new.append_frame(time, [&eta, &u, &v])?;
            }
            crate::io::rename_into_place(&temp, path).map_err(|e| encode(path, e))
        })();
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        Self::open(path, header, frames)
    }

    /// Opens the file at `path` written for `header` to continue after its first `frames`
    /// frames.
    fn open(path: &Path, header: &Header, frames: u64) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| encode(path, e))?;
        let cells = header.lat.len() * header.lon.len();
        let sizes = fixed_sizes(header);
        let fixed: u64 = sizes.iter().map(|(_, s)| s).sum();
        let record_size = 8 + 3 * 4 * cells as u64 * header.frames as u64;
        // The header is whatever precedes the fixed data; the records follow it.
        let records_start = header_size(path, header)? + fixed;
        let length = file.metadata().map_err(|e| encode(path, e))?.len();
        if length < records_start + frames * record_size {
            return Err(crate::invalid!(
                "the NetCDF file {} holds fewer than the {frames} frames to continue from: it was changed since",
                path.display()
            ));
        }
        let mut at = records_start - fixed;
        let offsets = sizes
            .into_iter()
            .map(|(name, size)| {
                let offset = at;
                at += size;
                (name, offset)
            })
            .collect();
        let mut netcdf = Self {
            path: path.to_path_buf(),
            file,
            offsets,
            records_start,
            record_size,
            frames,
            cells,
            with_frames: header.frames,
        };
        netcdf.count_frames()?;
        Ok(netcdf)
    }

    /// Appends the frame at `time` (seconds after the impact): `eta`, `u`, `v` at the centres,
    /// when the file takes frames; then counts it.
    pub fn append_frame(&mut self, time: f64, fields: [&[f32]; 3]) -> Result<()> {
        if !self.with_frames {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(self.record_size as usize);
        bytes.extend(time.to_be_bytes());
        for field in fields {
            assert_eq!(field.len(), self.cells);
            bytes.extend(field.iter().flat_map(|v| v.to_be_bytes()));
        }
        let at = self.records_start + self.frames * self.record_size;
        self.write_at(at, &bytes)?;
        self.frames += 1;
        self.count_frames()
    }

    /// Writes the maps and the gauges' series as they stand.
    pub fn update(&mut self, maps: &Maps) -> Result<()> {
        let field = |f: &GlobalField| f.data.iter().flat_map(|v| v.to_be_bytes()).collect();
        let samples = (self.fixed_len("sample_time") / 8) as usize;
        let series = |pick: fn(&(f32, f32, f32)) -> f32| -> Vec<u8> {
            maps.series
                .iter()
                .flat_map(|s| (0..samples).map(move |k| s.get(k).map_or(f32::NAN, pick)))
                .flat_map(f32::to_be_bytes)
                .collect()
        };
        let times: Vec<u8> = (0..samples)
            .flat_map(|k| {
                maps.sample_times
                    .get(k)
                    .copied()
                    .unwrap_or(f64::NAN)
                    .to_be_bytes()
            })
            .collect();
        let writes: [(&str, Vec<u8>); 7] = [
            ("max_eta", field(maps.max_eta)),
            ("max_speed", field(maps.max_speed)),
            ("arrival_time", field(maps.arrival)),
            ("sample_time", times),
            ("gauge_eta", series(|s| s.0)),
            ("gauge_u", series(|s| s.1)),
            ("gauge_v", series(|s| s.2)),
        ];
        for (name, bytes) in writes {
            let offset = self.offset(name);
            self.write_at(offset, &bytes)?;
        }
        self.file.sync_data().map_err(|e| encode(&self.path, e))
    }

    fn offset(&self, name: &str) -> u64 {
        self.offsets
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a fixed variable")
            .1
    }

    fn fixed_len(&self, name: &str) -> u64 {
        let k = self
            .offsets
            .iter()
            .position(|(n, _)| *n == name)
            .expect("a fixed variable");
        let end = self
            .offsets
            .get(k + 1)
            .map_or(self.records_start, |(_, o)| *o);
        end - self.offsets[k].1
    }

    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let fail = |e| encode(&self.path, e);
        self.file.seek(SeekFrom::Start(at)).map_err(fail)?;
        self.file.write_all(bytes).map_err(fail)
    }

    /// Makes the header count the frames written (its `numrecs`, after the magic number), once
    /// they are on disk.
    fn count_frames(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| encode(&self.path, e))?;
        let frames = self.frames as u32;
        self.write_at(4, &frames.to_be_bytes())?;
        self.file.sync_data().map_err(|e| encode(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netcdf3::{DataVector, FileReader};

    fn header(depth: &GlobalField, frames: bool) -> Header<'_> {
        Header {
            lat: vec![-1.0, 0.0, 1.0],
            lon: vec![10.0, 20.0, 30.0, 40.0],
            depth,
            gauges: vec![
                GaugeHeader {
                    name: "a gauge".into(),
                    at: (0.0, 20.0),
                    depth: 4000.0,
                },
                GaugeHeader {
                    name: "b".into(),
                    at: (1.0, 30.0),
                    depth: 3000.0,
                },
            ],
            samples: 5,
            frames,
            attributes: vec![
                ("hump_height_m".into(), Attribute::Number(200.0)),
                ("kernel".into(), Attribute::Text("swe-c".into())),
            ],
        }
    }

    /// Frames go in one by one: the file reads after each with every frame so far, also when
    /// a frame's data was written but not yet counted (a run stopped mid-frame), and a
    /// reopened file continues after the frames asked for.
    #[test]
    fn the_file_reads_after_every_frame_and_continues_where_asked() {
        let dir = std::env::temp_dir().join(format!("wafer-emu-nc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.nc");
        let depth = GlobalField::from_fn(4, 3, |x, y| (x + 10 * y) as f32);
        let header = header(&depth, true);
        let frame = |k: usize| -> Vec<f32> { (0..12).map(|i| (100 * k + i) as f32).collect() };
        let mut file = TsunamiFile::create(&path, &header).unwrap();
        let read = |name: &str| FileReader::open(&path).unwrap().read_var(name).unwrap();
        for k in 0..3 {
            let values = frame(k);
            file.append_frame(k as f64 * 60.0, [&values, &values, &values])
                .unwrap();
            let DataVector::F32(eta) = read("eta") else {
                panic!()
            };
            assert_eq!(eta.len(), 12 * (k + 1));
            assert_eq!(eta[12 * k..], values[..]);
        }
        assert_eq!(read("time"), DataVector::F64(vec![0.0, 60.0, 120.0]));
        assert_eq!(read("depth"), DataVector::F32(depth.data.clone()));
        // A frame written but not counted is not there.
        let at = file.records_start + 3 * file.record_size;
        file.write_at(at, &[1u8; 20]).unwrap();
        let DataVector::F32(eta) = read("eta") else {
            panic!()
        };
        assert_eq!(eta.len(), 36);
        drop(file);
        let mut again = TsunamiFile::resume(&path, &header, 2).unwrap();
        assert_eq!(read("time"), DataVector::F64(vec![0.0, 60.0]));
        let values = frame(9);
        again
            .append_frame(90.0, [&values, &values, &values])
            .unwrap();
        assert_eq!(read("time"), DataVector::F64(vec![0.0, 60.0, 90.0]));
        let map = GlobalField::from_fn(4, 3, |x, _| x as f32);
        let series = vec![
            vec![(1.0, 2.0, 3.0)],
            vec![(4.0, 5.0, 6.0), (7.0, 8.0, 9.0)],
        ];
        again
            .update(&Maps {
                max_eta: &map,
                max_speed: &map,
                arrival: &map,
                series,
                sample_times: vec![0.0, 60.0],
            })
            .unwrap();
        assert_eq!(read("max_speed"), DataVector::F32(map.data.clone()));
        let DataVector::F32(eta) = read("gauge_eta") else {
            panic!()
        };
        assert_eq!((eta[0], eta[5], eta[6]), (1.0, 4.0, 7.0));
        assert!(eta[1].is_nan() && eta[7].is_nan());
        // More samples (a run resumed to more hours): the frames move to a file for them.
        let longer = Header {
            samples: 9,
            ..header
        };
        drop(again);
        TsunamiFile::resume(&path, &longer, 3).unwrap();
        assert_eq!(read("time"), DataVector::F64(vec![0.0, 60.0, 90.0]));
        let DataVector::F32(eta) = read("eta") else {
            panic!()
        };
        assert_eq!(eta[24..], frame(9)[..]);
        let DataVector::F64(times) = read("sample_time") else {
            panic!()
        };
        assert_eq!(times.len(), 9);
        let reader = FileReader::open(&path).unwrap();
        assert_eq!(
            reader.data_set().get_global_attr_f64("hump_height_m"),
            Some(&[200.0][..])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
