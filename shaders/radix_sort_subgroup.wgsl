// Scatter of one stable LSD radix sort pass, subgroup variant (warp-level multisplit). The
// histogram and the scan between them are the portable ones (radix_sort.wgsl, scan.wgsl): the
// block layout (WG * ITEMS keys per block = 256 * ROUNDS there, hist[digit * blocks + block])
// is the same.
//
// Per block, with no barrier per key:
//   1. every subgroup claims a contiguous chunk of the block (one elected atomicAdd hands out
//      slot and chunk together, so slot order = key order whatever the subgroup sizes are) and
//      ranks its keys ITEMS rounds at a time: lanes with my digit = AND over the 8 digit bits of
//      subgroupBallot(bit) or its complement; rank = earlier such lanes + the slot's running
//      count of the digit, which the digit's first lane advances with one atomicAdd;
//   2. one barrier, then per digit an exclusive scan of the slots' counts (slot order) that
//      starts at the digit's scanned hist[digit, block]: the slot's first output position;
//   3. one barrier, then each key goes to its slot's position for its digit + its rank.
// No subgroup size is assumed (4..128: ballots are vec4<u32>); lanes are counted from ballots,
// so partial subgroups are fine too. The host prepends `const SLOTS` (WG / the adapter's
// minimum subgroup size: the most subgroups a workgroup can hold) and `const ITEMS` (keys per
// invocation per block; private arrays need a constant size).

// 128 invocations: the slot table (one 256-digit row of u32 per subgroup) then takes
// 128 / 8 * 1 KiB = 16 KiB at subgroup size 8, and each subgroup's chunk is at least as long as
// its row, so clearing and scanning the table costs at most a word per key. Two digits per
// invocation in the table scan.
const WG: u32 = 128u;
const RADIX: u32 = 256u;

struct PassParams {
    shift: u32,
    mask: u32,
}

@group(0) @binding(0) var<uniform> params: PassParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> hist: array<u32>;
@group(0) @binding(3) var<storage, read> values_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// Per slot, per digit: keys of the slot's chunk so far (phase 1), then the slot's first output
// position (phase 3). Atomic because lanes of a subgroup take turns as a digit's first lane.
var<workgroup> slot_counts: array<atomic<u32>, SLOTS * RADIX>;
// High 16 bits: next slot; low 16 bits: next free key offset in the block.
var<workgroup> cursor: atomic<u32>;

fn digit_of(key: u32) -> u32 {
    return (key >> params.shift) & params.mask;
}

fn block_count(n: u32) -> u32 {
    return (n + WG * ITEMS - 1u) / (WG * ITEMS);
}

fn popcount4(v: vec4<u32>) -> u32 {
    let c = countOneBits(v);
    return c.x + c.y + c.z + c.w;
}

// Ballot bits of the lanes below `lane` (subgroup_invocation_id numbering).
fn lanes_below(lane: u32) -> vec4<u32> {
    let rel = vec4<i32>(i32(lane)) - vec4<i32>(0, 32, 64, 96);
    let partial = (vec4<u32>(1u) << vec4<u32>(clamp(rel, vec4<i32>(0), vec4<i32>(31))))
        - vec4<u32>(1u);
    return select(select(vec4<u32>(0u), partial, rel > vec4<i32>(0)), vec4<u32>(~0u),
                  rel >= vec4<i32>(32));
}

// The lanes holding a valid key with digit `d`: AND over the 8 digit bits of the ballot of
// lanes with that bit, or of its complement. Any subgroup size.
fn lanes_by_ballots(d: u32, valid: bool) -> vec4<u32> {
    var same = subgroupBallot(valid);
    for (var b = 0u; b < 8u; b++) {
        let on = ((d >> b) & 1u) != 0u;
        let votes = subgroupBallot(on);
        same &= select(~votes, votes, on);
    }
    return same;
}

