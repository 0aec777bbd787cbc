//! `wafer-emu reproduce`: its arguments and the validated `ReproduceConfig`.

use std::path::PathBuf;

use clap::Args;

use crate::commands::reproduce::{ReproduceConfig, TABLE5_SIZES};
use crate::timing::ClusterShape;
use crate::{invalid, Result};

use super::args::{parse_node, JsonArgs};

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ReproduceArgs {
    /// Output folder for the CSVs, plots and report.md
    #[arg(long, default_value = "reproduce")]
    pub out: PathBuf,
    /// Write into an output folder that already holds results, removing first the files that
    /// earlier runs wrote there (other files stay; without it such a folder is refused; a
    /// folder another run is writing is always refused)
    #[arg(long)]
    pub force: bool,
    /// PEs per wafer: paper (both node sizes of the paper's Table 5, 744x1116 and 720x720;
    /// about 20 minutes on 2 cores), cs3 (744x1116), square (720x720), WxH, or a comma list;
    /// the report says which size each paper figure matches
    #[arg(long, default_value = "paper")]
    pub pes: String,
    /// Most extra latency of one link in microseconds (each link draws its own, uniform from
    /// 0); above 0, Figure 7 also simulates every cluster in full on wafers an eighth of the
    /// first size along each side
    #[arg(long, value_name = "US", default_value_t = 0.0)]
    pub link_jitter: f64,
    #[command(flatten)]
    pub json: JsonArgs,
}

impl ReproduceArgs {
    /// The validated configuration.
    pub fn config(&self) -> Result<ReproduceConfig> {
        let sizes = match self.pes.as_str() {
            "paper" => TABLE5_SIZES.to_vec(),
            list => list
                .split(',')
                .map(|s| parse_node(s.trim()))
                .collect::<Result<Vec<_>>>()?,
        };
        for &(pes_x, pes_y) in &sizes {
            ClusterShape {
                wafers_x: 1,
                wafers_y: 1,
                pes_x,
                pes_y,
                n: 1,
                p: 1,
            }
            .validate()?;
        }
        if !(self.link_jitter.is_finite() && (0.0..=1e6).contains(&self.link_jitter)) {
            return Err(invalid!(
                "link-jitter = {} us: allowed 0 to 1e6 us",
                self.link_jitter
            ));
        }
        Ok(ReproduceConfig {
            out: self.out.clone(),
            sizes,
            force: self.force,
            link_jitter_s: self.link_jitter * 1e-6,
        })
    }
}
