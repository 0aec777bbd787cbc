//! How the GPU kernels are shaped for one adapter: the measured choices that differ between a
//! CPU adapter (lavapipe) and a GPU, in one place. `WAFER_EMU_TUNING` overrides them for an
//! experiment without a rebuild, e.g. `WAFER_EMU_TUNING=tile_kib=8,wafer_rows=4`.

use super::adapter::AdapterSummary;
use super::context::WORKGROUP;
use super::uniforms::BLOCK_COLS;
use crate::{invalid, Result};

/// The environment variable that overrides the tuning.
pub const TUNING_VAR: &str = "WAFER_EMU_TUNING";

/// Rows an invocation may walk, for either kernel.
const MAX_ROWS: u32 = 64;
/// Rows a direct-read invocation may walk: time blocks in registers walk them too, after the
/// `2 K` rows below them that their levels need.
const MAX_DIRECT_ROWS: u32 = 256;
/// Rows a Point stage's run may go along (its window holds them all).
const MAX_POINT_ROWS: u32 = 16;
/// The keys of `WAFER_EMU_TUNING`, for messages.
const KEYS: &str = "tile_kib, wafer_rows, wafer_cols, global_rows, sendrecv_cells, copy, fused_invocations, fused_rows, fused_cols, fused, direct_cols, direct_rows, direct_grid, point_rows, block_rows, block_lanes";

/// A column count that is 1 or a whole block ([`BLOCK_COLS`]).
fn one_or_block(key: &str, value: &str) -> Result<u32> {
    match value.parse::<u32>() {
        Ok(c) if c == 1 || c == BLOCK_COLS => Ok(c),
        _ => Err(invalid!(
            "{TUNING_VAR}: {key} = '{value}': allowed 1 or {BLOCK_COLS}"
        )),
    }
}

/// The value that `key = value` names among `choices`.
fn choice<T: Copy, const N: usize>(key: &str, value: &str, choices: [(&str, T); N]) -> Result<T> {
    let found = choices.iter().find(|(name, _)| *name == value);
    found.map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        invalid!(
            "{TUNING_VAR}: {key} = '{value}': allowed {}",
            names.join(", ")
        )
    })
}

/// The subgroup size of `block_lanes=VALUE` on `adapter`: `on`, where its subgroups have one
/// size that divides the workgroup, or `off`.
fn block_lanes(value: &str, adapter: &AdapterSummary) -> Result<Option<u32>> {
    let info = &adapter.info;
    let (lo, hi) = (info.subgroup_min_size, info.subgroup_max_size);
    let fixed = adapter.features.contains(wgpu::Features::SUBGROUP)
        && lo == hi
        && WORKGROUP.is_multiple_of(lo);
    match choice("block_lanes", value, [("on", true), ("off", false)])? {
        false => Ok(None),
        true if fixed => Ok(Some(lo)),
        true => Err(invalid!(
            "{TUNING_VAR}: block_lanes = 'on': {} has {}; allowed off",
            info.name,
            match adapter.features.contains(wgpu::Features::SUBGROUP) {
                true =>
                    format!("subgroups of {lo} to {hi} lanes, not one size dividing {WORKGROUP}"),
                false => "no subgroup operations".into(),
            }
        )),
    }
}

/// Most cells of a comm line one sendrecv invocation may copy.
const MAX_SENDRECV_CELLS: u32 = 1 << 16;

/// The order in which the copy kernel (the bandwidth ceiling) copies its vec4s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyOrder {
    /// Four adjacent vec4s per invocation (`copy_runs`).
    Runs,
    /// Neighbouring invocations copy neighbouring vec4s (`copy_interleaved`).
    Interleaved,
}

impl CopyOrder {
    /// The entry point of `shaders/copy.wgsl`.
    pub fn entry(self) -> &'static str {
        match self {
            Self::Runs => "copy_runs",
            Self::Interleaved => "copy_interleaved",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Runs => "runs",
            Self::Interleaved => "interleaved",
        }
    }
}

/// Where heat's direct reads keep the owned points ([`Tuning::direct_grid`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectGrid {
    /// One dense grid per wafer (`src/engine/gpu/layout.rs`).
    Dense,
    /// Table 3's blocks, comm cells and all.
    Table3,
}

impl DirectGrid {
    fn name(self) -> &'static str {
        match self {
            Self::Dense => "dense",
            Self::Table3 => "table3",
        }
    }
}

