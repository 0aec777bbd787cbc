// import common
// Every PE's clock as a max-plus stencil: the GPU twin of src/timing/clocks.rs (read that
// file's documentation for the model). Clocks are u64 ticks held as vec2<u32> (low, high),
// so both sides do the same exact integer arithmetic. A step is four dispatches: `send`
// (one invocation per link strip), `pes` (one per PE), `consume` (one per strip), `tick`.

struct Model {
    interior: vec2<u32>,
    edge: vec2<u32>,
    hop: vec2<u32>,
    latency_h: vec2<u32>,
    latency_v: vec2<u32>,
    serialise_h: vec2<u32>,
    serialise_v: vec2<u32>,
    wafers_x: u32,
    wafers_y: u32,
    pes_x: u32,
    pes_y: u32,
    // 2 directions (right, up) for domain translation, 4 (right, up, left, down) otherwise.
    directions: u32,
    capacity: u32,
    exchange_every: u32,
    // Strips over all links.
    strips: u32,
}

struct Counters {
    step: u32,
    sent: u32,
}

@group(0) @binding(0) var<uniform> model: Model;
@group(0) @binding(1) var<storage, read> old: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> clocks: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> free_at: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> arrivals: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> consumed: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> counters: Counters;

const RIGHT: u32 = 0u;
const UP: u32 = 1u;
const LEFT: u32 = 2u;
const DOWN: u32 = 3u;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let low = a.x + b.x;
    return vec2<u32>(low, a.y + b.y + select(0u, 1u, low < a.x));
}

fn max64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if a.y > b.y || (a.y == b.y && a.x >= b.x) {
        return a;
    }
    return b;
}

fn horizontal(d: u32) -> bool {
    return d == RIGHT || d == LEFT;
}

fn strips_of(d: u32) -> u32 {
    return select(model.pes_x, model.pes_y, horizontal(d));
}

// First strip of the link wafer `origin` sends in direction `d`.
fn strip_offset(origin: u32, d: u32) -> u32 {
    var offset = origin * (model.pes_x + model.pes_y) * (model.directions / 2u);
    for (var k = 0u; k < d; k++) {
        offset += strips_of(k);
    }
    return offset;
}

fn span_x() -> u32 {
    return model.wafers_x * model.pes_x;
}

// Cluster index of the k-th PE along the edge of `wafer` that direction `d` leaves from
// (`leaving`) or arrives at.
fn edge_pe(wafer: u32, d: u32, k: u32, leaving: bool) -> u32 {
    let high = (d == RIGHT || d == UP) == leaving;
    let ox = (wafer % model.wafers_x) * model.pes_x;
    let oy = (wafer / model.wafers_x) * model.pes_y;
    var x = k;
    var y = select(0u, model.pes_y - 1u, high);
    if horizontal(d) {
        x = select(0u, model.pes_x - 1u, high);
        y = k;
    }
    return (oy + y) * span_x() + ox + x;
}

// The link (wafer it leaves, direction, strip) that strip index `s` belongs to.
fn strip_link(s: u32) -> vec3<u32> {
    let per_wafer = (model.pes_x + model.pes_y) * (model.directions / 2u);
    let origin = s / per_wafer;
    var k = s % per_wafer;
    var d = 0u;
    while k >= strips_of(d) {
        k -= strips_of(d);
        d += 1u;
    }
    return vec3<u32>(origin, d, k);
}

fn receiver(origin: u32, d: u32) -> u32 {
    var wx = origin % model.wafers_x;
    var wy = origin / model.wafers_x;
    switch d {
        case 0u: { wx = (wx + 1u) % model.wafers_x; }
        case 1u: { wy = (wy + 1u) % model.wafers_y; }
        case 2u: { wx = (wx + model.wafers_x - 1u) % model.wafers_x; }
        default: { wy = (wy + model.wafers_y - 1u) % model.wafers_y; }
    }
    return wy * model.wafers_x + wx;
}

