// Exclusive prefix sum of u32 (wrapping), reduce-then-scan. No workgroup waits on another:
// each level is its own dispatch.
//   reduce:    data[block] -> sums[block]           (one sum per block of BLOCK elements)
//   downsweep: data[block] -> exclusive scan + offsets[block] (the scanned sums of the level above)
//   top:       the single top block, scanned in place; its total goes to side[0].
// Sizes come from arrayLength: the host binds every array with exactly its element count, so
// no uniform parameters are needed and several scans can be recorded into one encoder.

// #import dispatch.wgsl

// 256 invocations: the WebGPU default limit for a workgroup, a multiple of every common
// subgroup width (8..128), and one scan step per 2^k keeps the in-workgroup scan at 8 steps.
const WG: u32 = 256u;
// Elements per invocation. The host sets it (4 by default: 1024 elements per block keeps the
// block-sum levels tiny; tests use 1 to reach more than 65,535 workgroups within the binding limit).
override ITEMS: u32 = 4u;
// Upper bound of WG * ITEMS, for the workgroup tile.
const MAX_BLOCK: u32 = 2048u;

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
// reduce: the per-block sums it writes; downsweep: the scanned sums it reads; top: side[0] = total.
@group(0) @binding(1) var<storage, read_write> side: array<u32>;

var<workgroup> tile: array<u32, MAX_BLOCK>;
var<workgroup> lanes: array<u32, WG>;

// Inclusive scan of one value per invocation across the workgroup (Hillis-Steele).
fn workgroup_inclusive_scan(lid: u32, value: u32) -> u32 {
    var acc = value;
    lanes[lid] = acc;
    workgroupBarrier();
    for (var stride = 1u; stride < WG; stride = stride << 1u) {
        var add = 0u;
        if (lid >= stride) {
            add = lanes[lid - stride];
        }
        workgroupBarrier();
        acc = acc + add;
        lanes[lid] = acc;
        workgroupBarrier();
    }
    return acc;
}

@compute @workgroup_size(WG)
fn reduce(g: Group, @builtin(local_invocation_index) lid: u32) {
    let block = flat_group_of(g);
    let n = arrayLength(&data);
    let size = WG * ITEMS;
    // Overshoot groups of a 2D grid (the whole workgroup leaves together).
    if (block * size >= n) {
        return;
    }
    let start = block * size;
    var sum = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        let i = start + k * WG + lid;
        if (i < n) {
            sum = sum + data[i];
        }
    }
    let total = workgroup_inclusive_scan(lid, sum);
    if (lid == WG - 1u) {
        side[block] = total;
    }
}

// Scans one block in place, adding `offset`; returns the block total (valid in the last lane).
fn scan_block(block: u32, lid: u32, offset: u32) -> u32 {
    let n = arrayLength(&data);
    let size = WG * ITEMS;
    let start = block * size;
    // Coalesced load: consecutive invocations read consecutive elements.
    for (var k = 0u; k < ITEMS; k++) {
        let j = k * WG + lid;
        let i = start + j;
        var v = 0u;
        if (i < n) {
            v = data[i];
        }
        tile[j] = v;
    }
    workgroupBarrier();
    // Each invocation owns ITEMS consecutive elements of the tile.
    var own = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        own = own + tile[lid * ITEMS + k];
    }
    let inclusive = workgroup_inclusive_scan(lid, own);
    var running = offset + inclusive - own;
    for (var k = 0u; k < ITEMS; k++) {
        let j = lid * ITEMS + k;
        let v = tile[j];
        tile[j] = running;
        running = running + v;
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let j = k * WG + lid;
        let i = start + j;
        if (i < n) {
            data[i] = tile[j];
        }
    }
    return inclusive;
}

@compute @workgroup_size(WG)
fn downsweep(g: Group, @builtin(local_invocation_index) lid: u32) {
    let block = flat_group_of(g);
    if (block * WG * ITEMS >= arrayLength(&data)) {
        return;
    }
    scan_block(block, lid, side[block]);
}

@compute @workgroup_size(WG)
fn top(@builtin(local_invocation_index) lid: u32) {
    let total = scan_block(0u, lid, 0u);
    if (lid == WG - 1u) {
        side[0] = total;
    }
}
