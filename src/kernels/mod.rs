//! The kernels a wafer can run, as plug-ins: each declares, in its own folder, its state
//! fields, its stages (footprint, translation, WGSL, CPU twin, FLOPs), its parameter block,
//! its constant fields and its Table 6 cost row. Engines see only [`Kernel`] and [`KernelSpec`];
//! this module's [`KernelKind`] is the one registry that names them.
//!
//! The step of a kernel is a sequence of stages; each stage is one remap of the grid (Table 3's
//! `sendrecv` then `compute`). A stage writes every point from a `(w+1) x (w+1)` window of the
//! state that lies below-left of it (in the PE's SRAM: `y[i+w][j+w]` from
//! `x[i..=i+w][j..=j+w]`). On the untranslated global grid the same window starts at
//! `origin` from the written point, so the stage translates the grid by `origin + w` points.

pub mod heat;
pub mod swe;
pub mod swe_c;
pub mod wave;

use std::fmt;
use std::sync::Arc;

use glam::UVec2;

use crate::field::GlobalField;
use crate::render::Picture;
use crate::{invalid, Result};

pub use heat::{heat5_point, heat9_point, HeatCoefficients, Weights};

/// Cycles one PE spends on one step, `f(n) = a0 + a1 n + a2 n^2` (Table 6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    pub a0: f64,
    pub a1: f64,
    pub a2: f64,
}

impl CostModel {
    /// `f(n)` in cycles.
    pub fn cycles(&self, n: u32) -> f64 {
        let n = n as f64;
        self.a0 + self.a1 * n + self.a2 * n * n
    }

    /// The part of `f(n)` that needs no received data: the points whose stencil reads only
    /// owned cells, `(n - w)^2` of the `n^2`, at the quadratic rate. The rest, `edge`, waits
    /// for the package: the fixed and linear terms (per-step and per-row overheads) and the
    /// `n^2 - (n - w)^2` points whose stencil reaches into the comm layer.
    pub fn interior(&self, n: u32, w: u32) -> f64 {
        let inner = n.saturating_sub(w) as f64;
        self.a2 * inner * inner
    }

    /// `f(n) - interior`: the work done after the package arrives.
    pub fn edge(&self, n: u32, w: u32) -> f64 {
        self.cycles(n) - self.interior(n, w)
    }
}

/// Most state fields of any kernel.
pub const MAX_FIELDS: usize = 4;

/// A 3 x 3 neighbourhood: rows below, middle and above; each row is left, centre, right.
pub type Neighbourhood = [[f32; 3]; 3];

/// How the GPU engines drive a stage (the CPU engines call [`Kernel::stage_block`] for both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// One field and the 3 x 3 window centred on the point: the engines keep rolling rows of
    /// it in registers and call the kernel's `stencil_point(params, below, mid, above)`.
    Rows3,
    /// Any fields: one call per point of the kernel's WGSL stage function, which reads its
    /// window through the driver's `cur(f, dx, dy)` and `base(f, dx, dy)`, and its constants
    /// through the driver's `window_const(c, p, d)` (plane `c` at global point `p`, window
    /// offset `d`) and `row_const(t, y, dy)` (row constant `t` of global row `y`, window row
    /// `dy`). The kernel declares how many (`CONSTS`, `ROW_CONSTS`, at least 1 each) and how
    /// to load one (`load_const(c, p)`, `load_row_const(t, y)`); a driver loads them where
    /// they lie (`shaders/point_consts.wgsl`) or keeps a run's window of them in registers
    /// (`shaders/point_window.wgsl`).
    Point,
}

/// One stage (one remap) of a kernel's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Name of the WGSL stage function and of its CPU twin.
    pub name: &'static str,
    /// Offset of the window's lower-left point from the written point on the untranslated
    /// grid (the same along x and y).
    pub origin: i32,
    /// FLOPs per point.
    pub flops: u64,
    pub driver: Driver,
}

