//! Links between wafers: their identities, their delay and capacity, and their statistics.

use std::fmt;

use serde::Serialize;

use super::ClusterGeometry;
use crate::{invalid, Result};

/// The directions a link can carry data in. Domain translation uses only `Right` and `Up`
/// ([`Direction::ALL`], the emulated cluster's links): nothing flows left or down. The timing
/// model also runs the paper's static decomposition, whose halos go all four ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Right,
    Up,
    Left,
    Down,
}

impl Direction {
    /// The links of domain translation.
    pub const ALL: [Direction; 2] = [Direction::Right, Direction::Up];
    /// The links of a halo exchange.
    pub const FOUR: [Direction; 4] = [
        Direction::Right,
        Direction::Up,
        Direction::Left,
        Direction::Down,
    ];

    /// Wafer offset `(dx, dy)` of the link's far end.
    pub fn offset(self) -> (i64, i64) {
        match self {
            Direction::Right => (1, 0),
            Direction::Up => (0, 1),
            Direction::Left => (-1, 0),
            Direction::Down => (0, -1),
        }
    }

    /// Whether the link joins wafers of one row.
    pub fn is_horizontal(self) -> bool {
        matches!(self, Direction::Right | Direction::Left)
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::Right => "right",
            Direction::Up => "up",
            Direction::Left => "left",
            Direction::Down => "down",
        }
    }
}

/// One link: the outgoing link of wafer `from` in direction `dir`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkId {
    pub from: usize,
    pub dir: Direction,
}

impl LinkId {
    /// Dense index of the link among the cluster's `2 K` links.
    pub fn index(self) -> usize {
        2 * self.from + self.dir as usize
    }

    /// The link of dense index `i`.
    pub fn of_index(i: usize) -> Self {
        Self {
            from: i / 2,
            dir: Direction::ALL[i % 2],
        }
    }

    /// `right link (0,1)->(1,1)`, for messages.
    pub fn describe(self, cluster: &ClusterGeometry) -> String {
        let to = cluster.neighbour(self.from, self.dir);
        let (a, b) = (cluster.coords(self.from), cluster.coords(to));
        format!(
            "{} link ({},{})->({},{})",
            self.dir.name(),
            a.x,
            a.y,
            b.x,
            b.y
        )
    }
}

/// Delay (in rounds of the emulation's logical clock, one round per step of an unhindered
/// wafer) and capacity (in packages) of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkSpec {
    pub delay: u32,
    pub capacity: u32,
}

/// Largest link delay, in rounds.
pub const MAX_DELAY: u32 = 1000;
/// Largest link capacity, in packages, of the emulated links and of the timing model alike
/// (the device rings have as many slots per link as the largest capacity in the cluster; a
/// ring that does not fit the device is refused with the size it needs).
pub const MAX_CAPACITY: u32 = 1 << 16;

impl Default for LinkSpec {
    /// No delay; room for two packages, so that a wafer may run one step ahead of its
    /// neighbour.
    fn default() -> Self {
        Self {
            delay: 0,
            capacity: 2,
        }
    }
}

impl LinkSpec {
    /// Checks the ranges; capacity 0 is allowed here and fails when the cluster runs.
    pub fn validate(&self) -> Result<()> {
        if self.delay > MAX_DELAY {
            return Err(invalid!(
                "link delay = {} is out of range: allowed 0..={MAX_DELAY} rounds",
                self.delay
            ));
        }
        if self.capacity > MAX_CAPACITY {
            return Err(invalid!(
                "link capacity = {} is out of range: allowed 0..={MAX_CAPACITY} packages",
                self.capacity
            ));
        }
        Ok(())
    }
}

/// The spec of every link: one for all, and overrides for single links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkConfig {
    pub all: LinkSpec,
    /// `((wx, wy), direction, spec)`: the outgoing link of wafer `(wx, wy)`.
    pub overrides: Vec<((u32, u32), Direction, LinkSpec)>,
}

impl LinkConfig {
    /// The same spec for every link.
    pub fn uniform(delay: u32, capacity: u32) -> Self {
        Self {
            all: LinkSpec { delay, capacity },
            overrides: vec![],
        }
    }

