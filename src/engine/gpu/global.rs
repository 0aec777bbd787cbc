//! The plain global-grid kernel on the GPU: the reference the emulated wafer equals bit for
//! bit. Its SRAM slots follow the wafer's ([`StageSlots`]), one plane per state field. A grid
//! whose slot exceeds one storage binding runs as bands of rows ([`Bands`]): each band holds,
//! beside its own rows, the rows of its neighbours that its stencils read (ghost rows), copied
//! in from them after every stage. Every point sees the values it sees in one band, so the
//! bands change no bit.

use std::sync::Arc;

use super::constants;
use super::context::{GpuContext, Pipeline};
use super::shaders;
use super::uniforms::{GridUniform, BLOCK_COLS};
use crate::field::GlobalField;
use crate::kernels::{Driver, KernelSpec, Stage};
use crate::model::{Problem, Simulator};
use crate::wafer::StageSlots;
use crate::{Error, Result};

/// Cells past the end of each row where the rows are vec4s (a multiple of 4, and of 32 so that
/// a GPU's rows stay 128-byte aligned): rows a power of two apart share a CPU's cache sets,
/// and a lavapipe invocation walks `global_rows` of them.
const ROW_SKEW: u32 = 32;

/// How a grid's rows are split over bands, each in its own buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Bands {
    /// Each band's rows: `(first, count)`, in order.
    spans: Vec<(u32, u32)>,
    /// Rows each band holds of each neighbour's (none for one band: the grid wraps itself).
    ghosts: u32,
    /// Rows past its upper ghosts that a band's buffers hold, never read into a stored value:
    /// the window of a Point run that starts near its last row reaches over them.
    slack: u32,
}

impl Bands {
    /// The whole grid of `ny` rows if its slot of `row_bytes` per row fits `max` bytes, else
    /// the fewest bands (rows balanced) whose slots, with `ghosts` rows of each neighbour and
    /// `slack` rows, fit; each band at least `ghosts` rows, so its ghosts come from one
    /// neighbour. `None` where no band fits.
    fn plan(ny: u32, row_bytes: u64, (ghosts, slack): (u32, u32), max: u64) -> Option<Self> {
        if ny as u64 * row_bytes <= max {
            return Some(Self {
                spans: vec![(0, ny)],
                ghosts: 0,
                slack: 0,
            });
        }
        let most = (max / row_bytes).checked_sub((2 * ghosts + slack) as u64)?;
        (2..=ny)
            .find(|&k| ny.div_ceil(k) as u64 <= most && ny / k >= ghosts.max(1))
            .map(|k| {
                let edge = |b: u32| (ny as u64 * b as u64 / k as u64) as u32;
                Self {
                    spans: (0..k).map(|b| (edge(b), edge(b + 1) - edge(b))).collect(),
                    ghosts,
                    slack,
                }
            })
    }

    /// Rows the buffers of a band of `rows` rows hold.
    fn stored(&self, rows: u32) -> u32 {
        rows + 2 * self.ghosts + self.slack
    }
}

/// One band: its rows `first .. first + rows`, held in its buffers (`stored` rows) from global
/// row `base` (`first - ghosts`, around the torus) on.
struct Band {
    first: u32,
    rows: u32,
    stored: u32,
    base: u32,
    slots: Vec<wgpu::Buffer>,
}

/// One stage: its pipeline, and each band's dispatches of it.
struct StageKernel {
    pipeline: Pipeline,
    bands: Vec<BandDispatch>,
}

/// A stage on a band: its bind groups at the remaps it runs (by remap modulo `2 * stages`)
/// and its dispatch size.
struct BandDispatch {
    groups: Vec<Option<wgpu::BindGroup>>,
    size: (u32, u32),
}

pub struct GpuGlobal {
    ctx: Arc<GpuContext>,
    spec: &'static KernelSpec,
    nx: u32,
    ny: u32,
    /// Cells from a row to the next in the slots.
    pitch: u32,
    ghosts: u32,
    bands: Vec<Band>,
    stages: Vec<StageKernel>,
    remaps: u64,
}

