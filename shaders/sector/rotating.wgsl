// Scene `rotating` on the GPU (docs/design.md §5.7): spheres sorted by grid cell (x fastest), then per box
// two cell-start lookups per (y, z) row of cells its proxy AABB covers -> exact candidate count
// -> exclusive scan (Rust side) -> candidate write -> exact conservative-sector vs sphere test.
// Imports sector/sector_sphere.wgsl, whose `GpuSector` and `sector_signed_distance`
// it uses; its bindings start at 16 so they never meet that file's (0..4). Mirrors
// src/cpu/rotating.rs (`SphereGrid` in src/geom/sphere_grid.rs, `SortedSpheres::for_each_candidate`).

// #import sector/sector_sphere.wgsl
// #import append.wgsl
// #import dispatch_grid.wgsl

struct RotatingParams {
    grid_origin: vec4<f32>,  // grid origin, w: 1 / cell size
    grid_dims: vec4<u32>,    // cells along x, y, z; w: sphere count
    boxes: vec4<u32>,        // box count, chunk's first box, chunk's end box, chunk base offset
    chunk: vec4<u32>,        // chunk's candidate count, candidate capacity, hit capacity, want hits
    reach: vec4<f32>,        // x: largest radius + slack
    cells: vec4<u32>,        // x: cell count, y: most workgroups per dispatch dimension
}

@group(0) @binding(16) var<uniform> rot: RotatingParams;
@group(0) @binding(17) var<storage, read> in_spheres: array<vec4<f32>>;
@group(0) @binding(18) var<storage, read_write> sort_keys: array<u32>;
@group(0) @binding(19) var<storage, read_write> sort_values: array<u32>;
@group(0) @binding(20) var<storage, read_write> sorted_spheres: array<vec4<f32>>;
@group(0) @binding(21) var<storage, read> box_aabbs: array<vec4<f32>>;  // min, max per box
@group(0) @binding(22) var<storage, read> box_sectors: array<GpuSector>;
@group(0) @binding(23) var<storage, read_write> box_counts: array<u32>; // counts, then offsets
@group(0) @binding(24) var<storage, read_write> candidates: array<vec2<u32>>; // (box, sorted j)
// [0] hits of the chunk, [1] candidates (low word), [2] candidates (high word), [3] walks cut
// short (an error on the host)
@group(0) @binding(25) var<storage, read_write> totals: array<atomic<u32>, 4>;
@group(0) @binding(26) var<storage, read_write> hit_pairs: array<vec2<u32>>; // (box, sphere)
// First sorted index with key >= c, for c in 0..=cells.
@group(0) @binding(27) var<storage, read_write> cell_starts: array<u32>;
// The exact test's indirect dispatch (x, y, z), written by prepare_test from the device's own
// total, so a whole frame needs no host round trip.
@group(0) @binding(28) var<storage, read_write> test_dispatch: array<u32, 3>;

// WG (64 threads) is sector_sphere.wgsl's: a multiple of every common SIMD width (8 on
// lavapipe, 32, 64); threads share only the hit append's reservation, so the size only needs
// to fill the hardware.

// Same as QUERY_SLACK in src/geom/sphere_grid.rs.
const QUERY_SLACK: f32 = 1e-5;

fn cell_of(p: vec3<f32>) -> vec3<u32> {
    let c = floor((p - rot.grid_origin.xyz) * rot.grid_origin.w);
    let top = vec3<f32>(rot.grid_dims.xyz - vec3<u32>(1u));
    return vec3<u32>(clamp(c, vec3<f32>(0.0), top));
}

fn cell_key(c: vec3<u32>) -> u32 {
    return (c.z * rot.grid_dims.y + c.y) * rot.grid_dims.x + c.x;
}

@compute @workgroup_size(WG)
fn sphere_keys(inv: Invocation) {
    let i = flat_id(inv);
    if (i >= rot.grid_dims.w) {
        return;
    }
    sort_keys[i] = cell_key(cell_of(in_spheres[i].xyz));
    sort_values[i] = i;
}

// Spheres in key order, so the box scans read them contiguously.
@compute @workgroup_size(WG)
fn gather_spheres(inv: Invocation) {
    let j = flat_id(inv);
    if (j >= rot.grid_dims.w) {
        return;
    }
    let i = sort_values[j];
    if (i < rot.grid_dims.w) {
        sorted_spheres[j] = in_spheres[i];
    }
}

