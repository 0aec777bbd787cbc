//! The GPU side: context and adapter selection, composed shaders, and the three GPU engines
//! (emulated wafer, global-grid reference, copy ceiling).

mod context;
mod copy;
mod global;
pub mod shaders;
pub(crate) mod uniforms;
mod wafer;

pub use context::{
    backend_names, list_adapters, parse_backend, AdapterRequest, AdapterSummary, GpuContext,
    NATIVE_BACKENDS,
};
pub use copy::CopyKernel;
pub use global::GpuGlobal;
pub use wafer::GpuWafer;
