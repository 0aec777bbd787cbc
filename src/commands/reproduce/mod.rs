//! `wafer-emu reproduce`: the paper's performance results (section 5) regenerated from the
//! timing model, as CSV, PNG plots and a Markdown report that sets them beside the published
//! numbers. Nothing here is typed in but the published numbers it compares against.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::io::write_atomic;
use crate::kernels::KernelKind;
use crate::render::plot::Plot;
use crate::timing::{predict, ClusterShape, PredictConfig, Prediction, TimingParams};
use crate::Result;

mod figure3;
mod figure7;
mod figure8;
mod figure9;
mod tables;

use figure3::figure3;
use figure7::figure7;
use figure8::figure8;
use figure9::figure9;
use tables::{headline, table2, table6, which_matches};

/// A validated `reproduce`.
#[derive(Clone, Debug)]
pub struct ReproduceConfig {
    pub out: PathBuf,
    /// Node sizes, PEs per wafer: by default both of the paper's Table 5. The first draws
    /// the figures that show one size.
    pub sizes: Vec<(u32, u32)>,
    /// Write into an output folder that already holds results.
    pub force: bool,
    /// Most extra latency of one link, seconds: above 0, Figure 7 also simulates every
    /// cluster in full, each link with its own extra latency up to this.
    pub link_jitter_s: f64,
}

/// The node sizes of the paper's Table 5: the CS-3's 744 x 1116 PEs and a 720 x 720 square.
pub const TABLE5_SIZES: [(u32, u32); 2] = [(744, 1116), (720, 720)];

fn size_name((x, y): (u32, u32)) -> String {
    format!("{x}x{y}")
}