/// The shapes of the kernels on one adapter; the measurements behind each default are in
/// `docs/performance.md` ("The tuning's defaults").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Workgroup memory a fused tile takes: all the adapter offers on a CPU adapter; on a GPU
    /// at most 16 KiB, so that several workgroups share a multiprocessor (less starves the
    /// time blocks of room).
    pub tile_bytes: u32,
    /// Rows each wafer compute invocation walks with its rolling window. On a CPU adapter one
    /// SIMD group of invocations runs all its rows and the window saves reloading them: 32. A
    /// GPU wants invocations in flight instead: 1.
    pub wafer_rows: u32,
    /// Columns each wafer compute invocation of a Rows3 stage updates: `BLOCK_COLS` (8, a
    /// rolling window of 10 values per row; neighbouring invocations 8 columns apart) or 1
    /// (3 values per row, neighbouring invocations on neighbouring columns, whose loads
    /// coalesce on a GPU, yet 8 ran faster there too).
    pub wafer_cols: u32,
    /// Rows each global-kernel invocation walks. On a CPU adapter one SIMD group runs all its
    /// rows before the next one starts, so more rows reuse more of the window, once the vec4
    /// rows are skewed (`src/engine/gpu/global.rs`) so that they do not share cache sets: 64. On a
    /// GPU 8.
    pub global_rows: u32,
    /// Cells of a comm line (a strip's row or column) each sendrecv invocation copies, or
    /// `None`: a PE's whole comm layer. A GPU wants every cell in flight: one (a PE per
    /// invocation leaves few invocations of many dependent copies at large `n`). A CPU
    /// adapter runs a PE per SIMD lane, where splitting lines costs index arithmetic and
    /// divergent branches.
    pub sendrecv_cells: Option<u32>,
    /// The copy kernel's order: interleaved on a GPU (coalesced), runs on a CPU adapter (whole
    /// cache lines per lane).
    pub copy: CopyOrder,
    /// Invocations of a fused (and time-block) workgroup: 64 everywhere so far.
    pub fused_invocations: u32,
    /// Tile rows each fused Rows3 invocation walks with its rolling window (4).
    pub fused_rows: u32,
    /// Columns each fused or time-block invocation moves between the SRAM and its tile and
    /// computes at a time: 8 (straight-line runs, which lavapipe's compiler needs, and faster
    /// on a GPU too) or 1 (neighbouring invocations on neighbouring columns).
    pub fused_cols: u32,
    /// The fused engine reads a stage's window from its workgroup tile (`false`), or straight
    /// from the owned cells of whichever PEs hold it (`true`, `fused=direct`: no workgroup
    /// memory and no barrier, the faster everywhere measured).
    pub fused_direct: bool,
    /// Columns each direct-read invocation of a Rows3 stage computes: 8 (a rolling window of
    /// 10 values per row, neighbouring invocations 8 columns apart, reading the dense grid
    /// (`direct_grid`) by vec4s where the wafer's width is a multiple of 4: a CPU adapter's
    /// SIMD lanes) or 1 (neighbouring invocations on neighbouring columns, whose loads
    /// coalesce: a GPU's). A Point stage's direct-read invocations then take runs of 16
    /// points, or single points, along `point_rows` rows ([`Tuning::point_block`]); with runs
    /// the dense grid too, and the points by the wafer's low edges read the links
    /// (`compute_edges`), where single points leave link bands of one PE to Table 3's
    /// `sendrecv` and `compute`.
    pub direct_cols: u32,
    /// Rows each direct-read invocation of a Rows3 stage walks: 64 on a CPU adapter (one SIMD
    /// group reuses its window down them), 4 on a GPU (invocations in flight). Heat's time
    /// blocks in registers walk as many rows per block, after the `2 K` rows below them: the
    /// blocks across lanes want 64 or more (with 4 they would load 14 rows for 4 at K = 5).
    pub direct_rows: u32,
    /// Where heat's direct reads without time blocks keep the owned points: one dense grid per
    /// wafer (`direct_grid=dense`: a row runs on across the PEs, so neighbouring columns are
    /// neighbouring cells at every `n`; vec4 reads by blocks of 8 columns need it) or Table
    /// 3's blocks (`direct_grid=table3`: a PE's owned row is `n` cells between its comm cells,
    /// so at n = 2 a GPU subgroup's 32 columns touch 16 PEs' blocks). Dense by default, the
    /// same bits. Time blocks in registers and shallow water's runs keep the dense grid
    /// whatever this says, shallow water's single points Table 3's.
    pub direct_grid: DirectGrid,
    /// Rows a Point stage's run goes along, in the global kernel and the direct reads
    /// ([`Tuning::point_block`]): 3 on a CPU adapter; 1 on a GPU.
    pub point_rows: u32,
    /// Tile rows each time-block Rows3 invocation walks per remap (16).
    pub block_rows: u32,
    /// Lanes of the subgroups that carry heat's time blocks in registers, one column each,
    /// the window's columns left of a lane taken from the lanes left of it by subgroup
    /// shuffles (`shaders/wafer_blocked_lanes.wgsl`): a GPU's shape of those blocks, whose
    /// neighbouring invocations load neighbouring points, by `direct_rows` rows; `None`
    /// (`block_lanes=off`, the default everywhere): each invocation walks 8 columns by vec4s,
    /// where `direct_cols` is 8. `block_lanes=on` takes the adapter's subgroup size, which
    /// must be fixed and divide the workgroup, whose subgroups are then full (as on NVIDIA,
    /// 32, and lavapipe, 8).
    pub block_lanes: Option<u32>,
}

