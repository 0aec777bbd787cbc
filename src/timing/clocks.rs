//! Every PE's clock: `T[pe][s]`, the cycle at which PE `pe` finishes step `s`, from max-plus
//! recurrences (docs/design.md, section 6). Time is counted in ticks of 1/256 cycle so that the
//! recurrence is exact integer arithmetic, the same on the CPU here and on the GPU
//! (`shaders/clocks.wgsl`).
//!
//! Domain translation: `T[c][s+1] = max(T[c][s] + interior, arrivals) + edge`, where the
//! arrivals come from the left, lower and lower-left PEs of step `s` (one or two on-wafer hops)
//! or, across a wafer edge, from that edge's link. Static decomposition also waits for the
//! right, upper and diagonal neighbours. Overlapping ghosts of width `g` exchange like static
//! decomposition every `g` steps and otherwise compute alone, at `((n + 2g)/n)^2` the cost.
//!
//! A link carries one package per exchange from the PEs on one wafer edge to the opposite
//! edge of the next wafer: one strip per edge PE, each on its own virtual channel with an equal
//! share of the link's bandwidth (so a strip takes as long to serialise as the whole package
//! at full bandwidth, and no edge PE waits for another). A strip leaves once its PE has
//! finished the step, its channel is free (FIFO) and the receiving PE has consumed the strip
//! `capacity` packages earlier (credits); it arrives `latency` later at the PE in the same row
//! (or column) of the receiving edge. A corner that crosses a wafer edge rides the strip that
//! Table 3 forwards it in: the lower strip if it crosses the lower edge, else the left strip.

use multiversion::multiversion;
use rayon::prelude::*;

use super::params::{Method, TimingParams};
pub use crate::cluster::Direction;
use crate::{invalid, Result};

/// Ticks per cycle.
pub const TICKS_PER_CYCLE: f64 = 256.0;

/// Most PEs one model simulates (16 bytes each, plus links).
pub const MAX_PES: u64 = 1 << 28;

/// Largest cost of one step or link in ticks: leaves 2^16 steps of headroom in 64 bits.
const MAX_COST_TICKS: u64 = 1 << 48;

/// Cycles to ticks, rounded.
pub fn ticks(cycles: f64) -> u64 {
    (cycles * TICKS_PER_CYCLE).round() as u64
}

/// A cluster of `wafers_x x wafers_y` wafers of `pes_x x pes_y` PEs with `n x n` points each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterShape {
    pub wafers_x: u32,
    pub wafers_y: u32,
    pub pes_x: u32,
    pub pes_y: u32,
    pub n: u32,
    pub p: u32,
}

/// Most points a cluster of the timing model holds: its counts and rates stay exact in f64.
pub const MAX_CLUSTER_POINTS: u128 = 1 << 53;

impl ClusterShape {
    /// Checks the counts; errors name the value and the range.
    pub fn validate(&self) -> Result<()> {
        let all = [
            ("wafers along x", self.wafers_x),
            ("wafers along y", self.wafers_y),
            ("PEs along x", self.pes_x),
            ("PEs along y", self.pes_y),
            ("n", self.n),
            ("p", self.p),
        ];
        for (name, v) in all {
            if v == 0 {
                return Err(invalid!("{name} = 0: allowed 1 or more"));
            }
        }
        if self.n > crate::wafer::MAX_N {
            return Err(invalid!(
                "n = {} is out of range: allowed 1..={}",
                self.n,
                crate::wafer::MAX_N
            ));
        }
        let points = [
            self.wafers_x,
            self.wafers_y,
            self.pes_x,
            self.pes_y,
            self.n,
            self.n,
        ]
        .into_iter()
        .fold(1u128, |product, v| product * u128::from(v));
        if points > MAX_CLUSTER_POINTS {
            return Err(invalid!(
                "{}x{} wafers of {}x{} PEs with n = {} hold {points:.3e} points: allowed at most {MAX_CLUSTER_POINTS:.3e} (2^53, counted exactly in f64)",
                self.wafers_x,
                self.wafers_y,
                self.pes_x,
                self.pes_y,
                self.n,
                points = points as f64,
                MAX_CLUSTER_POINTS = MAX_CLUSTER_POINTS as f64
            ));
        }
        Ok(())
    }