impl GpuGlobal {
    /// The kernel within the adapter's storage bindings.
    pub fn new(ctx: Arc<GpuContext>, problem: &Problem) -> Result<Self> {
        let max_binding = ctx.adapter.max_binding_bytes();
        Self::within(ctx, problem, max_binding)
    }

    /// The kernel with every storage binding at most `max_binding` bytes.
    pub fn within(ctx: Arc<GpuContext>, problem: &Problem, max_binding: u64) -> Result<Self> {
        let spec = problem.spec();
        let state = problem.initial_state();
        let (nx, ny) = (state[0].nx, state[0].ny);
        let rows3 = spec.stages.iter().all(|s| s.driver == Driver::Rows3);
        // Rows of whole vec4s: blocks of 8 for Rows3 stages, one vec4 for Point stages.
        let vec4_rows = nx.is_multiple_of(if rows3 { BLOCK_COLS } else { 4 });
        let pitch = if vec4_rows && rows3 {
            nx + ROW_SKEW
        } else {
            nx
        };
        let plan = plan_bands(&ctx, spec, (nx, ny, pitch), max_binding)?;
        let bands = upload_bands(&ctx, &state, pitch, &plan, spec.stages.len())?;
        let (pages, consts) = constants::upload(&ctx, problem.kernel.constants(), max_binding)?;
        let mut named = vec![(
            "params",
            ctx.uniform_bytes("params", &problem.kernel.params()),
        )];
        named.extend(consts);
        let grids: Vec<_> = bands
            .iter()
            .map(|band| {
                let shape = (band.first, band.rows, band.stored, band.base);
                let grid = GridUniform::new((nx, ny, pitch), shape, ctx.tuning.global_rows);
                ctx.uniform_buffer("grid", &grid)
            })
            .collect();
        let kernel = |(k, stage): (usize, &Stage)| {
            let source =
                shaders::global_stage(spec, stage, pages, vec4_rows, ctx.tuning.point_block());
            let pipeline = ctx.pipeline(stage.name, &source, "compute");
            let stages = spec.stages.len();
            let band_kernel = |(band, grid): (&Band, &wgpu::Buffer)| {
                let groups = (0..2 * stages as u64)
                    .map(|remap| {
                        (remap % stages as u64 == k as u64).then(|| {
                            let s = StageSlots::of(stages, remap);
                            let named = named.iter().map(|(n, b)| (*n, b));
                            let slots = [
                                ("grid", grid),
                                ("x", &band.slots[s.cur]),
                                ("x0", &band.slots[s.base]),
                                ("x4", &band.slots[s.cur]),
                                ("x0_4", &band.slots[s.base]),
                                ("y", &band.slots[s.out]),
                            ];
                            ctx.bind_declared(&pipeline, named.chain(slots))
                        })
                    })
                    .collect();
                let size = invocations(&ctx, stage.driver, (nx, band.rows));
                BandDispatch {
                    groups,
                    size: ctx.dispatch_size(size),
                }
            };
            StageKernel {
                bands: bands.iter().zip(&grids).map(band_kernel).collect(),
                pipeline,
            }
        };
        let stages = spec.stages.iter().enumerate().map(kernel).collect();
        Ok(Self {
            ctx,
            spec,
            nx,
            ny,
            pitch,
            ghosts: plan.ghosts,
            bands,
            stages,
            remaps: 0,
        })
    }

    /// The bands of rows it runs in: 1 where the whole grid fits a binding.
    pub fn bands(&self) -> usize {
        self.bands.len()
    }