    /// Parses one override, `WX,WY,right|up:delay=D,capacity=C` (either key may be left out),
    /// on top of `self.all`.
    pub fn parse_override(&self, s: &str) -> Result<((u32, u32), Direction, LinkSpec)> {
        let bad = || {
            invalid!("link '{s}' is not WX,WY,right|up:delay=D,capacity=C (e.g. 1,0,right:delay=5)")
        };
        let (place, settings) = s.split_once(':').ok_or_else(bad)?;
        let parts: Vec<&str> = place.split(',').map(str::trim).collect();
        let [x, y, dir] = parts[..] else {
            return Err(bad());
        };
        let coords = (x.parse().map_err(|_| bad())?, y.parse().map_err(|_| bad())?);
        let dir = match dir {
            "right" => Direction::Right,
            "up" => Direction::Up,
            _ => return Err(bad()),
        };
        let mut spec = self.all;
        for setting in settings.split(',') {
            let (key, value) = setting.split_once('=').ok_or_else(bad)?;
            let value: u32 = value.trim().parse().map_err(|_| bad())?;
            match key.trim() {
                "delay" => spec.delay = value,
                "capacity" => spec.capacity = value,
                _ => return Err(bad()),
            }
        }
        spec.validate()?;
        Ok((coords, dir, spec))
    }

    /// The spec of every link of `cluster`, by dense link index; overrides must name wafers of
    /// the cluster.
    pub fn resolve(&self, cluster: &ClusterGeometry) -> Result<Vec<LinkSpec>> {
        self.all.validate()?;
        let mut specs = vec![self.all; 2 * cluster.count()];
        for &((x, y), dir, spec) in &self.overrides {
            if x >= cluster.wafers_x || y >= cluster.wafers_y {
                return Err(invalid!(
                    "link override names wafer ({x},{y}), outside the {}x{} cluster: allowed x < {}, y < {}",
                    cluster.wafers_x,
                    cluster.wafers_y,
                    cluster.wafers_x,
                    cluster.wafers_y
                ));
            }
            spec.validate()?;
            let from = cluster.index((x as i64, y as i64));
            specs[LinkId { from, dir }.index()] = spec;
        }
        Ok(specs)
    }
}

/// Links listed one by one up to this many (a 4x4 cluster's); beyond it the plain format
/// sums them up per direction and names the links that held the run up.
const LISTED_LINKS: usize = 32;

/// The links' table of a run's report: `{:#}` lists every link; `{}` does so up to
/// 32 (`LISTED_LINKS`), and beyond sums them up per direction and lists the links whose senders
/// stalled, receivers starved or device threads waited most.
pub struct LinkTable<'a>(pub &'a [LinkStats]);

impl LinkTable<'_> {
    /// Up to eight links that held the run up, the longest first.
    fn slowest(&self) -> Vec<&LinkStats> {
        let held = |l: &LinkStats| (l.stall_rounds + l.starve_rounds, l.wait_ms);
        let mut slow: Vec<&LinkStats> = self.0.iter().filter(|l| held(l) > (0, 0.0)).collect();
        slow.sort_by(|a, b| held(b).partial_cmp(&held(a)).expect("finite waits"));
        slow.truncate(8);
        slow
    }
}

/// `lo` where all are equal, else `lo..hi`.
fn span(values: impl Iterator<Item = u64>) -> String {
    let (lo, hi) = values.fold((u64::MAX, 0), |(lo, hi), v| (lo.min(v), hi.max(v)));
    match lo < hi {
        true => format!("{lo}..{hi}"),
        false => lo.to_string(),
    }
}