    /// Refuses to simulate this cluster where it has more PEs than one model holds
    /// ([`MAX_PES`]) or than the process may allocate.
    pub fn check_simulated(&self) -> Result<()> {
        let pes =
            self.wafers_x as u64 * self.pes_x as u64 * self.wafers_y as u64 * self.pes_y as u64;
        let advice = match self.wafer_count() {
            1 => "use fewer PEs per wafer",
            _ => "simulate one wafer linked to itself (without --full)",
        };
        if pes > MAX_PES {
            return Err(invalid!(
                "{pes} PEs to simulate: allowed at most {MAX_PES}: {advice}"
            ));
        }
        // Two clocks per PE (this step's and the last), 8 bytes each.
        let what = format!("the timing model of {pes} PEs");
        crate::memory::check_host_memory(&what, pes * 16, advice)
    }
    /// PEs along x and y over the whole cluster.
    pub fn span(&self) -> (usize, usize) {
        (
            self.wafers_x as usize * self.pes_x as usize,
            self.wafers_y as usize * self.pes_y as usize,
        )
    }
    /// All PEs of the cluster.
    pub fn pe_count(&self) -> usize {
        let (x, y) = self.span();
        x * y
    }
    /// Wafers of the cluster.
    pub fn wafer_count(&self) -> usize {
        (self.wafers_x * self.wafers_y) as usize
    }
}

/// The per-step costs and link constants in ticks, derived once from the parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    pub interior: u64,
    pub edge: u64,
    pub hop: u64,
    /// Link latency for horizontal and vertical links (vertical packages cross the wafer
    /// width to reach the side ports, as in the paper's Figure 6).
    pub latency_h: u64,
    pub latency_v: u64,
    /// Serialisation of one package (all strips of an edge) on a horizontal and a vertical
    /// link: what each strip takes on its share of the bandwidth.
    pub serialise_h: u64,
    pub serialise_v: u64,
    /// Steps between exchanges (1 but for overlapping ghosts).
    pub exchange_every: u32,
    pub capacity: u32,
    /// Most extra latency of one link.
    pub jitter: u64,
}

impl Costs {
    /// Costs of `params` on `shape`.
    pub fn new(params: &TimingParams, shape: &ClusterShape) -> Self {
        let spec = params.kernel.spec();
        let (n, p) = (shape.n, shape.p as f64);
        // How far one step reaches into the comm layer: its stages' widths together.
        let w = spec.comm_width * spec.stages.len() as u32;
        let cycles_per_s = params.clock_hz;
        let (mut interior, mut edge) = (params.cost.interior(n, w), params.cost.edge(n, w));
        let bits_per_cycle = params.link_bandwidth_bps / cycles_per_s;
        let hop = params.hop_latency_s * cycles_per_s;
        let nf = n as f64;
        // Words of one edge PE's strip per exchange, horizontal and vertical.
        let (words_h, words_v, exchange_every) = match params.method {
            // Table 3's strips of every stage and field, and the travelling constants.
            Method::DomainTranslation => {
                let (h, v) = spec.strip_words(n);
                (h, v, 1)
            }
            // A halo p wide, one way.
            Method::StaticDecomposition => (nf * p, (nf + 2.0 * p) * p, 1),
            Method::OverlappingGhosts { g } => {
                let (gf, grow) = (g as f64, ((nf + 2.0 * g as f64) / nf).powi(2));
                interior *= grow;
                edge *= grow;
                ((nf + 2.0 * gf) * gf, (nf + 2.0 * gf) * gf, g)
            }
        };
        let latency = params.link_latency_s * cycles_per_s;
        Self {
            interior: ticks(interior),
            edge: ticks(interior + edge) - ticks(interior),
            hop: ticks(hop),
            latency_h: ticks(latency),
            latency_v: ticks(latency + shape.pes_x as f64 * hop),
            serialise_h: ticks(shape.pes_y as f64 * words_h * 32.0 / bits_per_cycle),
            serialise_v: ticks(shape.pes_x as f64 * words_v * 32.0 / bits_per_cycle),
            exchange_every,
            capacity: params.link_capacity,
            jitter: ticks(params.link_jitter_s * cycles_per_s),
        }
    }
}

/// One directed link between two wafers.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    pub direction: Direction,
    /// Latency and serialisation of one package on this link, in ticks.
    pub latency: u64,
    pub serialise: u64,
    /// Per strip (in order along the edge): when its channel is free again.
    pub free_at: Vec<u64>,
    /// Per strip: when it arrived with the last package.
    pub arrivals: Vec<u64>,
    /// Packages sent so far.
    pub sent: u64,
    /// Per package of the last `capacity` and per strip: when the receiving PE finished the
    /// step that consumed it (`capacity` rows of `arrivals.len()` values).
    pub consumed: Vec<u64>,
}