/// The size of a kernel's `Params` and its members' offsets by WGSL name.
pub type ParamsLayout = (usize, Vec<(&'static str, usize)>);

/// A shallow-water kernel from its configuration, for a grid of points.
pub type ShallowWaterFn = fn(swe::SweConfig, UVec2) -> Result<Arc<dyn swe::ShallowWater>>;

/// What a kernel declares once, for engines, timing and reports.
#[derive(Debug)]
pub struct KernelSpec {
    pub kind: KernelKind,
    pub name: &'static str,
    /// One line for help texts.
    pub summary: &'static str,
    /// State fields, in SRAM plane order.
    pub fields: &'static [&'static str],
    /// The stages of one step.
    pub stages: &'static [Stage],
    /// Comm width `w`: the window of every stage is `(w+1) x (w+1)`.
    pub comm_width: u32,
    /// The kernel's WGSL: `struct Params`, its stage functions (and `stencil_point` for a
    /// [`Driver::Rows3`] stage).
    pub wgsl: &'static str,
    /// Table 6's cost fit `f(n)` in cycles per PE and step.
    pub cost: CostModel,
    /// Words one PE receives per step in the paper's implementation (Table 6), as a function
    /// of `n`, and its formula for reports.
    pub paper_io: (fn(u64) -> u64, &'static str),
    /// Constant per-point fields that the paper's machine moves with their points (they are
    /// indexed by global position here, but the timing model counts their traffic).
    pub travelling_constants: u32,
    /// Host bytes per grid point that configuring the kernel and building its initial state
    /// take at most (checked against what the process may allocate before it starts).
    pub setup_bytes_per_point: u64,
    /// The wafer `run` takes when `--pes` is not given.
    pub default_pes: (u32, u32),
    /// The groups of command-line options the kernel reads; the others are refused with it.
    pub options: &'static [OptionGroup],
    /// The size of the WGSL `Params` and its members' offsets by name, of the Rust twin that
    /// [`Kernel::params`] writes (the seam test compares them with the WGSL).
    pub params_layout: fn() -> ParamsLayout,
    /// The kernel configured from the options for a grid of points.
    pub configure: fn(&KernelOptions, UVec2) -> Result<Arc<dyn Kernel>>,
    /// The kernel as shallow water on the globe from its configuration, where it is.
    pub shallow_water: Option<ShallowWaterFn>,
    /// The initial condition `bench` and the tests start from (every bit exercised), in the
    /// kernel's own syntax; `None`: its default.
    pub random_init: Option<fn(u64) -> String>,
}

impl KernelSpec {
    /// Refuses a `grid` whose setup ([`KernelSpec::setup_bytes_per_point`]) needs more memory
    /// than the process may allocate.
    pub fn check_setup_memory(&self, grid: UVec2) -> Result<()> {
        let points = grid.x as u64 * grid.y as u64;
        crate::memory::check_host_memory(
            &format!("{} on a {}x{} grid", self.name, grid.x, grid.y),
            points.saturating_mul(self.setup_bytes_per_point),
            "use fewer PEs or a smaller n (or a coarser resolution)",
        )
    }

    /// FLOPs per point per step, all stages.
    pub fn flops_per_point(&self) -> u64 {
        self.stages.iter().map(|s| s.flops).sum()
    }

    /// Grid points the step translates the grid by, along x and y (`p`).
    pub fn shift_per_step(&self) -> u32 {
        self.stages.iter().map(|s| self.stage_shift(s)).sum()
    }

    /// Grid points one stage translates the grid by.
    pub fn stage_shift(&self, stage: &Stage) -> u32 {
        (stage.origin + self.comm_width as i32) as u32
    }

    /// Total translation after `remaps` stages from the start.
    pub fn shift_after(&self, remaps: u64) -> u64 {
        let s = self.stages.len() as u64;
        let partial: u64 = self.stages[..(remaps % s) as usize]
            .iter()
            .map(|st| self.stage_shift(st) as u64)
            .sum();
        remaps / s * self.shift_per_step() as u64 + partial
    }

    /// Words an edge PE sends across a wafer side per step, from the real package layout:
    /// `(left strip, lower strip with its corner)` of every stage and state field (`n x w` and
    /// `w x (n + w)`), and of the travelling constants (`n x p` and `p x (n + p)`).
    pub fn strip_words(&self, n: u32) -> (f64, f64) {
        let (n, w, p) = (
            n as f64,
            self.comm_width as f64,
            self.shift_per_step() as f64,
        );
        let state = (self.stages.len() * self.fields.len()) as f64;
        let travelling = self.travelling_constants as f64;
        (
            state * n * w + travelling * n * p,
            state * w * (n + w) + travelling * p * (n + p),
        )
    }

    /// Words one PE receives per step from the real package layout: every stage fills the
    /// comm layer of every state field, plus the travelling constants once per step.
    pub fn io_words_per_pe(&self, n: u32) -> u64 {
        let layer = |w: u64| (n as u64 + w).pow(2) - (n as u64).pow(2);
        let state = self.stages.len() as u64 * self.fields.len() as u64;
        state * layer(self.comm_width as u64)
            + self.travelling_constants as u64 * layer(self.shift_per_step() as u64)
    }
}

/// The points a stage writes in one call on the CPU: `rows` runs of `len` points, run `i` at
/// global points `at + (j, i)` of the untranslated grid. Rows wrap around the grid; a run
/// never passes the grid's last column (the engines split it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub at: UVec2,
    pub rows: usize,
    pub len: usize,
}

/// What a block reads: row `dy` (`0 ..= w`, bottom up) of field `f`'s window for run `i` is
/// `cur[f][(i + dy) * stride..]`, `len + w` values from the window's left column, in the
/// state being remapped; `base` likewise in the state at the start of the step. Unused
/// fields are empty.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockIn<'a> {
    pub cur: [&'a [f32]; MAX_FIELDS],
    pub base: [&'a [f32]; MAX_FIELDS],
    pub stride: usize,
}

impl<'a> BlockIn<'a> {
    /// Row `dy` of field `f`'s window for run `i`: `len` values.
    #[inline(always)]
    pub fn cur(&self, f: usize, i: usize, dy: usize, len: usize) -> &'a [f32] {
        &self.cur[f][(i + dy) * self.stride..][..len]
    }

    /// The same row at the start of the step.
    #[inline(always)]
    pub fn base(&self, f: usize, i: usize, dy: usize, len: usize) -> &'a [f32] {
        &self.base[f][(i + dy) * self.stride..][..len]
    }

    /// The inputs of the block whose runs start `skip` points later.
    pub fn skip(&self, skip: usize) -> Self {
        let cut = |plane: &'a [f32]| plane.get(skip..).unwrap_or(&[]);
        Self {
            cur: self.cur.map(cut),
            base: self.base.map(cut),
            stride: self.stride,
        }
    }
}

