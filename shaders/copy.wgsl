// The adapter's bandwidth ceiling: a plain copy, four vec4 per invocation.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(64)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let first = linear_id(gid, groups) * 4u;
    for (var k = first; k < min(first + 4u, arrayLength(&src)); k++) {
        dst[k] = src[k];
    }
}
