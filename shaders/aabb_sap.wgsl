// Sweep and prune over axis-aligned bounding boxes (src/gpu/aabb_sap.rs), the broad phase of the
// GPU box / polygon pipeline. Prefixed with ordered_float.wgsl (ordered_u32).
//
// obb_bounds / polygon_bounds: one AABB per shape, its sort key ordered_u32(min.x) and its index;
// (the host sorts keys and indices with RadixSort); gather: the AABBs in sorted order, split
// into min.x and the (y, z) intervals so that a walk step reads 20 bytes, not 32; walk: the
// shape at sorted position p visits the following positions q while min_q.x <= max_p.x and
// appends (i, j), i < j, when the boxes also overlap on y and z (closed intervals: touching
// counts). Slots past params.capacity are counted, not written, so the host sees the exact count
// and runs again with a larger list: no candidate is ever lost.
//
// lavapipe stops an invocation after 65,535 loop iterations in total, silently. The walk
// therefore visits UNROLL positions per iteration, and every loop checks afterwards that it
// reached its end; one that did not is counted in counters[2] and the host reports an error
// rather than a short candidate list.

struct Params {
    n: u32,
    // Pairs `pairs` holds.
    capacity: u32,
    pad0: u32,
    pad1: u32,
}

struct Aabb {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

struct ObbFrame {
    center: vec4<f32>,
    // xyz: unit axis k, w: half-extent k.
    axes: array<vec4<f32>, 3>,
}

@group(0) @binding(0) var<uniform> params: Params;
// [0] append slot (counts past capacity), [1] times [0] wrapped past 2^32, [2] loops cut short
// by the device, [3] polygons with malformed offsets.
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>, 4>;
@group(0) @binding(2) var<storage, read_write> boxes: array<Aabb>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> values: array<u32>;
// Sorted order: (min.y, max.y, min.z, max.z) and min.x.
@group(0) @binding(5) var<storage, read_write> sorted_yz: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> sorted_lo_x: array<f32>;
@group(0) @binding(6) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read> frames: array<ObbFrame>;
@group(0) @binding(8) var<storage, read> vertices: array<vec2<f32>>;
// Polygon i is vertices[offsets[i] .. offsets[i + 1]].
@group(0) @binding(9) var<storage, read> offsets: array<u32>;

// 64 threads: a multiple of every common SIMD width (8 on lavapipe, 32, 64); no kernel here
// shares memory within a workgroup, so larger groups would gain nothing, and small ones let a
// few long walks hold fewer idle lanes.
const WG: u32 = 64u;
const UNROLL: u32 = 16u;
// Relative widening of a box's AABB: 5 f32 epsilons of (extent + |centre|). The CPU pipeline
// (`Obb::aabb`) uses 4; the extra one covers a fused multiply-add here rounding the extent up to
// an ulp lower than the CPU does, so every CPU candidate is a GPU candidate.
const BOX_MARGIN: f32 = 5.0 * 1.1920929e-7;

fn flat_id(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.y * nwg.x + wid.x) * WG + lid;
}

fn store_bounds(i: u32, lo: vec3<f32>, hi: vec3<f32>) {
    boxes[i] = Aabb(vec4<f32>(lo, 0.0), vec4<f32>(hi, 0.0));
    keys[i] = ordered_u32(lo.x);
    values[i] = i;
}

@compute @workgroup_size(64)
fn obb_bounds(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let i = flat_id(wid, nwg, lid);
    if i >= params.n || i >= arrayLength(&frames) {
        return;
    }
    let f = frames[i];
    let c = f.center.xyz;
    // Same terms and order as `Obb::aabb`: |R| h, then the margin.
    var ext = abs(f.axes[0].xyz) * f.axes[0].w + abs(f.axes[1].xyz) * f.axes[1].w
        + abs(f.axes[2].xyz) * f.axes[2].w;
    ext = ext + (ext + abs(c)) * BOX_MARGIN;
    store_bounds(i, c - ext, c + ext);
}

@compute @workgroup_size(64)
fn polygon_bounds(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let i = flat_id(wid, nwg, lid);
    if i >= params.n {
        return;
    }
    var lo = vec2<f32>(0.0);
    var hi = vec2<f32>(0.0);
    if i + 1u >= arrayLength(&offsets) {
        atomicAdd(&counters[3], 1u);
    } else {
        let start = offsets[i];
        let end = offsets[i + 1u];
        if start >= end || end > arrayLength(&vertices) {
            atomicAdd(&counters[3], 1u);
        } else {
            // Vertex min / max: exact, so the same AABB as `Polygon::aabb`.
            lo = vertices[start];
            hi = lo;
            var k = start + 1u;
            for (; k < end; k++) {
                lo = min(lo, vertices[k]);
                hi = max(hi, vertices[k]);
            }
            if k != end {
                atomicAdd(&counters[2], 1u);
            }
        }
    }
    store_bounds(i, vec3<f32>(lo, 0.0), vec3<f32>(hi, 0.0));
}

@compute @workgroup_size(64)
fn gather(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let p = flat_id(wid, nwg, lid);
    if p >= params.n {
        return;
    }
    let i = values[p];
    if i < arrayLength(&boxes) {
        let b = boxes[i];
        sorted_yz[p] = vec4<f32>(b.lo.y, b.hi.y, b.lo.z, b.hi.z);
        sorted_lo_x[p] = b.lo.x;
    }
}

// Walk state of one invocation.
var<private> me_yz: vec4<f32>;
var<private> me_hi_x: f32;
var<private> me_index: u32;
var<private> done: bool;

fn append(j: u32) {
    let slot = atomicAdd(&counters[0], 1u);
    if slot == 0xffffffffu {
        atomicAdd(&counters[1], 1u);
    }
    if slot < params.capacity {
        pairs[slot] = vec2<u32>(min(me_index, j), max(me_index, j));
    }
}

fn visit(q: u32) {
    if done {
        return;
    }
    if q >= params.n {
        done = true;
        return;
    }
    // Float comparison, not keys: -0 and +0 have different keys but are equal.
    if sorted_lo_x[q] > me_hi_x {
        done = true;
        return;
    }
    // x overlaps: min_q.x >= min_p.x by the sort order, min_q.x <= max_p.x by the walk.
    let other = sorted_yz[q];
    if all(me_yz.xz <= other.yw) && all(other.xz <= me_yz.yw) {
        append(values[q]);
    }
}

@compute @workgroup_size(64)
fn walk(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let p = flat_id(wid, nwg, lid);
    if p >= params.n {
        return;
    }
    me_index = values[p];
    if me_index >= arrayLength(&boxes) {
        return;
    }
    me_yz = sorted_yz[p];
    me_hi_x = boxes[me_index].hi.x;
    done = false;
    for (var q = p + 1u; !done; q += UNROLL) {
        visit(q);
        visit(q + 1u);
        visit(q + 2u);
        visit(q + 3u);
        visit(q + 4u);
        visit(q + 5u);
        visit(q + 6u);
        visit(q + 7u);
        visit(q + 8u);
        visit(q + 9u);
        visit(q + 10u);
        visit(q + 11u);
        visit(q + 12u);
        visit(q + 13u);
        visit(q + 14u);
        visit(q + 15u);
    }
    if !done {
        atomicAdd(&counters[2], 1u);
    }
}
