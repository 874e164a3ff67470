// Sweep and prune over axis-aligned bounding boxes (src/gpu/boxes/aabb_sap/), the broad phase of the
// GPU box / polygon pipeline. Imports ordered_float.wgsl (ordered).
//
// A plain sweep along x visits, in a 3D volume, every box overlapping on x: about n^(2/3) per box.
// So the (y, z) plane is cut into square columns and each box belongs to the column of its
// lower (y, z) corner; the sweep order is (column, min.x, index). A box whose AABB overlaps box
// p's has its lower corner in a column between column(min_p - reach) and column(max_p) on each
// axis, reach >= every AABB's width: p visits exactly those columns (usually 2 x 2 or 3 x 3).
// The column map is monotonic (clamped floor), which is all that soundness needs; the cell size
// only sets the speed (the host picks it; one column makes this a plain sweep).
//
// aabb_bounds / obb_bounds / polygon_bounds: one AABB per shape, key ordered(min.x), value its index;
// (RadixSort by key); columns: key = column of the AABB at each sorted position; (RadixSort
// again, stable: the order becomes (column, min.x, index)); gather: the AABBs in that order,
// split into min.x and the (y, z) intervals so that a walk step reads 20 bytes, not 32; ranges:
// each column's [start, end); walk: position p, in every column it may meet, binary-searches
// the first position after its own (min.x, index) and visits positions q while
// min_q.x <= max_p.x, appending (i, j), i < j, when the boxes also overlap on y and z (closed
// intervals: touching counts). Every overlapping pair is found exactly once: by the box earlier
// in (min.x, index) order, in the other's column. Slots past params.capacity are counted, not
// written, so the host sees the exact count and runs again with a larger list: no candidate is
// ever lost.
//
// Wide shapes (the host's list, `wide`, sorted; see SweepLayout): one huge box would force reach
// up to its width and collapse the columns into one, the plain sweep again. So mark_wide flags
// them (lo.w = 1), columns gives them the key dims_y * dims_z, which sorts after every column and
// which no walk visits, walk skips them, and wide_pairs tests each one against every shape in
// input order. A pair with a wide shape is thus found only there, a wide-wide pair only by its
// lower index.
//
// lavapipe stops an invocation after 65,535 loop iterations in total, silently. The walk
// therefore visits UNROLL positions per iteration, and every loop checks afterwards that it
// reached its end; one that did not is counted in counters[SWEEP_CUT_SHORT] and the host
// reports an error rather than a short candidate list.

// #import ordered_float.wgsl
// #import dispatch.wgsl
// #import append.wgsl
// #import held_pairs.wgsl
// #import slots.wgsl
// #import boxes/aabb_sap_params.wgsl

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
// SWEEP_APPEND (counts past capacity), SWEEP_WRAPS (times it wrapped past 2^32),
// SWEEP_CUT_SHORT (loops cut short by the device), SWEEP_BAD_OFFSETS (malformed polygons): slots.wgsl.
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
// Per column: [start, end) of its sorted positions (0, 0 when empty).
@group(0) @binding(11) var<storage, read_write> ranges: array<vec2<u32>>;
// Input indices of the wide shapes, increasing.
@group(0) @binding(12) var<storage, read> wide: array<u32>;
// The caller's boxes, for aabb_bounds (the box broad phase: docs/design.md §4.7).
@group(0) @binding(13) var<storage, read> input_boxes: array<Aabb>;

// 64 threads: a multiple of every common SIMD width (8 on lavapipe, 32, 64); no kernel here
// shares memory within a workgroup, so larger groups would gain nothing, and small ones let a
// few long walks hold fewer idle lanes.
const WG: u32 = 64u;
const UNROLL: u32 = 16u;
// Relative widening of a box's AABB: 5 f32 epsilons of (extent + |centre| + the half-extents'
// sum: the axes' own rounding, times a long box's length, where an axis component is near
// zero). The CPU pipeline (`Obb::aabb`) uses 4; the extra one covers a fused multiply-add here
// rounding the extent up to an ulp lower than the CPU does, so every CPU candidate is a GPU
// candidate.
const BOX_MARGIN: f32 = 5.0 * 1.1920929e-7;

// What the index helpers below return for no shape.
const NO_SHAPE: u32 = 0xffffffffu;

// This invocation's shape, or NO_SHAPE past params.n or past `len`, the length of the array the
// kernel reads it from.
fn shape_at(inv: Invocation, len: u32) -> u32 {
    let i = flat_id(inv);
    return select(NO_SHAPE, i, i < params.n && i < len);
}

fn store_bounds(i: u32, lo: vec3<f32>, hi: vec3<f32>) {
    boxes[i] = Aabb(vec4<f32>(lo, 0.0), vec4<f32>(hi, 0.0));
    keys[i] = ordered(lo.x);
    values[i] = i;
}

// The caller's boxes as they are: no margin, so the walk's closed-interval tests are the CPU's
// `Aabb::overlaps` (up to subnormals, which a GPU may flush to zero; the host settles those).
@compute @workgroup_size(64)
fn aabb_bounds(inv: Invocation) {
    let i = shape_at(inv, arrayLength(&input_boxes));
    if i != NO_SHAPE {
        let b = input_boxes[i];
        store_bounds(i, b.lo.xyz, b.hi.xyz);
    }
}

