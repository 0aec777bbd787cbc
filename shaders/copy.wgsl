// import common
// The adapter's bandwidth ceiling: a plain copy, four vec4 per invocation.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(64)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = linear_id(gid, groups) * 4u;
    if k + 3u < arrayLength(&src) {
        dst[k] = src[k];
        dst[k + 1u] = src[k + 1u];
        dst[k + 2u] = src[k + 2u];
        dst[k + 3u] = src[k + 3u];
    }
}
