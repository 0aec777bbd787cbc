//! Typed errors of the library; the CLI turns them into messages and exit codes.

use thiserror::Error;

/// Everything the library can fail with.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter is outside what the emulator supports; the message names the value and the
    /// allowed range.
    #[error("{0}")]
    InvalidInput(String),
    /// The wafer does not fit the chosen adapter.
    #[error("{0}")]
    TooLarge(String),
    /// No adapter matched the request.
    #[error("no GPU adapter found{0}")]
    NoAdapter(String),
    /// The adapter refused the device or a GPU operation failed.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// Writing an output file failed.
    #[error("cannot write {}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The cluster's configuration cannot progress (a link of capacity 0, a deadlock); the
    /// message names the wafer, the link and the step.
    #[error("{0}")]
    Deadlock(String),
    /// A wafer waited past the time limit for a package or a device (a lost or hung device);
    /// the message names the wafer, the link and the step.
    #[error("{0}")]
    Timeout(String),
    /// A device thread stopped because another one failed (the other's error is the cause).
    #[error("aborted: {0}")]
    Aborted(String),
    /// The simulation became unstable (NaN, infinity or a speed bound exceeded) by `step`; the
    /// message names the step, the place and the CFL number. Outputs already written are kept.
    #[error("{message}")]
    BlowUp { step: u64, message: String },
    /// Encoding an output (PNG) failed.
    #[error("cannot encode {0}")]
    Encode(String),
}

impl Error {
    /// True when the error is the user's input (bad value, too large, unwritable output), as
    /// opposed to a failure of the machine; the CLI exits with 2 for these.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidInput(_)
                | Error::TooLarge(_)
                | Error::NoAdapter(_)
                | Error::Io { .. }
                | Error::Deadlock(_)
        )
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::InvalidInput`] from a format string.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::Error::InvalidInput(format!($($arg)*)) };
}
