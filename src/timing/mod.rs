//! Timing emulation (docs/design.md, section 6): values say what the cluster computes, these clocks
//! say how fast the real machine would.

pub mod clocks;
pub mod gpu;
pub mod params;
pub mod predict;

pub use crate::kernels::CostModel;
pub use clocks::{ClusterClocks, ClusterShape, Costs, TICKS_PER_CYCLE};
pub use gpu::GpuClocks;
pub use params::{Method, TimingParams};
pub use predict::{
    predict, predict_with_progress, Bound, PredictConfig, Prediction, Telemetry, TelemetryPlan,
};