/// Where a block writes: run `i` of field `f` is `fields[f][i * stride..][..len]`. Unused
/// fields are empty.
#[derive(Debug, Default)]
pub struct BlockOut<'a> {
    pub fields: [&'a mut [f32]; MAX_FIELDS],
    pub stride: usize,
}

impl BlockOut<'_> {
    /// Run `i` of every field, `len` values each (unused fields empty).
    #[inline(always)]
    pub fn runs(&mut self, i: usize, len: usize) -> [&mut [f32]; MAX_FIELDS] {
        let from = i * self.stride;
        self.fields
            .each_mut()
            .map(|f| f.get_mut(from..from + len).unwrap_or_default())
    }

    /// The outputs of the block whose runs start `skip` points later.
    pub fn part(&mut self, skip: usize) -> BlockOut<'_> {
        BlockOut {
            fields: self
                .fields
                .each_mut()
                .map(|f| f.get_mut(skip..).unwrap_or_default()),
            stride: self.stride,
        }
    }
}

/// A kernel configured for one problem: its parameters, constant fields and initial state on
/// the problem's global grid.
pub trait Kernel: Send + Sync + fmt::Debug {
    /// What the kernel declares once.
    fn spec(&self) -> &'static KernelSpec;
    /// The global grid `(nx, ny)` it was configured for.
    fn grid(&self) -> UVec2;
    /// The bytes of the WGSL `Params` uniform.
    fn params(&self) -> Vec<u8>;
    /// The constant fields, in the layout the kernel's WGSL reads through `consts_at(i)` (at
    /// least one value, so that a page can be bound).
    fn constants(&self) -> &[f32];
    /// The state at step 0, one field per [`KernelSpec::fields`].
    fn initial_state(&self) -> Vec<GlobalField>;
    /// CPU twin of stage `stage` on a block of points: the new value of field `f` at the
    /// block's point `(j, i)` goes to `out.run(f, i, len)[j]`, from `input`.
    fn stage_block(&self, stage: usize, block: Block, input: &BlockIn, out: &mut BlockOut);
    /// The parameters by name (units in the names, as `dt_s`), typed: numbers, booleans,
    /// strings in their command-line form; for the summary, the JSON and checkpoints' keys.
    fn parameters(&self) -> Parameters;
    /// Model time of one step in seconds, where the kernel has one.
    fn seconds_per_step(&self) -> Option<f64> {
        self.shallow_water().map(|s| s.dt())
    }
    /// How field `field` of a state is drawn.
    fn picture(&self, field: usize, value: &GlobalField) -> Picture {
        Picture::plain(value, self.spec().fields[field])
    }
    /// Checks a state read back after `step` steps (a blown-up run is an error naming where).
    fn check_state(&self, state: &[GlobalField], step: u64) -> Result<()> {
        match self.shallow_water() {
            Some(swe) => swe::check_state(swe, state, step),
            None => Ok(()),
        }
    }
    /// The kernel as shallow water on the globe, if it is.
    fn shallow_water(&self) -> Option<&dyn swe::ShallowWater> {
        None
    }
}

