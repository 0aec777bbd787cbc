//! [`Ranks`] over MPI (rsmpi): packages as non-blocking messages tagged by their link, rank 0's
//! orders as broadcasts, the state gathered to rank 0. MPI is called from the main thread only.

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use super::ranks::{self, Order, Package, Ranks, World};
use crate::cluster::LinkId;
use crate::Result;

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
        fields: usize,
    ) -> Result<Vec<Package>> {
        let world = SimpleCommunicator::world();
        let flat: Vec<(i32, usize, Vec<f32>)> = outgoing
            .into_iter()
            .map(|(link, to, package)| (link.index() as i32, to, package.concat()))
            .collect();
        Ok(mpi::request::scope(|scope| {
            let sends: Vec<_> = flat
                .iter()
                .map(|(tag, to, data)| {
                    world.process_at_rank(*to as i32).immediate_send_with_tag(
                        scope,
                        &data[..],
                        *tag,
                    )
                })
                .collect();
            let received = incoming
                .iter()
                .map(|&(link, from, cells)| {
                    let mut data = vec![0f32; cells * fields];
                    world
                        .process_at_rank(from as i32)
                        .receive_into_with_tag(&mut data[..], link.index() as i32);
                    data.chunks(cells).map(<[f32]>::to_vec).collect()
                })
                .collect();
            sends.into_iter().for_each(|send| {
                send.wait();
            });
            received
        }))
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