@compute @workgroup_size(64)
fn obb_bounds(inv: Invocation) {
    let i = shape_at(inv, arrayLength(&frames));
    if i != NO_SHAPE {
        let f = frames[i];
        let c = f.center.xyz;
        // Same terms and order as `Obb::aabb`: |R| h, then the margin.
        var ext = abs(f.axes[0].xyz) * f.axes[0].w + abs(f.axes[1].xyz) * f.axes[1].w
            + abs(f.axes[2].xyz) * f.axes[2].w;
        let lengths = f.axes[0].w + f.axes[1].w + f.axes[2].w;
        ext = ext + (ext + abs(c) + vec3<f32>(lengths)) * BOX_MARGIN;
        store_bounds(i, c - ext, c + ext);
    }
}

@compute @workgroup_size(64)
fn polygon_bounds(inv: Invocation) {
    let i = flat_id(inv);
    if i >= params.n {
        return;
    }
    var lo = vec2<f32>(0.0);
    var hi = vec2<f32>(0.0);
    if i + 1u >= arrayLength(&offsets) {
        atomicAdd(&counters[SWEEP_BAD_OFFSETS], 1u);
    } else {
        let start = offsets[i];
        let end = offsets[i + 1u];
        if start >= end || end > arrayLength(&vertices) {
            atomicAdd(&counters[SWEEP_BAD_OFFSETS], 1u);
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
                atomicAdd(&counters[SWEEP_CUT_SHORT], 1u);
            }
        }
    }
    store_bounds(i, vec3<f32>(lo, 0.0), vec3<f32>(hi, 0.0));
}

// Monotonic in v: fl(v - o) and the product are monotonic, so are floor and clamp.
fn column_on(v: f32, origin: f32, dims: u32) -> u32 {
    return u32(clamp(floor((v - origin) * params.inv_cell), 0.0, f32(dims - 1u)));
}

fn column_of(y: f32, z: f32) -> u32 {
    return column_on(y, params.origin_y, params.dims_y) * params.dims_z
        + column_on(z, params.origin_z, params.dims_z);
}

// The boxes a kernel may read.
fn box_count() -> u32 {
    return min(params.n, arrayLength(&boxes));
}

// The input index of wide shape k, or NO_SHAPE past the wide list or for an index past the boxes.
fn wide_shape(k: u32) -> u32 {
    if k >= params.wide_count || k >= arrayLength(&wide) {
        return NO_SHAPE;
    }
    let w = wide[k];
    return select(NO_SHAPE, w, w < box_count());
}

@compute @workgroup_size(64)
fn mark_wide(inv: Invocation) {
    let i = wide_shape(flat_id(inv));
    if i != NO_SHAPE {
        boxes[i].lo.w = 1.0;
    }
}

fn is_wide(b: Aabb) -> bool {
    return b.lo.w != 0.0;
}

// The key at sorted position p, NO_SHAPE past params.n.
fn key_at(p: u32) -> u32 {
    if p >= params.n {
        return NO_SHAPE;
    }
    return keys[p];
}

// The box at sorted position p, into *b; false past the boxes.
fn sorted_box(p: u32, b: ptr<function, Aabb>) -> bool {
    if p >= params.n {
        return false;
    }
    let i = values[p];
    if i >= arrayLength(&boxes) {
        return false;
    }
    *b = boxes[i];
    return true;
}

@compute @workgroup_size(64)
fn columns(inv: Invocation) {
    let p = flat_id(inv);
    var b: Aabb;
    if sorted_box(p, &b) {
        // Wide: one key past the last column.
        keys[p] = select(column_of(b.lo.y, b.lo.z), params.dims_y * params.dims_z, is_wide(b));
    }
}

@compute @workgroup_size(64)
fn column_ranges(inv: Invocation) {
    let p = flat_id(inv);
    let c = key_at(p);
    // The wide shapes' key is no column, nor is NO_SHAPE past the boxes.
    if c >= params.dims_y * params.dims_z || c >= arrayLength(&ranges) {
        return;
    }
    if p == 0u || key_at(p - 1u) != c {
        ranges[c].x = p;
    }
    if key_at(p + 1u) != c {
        ranges[c].y = p + 1u;
    }
}

@compute @workgroup_size(64)
fn gather(inv: Invocation) {
    let p = flat_id(inv);
    var b: Aabb;
    if sorted_box(p, &b) {
        sorted_yz[p] = vec4<f32>(b.lo.y, b.hi.y, b.lo.z, b.hi.z);
        sorted_lo_x[p] = b.lo.x;
    }
}

// Walk state of one invocation.
var<private> me_yz: vec4<f32>;
var<private> me_hi_x: f32;
var<private> me_key: u32;
var<private> end: u32;
var<private> me_index: u32;
var<private> done: bool;

// Counts a reservation on counters[SWEEP_APPEND] that went past 2^32: `old` is what its atomic
// returned (0 for none), `added` the slots it reserved.
fn count_wrap(old: u32, added: u32) {
    if old > 0xffffffffu - added {
        atomicAdd(&counters[SWEEP_WRAPS], 1u);
    }
}

