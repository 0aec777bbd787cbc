//! What to simulate (a configured kernel on a cluster of wafers joined by links) and the
//! common interface of the engines that run it.

use std::sync::Arc;

use crate::cluster::{ClusterGeometry, LinkConfig, LinkSpec, LinkStats};
use crate::field::{GlobalField, InitialCondition};
use crate::kernels::heat::Heat;
use crate::kernels::{HeatCoefficients, Kernel, KernelKind, KernelSpec};
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};

/// A fully validated problem.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The kernel, configured for this grid (parameters, constants, initial state).
    pub kernel: Arc<dyn Kernel>,
    /// The wafers and their links.
    pub cluster: ClusterGeometry,
    pub links: LinkConfig,
    /// Every link's delay and capacity, resolved once from `links`.
    pub link_specs: Vec<LinkSpec>,
    /// All the cluster's PEs as one wafer: the global grid.
    pub geometry: WaferGeometry,
    /// A state to start from instead of the kernel's (a checkpoint's), in global coordinates.
    pub start: Option<Arc<Vec<GlobalField>>>,
}

impl Problem {
    /// Validates the parts against each other: the cluster's comm width must be the kernel's
    /// and the kernel must be configured for the cluster's grid.
    pub fn new(kernel: Arc<dyn Kernel>, cluster: impl Into<ClusterGeometry>) -> Result<Self> {
        let cluster = cluster.into();
        let geometry = cluster.whole()?;
        let spec = kernel.spec();
        if geometry.w != spec.comm_width {
            return Err(invalid!(
                "{} needs comm width w = {}, the wafer has w = {}",
                spec.name,
                spec.comm_width,
                geometry.w
            ));
        }
        let size = geometry.global_size();
        if kernel.grid() != size {
            return Err(invalid!(
                "{} was configured for a {} grid, the cluster is {size}",
                spec.name,
                kernel.grid()
            ));
        }
        let links = LinkConfig::default();
        Ok(Self {
            link_specs: links.resolve(&cluster)?,
            kernel,
            cluster,
            links,
            geometry,
            start: None,
        })
    }

    /// The same problem started from `state` (every field, in global coordinates) instead of
    /// the kernel's initial state. Values do not depend on the translation or the schedule, so
    /// stepping it `k` times gives what `k` more steps after `state` give.
    pub fn starting_from(mut self, state: Vec<GlobalField>) -> Result<Self> {
        let size = self.geometry.global_size();
        let fields = self.spec().fields.len();
        if state.len() != fields || state.iter().any(|f| (f.nx, f.ny) != (size.x, size.y)) {
            return Err(invalid!(
                "a saved state of {} field(s) does not fit {} ({fields} field(s) of {size})",
                state.len(),
                self.spec().name
            ));
        }
        self.start = Some(Arc::new(state));
        Ok(self)
    }

    /// A heat problem: `kind` with these coefficients and initial condition on `cluster`.
    pub fn heat(
        kind: KernelKind,
        coefficients: HeatCoefficients,
        cluster: impl Into<ClusterGeometry>,
        init: InitialCondition,
    ) -> Result<Self> {
        let cluster = cluster.into();
        let kernel = Heat::new(kind, coefficients, init, cluster.whole()?.global_size())?;
        Self::new(Arc::new(kernel), cluster)
    }

    /// The same problem with these link delays and capacities (checked against the cluster).
    pub fn with_links(mut self, links: LinkConfig) -> Result<Self> {
        self.link_specs = links.resolve(&self.cluster)?;
        self.links = links;
        Ok(self)
    }

    /// What the kernel declares.
    pub fn spec(&self) -> &'static KernelSpec {
        self.kernel.spec()
    }

    /// The initial state on the global grid, one field per state field.
    pub fn initial_state(&self) -> Vec<GlobalField> {
        match &self.start {
            Some(state) => state.as_ref().clone(),
            None => self.kernel.initial_state(),
        }
    }

    /// Stages (remaps) per step.
    pub fn stages(&self) -> u64 {
        self.spec().stages.len() as u64
    }

    /// FLOPs of one step over the whole grid.
    pub fn flops_per_step(&self) -> u64 {
        self.geometry.points() * self.spec().flops_per_point()
    }
}

/// An engine that advances a problem: the emulated wafer (GPU or CPU) or a global-grid
/// reference kernel. Steps are whole steps of the kernel (all its stages).
pub trait Simulator {
    /// Runs `steps` more steps.
    fn advance(&mut self, steps: u64) -> Result<()>;
    /// Steps run so far.
    fn step(&self) -> u64;
    /// The state in global coordinates at the current step, one field per state field.
    fn state(&self) -> Result<Vec<GlobalField>>;
    /// The first state field (the only one of the heat kernels).
    fn field(&self) -> Result<GlobalField> {
        Ok(self.state()?.swap_remove(0))
    }
    /// What runs, for reports (engine and adapter).
    fn describe(&self) -> String;
    /// What the cluster's links carried, for engines that emulate links.
    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        None
    }
    /// Steps per time block the engine runs (1: none); each runs wholly inside one
    /// `advance`, from a multiple of it (`blocking::steps_in_blocks`).
    fn time_block(&self) -> u32 {
        1
    }
}
