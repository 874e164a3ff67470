// The 100^3 grid of the sector accuracy experiments, its row helpers and the histogram both
// poses fill, shared by sector/accuracy.wgsl (the thesis's box) and sector/free_accuracy.wgsl
// (any body in any pose); twins: src/geom/sector/classify.rs and src/cpu/sector_grid.rs. Both
// bind the rotations at 0 and their own storage from 3 on (src/gpu/sector/accuracy.rs
// `GpuPose`). Needs math.wgsl and dispatch.wgsl.

// #import sector/grid_rows_params.wgsl

@group(0) @binding(1) var<storage, read_write> histograms: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

// The membership bits REFERENCE, SPECULATIVE, ... SECTOR (the thesis's sector in its pose, the
// union of the sub-piece sectors in the general one) come from src/gpu/slots.rs.
// #import slots.wgsl

// The workgroup's histogram of the 64 masks: cleared, counted into, then added to the
// rotation's (bin 0, "in no shape", is filled in on the CPU from the total). A workgroup has
// at least 64 threads, one per bin for the clear and the flush.
var<workgroup> local_hist: array<atomic<u32>, 64>;

// A kernel's start, in every thread (a barrier): the histogram cleared. Returns the rotation the
// workgroup serves and the workgroup's index among that rotation's, both uniform per workgroup.
fn begin_rotation(inv: Invocation) -> vec2<u32> {
    if (inv.lid < 64u) {
        atomicStore(&local_hist[inv.lid], 0u);
    }
    workgroupBarrier();
    let group = flat_group(inv);
    return vec2<u32>(group / params.groups_per_rotation, group % params.groups_per_rotation);
}

fn add_local(bin: u32, n: u32) {
    if (n != 0u) {
        atomicAdd(&local_hist[bin], n);
    }
}

// A kernel's end, in every thread (a barrier): the histogram added to the rotation's.
fn end_rotation(lid: u32, rotation: u32) {
    workgroupBarrier();
    if (lid < 64u && lid != 0u && rotation < params.rotation_count) {
        let n = atomicLoad(&local_hist[lid]);
        if (n != 0u) {
            atomicAdd(&histograms[rotation * 64u + lid], n);
        }
    }
}

const GRID_SIDE: i32 = 100;
const ROWS: u32 = 10000u;
const OFFSET: f32 = 49.5;

fn grid_coord(i: i32) -> f32 {
    return f32(i) - OFFSET;
}

