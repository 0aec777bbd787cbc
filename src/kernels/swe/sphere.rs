//! The globe both shallow-water kernels run on: a Mercator grid of cell centres (columns
//! uniform in longitude and periodic, rows uniform in Mercator `y = ln tan(pi/4 + lat/2)`
//! between two cut latitudes), the relief resampled to it, and which centres are water.

use std::f64::consts::PI;

use glam::UVec2;

use super::relief::Relief;
use super::{Bathymetry, EARTH_RADIUS};
use crate::field::grid_values;
use crate::render::{plain_number, ticks, Axes};
use crate::Result;

/// The Mercator grid: longitude of column `x` and latitude of centre row `y`, in radians.
#[derive(Clone, Copy, Debug)]
pub struct Mercator {
    pub nx: u32,
    pub ny: u32,
    y_south: f64,
    /// Row spacing in Mercator `y`.
    pub dy: f64,
}

impl Mercator {
    pub fn new(grid: UVec2, (south, north): (f64, f64)) -> Self {
        let y_south = mercator_y(south.to_radians());
        Self {
            nx: grid.x,
            ny: grid.y,
            y_south,
            dy: (mercator_y(north.to_radians()) - y_south) / grid.y as f64,
        }
    }

    /// Column spacing in radians of longitude.
    pub fn dlam(&self) -> f64 {
        2.0 * PI / self.nx as f64
    }

    /// Longitude of column `x` (fractional columns between centres).
    pub fn lon(&self, x: f64) -> f64 {
        -PI + (x + 0.5) * self.dlam()
    }

    /// Latitude of centre row `y` (`y + 0.5` rows above the south cut); `y + 0.5` is the row's
    /// north edge, `y - 0.5` its south edge.
    pub fn lat(&self, y: f64) -> f64 {
        2.0 * (self.y_south + (y + 0.5) * self.dy).exp().atan() - PI / 2.0
    }

    /// In degrees, each centre column's longitude and each centre row's latitude.
    pub fn axes_degrees(&self) -> (Vec<f64>, Vec<f64>) {
        let lons = (0..self.nx)
            .map(|x| self.lon(x as f64).to_degrees())
            .collect();
        let lats = (0..self.ny)
            .map(|y| self.lat(y as f64).to_degrees())
            .collect();
        (lons, lats)
    }

    /// The (fractional) column and row of the centre at `lat`, `lon` (radians).
    pub fn cell(&self, lat: f64, lon: f64) -> (f64, f64) {
        let x = (lon + PI).rem_euclid(2.0 * PI) / self.dlam() - 0.5;
        let y = (mercator_y(lat) - self.y_south) / self.dy - 0.5;
        (x, y)
    }

    /// Side of a cell of row `y` in metres along a parallel (`a cos(lat) dlam`); the
    /// meridional side is the same up to `dy / dlam`.
    pub fn cell_width(&self, y: f64) -> f64 {
        EARTH_RADIUS * self.lat(y).cos() * self.dlam()
    }
}

/// Mercator `y` of a latitude in radians.
fn mercator_y(lat: f64) -> f64 {
    (PI / 4.0 + lat / 2.0).tan().ln()
}

/// The grid, the relief on it and the water: what the shallow-water kernels, their pictures
/// and the tsunami share.
#[derive(Clone, Debug)]
pub struct Sphere {
    pub mercator: Mercator,
    /// Elevation of every centre in metres, positive up, row-major.
    elevation: Vec<f64>,
    /// Water centres, row-major: below sea level by at least the kernel's least depth, and
    /// not in the first or last row (the walls at the cut latitudes).
    wet: Vec<bool>,
}

impl Sphere {
    /// Resamples `bathymetry` onto the grid; centres at least `least_depth` metres below sea
    /// level (any depth for 0) between the walls are water.
    pub fn new(
        bathymetry: &Bathymetry,
        grid: UVec2,
        lat_range: (f64, f64),
        least_depth: f64,
    ) -> Result<Self> {
        let mercator = Mercator::new(grid, lat_range);
        let elevation = elevation(bathymetry, &mercator)?;
        let ny = grid.y;
        let wet = grid_values(grid.x, ny, |x, y| {
            let depth = -elevation[(y * grid.x + x) as usize];
            y > 0 && y + 1 < ny && depth > 0.0 && depth >= least_depth
        });
        Ok(Self {
            mercator,
            elevation,
            wet,
        })
    }

