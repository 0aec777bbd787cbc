//! What to simulate (kernel, coefficients, wafer, initial condition) and the common interface
//! of the engines that run it.

use crate::cluster::{ClusterGeometry, LinkConfig, LinkStats};
use crate::field::{GlobalField, InitialCondition};
use crate::kernels::{HeatCoefficients, KernelKind, Weights};
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// A fully validated problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub kernel: KernelKind,
    pub coefficients: HeatCoefficients,
    /// The wafers and their links.
    pub cluster: ClusterGeometry,
    pub links: LinkConfig,
    /// All the cluster's PEs as one wafer: the global grid.
    pub geometry: WaferGeometry,
    pub init: InitialCondition,
}

impl Problem {
    /// Validates the parts against each other.
    pub fn new(
        kernel: KernelKind,
        coefficients: HeatCoefficients,
        cluster: impl Into<ClusterGeometry>,
        init: InitialCondition,
    ) -> Result<Self> {
        let cluster = cluster.into();
        let geometry = cluster.whole()?;
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
            cluster,
            links: LinkConfig::default(),
            geometry,
            init,
        })
    }

    /// The same problem with these link delays and capacities (checked against the cluster).
    pub fn with_links(mut self, links: LinkConfig) -> Result<Self> {
        links.resolve(&self.cluster)?;
        self.links = links;
        Ok(self)
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
    /// What the cluster's links carried, for engines that emulate links.
    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        None
    }
}
