//! Figure 9: steps per second against the link latency.

use std::fmt::Write as _;

use crate::kernels::KernelKind;
use crate::render::plot::{Plot, Series};
use crate::Result;

use super::{on_cluster, paper, size_name, Model, Output};

pub(super) fn figure9(model: &mut Model, out: &mut Output) -> Result<()> {
    let params = paper(KernelKind::Heat5, 0.75);
    let nodes = [4u32, 8, 16, 32, 64, 128];
    let mut series = vec![];
    let mut rows = vec![];
    for size in model.sizes.clone() {
        let pes_per_node = (size.0 * size.1) as f64;
        // Problem sizes: n = 64, 32, 16, 8 on 4 nodes.
        for n4 in [64u32, 32, 16, 8] {
            let total = 4.0 * pes_per_node * (n4 * n4) as f64;
            let mut points = vec![];
            for &k in &nodes {
                let n = ((total / (k as f64 * pes_per_node)).sqrt().round() as u32).max(1);
                let p = model.run(&params, size, n)?;
                let shaped = on_cluster(&p, (k, 1));
                rows.push(format!(
                    "{},{total},{k},{n},{}",
                    size_name(size),
                    shaped.steps_per_second()
                ));
                points.push((k as f64, shaped.steps_per_second()));
            }
            series.push(Series {
                name: format!("{total:.1e} points, {}", size_name(size)),
                points,
                markers: true,
            });
        }
    }
    let plot = Plot {
        title: "Figure 9 top: strong scaling, heat5".into(),
        x_label: "nodes".into(),
        y_label: "steps/s".into(),
        log_x: true,
        log_y: true,
        series,
        markers: vec![],
    };
    out.png("figure9.png", &plot)?;
    out.csv(
        "figure9.csv",
        "node,total_points,nodes,n,model_steps_per_s",
        &rows,
    )?;
    let _ = writeln!(
        out.text,
        "## Figure 9 (top): strong scaling, 4 to 128 nodes\n\n![Figure 9](figure9.png)\n\n\
         Each problem keeps its total size (n = 64, 32, 16 and 8 on 4 nodes of each node size); `n` is \
         rounded to a whole number of points per PE side, so the curves step where the rounding does. \
         Rates grow with the node count while compute-bound and flatten once `n` is small enough for \
         the links' bandwidth to rule, as in the paper.\n"
    );
    Ok(())
}
