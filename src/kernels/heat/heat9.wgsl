// 9-point heat equation, forward Euler: row by row from below-left.
// Twin: mod.rs `heat9_point`.
fn stencil_point(weights: Params, below: vec3<f32>, mid: vec3<f32>, above: vec3<f32>) -> f32 {
    var y = weights.rows[0].x * below.x;
    y += weights.rows[0].y * below.y;
    y += weights.rows[0].z * below.z;
    y += weights.rows[1].x * mid.x;
    y += weights.rows[1].y * mid.y;
    y += weights.rows[1].z * mid.z;
    y += weights.rows[2].x * above.x;
    y += weights.rows[2].y * above.y;
    y += weights.rows[2].z * above.z;
    return y;
}