/// The clocks of a whole cluster.
#[derive(Clone, Debug)]
pub struct ClusterClocks {
    pub shape: ClusterShape,
    pub method: Method,
    pub costs: Costs,
    /// `T[pe]` of the current step, PEs row-major over the cluster.
    pub clocks: Vec<u64>,
    /// The previous step's buffer, reused for the next.
    spare: Vec<u64>,
    pub links: Vec<Link>,
    pub step: u64,
}

impl ClusterClocks {
    /// All clocks at zero before step 0.
    pub fn new(params: &TimingParams, shape: ClusterShape) -> Result<Self> {
        params.validate()?;
        shape.validate()?;
        shape.check_simulated()?;
        let directions = directions(params.method);
        if let Method::OverlappingGhosts { g } = params.method {
            if g > shape.n {
                return Err(invalid!(
                    "ghosts:{g} is wider than n = {}: allowed g <= n",
                    shape.n
                ));
            }
        }
        let costs = Costs::new(params, &shape);
        let latency = "a link's latency (--link-latency-us, hop_latency_ns and --clock-ghz)";
        let serialise = "a package's serialisation (--link-bandwidth-gbps and --clock-ghz)";
        let costs_named = [
            (
                costs.interior + costs.edge,
                "a step's compute (a0, a1, a2 at n, and --clock-ghz)",
            ),
            (costs.latency_h, latency),
            (costs.latency_v, latency),
            (
                costs.jitter,
                "the links' jitter (link_jitter_us and --clock-ghz)",
            ),
            (costs.serialise_h, serialise),
            (costs.serialise_v, serialise),
        ];
        if let Some((ticks, what)) = costs_named.iter().find(|(t, _)| *t >= MAX_COST_TICKS) {
            return Err(invalid!(
                "{what} costs {:.3e} cycles or more with these parameters: allowed less than {:.3e}",
                *ticks as f64 / TICKS_PER_CYCLE,
                MAX_COST_TICKS as f64 / TICKS_PER_CYCLE
            ));
        }
        let (kx, ky) = (shape.wafers_x as i64, shape.wafers_y as i64);
        let links = (0..shape.wafer_count())
            .flat_map(|from| directions.iter().map(move |&d| (from, d)))
            .map(|(from, direction)| {
                let (wx, wy) = (from as i64 % kx, from as i64 / kx);
                let (dx, dy) = direction.offset();
                let to = ((wy + dy).rem_euclid(ky) * kx + (wx + dx).rem_euclid(kx)) as usize;
                let strips = edge_len(&shape, direction);
                let consumed = vec![0; costs.capacity as usize * strips];
                let horizontal = direction.is_horizontal();
                let (latency, serialise) = match horizontal {
                    true => (costs.latency_h, costs.serialise_h),
                    false => (costs.latency_v, costs.serialise_v),
                };
                let at = (wx as u64, wy as u64);
                let latency = latency + jitter_of(costs.jitter, at, direction);
                let (free_at, arrivals) = (vec![0; strips], vec![0; strips]);
                Link {
                    from,
                    to,
                    direction,
                    latency,
                    serialise,
                    free_at,
                    arrivals,
                    sent: 0,
                    consumed,
                }
            })
            .collect();
        Ok(Self {
            shape,
            method: params.method,
            costs,
            clocks: vec![0; shape.pe_count()],
            spare: vec![],
            links,
            step: 0,
        })
    }

    /// Runs `steps` steps.
    pub fn advance(&mut self, steps: u64) {
        for _ in 0..steps {
            self.step_once();
        }
    }

    /// The latest clock over all PEs.
    pub fn max_clock(&self) -> u64 {
        self.clocks.iter().copied().max().unwrap_or(0)
    }

    fn exchanging(&self) -> bool {
        self.step.is_multiple_of(self.costs.exchange_every as u64)
    }

    fn step_once(&mut self) {
        let exchange = self.exchanging();
        if exchange {
            let (shape, costs, clocks) = (self.shape, self.costs, &self.clocks);
            for link in &mut self.links {
                send(&shape, &costs, clocks, link);
            }
        }
        let (shape, costs, method, old) = (self.shape, self.costs, self.method, &self.clocks);
        let links = &self.links;
        let (span_x, _) = shape.span();
        let mut next = std::mem::take(&mut self.spare);
        next.resize(old.len(), 0);
        let last_y = shape.pes_y as usize - 1;
        next.par_chunks_mut(span_x)
            .enumerate()
            .for_each(|(gy, row)| {
                let step = |gx| pe_step(&shape, &costs, method, exchange, old, links, gx, gy);
                let py = gy % shape.pes_y as usize;
                if !exchange || py == 0 || py == last_y {
                    return row.iter_mut().enumerate().for_each(|(gx, t)| *t = step(gx));
                }
                for x0 in (0..span_x).step_by(shape.pes_x as usize) {
                    let last = x0 + shape.pes_x as usize - 1;
                    row[x0] = step(x0);
                    row[last] = step(last);
                    if last > x0 + 1 {
                        inner_pes(&costs, method, old, (x0 + 1..last, gy, span_x), row);
                    }
                }
            });
        self.spare = std::mem::replace(&mut self.clocks, next);
        if exchange {
            for link in &mut self.links {
                record_consumed(&shape, &costs, &self.clocks, link);
            }
        }
        self.step += 1;
    }
}

