//! The cluster: `Kx x Ky` wafers on a 2D torus joined by links (docs/design.md, section 4).
//!
//! Every wafer has two outgoing links, right and up; nothing flows left or down. A wafer's
//! local frame runs over `[0, W) x [0, H)` points (`W = Ww*n`, `H = Wh*n`). Its comm layers
//! reach `w` points past its low sides: the left halo `[-w, 0) x [-w, H)` (corner included)
//! arrives on the right link of the wafer to its left, the lower halo `[0, W) x [-w, 0)` on the
//! up link of the wafer below. The corner belongs to the wafer below-left; it travels up to the
//! left wafer and is forwarded from there (Table 3's corner forwarding).

pub mod host_link;
pub mod link;
pub mod package;
pub mod schedule;

use crate::field::GlobalField;
use crate::wafer::WaferGeometry;
use crate::{invalid, Result};
use glam::UVec2;

pub use link::{Direction, LinkConfig, LinkId, LinkSpec, LinkStats, LinkTable};
pub use schedule::{Round, Scheduler};

/// Largest number of wafers along one side of the cluster.
pub const MAX_WAFERS: u32 = 16;

/// Shape of a cluster: wafer counts and the shape of each (identical) wafer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterGeometry {
    pub wafers_x: u32,
    pub wafers_y: u32,
    pub wafer: WaferGeometry,
}

impl From<WaferGeometry> for ClusterGeometry {
    /// One wafer whose links join its opposite edges.
    fn from(wafer: WaferGeometry) -> Self {
        Self {
            wafers_x: 1,
            wafers_y: 1,
            wafer,
        }
    }
}

impl ClusterGeometry {
    /// Checks the wafer counts and that the whole cluster stays addressable.
    pub fn new(wafers_x: u32, wafers_y: u32, wafer: WaferGeometry) -> Result<Self> {
        for (name, v) in [("wafers along x", wafers_x), ("wafers along y", wafers_y)] {
            if v == 0 || v > MAX_WAFERS {
                return Err(invalid!(
                    "{name} = {v} is out of range: allowed 1..={MAX_WAFERS}"
                ));
            }
        }
        let cluster = Self {
            wafers_x,
            wafers_y,
            wafer,
        };
        cluster.whole()?;
        Ok(cluster)
    }

    /// The cluster's PEs as one wafer (the same grid, no links): what the global engines and
    /// the CPU backend run.
    pub fn whole(&self) -> Result<WaferGeometry> {
        let g = self.wafer;
        let (pes_x, pes_y) = (
            g.pes_x as u64 * self.wafers_x as u64,
            g.pes_y as u64 * self.wafers_y as u64,
        );
        WaferGeometry::new(
            u32::try_from(pes_x).unwrap_or(u32::MAX),
            u32::try_from(pes_y).unwrap_or(u32::MAX),
            g.n,
            g.w,
        )
        .map_err(|e| {
            invalid!(
                "a {}x{} cluster of {}x{} PE wafers is too large as a whole: {e}",
                self.wafers_x,
                self.wafers_y,
                g.pes_x,
                g.pes_y
            )
        })
    }

    /// Number of wafers.
    pub fn count(&self) -> usize {
        self.wafers_x as usize * self.wafers_y as usize
    }

    /// Wafer coordinates of wafer `k` (row-major: `k = wy * Kx + wx`).
    pub fn coords(&self, k: usize) -> UVec2 {
        UVec2::new(
            (k % self.wafers_x as usize) as u32,
            (k / self.wafers_x as usize) as u32,
        )
    }

    /// Index of the wafer at `(wx, wy)` modulo the torus.
    pub fn index(&self, (wx, wy): (i64, i64)) -> usize {
        let x = wx.rem_euclid(self.wafers_x as i64) as usize;
        let y = wy.rem_euclid(self.wafers_y as i64) as usize;
        y * self.wafers_x as usize + x
    }

    /// The wafer one step along `dir` from wafer `k` (where its link in that direction goes).
    pub fn neighbour(&self, k: usize, dir: Direction) -> usize {
        let at = self.coords(k);
        let (dx, dy) = dir.offset();
        self.index((at.x as i64 + dx, at.y as i64 + dy))
    }

    /// The wafer whose link in direction `dir` arrives at wafer `k`.
    pub fn upstream(&self, k: usize, dir: Direction) -> usize {
        let at = self.coords(k);
        let (dx, dy) = dir.offset();
        self.index((at.x as i64 - dx, at.y as i64 - dy))
    }

