//! The asteroid tsunami of the paper's section 5.2.3 on the shallow-water kernel: the impact
//! scenario, the gauges, and the maps a tsunami modeller reads (maximum amplitude and first
//! arrival). `netcdf` writes them with the frames as a CF NetCDF file; `wafer-emu tsunami`
//! (`crate::commands::tsunami`) runs it all.

pub mod exact;
pub mod netcdf;

use std::f64::consts::PI;
use std::path::Path;

use glam::UVec2;

use crate::field::GlobalField;
use crate::kernels::swe::{ShallowWater, SweInit, GRAVITY, WATER_DENSITY};
use crate::{invalid, Result};

/// Joules in a megaton of TNT.
pub const MEGATON_TNT: f64 = 4.184e15;

/// The impact: a raised-cosine hump of water `eta = H/2 (1 + cos(pi r / R))` for `r < R` on an
/// ocean at rest, `R` from the area it covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// Centre latitude and longitude in degrees.
    pub lat: f64,
    pub lon: f64,
    /// Height `H` at the centre in metres.
    pub height: f64,
    /// Area covered, `pi R^2`, in km^2.
    pub area_km2: f64,
}

impl Impact {
    /// The paper's scenario: 200 m over 30,000 km^2 in the open Pacific, placed so that the
    /// wave reaches San Francisco Bay (Figure 11).
    pub const PAPER: Impact = Impact {
        lat: 35.0,
        lon: -140.0,
        height: 200.0,
        area_km2: 30_000.0,
    };

    /// Radius `R` in metres.
    pub fn radius(&self) -> f64 {
        (self.area_km2 * 1e6 / PI).sqrt()
    }

    /// The shallow-water initial state.
    pub fn init(&self) -> SweInit {
        SweInit::Hump {
            lat: self.lat,
            lon: self.lon,
            height: self.height,
            radius: self.radius(),
        }
    }

    /// Volume of the hump on a plane, `pi H R^2 (1/2 - 2/pi^2)`, in m^3.
    pub fn volume(&self) -> f64 {
        PI * self.height * self.radius().powi(2) * (0.5 - 2.0 / (PI * PI))
    }

    /// Potential energy of the hump on a plane, `1/2 rho g integral eta^2 dA
    /// = 1/2 rho g (H/2)^2 2 pi R^2 (3/4 - 4/pi^2)`, in J.
    pub fn potential_energy(&self) -> f64 {
        let integral = 2.0 * PI * self.radius().powi(2) * (0.75 - 4.0 / (PI * PI));
        0.5 * WATER_DENSITY * GRAVITY * (self.height / 2.0).powi(2) * integral
    }

    /// Checks the numbers; the place is checked against the grid by [`Impact::check_place`].
    pub fn validate(&self) -> Result<()> {
        if !(self.height > 0.0 && self.height <= 2000.0) {
            return Err(invalid!(
                "hump height {} m: allowed 0 < height <= 2000 m",
                self.height
            ));
        }
        if !(self.area_km2 > 0.0 && self.area_km2 <= 1e7) {
            return Err(invalid!(
                "hump area {} km^2: allowed 0 < area <= 10,000,000 km^2",
                self.area_km2
            ));
        }
        if !(-90.0..=90.0).contains(&self.lat) || !(-180.0..=360.0).contains(&self.lon) {
            return Err(invalid!(
                "impact at lat {}, lon {}: allowed -90..90 and -180..360 degrees",
                self.lat,
                self.lon
            ));
        }
        Ok(())
    }

    /// Refuses an impact outside the grid's latitudes or on land.
    pub fn check_place(&self, swe: &dyn ShallowWater, (south, north): (f64, f64)) -> Result<UVec2> {
        let at = swe.sphere().cell_at(self.lat, self.lon).ok_or_else(|| {
            invalid!(
                "the impact at lat {} lies outside the grid's latitudes {south}..{north}: move it or widen --lat-range",
                self.lat
            )
        })?;
        if !swe.sphere().is_wet(at.x, at.y) {
            return Err(invalid!(
                "the impact at lat {}, lon {} is on land at this resolution: choose a point in the ocean",
                self.lat,
                self.lon
            ));
        }
        Ok(at)
    }
}

/// A named point where the time series of `eta, u, v` is recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Gauge {
    pub name: String,
    pub lat: f64,
    pub lon: f64,
}

impl Gauge {
    fn new(name: &str, lat: f64, lon: f64) -> Self {
        Self {
            name: name.into(),
            lat,
            lon,
        }
    }

