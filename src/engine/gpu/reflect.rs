//! What naga reads from a composed shader: its bindings (the bind-group layouts the engines
//! build), its constants and struct layouts (the seam tests), and whether it validates.

use super::shaders::DISPATCH_GROUP;

/// One binding a shader declares: its name, group and layout entry.
#[derive(Clone, Debug)]
pub struct Binding {
    pub name: String,
    pub group: u32,
    pub entry: wgpu::BindGroupLayoutEntry,
}

/// The value of `const NAME: u32` in `source` (reflected by naga), for the tests of the
/// Rust/WGSL seam.
pub fn const_u32(source: &str, name: &str) -> Option<u32> {
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[c.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
        _ => None,
    }
}

/// The bindings of a composed shader, reflected from its global variables: uniform buffers
/// (at a dynamic offset in [`DISPATCH_GROUP`]), read-only and read-write storage buffers,
/// visible to compute; sorted by group and binding.
pub fn reflect(source: &str) -> Vec<Binding> {
    let module = naga::front::wgsl::parse_str(source).expect("composed shaders parse (tested)");
    let mut bindings = vec![];
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
        bindings.push(Binding {
            name: var.name.clone().unwrap_or_default(),
            group: binding.group,
            entry: wgpu::BindGroupLayoutEntry {
                binding: binding.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: binding.group == DISPATCH_GROUP,
                    min_binding_size: None,
                },
                count: None,
            },
        });
    }
    bindings.sort_by_key(|b| (b.group, b.entry.binding));
    bindings
}

/// The size and member offsets of WGSL struct `name` in a composed shader, as naga lays it out.
pub fn struct_layout(source: &str, name: &str) -> Option<(u32, Vec<(String, u32)>)> {
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let found = module.types.iter().find_map(|(_, ty)| match &ty.inner {
        naga::TypeInner::Struct { members, span } if ty.name.as_deref() == Some(name) => Some((
            *span,
            members
                .iter()
                .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                .collect(),
        )),
        _ => None,
    });
    found
}

/// The names [`all`] gives the shaders that use subgroup operations (time blocks across a
/// subgroup's lanes, for the adapters that have them, `Tuning::block_lanes`).
pub(super) const LANES_PREFIX: &str = "lanes_blocked/";

/// Parses and validates a WGSL source with naga, with subgroup operations only where
/// [`super::shaders::all`] names them; the error names the shader and the problem.
pub fn validate(name: &str, source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    let capabilities = match name.starts_with(LANES_PREFIX) {
        true => naga::valid::Capabilities::SUBGROUP,
        false => naga::valid::Capabilities::empty(),
    };
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
        .validate(&module)
        .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    Ok(())
}
