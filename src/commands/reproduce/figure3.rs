//! Figure 3: steps per second against n, with the compute, bandwidth and latency bounds.

use std::fmt::Write as _;

use crate::kernels::KernelKind;
use crate::render::plot::{Plot, Series};
use crate::timing::{Prediction, TimingParams};
use crate::Result;

use super::{paper, steps_per_s, Model, Output, NS};

fn bound_series(
    params: &TimingParams,
    preds: &[(u32, Prediction)],
    x: impl Fn(u32) -> f64,
) -> Vec<Series> {
    let series = |name: &str, f: &dyn Fn(&Prediction) -> f64| Series {
        name: name.into(),
        points: preds
            .iter()
            .map(|(n, p)| (x(*n), steps_per_s(params, f(p))))
            .collect(),
        markers: name == "model",
    };
    vec![
        series("model", &|p| p.cycles_per_step),
        series("compute bound", &|p| p.compute_cycles),
        series("bandwidth bound", &|p| p.bandwidth_cycles),
        series("latency bound", &|p| p.latency_cycles),
    ]
}

pub(super) fn figure3(model: &mut Model, out: &mut Output) -> Result<()> {
    let _ = writeln!(
        out.text,
        "## Figure 3: step rate against points per core\n\n\
         heat5 at 0.75 GHz on wafers of 64 x 64 PEs (small enough for latency to show), with the \
         paper's 10 us links and with 1 ms links (clusters in different cities, as the paper's \
         conclusion suggests). Bounds are the rates each resource alone allows: compute `f(n)`, \
         bandwidth (a package's serialisation per step), latency (the slower dependency chain: a \
         horizontal link's latency spread over the wafer's width, or a vertical one's over its \
         height, plus one PE's edge work; a corner rides one of them, so they do not add). Every \
         bound is a lower bound on the simulated cycles per step (tested). The *threshold* is the \
         smallest n whose latency bound is no tighter than its compute bound, this model's Eq. (1).\n"
    );
    let mut rows = vec![];
    for (tag, latency_us) in [("10us", 10.0), ("1ms", 1000.0)] {
        let mut params = paper(KernelKind::Heat5, 0.75);
        params.link_latency_s = latency_us * 1e-6;
        let preds = NS
            .iter()
            .map(|&n| Ok((n, model.run(&params, (64, 64), n)?)))
            .collect::<Result<Vec<_>>>()?;
        let threshold = preds
            .iter()
            .find(|(_, p)| p.latency_cycles <= p.compute_cycles)
            .map(|(n, _)| n * n);
        let mut plot = Plot {
            title: format!("Figure 3: heat5, 64x64 PEs, {tag} links"),
            x_label: "points per core".into(),
            y_label: "steps/s".into(),
            log_x: true,
            log_y: true,
            series: bound_series(&params, &preds, |n| (n * n) as f64),
            markers: vec![],
        };
        if let Some(t) = threshold {
            plot.markers.push((t as f64, format!("threshold {t}")));
        }
        out.png(&format!("figure3_{tag}.png"), &plot)?;
        let _ = writeln!(
        out.text,
            "![Figure 3, {tag}](figure3_{tag}.png)\n\nWith {tag} links the latency stops limiting at {} points per core; the model's rate then follows the tighter of compute and bandwidth.\n",
            threshold.map_or("no swept".into(), |t| t.to_string())
        );
        for (n, p) in &preds {
            rows.push(format!(
                "{tag},{},{},{},{},{}",
                n * n,
                steps_per_s(&params, p.cycles_per_step),
                steps_per_s(&params, p.compute_cycles),
                steps_per_s(&params, p.bandwidth_cycles),
                steps_per_s(&params, p.latency_cycles)
            ));
        }
    }
    out.csv(
        "figure3.csv",
        "links,points_per_core,model_steps_per_s,compute_bound,bandwidth_bound,latency_bound",
        &rows,
    )?;
    Ok(())
}
