//! A tsunami run as NetCDF following the CF conventions (classic format with 64-bit offsets,
//! written by the pure-Rust `netcdf3` crate, so xarray and ncview read it with no C library
//! here): coordinates `time`, `lat`, `lon` with units, the surface elevation at every frame,
//! the maximum amplitude, the first-arrival time and the depth, and every parameter of the run
//! as global attributes. Land and never-reached points are NaN. Without frames there is no
//! `time` dimension and no `eta`.

use std::cell::RefCell;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;
use std::rc::Rc;

use netcdf3::{DataSet, FileWriter, Version};

use crate::field::GlobalField;
use crate::{Error, Result};

/// What the file holds.
pub struct Contents<'a> {
    /// Latitude of every row (south to north) and longitude of every column, degrees.
    pub lat: Vec<f64>,
    pub lon: Vec<f64>,
    /// Seconds after the impact of every frame.
    pub times: &'a [f64],
    /// `eta` of every frame, frame-major, rows south to north.
    pub eta: &'a [f32],
    pub max_eta: &'a GlobalField,
    pub arrival: &'a GlobalField,
    pub depth: &'a GlobalField,
    /// Global attributes (the run's parameters).
    pub attributes: Vec<(String, String)>,
}

/// A variable: name, dimensions, CF attributes.
struct Var {
    name: &'static str,
    dims: &'static [&'static str],
    attrs: &'static [(&'static str, &'static str)],
}

const VARS: [Var; 7] = [
    Var {
        name: "time",
        dims: &["time"],
        attrs: &[
            ("long_name", "time after the impact"),
            ("units", "s"),
            ("axis", "T"),
        ],
    },
    Var {
        name: "lat",
        dims: &["lat"],
        attrs: &[
            ("standard_name", "latitude"),
            ("units", "degrees_north"),
            ("axis", "Y"),
        ],
    },
    Var {
        name: "lon",
        dims: &["lon"],
        attrs: &[
            ("standard_name", "longitude"),
            ("units", "degrees_east"),
            ("axis", "X"),
        ],
    },
    Var {
        name: "eta",
        dims: &["time", "lat", "lon"],
        attrs: &[
            ("long_name", "surface elevation above the sea at rest"),
            ("units", "m"),
        ],
    },
    Var {
        name: "max_eta",
        dims: &["lat", "lon"],
        attrs: &[
            ("long_name", "largest |eta| over the run (at the samples)"),
            ("units", "m"),
        ],
    },
    Var {
        name: "arrival_time",
        dims: &["lat", "lon"],
        attrs: &[
            (
                "long_name",
                "first time |eta| exceeded the arrival threshold",
            ),
            ("units", "s"),
        ],
    },
    Var {
        name: "depth",
        dims: &["lat", "lon"],
        attrs: &[
            ("standard_name", "sea_floor_depth_below_sea_level"),
            ("units", "m"),
        ],
    },
];

fn encode(path: &Path, e: impl std::fmt::Debug) -> Error {
    Error::Encode(format!("the NetCDF file {}: {e:?}", path.display()))
}

/// Writes `contents` to `path` through a temporary file in the same folder.
pub fn write(path: &Path, contents: &Contents) -> Result<()> {
    let fail = |e: netcdf3::InvalidDataSet| encode(path, e);
    let mut set = DataSet::new();
    let framed = !contents.times.is_empty();
    if framed {
        set.add_fixed_dim("time", contents.times.len())
            .map_err(&fail)?;
    }
    set.add_fixed_dim("lat", contents.lat.len())
        .map_err(&fail)?;
    set.add_fixed_dim("lon", contents.lon.len())
        .map_err(&fail)?;
    for var in VARS.iter().filter(|v| framed || !v.dims.contains(&"time")) {
        match var.dims.len() {
            1 => set.add_var_f64(var.name, var.dims),
            _ => set.add_var_f32(var.name, var.dims),
        }
        .map_err(&fail)?;
        for (key, value) in var.attrs {
            set.add_var_attr_string(var.name, key, value)
                .map_err(&fail)?;
        }
    }
    set.add_global_attr_string("Conventions", "CF-1.8")
        .map_err(&fail)?;
    set.add_global_attr_string(
        "title",
        "asteroid tsunami, shallow-water equations on an emulated wafer-scale cluster",
    )
    .map_err(&fail)?;
    set.add_global_attr_string("source", format!("wafer-emu {}", env!("CARGO_PKG_VERSION")))
        .map_err(&fail)?;
    for (key, value) in &contents.attributes {
        set.add_global_attr_string(key, value).map_err(&fail)?;
    }
    let temp = crate::output::temp_path(path);
    let written = write_data(&temp, &set, contents).map_err(|e| encode(path, e));
    let placed = |()| crate::output::rename_into_place(&temp, path).map_err(|e| encode(path, e));
    match written.and_then(placed) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(e)
        }
    }
}

fn write_data(
    temp: &Path,
    set: &DataSet,
    c: &Contents,
) -> std::result::Result<(), netcdf3::error::WriteError> {
    let file = Buffered(Rc::new(RefCell::new(BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(temp)?,
    ))));
    let mut writer = FileWriter::open_seek_write(&temp.to_string_lossy(), Box::new(file.clone()))?;
    writer.set_def(set, Version::Offset64Bit, 0)?;
    if !c.times.is_empty() {
        writer.write_var_f64("time", c.times)?;
        writer.write_var_f32("eta", c.eta)?;
    }
    writer.write_var_f64("lat", &c.lat)?;
    writer.write_var_f64("lon", &c.lon)?;
    writer.write_var_f32("max_eta", &c.max_eta.data)?;
    writer.write_var_f32("arrival_time", &c.arrival.data)?;
    writer.write_var_f32("depth", &c.depth.data)?;
    writer.close()?;
    let mut file = file.0.borrow_mut();
    file.flush()?;
    Ok(file.get_ref().sync_all()?)
}

/// The temporary file, buffered (the writer writes value by value: a system call each
/// unbuffered) and shared, so that it can be flushed and synced once the writer is closed.
#[derive(Clone)]
struct Buffered(Rc<RefCell<BufWriter<std::fs::File>>>);

impl Write for Buffered {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

impl Seek for Buffered {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.0.borrow_mut().seek(to)
    }
}
