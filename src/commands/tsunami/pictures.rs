//! The tsunami's pictures: frames of the globe and the region, and the maps, each in its
//! view (centred on the impact, or cut to a region) with coastlines and gauges.

use std::path::PathBuf;

use glam::UVec2;

use crate::field::GlobalField;
use crate::kernels::swe::ShallowWater;
use crate::render::{Mark, Picture};
use crate::tsunami::Tracker;
use crate::{invalid, Result};

use super::{clock, Region, TsunamiConfig};

/// `field` over water, NaN on land.
pub(super) fn water_only(swe: &dyn ShallowWater, field: &GlobalField) -> GlobalField {
    let sphere = swe.sphere();
    GlobalField::from_fn(field.nx, field.ny, |x, y| match sphere.is_wet(x, y) {
        true => field.at(x, y),
        false => f32::NAN,
    })
}

/// A window of the grid: first column (wrapping), columns, first row, rows.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    x0: u32,
    width: u32,
    y0: u32,
    height: u32,
}

impl View {
    /// The whole globe with the impact's meridian in the middle (for the paper's impact, the
    /// whole Pacific from Asia to the Americas).
    pub(super) fn globe(swe: &dyn ShallowWater, lon: f64) -> Self {
        let grid = swe.grid();
        let centre = swe.sphere().cell_at(0.0, lon).map_or(0, |c| c.x);
        Self {
            x0: (centre + grid.x / 2 + 1) % grid.x,
            width: grid.x,
            y0: 0,
            height: grid.y,
        }
    }

    pub(super) fn of(swe: &dyn ShallowWater, r: &Region) -> Result<Self> {
        let grid = swe.grid();
        let corner = |lat: f64, lon: f64| {
            let lat = lat.clamp(-89.0, 89.0);
            swe.sphere().cell_at(lat, lon)
        };
        let (Some(sw), Some(ne)) = (corner(r.south, r.west), corner(r.north, r.east)) else {
            let name = match r.name.as_str() {
                "region" => String::new(),
                name => format!(" {name}"),
            };
            return Err(invalid!(
                "--region{name} ({}..{} N) lies outside the grid's latitudes",
                r.south,
                r.north
            ));
        };
        Ok(Self {
            x0: sw.x,
            width: ((ne.x + grid.x - sw.x) % grid.x + 1).min(grid.x),
            y0: sw.y,
            height: ne.y.saturating_sub(sw.y) + 1,
        })
    }

    pub(super) fn cut<T: Copy>(&self, nx: u32, data: &[T]) -> Vec<T> {
        (self.y0..self.y0 + self.height)
            .flat_map(|y| (0..self.width).map(move |i| (y, (self.x0 + i) % nx)))
            .map(|(y, x)| data[(y * nx + x) as usize])
            .collect()
    }

    /// Where cell `cell` lies in the view, as fractions of its width and height (outside
    /// 0..1 where it is not in it).
    pub(super) fn place(&self, nx: u32, cell: UVec2) -> (f64, f64) {
        let column = (cell.x + nx - self.x0) % nx;
        (
            (column as f64 + 0.5) / self.width as f64,
            (cell.y as f64 - self.y0 as f64 + 0.5) / self.height as f64,
        )
    }

    /// The picture's part in this view, with longitude and latitude ticks and the gauges.
    pub(super) fn apply(&self, swe: &dyn ShallowWater, p: &Picture, tracker: &Tracker) -> Picture {
        let nx = p.values.nx;
        let values = GlobalField {
            nx: self.width,
            ny: self.height,
            data: self.cut(nx, &p.values.data),
        };
        let land = p.land.as_ref().map(|l| self.cut(nx, l));
        let marks = tracker
            .gauges
            .iter()
            .map(|g| Mark {
                at: self.place(nx, g.cell),
                label: g.gauge.name.clone(),
            })
            .collect();
        Picture {
            values,
            land,
            axes: Some(swe.sphere().axes(
                UVec2::new(self.x0, self.y0),
                UVec2::new(self.width, self.height),
            )),
            marks,
            ..p.clone()
        }
    }
}

/// `t00060min` for a whole minute, `t00060min18s` otherwise (frames less than a minute
/// apart, or the last step's frame, keep names of their own).
pub(super) fn frame_stamp(minute: f64) -> String {
    let seconds = (minute * 60.0).round() as u64;
    match seconds % 60 {
        0 => format!("t{:05}min", seconds / 60),
        s => format!("t{:05}min{s:02}s", seconds / 60),
    }
}

/// The frames' colour range: the one asked for, or the 99.5th percentile of `|eta|` over the
/// water the wave has reached (at least ten times the arrival threshold).
pub(super) fn eta_range(config: &TsunamiConfig, eta: &GlobalField) -> f32 {
    if let Some(range) = config.eta_range {
        return range;
    }
    let mut sizes: Vec<f32> = eta
        .data
        .iter()
        .map(|v| v.abs())
        .filter(|v| *v > config.threshold)
        .collect();
    sizes.sort_by(f32::total_cmp);
    let percentile = sizes.get(sizes.len() * 995 / 1000).copied().unwrap_or(0.0);
    percentile.max(10.0 * config.threshold)
}

/// The global and region frames of `eta` (NaN on land) at `time` seconds, named by `minute`.
pub(super) fn write_frames(
    config: &TsunamiConfig,
    eta: &GlobalField,
    tracker: &Tracker,
    (time, minute): (f64, f64),
) -> Result<Vec<PathBuf>> {
    let swe = &*config.swe;
    let mut picture = swe.picture(2, eta);
    let range = eta_range(config, eta);
    picture.range = (-range, range);
    picture.title = Some(format!("{} after impact", clock(time)));
    let stamp = frame_stamp(minute);
    let mut views = vec![(
        "global".to_string(),
        View::globe(swe, config.impact.lon).apply(swe, &picture, tracker),
    )];
    if let Some(region) = &config.region {
        let view = View::of(swe, region)?;
        views.push((region.name.clone(), view.apply(swe, &picture, tracker)));
    }
    let mut files = vec![];
    for (name, picture) in views {
        let path = config.out.join(format!("eta_{name}_{stamp}.png"));
        crate::io::write_atomic(&path, &crate::render::png_bytes(&picture)?)?;
        files.push(path);
    }
    Ok(files)
}