/// Declares the registry: one line per kernel, `Kind => its spec`.
macro_rules! registry {
    ($($(#[$doc:meta])* $kind:ident => $spec:path,)*) => {
        /// The registry: every kernel by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum KernelKind {
            $($(#[$doc])* $kind,)*
        }

        impl KernelKind {
            /// All kernels, for help texts and tests.
            pub const ALL: [KernelKind; [$(stringify!($kind)),*].len()] = [$(KernelKind::$kind),*];

            /// What the kernel declares.
            pub fn spec(self) -> &'static KernelSpec {
                match self {
                    $(KernelKind::$kind => &$spec,)*
                }
            }
        }
    };
}

registry! {
    /// 5-point heat equation (section 4.2.1), 9 FLOPs per point.
    Heat5 => heat::HEAT5,
    /// 9-point heat equation, 17 FLOPs per point.
    Heat9 => heat::HEAT9,
    /// Shallow-water equations (section 4.2.2), the paper's Lax-Wendroff in two half steps.
    Swe => swe::SWE,
    /// Shallow-water equations, forward-backward on a C-grid with fourth-order gravity waves.
    SweC => swe_c::SWE_C,
    /// The linear wave equation in two fields, symplectic Euler.
    Wave => wave::WAVE,
}

/// The groups of command-line options a kernel may read ([`KernelSpec::options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionGroup {
    /// The heat equation's coefficients and time step ([`HeatCoefficients`]).
    Heat,
    /// The globe, relief, walls and initial state of shallow water ([`swe::SweConfig`]).
    ShallowWater,
}

impl OptionGroup {
    /// The kernels that read this group, for messages.
    pub fn readers(self) -> Vec<&'static str> {
        KernelKind::ALL
            .iter()
            .filter(|k| k.spec().options.contains(&self))
            .map(|k| k.name())
            .collect()
    }
}

