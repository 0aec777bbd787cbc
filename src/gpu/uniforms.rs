//! Uniform blocks, laid out as the structs of `shaders/common.wgsl`.

use bytemuck::{Pod, Zeroable};

use crate::cluster::{ClusterGeometry, Direction};
use crate::kernels::Weights;
use crate::wafer::WaferGeometry;

/// Rows each compute invocation walks with its rolling window.
pub const ROWS_PER_THREAD: u32 = 32;
/// Columns each compute invocation updates (`BLOCK_COLS` in `shaders/stencil_block.wgsl`,
/// which spells the block out in its `Window`; a test checks that the two agree).
pub const BLOCK_COLS: u32 = 8;

/// `struct Wafer`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct WaferUniform {
    pes_x: u32,
    pes_y: u32,
    n: u32,
    p: u32,
    w: u32,
    stride: u32,
    block: u32,
    rows_per_thread: u32,
}

impl WaferUniform {
    pub fn new(g: &WaferGeometry) -> Self {
        Self {
            pes_x: g.pes_x,
            pes_y: g.pes_y,
            n: g.n,
            p: g.p,
            w: g.w(),
            stride: g.stride(),
            block: g.block_cells() as u32,
            rows_per_thread: ROWS_PER_THREAD,
        }
    }
}

/// `struct Grid`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct GridUniform {
    nx: u32,
    ny: u32,
    rows_per_thread: u32,
    pad: u32,
}

impl GridUniform {
    pub fn new(nx: u32, ny: u32) -> Self {
        Self {
            nx,
            ny,
            rows_per_thread: ROWS_PER_THREAD,
            pad: 0,
        }
    }
}

/// `struct Weights`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct WeightsUniform {
    rows: [[f32; 4]; 3],
}

impl WeightsUniform {
    pub fn new(w: &Weights) -> Self {
        Self {
            rows: w.rows.map(|[a, b, c]| [a, b, c, 0.0]),
        }
    }
}

/// `struct Cluster`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ClusterUniform {
    wafers_x: u32,
    wafers_y: u32,
    width: u32,
    height: u32,
    ring: u32,
    up_cells: u32,
    right_cells: u32,
    wafer_cells: u32,
}

impl ClusterUniform {
    pub fn new(c: &ClusterGeometry, ring: u32) -> Self {
        let (width, height) = c.wafer_points();
        Self {
            wafers_x: c.wafers_x,
            wafers_y: c.wafers_y,
            width,
            height,
            ring,
            up_cells: c.package_cells(Direction::Up) as u32,
            right_cells: c.package_cells(Direction::Right) as u32,
            wafer_cells: c.wafer.sram_cells() as u32,
        }
    }
}

/// `struct Dispatch`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct DispatchUniform {
    pub first: u32,
    pub count: u32,
    pub step: u32,
    pub pad: u32,
    /// PE rectangle `[x0, x1) x [y0, y1)` as `[x0, y0, x1, y1]`.
    pub pes: [u32; 4],
}
