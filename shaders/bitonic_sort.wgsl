// One compare-exchange step of a bitonic sort of (key, value) pairs, ordered by key then value
// (src/gpu/bitonic_sort.rs). Values are unique object indices, so the order is total and the
// result equals a stable sort by key of pairs that start in index order.

@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> values: array<u32>;

@compute @workgroup_size(256)
fn bitonic_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let t = flat_id(wid, nwg, lid);
    if t >= params.pad / 2u {
        return;
    }
    let j = params.j;
    // Lower element of the t-th compare pair: insert a 0 bit at position log2(j).
    let i = ((t & ~(j - 1u)) << 1u) | (t & (j - 1u));
    let l = i + j;
    let ki = keys[i];
    let kl = keys[l];
    let vi = values[i];
    let vl = values[l];
    let ascending = (i & params.k) == 0u;
    let greater = ki > kl || (ki == kl && vi > vl);
    if greater == ascending {
        keys[i] = kl;
        keys[l] = ki;
        values[i] = vl;
        values[l] = vi;
    }
}

// The steps with j <= 256 touch only one 512-element block: run them in workgroup memory.
// mode 0: every step of every merge size k <= min(512, pad) (sorts each block);
// mode 1: the steps j = params.j, j/2, ..., 1 of merge size params.k.
const BLOCK: u32 = 512u;
var<workgroup> sk: array<u32, 512>;
var<workgroup> sv: array<u32, 512>;

fn local_step(t: u32, base: u32, j: u32, k: u32) {
    let i = ((t & ~(j - 1u)) << 1u) | (t & (j - 1u));
    let l = i + j;
    let ki = sk[i];
    let kl = sk[l];
    let vi = sv[i];
    let vl = sv[l];
    let ascending = ((base + i) & k) == 0u;
    let greater = ki > kl || (ki == kl && vi > vl);
    if greater == ascending {
        sk[i] = kl;
        sk[l] = ki;
        sv[i] = vl;
        sv[l] = vi;
    }
}

@compute @workgroup_size(256)
fn bitonic_local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let base = (wid.y * nwg.x + wid.x) * BLOCK;
    // The whole workgroup returns together (base is uniform), so the barriers stay uniform.
    if base >= params.pad {
        return;
    }
    for (var h = 0u; h < 2u; h++) {
        let g = base + lid + h * WG;
        let inside = g < params.pad;
        sk[lid + h * WG] = select(NONE, keys[min(g, params.pad - 1u)], inside);
        sv[lid + h * WG] = select(NONE, values[min(g, params.pad - 1u)], inside);
    }
    workgroupBarrier();
    if params.mode == 0u {
        let top = min(BLOCK, params.pad);
        for (var k = 2u; k <= top; k <<= 1u) {
            for (var j = k >> 1u; j > 0u; j >>= 1u) {
                local_step(lid, base, j, k);
                workgroupBarrier();
            }
        }
    } else {
        for (var j = params.j; j > 0u; j >>= 1u) {
            local_step(lid, base, j, params.k);
            workgroupBarrier();
        }
    }
    for (var h = 0u; h < 2u; h++) {
        let g = base + lid + h * WG;
        if g < params.pad {
            keys[g] = sk[lid + h * WG];
            values[g] = sv[lid + h * WG];
        }
    }
}
