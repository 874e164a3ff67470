// A stable LSD radix sort of (u32 key, u32 value) pairs on 8-bit digits, in tiles of
// TILE = WG x ITEMS keys, each workgroup taking a share of consecutive tiles
// (docs/design.md §9.8): the pattern of the fast sorts, portable.
//   clear:       zeroes the digit counts of every pass.
//   count:       reads every key once and counts the digits of every pass (workgroup atomics,
//                then one device atomic per digit and share), and writes pass 0's share counts.
//   plan:        one workgroup: a pass is live unless one digit holds every key (skipping it
//                keeps the order); which buffer each live pass reads (ping-pong), where the
//                result ends, how many passes run.
//   per live pass, three dispatches (reduce-then-scan; no workgroup waits on another), pass 0
//   two (its counts are count's):
//   upsweep:     each share's digit counts -> share_hist[digit * shares + share];
//   scan_shares: one workgroup per digit: the digit's start (the pass's counts, scanned) plus
//                the exclusive scan of its shares' counts -> each (digit, share)'s first output
//                (scan_small: the same in one workgroup, for a few shares);
//   downsweep:   the share's tiles in order; each tile loaded coalesced, its keys held in
//                registers (ITEMS an invocation), ranked by three counting steps of 3, 3 and 2
//                bits over one word a key (its digit above its place in the tile: only that
//                word moves in workgroup memory; a fixed number of barriers per tile); then the
//                keys, and after them the values, placed in digit order in workgroup memory and
//                written out so that each digit's run leaves as consecutive addresses.
//   copy_back:   when an odd number of passes ran, the scratch back into the caller's buffers.
// Workgroup memory: 4 x TILE + 8 KB (one word a key, 8 counters an invocation): 16 KB at 8 keys
// an invocation (WebGPU's guaranteed size), 24 KB at 16; adapters with less use
// sort/radix_sort.wgsl.

// #import dispatch.wgsl

const WG: u32 = 256u;
// ITEMS (keys an invocation holds: 16, or 8 where a workgroup may have only 16 KB) and
// MAX_SHARES (the most workgroups a pass's upsweep and downsweep take) are written before this
// text by the pipeline (gpu/sort/radix_tiles.rs).
const TILE: u32 = WG * ITEMS;
const RADIX: u32 = 256u;
const MAX_PASSES: u32 = 4u;
// digit_hist: RADIX counts per pass, then the plan's words.
const STATE: u32 = RADIX * MAX_PASSES;
// state words: [2p] pass p live, [2p + 1] pass p reads the scratch (B); [8] the result is in
// the scratch; [9] live passes.
const RESULT_IN_B: u32 = 8u;
const LIVE_PASSES: u32 = 9u;