// The same for subgroups of a fixed size BROADCAST_LANES <= 8: compare with each lane's digit.
// As many operations as the ballots on a GPU, but a constant-index broadcast is one vector
// extract on a CPU driver (lavapipe), where each ballot is a loop over the lanes. Lanes without
// a key (or absent) are masked by the ballot.
fn lanes_by_broadcasts(d: u32, valid: bool) -> vec4<u32> {
    var m = 0u;
    // Constant lane indices (broadcast needs them); the BROADCAST_LANES tests fold away.
    m |= select(0u, 1u, subgroupBroadcast(d, 0u) == d);
    m |= select(0u, 2u, subgroupBroadcast(d, 1u) == d);
    m |= select(0u, 4u, subgroupBroadcast(d, 2u) == d);
    m |= select(0u, 8u, subgroupBroadcast(d, 3u) == d);
    if (BROADCAST_LANES > 4u) {
        m |= select(0u, 16u, subgroupBroadcast(d, 4u) == d);
        m |= select(0u, 32u, subgroupBroadcast(d, 5u) == d);
        m |= select(0u, 64u, subgroupBroadcast(d, 6u) == d);
        m |= select(0u, 128u, subgroupBroadcast(d, 7u) == d);
    }
    return subgroupBallot(valid) & vec4<u32>(m, 0u, 0u, 0u);
}

// Lowest set ballot bit of a non-zero mask (straight-line selects, no divergent branches).
fn first_lane(m: vec4<u32>) -> u32 {
    let at = firstTrailingBit(m) + vec4<u32>(0u, 32u, 64u, 96u);
    var lane = at.w;
    lane = select(lane, at.z, m.z != 0u);
    lane = select(lane, at.y, m.y != 0u);
    lane = select(lane, at.x, m.x != 0u);
    return lane;
}

@compute @workgroup_size(WG)
fn scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32,
           @builtin(subgroup_invocation_id) sg_lane: u32) {
    let n = arrayLength(&keys_in);
    let blocks = block_count(n);
    let block = wid.y * nwg.x + wid.x;
    // Overshoot groups of a 2D grid (the whole workgroup leaves together).
    if (block >= blocks) {
        return;
    }
    // Workgroup memory is initialised here (the host turns wgpu's zero-fill off).
    for (var w = lid; w < SLOTS * RADIX; w += WG) {
        atomicStore(&slot_counts[w], 0u);
    }
    if (lid == 0u) {
        atomicStore(&cursor, 0u);
    }
    workgroupBarrier();

    let present = subgroupBallot(true);
    let below = lanes_below(sg_lane);
    let lanes = popcount4(present);
    let lane = popcount4(present & below);
    var claim = 0u;
    if (lane == 0u) {
        claim = atomicAdd(&cursor, (1u << 16u) | (lanes * ITEMS));
    }
    // Lane 0 is the lowest active invocation: broadcast-first reads its claim.
    claim = subgroupBroadcastFirst(claim);
    // SLOTS covers WG / (minimum subgroup size); the clamp only guards the array.
    let row = min(claim >> 16u, SLOTS - 1u) * RADIX;
    let first = block * WG * ITEMS + (claim & 0xFFFFu);

    var key_at: array<u32, ITEMS>;
    var rank_at: array<u32, ITEMS>;
    for (var r = 0u; r < ITEMS; r++) {
        // Consecutive lanes read consecutive keys: coalesced loads.
        let i = first + r * lanes + lane;
        let valid = i < n;
        var key = 0u;
        if (valid) {
            key = keys_in[i];
        }
        let d = digit_of(key);
        var same: vec4<u32>;
        if (BROADCAST_LANES != 0u) {
            same = lanes_by_broadcasts(d, valid);
        } else {
            same = lanes_by_ballots(d, valid);
        }
        let rank = popcount4(same & below);
        var before = 0u;
        if (valid && rank == 0u) {
            before = atomicAdd(&slot_counts[row + d], popcount4(same));
        }
        let leader = select(sg_lane, first_lane(same), valid);
        key_at[r] = key;
        rank_at[r] = subgroupShuffle(before, leader) + rank;
    }
    workgroupBarrier();

    // Per digit, exclusive scan over slots (key order) from the block's first position.
    let slots = min(atomicLoad(&cursor) >> 16u, SLOTS);
    for (var d = lid; d < RADIX; d += WG) {
        var run = hist[d * blocks + block];
        for (var s = 0u; s < slots; s++) {
            let w = s * RADIX + d;
            let c = atomicLoad(&slot_counts[w]);
            atomicStore(&slot_counts[w], run);
            run += c;
        }
    }
    workgroupBarrier();

    for (var r = 0u; r < ITEMS; r++) {
        let i = first + r * lanes + lane;
        if (i < n) {
            let key = key_at[r];
            let d = digit_of(key);
            let dest = atomicLoad(&slot_counts[row + d]) + rank_at[r];
            keys_out[dest] = key;
            values_out[dest] = values_in[i];
        }
    }
}