    /// The default gauges: deep water around the paper's impact and across the Pacific.
    pub fn defaults() -> Vec<Gauge> {
        vec![
            Gauge::new("deep water off California", 33.0, -127.0),
            Gauge::new("off San Francisco Bay", 37.5, -124.0),
            Gauge::new("off Honolulu", 20.0, -158.5),
            Gauge::new("equator below the impact", 0.0, -140.0),
            Gauge::new("off Japan", 34.0, 144.0),
        ]
    }

    /// Reads `name, lat, lon` lines (a first line of three fields whose latitude and longitude
    /// are not numbers is a header, skipped); errors name the file and the line.
    pub fn read_csv(path: &Path) -> Result<Vec<Gauge>> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid!("cannot read gauges file {}: {e}", path.display()))?;
        let mut gauges = vec![];
        for (k, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            // A header names all three columns (`name,lat,lon`): no number where one belongs.
            let header = k == 0
                && fields.len() == 3
                && fields[1..].iter().all(|f| f.parse::<f64>().is_err());
            if line.trim().is_empty() || header {
                continue;
            }
            let bad = || {
                invalid!(
                    "gauges file {} line {}: '{line}' is not NAME, LAT, LON with -90 <= LAT <= 90",
                    path.display(),
                    k + 1
                )
            };
            let [name, lat, lon] = fields[..] else {
                return Err(bad());
            };
            let (lat, lon) = (
                lat.parse::<f64>().map_err(|_| bad())?,
                lon.parse::<f64>().map_err(|_| bad())?,
            );
            if !(-90.0..=90.0).contains(&lat) || !lon.is_finite() {
                return Err(bad());
            }
            gauges.push(Gauge::new(name, lat, lon));
        }
        Ok(gauges)
    }
}

/// One sample of a gauge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Seconds after the impact.
    pub time: f64,
    pub eta: f32,
    pub u: f32,
    pub v: f32,
}

/// A gauge placed on the grid, with its record.
#[derive(Clone, Debug)]
pub struct GaugeRecord {
    pub gauge: Gauge,
    pub cell: UVec2,
    /// Latitude and longitude (degrees) of the cell's centre.
    pub at: (f64, f64),
    /// How far (m) the gauge was moved to reach water; 0 where it lay on a wet cell.
    pub moved: f64,
    /// Water depth at rest at the cell (m).
    pub depth: f64,
    pub samples: Vec<Sample>,
}

impl GaugeRecord {
    /// First time `|eta|` exceeded `threshold`.
    pub fn arrival(&self, threshold: f32) -> Option<f64> {
        self.samples
            .iter()
            .find(|s| s.eta.abs() > threshold)
            .map(|s| s.time)
    }

    /// Largest `|eta|`.
    pub fn max_amplitude(&self) -> f32 {
        self.samples.iter().map(|s| s.eta.abs()).fold(0.0, f32::max)
    }
}

/// What a run tracks at every sample: the maximum amplitude, maximum speed and first-arrival
/// maps and the gauges.
#[derive(Clone, Debug)]
pub struct Tracker {
    /// `|eta|` above this counts as arrived (m).
    pub threshold: f32,
    /// Largest `|eta|` per wet centre (NaN on land).
    pub max_eta: GlobalField,
    /// Largest speed `|(u, v)|` at the centres per wet centre (NaN on land).
    pub max_speed: GlobalField,
    /// First time `|eta| > threshold` in seconds (NaN where it never did or on land).
    pub arrival: GlobalField,
    pub gauges: Vec<GaugeRecord>,
}

