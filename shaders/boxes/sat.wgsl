// Separating-axis narrow phase over a candidate-pair buffer resident on the GPU.
// CPU twin (same axes, same formulas, same closed comparisons, same error bound):
// src/geom/sat.rs.
//
// `prepare` (one thread) turns the candidate count, written by whatever stage produced the
// candidates, into indirect dispatch arguments, so no readback happens in between. `obb_main`
// and `polygon_main` test one candidate per thread and append pairs, one global atomic per
// workgroup or subgroup (append.wgsl), on a counter that keeps counting past the output
// capacity: the host reads the exact count and re-runs with a larger buffer, so no pair is ever
// lost.
//
// Boxes and polygons are decided with an error bound (docs/design.md §4.2, §4.6): a pair whose
// margin on some axis lies within the bound of touching is appended reversed, (j, i), and counted in out_count[2],
// whether or not sure pairs are stored; the host settles it exactly. With params.store_sure = 0
// the sure overlapping pairs are only counted (out_count[3]).

// #import dispatch.wgsl
// #import dispatch_grid.wgsl
// #import append.wgsl
// #import boxes/sat_params.wgsl

struct ObbFrame {
    center: vec4<f32>,
    // xyz: unit axis k, w: half-extent k.
    axes: array<vec4<f32>, 3>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> candidates: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> candidate_count: array<u32>;
@group(0) @binding(3) var<storage, read_write> out_pairs: array<vec2<u32>>;
// [0]: pairs appended (slots), [1]: candidates naming an object that does not exist, [2]: unsure
// pairs among those appended, [3]: sure overlapping pairs counted, not appended.
@group(0) @binding(4) var<storage, read_write> out_count: array<atomic<u32>, 4>;
@group(0) @binding(5) var<storage, read_write> dispatch_args: array<u32, 3>;
@group(0) @binding(6) var<storage, read> frames: array<ObbFrame>;
@group(0) @binding(7) var<storage, read> vertices: array<vec2<f32>>;
// Polygon i is vertices[offsets[i] .. offsets[i + 1]], counter-clockwise.
@group(0) @binding(8) var<storage, read> offsets: array<u32>;

// 64 threads: a multiple of every common SIMD width (8 on lavapipe, 32, 64); the threads share
// only the append reservation.
const WG: u32 = 64u;
// OBB_ERROR_REL and OBB_ERROR_ABS in src/geom/sat.rs: 128 units of f32 rounding of the pair's
// scale, plus what flushing subnormals to zero may lose.
const OBB_ERROR_REL: f32 = 7.62939453125e-6;
const OBB_ERROR_ABS: f32 = 1e-35;
// POLYGON_ERROR_REL and POLYGON_ERROR_ABS in src/geom/sat.rs: 32 units of f32 rounding of the
// edge test's two products, plus what flushing subnormals to zero may lose.
const POLYGON_ERROR_REL: f32 = 1.9073486328125e-6;
const POLYGON_ERROR_ABS: f32 = 1e-35;
// Verdicts.
const APART: u32 = 0u;
const OVERLAP: u32 = 1u;
const UNSURE: u32 = 2u;

fn live_candidates() -> u32 {
    let count = candidate_count[params.count_index];
    return min(count, min(params.candidate_capacity, arrayLength(&candidates)));
}

@compute @workgroup_size(1)
fn prepare() {
    dispatch_args = indirect_args(live_candidates(), WG, params.max_groups_x);
}

// Appends `p` when `append`, counts a sure overlap that is not appended when `count`: one
// global atomic per workgroup, or per subgroup where the device has SUBGROUP (append.wgsl).
// Every thread of the workgroup calls it, in uniform control flow.
fn emit_group(lid: u32, append: bool, count: bool, p: vec2<u32>) {
    let r = reserve(lid, select(0u, 1u, append));
    var base = 0u;
    if r.leader && r.total > 0u {
        base = atomicAdd(&out_count[0], r.total);
    }
    let slot = first_slot(r, base);
    if append && slot < params.out_capacity && slot < arrayLength(&out_pairs) {
        out_pairs[slot] = p;
    }
    let c = reserve(lid, select(0u, 1u, count));
    if c.leader && c.total > 0u {
        atomicAdd(&out_count[3], c.total);
    }
}

// Emits candidate p with its verdict: sure overlaps appended or counted (params.store_sure),
// unsure ones appended reversed and counted.
fn emit_verdict(lid: u32, verdict: u32, p: vec2<u32>) {
    let unsure = verdict == UNSURE;
    let sure = verdict == OVERLAP;
    if unsure {
        atomicAdd(&out_count[2], 1u);
    }
    let store = params.store_sure != 0u;
    emit_group(lid, unsure || (sure && store), sure && !store, select(p, p.yx, unsure));
}

// Margins on the edge-edge axes A_i x B_j for one i and all three j at once, and which axes
// compute to zero. In A's frame the axis has components l1 (at i1) and l2 (at i2); r1, r2 are
// rows i1, i2 of R = A^T B.
struct EdgeMargins {
    m: vec3<f32>,
    zero: vec3<bool>,
}

fn edge_margins(t1: f32, t2: f32, ha1: f32, ha2: f32, r1: vec3<f32>, r2: vec3<f32>, hb: vec3<f32>) -> EdgeMargins {
    let l1 = -r2;
    let l2 = r1;
    let tl = t1 * l1 + t2 * l2;
    let ra = ha1 * abs(l1) + ha2 * abs(l2);
    let rb = hb.x * abs(r1.x * l1 + r2.x * l2)
        + hb.y * abs(r1.y * l1 + r2.y * l2)
        + hb.z * abs(r1.z * l1 + r2.z * l2);
    let zero = (l1 == vec3<f32>(0.0)) & (l2 == vec3<f32>(0.0));
    return EdgeMargins(abs(tl) - (ra + rb), zero);
}

// APART when some axis separates by more than the error bound e, else whether an axis lies
// within it (UNSURE) or none does (OVERLAP). An edge axis that computes to zero between frames
// with exact axes (centre.w = 1) is exactly zero and never separates.
fn obb_verdict(a: ObbFrame, b: ObbFrame) -> u32 {
    let d = b.center.xyz - a.center.xyz;
    let a0 = a.axes[0].xyz;
    let a1 = a.axes[1].xyz;
    let a2 = a.axes[2].xyz;
    let b0 = b.axes[0].xyz;
    let b1 = b.axes[1].xyz;
    let b2 = b.axes[2].xyz;
    let ha = vec3<f32>(a.axes[0].w, a.axes[1].w, a.axes[2].w);
    let hb = vec3<f32>(b.axes[0].w, b.axes[1].w, b.axes[2].w);
    let scale = dot(abs(d), vec3<f32>(1.0)) + dot(ha, vec3<f32>(1.0)) + dot(hb, vec3<f32>(1.0));
    let e = vec3<f32>(scale * OBB_ERROR_REL + OBB_ERROR_ABS);
    let t = vec3<f32>(dot(d, a0), dot(d, a1), dot(d, a2));
    // Rows of R: r_i[j] = A_i . B_j.
    let r0 = vec3<f32>(dot(a0, b0), dot(a0, b1), dot(a0, b2));
    let r1 = vec3<f32>(dot(a1, b0), dot(a1, b1), dot(a1, b2));
    let r2 = vec3<f32>(dot(a2, b0), dot(a2, b1), dot(a2, b2));
    // A's face normals.
    let rb = vec3<f32>(dot(hb, abs(r0)), dot(hb, abs(r1)), dot(hb, abs(r2)));
    let ma = abs(t) - (ha + rb);
    if any(ma > e) {
        return APART;
    }
    var unsure = any(ma > -e);
    // B's face normals.
    let tb = t.x * r0 + t.y * r1 + t.z * r2;
    let ra = ha.x * abs(r0) + ha.y * abs(r1) + ha.z * abs(r2);
    let mb = abs(tb) - (ra + hb);
    if any(mb > e) {
        return APART;
    }
    unsure = unsure || any(mb > -e);
    let exact = a.center.w != 0.0 && b.center.w != 0.0;
    var edges = array<EdgeMargins, 3>(
        edge_margins(t.y, t.z, ha.y, ha.z, r1, r2, hb),
        edge_margins(t.z, t.x, ha.z, ha.x, r2, r0, hb),
        edge_margins(t.x, t.y, ha.x, ha.y, r0, r1, hb),
    );
    for (var i = 0u; i < 3u; i++) {
        let g = edges[i];
        if any(g.m > e) {
            return APART;
        }
        unsure = unsure || any((g.m > -e) & !(g.zero & vec3<bool>(exact)));
    }
    return select(OVERLAP, UNSURE, unsure);
}

// Candidate k, or (0, 0) past the live candidates (emitted as APART: neither appended nor
// counted).
fn candidate(k: u32) -> vec2<u32> {
    if k < live_candidates() {
        return candidates[k];
    }
    return vec2<u32>(0u);
}

// Whether candidate k is live and names two of the first n objects; an invalid one is counted.
fn valid_candidate(k: u32, n: u32) -> bool {
    if k >= live_candidates() {
        return false;
    }
    let p = candidates[k];
    if p.x >= n || p.y >= n {
        atomicAdd(&out_count[1], 1u);
        return false;
    }
    return true;
}

// The verdict on candidate k (past the live ones and invalid: apart).
fn obb_hit(k: u32) -> u32 {
    if !valid_candidate(k, min(params.n_objects, arrayLength(&frames))) {
        return APART;
    }
    let p = candidates[k];
    return obb_verdict(frames[p.x], frames[p.y]);
}

@compute @workgroup_size(WG)
fn obb_main(inv: Invocation) {
    let k = flat_id(inv);
    emit_verdict(inv.lid, obb_hit(k), candidate(k));
}

// APART when every vertex of q lies surely strictly outside one edge line of p; UNSURE when
// no edge separates surely but one might (each vertex outside it or within the error bound of
// its line); OVERLAP when every edge has a vertex surely not outside: the sign of
// (b - a) x (v - a) beyond the bound a vertex (src/geom/sat.rs takes one a pair, never smaller;
// docs/design.md §4.6).
fn separation_by_an_edge_of(p0: u32, p1: u32, q0: u32, q1: u32) -> u32 {
    var verdict = OVERLAP;
    var prev = vertices[p1 - 1u];
    for (var i = p0; i < p1; i++) {
        let cur = vertices[i];
        let e = cur - prev;
        var edge = APART;
        for (var k = q0; k < q1; k++) {
            let d = vertices[k] - prev;
            let l = e.x * d.y;
            let r = e.y * d.x;
            let det = l - r;
            let bound = POLYGON_ERROR_REL * (abs(l) + abs(r)) + POLYGON_ERROR_ABS;
            if det > bound {
                edge = OVERLAP;
                break;
            }
            if det >= -bound {
                edge = UNSURE;
            }
        }
        if edge == APART {
            return APART;
        }
        if edge == UNSURE {
            verdict = UNSURE;
        }
        prev = cur;
    }
    return verdict;
}

@compute @workgroup_size(WG)
fn polygon_main(inv: Invocation) {
    let k = flat_id(inv);
    emit_verdict(inv.lid, polygon_hit(k), candidate(k));
}

// The verdict on candidate k (past the live ones, invalid, or with malformed offsets, which
// are counted: apart).
fn polygon_hit(k: u32) -> u32 {
    if !valid_candidate(k, min(params.n_objects, arrayLength(&offsets) - 1u)) {
        return APART;
    }
    let p = candidates[k];
    let a0 = offsets[p.x];
    let a1 = offsets[p.x + 1u];
    let b0 = offsets[p.y];
    let b1 = offsets[p.y + 1u];
    let nv = arrayLength(&vertices);
    // Malformed offsets (not a polygon of >= 3 vertices inside the buffer) count as invalid.
    if a1 < a0 + 3u || b1 < b0 + 3u || a1 > nv || b1 > nv {
        atomicAdd(&out_count[1], 1u);
        return APART;
    }
    let by_a = separation_by_an_edge_of(a0, a1, b0, b1);
    if by_a == APART {
        return APART;
    }
    let by_b = separation_by_an_edge_of(b0, b1, a0, a1);
    if by_b == APART {
        return APART;
    }
    return select(OVERLAP, UNSURE, by_a == UNSURE || by_b == UNSURE);
}