// Candidates are held (held_pairs.wgsl) and written with one global atomic per hand or group.
fn append_pair(a: u32, b: u32) {
    count_wrap(hold_pair(a, b, SWEEP_APPEND, params.capacity), HELD);
}

// Writes the held candidates (held_pairs.wgsl); the 64-bit count carries into
// counters[SWEEP_WRAPS] when the add wraps. Every thread of the workgroup calls it.
fn flush_candidates(lid: u32) {
    let added = flush_held(lid, SWEEP_APPEND, params.capacity);
    count_wrap(added.x, added.y);
}

fn append(j: u32) {
    append_pair(me_index, j);
}

fn visit(q: u32) {
    if done {
        return;
    }
    if q >= end {
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

// Whether sorted position q comes after the walking box in (min.x key, index) order.
fn after_me(q: u32) -> bool {
    let k = ordered(sorted_lo_x[q]);
    return k > me_key || (k == me_key && values[q] > me_index);
}

// Walks one column's range from the first position after the walking box; false when a loop
// was cut short by the device.
fn walk_column(range: vec2<u32>) -> bool {
    var lo = range.x;
    var hi = range.y;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if after_me(mid) {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    if lo != hi {
        return false;
    }
    end = range.y;
    done = false;
    for (var q = lo; !done; q += UNROLL) {
        // #unroll 16 visit(q + {k}u);
    }
    return done;
}

@compute @workgroup_size(64)
fn walk(inv: Invocation) {
    let p = flat_id(inv);
    held_n = 0u;
    if p < params.n {
        walk_from(p);
    }
    flush_candidates(inv.lid);
}

// The walk of the box at sorted position p.
fn walk_from(p: u32) {
    me_index = values[p];
    if me_index >= arrayLength(&boxes) {
        return;
    }
    let me = boxes[me_index];
    if is_wide(me) {
        return;
    }
    me_yz = sorted_yz[p];
    me_hi_x = me.hi.x;
    me_key = ordered(sorted_lo_x[p]);
    // Lowest lower corner a box overlapping this one can have: min - reach, rounded down by a
    // margin larger than the subtraction's rounding.
    let low = me_yz.xz - params.reach - (abs(me_yz.xz) + params.reach) * 1e-6;
    let y0 = column_on(low.x, params.origin_y, params.dims_y);
    let y1 = column_on(me_yz.y, params.origin_y, params.dims_y);
    let z0 = column_on(low.y, params.origin_z, params.dims_z);
    let z1 = column_on(me_yz.w, params.origin_z, params.dims_z);
    var complete = true;
    var visited = 0u;
    for (var cy = y0; cy <= y1; cy++) {
        for (var cz = z0; cz <= z1; cz++) {
            let c = cy * params.dims_z + cz;
            if c < arrayLength(&ranges) && !walk_column(ranges[c]) {
                complete = false;
            }
            visited++;
        }
    }
    if !complete || visited != (y1 - y0 + 1u) * (z1 - z0 + 1u) {
        atomicAdd(&counters[SWEEP_CUT_SHORT], 1u);
    }
}

// wide_pairs: the workgroups of row y (and layer z, past the per-dimension limit) serve wide
// shape wide[z * rows + y]; invocation t = x * WG + lid of that row tests it against the shapes
// j = t, t + wide_lanes, t + 2 wide_lanes, ... in input order; the host picks wide_lanes so that
// an invocation makes at most WIDE_CHUNK steps. The wide index comes from the workgroup's y and
// z, not from a flat invocation index: that passes 2^32 (and wraps) at n = 2^24 with 65,536
// wide shapes (docs/design.md §4.5). Strided rather than contiguous chunks so that neighbouring
// invocations read neighbouring boxes.
const WIDE_CHUNK: u32 = 256u;

@compute @workgroup_size(64)
fn wide_pairs(inv: Invocation) {
    held_n = 0u;
    wide_lane(inv.wid.z * inv.nwg.y + inv.wid.y, inv.wid.x * WG + inv.lid);
    flush_candidates(inv.lid);
}

fn wide_lane(k: u32, lane: u32) {
    let lanes = params.wide_lanes;
    let w = wide_shape(k);
    if lane >= lanes || w == NO_SHAPE {
        return;
    }
    let n = box_count();
    let me = boxes[w];
    var j = lane;
    var steps = 0u;
    for (; j < n && steps < WIDE_CHUNK; j += lanes) {
        steps++;
        let other = boxes[j];
        // Never (w, w); a wide-wide pair only from its lower index.
        if j == w || (is_wide(other) && j < w) {
            continue;
        }
        // The walk's test: closed intervals on every axis.
        if all(me.lo.xyz <= other.hi.xyz) && all(other.lo.xyz <= me.hi.xyz) {
            append_pair(w, j);
        }
    }
    // Past n: done. Otherwise the device (or a wide_lanes too small) cut the loop short.
    if j < n {
        atomicAdd(&counters[SWEEP_CUT_SHORT], 1u);
    }
}