impl KernelKind {
    /// The shallow-water kernels.
    pub const SHALLOW_WATER: [KernelKind; 2] = [KernelKind::Swe, KernelKind::SweC];
    /// The heat kernels (one field, one stage).
    pub const HEAT: [KernelKind; 2] = [KernelKind::Heat5, KernelKind::Heat9];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        self.spec().name
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
        self.spec().flops_per_point()
    }

    /// The kernel configured from `options` for a `grid` of points.
    pub fn configure(self, options: &KernelOptions, grid: UVec2) -> Result<Arc<dyn Kernel>> {
        (self.spec().configure)(options, grid)
    }

    /// The shallow-water kernel of this kind configured for `grid` (an error for the others).
    pub fn shallow_water(
        self,
        config: swe::SweConfig,
        grid: UVec2,
    ) -> Result<Arc<dyn swe::ShallowWater>> {
        let configure = self.spec().shallow_water.ok_or_else(|| {
            invalid!(
                "{} is not a shallow-water kernel: allowed {}",
                self.name(),
                OptionGroup::ShallowWater.readers().join(", ")
            )
        })?;
        configure(config, grid)
    }

    /// Options whose initial condition exercises every bit of the state: `random_init`'s
    /// with `seed`, the defaults otherwise.
    pub fn random_options(self, seed: u64) -> KernelOptions {
        KernelOptions {
            init: self.spec().random_init.map(|init| init(seed)),
            ..KernelOptions::default()
        }
    }
}

/// Everything a command line can say about a kernel; each kernel reads its own part.
#[derive(Clone, Debug, Default)]
pub struct KernelOptions {
    pub heat: HeatCoefficients,
    pub swe: swe::SweConfig,
    /// The initial condition in the kernel's own syntax (its default when `None`).
    pub init: Option<String>,
}

/// A kernel's parameters by name, in a stable order.
pub type Parameters = Vec<(&'static str, serde_json::Value)>;

/// `x` as the JSON number its shortest decimal spelling says (`0.2`, not `0.2000000029802`).
pub fn parameter_number(x: f32) -> serde_json::Value {
    x.to_string()
        .parse::<f64>()
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// A parameter's value as a summary line shows it: strings without their quotes.
pub fn parameter_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translations_add_up_per_step() {
        for kind in KernelKind::ALL {
            let spec = kind.spec();
            assert_eq!(spec.shift_after(0), 0);
            let s = spec.stages.len() as u64;
            assert_eq!(spec.shift_after(3 * s), 3 * spec.shift_per_step() as u64);
            assert!(spec.shift_per_step() >= 1, "{}", spec.name);
            for stage in spec.stages {
                assert!(stage.origin <= 0 && stage.origin >= -(spec.comm_width as i32));
            }
        }
    }

    #[test]
    fn heat_io_is_table6() {
        for kind in KernelKind::HEAT {
            let spec = kind.spec();
            for n in [1u64, 2, 8, 64] {
                assert_eq!(spec.io_words_per_pe(n as u32), (spec.paper_io.0)(n));
            }
        }
    }

    /// The summaries print initial conditions, walls and sea floors as the command line
    /// writes them, and the parsers read them back.
    #[test]
    fn initial_conditions_walls_and_sea_floors_print_as_they_parse() {
        use crate::field::InitialCondition;
        for text in ["gauss", "mode:2,3", "random:7", "index"] {
            assert_eq!(InitialCondition::parse(text).unwrap().to_string(), text);
        }
        for text in ["rest", "hump:20,-150,10,500", "williamson2", "random:9"] {
            assert_eq!(swe::SweInit::parse(text).unwrap().to_string(), text);
        }
        for text in ["no-slip", "prescribed"] {
            assert_eq!(swe::Walls::parse(text).unwrap().to_string(), text);
        }
        let flat = swe::Bathymetry::Flat(4000.0);
        assert_eq!(flat.to_string(), "flat:4000");
        let etopo = swe::Bathymetry::Etopo(swe::relief::ReliefGrid::OneDegree);
        assert_eq!(etopo.to_string(), "etopo1-1deg");
    }
}
