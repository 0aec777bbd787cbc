//! `wafer-emu predict`: the timing model of a cluster on the CPU or a GPU, with the sampled
//! clocks written as `.npy`.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::engine::EngineRequest;
use crate::io::{npy_bytes, write_atomic};
use crate::timing::{self, PredictConfig};
use crate::{invalid, Result};

/// A validated `predict`.
#[derive(Clone, Debug)]
pub struct PredictCommand {
    pub model: PredictConfig,
    /// Run the clocks on this GPU request instead of the CPU.
    pub gpu: Option<EngineRequest>,
    /// Where to write the sampled clocks.
    pub telemetry: Option<PathBuf>,
}

/// Runs the model and writes the telemetry; returns the text report and the prediction.
pub fn predict(
    command: &PredictCommand,
    warn: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(String, timing::Prediction)> {
    if let Some(path) = &command.telemetry {
        crate::io::check_file_target(path, "--telemetry")?;
    }
    let ctx = match &command.gpu {
        None => None,
        Some(request) => {
            let (ctx, warnings) = request.open()?;
            warnings.iter().for_each(|w| warn(w));
            Some(ctx.ok_or_else(|| invalid!("--device gpu needs a GPU adapter"))?)
        }
    };
    let prediction = timing::predict_with_progress(&command.model, ctx, progress)?;
    let mut report = prediction.to_string();
    if let (Some(path), Some(t)) = (&command.telemetry, &prediction.telemetry) {
        let payload: Vec<u8> = t.cycles.iter().flat_map(|c| c.to_le_bytes()).collect();
        write_atomic(path, &npy_bytes("<f8", &t.shape, &payload))?;
        let _ = writeln!(
            report,
            "telemetry      {} {:?} (cycles)",
            path.display(),
            t.shape
        );
    }
    Ok((report, prediction))
}