// One binary search per cell, once per frame, instead of two per row per box.
@compute @workgroup_size(WG)
fn find_cell_starts(inv: Invocation) {
    let c = flat_id(inv);
    if (c > rot.cells.x) {
        return;
    }
    var lo = 0u;
    var hi = rot.grid_dims.w;
    while (lo < hi) {
        let mid = lo + (hi - lo) / 2u;
        if (sort_keys[mid] < c) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    cell_starts[c] = lo;
}

// Whether the last visit_box reached the end of every loop.
var<private> walk_complete: bool;

// Counts the candidates of box b; with `write`, stores them from `out` on (chunk-relative,
// never past the capacity).
fn visit_box(b: u32, write: bool, out: u32) -> u32 {
    let mn = box_aabbs[2u * b].xyz;
    let mx = box_aabbs[2u * b + 1u].xyz;
    let m = max(abs(mn), abs(mx));
    let pad = rot.reach.x + QUERY_SLACK * max(m.x, max(m.y, m.z));
    let lo = cell_of(mn - vec3<f32>(pad));
    let hi = cell_of(mx + vec3<f32>(pad));
    let n = rot.grid_dims.w;
    var count = 0u;
    walk_complete = true;
    var z = lo.z;
    for (; z <= hi.z; z++) {
        var y = lo.y;
        for (; y <= hi.y; y++) {
            let start = cell_starts[cell_key(vec3<u32>(lo.x, y, z))];
            let end = min(cell_starts[cell_key(vec3<u32>(hi.x, y, z)) + 1u], n);
            var j = start;
            for (; j < end; j++) {
                let s = sorted_spheres[j];
                if (all(s.xyz - s.w <= mx) && all(s.xyz + s.w >= mn)) {
                    let at = out + count;
                    if (write && at < rot.chunk.y) {
                        candidates[at] = vec2<u32>(b, j);
                    }
                    count++;
                }
            }
            if j < end {
                walk_complete = false;
            }
        }
        if y <= hi.y {
            walk_complete = false;
        }
    }
    if z <= hi.z {
        walk_complete = false;
    }
    return count;
}

// Every thread reaches the group's sum, none returns early.
@compute @workgroup_size(WG)
fn count_candidates(inv: Invocation) {
    let b = flat_id(inv);
    var c = 0u;
    if (b < rot.boxes.x) {
        c = visit_box(b, false, 0u);
        // A walk the device ended early (lavapipe's loop cap) is an error on the host, never a
        // short candidate list; write_candidates repeats the same walk.
        if (!walk_complete) {
            atomicAdd(&totals[3], 1u);
        }
        box_counts[b] = c;
    }
    // The 64-bit total, one add per workgroup or subgroup (append.wgsl), not one per box:
    // low + high * 2^16 of the group's halves, and every add that wraps the low word carries
    // one into the high word.
    let s = group_sum(inv.lid, c);
    if (s.leader) {
        let lo = s.halves.x + (s.halves.y << 16u);
        var hi = (s.halves.y >> 16u) + select(0u, 1u, lo < s.halves.x);
        if (lo != 0u) {
            let old = atomicAdd(&totals[1], lo);
            hi += select(0u, 1u, old > 0xffffffffu - lo);
        }
        if (hi != 0u) {
            atomicAdd(&totals[2], hi);
        }
    }
}

@compute @workgroup_size(WG)
fn write_candidates(inv: Invocation) {
    let b = rot.boxes.y + flat_id(inv);
    if (b >= rot.boxes.z || b >= rot.boxes.x) {
        return;
    }
    // Offsets are a wrapping u32 scan; relative to the chunk's base they are exact.
    visit_box(b, true, box_counts[b] - rot.boxes.w);
}

// One thread: the exact test's dispatch for min(total candidates, capacity) candidates, split
// into a 2D grid within the dispatch limit (as dispatch_2d on the host).
// Candidates the list holds: the 64-bit total clamped to the capacity.
fn listed_candidates() -> u32 {
    let low = atomicLoad(&totals[1]);
    let high = atomicLoad(&totals[2]);
    return min(select(low, 0xffffffffu, high != 0u), rot.chunk.y);
}

@compute @workgroup_size(1)
fn prepare_test() {
    test_dispatch = indirect_args(listed_candidates(), WG, max(rot.cells.y, 1u));
}

// Whether candidate i's sphere touches its box's conservative sector; `pair` gets (box,
// sphere index).
fn candidate_hits(i: u32, pair: ptr<function, vec2<u32>>) -> bool {
    let c = candidates[i];
    if (c.x >= rot.boxes.x || c.y >= rot.grid_dims.w) {
        return false;
    }
    let s = sorted_spheres[c.y];
    *pair = vec2<u32>(c.x, sort_values[c.y]);
    return sector_signed_distance(box_sectors[c.x], s.xyz) <= s.w;
}

// Hits are appended with one global atomic per workgroup or subgroup (append.wgsl): every
// thread reaches the reservation, none returns early.
@compute @workgroup_size(WG)
fn test_candidates(inv: Invocation) {
    let i = flat_id(inv);
    var hit = false;
    var pair = vec2<u32>(0u);
    if (i < rot.chunk.x && i < listed_candidates()) {
        hit = candidate_hits(i, &pair);
    }
    let r = reserve(inv.lid, select(0u, 1u, hit));
    var base = 0u;
    if r.leader && r.total > 0u {
        base = atomicAdd(&totals[0], r.total);
    }
    let at = first_slot(r, base);
    if (hit && rot.chunk.w != 0u && at < rot.chunk.z) {
        hit_pairs[at] = pair;
    }
}
