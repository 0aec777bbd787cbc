//! The commands, one layer above the library: each takes a validated configuration (built from
//! the command line in `cli`) and returns what it prints; `main` only dispatches and shows
//! progress.

pub mod adapters;
pub mod bench;
pub mod predict;
pub mod reproduce;
pub mod run;
pub mod sweep;
pub mod tsunami;
