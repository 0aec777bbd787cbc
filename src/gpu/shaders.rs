//! WGSL sources, composed from `shaders/`: the common prelude, the kernel's per-cell maths and
//! a driver. Bind-group layouts are derived from the composed shader (wgpu's automatic layout,
//! reflected by naga), never written by hand.

use crate::kernels::KernelKind;

const COMMON: &str = include_str!("../../shaders/common.wgsl");
const STENCIL_BLOCK: &str = include_str!("../../shaders/stencil_block.wgsl");
const CLUSTER_LINKS: &str = include_str!("../../shaders/cluster_links.wgsl");
const CLUSTER_PACK: &str = include_str!("../../shaders/cluster_pack.wgsl");
const CLUSTER_SENDRECV: &str = include_str!("../../shaders/cluster_sendrecv.wgsl");
const WAFER_COMPUTE: &str = include_str!("../../shaders/wafer_compute.wgsl");
const GLOBAL_COMPUTE: &str = include_str!("../../shaders/global_compute.wgsl");
const COPY: &str = include_str!("../../shaders/copy.wgsl");
const CLOCKS: &str = include_str!("../../shaders/clocks.wgsl");

/// The per-cell maths of a kernel.
fn stencil(kernel: KernelKind) -> &'static str {
    match kernel {
        KernelKind::Heat5 => include_str!("../../shaders/heat5.wgsl"),
        KernelKind::Heat9 => include_str!("../../shaders/heat9.wgsl"),
    }
}

/// The `sendrecv` remap of a cluster's wafers, reading past the wafer edges from the links.
pub fn cluster_sendrecv() -> String {
    [COMMON, CLUSTER_LINKS, CLUSTER_SENDRECV].concat()
}

/// Packing the up and right packages into the links.
pub fn cluster_pack() -> String {
    [COMMON, CLUSTER_LINKS, CLUSTER_PACK].concat()
}

/// Table 3's `compute` on every PE, for `kernel`.
pub fn wafer_compute(kernel: KernelKind) -> String {
    [COMMON, stencil(kernel), STENCIL_BLOCK, WAFER_COMPUTE].concat()
}

/// The global-grid reference kernel, for `kernel`.
pub fn global_compute(kernel: KernelKind) -> String {
    [COMMON, stencil(kernel), STENCIL_BLOCK, GLOBAL_COMPUTE].concat()
}

/// The copy kernel that measures the adapter's bandwidth ceiling.
pub fn copy() -> String {
    [COMMON, COPY].concat()
}

/// The timing model's clocks (max-plus stencil).
pub fn clocks() -> String {
    [COMMON, CLOCKS].concat()
}

/// Every composed shader with a name, for validation.
pub fn all() -> Vec<(String, String)> {
    let mut shaders = vec![
        ("cluster_sendrecv".to_string(), cluster_sendrecv()),
        ("cluster_pack".to_string(), cluster_pack()),
        ("copy".to_string(), copy()),
        ("clocks".to_string(), clocks()),
    ];
    for kernel in KernelKind::ALL {
        shaders.push((
            format!("wafer_compute/{}", kernel.name()),
            wafer_compute(kernel),
        ));
        shaders.push((
            format!("global_compute/{}", kernel.name()),
            global_compute(kernel),
        ));
    }
    shaders
}

/// Group 1 holds one uniform per dispatch, bound at a dynamic offset.
pub const DISPATCH_GROUP: u32 = 1;

/// The bind-group layout entries of a composed shader by group, reflected from its global
/// variables: uniform buffers (at a dynamic offset in [`DISPATCH_GROUP`]), read-only and
/// read-write storage buffers, visible to compute.
pub fn reflect_bindings(source: &str) -> Vec<Vec<wgpu::BindGroupLayoutEntry>> {
    let module = naga::front::wgsl::parse_str(source).expect("composed shaders parse (tested)");
    let mut groups: Vec<Vec<wgpu::BindGroupLayoutEntry>> = vec![];
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = var.binding.as_ref() else {
            continue;
        };
        let ty = match var.space {
            naga::AddressSpace::Uniform => wgpu::BufferBindingType::Uniform,
            naga::AddressSpace::Storage { access } => wgpu::BufferBindingType::Storage {
                read_only: !access.contains(naga::StorageAccess::STORE),
            },
            _ => continue,
        };
        let group = binding.group as usize;
        if groups.len() <= group {
            groups.resize(group + 1, vec![]);
        }
        groups[group].push(wgpu::BindGroupLayoutEntry {
            binding: binding.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: binding.group == DISPATCH_GROUP,
                min_binding_size: None,
            },
            count: None,
        });
    }
    for entries in &mut groups {
        entries.sort_by_key(|e| e.binding);
    }
    groups
}

/// Parses and validates a WGSL source with naga; the error names the shader and the problem.
pub fn validate(name: &str, source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::uniforms::BLOCK_COLS;

    #[test]
    fn shader_block_width_matches_the_dispatch() {
        let constant = format!("const BLOCK_COLS: u32 = {BLOCK_COLS}u;");
        assert!(
            STENCIL_BLOCK.contains(&constant),
            "stencil_block.wgsl lacks `{constant}`"
        );
        let window = STENCIL_BLOCK
            .split("struct Window {")
            .nth(1)
            .and_then(|s| s.split('}').next());
        let values = window
            .expect("stencil_block.wgsl defines Window")
            .matches(": f32")
            .count();
        assert_eq!(
            values,
            BLOCK_COLS as usize + 2,
            "Window holds BLOCK_COLS + 2 values"
        );
    }
}
