// x/xy/xyz cascade: which survivors (key != NONE) of the sorted order on params.axis overlap at
// least one other survivor there (src/gpu/spheres/cascade.rs). An object overlaps an earlier one iff
// the running max of hi before it reaches its lo; a later one iff the next one's lo <= its hi.
// The running max is a scan: block maxima, their exclusive prefix (in levels), block-local scan.
//
// Many worlds (FLAG_WORLDS, docs/design.md §2.13): the order is (world, lo, index) and the keys
// are world ranks, the dropped objects' NONE first. The scan runs over (world, hi) pairs, the
// larger pair the later world or, in one world, the larger hi: since the worlds are in order,
// the running "max" before p is the largest hi of p's own world before it (or an earlier
// world's, which p then ignores). One scan whatever the number of worlds. The shared objects
// (from params.shared_from) always survive, and so does an object that overlaps one of them.

// #import frame.wgsl

@group(0) @binding(3) var<storage, read> sorted: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> keys: array<u32>;
@group(0) @binding(5) var<storage, read> values: array<u32>;
// (world, bits of hi) per entry: block maxima and the levels above them.
@group(0) @binding(6) var<storage, read_write> block_max: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> mark: array<u32>;

// Below every hi (|coordinate| + radius <= 1e18 is validated).
const LOWEST: f32 = -3.0e38;

var<workgroup> sh: array<vec2<u32>, 256>;

// Before every member: world 0 (a world's rank is at least 1), the lowest hi.
fn lowest() -> vec2<u32> {
    return vec2<u32>(0u, bitcast<u32>(LOWEST));
}

// The later of two (world, hi) pairs: the later world, or in one world the larger hi. A total
// order, so the scans and reductions may combine in any grouping.
fn later(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let b_later = b.x > a.x || (b.x == a.x && bitcast<f32>(b.y) > bitcast<f32>(a.y));
    return select(a, b, b_later);
}

fn worlds() -> bool {
    return (params.flags & FLAG_WORLDS) != 0u;
}

// The world of sorted position p (one world, 0, outside a batch).
fn world_at(p: u32) -> u32 {
    return select(0u, keys[p], worlds());
}

fn member_reach(p: u32) -> vec2<u32> {
    if p < params.n && keys[p] != NONE {
        return vec2<u32>(world_at(p), bitcast<u32>(hi_of(sorted[p], params.axis)));
    }
    return lowest();
}

fn n_blocks() -> u32 {
    return (params.n + WG - 1u) / WG;
}

// Inclusive running `later` of sh[] in place (Hillis-Steele; uniform control flow).
fn scan_shared(lid: u32) {
    for (var off = 1u; off < WG; off <<= 1u) {
        let other = select(lowest(), sh[max(lid, off) - off], lid >= off);
        workgroupBarrier();
        sh[lid] = later(sh[lid], other);
        workgroupBarrier();
    }
}

