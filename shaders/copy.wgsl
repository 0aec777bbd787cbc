// import common
// The adapter's bandwidth ceiling: a plain copy, four vec4 per invocation, in the order each
// kind of adapter copies fastest.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

// On a GPU: the four vec4s a workgroup's width apart, so that neighbouring invocations touch
// neighbouring vec4s (whole cache lines per memory instruction: 1.6x the rate of four
// adjacent vec4s on an H200).
@compute @workgroup_size(64)
fn copy_interleaved(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let first = (group.x + group.y * groups.x) * WORKGROUP * 4u + lane;
    for (var j = 0u; j < 4u; j++) {
        let k = first + j * WORKGROUP;
        if k < arrayLength(&src) {
            dst[k] = src[k];
        }
    }
}

// On a CPU adapter, which runs one invocation's loads after another: four adjacent vec4s
// (1.5 to 2x the interleaved order's rate on lavapipe).
@compute @workgroup_size(64)
fn copy_runs(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = linear_id(gid, groups) * 4u;
    if k + 3u < arrayLength(&src) {
        dst[k] = src[k];
        dst[k + 1u] = src[k + 1u];
        dst[k + 2u] = src[k + 2u];
        dst[k + 3u] = src[k + 3u];
    }
}
