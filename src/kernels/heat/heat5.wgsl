// 5-point heat equation, forward Euler: Table 3's order left, down, right, up, centre.
// Twin: mod.rs `heat5_point`.
fn stencil_point(weights: Params, below: vec3<f32>, mid: vec3<f32>, above: vec3<f32>) -> f32 {
    var y = weights.rows[1].x * mid.x;
    y += weights.rows[0].y * below.y;
    y += weights.rows[1].z * mid.z;
    y += weights.rows[2].y * above.y;
    y += weights.rows[1].y * mid.y;
    return y;
}
