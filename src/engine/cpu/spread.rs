//! The CPU cluster over MPI ranks ([`super::ranks`]): which wafers are here, the packages
//! that cross ranks phase by phase, rank 0's orders and the state gathered to it.

use glam::UVec2;
use rayon::prelude::*;

use super::ranks::{owner, Order, Package, Ranks};
use super::CpuCluster;
use crate::cluster::{Direction, LinkId};
use crate::field::GlobalField;
use crate::model::Simulator;
use crate::wafer::StageSlots;
use crate::Result;

impl CpuCluster {
    /// How long a rank waits for a package from another before it ends them all.
    pub fn with_link_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.link_timeout = timeout;
        self
    }

    /// The rank that steps wafer `k` (0 for every wafer when this process runs alone).
    pub(super) fn rank_of(&self, k: usize) -> usize {
        owner(k, self.cluster.count(), self.place.1)
    }

    pub(super) fn here(&self, k: usize) -> bool {
        self.rank_of(k) == self.place.0
    }

    /// The ranks, to send or receive on (only called where they exist).
    fn ranks(&self) -> std::sync::MutexGuard<'_, Box<dyn Ranks>> {
        let ranks = self.ranks.as_ref().expect("a cluster over ranks");
        ranks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `package` on `link` when its receiver is here, else keeps it for the rank that
    /// steps the receiver.
    pub(super) fn send(
        &mut self,
        link: LinkId,
        package: Package,
        outgoing: &mut Vec<(LinkId, usize, Package)>,
    ) {
        let to = self.cluster.neighbour(link.from, link.dir);
        match self.here(to) {
            true => self.links[link.index()].push_back(package),
            false => outgoing.push((link, self.rank_of(to), package)),
        }
    }

    /// One phase's exchange between ranks: sends `outgoing`, and queues the packages that
    /// the phase's `senders` on other ranks sent along `dir` to wafers here, in the order the
    /// one-process schedule queues them.
    pub(super) fn exchange(
        &mut self,
        senders: &[(usize, u64)],
        dir: Direction,
        outgoing: Vec<(LinkId, usize, Package)>,
    ) -> Result<()> {
        if self.ranks.is_none() {
            return Ok(());
        }
        let c = self.cluster;
        let incoming: Vec<(LinkId, usize, usize)> = senders
            .iter()
            .filter(|&&(k, _)| !self.here(k) && self.here(c.neighbour(k, dir)))
            .map(|&(k, _)| {
                (
                    LinkId { from: k, dir },
                    self.rank_of(k),
                    c.package_cells(dir),
                )
            })
            .collect();
        let spec = self.kernel.spec();
        let step = senders
            .first()
            .map_or(0, |&(_, state)| state / spec.stages.len() as u64);
        let schedule = (spec.fields.len(), step, self.link_timeout);
        let messages = (outgoing.len() + incoming.len()) as u64;
        let started = std::time::Instant::now();
        let packages = self.ranks().exchange(outgoing, &incoming, schedule)?;
        self.exchanged.0 += started.elapsed();
        self.exchanged.1 += messages;
        for ((link, _, _), package) in incoming.iter().zip(packages) {
            self.links[link.index()].push_back(package);
        }
        Ok(())
    }

    /// Runs the orders of rank 0 until it says the run is over: the other ranks' whole life.
    pub fn serve(mut self) -> Result<()> {
        loop {
            let order = self.ranks().order(Order::Done)?;
            match order {
                Order::Advance(steps) => self.advance_here(steps)?,
                Order::Gather => {
                    self.gathered()?;
                }
                Order::Done => return Ok(()),
            }
        }
    }

    /// Rank 0 tells the other ranks to follow; nothing without ranks.
    pub(super) fn lead(&self, order: Order) -> Result<()> {
        match (&self.ranks, self.place.0) {
            (Some(_), 0) => self.ranks().order(order).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Every field of the state: this process's wafers, and on rank 0 the other ranks' too,
    /// each rank's planes field by field, wafer by wafer.
    pub(super) fn gathered(&self) -> Result<Vec<GlobalField>> {
        let UVec2 { x: nx, y: ny } = self.cluster.whole()?.global_size();
        let slot = StageSlots::state(self.step());
        let shift = self.kernel.spec().shift_after(self.remaps);
        let fields = self.kernel.spec().fields.len();
        let count = self.cluster.count();
        let plane = self
            .sram
            .iter()
            .find(|w| !w.is_empty())
            .map_or(0, |w| w[0][0].len());
        let mut parts: Vec<(Vec<usize>, Vec<f32>)> = vec![];
        if self.ranks.is_some() {
            let (rank, size) = self.place;
            let wafers_of = |r: usize| -> Vec<usize> {
                (0..count).filter(|&k| owner(k, count, size) == r).collect()
            };
            let mine: Vec<f32> = match rank {
                0 => vec![],
                r => (0..fields)
                    .flat_map(|f| wafers_of(r).into_iter().map(move |k| (f, k)))
                    .flat_map(|(f, k)| self.sram[k][slot][f].iter().copied())
                    .collect(),
            };
            let lens: Vec<usize> = (0..size)
                .map(|r| fields * wafers_of(r).len() * plane)
                .collect();
            let received = self.ranks().gather(mine, &lens)?;
            if rank != 0 {
                return Ok(vec![]);
            }
            parts = received
                .into_iter()
                .enumerate()
                .map(|(r, data)| (wafers_of(r + 1), data))
                .collect();
        }
        let (c, sram) = (&self.cluster, &self.sram);
        Ok((0..fields)
            .into_par_iter()
            .map(|f| {
                let mut field = GlobalField::zeros(nx, ny);
                for (k, wafer) in sram.iter().enumerate().filter(|(_, w)| !w.is_empty()) {
                    c.gather_into(&mut field, &wafer[slot][f], &[k], shift);
                }
                for (wafers, data) in &parts {
                    let per_field = wafers.len() * plane;
                    let field_data = &data[f * per_field..(f + 1) * per_field];
                    for (k, values) in wafers.iter().zip(field_data.chunks(plane)) {
                        c.gather_into(&mut field, values, &[*k], shift);
                    }
                }
                field
            })
            .collect())
    }
}
