//! What to simulate (kernel, coefficients, wafer, initial condition) and the common interface
//! of the engines that run it.

use crate::field::{GlobalField, InitialCondition};
use crate::kernels::{HeatCoefficients, KernelKind, Weights};
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// A fully validated problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    pub kernel: KernelKind,
    pub coefficients: HeatCoefficients,
    pub geometry: WaferGeometry,
    pub init: InitialCondition,
}

impl Problem {
    /// Validates the parts against each other.
    pub fn new(
        kernel: KernelKind,
        coefficients: HeatCoefficients,
        geometry: WaferGeometry,
        init: InitialCondition,
    ) -> Result<Self> {
        kernel.check_p(geometry.p)?;
        coefficients.validate()?;
        let weights = kernel.weights(&coefficients);
        if let Some(w) = weights.rows.iter().flatten().find(|&&w| w < 0.0) {
            let HeatCoefficients { a, c, d, e, dt } = coefficients;
            return Err(invalid!(
                "A = {a}, C = {c}, D = {d}, E = {e}, dt = {dt} give {} a negative weight ({w}), \
                 which makes forward Euler unstable: allowed every weight >= 0 \
                 (for heat5: |D| <= 2A, |E| <= 2C, dt <= 0.5/(A+C))",
                kernel.name()
            ));
        }
        Ok(Self {
            kernel,
            coefficients,
            geometry,
            init,
        })
    }

    /// The stencil weights.
    pub fn weights(&self) -> Weights {
        self.kernel.weights(&self.coefficients)
    }

    /// The initial field on the global grid.
    pub fn initial_field(&self) -> GlobalField {
        let (nx, ny) = self.geometry.global_size();
        self.init.field(nx, ny)
    }

    /// FLOPs of one step over the whole grid.
    pub fn flops_per_step(&self) -> u64 {
        self.geometry.points() * self.kernel.flops_per_point()
    }
}

/// An engine that advances a problem: the emulated wafer (GPU or CPU) or a global-grid
/// reference kernel.
pub trait Simulator {
    /// Runs `steps` more steps.
    fn advance(&mut self, steps: u64) -> Result<()>;
    /// Steps run so far.
    fn step(&self) -> u64;
    /// The field in global coordinates at the current step.
    fn field(&self) -> Result<GlobalField>;
    /// What runs, for reports (engine and adapter).
    fn describe(&self) -> String;
}
