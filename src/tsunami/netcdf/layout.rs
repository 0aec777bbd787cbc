//! The file's fixed layout: the header as `netcdf3` encodes it, its size, the fixed
//! variables written in place, and the buffered writer the encoder writes through.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use netcdf3::{DataSet, FileWriter, Version};

use crate::field::GlobalField;
use crate::Result;

use super::{encode, Attribute, GaugeHeader, Header, Kind, RECORD_VARS, VARS};

/// The data set of `header` with no frames yet.
pub(super) fn data_set(header: &Header) -> std::result::Result<DataSet, netcdf3::InvalidDataSet> {
    let mut set = DataSet::new();
    set.set_unlimited_dim("time", 0)?;
    set.add_fixed_dim("lat", header.lat.len())?;
    set.add_fixed_dim("lon", header.lon.len())?;
    set.add_fixed_dim("gauge", header.gauges.len().max(1))?;
    set.add_fixed_dim("sample", header.samples.max(1))?;
    set.add_fixed_dim("name_length", name_length(header))?;
    for var in VARS
        .iter()
        .filter(|v| header.frames || !v.dims.contains(&"time"))
    {
        match var.kind {
            Kind::F32 => set.add_var_f32(var.name, var.dims),
            Kind::F64 => set.add_var_f64(var.name, var.dims),
            Kind::Char => set.add_var_u8(var.name, var.dims),
        }?;
        for (key, value) in var.attrs {
            set.add_var_attr_string(var.name, key, value)?;
        }
    }
    set.add_global_attr_string("Conventions", "CF-1.8")?;
    set.add_global_attr_string(
        "title",
        "asteroid tsunami, shallow-water equations on an emulated wafer-scale cluster",
    )?;
    set.add_global_attr_string("source", format!("wafer-emu {}", env!("CARGO_PKG_VERSION")))?;
    set.add_global_attr_string(
        "comment",
        "the impact is at the time units' reference time; eta is the surface above the sea at rest",
    )?;
    for (key, value) in &header.attributes {
        match value {
            Attribute::Number(v) => set.add_global_attr_f64(key, vec![*v])?,
            Attribute::Text(t) => set.add_global_attr_string(key, t)?,
        }
    }
    Ok(set)
}

/// Longest gauge name in bytes (at least 1).
pub(super) fn name_length(header: &Header) -> usize {
    header
        .gauges
        .iter()
        .map(|g| g.name.len())
        .max()
        .unwrap_or(0)
        .max(1)
}

/// Bytes of each fixed variable's data, in file order (4-byte aligned).
pub(super) fn fixed_sizes(header: &Header) -> Vec<(&'static str, u64)> {
    let cells = (header.lat.len() * header.lon.len()) as u64;
    let (gauges, samples) = (
        header.gauges.len().max(1) as u64,
        header.samples.max(1) as u64,
    );
    let pad = |bytes: u64| bytes.div_ceil(4) * 4;
    VARS[..VARS.len() - RECORD_VARS]
        .iter()
        .map(|var| {
            let size = match var.name {
                "lat" => 8 * header.lat.len() as u64,
                "lon" => 8 * header.lon.len() as u64,
                "gauge_name" => pad(gauges * name_length(header) as u64),
                "gauge_lat" | "gauge_lon" => 8 * gauges,
                "gauge_depth" => 4 * gauges,
                "sample_time" => 8 * samples,
                "gauge_eta" | "gauge_u" | "gauge_v" => 4 * gauges * samples,
                _ => 4 * cells,
            };
            (var.name, size)
        })
        .collect()
}

/// The size of the header the `netcdf3` crate writes for `header`: the length of a file of
/// the same variables and attributes over one point, one sample and no frames, less its fixed
/// data (a header holds each dimension's length in a word of its own, so its size does not
/// depend on them).
pub(super) fn header_size(path: &Path, header: &Header) -> Result<u64> {
    let point = GlobalField::zeros(1, 1);
    let small = Header {
        lat: vec![0.0],
        lon: vec![0.0],
        depth: &point,
        gauges: header.gauges.clone(),
        samples: 1,
        frames: header.frames,
        attributes: header.attributes.clone(),
    };
    let set = data_set(&small).map_err(|e| encode(path, e))?;
    let probe = crate::io::temp_path(&path.with_extension("header"));
    let written =
        write_fixed(&probe, &set, &small).and_then(|()| Ok(std::fs::metadata(&probe)?.len()));
    let _ = std::fs::remove_file(&probe);
    let length = written.map_err(|e| encode(path, e))?;
    let fixed: u64 = fixed_sizes(&small).iter().map(|(_, s)| s).sum();
    Ok(length - fixed)
}

/// Writes the header and every fixed variable of `header` to `temp`.
pub(super) fn write_fixed(
    temp: &Path,
    set: &DataSet,
    header: &Header,
) -> std::result::Result<(), netcdf3::error::WriteError> {
    let file = BufWriter::with_capacity(1 << 20, File::create(temp)?);
    let buffered = Buffered(std::rc::Rc::new(std::cell::RefCell::new(file)));
    let mut writer = FileWriter::open_seek_write(&temp.to_string_lossy(), Box::new(buffered))?;
    writer.set_def(set, Version::Offset64Bit, 0)?;
    let cells = header.lat.len() * header.lon.len();
    let (gauges, samples) = (header.gauges.len().max(1), header.samples.max(1));
    let width = name_length(header);
    let mut names = vec![0u8; gauges * width];
    for (k, g) in header.gauges.iter().enumerate() {
        names[k * width..k * width + g.name.len()].copy_from_slice(g.name.as_bytes());
    }
    let gauge = |f: fn(&GaugeHeader) -> f64| -> Vec<f64> {
        let mut values: Vec<f64> = header.gauges.iter().map(f).collect();
        values.resize(gauges, f64::NAN);
        values
    };
    writer.write_var_f64("lat", &header.lat)?;
    writer.write_var_f64("lon", &header.lon)?;
    writer.write_var_f32("depth", &header.depth.data)?;
    for name in ["max_eta", "max_speed", "arrival_time"] {
        writer.write_var_f32(name, &vec![f32::NAN; cells])?;
    }
    writer.write_var_u8("gauge_name", &names)?;
    writer.write_var_f64("gauge_lat", &gauge(|g| g.at.0))?;
    writer.write_var_f64("gauge_lon", &gauge(|g| g.at.1))?;
    let depths: Vec<f32> = gauge(|g| g.depth).into_iter().map(|d| d as f32).collect();
    writer.write_var_f32("gauge_depth", &depths)?;
    writer.write_var_f64("sample_time", &vec![f64::NAN; samples])?;
    for name in ["gauge_eta", "gauge_u", "gauge_v"] {
        writer.write_var_f32(name, &vec![f32::NAN; gauges * samples])?;
    }
    writer.close()?;
    File::open(temp)?.sync_all()?;
    Ok(())
}

/// The temporary file behind the writer, buffered (the writer writes value by value) and
/// flushed when dropped with the writer.
pub(super) struct Buffered(pub(super) std::rc::Rc<std::cell::RefCell<BufWriter<File>>>);

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

impl Drop for Buffered {
    fn drop(&mut self) {
        let _ = self.0.borrow_mut().flush();
    }
}
