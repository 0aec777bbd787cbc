//! The stencil kernels a wafer can run, with their per-cell maths on the CPU.
//!
//! Every kernel has a WGSL file of the same name in `shaders/` defining
//! `fn stencil_point(weights: Weights, below: vec3<f32>, mid: vec3<f32>, above: vec3<f32>) -> f32`
//! over the 3 x 3 neighbourhood (each `vec3` is left, centre, right), and a Rust twin below with
//! the same operation order, so that the GPU drivers and the CPU backend share the arithmetic.

mod heat;

pub use heat::{heat5_point, heat9_point, HeatCoefficients, Weights};

use crate::{invalid, Result};

/// A 3 x 3 neighbourhood: rows below, middle and above; each row is left, centre, right.
pub type Neighbourhood = [[f32; 3]; 3];

/// The stencil kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// 5-point heat equation (section 4.2.1), 9 FLOPs per point.
    Heat5,
    /// 9-point heat equation, 17 FLOPs per point.
    Heat9,
}

impl KernelKind {
    /// All kernels, for help texts and tests.
    pub const ALL: [KernelKind; 2] = [KernelKind::Heat5, KernelKind::Heat9];

    /// The name used on the command line and for the WGSL file.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Heat5 => "heat5",
            KernelKind::Heat9 => "heat9",
        }
    }

    /// Parses a kernel name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                invalid!(
                    "unknown kernel '{name}': allowed {}",
                    Self::names().join(", ")
                )
            })
    }

    /// Names of all kernels.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|k| k.name()).collect()
    }

    /// FLOPs per point per step (the paper's Table 4).
    pub fn flops_per_point(self) -> u64 {
        match self {
            KernelKind::Heat5 => 9,
            KernelKind::Heat9 => 17,
        }
    }

    /// The stencil reaches these values of `p` (the translation per step).
    pub fn supported_p(self) -> &'static [u32] {
        &[1]
    }

    /// Checks that `p` is supported by this kernel.
    pub fn check_p(self, p: u32) -> Result<()> {
        if self.supported_p().contains(&p) {
            Ok(())
        } else {
            Err(invalid!(
                "p = {p} is not supported by {}: allowed {:?}",
                self.name(),
                self.supported_p()
            ))
        }
    }

    /// The stencil weights of this kernel for the given coefficients.
    pub fn weights(self, c: &HeatCoefficients) -> Weights {
        match self {
            KernelKind::Heat5 => c.five_point(),
            KernelKind::Heat9 => c.nine_point(),
        }
    }

    /// One point update on the CPU, in the same operation order as the WGSL kernel.
    #[inline(always)]
    pub fn point(self, w: &Weights, nb: &Neighbourhood) -> f32 {
        match self {
            KernelKind::Heat5 => heat5_point(w, nb),
            KernelKind::Heat9 => heat9_point(w, nb),
        }
    }
}
