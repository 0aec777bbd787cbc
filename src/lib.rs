//! wafer-emu: a cluster of wafer-scale dataflow processors emulated on any wgpu adapter,
//! running stencil codes with the Domain Translation algorithm. `docs/design.md` is the model in the project's words.

pub mod app;
pub mod blocking;
pub mod cluster;
pub mod commands;
pub mod engine;
pub mod error;
pub mod field;
pub mod io;
pub mod kernels;
pub mod memory;
pub mod model;
pub mod render;
pub mod timing;
pub mod tsunami;
pub mod wafer;

pub use error::{Error, Result};