    /// The link arriving at wafer `k` travelling in direction `dir` (from the left for
    /// `Right`, from below for `Up`).
    pub fn incoming(&self, k: usize, dir: Direction) -> LinkId {
        LinkId {
            from: self.upstream(k, dir),
            dir,
        }
    }

    /// `wafer of 8x8 PEs` or `2x2 cluster of 8x8 PE wafers`, for reports.
    pub fn describe(&self) -> String {
        let g = &self.wafer;
        match self.count() {
            1 => format!("wafer of {}x{} PEs", g.pes_x, g.pes_y),
            _ => format!(
                "{}x{} cluster of {}x{} PE wafers",
                self.wafers_x, self.wafers_y, g.pes_x, g.pes_y
            ),
        }
    }

    /// Points along a wafer's sides, `(W, H)`.
    pub fn wafer_points(&self) -> UVec2 {
        self.wafer.global_size()
    }

    /// Cells of one package on a link in direction `dir`: the up package is the top strip
    /// `W x w`, the right package the right strip with the forwarded corner, `w x (H + w)`.
    pub fn package_cells(&self, dir: Direction) -> usize {
        let points = self.wafer_points().as_usizevec2();
        let w = self.wafer.w() as usize;
        match dir.is_horizontal() {
            true => w * (points.y + w),
            false => points.x * w,
        }
    }

    /// SRAM cells of one field over the cluster (wafer-major, PE-major within a wafer).
    pub fn sram_cells(&self) -> u64 {
        self.wafer.sram_cells() * self.count() as u64
    }

    /// Global PE coordinates of SRAM block `block` in the cluster's wafer-major layout.
    pub fn block_pe(&self, block: usize) -> UVec2 {
        let per_wafer = self.wafer.pe_count();
        let wafer = self.coords(block / per_wafer);
        let pes = UVec2::new(self.wafer.pes_x, self.wafer.pes_y);
        wafer * pes + self.wafer.pe_coords(block % per_wafer)
    }

    /// The SRAM of wafers `wafers` (in that order) as at step 0, comm layers zero.
    pub fn scatter(&self, field: &GlobalField, wafers: &[usize]) -> Result<Vec<f32>> {
        self.whole()?;
        let per_wafer = self.wafer.sram_cells() as usize;
        let mut sram = vec![0.0; per_wafer * wafers.len()];
        self.for_each_owned_run(wafers, 0, (field.nx, field.ny), |slot, cell, at, len| {
            sram[slot * per_wafer + cell..][..len].copy_from_slice(&field.data[at..at + len]);
        });
        Ok(sram)
    }

    /// Writes the owned cells of wafers `wafers` (one field's SRAM, in that order, after the
    /// grid translated by `shift`) into the global field `out`.
    pub fn gather_into(&self, out: &mut GlobalField, sram: &[f32], wafers: &[usize], shift: u64) {
        let per_wafer = self.wafer.sram_cells() as usize;
        self.for_each_owned_run(wafers, shift, (out.nx, out.ny), |slot, cell, at, len| {
            out.data[at..at + len].copy_from_slice(&sram[slot * per_wafer + cell..][..len]);
        });
    }

    /// Calls `f(slot, cell, at, len)` for every run of owned cells of wafers `wafers` (slots
    /// in that order) after the grid translated by `shift`: `len` cells of a PE's row from
    /// SRAM cell `cell` of the slot's wafer hold the global points from `at` on (row-major on
    /// the `nx x ny` grid). A PE owns `[X0, X0 + n) x [Y0, Y0 + n)` modulo the global size,
    /// so a row is one run, or two where it wraps around the torus.
    fn for_each_owned_run(
        &self,
        wafers: &[usize],
        shift: u64,
        (nx, ny): (u32, u32),
        mut f: impl FnMut(usize, usize, usize, usize),
    ) {
        let whole = self.whole().expect("validated on construction");
        debug_assert_eq!(whole.global_size(), UVec2::new(nx, ny), "the global grid");
        let g = self.wafer;
        let (n, nx, ny) = (g.n as usize, nx as usize, ny as usize);
        for (slot, &k) in wafers.iter().enumerate() {
            for block in 0..g.pe_count() {
                let origin = whole.owned_origin(self.block_pe(k * g.pe_count() + block), shift);
                let (x0, y0) = (origin.x as usize, origin.y as usize);
                let before_edge = n.min(nx - x0);
                for i in 0..n {
                    let cell = g.sram_index(block, UVec2::new(g.w(), g.w() + i as u32));
                    let row = (y0 + i) % ny * nx;
                    f(slot, cell, row + x0, before_edge);
                    if before_edge < n {
                        f(slot, cell + before_edge, row, n - before_edge);
                    }
                }
            }
        }
    }
}
