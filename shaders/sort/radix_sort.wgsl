// One pass of a stable LSD radix sort of (u32 key, u32 value) on an 8-bit digit, reduce-then-scan:
//   histogram: per block digit counts -> hist[digit * blocks + block]  (digit-major, so that an
//              exclusive scan of hist gives every (digit, block) its first output position)
//   (host: ExclusiveScan over hist)
//   scatter:   each block re-reads its keys and writes them to hist[digit, block] + local rank.
// No workgroup waits on another; no subgroup operations. Sizes come from arrayLength (the host
// binds keys_in with exactly n elements), so passes need no per-call uniform writes.

// #import dispatch.wgsl

// 256 invocations: the WebGPU default workgroup limit, and one invocation per digit when
// clearing/loading the 256-entry tables.
const WG: u32 = 256u;
// Words of one digit's "which invocations hold me" bitmask (WG bits).
const MASK_WORDS: u32 = WG / 32u;
// Rounds of WG keys per block (host-set; 16 -> 4,096 keys per block keeps the histogram, and
// so the scan between passes, at 1/16 of the keys).
override ROUNDS: u32 = 16u;

// #import sort/pass_params.wgsl
@group(0) @binding(2) var<storage, read_write> hist: array<u32>;

var<workgroup> counts: array<atomic<u32>, RADIX>;
// Per digit, one bit per invocation of the current round that holds that digit.
var<workgroup> holders: array<atomic<u32>, RADIX * MASK_WORDS>;
// Per digit, the output position of its next key in this block (atomic only for atomicMax,
// which advances it without first finding the digit's last holder).
var<workgroup> next_pos: array<atomic<u32>, RADIX>;

fn block_count(n: u32) -> u32 {
    return (n + WG * ROUNDS - 1u) / (WG * ROUNDS);
}

// The keys, their blocks, the block of workgroup g (at least `blocks` for the overshoot groups
// of a 2D grid: the whole workgroup leaves together) and its first key.
struct Block {
    n: u32,
    blocks: u32,
    index: u32,
    start: u32,
}

fn block_of(g: Group) -> Block {
    let n = arrayLength(&keys_in);
    let index = flat_group_of(g);
    return Block(n, block_count(n), index, index * WG * ROUNDS);
}

@compute @workgroup_size(WG)
fn histogram(g: Group, @builtin(local_invocation_index) lid: u32) {
    let b = block_of(g);
    if (b.index >= b.blocks) {
        return;
    }
    atomicStore(&counts[lid], 0u);
    workgroupBarrier();
    for (var r = 0u; r < ROUNDS; r++) {
        let i = b.start + r * WG + lid;
        if (i < b.n) {
            atomicAdd(&counts[digit_of(keys_in[i])], 1u);
        }
    }
    workgroupBarrier();
    hist[lid * b.blocks + b.index] = atomicLoad(&counts[lid]);
}

@compute @workgroup_size(WG)
fn scatter(g: Group, @builtin(local_invocation_index) lid: u32) {
    let b = block_of(g);
    if (b.index >= b.blocks) {
        return;
    }
    atomicStore(&next_pos[lid], hist[lid * b.blocks + b.index]);
    // Cleared once per block; afterwards each round clears only the words it set.
    for (var w = 0u; w < MASK_WORDS; w++) {
        atomicStore(&holders[lid * MASK_WORDS + w], 0u);
    }
    workgroupBarrier();
    let word = lid / 32u;
    let bit = 1u << (lid % 32u);
    for (var r = 0u; r < ROUNDS; r++) {
        let round_start = b.start + r * WG;
        if (round_start >= b.n) {
            break; // uniform: the same for the whole workgroup
        }
        let i = round_start + lid;
        let valid = i < b.n;
        var key = 0u;
        var d = 0u;
        if (valid) {
            key = keys_in[i];
            d = digit_of(key);
            atomicOr(&holders[d * MASK_WORDS + word], bit);
        }
        workgroupBarrier();
        // Stable rank: the number of earlier invocations of this round with the same digit.
        var dest = 0u;
        if (valid) {
            var rank = 0u;
            let row = d * MASK_WORDS;
            for (var w = 0u; w < word; w++) {
                rank += countOneBits(atomicLoad(&holders[row + w]));
            }
            let mine = atomicLoad(&holders[row + word]);
            rank += countOneBits(mine & (bit - 1u));
            dest = atomicLoad(&next_pos[d]) + rank;
            keys_out[dest] = key;
            values_out[dest] = values_in[i];
        }
        workgroupBarrier();
        if (valid) {
            // Every holder of a word stores the same zero: no conflicting values.
            atomicStore(&holders[d * MASK_WORDS + word], 0u);
            // The digit's next free position: one past its last key of this round.
            atomicMax(&next_pos[d], dest + 1u);
        }
        // Clears and next_pos updates land before the next round sets and reads them.
        workgroupBarrier();
    }
}

// After an odd number of passes the sorted pairs are in the scratch buffers: copied back to the
// caller's (keys_in, values_in: the scratch; keys_out, values_out: the caller's), inside the
// sort's compute pass, where a buffer copy would have to end it.
@compute @workgroup_size(WG)
fn copy_back(g: Group, @builtin(local_invocation_index) lid: u32) {
    let i = flat_group_of(g) * WG + lid;
    if i < arrayLength(&keys_in) {
        keys_out[i] = keys_in[i];
        values_out[i] = values_in[i];
    }
}
