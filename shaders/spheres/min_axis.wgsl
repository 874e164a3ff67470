// min_axis per-object axis choice (src/gpu/spheres/min_axis.rs). On axis a, with lo/hi keys sorted:
// O_a(i) = #{j : lo_j <= hi_i} - #{j : hi_j < lo_i} - 1 (objects overlapping i, itself
// excluded), found by two binary searches; F_a(i) = #{j after i in the lo order : lo_j <= hi_i}
// is the paper's forward-candidate count, kept only for its literal rule's test count.
//
// Many worlds (FLAG_WORLDS, docs/design.md §2.13): the lo order is (world, lo, index) and
// lo_keys hold the world ranks in it; hi_sorted holds the indices in the order (world, hi,
// index). An object's counts run over its own world's run of both orders (the shared objects'
// run is a world of its own): the same two binary searches, within the run.

// #import frame.wgsl
// #import slots.wgsl
// #import spheres/world_runs.wgsl

@group(0) @binding(3) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> lo_keys: array<u32>;
@group(0) @binding(5) var<storage, read> lo_idx: array<u32>;
// One world: the sorted hi keys. Many worlds: the indices in the order (world, hi, index).
@group(0) @binding(6) var<storage, read> hi_sorted: array<u32>;
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
        if hi_sorted[mid] < x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Many worlds: the world rank at position p of the lo order, its lo key (world_run_bound,
// spheres/world_runs.wgsl).
fn world_at(p: u32) -> u32 {
    return lo_keys[p];
}

// Many worlds: (#{j of the run [first, end) : lo_j <= x}, #{j of the run : hi_j < y}) on axis a,
// each run in its own order.
fn counts_in_run(first: u32, end: u32, a: u32, x: f32, y: f32) -> vec2<u32> {
    var lo = first;
    var hi = end;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if lo_of(spheres[lo_idx[mid]], a) <= x {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    let lo_le = lo;
    lo = first;
    hi = end;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if hi_of(spheres[hi_sorted[mid]], a) < y {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return vec2<u32>(lo_le, lo);
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
        var upto: u32;
        var below: u32;
        if (params.flags & FLAG_WORLDS) != 0u {
            let w = lo_keys[rank[i]];
            let run = vec2<u32>(world_run_bound(w, false), world_run_bound(w, true));
            let c = counts_in_run(run.x, run.y, a, hi_of(s, a), lo_of(s, a));
            upto = c.x;
            below = c.y;
        } else {
            upto = count_lo_le(ordered(hi_of(s, a)));
            below = count_hi_lt(ordered(lo_of(s, a)));
        }
        let overlap = upto - below - 1u;
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
