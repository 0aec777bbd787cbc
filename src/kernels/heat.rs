//! Heat equation `u' = A u_xx + C u_yy + D u_x + E u_y`, forward Euler (section 4.2.1).
//! Grid spacing is 1 in both directions; `dt` is the time step.

use super::Neighbourhood;
use crate::{invalid, Result};

/// The PDE coefficients and the time step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatCoefficients {
    pub a: f32,
    pub c: f32,
    pub d: f32,
    pub e: f32,
    pub dt: f32,
}

impl Default for HeatCoefficients {
    /// Pure diffusion `A = C = 1`, no advection, `dt = 0.2` (stable for both stencils).
    fn default() -> Self {
        Self {
            a: 1.0,
            c: 1.0,
            d: 0.0,
            e: 0.0,
            dt: 0.2,
        }
    }
}

/// Stencil weights `rows[dy+1][dx+1]` applied to the 3 x 3 neighbourhood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub rows: [[f32; 3]; 3],
}

impl HeatCoefficients {
    /// Checks that the coefficients are finite, diffusion is non-negative and forward Euler is
    /// stable (`dt * 2 (A + C) <= 1`, which keeps every weight of the 5-point stencil of pure
    /// diffusion non-negative).
    pub fn validate(&self) -> Result<()> {
        let all = [
            ("A", self.a),
            ("C", self.c),
            ("D", self.d),
            ("E", self.e),
            ("dt", self.dt),
        ];
        for (name, v) in all {
            if !v.is_finite() {
                return Err(invalid!("{name} = {v} must be a finite number"));
            }
        }
        if self.a < 0.0 || self.c < 0.0 {
            return Err(invalid!(
                "A = {} and C = {} must be >= 0 (diffusion, not anti-diffusion)",
                self.a,
                self.c
            ));
        }
        if self.dt <= 0.0 {
            return Err(invalid!("dt = {} must be > 0", self.dt));
        }
        let limit = 0.5 / (self.a + self.c).max(f32::MIN_POSITIVE);
        if self.dt > limit {
            return Err(invalid!(
                "dt = {} is unstable for A = {}, C = {}: allowed 0 < dt <= {limit}",
                self.dt,
                self.a,
                self.c
            ));
        }
        Ok(())
    }

    /// Central differences: the 5 weights of Table 3 (`avec`).
    pub fn five_point(&self) -> Weights {
        let (ax, cy) = (self.dt * self.a, self.dt * self.c);
        let (dx, ey) = (0.5 * self.dt * self.d, 0.5 * self.dt * self.e);
        Weights {
            rows: [
                [0.0, cy - ey, 0.0],
                [ax - dx, 1.0 - 2.0 * (ax + cy), ax + dx],
                [0.0, cy + ey, 0.0],
            ],
        }
    }

    /// Compact 9-point scheme: each one-dimensional difference is averaged over the three rows
    /// (or columns) with weights 1/12, 10/12, 1/12 for second and 1/6, 4/6, 1/6 for first
    /// derivatives. For `A = C` the Laplacian part is the isotropic (Mehrstellen) 9-point one.
    pub fn nine_point(&self) -> Weights {
        let second = [1.0 / 12.0, 10.0 / 12.0, 1.0 / 12.0];
        let first = [1.0 / 6.0, 4.0 / 6.0, 1.0 / 6.0];
        let mut rows = [[0.0f64; 3]; 3];
        let dt = self.dt as f64;
        let (a, c, d, e) = (self.a as f64, self.c as f64, self.d as f64, self.e as f64);
        for k in 0..3 {
            // d_xx and d_x along row k, smoothed across rows.
            let (sx, fx) = (a * second[k] * dt, d * first[k] * dt / 2.0);
            rows[k][0] += sx - fx;
            rows[k][1] -= 2.0 * sx;
            rows[k][2] += sx + fx;
            // d_yy and d_y along column k, smoothed across columns.
            let (sy, fy) = (c * second[k] * dt, e * first[k] * dt / 2.0);
            rows[0][k] += sy - fy;
            rows[1][k] -= 2.0 * sy;
            rows[2][k] += sy + fy;
        }
        rows[1][1] += 1.0;
        Weights {
            rows: rows.map(|r| r.map(|v| v as f32)),
        }
    }
}

/// Table 3's order: left, down, right, up, centre (5 multiplies, 4 adds).
#[inline(always)]
pub fn heat5_point(w: &Weights, nb: &Neighbourhood) -> f32 {
    let mut y = w.rows[1][0] * nb[1][0];
    y += w.rows[0][1] * nb[0][1];
    y += w.rows[1][2] * nb[1][2];
    y += w.rows[2][1] * nb[2][1];
    y += w.rows[1][1] * nb[1][1];
    y
}

/// Row by row from below-left (9 multiplies, 8 adds).
#[inline(always)]
pub fn heat9_point(w: &Weights, nb: &Neighbourhood) -> f32 {
    let mut y = w.rows[0][0] * nb[0][0];
    y += w.rows[0][1] * nb[0][1];
    y += w.rows[0][2] * nb[0][2];
    y += w.rows[1][0] * nb[1][0];
    y += w.rows[1][1] * nb[1][1];
    y += w.rows[1][2] * nb[1][2];
    y += w.rows[2][0] * nb[2][0];
    y += w.rows[2][1] * nb[2][1];
    y += w.rows[2][2] * nb[2][2];
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_bad_dt_is_named() {
        let c = HeatCoefficients {
            a: 0.7,
            c: 0.3,
            d: 0.2,
            e: -0.1,
            dt: 0.2,
        };
        for w in [c.five_point(), c.nine_point()] {
            let sum: f32 = w.rows.iter().flatten().sum();
            assert!((sum - 1.0).abs() < 1e-6, "{w:?}");
        }
        let err = HeatCoefficients { dt: 0.6, ..c }
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dt = 0.6") && err.contains("dt <= 0.5"),
            "{err}"
        );
    }
}