impl Tuning {
    /// The measured defaults for `adapter`, with the overrides of `WAFER_EMU_TUNING` if set.
    pub fn of(adapter: &AdapterSummary) -> Result<Self> {
        let tuning = Self::default_for(adapter);
        match std::env::var(TUNING_VAR) {
            Ok(spec) => tuning.overridden(&spec, adapter),
            Err(_) => Ok(tuning),
        }
    }

    /// The measured defaults for `adapter`.
    pub fn default_for(adapter: &AdapterSummary) -> Self {
        let workgroup_bytes = adapter.limits.max_compute_workgroup_storage_size;
        match adapter.is_software() {
            true => Self::cpu_adapter(workgroup_bytes),
            false => Self::gpu(workgroup_bytes),
        }
    }

    /// A CPU adapter's (lavapipe's) shapes, with `workgroup_bytes` of workgroup memory.
    pub fn cpu_adapter(workgroup_bytes: u32) -> Self {
        Self {
            tile_bytes: workgroup_bytes,
            wafer_rows: 32,
            wafer_cols: BLOCK_COLS,
            global_rows: 64,
            sendrecv_cells: None,
            copy: CopyOrder::Runs,
            fused_invocations: 64,
            fused_rows: 4,
            fused_cols: BLOCK_COLS,
            fused_direct: true,
            direct_cols: BLOCK_COLS,
            direct_rows: 64,
            direct_grid: DirectGrid::Dense,
            point_rows: 3,
            block_rows: 16,
            block_lanes: None,
        }
    }

    /// A GPU's shapes, with `workgroup_bytes` of workgroup memory.
    pub fn gpu(workgroup_bytes: u32) -> Self {
        Self {
            tile_bytes: workgroup_bytes.min(16 << 10),
            wafer_rows: 1,
            sendrecv_cells: Some(1),
            copy: CopyOrder::Interleaved,
            global_rows: 8,
            direct_cols: 1,
            direct_rows: 4,
            point_rows: 1,
            ..Self::cpu_adapter(workgroup_bytes)
        }
    }

