// min_axis per-object axis choice (src/gpu/spheres/min_axis.rs). On axis a, with lo/hi keys sorted:
// O_a(i) = #{j : lo_j <= hi_i} - #{j : hi_j < lo_i} - 1 (objects overlapping i, itself
// excluded), found by two binary searches; F_a(i) = #{j after i in the lo order : lo_j <= hi_i}
// is the paper's forward-candidate count, kept only for its literal rule's test count.

// #import frame.wgsl
// #import slots.wgsl

@group(0) @binding(3) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> lo_keys: array<u32>;
@group(0) @binding(5) var<storage, read> lo_idx: array<u32>;
@group(0) @binding(6) var<storage, read> hi_keys: array<u32>;
@group(0) @binding(7) var<storage, read_write> rank: array<u32>;
@group(0) @binding(8) var<storage, read_write> choice: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read_write> forward_best: array<u32>;
@group(0) @binding(10) var<storage, read_write> sorted: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read_write> sorted_choice: array<vec2<u32>>;

// Spheres and choices in the lo order of one axis, so the owner walk reads neighbours
// contiguously.
@compute @workgroup_size(256)
fn gather_axis(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n {
        let i = lo_idx[p];
        sorted[p] = spheres[i];
        sorted_choice[p] = choice[i];
    }
}

@compute @workgroup_size(256)
fn rank_scatter(inv: Invocation) {
    let q = flat_id(inv);
    if q < params.n {
        rank[lo_idx[q]] = q;
    }
}

// Number of sorted lo keys <= x.
fn count_lo_le(x: u32) -> u32 {
    var lo = 0u;
    var hi = params.n;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if lo_keys[mid] <= x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Number of sorted hi keys < x.
fn count_hi_lt(x: u32) -> u32 {
    var lo = 0u;
    var hi = params.n;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if hi_keys[mid] < x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Run for axis 0, 1, 2 in turn; keeps the smallest O (lowest axis on ties). The last axis also
// adds the paper rule's tests (sum of the smallest forward counts) to the u64 at
// counters[SPHERE_PAPER_MIN_AXIS].
@compute @workgroup_size(256)
fn choose(inv: Invocation) {
    let i = flat_id(inv);
    let a = params.axis;
    var forward = 0u;
    if i < params.n {
        let s = spheres[i];
        let upto = count_lo_le(ordered(hi_of(s, a)));
        let overlap = upto - count_hi_lt(ordered(lo_of(s, a))) - 1u;
        let f = upto - rank[i] - 1u;
        if a == 0u {
            choice[i] = vec2<u32>(overlap, 0u);
            forward_best[i] = f;
        } else {
            if overlap < choice[i].x {
                choice[i] = vec2<u32>(overlap, a);
            }
            forward_best[i] = min(forward_best[i], f);
        }
        forward = forward_best[i];
    }
    if a == 2u {
        flush_counts(inv.lid, SPHERE_PAPER_MIN_AXIS, forward, SPHERE_PAPER_MIN_AXIS, 0u);
    }
}
