//! Wafers larger than one storage binding: each runs as a block of `kx x ky` sub-wafers, a
//! cluster of smaller wafers joined inside the wafer by free links (no delay, the default
//! capacity) and at its edges by the wafer's own links. Values depend neither on the
//! translation nor on where wafers meet (docs/design.md: every cluster equals the global kernel
//! of its grid bit for bit), so the run is the whole wafer's, bit for bit; its report names
//! the wafers and links that were asked for.

use glam::UVec2;

use super::cluster::GpuCluster;
use crate::cluster::{
    ClusterGeometry, Direction, LinkConfig, LinkId, LinkSpec, LinkStats, MAX_WAFERS,
};
use crate::field::GlobalField;
use crate::model::{Problem, Simulator};
use crate::wafer::WaferGeometry;
use crate::{Error, Result};

/// Sub-wafers per wafer along x and y: (1, 1) where one wafer's SRAM, `bytes(problem)` in the
/// engine that runs it, fits a storage binding of `max` bytes on `adapter`, else the fewest
/// blocks of whole PEs whose split problem's wafer does (among equals the fewest along x, so
/// that rows stay whole), at most [`MAX_WAFERS`] sub-wafers along each side of the cluster.
pub fn parts(
    problem: &Problem,
    (max, adapter): (u64, &str),
    bytes: impl Fn(&Problem) -> Result<u64>,
) -> Result<UVec2> {
    let c = problem.cluster;
    let g = c.wafer;
    let divisors =
        |pes: u32, wafers: u32| (1..=MAX_WAFERS / wafers).filter(move |k| pes.is_multiple_of(*k));
    let mut candidates: Vec<UVec2> = divisors(g.pes_x, c.wafers_x)
        .flat_map(|kx| divisors(g.pes_y, c.wafers_y).map(move |ky| UVec2::new(kx, ky)))
        .collect();
    candidates.sort_by_key(|k| (k.x * k.y, k.x));
    for k in candidates {
        // A split whose sub-wafers are narrower than the comm width does not exist.
        if let Ok(sub) = split(problem, k) {
            if bytes(&sub)? <= max {
                return Ok(k);
            }
        }
    }
    Err(Error::TooLarge(format!(
        "a wafer of {}x{} PEs with n = {} needs {} MiB in one storage binding, but {adapter} allows {} MiB per storage binding, and no block of at most {MAX_WAFERS} sub-wafers per side of the cluster, whole PEs each, fits one: use fewer PEs or a smaller n",
        g.pes_x,
        g.pes_y,
        g.n,
        bytes(problem)?.div_ceil(1 << 20),
        max >> 20
    )))
}

/// One of `parts` sub-wafers of `g`.
fn sub_wafer(g: &WaferGeometry, parts: UVec2) -> Result<WaferGeometry> {
    WaferGeometry::new(g.pes_x / parts.x, g.pes_y / parts.y, g.n, g.w)
}

/// `problem` with each wafer as `parts` sub-wafers: the same kernel, grid and start, its
/// links on the sub-wafers at the wafers' edges. Itself where `parts` is (1, 1).
pub fn split(problem: &Problem, parts: UVec2) -> Result<Problem> {
    if parts == UVec2::ONE {
        return Ok(problem.clone());
    }
    let outer = problem.cluster;
    let inner = ClusterGeometry::new(
        outer.wafers_x * parts.x,
        outer.wafers_y * parts.y,
        sub_wafer(&outer.wafer, parts)?,
    )?;
    let link_specs = (0..2 * inner.count())
        .map(
            |i| match outer_link((&outer, &inner), parts, LinkId::of_index(i)) {
                Some(link) => problem.link_specs[link.index()],
                None => LinkSpec::default(),
            },
        )
        .collect();
    // The specs are resolved here: no `LinkConfig` describes them.
    Ok(Problem {
        cluster: inner,
        link_specs,
        links: LinkConfig::default(),
        ..problem.clone()
    })
}

/// The link of cluster `outer` that link `id` of its split `inner` is part of; `None` inside
/// a wafer.
fn outer_link(
    (outer, inner): (&ClusterGeometry, &ClusterGeometry),
    parts: UVec2,
    id: LinkId,
) -> Option<LinkId> {
    let at = inner.coords(id.from);
    let (wafer, within) = (at / parts, at % parts);
    let on_edge = match id.dir {
        Direction::Right => within.x == parts.x - 1,
        _ => within.y == parts.y - 1,
    };
    on_edge.then(|| LinkId {
        from: outer.index((wafer.x as i64, wafer.y as i64)),
        dir: id.dir,
    })
}

/// The emulated cluster with wafers larger than a storage binding, each as a block of
/// sub-wafers ([`split`]).
pub struct SplitCluster {
    inner: GpuCluster,
    outer: ClusterGeometry,
    parts: UVec2,
}

