//! Fields on the global grid (row-major, `data[y * nx + x]`, `y` upward) and initial conditions.

use rayon::prelude::*;

use crate::{invalid, Result};

/// `f(x, y)` for every point of an `nx x ny` grid, row-major, computed in parallel.
pub fn grid_values<T: Send>(nx: u32, ny: u32, f: impl Fn(u32, u32) -> T + Sync) -> Vec<T> {
    // An indexed iterator collects straight into a vector of the final length.
    let width = nx.max(1) as usize;
    (0..nx as usize * ny as usize)
        .into_par_iter()
        .map(|i| f((i % width) as u32, (i / width) as u32))
        .collect()
}

/// A scalar field on the global `nx x ny` grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalField {
    pub nx: u32,
    pub ny: u32,
    pub data: Vec<f32>,
}

impl GlobalField {
    /// A field of zeros.
    pub fn zeros(nx: u32, ny: u32) -> Self {
        Self {
            nx,
            ny,
            data: vec![0.0; nx as usize * ny as usize],
        }
    }

    /// A field from a function of the global point `(x, y)`.
    pub fn from_fn(nx: u32, ny: u32, f: impl Fn(u32, u32) -> f32 + Sync) -> Self {
        Self {
            nx,
            ny,
            data: grid_values(nx, ny, f),
        }
    }

    /// Value at `(x, y)`.
    pub fn at(&self, x: u32, y: u32) -> f32 {
        self.data[(y * self.nx + x) as usize]
    }

    /// Smallest and largest value.
    pub fn range(&self) -> (f32, f32) {
        self.data
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            })
    }

    /// Sum of all values in f64 (the heat content: conserved by every stencil here).
    pub fn total(&self) -> f64 {
        self.data.iter().map(|&v| v as f64).sum()
    }
}

/// Initial conditions of the heat kernels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitialCondition {
    /// A Gaussian hot spot of unit height at the centre, width a tenth of the smaller side.
    Gauss,
    /// The Fourier mode `cos(2 pi (kx x / nx + ky y / ny))`.
    Mode { kx: u32, ky: u32 },
    /// Deterministic pseudo-random values in `[0, 1)` from a seed (every bit exercised).
    Random { seed: u64 },
    /// Each point holds its own index `y * nx + x` (exact below 2^24 points): shows where
    /// every point went.
    Index,
}

/// The command line's form, which [`InitialCondition::parse`] reads back.
impl std::fmt::Display for InitialCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Self::Gauss => write!(f, "gauss"),
            Self::Mode { kx, ky } => write!(f, "mode:{kx},{ky}"),
            Self::Random { seed } => write!(f, "random:{seed}"),
            Self::Index => write!(f, "index"),
        }
    }
}

impl InitialCondition {
    /// Parses `gauss`, `mode:KX,KY`, `random:SEED` or `index`.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || {
            invalid!(
                "unknown initial condition '{s}': allowed gauss, mode:KX,KY, random:SEED, index"
            )
        };
        match s.split_once(':') {
            None if s == "gauss" => Ok(Self::Gauss),
            None if s == "index" => Ok(Self::Index),
            Some(("mode", k)) => {
                let (kx, ky) = k.split_once(',').ok_or_else(bad)?;
                Ok(Self::Mode {
                    kx: kx.trim().parse().map_err(|_| bad())?,
                    ky: ky.trim().parse().map_err(|_| bad())?,
                })
            }
            Some(("random", seed)) => Ok(Self::Random {
                seed: seed.trim().parse().map_err(|_| bad())?,
            }),
            _ => Err(bad()),
        }
    }

    /// The field on an `nx x ny` grid.
    pub fn field(&self, nx: u32, ny: u32) -> GlobalField {
        match *self {
            Self::Gauss => {
                let sigma = 0.1 * nx.min(ny) as f64;
                let (cx, cy) = (nx as f64 / 2.0, ny as f64 / 2.0);
                GlobalField::from_fn(nx, ny, |x, y| {
                    let r2 = (x as f64 - cx).powi(2) + (y as f64 - cy).powi(2);
                    (-r2 / (2.0 * sigma * sigma)).exp() as f32
                })
            }
            Self::Mode { kx, ky } => {
                GlobalField::from_fn(nx, ny, |x, y| mode_phase(kx, ky, nx, ny, x, y).cos() as f32)
            }
            Self::Random { seed } => GlobalField::from_fn(nx, ny, |x, y| {
                let h = splitmix64(seed ^ ((y as u64) << 32 | x as u64));
                (h >> 40) as f32 / (1u64 << 24) as f32
            }),
            Self::Index => {
                GlobalField::from_fn(nx, ny, |x, y| (y as u64 * nx as u64 + x as u64) as f32)
            }
        }
    }
}

/// Phase `2 pi (kx x / nx + ky y / ny)` of a Fourier mode at `(x, y)`, in f64.
pub fn mode_phase(kx: u32, ky: u32, nx: u32, ny: u32, x: u32, y: u32) -> f64 {
    let tau = std::f64::consts::TAU;
    tau * ((kx as u64 * x as u64 % nx as u64) as f64 / nx as f64
        + (ky as u64 * y as u64 % ny as u64) as f64 / ny as f64)
}

pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
