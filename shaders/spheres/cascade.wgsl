// x/xy/xyz cascade: which survivors (key != NONE) of the sorted order on params.axis overlap at
// least one other survivor there (src/gpu/spheres/cascade.rs). An object overlaps an earlier one iff
// the running max of hi before it reaches its lo; a later one iff the next one's lo <= its hi.
// The running max is a scan: block maxima, their exclusive prefix (in levels), block-local scan.

// #import frame.wgsl

@group(0) @binding(3) var<storage, read> sorted: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> keys: array<u32>;
@group(0) @binding(5) var<storage, read> values: array<u32>;
@group(0) @binding(6) var<storage, read_write> block_max: array<f32>;
@group(0) @binding(7) var<storage, read_write> mark: array<u32>;

// Below every hi (|coordinate| + radius <= 1e18 is validated).
const LOWEST: f32 = -3.0e38;

var<workgroup> sh: array<f32, 256>;

fn member_hi(p: u32) -> f32 {
    if p < params.n && keys[p] != NONE {
        return hi_of(sorted[p], params.axis);
    }
    return LOWEST;
}

fn n_blocks() -> u32 {
    return (params.n + WG - 1u) / WG;
}

// Inclusive running max of sh[] in place (Hillis-Steele; uniform control flow).
fn scan_max_shared(lid: u32) {
    for (var off = 1u; off < WG; off <<= 1u) {
        let other = select(LOWEST, sh[max(lid, off) - off], lid >= off);
        workgroupBarrier();
        sh[lid] = max(sh[lid], other);
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn block_maxima(inv: Invocation) {
    let block = flat_group(inv);
    sh[inv.lid] = member_hi(block * WG + inv.lid);
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if inv.lid < s {
            sh[inv.lid] = max(sh[inv.lid], sh[inv.lid + s]);
        }
        workgroupBarrier();
    }
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

fn level_value(i: u32) -> f32 {
    return select(LOWEST, block_max[params.j + min(i, params.pad - 1u)], i < params.pad);
}

// block_max[k + b] := max of the level's run b.
@compute @workgroup_size(256)
fn level_maxima(g: Group, @builtin(local_invocation_index) lid: u32) {
    let b = flat_group_of(g);
    sh[lid] = level_value(b * WG + lid);
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            sh[lid] = max(sh[lid], sh[lid + s]);
        }
        workgroupBarrier();
    }
    if lid == 0u && b * WG < params.pad {
        block_max[params.k + b] = sh[0];
    }
}

// One workgroup: the top level (at most WG values after `levels`; any length is scanned, chunk
// by chunk) := its exclusive running max, in place.
@compute @workgroup_size(256)
fn top_prefix(@builtin(local_invocation_index) lid: u32) {
    let nb = params.pad;
    var carry = LOWEST;
    for (var base = 0u; base < nb; base += WG) {
        let idx = base + lid;
        sh[lid] = level_value(idx);
        workgroupBarrier();
        scan_max_shared(lid);
        let before = select(LOWEST, sh[max(lid, 1u) - 1u], lid > 0u);
        if idx < nb {
            block_max[params.j + idx] = max(carry, before);
        }
        carry = max(carry, sh[WG - 1u]);
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
    scan_max_shared(lid);
    let before = select(LOWEST, sh[max(lid, 1u) - 1u], lid > 0u);
    if i < params.pad {
        block_max[params.j + i] = max(block_max[params.k + b], before);
    }
}

@compute @workgroup_size(256)
fn survivors(inv: Invocation) {
    let block = flat_group(inv);
    let p = block * WG + inv.lid;
    sh[inv.lid] = member_hi(p);
    workgroupBarrier();
    scan_max_shared(inv.lid);
    if p < params.n {
        let a = params.axis;
        let member = keys[p] != NONE;
        let s = sorted[p];
        let lo = lo_of(s, a);
        let hi = hi_of(s, a);
        let before = max(block_max[block], select(LOWEST, sh[max(inv.lid, 1u) - 1u], inv.lid > 0u));
        var keep = before >= lo;
        if !keep && p + 1u < params.n && keys[p + 1u] != NONE {
            keep = lo_of(sorted[p + 1u], a) <= hi;
        }
        mark[values[p]] = select(0u, 1u, member && keep);
    }
}
