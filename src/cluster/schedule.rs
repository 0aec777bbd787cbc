//! The cluster's actor schedule on a logical clock of rounds, the same for every placement.
//!
//! A wafer holding state `s` sends its up package `s` (its top strip) as soon as its up link
//! has room, and its right package `s` (its right strip and the corner forwarded from below)
//! as soon as the up package `s` from below has arrived and its right link has room. Once both
//! are sent and the packages `s` from the left and from below have arrived, it runs step
//! `s + 1`. Each round has three phases in that order (up, right, step), over all wafers. A package sent
//! in round `r` on a link of delay `d` can be used from round `r + d`; a link holds at most its
//! capacity of sent and not yet used packages, and a sender waits while it is full.
//!
//! Every wait is on an event of an earlier round or phase, so executors that follow this
//! order (one device, or one thread per device with blocking host queues) never deadlock
//! unless the schedule itself does, which it reports with the wafer, the link and the step.

use std::collections::VecDeque;

use super::link::{Direction, LinkId, LinkSpec, LinkStats};
use super::ClusterGeometry;
use crate::{Error, Result};

/// What the wafers do in one round: `(wafer, state)` pairs per phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub number: u64,
    /// Wafers sending the up package of their state.
    pub up: Vec<(usize, u64)>,
    /// Wafers sending the right package of their state.
    pub right: Vec<(usize, u64)>,
    /// Wafers running one step from their state.
    pub step: Vec<(usize, u64)>,
}

impl Round {
    pub fn is_empty(&self) -> bool {
        self.up.is_empty() && self.right.is_empty() && self.step.is_empty()
    }
}

#[derive(Clone, Debug)]
struct WaferState {
    step: u64,
    /// Whether the package of `step` went out on the right and the up link.
    sent: [bool; 2],
}

/// A package in flight: its state and the round it was sent in.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    state: u64,
    sent: u64,
}

#[derive(Clone, Debug)]
struct LinkState {
    spec: LinkSpec,
    queue: VecDeque<InFlight>,
    stats: LinkStats,
    /// Last round counted as stalled / starved (each counts once per round).
    stalled: Option<u64>,
    starved: Option<u64>,
}

/// The deterministic schedule of a cluster (see the module documentation).
#[derive(Clone, Debug)]
pub struct Scheduler {
    cluster: ClusterGeometry,
    wafers: Vec<WaferState>,
    links: Vec<LinkState>,
    round: u64,
}

impl Scheduler {
    /// A cluster at step 0 with nothing sent; `specs` by dense link index.
    pub fn new(cluster: ClusterGeometry, specs: &[LinkSpec]) -> Self {
        let links = specs
            .iter()
            .enumerate()
            .map(|(i, &spec)| {
                let id = LinkId::of_index(i);
                let to = cluster.neighbour(id.from, id.dir);
                LinkState {
                    spec,
                    queue: VecDeque::new(),
                    stats: LinkStats {
                        link: id.describe(&cluster),
                        from: cluster.coords(id.from),
                        to: cluster.coords(to),
                        direction: id.dir,
                        delay: spec.delay,
                        capacity: spec.capacity,
                        packages: 0,
                        bytes: 0,
                        max_occupancy: 0,
                        stall_rounds: 0,
                        starve_rounds: 0,
                        wait_ms: 0.0,
                    },
                    stalled: None,
                    starved: None,
                }
            })
            .collect();
        let wafer = WaferState {
            step: 0,
            sent: [false; 2],
        };
        Self {
            cluster,
            wafers: vec![wafer; cluster.count()],
            links,
            round: 0,
        }
    }

    /// Fails now, with the error a run would fail with, if the cluster cannot run its first
    /// steps (every link carries a package every step, so a link that can never carry one
    /// shows up at once).
    pub fn preflight(&self) -> Result<()> {
        let mut dry = self.clone();
        let target = self.wafers.iter().map(|w| w.step).max().unwrap_or(0) + 2;
        while dry.next_round(target)?.is_some() {}
        Ok(())
    }