    pub fn grid(&self) -> UVec2 {
        UVec2::new(self.mercator.nx, self.mercator.ny)
    }

    fn index(&self, x: u32, y: u32) -> usize {
        let (nx, ny) = (self.mercator.nx, self.mercator.ny);
        ((y % ny) * nx + x % nx) as usize
    }

    /// Elevation of centre `(x, y)` (wrapped) in metres, positive up.
    pub fn elevation(&self, x: u32, y: u32) -> f64 {
        self.elevation[self.index(x, y)]
    }

    /// Depth of the sea at rest at centre `(x, y)` (wrapped) in metres; negative on land.
    pub fn depth(&self, x: u32, y: u32) -> f64 {
        -self.elevation(x, y)
    }

    /// Whether centre `(x, y)` (wrapped) is water.
    pub fn is_wet(&self, x: u32, y: u32) -> bool {
        self.wet[self.index(x, y)]
    }

    /// The deepest elevation of the grid (metres, positive up).
    pub fn deepest(&self) -> f64 {
        self.elevation.iter().cloned().fold(f64::INFINITY, f64::min)
    }

    /// Latitude and longitude (degrees) of centre `(x, y)`.
    pub fn lat_lon(&self, x: u32, y: u32) -> (f64, f64) {
        (
            self.mercator.lat(y as f64).to_degrees(),
            self.mercator.lon(x as f64).to_degrees(),
        )
    }

    /// The centre nearest to `lat`, `lon` (degrees), or `None` outside the cut latitudes.
    pub fn cell_at(&self, lat: f64, lon: f64) -> Option<UVec2> {
        let (x, y) = self.mercator.cell(lat.to_radians(), lon.to_radians());
        let (x, y) = (x.round().rem_euclid(self.mercator.nx as f64), y.round());
        (y >= 0.0 && y < self.mercator.ny as f64).then(|| UVec2::new(x as u32, y as u32))
    }

    /// The water centre nearest to `cell` within `radius` metres (the cell itself when wet),
    /// and its distance; `None` when there is none.
    pub fn nearest_wet(&self, cell: UVec2, radius: f64) -> Option<(UVec2, f64)> {
        let (lat, lon) = self.lat_lon(cell.x, cell.y);
        let here = (lat.to_radians(), lon.to_radians());
        let width = self.mercator.cell_width(cell.y as f64).max(1.0);
        let reach = (radius / width).ceil().min(self.mercator.nx as f64 / 2.0) as i64;
        let mut best: Option<(UVec2, f64)> = None;
        for dy in -reach..=reach {
            let y = cell.y as i64 + dy;
            if y < 0 || y >= self.mercator.ny as i64 {
                continue;
            }
            for dx in -reach..=reach {
                let x = (cell.x as i64 + dx).rem_euclid(self.mercator.nx as i64) as u32;
                let (y, candidate) = (y as u32, UVec2::new(x, y as u32));
                if !self.is_wet(x, y) {
                    continue;
                }
                let (la, lo) = self.lat_lon(x, y);
                let d = distance(here, (la.to_radians(), lo.to_radians()));
                if d <= radius && best.is_none_or(|(_, b)| d < b) {
                    best = Some((candidate, d));
                }
            }
        }
        best
    }

    /// Longitude and latitude ticks of the window of `size` centres from `origin` (columns
    /// wrap around the globe).
    pub fn axes(&self, origin: UVec2, size: UVec2) -> Axes {
        let nx = self.mercator.nx;
        let lon = |x: u32| self.lat_lon(x % nx, origin.y).1;
        let lat = |y: u32| self.lat_lon(origin.x, y).0;
        let west = lon(origin.x);
        let east = west + (size.x - 1) as f64 * 360.0 / nx as f64;
        let rows: Vec<f64> = (origin.y..origin.y + size.y).map(lat).collect();
        // Fraction of the height at latitude `v`, by interpolating between the rows.
        let y_at = |v: f64| match rows.len() {
            0 | 1 => 0.5,
            len => {
                let k = rows.partition_point(|&r| r < v).clamp(1, len - 1);
                let (a, b) = (rows[k - 1], rows[k]);
                ((k - 1) as f64 + (v - a) / (b - a) + 0.5) / len as f64
            }
        };
        let x_at = |v: f64| {
            ((v - west) / (east - west).max(1e-9) * (size.x - 1) as f64 + 0.5) / size.x as f64
        };
        let steps = [1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 90.0];
        let south_north = (rows[0], rows[rows.len() - 1]);
        Axes {
            x: ticks((west, east), x_at, |v| degrees(v, ("W", "E")), &steps),
            y: ticks(south_north, y_at, |v| degrees(v, ("S", "N")), &steps),
        }
    }