impl fmt::Display for LinkTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() || self.0.len() <= LISTED_LINKS {
            return self.0.iter().try_for_each(|link| writeln!(f, "  {link}"));
        }
        for dir in Direction::ALL {
            let links: Vec<&LinkStats> = self.0.iter().filter(|l| l.direction == dir).collect();
            if links.is_empty() {
                continue;
            }
            let each = |get: fn(&LinkStats) -> u64| span(links.iter().map(move |l| get(l)));
            writeln!(
                f,
                "  {:<5} {:>5} links, delay {} cap {} | {} packages {} bytes | max occupancy {} | stalled {} rounds, starved {} rounds",
                dir.name(),
                links.len(),
                each(|l| l.delay.into()),
                each(|l| l.capacity.into()),
                each(|l| l.packages),
                each(|l| l.bytes),
                each(|l| l.max_occupancy.into()),
                each(|l| l.stall_rounds),
                each(|l| l.starve_rounds),
            )?;
        }
        let slowest = self.slowest();
        match slowest.is_empty() {
            true => writeln!(f, "  no link held the run up")?,
            false => writeln!(f, "  the links that held the run up most:")?,
        }
        for link in slowest {
            writeln!(f, "  {link}")?;
        }
        writeln!(
            f,
            "  (every link: --json FILE, or summary.txt in the output folder)"
        )
    }
}

/// What one link carried during a run. Rounds are the emulation's logical clock, the same in
/// every placement for the same sequence of `advance` calls (every wafer is held at the end of
/// each); `wait_ms` is real time the device threads at its ends spent blocked on it (waiting
/// for a package, or for room), only for links between devices.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkStats {
    /// The link in words, for the summary (the JSON has it as `from`, `to`, `direction`).
    #[serde(skip)]
    pub link: String,
    pub from: glam::UVec2,
    pub to: glam::UVec2,
    pub direction: Direction,
    #[serde(rename = "delay_rounds")]
    pub delay: u32,
    #[serde(rename = "capacity_packages")]
    pub capacity: u32,
    pub packages: u64,
    pub bytes: u64,
    pub max_occupancy: u32,
    /// Rounds in which the sender had a package ready but the link was full.
    pub stall_rounds: u64,
    /// Rounds in which the receiver waited for the package (to step, or to forward the
    /// corner of an up package).
    pub starve_rounds: u64,
    pub wait_ms: f64,
}

impl fmt::Display for LinkStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<26} delay {:>3} cap {:>2} | {:>8} packages {:>11} bytes | max occupancy {:>2} | stalled {:>6} rounds, starved {:>6} rounds",
            self.link,
            self.delay,
            self.capacity,
            self.packages,
            self.bytes,
            self.max_occupancy,
            self.stall_rounds,
            self.starve_rounds
        )?;
        if self.wait_ms > 0.0 {
            write!(f, ", waited {:.1} ms", self.wait_ms)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(k: u32, direction: Direction, stall_rounds: u64) -> LinkStats {
        LinkStats {
            link: format!("{} link ({k},0)->({},0)", direction.name(), k + 1),
            from: glam::UVec2::new(k, 0),
            to: glam::UVec2::new(k + 1, 0),
            direction,
            delay: k % 3,
            capacity: 2,
            packages: 10,
            bytes: 640,
            max_occupancy: 1,
            stall_rounds,
            starve_rounds: 0,
            wait_ms: 0.0,
        }
    }

    #[test]
    fn many_links_are_summed_up_and_the_slowest_named() {
        let few: Vec<LinkStats> = (0..LISTED_LINKS as u32)
            .map(|k| stats(k, Direction::Up, 0))
            .collect();
        assert_eq!(LinkTable(&few).to_string().lines().count(), LISTED_LINKS);
        let many: Vec<LinkStats> = (0..50)
            .map(|k| stats(k, Direction::ALL[k as usize % 2], (k == 7) as u64 * 5))
            .collect();
        let plain = LinkTable(&many).to_string();
        let lines: Vec<&str> = plain.lines().collect();
        assert!(lines[0].contains("right    25 links, delay 0..2 cap 2 | 10 packages"));
        assert!(lines[1].contains("up       25 links") && lines[1].contains("stalled 0..5 rounds"));
        assert!(
            lines[3].contains("up link (7,0)->(8,0)") && lines.len() == 5,
            "{plain}"
        );
        assert_eq!(format!("{:#}", LinkTable(&many)).lines().count(), 50);
        let calm: Vec<LinkStats> = (0..40).map(|k| stats(k, Direction::Right, 0)).collect();
        assert!(LinkTable(&calm)
            .to_string()
            .contains("no link held the run up"));
    }
}
