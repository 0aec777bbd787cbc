//! Every composed WGSL shader parses and validates with naga; needs no GPU.

#[test]
fn all_shaders_validate_with_naga() {
    let shaders = wafer_emu::engine::gpu::shaders::all();
    assert!(shaders.len() >= 6);
    for (name, source) in shaders {
        if let Err(e) = wafer_emu::engine::gpu::reflect::validate(&name, &source) {
            panic!("{e}");
        }
    }
}