impl Tracker {
    /// Places the gauges on wet centres: a gauge whose centre is land moves to the nearest
    /// water within `radius` metres (by default two cells at its latitude; a note says where
    /// it went); one with none, or outside the grid's latitudes, is an error naming it.
    /// Returns the notes.
    pub fn new(
        swe: &dyn ShallowWater,
        gauges: &[Gauge],
        threshold: f32,
        radius: Option<f64>,
    ) -> Result<(Self, Vec<String>)> {
        let sphere = swe.sphere();
        let UVec2 { x: nx, y: ny } = sphere.grid();
        let land = |x, y| if sphere.is_wet(x, y) { 0.0 } else { f32::NAN };
        let mut notes = vec![];
        let mut records = vec![];
        for gauge in gauges {
            let cell = sphere.cell_at(gauge.lat, gauge.lon).ok_or_else(|| {
                invalid!(
                    "gauge '{}' at lat {} lies outside the grid's latitudes: move it or widen --lat-range",
                    gauge.name,
                    gauge.lat
                )
            })?;
            let radius = radius.unwrap_or(2.0 * sphere.mercator.cell_width(cell.y as f64));
            let (cell, moved) = sphere.nearest_wet(cell, radius).ok_or_else(|| {
                invalid!(
                    "gauge '{}' at lat {}, lon {} is on land at this resolution and no water lies within {:.0} km: move it or raise --gauge-radius",
                    gauge.name,
                    gauge.lat,
                    gauge.lon,
                    radius / 1e3
                )
            })?;
            let at = sphere.lat_lon(cell.x, cell.y);
            if moved > 0.0 {
                notes.push(format!(
                    "note: gauge '{}' at lat {}, lon {} is on land at this resolution: moved {:.1} km to the water at lat {:.3}, lon {:.3}",
                    gauge.name,
                    gauge.lat,
                    gauge.lon,
                    moved / 1e3,
                    at.0,
                    at.1
                ));
            }
            records.push(GaugeRecord {
                gauge: gauge.clone(),
                cell,
                at,
                moved,
                depth: sphere.depth(cell.x, cell.y),
                samples: vec![],
            });
        }
        let tracker = Self {
            threshold,
            max_eta: GlobalField::from_fn(nx, ny, land),
            max_speed: GlobalField::from_fn(nx, ny, land),
            arrival: GlobalField::from_fn(nx, ny, |x, y| land(x, y) + f32::NAN),
            gauges: records,
        };
        Ok((tracker, notes))
    }

    /// Takes in `eta, u, v` at the centres at `time` seconds after the impact.
    pub fn sample(&mut self, time: f64, [eta, u, v]: &[GlobalField; 3]) {
        use rayon::prelude::*;
        let threshold = self.threshold;
        self.max_eta
            .data
            .par_iter_mut()
            .zip(self.max_speed.data.par_iter_mut())
            .zip(self.arrival.data.par_iter_mut())
            .enumerate()
            .filter(|(_, ((max, _), _))| !max.is_nan())
            .for_each(|(k, ((max, fastest), arrival))| {
                let size = eta.data[k].abs();
                *max = max.max(size);
                let (uu, vv) = (u.data[k], v.data[k]);
                *fastest = fastest.max((uu * uu + vv * vv).sqrt());
                if size > threshold && arrival.is_nan() {
                    *arrival = time as f32;
                }
            });
        for record in &mut self.gauges {
            let UVec2 { x, y } = record.cell;
            record.samples.push(Sample {
                time,
                eta: eta.at(x, y),
                u: u.at(x, y),
                v: v.at(x, y),
            });
        }
    }

    /// The tracker as checkpoint files: the maps, and every gauge's samples as the bits of
    /// their values (exact, NaN included).
    pub fn checkpoint_files(&self) -> Vec<(&'static str, Vec<u8>)> {
        let samples: Vec<Vec<[u64; 4]>> = self
            .gauges
            .iter()
            .map(|g| {
                g.samples
                    .iter()
                    .map(|s| {
                        let bits = |v: f32| v.to_bits() as u64;
                        [s.time.to_bits(), bits(s.eta), bits(s.u), bits(s.v)]
                    })
                    .collect()
            })
            .collect();
        vec![
            ("max_eta.npy", crate::io::field_npy(&self.max_eta)),
            ("max_speed.npy", crate::io::field_npy(&self.max_speed)),
            ("arrival.npy", crate::io::field_npy(&self.arrival)),
            (
                "gauge_samples.json",
                serde_json::to_vec(&samples).expect("plain numbers"),
            ),
        ]
    }

    /// Takes the maps and samples back from the checkpoint folder `dir`
    /// ([`Tracker::checkpoint_files`]); its gauges must be this tracker's.
    pub fn restore(&mut self, dir: &Path) -> Result<()> {
        let max_eta = crate::io::read_field_npy(&dir.join("max_eta.npy"))?;
        let max_speed = crate::io::read_field_npy(&dir.join("max_speed.npy"))?;
        let arrival = crate::io::read_field_npy(&dir.join("arrival.npy"))?;
        let path = dir.join("gauge_samples.json");
        let text = crate::io::read_bytes(&path)?;
        let samples: Vec<Vec<[u64; 4]>> =
            serde_json::from_slice(&text).map_err(|e| invalid!("{}: {e}", path.display()))?;
        let same_grid = |f: &GlobalField| (f.nx, f.ny) == (self.max_eta.nx, self.max_eta.ny);
        let maps = [&max_eta, &max_speed, &arrival];
        if !maps.into_iter().all(same_grid) || samples.len() != self.gauges.len() {
            return Err(invalid!(
                "the checkpoint in {} does not fit this run's grid or gauges",
                dir.display()
            ));
        }
        (self.max_eta, self.max_speed, self.arrival) = (max_eta, max_speed, arrival);
        for (gauge, samples) in self.gauges.iter_mut().zip(samples) {
            let value = |bits: u64| f32::from_bits(bits as u32);
            gauge.samples = samples
                .into_iter()
                .map(|[time, eta, u, v]| Sample {
                    time: f64::from_bits(time),
                    eta: value(eta),
                    u: value(u),
                    v: value(v),
                })
                .collect();
        }
        Ok(())
    }

