// Scatter of one stable LSD radix sort pass, subgroup variant (warp-level multisplit). The
// histogram and the scan before it are the portable ones (radix_sort.wgsl, scan.wgsl): per chunk
// of CHUNK keys (the portable block), hist[digit * chunks + chunk] holds, once scanned, the
// chunk's first output position for each digit.
//
// A workgroup takes CHUNKS consecutive chunks; each subgroup ranks whole chunks by itself, in
// steps of KEYS keys per lane, ranked one key per lane at a time, with no barrier in the loop:
//   lanes with my digit = the lanes whose digit equals mine (8 ballots of the digit bits, or one
//   broadcast per lane for small fixed subgroup sizes); my rank = such lanes below me; the
//   digit's first lane advances the chunk's position for the digit with one workgroup
//   atomicAdd, whose old value (shared with subgroupShuffle) + my rank is where my key goes.
// So a key costs one load (KEYS of them in flight a lane), the match, at most one atomic and the
// two stores; no second pass, no per-key table lookup. Chunks go to subgroups round-robin by `subgroup_id` (stride
// `num_subgroups`): no assumption that subgroups are contiguous ranges of invocations, nor about
// their number or size (4..128: ballots are vec4<u32>; lanes are counted from ballots, so partial
// subgroups are fine too).
//
// Portability (docs/design.md §9): every subgroup operation is in subgroup-uniform control flow
// as WGSL defines it (Tint checks this): loop bounds come from `subgroup_id`, `num_subgroups`,
// ballots and uniform values; the only divergent statements are ifs that end before the next
// subgroup operation. No value is ever read from "the lowest active lane" (an earlier version
// elected a slot with `if (lane == 0u) { atomicAdd }` then `subgroupBroadcastFirst`, which reads
// a wrong lane where lanes have not reconverged, and bounded loops by an atomic Tint rejects).
//
// The host prepends `const CHUNK` (keys per chunk), `const CHUNKS` (chunks per workgroup: WG /
// the subgroup size it plans for, between the adapter's smallest and largest) and
// `const BROADCAST_LANES` (the subgroup size when the adapter has one fixed size of 4 or 8,
// else 0: see lanes_by_broadcasts).

// #import dispatch.wgsl
// #import sort/ballot.wgsl

// 64 invocations: a whole subgroup or a multiple of it on every adapter in use; few
// invocations keep CHUNKS, and so the workgroup's share of the keys, small for real GPUs.
const WG: u32 = 64u;
// Keys a lane has in flight (docs/design.md §9.17): one key a lane a step left the scatter
// waiting on one load at a time.
const KEYS: u32 = 4u;
// #import sort/pass_params.wgsl
@group(0) @binding(2) var<storage, read> hist: array<u32>;

// Per chunk of this workgroup, per digit: the output position of the digit's next key. Only the
// subgroup that owns the chunk touches its row; atomic so that the per-address order of the
// digit leaders' updates (different lanes from round to round) is a total one whatever the
// device's scheduling.
var<workgroup> next_pos: array<atomic<u32>, CHUNKS * RADIX>;

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

@compute @workgroup_size(WG)
fn scatter(g: Group, @builtin(local_invocation_index) lid: u32,
           @builtin(subgroup_invocation_id) sg_lane: u32,
           @builtin(subgroup_id) sg_id: u32,
           @builtin(num_subgroups) sg_count: u32) {
    let n = arrayLength(&keys_in);
    let chunks = (n + CHUNK - 1u) / CHUNK;
    let first_chunk = flat_group_of(g) * CHUNKS;
    // Overshoot groups of a 2D grid (the whole workgroup leaves together).
    if (first_chunk >= chunks) {
        return;
    }
    // Workgroup memory is initialised here (the host turns wgpu's zero-fill off).
    for (var w = lid; w < CHUNKS * RADIX; w += WG) {
        let chunk = first_chunk + w / RADIX;
        var pos = 0u;
        if (chunk < chunks) {
            pos = hist[(w % RADIX) * chunks + chunk];
        }
        atomicStore(&next_pos[w], pos);
    }
    workgroupBarrier();

    let present = subgroupBallot(true);
    let below = lanes_below(sg_lane);
    let lanes = popcount4(present);
    let lane = popcount4(present & below);
    for (var c = sg_id; c < CHUNKS; c += sg_count) {
        let chunk = first_chunk + c;
        if (chunk >= chunks) {
            break; // the same for the whole subgroup
        }
        let row = c * RADIX;
        let end = min(chunk * CHUNK + CHUNK, n);
        // Consecutive lanes read consecutive keys: coalesced loads. A lane loads its KEYS keys
        // and values of the step before it ranks any, so their loads are in flight together;
        // they are ranked in order of position (k, then lane), so the pass stays stable.
        for (var at = chunk * CHUNK; at < end; at += lanes * KEYS) {
            var key: array<u32, KEYS>;
            var value: array<u32, KEYS>;
            for (var k = 0u; k < KEYS; k++) {
                let i = at + k * lanes + lane;
                if (i < end) {
                    key[k] = keys_in[i];
                    value[k] = values_in[i];
                }
            }
            for (var k = 0u; k < KEYS; k++) {
                let valid = at + k * lanes + lane < end;
                let d = digit_of(key[k]);
                var same: vec4<u32>;
                if (BROADCAST_LANES != 0u) {
                    same = lanes_by_broadcasts(d, valid);
                } else {
                    same = lanes_by_ballots(d, valid);
                }
                let rank = popcount4(same & below);
                var before = 0u;
                if (valid && rank == 0u) {
                    before = atomicAdd(&next_pos[row + d], popcount4(same));
                }
                // The if has ended: the whole subgroup is back for the shuffle.
                let leader = select(sg_lane, first_lane(same), valid);
                let dest = subgroupShuffle(before, leader) + rank;
                if (valid) {
                    keys_out[dest] = key[k];
                    values_out[dest] = value[k];
                }
            }
        }
    }
}
