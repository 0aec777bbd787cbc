//! The GPU side: context and adapter selection, composed shaders, and the three GPU engines
//! (emulated cluster of wafers, global-grid reference, copy ceiling).

mod adapter;
mod cluster;
pub mod constants;
mod context;
mod copy;
mod device_runner;
mod global;
mod layout;
pub(crate) mod point_blocks;
mod profile;
pub mod reflect;
mod row_blocks;
pub mod shaders;
mod shard;
pub mod split;
mod tuning;
pub(crate) mod uniforms;

pub use adapter::{
    backend_names, list_adapters, parse_backend, AdapterRequest, AdapterSummary, NATIVE_BACKENDS,
};
pub use cluster::{GpuCluster, Placement, MAX_DEVICES};
pub use context::{GpuContext, Pipeline};
pub use copy::CopyKernel;
pub use global::GpuGlobal;
pub use point_blocks::PointBlock;
pub use profile::{KernelTime, Profile, PROFILE_FEATURES};
pub use row_blocks::RowBlock;
pub use shard::{direct_reads, fused_block, tile_cap, TimeBlock, TimeBlocks};
pub use tuning::{CopyOrder, DirectGrid, Tuning, TUNING_VAR};
