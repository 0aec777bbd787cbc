// import common
// The adapter's bandwidth ceiling: a plain copy of four vec4 per invocation, each a
// workgroup's width apart, so that neighbouring invocations touch neighbouring vec4s (whole
// cache lines per memory instruction on a GPU, whole vectors on a CPU adapter).

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

const PER_INVOCATION: u32 = 4u;

@compute @workgroup_size(64)
fn copy(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let first = (group.x + group.y * groups.x) * WORKGROUP * PER_INVOCATION + lane;
    for (var j = 0u; j < PER_INVOCATION; j++) {
        let k = first + j * WORKGROUP;
        if k < arrayLength(&src) {
            dst[k] = src[k];
        }
    }
}