/// Which edge of a wafer: the column or row index and whether it is a column.
#[derive(Clone, Copy)]
struct Edge {
    column: bool,
    high: bool,
}

fn sending_edge(d: Direction) -> Edge {
    match d {
        Direction::Right => Edge {
            column: true,
            high: true,
        },
        Direction::Left => Edge {
            column: true,
            high: false,
        },
        Direction::Up => Edge {
            column: false,
            high: true,
        },
        Direction::Down => Edge {
            column: false,
            high: false,
        },
    }
}

fn receiving_edge(d: Direction) -> Edge {
    let Edge { column, high } = sending_edge(d);
    Edge {
        column,
        high: !high,
    }
}

/// PEs along the edge a link in direction `d` leaves from.
fn edge_len(shape: &ClusterShape, d: Direction) -> usize {
    match d {
        Direction::Right | Direction::Left => shape.pes_y as usize,
        Direction::Up | Direction::Down => shape.pes_x as usize,
    }
}

/// Cluster index of the `k`-th PE along one edge of wafer `wafer`.
fn edge_pe(shape: &ClusterShape, wafer: usize, edge: Edge, k: usize) -> usize {
    let (span_x, _) = shape.span();
    let (wx, wy) = (
        wafer % shape.wafers_x as usize,
        wafer / shape.wafers_x as usize,
    );
    let (ox, oy) = (wx * shape.pes_x as usize, wy * shape.pes_y as usize);
    let (x, y) = match (edge.column, edge.high) {
        (true, high) => (if high { shape.pes_x as usize - 1 } else { 0 }, k),
        (false, high) => (k, if high { shape.pes_y as usize - 1 } else { 0 }),
    };
    (oy + y) * span_x + ox + x
}

/// Sends this step's package over `link`, each strip on its own channel: FIFO, credits,
/// serialisation, latency.
fn send(shape: &ClusterShape, costs: &Costs, clocks: &[u64], link: &mut Link) {
    let capacity = costs.capacity as u64;
    let strips = link.arrivals.len();
    let slot = (link.sent % capacity) as usize * strips;
    let edge = sending_edge(link.direction);
    for k in 0..strips {
        let credit = if link.sent >= capacity {
            link.consumed[slot + k]
        } else {
            0
        };
        let ready = clocks[edge_pe(shape, link.from, edge, k)];
        link.free_at[k] = ready.max(link.free_at[k]).max(credit) + link.serialise;
        link.arrivals[k] = link.free_at[k] + link.latency;
    }
    link.sent += 1;
}

/// The extra latency, up to `jitter`, of the link leaving the wafer at `(wx, wy)` in
/// `direction`: a hash of the three (SplitMix64), so every run draws the same, and a larger
/// cluster keeps the draws of the links it shares with a smaller one.
fn jitter_of(jitter: u64, (wx, wy): (u64, u64), direction: Direction) -> u64 {
    if jitter == 0 {
        return 0;
    }
    let mut z = wx << 34 ^ wy << 4 ^ direction as u64;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64 * (jitter + 1) as f64) as u64
}

/// Records when each receiver of `link` finished the step that consumed its last package.
fn record_consumed(shape: &ClusterShape, costs: &Costs, clocks: &[u64], link: &mut Link) {
    let strips = link.arrivals.len();
    let slot = ((link.sent - 1) % costs.capacity as u64) as usize * strips;
    let edge = receiving_edge(link.direction);
    for k in 0..strips {
        link.consumed[slot + k] = clocks[edge_pe(shape, link.to, edge, k)];
    }
}