impl SplitCluster {
    /// The engine `inner` of the split of a problem on cluster `outer` into `parts`
    /// sub-wafers per wafer.
    pub fn new(inner: GpuCluster, outer: ClusterGeometry, parts: UVec2) -> Self {
        Self {
            inner,
            outer,
            parts,
        }
    }

    /// The statistics of the links asked for: each sums up its sub-wafers' links across the
    /// wafer's edge: the packages, occupancy and rounds are the most of any of them (each
    /// carries one package per step), the waits add up, and the bytes are the wafer's own
    /// packages' (the parts' right packages each hold a corner).
    fn outer_stats(&self) -> Vec<LinkStats> {
        let (outer, inner) = (&self.outer, &self.inner.cluster());
        let mut stats: Vec<Option<LinkStats>> = vec![None; 2 * outer.count()];
        for (i, part) in self.inner.link_stats().into_iter().enumerate() {
            let Some(link) = outer_link((outer, inner), self.parts, LinkId::of_index(i)) else {
                continue;
            };
            let slot = &mut stats[link.index()];
            *slot = Some(match slot.take() {
                None => LinkStats {
                    link: link.describe(outer),
                    from: outer.coords(link.from),
                    to: outer.coords(outer.neighbour(link.from, link.dir)),
                    ..part
                },
                Some(sum) => LinkStats {
                    packages: sum.packages.max(part.packages),
                    max_occupancy: sum.max_occupancy.max(part.max_occupancy),
                    stall_rounds: sum.stall_rounds.max(part.stall_rounds),
                    starve_rounds: sum.starve_rounds.max(part.starve_rounds),
                    wait_ms: sum.wait_ms + part.wait_ms,
                    ..sum
                },
            });
        }
        let package_bytes = |s: &LinkStats| outer.package_cells(s.direction) as u64 * 4;
        stats
            .into_iter()
            .map(|s| s.expect("every link crosses an edge of sub-wafers"))
            .map(|s| LinkStats {
                bytes: s.packages * package_bytes(&s),
                ..s
            })
            .collect()
    }
}

impl Simulator for SplitCluster {
    fn advance(&mut self, steps: u64) -> Result<()> {
        let (k, inner) = (self.parts, self.inner.cluster().wafer);
        let note = |why: String| {
            format!(
                "{why} (here each wafer is a block of {}x{} sub-wafers of {}x{} PEs)",
                k.x, k.y, inner.pes_x, inner.pes_y
            )
        };
        self.inner.advance(steps).map_err(|e| match e {
            Error::Timeout(why) => Error::Timeout(note(why)),
            Error::Deadlock(why) => Error::Deadlock(note(why)),
            Error::Aborted(why) => Error::Aborted(note(why)),
            e => e,
        })
    }

    fn step(&self) -> u64 {
        self.inner.step()
    }

    fn state(&self) -> Result<Vec<GlobalField>> {
        self.inner.state()
    }

    fn describe(&self) -> String {
        let inner = self.inner.cluster().wafer;
        let wafers = format!(
            "{}, each wafer as {}x{} sub-wafers of {}x{} PEs (a whole wafer exceeds one storage binding)",
            self.outer.describe(),
            self.parts.x,
            self.parts.y,
            inner.pes_x,
            inner.pes_y
        );
        self.inner.describe_as(&wafers)
    }

    fn link_stats(&self) -> Option<Vec<LinkStats>> {
        Some(self.outer_stats())
    }

    fn time_block(&self) -> u32 {
        self.inner.time_block()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gpu::Placement;

    /// Wafer (x, y) of a 2x1 cluster split 1x2 is sub-wafers (x, 0) and (x, 1): its right link
    /// is theirs, its up link the upper one's, and a device holds both.
    #[test]
    fn a_wafers_sub_wafers_carry_its_links_and_share_its_device() {
        let g = WaferGeometry::new(4, 2, 3, 1).unwrap();
        let outer = ClusterGeometry::new(2, 1, g).unwrap();
        let parts = UVec2::new(1, 2);
        let inner = ClusterGeometry::new(2, 2, sub_wafer(&g, parts).unwrap()).unwrap();
        let links: Vec<Option<(usize, Direction)>> = (0..2 * inner.count())
            .map(|i| outer_link((&outer, &inner), parts, LinkId::of_index(i)))
            .map(|l| l.map(|l| (l.from, l.dir)))
            .collect();
        let (right, up) = (Direction::Right, Direction::Up);
        let expected = [
            Some((0, right)),
            None,
            Some((1, right)),
            None,
            Some((0, right)),
            Some((0, up)),
            Some((1, right)),
            Some((1, up)),
        ];
        assert_eq!(links, expected);
        let placement = Placement {
            devices: 2,
            sub_wafers: parts,
            ..Placement::default()
        };
        let devices: Vec<usize> = (0..4).map(|k| placement.device_of(&inner, k)).collect();
        assert_eq!(devices, [0, 1, 0, 1]);
        assert!(placement.validate(&inner).is_ok());
        let three = Placement {
            devices: 3,
            ..placement
        };
        assert!(three.validate(&inner).is_err());
    }
}