// sh[0] := the `later` of sh[], in place.
fn reduce_shared(lid: u32) {
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            sh[lid] = later(sh[lid], sh[lid + s]);
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn block_maxima(inv: Invocation) {
    let block = flat_group(inv);
    sh[inv.lid] = member_reach(block * WG + inv.lid);
    workgroupBarrier();
    reduce_shared(inv.lid);
    if inv.lid == 0u && block < n_blocks() {
        block_max[block] = sh[0];
    }
}

// The exclusive prefix of the block maxima, in levels (src/gpu/spheres/cascade.rs `levels`):
// level 0 is the n_blocks() block maxima at offset 0 of block_max, and each next level, stored
// after the one below, holds the maxima of that level's runs of WG, until one run holds a
// level. Upsweep `level_maxima`, one workgroup scanning the top (`top_prefix`), downsweep
// `level_prefix`: no workgroup walks more than WG values (docs/design.md §9.17).
// params.j: the level's offset; params.pad: its length (>= 1); params.k: the level above's
// offset.

fn level_value(i: u32) -> vec2<u32> {
    return select(lowest(), block_max[params.j + min(i, params.pad - 1u)], i < params.pad);
}

// block_max[k + b] := max of the level's run b.
@compute @workgroup_size(256)
fn level_maxima(g: Group, @builtin(local_invocation_index) lid: u32) {
    let b = flat_group_of(g);
    sh[lid] = level_value(b * WG + lid);
    workgroupBarrier();
    reduce_shared(lid);
    if lid == 0u && b * WG < params.pad {
        block_max[params.k + b] = sh[0];
    }
}

// One workgroup: the top level (at most WG values after `levels`; any length is scanned, chunk
// by chunk) := its exclusive running max, in place.
@compute @workgroup_size(256)
fn top_prefix(@builtin(local_invocation_index) lid: u32) {
    let nb = params.pad;
    var carry = lowest();
    for (var base = 0u; base < nb; base += WG) {
        let idx = base + lid;
        sh[lid] = level_value(idx);
        workgroupBarrier();
        scan_shared(lid);
        let before = select(lowest(), sh[max(lid, 1u) - 1u], lid > 0u);
        if idx < nb {
            block_max[params.j + idx] = later(carry, before);
        }
        carry = later(carry, sh[WG - 1u]);
        workgroupBarrier();
    }
}

// The level := its exclusive running max, in place: the run's own exclusive scan after the
// level above's value for the run (already its exclusive prefix).
@compute @workgroup_size(256)
fn level_prefix(g: Group, @builtin(local_invocation_index) lid: u32) {
    let b = flat_group_of(g);
    let i = b * WG + lid;
    sh[lid] = level_value(i);
    workgroupBarrier();
    scan_shared(lid);
    let before = select(lowest(), sh[max(lid, 1u) - 1u], lid > 0u);
    if i < params.pad {
        block_max[params.j + i] = later(block_max[params.k + b], before);
    }
}

// Many worlds: past this many shared objects every member survives (GPU_CASCADE_SHARED_MAX in
// src/gpu/spheres/broad_phase/worlds.rs): each would otherwise scan them all here, as it tests them all in the sweep.
const SHARED_SCAN_MAX: u32 = 1024u;

// Many worlds: whether sphere s overlaps one of the shared objects on the axis (or there are
// more than SHARED_SCAN_MAX of them).
fn meets_shared(s: vec4<f32>) -> bool {
    if params.n - params.shared_from > SHARED_SCAN_MAX {
        return true;
    }
    let a = params.axis;
    let lo = lo_of(s, a);
    let hi = hi_of(s, a);
    for (var q = params.shared_from; q < params.n; q++) {
        let t = sorted[q];
        if lo_of(t, a) <= hi && lo <= hi_of(t, a) {
            return true;
        }
    }
    return false;
}

@compute @workgroup_size(256)
fn survivors(inv: Invocation) {
    let block = flat_group(inv);
    let p = block * WG + inv.lid;
    sh[inv.lid] = member_reach(p);
    workgroupBarrier();
    scan_shared(inv.lid);
    if p < params.n {
        let a = params.axis;
        let member = keys[p] != NONE;
        let world = world_at(p);
        let s = sorted[p];
        let lo = lo_of(s, a);
        let hi = hi_of(s, a);
        let before = later(block_max[block], select(lowest(), sh[max(inv.lid, 1u) - 1u], inv.lid > 0u));
        var keep = before.x == world && bitcast<f32>(before.y) >= lo;
        if !keep && p + 1u < params.n && keys[p + 1u] != NONE && world_at(p + 1u) == world {
            keep = lo_of(sorted[p + 1u], a) <= hi;
        }
        if worlds() && member && !keep {
            keep = p >= params.shared_from || meets_shared(s);
        }
        mark[values[p]] = select(0u, 1u, member && keep);
    }
}