/// The exchange step of PEs `xs` of row `gy` (of `span_x` PEs), all away from the wafer's
/// edges, so that every neighbour is on-wafer hops away: `max(own + interior, arrivals) +
/// edge`, one upstream neighbour at a time over whole runs so that it vectorises (a per-PE
/// loop took as long as the heat stencil itself at n = 8).
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn inner_pes(
    costs: &Costs,
    method: Method,
    old: &[u64],
    (xs, gy, span_x): (std::ops::Range<usize>, usize, usize),
    row: &mut [u64],
) {
    let out = &mut row[xs.clone()];
    let at = |dx: i64, dy: i64| {
        let first = (gy as i64 + dy) as usize * span_x + (xs.start as i64 + dx) as usize;
        &old[first..first + xs.len()]
    };
    for (t, &own) in out.iter_mut().zip(at(0, 0)) {
        *t = own + costs.interior;
    }
    for &(dx, dy) in upstream(method) {
        let cost = costs.hop * (dx.abs() + dy.abs()) as u64;
        for (t, &from) in out.iter_mut().zip(at(dx, dy)) {
            *t = (*t).max(from + cost);
        }
    }
    for t in out {
        *t += costs.edge;
    }
}

/// `T[pe][s+1]` of the PE at cluster coordinates `(gx, gy)`.
#[allow(clippy::too_many_arguments)]
fn pe_step(
    shape: &ClusterShape,
    costs: &Costs,
    method: Method,
    exchange: bool,
    old: &[u64],
    links: &[Link],
    gx: usize,
    gy: usize,
) -> u64 {
    let (span_x, span_y) = shape.span();
    let own = old[gy * span_x + gx];
    if !exchange {
        return own + costs.interior + costs.edge;
    }
    let (px, py) = (gx % shape.pes_x as usize, gy % shape.pes_y as usize);
    let wafer = (gy / shape.pes_y as usize) * shape.wafers_x as usize + gx / shape.pes_x as usize;
    let (last_x, last_y) = (shape.pes_x as usize - 1, shape.pes_y as usize - 1);
    // The strip for this PE's row (horizontal links) or column (vertical links).
    let arrival_from =
        |d: Direction, along: usize| links[link_into(shape, method, wafer, d)].arrivals[along];
    let horizontal = |dx: i64| {
        if dx < 0 {
            Direction::Right
        } else {
            Direction::Left
        }
    };
    let vertical = |dy: i64| {
        if dy < 0 {
            Direction::Up
        } else {
            Direction::Down
        }
    };
    let neighbour = |dx: i64, dy: i64| {
        let x = (gx as i64 + dx).rem_euclid(span_x as i64) as usize;
        let y = (gy as i64 + dy).rem_euclid(span_y as i64) as usize;
        old[y * span_x + x]
    };
    let upstream = upstream(method);
    let mut arrival = 0;
    for &(dx, dy) in upstream {
        let crosses_x = (dx < 0 && px == 0) || (dx > 0 && px == last_x);
        let crosses_y = (dy < 0 && py == 0) || (dy > 0 && py == last_y);
        let t = match (crosses_x, crosses_y) {
            (false, false) => neighbour(dx, dy) + costs.hop * (dx.abs() + dy.abs()) as u64,
            (_, true) => arrival_from(vertical(dy), px),
            (true, false) => arrival_from(horizontal(dx), (py as i64 + dy) as usize),
        };
        arrival = arrival.max(t);
    }
    (own + costs.interior).max(arrival) + costs.edge
}

/// `(dx, dy)` of the neighbours a PE waits for: left, below and below-left for domain
/// translation, all eight for the methods that exchange both ways.
fn upstream(method: Method) -> &'static [(i64, i64)] {
    match method {
        Method::DomainTranslation => &[(-1, 0), (0, -1), (-1, -1)],
        _ => &[
            (-1, 0),
            (0, -1),
            (-1, -1),
            (1, 0),
            (0, 1),
            (1, 1),
            (-1, 1),
            (1, -1),
        ],
    }
}

/// Directions of the links each wafer sends on, in link order.
pub fn directions(method: Method) -> &'static [Direction] {
    match method {
        Method::DomainTranslation => &Direction::ALL,
        _ => &Direction::FOUR,
    }
}

/// Index of the link that carries direction `d` into `wafer`.
fn link_into(shape: &ClusterShape, method: Method, wafer: usize, d: Direction) -> usize {
    let (kx, ky) = (shape.wafers_x as i64, shape.wafers_y as i64);
    let (wx, wy) = (wafer as i64 % kx, wafer as i64 / kx);
    let (dx, dy) = d.offset();
    let from = ((wy - dy).rem_euclid(ky) * kx + (wx - dx).rem_euclid(kx)) as usize;
    let dirs = directions(method);
    from * dirs.len()
        + dirs
            .iter()
            .position(|&x| x == d)
            .expect("the method sends this way")
}