    /// Records remap `remap`: every band's dispatch of its stage.
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, remap: u64) {
        let stages = self.stages.len() as u64;
        let kernel = &self.stages[(remap % stages) as usize];
        pass.set_pipeline(&kernel.pipeline.raw);
        for band in &kernel.bands {
            let group = band.groups[(remap % (2 * stages)) as usize]
                .as_ref()
                .expect("a stage runs at its own remaps");
            pass.set_bind_group(0, group, &[]);
            self.ctx.dispatch(pass, &kernel.pipeline, band.size);
        }
    }

    /// Copies into every band's slot `slot` its ghost rows: below, the last rows of the band
    /// below; above, the first rows of the band above (around the torus).
    fn copy_ghosts(&self, encoder: &mut wgpu::CommandEncoder, slot: usize) {
        let k = self.bands.len();
        let row_bytes = self.pitch as u64 * 4;
        let at = |band: &Band, f: usize, row: u32| {
            (f as u64 * band.stored as u64 + row as u64) * row_bytes
        };
        let size = self.ghosts as u64 * row_bytes;
        for (b, band) in self.bands.iter().enumerate() {
            let (below, above) = (&self.bands[(b + k - 1) % k], &self.bands[(b + 1) % k]);
            let sources = [
                (below, below.rows, 0),
                (above, self.ghosts, self.ghosts + band.rows),
            ];
            for f in 0..self.spec.fields.len() {
                for (from, row, to) in sources {
                    let (source, target) = (&from.slots[slot], &band.slots[slot]);
                    let (row, to) = (at(from, f, row), at(band, f, to));
                    encoder.copy_buffer_to_buffer(source, row, target, to, size);
                }
            }
        }
    }
}

/// The bands of the slots of a grid of `(nx, ny)` points in rows `pitch` cells apart, within
/// `max_binding`; an error naming the sizes where not even bands of a few rows fit.
fn plan_bands(
    ctx: &GpuContext,
    spec: &KernelSpec,
    (nx, ny, pitch): (u32, u32, u32),
    max_binding: u64,
) -> Result<Bands> {
    let fields = spec.fields.len();
    let row_bytes = pitch as u64 * fields as u64 * 4;
    // Rows3 stages read one row either side; a Point stage's window reaches `comm_width`, and
    // its runs of rows read a window past a band's last row.
    let point = spec.stages.iter().any(|s| s.driver == Driver::Point);
    let (ghosts, slack) = match point {
        true => (spec.comm_width.max(1), ctx.tuning.point_block().y - 1),
        false => (1, 0),
    };
    Bands::plan(ny, row_bytes, (ghosts, slack), max_binding).ok_or_else(|| {
        let what = format!("a {nx}x{ny} global grid of {fields} field(s), even in bands of {ghosts} row(s),");
        let band = (3 * ghosts + slack) as u64 * row_bytes;
        match ctx.check_binding_within(&what, band, max_binding) {
            Err(e) => e,
            Ok(()) => Error::TooLarge(format!(
                "a {nx}x{ny} global grid splits into no bands of at least {ghosts} rows within {} MiB per storage binding: use fewer PEs or a smaller n",
                max_binding >> 20
            )),
        }
    })
}

/// Every band's SRAM slots, each holding the state at its rows, ghost rows and slack (zero),
/// planes `pitch * stored` cells apart.
fn upload_bands(
    ctx: &GpuContext,
    state: &[GlobalField],
    pitch: u32,
    plan: &Bands,
    stages: usize,
) -> Result<Vec<Band>> {
    let (nx, ny) = (state[0].nx as usize, state[0].ny);
    let upload = |&(first, rows): &(u32, u32)| {
        let (stored, base) = (plan.stored(rows), (first + ny - plan.ghosts) % ny);
        let mut initial = vec![0.0; pitch as usize * stored as usize * state.len()];
        let held = rows + 2 * plan.ghosts;
        for (plane, field) in initial
            .chunks_exact_mut(pitch as usize * stored as usize)
            .zip(state)
        {
            for (s, row) in plane
                .chunks_exact_mut(pitch as usize)
                .take(held as usize)
                .enumerate()
            {
                let y = (base + s as u32) % ny;
                row[..nx].copy_from_slice(&field.data[y as usize * nx..][..nx]);
            }
        }
        let slots = (0..StageSlots::count(stages))
            .map(|slot| ctx.storage_buffer(&format!("global slot {slot}"), &initial))
            .collect::<Result<_>>()?;
        Ok(Band {
            first,
            rows,
            stored,
            base,
            slots,
        })
    };
    plan.spans.iter().map(upload).collect()
}

