//! A cluster's wafers spread over processes (MPI ranks, `--features mpi`): which rank steps
//! which wafer, and what travels between ranks. Every rank keeps the whole schedule, so only
//! the packages of the links that cross ranks, the orders of rank 0 and the gathered state do.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::cluster::LinkId;
use crate::Result;

/// A package on a link: one vector per state field.
pub type Package = Vec<Vec<f32>>;

/// What rank 0, which runs the command, tells the other ranks to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Run this many more steps.
    Advance(u64),
    /// Send the state of your wafers to rank 0.
    Gather,
    /// The run is over.
    Done,
}

impl Order {
    /// As one number on the wire: 0 done, `u64::MAX` gather, else the steps to run.
    pub fn encode(self) -> u64 {
        match self {
            Order::Done => 0,
            Order::Gather => u64::MAX,
            Order::Advance(steps) => steps,
        }
    }

    pub fn decode(word: u64) -> Self {
        match word {
            0 => Order::Done,
            u64::MAX => Order::Gather,
            steps => Order::Advance(steps),
        }
    }
}

/// The ranks of a cluster and the messages between them.
pub trait Ranks: Send {
    /// This process's rank.
    fn rank(&self) -> usize;
    /// How many ranks share the cluster.
    fn size(&self) -> usize;
    /// One phase's packages across ranks: sends each of `outgoing` (a link, the rank of its
    /// receiver, the package) and returns the packages of `incoming` (a link, the rank of its
    /// sender, the cells of each of `fields` fields), in that order. A package that does not
    /// come (or go) within `timeout` ends every rank, naming the link and `step`.
    fn exchange(
        &mut self,
        outgoing: Vec<(LinkId, usize, Package)>,
        incoming: &[(LinkId, usize, usize)],
        schedule: (usize, u64, Duration),
    ) -> Result<Vec<Package>>;
    /// Rank 0 sends `order` to every rank and returns it; the others receive it.
    fn order(&mut self, order: Order) -> Result<Order>;
    /// On rank 0, the planes of every other rank (`lens[r]` values from rank `r`, nothing
    /// from itself); the others send `mine` and get nothing back.
    fn gather(&mut self, mine: Vec<f32>, lens: &[usize]) -> Result<Vec<Vec<f32>>>;
}

/// This process among the ranks: its rank and their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct World {
    pub rank: usize,
    pub size: usize,
}

/// The rank that steps wafer `k` of `count` when `size` ranks share them: contiguous runs in
/// the wafers' row-major order, as even as they can be.
pub fn owner(k: usize, count: usize, size: usize) -> usize {
    k * size / count
}

/// The ranks of this process, until the cluster that runs over them takes them.
static RANKS: Mutex<Option<Box<dyn Ranks>>> = Mutex::new(None);

static WORLD: OnceLock<World> = OnceLock::new();

/// Makes `ranks` the ones the next cluster takes, in `world`.
pub fn install(ranks: Box<dyn Ranks>, world: World) {
    *RANKS.lock().expect("ranks lock") = Some(ranks);
    let _ = WORLD.set(world);
}

/// This process among several ranks, or `None` when it runs alone.
pub fn world() -> Option<&'static World> {
    WORLD.get()
}

/// The ranks this process runs among, for the one cluster that spreads over them.
pub fn take() -> Option<Box<dyn Ranks>> {
    RANKS.lock().expect("ranks lock").take()
}