    /// The gauges' time series as CSV, one row per gauge and sample:
    /// `gauge, time_s, eta_m, u_m_s, v_m_s`.
    pub fn gauges_csv(&self) -> Result<Vec<u8>> {
        let mut writer = csv::Writer::from_writer(vec![]);
        writer
            .write_record(["gauge", "time_s", "eta_m", "u_m_s", "v_m_s"])
            .map_err(csv_error)?;
        for r in &self.gauges {
            for s in &r.samples {
                let row = [
                    s.time.to_string(),
                    s.eta.to_string(),
                    s.u.to_string(),
                    s.v.to_string(),
                ];
                writer
                    .write_record(std::iter::once(r.gauge.name.clone()).chain(row))
                    .map_err(csv_error)?;
            }
        }
        writer
            .into_inner()
            .map_err(|e| csv_error(e.into_error().into()))
    }

    /// One row per gauge: where it was asked for and where it records, its depth, first
    /// arrival and maximum amplitude, and where given (a flat ocean) the exact first arrival,
    /// as CSV.
    pub fn summary_csv(&self, exact: Option<&[Option<f64>]>) -> Result<Vec<u8>> {
        let mut writer = csv::Writer::from_writer(vec![]);
        writer
            .write_record([
                "gauge",
                "lat",
                "lon",
                "cell_lat",
                "cell_lon",
                "moved_km",
                "depth_m",
                "arrival_s",
                "arrival_h",
                "max_amplitude_m",
                "exact_arrival_s",
            ])
            .map_err(csv_error)?;
        for (k, r) in self.gauges.iter().enumerate() {
            let arrival = r.arrival(self.threshold);
            let exact = exact.and_then(|e| e[k]);
            writer
                .write_record([
                    r.gauge.name.clone(),
                    r.gauge.lat.to_string(),
                    r.gauge.lon.to_string(),
                    format!("{:.4}", r.at.0),
                    format!("{:.4}", r.at.1),
                    format!("{:.1}", r.moved / 1e3),
                    format!("{:.0}", r.depth),
                    arrival.map_or("".into(), |t| format!("{t:.0}")),
                    arrival.map_or("".into(), |t| format!("{:.3}", t / 3600.0)),
                    r.max_amplitude().to_string(),
                    exact.map_or("".into(), |t| format!("{t:.0}")),
                ])
                .map_err(csv_error)?;
        }
        writer
            .into_inner()
            .map_err(|e| csv_error(e.into_error().into()))
    }
}

fn csv_error(e: csv::Error) -> crate::Error {
    crate::Error::Encode(format!("a gauges table: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gauges from `text` as a file; the error otherwise.
    fn read(name: &str, text: &str) -> std::result::Result<Vec<(String, f64, f64)>, String> {
        let path =
            std::env::temp_dir().join(format!("wafer-emu-gauges-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let gauges = Gauge::read_csv(&path);
        std::fs::remove_file(&path).unwrap();
        gauges
            .map(|g| g.iter().map(|g| (g.name.clone(), g.lat, g.lon)).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_gauges_file_may_start_with_a_header_and_bad_lines_are_named() {
        let tokyo = vec![("Tokyo".to_string(), 35.6, 139.8)];
        assert_eq!(
            read("header", "name, lat, lon\nTokyo, 35.6, 139.8\n").unwrap(),
            tokyo
        );
        assert_eq!(read("plain", "\nTokyo,35.6,139.8").unwrap(), tokyo);
        for (case, text) in [
            ("number", "Tokyo,abc,139.8\n"),
            ("comma", "\"Tok,yo\",35.6,139.8\n"),
            ("lat", "name,lat,lon\nTokyo,95,139.8\n"),
        ] {
            let error = read(case, text).unwrap_err();
            assert!(error.contains("is not NAME, LAT, LON"), "{case}: {error}");
        }
    }
}
