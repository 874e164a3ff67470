// x/xy/xyz cascade: which survivors (key != NONE) of the sorted order on params.axis overlap at
// least one other survivor there (src/gpu/spheres/cascade.rs). An object overlaps an earlier one iff
// the running max of hi before it reaches its lo; a later one iff the next one's lo <= its hi.
// The running max is a three-pass scan: block maxima, their exclusive prefix, block-local scan.

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

// One workgroup: block_max[b] := max of block_max[0..b) (exclusive), chunk by chunk.
@compute @workgroup_size(256)
fn block_prefix(@builtin(local_invocation_index) lid: u32) {
    let nb = n_blocks();
    var carry = LOWEST;
    for (var base = 0u; base < nb; base += WG) {
        let idx = base + lid;
        let v = select(LOWEST, block_max[min(idx, nb - 1u)], idx < nb);
        sh[lid] = v;
        workgroupBarrier();
        scan_max_shared(lid);
        let before = select(LOWEST, sh[max(lid, 1u) - 1u], lid > 0u);
        if idx < nb {
            block_max[idx] = max(carry, before);
        }
        carry = max(carry, sh[WG - 1u]);
        workgroupBarrier();
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
