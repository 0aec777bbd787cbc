//! Adapter selection from flags and the environment, and what `wafer-emu adapters` lists.

use crate::{invalid, Result};

/// The native backends wafer-emu can run on (all but the browser and no-op ones).
pub const NATIVE_BACKENDS: wgpu::Backends = wgpu::Backends::VULKAN
    .union(wgpu::Backends::GL)
    .union(wgpu::Backends::METAL)
    .union(wgpu::Backends::DX12);

/// Backend names for messages, e.g. `vulkan, gl`.
pub fn backend_names(backends: wgpu::Backends) -> String {
    let names: Vec<String> = backends
        .iter_names()
        .map(|(name, _)| name.to_lowercase())
        .collect();
    names.join(", ")
}

/// Which adapters to consider: the backends and an optional name filter (a case-insensitive
/// substring, like `WGPU_ADAPTER_NAME`).
#[derive(Clone, Debug)]
pub struct AdapterRequest {
    pub backends: wgpu::Backends,
    pub name: Option<String>,
}

impl AdapterRequest {
    /// All backends, any name.
    pub fn any() -> Self {
        Self {
            backends: wgpu::Backends::all(),
            name: None,
        }
    }
}

/// Parses a GPU backend name (`vulkan`, `gl`, `metal`, `dx12`).
pub fn parse_backend(name: &str) -> Result<wgpu::Backends> {
    match name.to_ascii_lowercase().as_str() {
        "vulkan" | "vk" => Ok(wgpu::Backends::VULKAN),
        "gl" | "gles" | "opengl" => Ok(wgpu::Backends::GL),
        "metal" => Ok(wgpu::Backends::METAL),
        "dx12" | "d3d12" => Ok(wgpu::Backends::DX12),
        _ => Err(invalid!(
            "unknown backend '{name}': allowed auto, cpu, vulkan, gl, metal, dx12"
        )),
    }
}

/// One adapter as `wafer-emu adapters` lists it.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
}

impl AdapterSummary {
    /// True for CPU (software) adapters such as lavapipe and llvmpipe.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// True for llvmpipe on GL, which takes minutes to compile the wafer's larger shaders.
    pub fn is_software_gl(&self) -> bool {
        self.is_software() && self.info.backend == wgpu::Backend::Gl
    }

    /// Largest field one storage binding can hold, in bytes.
    pub fn max_binding_bytes(&self) -> u64 {
        (self.limits.max_storage_buffer_binding_size).min(self.limits.max_buffer_size)
    }

    /// One line: name, backend, type, driver and the limits that matter here.
    pub fn line(&self) -> String {
        let l = &self.limits;
        format!(
            "{} | {:?} | {:?} | {} {} | storage binding {} MiB, buffer {} MiB, workgroups/dim {}, invocations/workgroup {}, workgroup memory {} KiB, storage buffers/stage {}, {}",
            self.info.name,
            self.info.backend,
            self.info.device_type,
            self.info.driver,
            self.info.driver_info,
            self.max_binding_bytes() >> 20,
            l.max_buffer_size >> 20,
            l.max_compute_workgroups_per_dimension,
            l.max_compute_invocations_per_workgroup,
            l.max_compute_workgroup_storage_size >> 10,
            l.max_storage_buffers_per_shader_stage,
            self.subgroups()
        )
    }

    /// The adapter as data: what [`AdapterSummary::line`] says, with sizes in bytes.
    pub fn json(&self) -> serde_json::Value {
        let (l, i) = (&self.limits, &self.info);
        let subgroups = self.features.contains(wgpu::Features::SUBGROUP);
        serde_json::json!({
            "name": i.name,
            "backend": format!("{:?}", i.backend).to_lowercase(),
            "device_type": format!("{:?}", i.device_type).to_lowercase(),
            "software": self.is_software(),
            "driver": i.driver,
            "driver_info": i.driver_info,
            "storage_binding_bytes": self.max_binding_bytes(),
            "buffer_bytes": l.max_buffer_size,
            "workgroups_per_dimension": l.max_compute_workgroups_per_dimension,
            "invocations_per_workgroup": l.max_compute_invocations_per_workgroup,
            "workgroup_memory_bytes": l.max_compute_workgroup_storage_size,
            "storage_buffers_per_stage": l.max_storage_buffers_per_shader_stage,
            "subgroup_lanes": subgroups.then_some([i.subgroup_min_size, i.subgroup_max_size]),
        })
    }

    /// The adapter's subgroups, as `block_lanes` needs them.
    fn subgroups(&self) -> String {
        let (lo, hi) = (self.info.subgroup_min_size, self.info.subgroup_max_size);
        match self.features.contains(wgpu::Features::SUBGROUP) {
            false => "no subgroup operations".into(),
            true if lo == hi => format!("subgroups of {lo} lanes"),
            true => format!("subgroups of {lo} to {hi} lanes"),
        }
    }
}

pub(super) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// The adapters matching the request, best first: discrete, integrated, virtual, other,
/// software; Vulkan before the other backends of the same type.
fn matching_adapters(request: &AdapterRequest) -> Vec<wgpu::Adapter> {
    let mut adapters =
        pollster::block_on(instance(request.backends).enumerate_adapters(request.backends));
    filter_and_sort(request, &mut adapters);
    adapters
}

/// The best adapter for the request. The primary backends (Vulkan, Metal, DX12) are asked
/// first; GL only when they offer no hardware adapter, since probing GL without a display
/// prints noise.
pub(super) fn best_adapter(request: &AdapterRequest) -> Option<wgpu::Adapter> {
    let subset = |backends| AdapterRequest {
        backends,
        name: request.name.clone(),
    };
    let primary = request.backends & wgpu::Backends::PRIMARY;
    let mut found = matching_adapters(&subset(primary));
    let hardware = |a: &wgpu::Adapter| a.get_info().device_type != wgpu::DeviceType::Cpu;
    if !found.first().is_some_and(hardware) {
        found.extend(matching_adapters(&subset(request.backends - primary)));
        filter_and_sort(request, &mut found);
    }
    found.into_iter().next()
}

fn filter_and_sort(request: &AdapterRequest, adapters: &mut Vec<wgpu::Adapter>) {
    if let Some(name) = &request.name {
        let name = name.to_lowercase();
        adapters.retain(|a| a.get_info().name.to_lowercase().contains(&name));
    }
    adapters.sort_by_key(|a| {
        let info = a.get_info();
        let kind = match info.device_type {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Other => 3,
            wgpu::DeviceType::Cpu => 4,
        };
        (kind, info.backend != wgpu::Backend::Vulkan)
    });
}

/// Lists the adapters matching the request, best first.
pub fn list_adapters(request: &AdapterRequest) -> Vec<AdapterSummary> {
    matching_adapters(request)
        .iter()
        .map(|a| AdapterSummary {
            info: a.get_info(),
            limits: a.limits(),
            features: a.features(),
        })
        .collect()
}
