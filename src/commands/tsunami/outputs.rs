//! The tsunami's files: maps as `.npy` and PNG, gauges as CSV, the summary, the NetCDF
//! header, maps and attributes, and the flat ocean's exact arrivals.

use std::path::PathBuf;

use crate::field::GlobalField;
use crate::kernels::swe::{distance, Bathymetry, EARTH_RADIUS};
use crate::render::{Palette, Picture, Scale};
use crate::tsunami::exact::ExactHump;
use crate::tsunami::netcdf::{Attribute, GaugeHeader, Header, Maps};
use crate::tsunami::Tracker;
use crate::Result;

use super::pictures::View;
use super::{clock, TsunamiConfig};

/// The maps (maximum amplitude on a log scale from the arrival threshold, first arrival in
/// hours, maximum current speed) and the gauge tables.
pub(super) fn write_outputs(
    config: &TsunamiConfig,
    tracker: &Tracker,
    exact: Option<&[Option<f64>]>,
) -> Result<Vec<PathBuf>> {
    let swe = &*config.swe;
    let land = swe.sphere().land_shading();
    let finite_max = |f: &GlobalField| {
        f.data
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f32, |a, &b| a.max(b))
    };
    let hours = GlobalField {
        data: tracker.arrival.data.iter().map(|t| t / 3600.0).collect(),
        ..tracker.arrival.clone()
    };
    // Below the threshold the wave has not arrived: no colour.
    let reached = GlobalField {
        data: tracker
            .max_eta
            .data
            .iter()
            .map(|&v| if v > config.threshold { v } else { f32::NAN })
            .collect(),
        ..tracker.max_eta.clone()
    };
    let maps = [
        (
            "max_eta",
            "max |eta| (m)",
            reached,
            (
                config.threshold,
                finite_max(&tracker.max_eta).max(10.0 * config.threshold),
            ),
            Scale::Log,
        ),
        (
            "arrival_time",
            "first arrival (h)",
            hours.clone(),
            (0.0, finite_max(&hours).max(1e-3)),
            Scale::Linear,
        ),
        (
            "max_speed",
            "max current (m/s)",
            tracker.max_speed.clone(),
            (0.0, finite_max(&tracker.max_speed).max(1e-3)),
            Scale::Linear,
        ),
    ];
    let view = View::globe(swe, config.impact.lon);
    let mut files = vec![];
    for (name, label, values, range, scale) in maps {
        let picture = Picture {
            values,
            label: label.into(),
            palette: Palette::Sequential,
            range,
            land: Some(land.clone()),
            title: Some(format!(
                "{label}, {} after impact",
                clock(config.hours * 3600.0)
            )),
            axes: None,
            scale,
            marks: vec![],
        };
        let path = config.out.join(format!("{name}.png"));
        let picture = view.apply(swe, &picture, tracker);
        crate::io::write_atomic(&path, &crate::render::png_bytes(&picture)?)?;
        files.push(path);
    }
    for (name, bytes) in [
        ("gauges.csv", tracker.gauges_csv()?),
        ("gauge_summary.csv", tracker.summary_csv(exact)?),
    ] {
        let path = config.out.join(name);
        crate::io::write_atomic(&path, &bytes)?;
        files.push(path);
    }
    Ok(files)
}

/// On a flat ocean, each gauge's exact first arrival at the threshold: the linear waves of
/// the same hump on a sphere of the same depth without rotation ([`ExactHump`]), at the
/// great-circle distance of the gauge's cell, to a second. `None` over real relief.
pub fn exact_arrivals(config: &TsunamiConfig, tracker: &Tracker) -> Option<Vec<Option<f64>>> {
    let Bathymetry::Flat(depth) = config.swe.config().bathymetry else {
        return None;
    };
    let i = &config.impact;
    let degree = (60.0 * EARTH_RADIUS / i.radius()).max(2000.0) as usize;
    let hump = ExactHump::new(i.height, i.radius(), depth, degree);
    let centre = (i.lat.to_radians(), i.lon.to_radians());
    let arrivals = tracker
        .gauges
        .iter()
        .map(|g| {
            let at = (g.at.0.to_radians(), g.at.1.to_radians());
            hump.arrival(distance(centre, at), tracker.threshold as f64, 1.0)
        })
        .collect();
    Some(arrivals)
}

/// What the NetCDF file holds besides the frames and maps.
pub(super) fn netcdf_header<'a>(
    config: &TsunamiConfig,
    tracker: &Tracker,
    depth: &'a GlobalField,
    steps: u64,
) -> Header<'a> {
    let sphere = config.swe.sphere();
    let grid = sphere.grid();
    Header {
        lat: (0..grid.y).map(|y| sphere.lat_lon(0, y).0).collect(),
        lon: (0..grid.x).map(|x| sphere.lat_lon(x, 0).1).collect(),
        depth,
        gauges: tracker
            .gauges
            .iter()
            .map(|g| GaugeHeader {
                name: g.gauge.name.clone(),
                at: g.at,
                depth: g.depth,
            })
            .collect(),
        samples: config.samples(steps),
        frames: config.netcdf_frames,
        attributes: attributes(config),
    }
}

/// The tracker's maps and series for the NetCDF file.
pub(super) fn netcdf_maps(tracker: &Tracker) -> Maps<'_> {
    let series = tracker
        .gauges
        .iter()
        .map(|g| g.samples.iter().map(|s| (s.eta, s.u, s.v)).collect())
        .collect();
    let sample_times = tracker
        .gauges
        .first()
        .map_or(vec![], |g| g.samples.iter().map(|s| s.time).collect());
    Maps {
        max_eta: &tracker.max_eta,
        max_speed: &tracker.max_speed,
        arrival: &tracker.arrival,
        series,
        sample_times,
    }
}

/// Every parameter of the run, for the NetCDF file: numbers as numbers, their units in their
/// names.
pub(super) fn attributes(config: &TsunamiConfig) -> Vec<(String, Attribute)> {
    let i = &config.impact;
    let swe = &*config.swe;
    let c = swe.config();
    let number = |k: &str, v: f64| (k.to_string(), Attribute::Number(v));
    let text = |k: &str, v: String| (k.to_string(), Attribute::Text(v));
    vec![
        text("kernel", swe.spec().name.to_string()),
        number("impact_lat_deg", i.lat),
        number("impact_lon_deg", i.lon),
        number("hump_height_m", i.height),
        number("hump_area_km2", i.area_km2),
        number("hump_radius_m", i.radius()),
        number("resolution_deg", config.resolution),
        number("model_hours", config.hours),
        number("dt_s", swe.dt()),
        number("cfl", c.cfl),
        number("arrival_threshold_m", config.threshold as f64),
        number("sample_every_s", config.sample_seconds),
        number("frame_every_min", config.frame_minutes),
        number("least_depth_m", c.least_depth),
        number("lat_south_deg", c.lat_range.0),
        number("lat_north_deg", c.lat_range.1),
        number("coriolis", c.coriolis as u32 as f64),
        text("bathymetry", c.bathymetry.to_string()),
        text("cluster", config.problem.cluster.describe()),
        number("n", config.problem.cluster.wafer.n as f64),
    ]
}
