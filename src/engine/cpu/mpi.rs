//! [`Ranks`] over MPI (rsmpi): packages as non-blocking messages tagged by their link, rank 0's
//! orders as broadcasts, the state gathered to rank 0. MPI is called from the main thread only.

use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use super::ranks::{self, Order, Package, Ranks, World};
use crate::cluster::LinkId;
use crate::Result;

/// Tests every request still pending, and returns the first that is not finished.
fn unfinished<'a, S: mpi::request::Scope<'a>>(
    pending: &mut [Option<mpi::request::Request<'a, [f32], S>>],
) -> Option<usize> {
    let mut first = None;
    for (k, slot) in pending.iter_mut().enumerate() {
        if let Some(request) = slot.take() {
            if let Err(request) = request.test() {
                *slot = Some(request);
                first.get_or_insert(k);
            }
        }
    }
    first
}

/// What a request that did not finish waited for: a package to come, or to be taken.
fn waiting_for((link, rank, sent): (LinkId, usize, bool)) -> String {
    let (dir, from) = (link.dir.name(), link.from);
    match sent {
        true => format!(
            "the package on the {dir} link from wafer {from} was never taken by rank {rank}"
        ),
        false => format!("no package came on the {dir} link from wafer {from} (rank {rank})"),
    }
}

/// The tag of rank 0's gathered planes (links use their dense index, far below it).
const GATHER_TAG: i32 = i32::MAX - 1;

/// Starts MPI; under `mpirun -n K` with K > 1, installs the ranks for the cluster to take.
/// The universe must live until the program ends (its drop finalises MPI).
pub fn start() -> Option<Universe> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if size > 1 {
        ranks::install(Box::new(MpiRanks { rank, size }), World { rank, size });
    }
    Some(universe)
}

struct MpiRanks {
    rank: usize,
    size: usize,
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn exchange(
        &mut self,
        outgoing: Vec<(LinkId, usize, Package)>,
        incoming: &[(LinkId, usize, usize)],
        (fields, step, timeout): (usize, u64, Duration),
    ) -> Result<Vec<Package>> {
        let world = SimpleCommunicator::world();
        // What each pending request waits for, in `pending`'s order, said only on a timeout.
        let waits: Vec<(LinkId, usize, bool)> = (incoming.iter())
            .map(|&(link, from, _)| (link, from, false))
            .chain(outgoing.iter().map(|&(link, to, _)| (link, to, true)))
            .collect();
        let flat: Vec<(i32, usize, Vec<f32>)> = outgoing
            .into_iter()
            .map(|(link, to, package)| (link.index() as i32, to, package.concat()))
            .collect();
        let mut received: Vec<Vec<f32>> = incoming
            .iter()
            .map(|&(_, _, cells)| vec![0f32; cells * fields])
            .collect();
        mpi::request::scope(|scope| {
            let sends = flat.iter().map(|(tag, to, data)| {
                let to = world.process_at_rank(*to as i32);
                Some(to.immediate_send_with_tag(scope, &data[..], *tag))
            });
            let receives = received
                .iter_mut()
                .zip(incoming)
                .map(|(data, &(link, from, _))| {
                    let from = world.process_at_rank(from as i32);
                    Some(from.immediate_receive_into_with_tag(
                        scope,
                        &mut data[..],
                        link.index() as i32,
                    ))
                });
            let mut pending: Vec<_> = receives.chain(sends).collect();
            let started = Instant::now();
            while let Some(k) = unfinished(&mut pending) {
                if started.elapsed() > timeout {
                    eprintln!(
                        "error on rank {}: {} after {:.0} s, at step {step}: a rank hangs or died (--link-timeout)",
                        self.rank,
                        waiting_for(waits[k]),
                        timeout.as_secs_f64()
                    );
                    world.abort(1);
                }
                std::thread::yield_now();
            }
        });
        Ok(received
            .into_iter()
            .zip(incoming)
            .map(|(data, &(_, _, cells))| data.chunks(cells).map(<[f32]>::to_vec).collect())
            .collect())
    }

    fn order(&mut self, order: Order) -> Result<Order> {
        let mut word = order.encode();
        SimpleCommunicator::world()
            .process_at_rank(0)
            .broadcast_into(&mut word);
        Ok(Order::decode(word))
    }

    fn gather(&mut self, mine: Vec<f32>, lens: &[usize]) -> Result<Vec<Vec<f32>>> {
        let world = SimpleCommunicator::world();
        if self.rank != 0 {
            world
                .process_at_rank(0)
                .send_with_tag(&mine[..], GATHER_TAG);
            return Ok(vec![]);
        }
        Ok((1..self.size)
            .map(|r| {
                let mut data = vec![0f32; lens[r]];
                world
                    .process_at_rank(r as i32)
                    .receive_into_with_tag(&mut data[..], GATHER_TAG);
                data
            })
            .collect())
    }
}