    /// This tuning with the comma-separated `key=value` overrides of `spec` (the keys of
    /// [`Tuning::line`]).
    pub fn overridden(mut self, spec: &str, adapter: &AdapterSummary) -> Result<Self> {
        let limits = &adapter.limits;
        let most_kib = limits.max_compute_workgroup_storage_size >> 10;
        let most_invocations = limits.max_compute_invocations_per_workgroup;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| {
                    invalid!("{TUNING_VAR}: '{item}' is not key=value (keys: {KEYS})")
                })?;
            let number = |lo: u32, hi: u32| -> Result<u32> {
                value
                    .parse::<u32>()
                    .ok()
                    .filter(|v| (lo..=hi).contains(v))
                    .ok_or_else(|| {
                        invalid!(
                            "{TUNING_VAR}: {key} = '{value}': allowed {lo} to {hi} on {}",
                            adapter.info.name
                        )
                    })
            };
            match key {
                "tile_kib" => self.tile_bytes = number(1, most_kib)? << 10,
                "wafer_rows" => self.wafer_rows = number(1, MAX_ROWS)?,
                "wafer_cols" => self.wafer_cols = one_or_block(key, value)?,
                "global_rows" => self.global_rows = number(1, MAX_ROWS)?,
                "fused_invocations" => self.fused_invocations = number(1, most_invocations)?,
                "fused_rows" => self.fused_rows = number(1, MAX_ROWS)?,
                "fused_cols" => self.fused_cols = one_or_block(key, value)?,
                "fused" => self.fused_direct = choice(key, value, [("tile", false), ("direct", true)])?,
                "direct_cols" => self.direct_cols = one_or_block(key, value)?,
                "direct_rows" => self.direct_rows = number(1, MAX_DIRECT_ROWS)?,
                "direct_grid" => {
                    let grids = [("dense", DirectGrid::Dense), ("table3", DirectGrid::Table3)];
                    self.direct_grid = choice(key, value, grids)?
                }
                "point_rows" => self.point_rows = number(1, MAX_POINT_ROWS)?,
                "block_rows" => self.block_rows = number(1, MAX_ROWS)?,
                "block_lanes" => self.block_lanes = block_lanes(value, adapter)?,
                "sendrecv_cells" if value == "pe" => self.sendrecv_cells = None,
                "sendrecv_cells" => {
                    self.sendrecv_cells = Some(number(1, MAX_SENDRECV_CELLS).map_err(|_| {
                        invalid!("{TUNING_VAR}: sendrecv_cells = '{value}': allowed pe or 1 to {MAX_SENDRECV_CELLS}")
                    })?)
                }
                "copy" => {
                    let orders = [("runs", CopyOrder::Runs), ("interleaved", CopyOrder::Interleaved)];
                    self.copy = choice(key, value, orders)?
                }
                other => {
                    return Err(invalid!(
                        "{TUNING_VAR}: unknown key '{other}': allowed {KEYS}"
                    ))
                }
            }
        }
        Ok(self)
    }

    /// Points along a row, and rows, that an invocation of a Point stage computes, in the
    /// global kernel and the fused engine's direct reads (`POINT_RUN` and `POINT_ROWS`,
    /// composed into `shaders/global_point.wgsl` and `shaders/wafer_point_direct.wgsl`): a run
    /// of 16 where they go by blocks of columns (`direct_cols=8`), one point where they go by
    /// single columns (a GPU's, whose neighbouring invocations' loads coalesce), along
    /// `point_rows` rows, sliding the window along them (`shaders/point_window.wgsl`).
    /// Shallow water 1024^2 on lavapipe, the direct reads before their window slid, ran runs
    /// of 16 ahead of 8 at n = 8, 16 and 64, level at n = 2, and 32 behind 16 at n = 64. Runs
    /// along several rows load each window row once for all of them (`bench --profile`,
    /// alternating runs): the global kernel's step along 2 / 4 / 8 rows took 0.89 / 0.82 to
    /// 0.87 / 1.2 of its time along 1 row (runs of 8 along 4 rows: 0.94), along 3 rows as long
    /// as along 4 and 0.95 of along 2; the fused engine's step at n = 2, 8 and 32 along 2 rows
    /// 0.87 to 0.92 of along 1, along 4 rows 0.94 to 0.99 (the predictor's registers spill),
    /// along 3 rows 0.94 to 0.97 of along 2.
    pub fn point_block(&self) -> glam::UVec2 {
        let run = if self.direct_cols == 1 { 1 } else { 16 };
        glam::UVec2::new(run, self.point_rows)
    }

    /// One line for reports, in the override syntax.
    pub fn line(&self) -> String {
        format!(
            "tile_kib={},wafer_rows={},wafer_cols={},global_rows={},sendrecv_cells={},copy={},fused_invocations={},fused_rows={},fused_cols={},fused={},direct_cols={},direct_rows={},direct_grid={},point_rows={},block_rows={},block_lanes={}",
            self.tile_bytes >> 10,
            self.wafer_rows,
            self.wafer_cols,
            self.global_rows,
            self.sendrecv_cells
                .map_or("pe".to_string(), |c| c.to_string()),
            self.copy.name(),
            self.fused_invocations,
            self.fused_rows,
            self.fused_cols,
            if self.fused_direct { "direct" } else { "tile" },
            self.direct_cols,
            self.direct_rows,
            self.direct_grid.name(),
            self.point_rows,
            self.block_rows,
            if self.block_lanes.is_some() { "on" } else { "off" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(device_type: wgpu::DeviceType, workgroup_kib: u32) -> AdapterSummary {
        AdapterSummary {
            info: wgpu::AdapterInfo {
                name: "test adapter".into(),
                subgroup_min_size: 32,
                subgroup_max_size: 32,
                ..wgpu::AdapterInfo::new(device_type, wgpu::Backend::Vulkan)
            },
            limits: wgpu::Limits {
                max_compute_workgroup_storage_size: workgroup_kib << 10,
                ..wgpu::Limits::default()
            },
            features: wgpu::Features::SUBGROUP,
        }
    }

    #[test]
    fn a_gpu_and_a_cpu_adapter_get_their_measured_shapes() {
        let gpu = Tuning::default_for(&adapter(wgpu::DeviceType::DiscreteGpu, 48));
        assert_eq!(
            gpu.line(),
            "tile_kib=16,wafer_rows=1,wafer_cols=8,global_rows=8,sendrecv_cells=1,copy=interleaved,fused_invocations=64,fused_rows=4,fused_cols=8,fused=direct,direct_cols=1,direct_rows=4,direct_grid=dense,point_rows=1,block_rows=16,block_lanes=off"
        );
        let cpu = Tuning::default_for(&adapter(wgpu::DeviceType::Cpu, 32));
        assert_eq!(
            cpu.line(),
            "tile_kib=32,wafer_rows=32,wafer_cols=8,global_rows=64,sendrecv_cells=pe,copy=runs,fused_invocations=64,fused_rows=4,fused_cols=8,fused=direct,direct_cols=8,direct_rows=64,direct_grid=dense,point_rows=3,block_rows=16,block_lanes=off"
        );
    }

    #[test]
    fn overrides_apply_and_their_own_line_reads_back() {
        let a = adapter(wgpu::DeviceType::DiscreteGpu, 48);
        let t = Tuning::default_for(&a)
            .overridden(
                " tile_kib=48, wafer_rows=4,wafer_cols=1,copy=runs,sendrecv_cells=pe,fused_invocations=256,fused=tile,direct_rows=2,direct_grid=table3,point_rows=5,block_rows = 2,block_lanes=on",
                &a,
            )
            .unwrap();
        assert_eq!(
            t.line(),
            "tile_kib=48,wafer_rows=4,wafer_cols=1,global_rows=8,sendrecv_cells=pe,copy=runs,fused_invocations=256,fused_rows=4,fused_cols=8,fused=tile,direct_cols=1,direct_rows=2,direct_grid=table3,point_rows=5,block_rows=2,block_lanes=on"
        );
        assert_eq!(
            Tuning::default_for(&a).overridden(&t.line(), &a).unwrap(),
            t
        );
        assert_eq!(t.block_lanes, Some(32));
    }

    #[test]
    fn bad_overrides_name_the_value_and_the_range() {
        let a = adapter(wgpu::DeviceType::DiscreteGpu, 48);
        let t = Tuning::default_for(&a);
        for (spec, says) in [
            ("tile_kib=64", "tile_kib = '64': allowed 1 to 48"),
            ("wafer_rows=0", "wafer_rows = '0': allowed 1 to 64"),
            ("global_rows=x", "global_rows = 'x': allowed 1 to 64"),
            ("copy=fast", "copy = 'fast': allowed runs, interleaved"),
            ("wafer_cols=4", "wafer_cols = '4': allowed 1 or 8"),
            ("fused_cols=x", "fused_cols = 'x': allowed 1 or 8"),
            ("fused=tiles", "fused = 'tiles': allowed tile, direct"),
            ("direct_cols=2", "direct_cols = '2': allowed 1 or 8"),
            ("direct_rows=257", "direct_rows = '257': allowed 1 to 256"),
            ("point_rows=0", "point_rows = '0': allowed 1 to 16"),
            (
                "sendrecv_cells=0",
                "sendrecv_cells = '0': allowed pe or 1 to 65536",
            ),
            (
                "fused_invocations=2000",
                "fused_invocations = '2000': allowed 1 to 256",
            ),
            ("block_lanes=32", "block_lanes = '32': allowed on, off"),
            (
                "direct_grid=sparse",
                "direct_grid = 'sparse': allowed dense, table3",
            ),
            ("rows=2", "unknown key 'rows'"),
            ("tile_kib", "'tile_kib' is not key=value"),
        ] {
            let e = t.overridden(spec, &a).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
        let mut varying = adapter(wgpu::DeviceType::DiscreteGpu, 48);
        varying.info.subgroup_min_size = 4;
        varying.info.subgroup_max_size = 128;
        let mut without = adapter(wgpu::DeviceType::DiscreteGpu, 48);
        without.features = wgpu::Features::empty();
        for (a, says) in [
            (
                varying,
                "has subgroups of 4 to 128 lanes, not one size dividing 64; allowed off",
            ),
            (without, "has no subgroup operations; allowed off"),
        ] {
            let e = t.overridden("block_lanes=on", &a).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }
}
