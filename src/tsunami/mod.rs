//! The asteroid tsunami of the paper's section 5.2.3 on the shallow-water kernel: the impact
//! scenario, the gauges, and the maps a tsunami modeller reads (maximum amplitude and first
//! arrival). `netcdf` writes them with the frames as a CF NetCDF file; `wafer-emu tsunami`
//! (`crate::commands::tsunami`) runs it all.

pub mod netcdf;

use std::f64::consts::PI;
use std::path::Path;

use glam::UVec2;

use crate::field::GlobalField;
use crate::kernels::swe::{Swe, SweInit, GRAVITY, WATER_DENSITY};
use crate::kernels::Kernel;
use crate::{invalid, output, Result};

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
    pub fn check_place(&self, swe: &Swe, (south, north): (f64, f64)) -> Result<UVec2> {
        let at = swe.cell_at(self.lat, self.lon).ok_or_else(|| {
            invalid!(
                "the impact at lat {} lies outside the grid's latitudes {south}..{north}: move it or widen --lat-range",
                self.lat
            )
        })?;
        if !swe.is_wet(at.x, at.y) {
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
    /// Water depth at the cell (m).
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

/// What a run tracks at every sample: the maximum amplitude and first-arrival maps and the
/// gauges.
#[derive(Clone, Debug)]
pub struct Tracker {
    /// `|eta|` above this counts as arrived (m).
    pub threshold: f32,
    /// Largest `|eta|` per wet centre (NaN on land).
    pub max_eta: GlobalField,
    /// First time `|eta| > threshold` in seconds (NaN where it never did or on land).
    pub arrival: GlobalField,
    pub gauges: Vec<GaugeRecord>,
}

impl Tracker {
    /// Places the gauges on wet centres; those outside the grid or on land are returned as
    /// warnings and left out.
    pub fn new(swe: &Swe, gauges: &[Gauge], threshold: f32) -> (Self, Vec<String>) {
        let UVec2 { x: nx, y: ny } = swe.grid();
        let land = |x, y| if swe.is_wet(x, y) { 0.0 } else { f32::NAN };
        let mut warnings = vec![];
        let mut records = vec![];
        for gauge in gauges {
            match swe.cell_at(gauge.lat, gauge.lon) {
                Some(cell) if swe.is_wet(cell.x, cell.y) => records.push(GaugeRecord {
                    gauge: gauge.clone(),
                    cell,
                    depth: swe.sea_level() - swe.bed(cell.x, cell.y) as f64,
                    samples: vec![],
                }),
                _ => warnings.push(format!(
                    "warning: gauge '{}' at lat {}, lon {} is on land or off the grid at this resolution: left out",
                    gauge.name, gauge.lat, gauge.lon
                )),
            }
        }
        let tracker = Self {
            threshold,
            max_eta: GlobalField::from_fn(nx, ny, land),
            arrival: GlobalField::from_fn(nx, ny, |x, y| land(x, y) + f32::NAN),
            gauges: records,
        };
        (tracker, warnings)
    }

    /// Takes in the state at `time` seconds after the impact; `eta` is `h - sea level`.
    pub fn sample(&mut self, time: f64, state: &[GlobalField], sea_level: f64) {
        let (u, v, h) = (&state[0], &state[1], &state[2]);
        let sea = sea_level as f32;
        for (k, &hh) in h.data.iter().enumerate() {
            let max = &mut self.max_eta.data[k];
            if max.is_nan() {
                continue;
            }
            let eta = (hh - sea).abs();
            *max = max.max(eta);
            if eta > self.threshold && self.arrival.data[k].is_nan() {
                self.arrival.data[k] = time as f32;
            }
        }
        for record in &mut self.gauges {
            let UVec2 { x, y } = record.cell;
            record.samples.push(Sample {
                time,
                eta: h.at(x, y) - sea,
                u: u.at(x, y),
                v: v.at(x, y),
            });
        }
    }

    /// The tracker as checkpoint files: both maps, and every gauge's samples as the bits of
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
            ("max_eta.npy", output::field_npy(&self.max_eta)),
            ("arrival.npy", output::field_npy(&self.arrival)),
            (
                "gauge_samples.json",
                serde_json::to_vec(&samples).expect("plain numbers"),
            ),
        ]
    }

    /// Takes the maps and samples back from the checkpoint folder `dir`
    /// ([`Tracker::checkpoint_files`]); its gauges must be this tracker's.
    pub fn restore(&mut self, dir: &Path) -> Result<()> {
        let max_eta = output::read_field_npy(&dir.join("max_eta.npy"))?;
        let arrival = output::read_field_npy(&dir.join("arrival.npy"))?;
        let path = dir.join("gauge_samples.json");
        let text = output::read_bytes(&path)?;
        let samples: Vec<Vec<[u64; 4]>> =
            serde_json::from_slice(&text).map_err(|e| invalid!("{}: {e}", path.display()))?;
        let same_grid = |f: &GlobalField| (f.nx, f.ny) == (self.max_eta.nx, self.max_eta.ny);
        if !same_grid(&max_eta) || !same_grid(&arrival) || samples.len() != self.gauges.len() {
            return Err(invalid!(
                "the checkpoint in {} does not fit this run's grid or gauges",
                dir.display()
            ));
        }
        (self.max_eta, self.arrival) = (max_eta, arrival);
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

    /// The gauges' time series as CSV: `time_s, then eta, u, v of every gauge`.
    pub fn gauges_csv(&self) -> String {
        let mut out = String::from("time_s");
        for r in &self.gauges {
            for field in ["eta_m", "u_m_s", "v_m_s"] {
                out.push_str(&format!(",{} {field}", r.gauge.name));
            }
        }
        out.push('\n');
        let samples = self.gauges.first().map_or(0, |r| r.samples.len());
        for k in 0..samples {
            out.push_str(&format!("{}", self.gauges[0].samples[k].time));
            for r in &self.gauges {
                let s = r.samples[k];
                out.push_str(&format!(",{},{},{}", s.eta, s.u, s.v));
            }
            out.push('\n');
        }
        out
    }

    /// One line per gauge: where it is, its depth, first arrival and maximum amplitude, as CSV.
    pub fn summary_csv(&self) -> String {
        let mut out = String::from("gauge,lat,lon,depth_m,arrival_s,arrival_h,max_amplitude_m\n");
        for r in &self.gauges {
            let arrival = r.arrival(self.threshold);
            out.push_str(&format!(
                "{},{},{},{:.0},{},{},{}\n",
                r.gauge.name,
                r.gauge.lat,
                r.gauge.lon,
                r.depth,
                arrival.map_or("".into(), |t| format!("{t:.0}")),
                arrival.map_or("".into(), |t| format!("{:.2}", t / 3600.0)),
                r.max_amplitude()
            ));
        }
        out
    }
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