    /// Rounds run so far.
    pub fn rounds(&self) -> u64 {
        self.round
    }

    /// Per-link statistics so far, by dense link index.
    pub fn stats(&self) -> Vec<LinkStats> {
        self.links.iter().map(|l| l.stats.clone()).collect()
    }

    /// The next round that does something, or `None` once every wafer holds state `target`.
    /// Fails when no wafer can ever progress again.
    pub fn next_round(&mut self, target: u64) -> Result<Option<Round>> {
        loop {
            if self.wafers.iter().all(|w| w.step >= target) {
                return Ok(None);
            }
            let round = self.run_round(target);
            self.round += 1;
            if !round.is_empty() {
                return Ok(Some(round));
            }
            let now = self.round - 1;
            let arriving = self
                .links
                .iter()
                .any(|l| l.queue.iter().any(|p| p.sent + l.spec.delay as u64 > now));
            if !arriving {
                return Err(self.deadlock());
            }
        }
    }

    fn run_round(&mut self, target: u64) -> Round {
        let mut round = Round {
            number: self.round,
            ..Round::default()
        };
        for k in 0..self.wafers.len() {
            if !self.wafers[k].sent[Direction::Up as usize] && self.send(k, Direction::Up) {
                round.up.push((k, self.wafers[k].step));
            }
        }
        for k in 0..self.wafers.len() {
            let state = self.wafers[k].step;
            let below = self.cluster.incoming(k, Direction::Up).index();
            if !self.wafers[k].sent[Direction::Right as usize]
                && self.arrived(below, state)
                && self.send(k, Direction::Right)
            {
                round.right.push((k, state));
            }
        }
        for k in 0..self.wafers.len() {
            let w = &self.wafers[k];
            if w.sent != [true; 2] || w.step >= target {
                continue;
            }
            let state = w.step;
            let inputs = Direction::ALL.map(|d| self.cluster.incoming(k, d).index());
            // Both inputs are checked so that each counts its own starvation.
            let arrived = inputs.map(|link| self.arrived(link, state));
            if arrived == [true; 2] {
                for link in inputs {
                    self.links[link].queue.pop_front();
                }
                self.wafers[k] = WaferState {
                    step: state + 1,
                    sent: [false; 2],
                };
                round.step.push((k, state));
            }
        }
        round
    }

    /// Whether package `state` is at the head of `link` and usable this round.
    fn has(&self, link: usize, state: u64) -> bool {
        let l = &self.links[link];
        l.queue
            .front()
            .is_some_and(|p| p.state == state && p.sent + l.spec.delay as u64 <= self.round)
    }

    /// [`Self::has`], counting starvation when not.
    fn arrived(&mut self, link: usize, state: u64) -> bool {
        let (ok, round) = (self.has(link, state), self.round);
        let l = &mut self.links[link];
        if !ok && l.starved != Some(round) {
            l.starved = Some(round);
            l.stats.starve_rounds += 1;
        }
        ok
    }

    /// Sends wafer `k`'s package of its state on its link `dir` if the link has room; counts
    /// a stall otherwise.
    fn send(&mut self, k: usize, dir: Direction) -> bool {
        let (round, state) = (self.round, self.wafers[k].step);
        let bytes = self.cluster.package_cells(dir) as u64 * 4;
        let l = &mut self.links[LinkId { from: k, dir }.index()];
        if l.queue.len() >= l.spec.capacity as usize {
            if l.stalled != Some(round) {
                l.stalled = Some(round);
                l.stats.stall_rounds += 1;
            }
            return false;
        }
        l.queue.push_back(InFlight { state, sent: round });
        l.stats.packages += 1;
        l.stats.bytes += bytes;
        l.stats.max_occupancy = l.stats.max_occupancy.max(l.queue.len() as u32);
        self.wafers[k].sent[dir as usize] = true;
        true
    }

