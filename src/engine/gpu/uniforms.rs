//! Uniform blocks, laid out as the structs of `shaders/common.wgsl`.

use bytemuck::{Pod, Zeroable};

use super::layout::SramLayout;
use crate::cluster::{ClusterGeometry, Direction};
use crate::model::Problem;

/// Columns each compute invocation updates (`BLOCK_COLS` in `shaders/rows3_block.wgsl`,
/// which spells the block out in its `Window`; a test checks that the two agree).
pub const BLOCK_COLS: u32 = 8;

/// `struct Wafer`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct WaferUniform {
    pes_x: u32,
    pes_y: u32,
    n: u32,
    w: u32,
    stride: u32,
    block: u32,
    rows_per_thread: u32,
    plane: u32,
    nx: u32,
    ny: u32,
    stages: u32,
    shift_per_step: u32,
    pitch: u32,
    first: u32,
    pe_col: u32,
    pe_row: u32,
    partial: [u32; 4],
    region: u32,
    pad: [u32; 3],
}

impl WaferUniform {
    /// The wafers of `problem` whose SRAM buffers hold `plane` cells per field, their blocks
    /// laid out as `layout` says, time blocks' regions `region` points from the low edges.
    pub fn new(
        problem: &Problem,
        plane: u64,
        (rows_per_thread, region): (u32, u32),
        layout: &SramLayout,
    ) -> Self {
        let (g, spec) = (problem.cluster.wafer, problem.spec());
        let glam::UVec2 { x: nx, y: ny } = problem.geometry.global_size();
        let mut partial = [0; 4];
        for (k, p) in partial.iter_mut().enumerate().take(spec.stages.len()) {
            *p = spec.shift_after(k as u64) as u32;
        }
        Self {
            pes_x: g.pes_x,
            pes_y: g.pes_y,
            n: g.n,
            w: g.w(),
            stride: g.stride(),
            block: g.block_cells() as u32,
            rows_per_thread,
            plane: plane as u32,
            nx,
            ny,
            stages: spec.stages.len() as u32,
            shift_per_step: spec.shift_per_step(),
            pitch: layout.pitch,
            first: layout.first,
            pe_col: layout.pe_step.x,
            pe_row: layout.pe_step.y,
            partial,
            region,
            pad: [0; 3],
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
    plane: u32,
    pitch: u32,
    first: u32,
    rows: u32,
    shift: u32,
}

impl GridUniform {
    /// A grid of `nx x ny` points whose band of rows `first .. first + rows` is computed from
    /// buffers of `stored` rows `pitch` cells apart, whose row 0 holds global row `base`.
    pub fn new(
        (nx, ny, pitch): (u32, u32, u32),
        (first, rows, stored, base): (u32, u32, u32, u32),
        rows_per_thread: u32,
    ) -> Self {
        Self {
            nx,
            ny,
            rows_per_thread,
            plane: pitch * stored,
            pitch,
            first,
            rows,
            shift: ny - base,
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
    fields: u32,
    pad: [u32; 3],
}

impl ClusterUniform {
    pub fn new(c: &ClusterGeometry, ring: u32, fields: usize, layout: &SramLayout) -> Self {
        let glam::UVec2 {
            x: width,
            y: height,
        } = c.wafer_points();
        Self {
            wafers_x: c.wafers_x,
            wafers_y: c.wafers_y,
            width,
            height,
            ring,
            up_cells: c.package_cells(Direction::Up) as u32,
            right_cells: c.package_cells(Direction::Right) as u32,
            wafer_cells: layout.wafer_cells() as u32,
            fields: fields as u32,
            pad: [0; 3],
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gpu::shaders;
    use crate::kernels::KernelKind;
    use std::mem::{offset_of, size_of};

    /// Every uniform and parameter struct has the size and member offsets of its WGSL twin.
    #[test]
    fn uniform_structs_match_their_wgsl_twins() {
        let sendrecv = shaders::cluster_sendrecv(1, true);
        let point = |kind: KernelKind| {
            let spec = kind.spec();
            shaders::wafer_stage(
                spec,
                &spec.stages[0],
                crate::engine::gpu::constants::Pages::ONE,
            )
        };
        type Case<'a> = (String, &'a str, usize, Vec<(&'a str, usize)>);
        let cases: Vec<Case> = vec![
            (
                sendrecv.clone(),
                "Wafer",
                size_of::<WaferUniform>(),
                vec![
                    ("n", offset_of!(WaferUniform, n)),
                    ("plane", offset_of!(WaferUniform, plane)),
                    ("nx", offset_of!(WaferUniform, nx)),
                    ("pitch", offset_of!(WaferUniform, pitch)),
                    ("pe_row", offset_of!(WaferUniform, pe_row)),
                    ("partial", offset_of!(WaferUniform, partial)),
                    ("region", offset_of!(WaferUniform, region)),
                ],
            ),
            (
                sendrecv.clone(),
                "Cluster",
                size_of::<ClusterUniform>(),
                vec![
                    ("ring", offset_of!(ClusterUniform, ring)),
                    ("wafer_cells", offset_of!(ClusterUniform, wafer_cells)),
                    ("fields", offset_of!(ClusterUniform, fields)),
                ],
            ),
            (
                sendrecv.clone(),
                "Dispatch",
                size_of::<DispatchUniform>(),
                vec![
                    ("step", offset_of!(DispatchUniform, step)),
                    ("pes", offset_of!(DispatchUniform, pes)),
                ],
            ),
            (
                shaders::global_stage(
                    KernelKind::Heat5.spec(),
                    &KernelKind::Heat5.spec().stages[0],
                    crate::engine::gpu::constants::Pages::ONE,
                    false,
                    glam::UVec2::ONE,
                ),
                "Grid",
                size_of::<GridUniform>(),
                vec![
                    ("plane", offset_of!(GridUniform, plane)),
                    ("pitch", offset_of!(GridUniform, pitch)),
                    ("first", offset_of!(GridUniform, first)),
                    ("rows", offset_of!(GridUniform, rows)),
                    ("shift", offset_of!(GridUniform, shift)),
                ],
            ),
        ];
        let kernels = KernelKind::ALL.into_iter().map(|kind| {
            let (size, members) = (kind.spec().params_layout)();
            (point(kind), "Params", size, members)
        });
        for (source, name, size, members) in cases.into_iter().chain(kernels) {
            let (span, offsets) = crate::engine::gpu::reflect::struct_layout(&source, name)
                .unwrap_or_else(|| panic!("no struct {name}"));
            assert_eq!(span as usize, size, "size of {name}");
            for (member, offset) in members {
                let wgsl = offsets.iter().find(|(m, _)| m == member);
                assert_eq!(
                    wgsl.map(|(_, o)| *o as usize),
                    Some(offset),
                    "{name}.{member}"
                );
            }
            assert!(offsets.windows(2).all(|o| o[0].1 < o[1].1));
        }
    }
}