    /// Grey level of every land centre (lighter with height), `None` on water.
    pub fn land_shading(&self) -> Vec<Option<f32>> {
        let UVec2 { x: nx, y: ny } = self.grid();
        grid_values(nx, ny, |x, y| {
            let height = self.elevation(x, y);
            (!self.is_wet(x, y)).then_some((0.45 + 0.4 * (height / 4000.0).clamp(0.0, 1.0)) as f32)
        })
    }

    /// Area weight `cos^2(lat)` of centre row `y`.
    pub fn area_weight(&self, y: u32) -> f64 {
        self.mercator.lat(y as f64).cos().powi(2)
    }

    /// Area of a cell of row `y` in m^2: `a^2 cos^2(lat) dlam dy`.
    pub fn cell_area(&self, y: u32) -> f64 {
        EARTH_RADIUS.powi(2) * self.area_weight(y) * self.mercator.dlam() * self.mercator.dy
    }

    /// `f(x, y, lat, lon)` (radians) of every centre, computed in parallel with each row's
    /// latitude and each column's longitude computed once.
    pub fn field_of(&self, f: impl Fn(u32, u32, f64, f64) -> f64 + Sync) -> Vec<f32> {
        let radians = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(f64::to_radians).collect() };
        let (lons, lats) = self.mercator.axes_degrees();
        let (lons, lats) = (radians(lons), radians(lats));
        grid_values(self.mercator.nx, self.mercator.ny, |x, y| {
            f(x, y, lats[y as usize], lons[x as usize]) as f32
        })
    }

    /// The average of `f(lat, lon)` (radians) over centre `(x, y)`'s cell, weighted by
    /// area: `k x k` samples at the centres of a regular split of the cell in longitude and
    /// Mercator `y`, each weighted by `cos^2(lat)`.
    pub fn cell_average(&self, x: u32, y: u32, k: u32, f: impl Fn(f64, f64) -> f64) -> f64 {
        let (mut sum, mut weights) = (0.0, 0.0);
        for i in 0..k {
            let lat = self
                .mercator
                .lat(y as f64 + (i as f64 + 0.5) / k as f64 - 0.5);
            let weight = lat.cos().powi(2);
            for j in 0..k {
                let lon = self
                    .mercator
                    .lon(x as f64 + (j as f64 + 0.5) / k as f64 - 0.5);
                sum += weight * f(lat, lon);
                weights += weight;
            }
        }
        sum / weights
    }
}

/// A latitude or a longitude (wrapped to -180..180) as `30N` or `150W`.
fn degrees(v: f64, (negative, positive): (&str, &str)) -> String {
    let v = (v + 180.0).rem_euclid(360.0) - 180.0;
    let text = plain_number(v.abs(), 4);
    match v {
        v if v.abs() < 1e-9 || (v.abs() - 180.0).abs() < 1e-9 => text,
        v if v < 0.0 => format!("{text}{negative}"),
        _ => format!("{text}{positive}"),
    }
}

/// Elevation (m, positive up) of every centre, row-major.
fn elevation(bathymetry: &Bathymetry, m: &Mercator) -> Result<Vec<f64>> {
    let relief = match bathymetry {
        Bathymetry::Flat(depth) => return Ok(vec![-depth; (m.nx * m.ny) as usize]),
        Bathymetry::Etopo(grid) => Relief::builtin(*grid)?,
        Bathymetry::File(path) => Relief::from_descriptor(path)?,
    };
    let (lons, lats) = m.axes_degrees();
    Ok(grid_values(m.nx, m.ny, |x, y| {
        relief.elevation(lons[x as usize], lats[y as usize])
    }))
}

/// Great-circle distance (m) between two points given in radians.
pub fn distance((lat1, lon1): (f64, f64), (lat2, lon2): (f64, f64)) -> f64 {
    let h = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS * h.sqrt().min(1.0).asin()
}