struct Params {
    // This pass's first bit, its digit mask, its index.
    shift: u32,
    mask: u32,
    pass_index: u32,
    // Passes of the sort (key_bits / 8, rounded up) and the key bits.
    passes: u32,
    key_bits: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// A: the caller's pairs; B: the scratch. Bound read-write both: which one a pass reads is
// decided on the device (the plan).
@group(0) @binding(1) var<storage, read_write> keys_a: array<u32>;
@group(0) @binding(2) var<storage, read_write> values_a: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_b: array<u32>;
@group(0) @binding(4) var<storage, read_write> values_b: array<u32>;
@group(0) @binding(5) var<storage, read_write> share_hist: array<u32>;
@group(0) @binding(6) var<storage, read_write> digit_hist: array<atomic<u32>>;

// One word a key of a tile: during the ranking its digit above its place in the tile; then the
// tile's keys, then its values, in digit order.
var<workgroup> s_tile: array<u32, TILE>;
// The ranking takes a digit in three parts of PART_BITS bits (3, 3, 2), PARTS counters per
// invocation (counter q of invocation t at q * WG + t); after the ranking, per digit: [0, RADIX)
// the output base, [RADIX, 2 RADIX) the run's first place in the tile, [2 RADIX, 3 RADIX) its
// end. (Two 4-bit parts took 16 counters an invocation, 16 KB: SwiftShader's compile of the
// kernel passed 1 GB.)
const PART_BITS: u32 = 3u;
const PARTS: u32 = 8u;
const STEPS: u32 = 3u;
// The place's bits of a ranking word (TILE <= 2^16), the digit above them.
const PLACE_MASK: u32 = 0xffffu;
const DIGIT_SHIFT: u32 = 16u;
var<workgroup> s_count: array<u32, 2048>;
var<workgroup> s_atomic: array<atomic<u32>, 1024>;

fn key_count() -> u32 {
    return arrayLength(&keys_a);
}

fn tile_count() -> u32 {
    return (key_count() + TILE - 1u) / TILE;
}

// Tiles a share holds: as few as keep the shares at most MAX_SHARES (the same rule as
// `tiles_per_share` in gpu/sort/radix_tiles.rs, which sizes the dispatches).
fn share_tiles() -> u32 {
    return max(1u, (tile_count() + MAX_SHARES - 1u) / MAX_SHARES);
}

fn share_count() -> u32 {
    let per = share_tiles();
    return (tile_count() + per - 1u) / per;
}

// The keys of `share`: [first, end).
fn share_first(share: u32) -> u32 {
    return share * share_tiles() * TILE;
}

fn share_end(share: u32) -> u32 {
    return min(key_count(), (share + 1u) * share_tiles() * TILE);
}

// Pass p's digit of `key` (the last pass may be narrower than 8 bits).
fn digit_in_pass(key: u32, p: u32) -> u32 {
    let shift = 8u * p;
    let bits = min(8u, params.key_bits - shift);
    return (key >> shift) & ((1u << bits) - 1u);
}

fn digit_of(key: u32) -> u32 {
    return (key >> params.shift) & params.mask;
}

// Whether this pass runs and whether it reads B, uniform over the workgroup.
fn pass_flag(word: u32, lid: u32) -> bool {
    if (lid == 0u) {
        s_count[0] = atomicLoad(&digit_hist[STATE + word]);
    }
    let flag = workgroupUniformLoad(&s_count[0]);
    // Every invocation has read the word before s_count is written again.
    workgroupBarrier();
    return flag != 0u;
}

// The share a workgroup of `upsweep` or `downsweep` takes in this pass and which buffer the
// pass reads; `NO_SHARE` past the last share or in a dead pass. Uniform over the workgroup.
struct PassShare {
    share: u32,
    in_b: bool,
}
const NO_SHARE: u32 = 0xffffffffu;

fn pass_share(g: Group, lid: u32) -> PassShare {
    let share = flat_group_of(g);
    if (share >= share_count() || !pass_flag(2u * params.pass_index, lid)) {
        return PassShare(NO_SHARE, false);
    }
    return PassShare(share, pass_flag(2u * params.pass_index + 1u, lid));
}

fn load_key(in_b: bool, i: u32) -> u32 {
    if (in_b) {
        return keys_b[i];
    }
    return keys_a[i];
}

fn load_value(in_b: bool, i: u32) -> u32 {
    if (in_b) {
        return values_b[i];
    }
    return values_a[i];
}

@compute @workgroup_size(WG)
fn clear(@builtin(local_invocation_index) lid: u32) {
    for (var p = 0u; p < MAX_PASSES; p++) {
        atomicStore(&digit_hist[p * RADIX + lid], 0u);
    }
    if (lid < 16u) {
        atomicStore(&digit_hist[STATE + lid], 0u);
    }
}

@compute @workgroup_size(WG)
fn count(g: Group, @builtin(local_invocation_index) lid: u32) {
    let share = flat_group_of(g);
    if (share >= share_count()) {
        return;
    }
    for (var p = 0u; p < MAX_PASSES; p++) {
        atomicStore(&s_atomic[p * RADIX + lid], 0u);
    }
    workgroupBarrier();
    let end = share_end(share);
    for (var i = share_first(share) + lid; i < end; i += WG) {
        let key = keys_a[i];
        for (var p = 0u; p < params.passes; p++) {
            atomicAdd(&s_atomic[p * RADIX + digit_in_pass(key, p)], 1u);
        }
    }
    workgroupBarrier();
    for (var p = 0u; p < params.passes; p++) {
        let c = atomicLoad(&s_atomic[p * RADIX + lid]);
        if (c > 0u) {
            atomicAdd(&digit_hist[p * RADIX + lid], c);
        }
    }
    // Pass 0 reads the keys in this order, in these shares: its share counts are these, and
    // it runs no upsweep (a read of the keys saved). Unused where pass 0 is dead: the first
    // live pass then counts its own.
    share_hist[lid * share_count() + share] = atomicLoad(&s_atomic[lid]);
}

@compute @workgroup_size(WG)
fn plan(@builtin(local_invocation_index) lid: u32) {
    if (lid < MAX_PASSES) {
        atomicStore(&s_atomic[lid], 0u);
    }
    workgroupBarrier();
    let n = key_count();
    for (var p = 0u; p < params.passes; p++) {
        if (atomicLoad(&digit_hist[p * RADIX + lid]) == n) {
            atomicStore(&s_atomic[p], 1u);
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        var in_b = 0u;
        var live = 0u;
        for (var p = 0u; p < MAX_PASSES; p++) {
            let runs = p < params.passes && atomicLoad(&s_atomic[p]) == 0u;
            atomicStore(&digit_hist[STATE + 2u * p], select(0u, 1u, runs));
            atomicStore(&digit_hist[STATE + 2u * p + 1u], in_b);
            if (runs) {
                in_b ^= 1u;
                live += 1u;
            }
        }
        atomicStore(&digit_hist[STATE + RESULT_IN_B], in_b);
        atomicStore(&digit_hist[STATE + LIVE_PASSES], live);
    }
}

@compute @workgroup_size(WG)
fn upsweep(g: Group, @builtin(local_invocation_index) lid: u32) {
    let at = pass_share(g, lid);
    if (at.share == NO_SHARE) {
        return;
    }
    atomicStore(&s_atomic[lid], 0u);
    workgroupBarrier();
    let end = share_end(at.share);
    for (var i = share_first(at.share) + lid; i < end; i += WG) {
        atomicAdd(&s_atomic[digit_of(load_key(at.in_b, i))], 1u);
    }
    workgroupBarrier();
    share_hist[lid * share_count() + at.share] = atomicLoad(&s_atomic[lid]);
}

// Inclusive scan of `v` over the workgroup, in s_tile[0, WG + 16): sixteen invocations sum
// sixteen values each, one scans those sums, each invocation adds the values before it in its
// sixteen. Four barriers whatever the values (few barriers: some drivers compile each one as
// a suspension point).
fn workgroup_scan(v: u32, lid: u32) -> u32 {
    s_tile[lid] = v;
    workgroupBarrier();
    if (lid < 16u) {
        var sum = 0u;
        for (var m = 0u; m < 16u; m++) {
            sum += s_tile[lid * 16u + m];
        }
        s_tile[WG + lid] = sum;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var running = 0u;
        for (var q = 0u; q < 16u; q++) {
            let c = s_tile[WG + q];
            s_tile[WG + q] = running;
            running += c;
        }
    }
    workgroupBarrier();
    let group = lid / 16u;
    var inclusive = s_tile[WG + group];
    for (var m = group * 16u; m <= lid; m++) {
        inclusive += s_tile[m];
    }
    // Every invocation has read before s_tile is written again.
    workgroupBarrier();
    return inclusive;
}

@compute @workgroup_size(WG)
fn scan_shares(g: Group, @builtin(local_invocation_index) lid: u32) {
    let digit = flat_group_of(g);
    if (digit >= RADIX) {
        return;
    }
    if (!pass_flag(2u * params.pass_index, lid)) {
        return;
    }
    // Where this digit's keys start: the pass's counts of the smaller digits.
    let c = atomicLoad(&digit_hist[params.pass_index * RADIX + lid]);
    let inclusive = workgroup_scan(c, lid);
    if (lid == digit) {
        s_count[0] = inclusive - c;
    }
    var carry = workgroupUniformLoad(&s_count[0]);
    workgroupBarrier();
    let shares = share_count();
    for (var first = 0u; first < shares; first += WG) {
        let t = first + lid;
        var v = 0u;
        if (t < shares) {
            v = share_hist[digit * shares + t];
        }
        let incl = workgroup_scan(v, lid);
        if (t < shares) {
            share_hist[digit * shares + t] = carry + incl - v;
        }
        if (lid == WG - 1u) {
            s_count[0] = incl;
        }
        carry += workgroupUniformLoad(&s_count[0]);
        workgroupBarrier();
    }
}

// scan_shares for a few shares (at most SMALL_SCAN_SHARES), in one workgroup: invocation d
// walks digit d's shares in order.
@compute @workgroup_size(WG)
fn scan_small(@builtin(local_invocation_index) lid: u32) {
    if (!pass_flag(2u * params.pass_index, lid)) {
        return;
    }
    let c = atomicLoad(&digit_hist[params.pass_index * RADIX + lid]);
    var running = workgroup_scan(c, lid) - c;
    let shares = share_count();
    for (var t = 0u; t < shares; t++) {
        let v = share_hist[lid * shares + t];
        share_hist[lid * shares + t] = running;
        running += v;
    }
}

// ITEMS words of s_tile, at places first + k * stride (the caller's invocation's: `first` from
// its lid), between barriers:
// every invocation has written s_tile before and has read it before it is written again.
fn read_tile(first: u32, stride: u32) -> array<u32, ITEMS> {
    workgroupBarrier();
    var words: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        words[k] = s_tile[first + k * stride];
    }
    workgroupBarrier();
    return words;
}

// The tile's ranking words (digit above place) ordered stably by one part of their digit
// (`step`: bits 0-2, 3-5, 6-7), from the invocation's ITEMS words in `words` (places
// lid * ITEMS + j; the places past the tile's end have digit 255, the largest part at every
// step, so they stay last): into s_tile, and back into `words` at the invocation's places.
fn rank_step(words: ptr<function, array<u32, ITEMS>>, step: u32, lid: u32) {
    for (var q = 0u; q < PARTS; q++) {
        s_count[q * WG + lid] = 0u;
    }
    var rank: array<u32, ITEMS>;
    var part: array<u32, ITEMS>;
    for (var j = 0u; j < ITEMS; j++) {
        let q = ((*words)[j] >> (DIGIT_SHIFT + PART_BITS * step)) & (PARTS - 1u);
        part[j] = q;
        rank[j] = s_count[q * WG + lid];
        s_count[q * WG + lid] = rank[j] + 1u;
    }
    workgroupBarrier();
    // Invocation s sums the counters at places s * PARTS .. s * PARTS + PARTS - 1 of the order
    // (part major, invocation minor), then the workgroup's scan gives each counter its first
    // place.
    let first = lid * PARTS;
    let q0 = first / WG;
    let t0 = first % WG;
    var sum = 0u;
    for (var m = 0u; m < PARTS; m++) {
        sum += s_count[q0 * WG + t0 + m];
    }
    var running = workgroup_scan(sum, lid) - sum;
    for (var m = 0u; m < PARTS; m++) {
        let c = s_count[q0 * WG + t0 + m];
        s_count[q0 * WG + t0 + m] = running;
        running += c;
    }
    workgroupBarrier();
    for (var j = 0u; j < ITEMS; j++) {
        s_tile[s_count[part[j] * WG + lid] + rank[j]] = (*words)[j];
    }
    *words = read_tile(lid * ITEMS, 1u);
}

// One tile of a share: ranked by digit, its keys and then its values written in runs, digit d's
// run at `base` (invocation d's; the counts of the share's earlier tiles already added).
// Returns invocation `lid`'s base moved past this tile's keys of digit `lid`.
fn sort_tile(tile: u32, base: u32, in_b: bool, lid: u32) -> u32 {
    let start = tile * TILE;
    let in_tile = min(TILE, key_count() - start);
    // Coalesced loads: invocation lid holds the tile's places k * WG + lid.
    var keys: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + lid;
        var d = 255u;
        if (i < in_tile) {
            keys[k] = load_key(in_b, start + i);
            d = digit_of(keys[k]);
        }
        s_tile[i] = (d << DIGIT_SHIFT) | i;
    }
    // Ranked in the blocked order: each invocation ITEMS consecutive places.
    var words = read_tile(lid * ITEMS, 1u);
    // After each step the tile's valid keys still fill its first places: the invalid ones,
    // digit 255, came last. (A loop, not three calls: one copy of the ranking to compile.)
    for (var step = 0u; step < STEPS; step++) {
        rank_step(&words, step, lid);
    }
    // words[j] is the word of place lid * ITEMS + j in digit order: each old place learns its
    // new one (s_tile[old] = new), and each digit's run starts empty.
    for (var j = 0u; j < ITEMS; j++) {
        s_tile[words[j] & PLACE_MASK] = lid * ITEMS + j;
    }
    s_count[lid] = base;
    s_count[RADIX + lid] = 0u;
    s_count[2u * RADIX + lid] = 0u;
    var to = read_tile(lid, WG);
    for (var k = 0u; k < ITEMS; k++) {
        if (k * WG + lid < in_tile) {
            s_tile[to[k]] = keys[k];
        }
    }
    workgroupBarrier();
    // Each digit's run: its first place in the tile and its end.
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + lid;
        if (i < in_tile) {
            let d = digit_of(s_tile[i]);
            if (i == 0u || d != digit_of(s_tile[i - 1u])) {
                s_count[RADIX + d] = i;
            }
            if (i + 1u == in_tile || d != digit_of(s_tile[i + 1u])) {
                s_count[2u * RADIX + d] = i + 1u;
            }
        }
    }
    workgroupBarrier();
    // Place i of the tile goes to `dest[k]`, i = k * WG + lid: consecutive places of a run to
    // consecutive addresses.
    var dest: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + lid;
        if (i < in_tile) {
            let key = s_tile[i];
            let d = digit_of(key);
            dest[k] = s_count[d] + i - s_count[RADIX + d];
            if (in_b) {
                keys_a[dest[k]] = key;
            } else {
                keys_b[dest[k]] = key;
            }
        }
    }
    let next = base + s_count[2u * RADIX + lid] - s_count[RADIX + lid];
    workgroupBarrier();
    // The values, loaded coalesced as the keys were, the same way.
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + lid;
        if (i < in_tile) {
            s_tile[to[k]] = load_value(in_b, start + i);
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * WG + lid;
        if (i < in_tile) {
            if (in_b) {
                values_a[dest[k]] = s_tile[i];
            } else {
                values_b[dest[k]] = s_tile[i];
            }
        }
    }
    // Every invocation has read s_tile and s_count before the next tile writes them.
    workgroupBarrier();
    return next;
}

@compute @workgroup_size(WG)
fn downsweep(g: Group, @builtin(local_invocation_index) lid: u32) {
    let at = pass_share(g, lid);
    if (at.share == NO_SHARE) {
        return;
    }
    // Where this share's keys of digit `lid` go, tile after tile.
    var base = share_hist[lid * share_count() + at.share];
    let per = share_tiles();
    let end = min(tile_count(), (at.share + 1u) * per);
    for (var tile = at.share * per; tile < end; tile++) {
        base = sort_tile(tile, base, at.in_b, lid);
    }
}

@compute @workgroup_size(WG)
fn copy_back(g: Group, @builtin(local_invocation_index) lid: u32) {
    if (!pass_flag(RESULT_IN_B, lid)) {
        return;
    }
    let i = flat_group_of(g) * WG + lid;
    if (i < key_count()) {
        keys_a[i] = keys_b[i];
        values_a[i] = values_b[i];
    }
}
