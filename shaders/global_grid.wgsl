// import common
// The global grid kernel's grid, and where its buffers hold a row. A grid larger than one
// storage binding runs as bands of rows (src/engine/gpu/global.rs): each band computes its rows
// `first .. first + rows` and holds them between the rows of its neighbours that it reads.

@group(0) @binding(0) var<uniform> grid: Grid;

// The row of the band's buffers that holds global row `y` (the band's, or a neighbour's it reads).
fn stored_row(y: u32) -> u32 {
    let i = y + grid.shift;
    return select(i, i - grid.ny, i >= grid.ny);
}