/// Invocations of a stage of `driver` over an `nx` by `ny` grid: blocks of 8 columns by the
/// tuning's `global_rows` for Rows3, its Point block otherwise.
fn invocations(ctx: &GpuContext, driver: Driver, (nx, ny): (u32, u32)) -> u64 {
    let block = match driver {
        Driver::Rows3 => glam::UVec2::new(BLOCK_COLS, ctx.tuning.global_rows),
        Driver::Point => ctx.tuning.point_block(),
    };
    (nx as u64).div_ceil(block.x as u64) * (ny as u64).div_ceil(block.y as u64)
}

impl Simulator for GpuGlobal {
    fn advance(&mut self, steps: u64) -> Result<()> {
        let points = self.nx as u64 * self.ny as u64;
        let stages = self.stages.len();
        let remaps = steps * stages as u64;
        match self.bands.len() {
            1 => self
                .ctx
                .run_steps(self.remaps, remaps, points, |pass, remap| {
                    self.record(pass, remap)
                }),
            _ => self
                .ctx
                .run_commands(self.remaps, remaps, points, |encoder, remap| {
                    self.record(&mut encoder.begin_compute_pass(&Default::default()), remap);
                    self.copy_ghosts(encoder, StageSlots::of(stages, remap).out);
                }),
        }?;
        self.remaps += remaps;
        Ok(())
    }

    fn step(&self) -> u64 {
        self.remaps / self.stages.len() as u64
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        let slot = StageSlots::state(self.step());
        let (nx, pitch) = (self.nx as usize, self.pitch as usize);
        let mut fields = vec![Vec::with_capacity(nx * self.ny as usize); self.spec.fields.len()];
        for band in &self.bands {
            let data: Vec<f32> = self.ctx.read_buffer(&band.slots[slot])?;
            for (field, plane) in fields
                .iter_mut()
                .zip(data.chunks(pitch * band.stored as usize))
            {
                let rows = plane
                    .chunks(pitch)
                    .skip(self.ghosts as usize)
                    .take(band.rows as usize);
                field.extend(rows.flat_map(|row| &row[..nx]));
            }
        }
        Ok(fields
            .into_iter()
            .map(|data| GlobalField {
                nx: self.nx,
                ny: self.ny,
                data,
            })
            .collect())
    }

    fn describe(&self) -> String {
        let bands = match self.bands() {
            1 => String::new(),
            k => format!(" in {k} bands of rows (a whole grid exceeds one storage binding)"),
        };
        format!("global-grid kernel{bands} on {}", self.ctx.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_the_fewest_that_fit_and_hold_their_ghosts() {
        let whole = Bands::plan(10, 8, (1, 3), 80).unwrap();
        assert_eq!(
            (whole.spans, whole.ghosts, whole.slack),
            (vec![(0, 10)], 0, 0)
        );
        // 79 bytes hold 9 rows: 4 of a band's own besides 2 ghosts and 3 slack.
        let split = Bands::plan(10, 8, (1, 3), 79).unwrap();
        assert_eq!(split.spans, [(0, 3), (3, 3), (6, 4)]);
        assert_eq!(split.stored(4), 9);
        // No row of its own beside its ghosts and slack.
        assert_eq!(Bands::plan(10, 8, (1, 3), 5 * 8), None);
        // Bands of 2 rows but one, which would need its ghosts from two bands.
        assert_eq!(Bands::plan(7, 1, (2, 0), 6), None);
    }
}
