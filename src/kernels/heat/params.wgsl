// The heat kernels' parameter block: stencil weights rows[dy + 1][dx + 1] (x, y, z of each
// row used). Twin: `HeatParams` in mod.rs.
struct Params {
    rows: array<vec4<f32>, 3>,
}