    /// The error for a schedule that cannot progress: the least advanced blocked wafer, the
    /// link it waits on and the step, preferring a full link (the cause) over a missing
    /// package (its consequence).
    fn deadlock(&self) -> Error {
        let wafer = |k: usize| {
            let at = self.cluster.coords(k);
            format!("wafer ({},{})", at.x, at.y)
        };
        let mut reasons = vec![];
        for (k, w) in self.wafers.iter().enumerate() {
            for dir in Direction::ALL {
                let id = LinkId { from: k, dir };
                let l = &self.links[id.index()];
                if !w.sent[dir as usize] && l.queue.len() >= l.spec.capacity as usize {
                    let why = match l.spec.capacity {
                        0 => "has capacity 0 and can never carry a package".to_string(),
                        c => format!("is full ({c} packages) and nobody takes them"),
                    };
                    reasons.push((
                        0,
                        w.step,
                        format!(
                            "{} cannot send its step-{} package: its {} {why}",
                            wafer(k),
                            w.step,
                            id.describe(&self.cluster)
                        ),
                    ));
                }
            }
            // What the wafer waits for: the up package from below (to forward its corner or
            // to step), else the right package from the left.
            let from_below = self.cluster.incoming(k, Direction::Up);
            let waits_for = match self.has(from_below.index(), w.step) {
                false => from_below,
                true => self.cluster.incoming(k, Direction::Right),
            };
            reasons.push((
                1,
                w.step,
                format!(
                    "{} waits for the step-{} package on the {}",
                    wafer(k),
                    w.step,
                    waits_for.describe(&self.cluster)
                ),
            ));
        }
        reasons.sort_by_key(|r| (r.0, r.1));
        Error::Deadlock(format!(
            "the cluster cannot progress after round {}: {}",
            self.round, reasons[0].2
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wafer::WaferGeometry;

    fn cluster(wx: u32, wy: u32) -> ClusterGeometry {
        ClusterGeometry::new(wx, wy, WaferGeometry::new(2, 2, 2, 1).unwrap()).unwrap()
    }

    fn run(cluster: ClusterGeometry, specs: &[LinkSpec], target: u64) -> Result<Scheduler> {
        let mut s = Scheduler::new(cluster, specs);
        while s.next_round(target)?.is_some() {}
        Ok(s)
    }

    #[test]
    fn free_links_run_one_step_per_round() {
        let c = cluster(3, 2);
        let s = run(c, &[LinkSpec::default(); 12], 10).unwrap();
        assert_eq!(s.rounds(), 10);
        assert!(s
            .stats()
            .iter()
            .all(|l| l.max_occupancy == 1 && l.stall_rounds == 0));
    }

    #[test]
    fn a_slow_link_lets_packages_pile_up_to_its_capacity() {
        let c = cluster(2, 1);
        let mut specs = vec![
            LinkSpec {
                delay: 0,
                capacity: 3
            };
            4
        ];
        specs[LinkId {
            from: 1,
            dir: Direction::Right,
        }
        .index()]
        .delay = 4;
        let s = run(c, &specs, 30).unwrap();
        let stats = s.stats();
        assert!(stats.iter().any(|l| l.max_occupancy >= 2), "{stats:#?}");
        assert!(stats
            .iter()
            .all(|l| l.max_occupancy <= 3 && l.packages >= 30));
    }

    #[test]
    fn capacity_zero_names_the_wafer_link_and_step() {
        let c = cluster(2, 2);
        let mut specs = vec![LinkSpec::default(); 8];
        specs[LinkId {
            from: 3,
            dir: Direction::Up,
        }
        .index()]
        .capacity = 0;
        let err = run(c, &specs, 5).unwrap_err().to_string();
        assert!(
            err.contains("wafer (1,1)")
                && err.contains("up link (1,1)->(1,0)")
                && err.contains("step-"),
            "{err}"
        );
    }
}