fn in_aabb(p: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> bool {
    return all(p >= lo) && all(p <= hi);
}

// The speculative AABB and the start/end AABB: the last four fields of both poses' Rotation.
struct SpeculativeBoxes {
    speculative_min: vec4<f32>,
    speculative_max: vec4<f32>,
    endpoints_min: vec4<f32>,
    endpoints_max: vec4<f32>,
}

// The bits of the two AABBs that hold p.
fn aabb_bits(b: SpeculativeBoxes, p: vec3<f32>) -> u32 {
    var mask = 0u;
    if (in_aabb(p, b.speculative_min.xyz, b.speculative_max.xyz)) {
        mask = mask | SPECULATIVE;
    }
    if (in_aabb(p, b.endpoints_min.xyz, b.endpoints_max.xyz)) {
        mask = mask | SPECULATIVE_ENDPOINTS;
    }
    return mask;
}

// Indices i with lo <= grid_coord(i) <= hi, as (first, last); empty when first > last.
fn index_range(lo: f32, hi: f32) -> vec2<i32> {
    if (!(lo <= hi)) {
        return vec2<i32>(0, -1);
    }
    var a = clamp(i32(clamp(ceil(lo + OFFSET), 0.0, f32(GRID_SIDE))), 0, GRID_SIDE);
    while (a > 0 && grid_coord(a - 1) >= lo) {
        a = a - 1;
    }
    while (a < GRID_SIDE && grid_coord(a) < lo) {
        a = a + 1;
    }
    var b = clamp(i32(clamp(floor(hi + OFFSET), -1.0, f32(GRID_SIDE - 1))), -1, GRID_SIDE - 1);
    while (b < GRID_SIDE - 1 && grid_coord(b + 1) <= hi) {
        b = b + 1;
    }
    while (b >= 0 && grid_coord(b) > hi) {
        b = b - 1;
    }
    return vec2<i32>(a, b);
}

fn range_len(r: vec2<i32>) -> u32 {
    return u32(max(r.y - r.x + 1, 0));
}

fn overlap(a: vec2<i32>, b: vec2<i32>) -> vec2<i32> {
    return vec2<i32>(max(a.x, b.x), min(a.y, b.y));
}

// Superset of the row's x indices inside the cylinder of radius r_bound about the line through
// `origin` along the unit `u`, within h_bound of `origin` along it.
fn candidate_range(origin: vec3<f32>, u: vec3<f32>, r_bound: f32, h_bound: f32, y: f32, z: f32) -> vec2<i32> {
    let q = vec3<f32>(0.0, y, z) - origin;
    let ux = u.x;
    let c0 = dot(q, u);
    var t_lo = -1e4;
    var t_hi = 1e4;
    if (abs(ux) < 1e-6) {
        if (abs(c0) > h_bound) {
            return vec2<i32>(0, -1);
        }
    } else {
        let a = m_div(-h_bound - c0, ux);
        let b = m_div(h_bound - c0, ux);
        t_lo = max(t_lo, min(a, b));
        t_hi = min(t_hi, max(a, b));
    }
    let q_perp = q - c0 * u;
    let e_perp = vec3<f32>(1.0, 0.0, 0.0) - ux * u;
    let a = dot(e_perp, e_perp);
    if (a > 1e-4) {
        let t0 = m_div(-dot(q_perp, e_perp), a);
        let closest = q_perp + t0 * e_perp;
        let room = r_bound * r_bound - dot(closest, closest);
        if (room < 0.0) {
            return vec2<i32>(0, -1);
        }
        let half = m_sqrt(m_div(room, a));
        t_lo = max(t_lo, t0 - half);
        t_hi = min(t_hi, t0 + half);
    } else if (dot(q_perp, q_perp) > r_bound * r_bound + 1.0) {
        return vec2<i32>(0, -1);
    }
    if (t_lo > t_hi) {
        return vec2<i32>(0, -1);
    }
    // Integer clamps too: a NaN survives the float clamp and converts to anything.
    let lo = clamp(i32(clamp(floor(t_lo + OFFSET) - 1.0, 0.0, f32(GRID_SIDE))), 0, GRID_SIDE);
    let hi = clamp(i32(clamp(ceil(t_hi + OFFSET) + 1.0, -1.0, f32(GRID_SIDE - 1))), -1, GRID_SIDE - 1);
    return vec2<i32>(lo, hi);
}

// The row's index range inside an AABB (empty when the row misses it on y or z).
fn row_range(lo: vec3<f32>, hi: vec3<f32>, y: f32, z: f32) -> vec2<i32> {
    if (y >= lo.y && y <= hi.y && z >= lo.z && z <= hi.z) {
        return index_range(lo.x, hi.x);
    }
    return vec2<i32>(0, -1);
}

// Points of the row (y, z) outside the candidate range c that only the speculative AABB and
// the start/end AABB hold: counted into the workgroup's histogram, never classified.
fn add_outside(b: SpeculativeBoxes, y: f32, z: f32, c: vec2<i32>) {
    let s = row_range(b.speculative_min.xyz, b.speculative_max.xyz, y, z);
    let e = row_range(b.endpoints_min.xyz, b.endpoints_max.xyz, y, z);
    let se = overlap(s, e);
    let both = range_len(se) - range_len(overlap(se, c));
    add_local(SPECULATIVE | SPECULATIVE_ENDPOINTS, both);
    add_local(SPECULATIVE, range_len(s) - range_len(overlap(s, c)) - both);
    add_local(SPECULATIVE_ENDPOINTS, range_len(e) - range_len(overlap(e, c)) - both);
}