/// Points per PE side swept by the figures.
const NS: [u32; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Model runs keyed by what distinguishes them, so that figures share them.
struct Model {
    sizes: Vec<(u32, u32)>,
    cache: HashMap<String, Prediction>,
    progress: Box<dyn FnMut(&str)>,
}

impl Model {
    /// One wafer of `pes` linked to itself: the rate of every homogeneous cluster of it.
    fn run(&mut self, params: &TimingParams, pes: (u32, u32), n: u32) -> Result<Prediction> {
        self.cluster(params, pes, (1, 1), n)
    }

    /// `wafers` wafers of `pes` simulated in full (the shortcut for one wafer).
    fn cluster(
        &mut self,
        params: &TimingParams,
        pes: (u32, u32),
        wafers: (u32, u32),
        n: u32,
    ) -> Result<Prediction> {
        let key = format!("{params:?} {pes:?} {wafers:?} {n}");
        if let Some(p) = self.cache.get(&key) {
            return Ok(p.clone());
        }
        (self.progress)(&format!(
            "{} n = {n} {} on {}x{} wafers of {} PEs",
            params.kernel.name(),
            params.method.name(),
            wafers.0,
            wafers.1,
            size_name(pes)
        ));
        let shape = ClusterShape {
            wafers_x: wafers.0,
            wafers_y: wafers.1,
            pes_x: pes.0,
            pes_y: pes.1,
            n,
            p: 1,
        };
        let mut config = PredictConfig::shortcut(params.clone(), shape, 20_000);
        config.full = wafers != (1, 1);
        let prediction = predict(&config, None)?;
        self.cache.insert(key, prediction.clone());
        Ok(prediction)
    }

    /// The first node size: the one of the figures that show a single size.
    fn primary(&self) -> (u32, u32) {
        self.sizes[0]
    }
}

/// The same prediction for a cluster of `wafers` nodes (all wafers identical).
fn on_cluster(p: &Prediction, wafers: (u32, u32)) -> Prediction {
    let mut p = p.clone();
    p.config.shape.wafers_x = wafers.0;
    p.config.shape.wafers_y = wafers.1;
    p
}

fn paper(kernel: KernelKind, clock_ghz: f64) -> TimingParams {
    let mut p = TimingParams::paper(kernel);
    p.clock_hz = clock_ghz * 1e9;
    p
}

fn unconstrained(mut p: TimingParams) -> TimingParams {
    p.link_latency_s = 0.0;
    p.hop_latency_s = 0.0;
    p.link_bandwidth_bps = 1e30;
    p
}

/// The report being written: its folder, its Markdown text, the files written so far and
/// the figures compared with the paper at every node size.
struct Output {
    dir: PathBuf,
    text: String,
    files: Vec<PathBuf>,
    comparisons: Vec<Comparison>,
}

/// One published figure beside the model's value at each node size (`None`: the model has
/// no such value, e.g. no crossover in range).
struct Comparison {
    figure: String,
    paper: f64,
    /// The paper states a lower bound ("in excess of"): any value above it matches exactly.
    at_least: bool,
    model: Vec<Option<f64>>,
}

impl Comparison {
    /// Index of the node size whose value is nearest the paper's (by ratio), or `None` when
    /// no size has a value or several are equally near.
    fn closest(&self) -> Option<usize> {
        let distance = |v: f64| match self.at_least && v >= self.paper {
            true => 0.0,
            false => (v / self.paper).ln().abs(),
        };
        let values: Vec<(usize, f64)> = self
            .model
            .iter()
            .enumerate()
            .filter_map(|(k, v)| v.map(|v| (k, distance(v))))
            .collect();
        let (best, d) = values.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let tied = values.iter().filter(|(_, e)| (e - d).abs() <= 1e-9).count();
        (tied == 1).then_some(best)
    }
}

impl Output {
    /// Writes a CSV into the folder.
    fn csv(&mut self, name: &str, header: &str, rows: &[String]) -> Result<()> {
        self.write(
            name,
            format!("{header}\n{}\n", rows.join("\n")).into_bytes(),
        )
    }

    /// Writes a plot into the folder.
    fn png(&mut self, name: &str, plot: &Plot) -> Result<()> {
        self.write(name, plot.png()?)
    }

    fn write(&mut self, name: &str, bytes: Vec<u8>) -> Result<()> {
        let path = self.dir.join(name);
        write_atomic(&path, &bytes)?;
        self.files.push(path);
        Ok(())
    }
}

fn steps_per_s(params: &TimingParams, cycles: f64) -> f64 {
    params.clock_hz / cycles
}

/// Runs everything and writes the files; returns their paths (the report last).
pub fn reproduce(config: &ReproduceConfig, progress: Box<dyn FnMut(&str)>) -> Result<Vec<PathBuf>> {
    crate::io::check_output_dir(&config.out, config.force)?;
    let _claim = crate::io::claim_dir(&config.out, crate::io::Earlier::Replace)?;
    let mut model = Model {
        sizes: config.sizes.clone(),
        cache: HashMap::new(),
        progress,
    };
    let mut out = Output {
        dir: config.out.clone(),
        text: String::new(),
        files: vec![],
        comparisons: vec![],
    };
    let names: Vec<String> = config.sizes.iter().map(|&s| size_name(s)).collect();
    let reduced: Vec<&String> = config
        .sizes
        .iter()
        .zip(&names)
        .filter(|(s, _)| !TABLE5_SIZES.contains(s))
        .map(|(_, name)| name)
        .collect();
    let _ = writeln!(
        out.text,
        "# Domain translation on a CS-3 cluster: the paper's results from the timing model\n\n\
         *Model* rates, cycles and utilisations come from `wafer-emu reproduce` running the per-PE \
         max-plus clocks (docs/design.md, section 6) to their steady state with the paper's parameters on \
         wafers of {} PEs, one wafer linked to itself: all wafers of a homogeneous torus keep \
         identical clocks (the tests check this against full clusters), so cluster figures are one \
         wafer's rate times the node count. The *bounds*, Figure 3's threshold and Figure 8's \
         crossover are the formulas stated with them. *Paper* columns are the published values. \
         Figures that show one node size show {}; the last section sets every size beside the \
         paper's figures and says which one each matches.\n",
        names.join(" and "),
        names[0]
    );
    if !reduced.is_empty() {
        let _ = writeln!(
            out.text,
            "**Reduced wafer size:** {} is not a node size of the paper's Table 5 (744x1116 or \
             720x720). Its comparisons with the paper are at a reduced wafer size: latency is \
             spread over fewer PEs and a package carries fewer strips, so they are indicative only.\n",
            reduced.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    table6(&mut model, &mut out)?;
    figure3(&mut model, &mut out)?;
    figure7(&mut model, &mut out, config.link_jitter_s)?;
    figure8(&mut model, &mut out)?;
    figure9(&mut model, &mut out)?;
    table2(&mut model, &mut out)?;
    headline(&mut model, &mut out)?;
    which_matches(&model, &mut out, &reduced);
    let text = std::mem::take(&mut out.text);
    out.write("report.md", text.into_bytes())?;
    Ok(out.files)
}
