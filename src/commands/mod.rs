//! The commands, one layer above the library: each takes a validated configuration (built from
//! the command line in `app`; a command never calls the parser) and returns what it prints;
//! `main` only dispatches and shows progress.

pub mod adapters;
pub mod bench;
mod checkpoint;
pub mod predict;
pub mod reproduce;
pub mod run;
pub mod sweep;
pub mod tsunami;

use std::sync::atomic::{AtomicBool, Ordering};

pub use checkpoint::{command_line as checkpoint_command_line, record_command_line};

/// Set by SIGINT or SIGTERM once [`watch_signals`] ran.
static STOP: AtomicBool = AtomicBool::new(false);

/// From now on SIGINT and SIGTERM ask the running command to stop at its next safe point
/// (a sweep between cases, a run at its next chunk of steps or sample, with a checkpoint
/// where it writes them), so that it leaves its folder unlocked and no temporary file.
pub(crate) fn watch_signals() {
    // A second call in one process fails harmlessly: the handler is already there.
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
}

/// Whether a signal asked to stop.
pub(crate) fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The error of a run stopped by a signal at `step` that writes no checkpoints.
pub(crate) fn stopped_unsaved(step: u64) -> crate::Error {
    crate::Error::Aborted(format!(
        "stopped by a signal at step {step}; what it wrote so far stays, but without checkpoints (--checkpoint-every-steps in run, --checkpoint-every in tsunami) it cannot be resumed"
    ))
}