fn sender(to: u32, d: u32) -> u32 {
    // The wafer that sends in direction d to `to` is the receiver of the opposite direction.
    return receiver(to, (d + 2u) % 4u);
}

fn exchanging() -> bool {
    return counters.step % model.exchange_every == 0u;
}

@compute @workgroup_size(64)
fn send(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = linear_id(gid, groups);
    if s >= model.strips || !exchanging() {
        return;
    }
    let link = strip_link(s);
    let slot = (counters.sent % model.capacity) * model.strips;
    var credit = vec2<u32>(0u, 0u);
    if counters.sent >= model.capacity {
        credit = consumed[slot + s];
    }
    let ready = old[edge_pe(link.x, link.y, link.z, true)];
    let h = horizontal(link.y);
    let serialise = select(model.serialise_v, model.serialise_h, h);
    let latency = select(model.latency_v, model.latency_h, h);
    free_at[s] = add64(max64(max64(ready, free_at[s]), credit), serialise);
    arrivals[s] = add64(free_at[s], latency);
}

// Arrival of the strip for position `along` of the link carrying direction d into `wafer`.
fn arrival_from(wafer: u32, d: u32, along: u32) -> vec2<u32> {
    return arrivals[strip_offset(sender(wafer, d), d) + along];
}

@compute @workgroup_size(64)
fn pes(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pe = linear_id(gid, groups);
    let sx = span_x();
    let sy = model.wafers_y * model.pes_y;
    if pe >= sx * sy {
        return;
    }
    let own = old[pe];
    if !exchanging() {
        clocks[pe] = add64(add64(own, model.interior), model.edge);
        return;
    }
    let gx = pe % sx;
    let gy = pe / sx;
    let px = gx % model.pes_x;
    let py = gy % model.pes_y;
    let wafer = (gy / model.pes_y) * model.wafers_x + gx / model.pes_x;
    // Domain translation waits for left, below, below-left; the others for all eight.
    let offsets = array<vec2<i32>, 8>(
        vec2(-1, 0), vec2(0, -1), vec2(-1, -1), vec2(1, 0),
        vec2(0, 1), vec2(1, 1), vec2(-1, 1), vec2(1, -1),
    );
    let count = select(8u, 3u, model.directions == 2u);
    var arrival = vec2<u32>(0u, 0u);
    for (var k = 0u; k < count; k++) {
        let o = offsets[k];
        let crosses_x = (o.x < 0 && px == 0u) || (o.x > 0 && px == model.pes_x - 1u);
        let crosses_y = (o.y < 0 && py == 0u) || (o.y > 0 && py == model.pes_y - 1u);
        var t: vec2<u32>;
        if crosses_y {
            t = arrival_from(wafer, select(DOWN, UP, o.y < 0), px);
        } else if crosses_x {
            t = arrival_from(wafer, select(LEFT, RIGHT, o.x < 0), u32(i32(py) + o.y));
        } else {
            let x = u32((i32(gx) + o.x + i32(sx)) % i32(sx));
            let y = u32((i32(gy) + o.y + i32(sy)) % i32(sy));
            let hops = u32(abs(o.x) + abs(o.y));
            var hop = vec2<u32>(0u, 0u);
            for (var h = 0u; h < hops; h++) {
                hop = add64(hop, model.hop);
            }
            t = add64(old[y * sx + x], hop);
        }
        arrival = max64(arrival, t);
    }
    clocks[pe] = add64(max64(add64(own, model.interior), arrival), model.edge);
}

@compute @workgroup_size(64)
fn consume(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = linear_id(gid, groups);
    if s >= model.strips || !exchanging() {
        return;
    }
    let link = strip_link(s);
    let slot = (counters.sent % model.capacity) * model.strips;
    consumed[slot + s] = clocks[edge_pe(receiver(link.x, link.y), link.y, link.z, false)];
}

@compute @workgroup_size(1)
fn tick() {
    if exchanging() {
        counters.sent += 1u;
    }
    counters.step += 1u;
}
