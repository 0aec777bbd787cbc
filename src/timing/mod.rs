//! Timing emulation (DESIGN.md section 2): values say what the cluster computes, these clocks
//! say how fast the real machine would.

pub mod clocks;
pub mod gpu;
pub mod params;
pub mod predict;
pub mod reproduce;

pub use clocks::{ClusterClocks, ClusterShape, Costs, TICKS_PER_CYCLE};
pub use gpu::GpuClocks;
pub use params::{CostModel, Method, TimingParams};
pub use predict::{predict, Bound, PredictConfig, Prediction, Telemetry, TelemetryPlan};
