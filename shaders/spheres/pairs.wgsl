// Pair emission for every method (src/gpu/spheres/pairs.rs): each thread walks one object's candidates,
// counts its sphere tests and touching pairs (totals kept as u64), and with FLAG_STORE appends
// each touching pair (i < j) at an atomic slot. Slots past params.cap are counted, not written:
// the host sees the total and re-runs with a larger list, so no pair is ever lost.
//
// lavapipe (llvmpipe) caps the loop iterations of one invocation at 65,535 in total (all loops
// together) and then silently cuts the rest, reductions included. Every walk therefore visits
// UNROLL candidates per loop iteration (visit_* functions called UNROLL times, the walk state in
// private variables), so one invocation can walk about a million candidates there. Real GPUs
// have no such cap. Every walk checks afterwards that it reached its end; one that did not (any
// device's cap, or a driver stopping a long invocation) is counted in
// counters[SPHERE_CUT_SHORT], and the host turns a non-zero count into an error, never a short
// pair list. (One shared unrolled dispatcher, `switch` over the walk kind, was tried: the
// derived bind-group layouts then include every walk's buffers, so each kernel would need all of
// them bound. The unrolled blocks stay written out per walk.)

// #import frame.wgsl
// #import slots.wgsl
// #import append.wgsl
// #import held_pairs.wgsl
// #import spheres/walk_flush.wgsl
// #import spheres/world_runs.wgsl

@group(0) @binding(3) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> sorted: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> keys: array<u32>;
@group(0) @binding(6) var<storage, read> values: array<u32>;
@group(0) @binding(7) var<storage, read_write> pairs: array<vec2<u32>>;
// grid: the bucket starts, then in a batch of worlds each object's world rank by original
// index from word `params.buckets` (grid_rank), so that grid binds 8 storage buffers, WebGPU's
// guaranteed number.
@group(0) @binding(8) var<storage, read> starts: array<u32>;
// min_axis: (m, axis) per sorted position of the owner walk's axis.
@group(0) @binding(9) var<storage, read> choice: array<vec2<u32>>;
// grid: the occupancy map (frame.wgsl; make_keys sets a bit a cell), a power of two of words.
@group(0) @binding(10) var<storage, read> occupied: array<u32>;
// grid_giants in a batch of worlds (FLAG_WORLDS): each object's world rank, by original
// index (grid reads the same ranks after its bucket starts).
@group(0) @binding(11) var<storage, read> world_rank: array<u32>;

const UNROLL: u32 = 16u;
const SWEEP_AXIS: u32 = 0u;
const SWEEP_SAP: u32 = 1u;
const SWEEP_ORIGIN: u32 = 2u;
const SWEEP_ALL: u32 = 3u;

// Per-invocation walk state, every walk's (reach and limit bound the sweep and the owner walk);
// each walk's own is declared with it.
var<private> tests: u32;
var<private> hits: u32;
var<private> done: bool;
var<private> me: vec4<f32>;
var<private> my_index: u32;
var<private> reach: f32;
var<private> limit: f32;

// A walk that ended without reaching its end.
fn cut_short() {
    atomicAdd(&counters[SPHERE_CUT_SHORT], 1u);
}

// Touching pairs are held (held_pairs.wgsl) and appended with one global atomic per hand or
// group, when FLAG_STORE asks for them.
fn emit(i: u32, j: u32) {
    if (params.flags & FLAG_STORE) != 0u {
        hold_pair(i, j, SPHERE_APPEND, params.cap);
    }
}

// Writes the held pairs at the slots reserved for them. Every thread of the workgroup calls
// it; the branch on the uniform flags keeps the reservation in uniform control flow.
fn flush_pairs(lid: u32) {
    if (params.flags & FLAG_STORE) != 0u {
        flush_held(lid, SPHERE_APPEND, params.cap);
    }
}

// A walk kernel's start: no tests, hits or held pairs yet.
fn begin_walks() {
    block_unsure = 0u;
    tests = 0u;
    hits = 0u;
    held_n = 0u;
}

// A walk kernel's end: the held pairs written, the counts added to the totals. Every thread of
// the workgroup calls it, in uniform control flow.
fn end_walks(lid: u32) {
    flush_pairs(lid);
    add_counts(lid, SPHERE_TESTS, tests, SPHERE_PAIRS, hits);
}

// The walk of the object at sorted position p.
fn walk_sorted(p: u32) {
    me = sorted[p];
    my_index = values[p];
}

// Many worlds: the world rank at sorted position p, its key (world_run_bound,
// spheres/world_runs.wgsl).
fn world_at(p: u32) -> u32 {
    return keys[p];
}

// Candidates whose touch the f32 filter left unsure (docs/design.md §9.6a): bit k for the
// visit at block_base + k of the current block of unrolled visits (visit_bit, set by each
// visit). The walk decides them exactly after the block (settle), so the exact rule is compiled
// once per walk loop: once per unrolled visit, it tripled lavapipe's build of these kernels.
var<private> block_base: u32;
var<private> visit_bit: u32;
var<private> block_unsure: u32;

// One sphere test, counted; whether it touches (a hit, counted). An unsure one is no hit yet:
// its bit is set for the walk's settle step.
fn tested(t: vec4<f32>) -> bool {
    tests++;
    let verdict = touch_verdict(me, t);
    if verdict == TOUCH_UNSURE {
        block_unsure |= 1u << visit_bit;
        return false;
    }
    let hit = verdict == TOUCH_YES;
    if hit {
        hits++;
    }
    return hit;
}

// The exact decision of an unsure candidate t (object j): a hit counted and emitted.
fn settle(t: vec4<f32>, j: u32) {
    if touches_exact(me, t, touches_rounded(me, t)) {
        hits++;
        emit(my_index, j);
    }
}

// The block's unsure candidates at sorted positions block_base + k, decided exactly. A loop
// a device cut short (lavapipe's iteration cap) leaves bits set: counted, never lost silently.
fn settle_sorted() {
    for (var left = 0u; block_unsure != 0u && left < 32u; left++) {
        let at = block_base + firstTrailingBit(block_unsure);
        block_unsure &= block_unsure - 1u;
        settle(sorted[at], values[at]);
    }
    if block_unsure != 0u {
        cut_short();
        block_unsure = 0u;
    }
}

fn test_pair(t: vec4<f32>, j: u32) {
    if tested(t) {
        emit(my_index, j);
    }
}

// ---- brute_force: thread t takes rows t and n-2-t of the pair triangle (n tests per thread).

fn visit_row(j: u32) {
    visit_bit = j - block_base;
    if j < params.n {
        test_pair(spheres[j], j);
    }
}

@compute @workgroup_size(256)
fn brute(inv: Invocation) {
    let t = flat_id(inv);
    let rows = max(params.n, 1u) - 1u;
    begin_walks();
    if t < (rows + 1u) / 2u {
        for (var half = 0u; half < 2u; half++) {
            let i = select(t, rows - 1u - t, half == 1u);
            if half == 1u && i == t {
                break;
            }
            me = spheres[i];
            my_index = i;
            var j = i + 1u;
            for (; j < params.n; j += UNROLL) {
                block_base = j;
                // #unroll 16 visit_row(j + {k}u);
                for (var left = 0u; block_unsure != 0u && left < 32u; left++) {
                    let u = block_base + firstTrailingBit(block_unsure);
                    block_unsure &= block_unsure - 1u;
                    settle(spheres[u], u);
                }
                if block_unsure != 0u {
                    cut_short();
                    block_unsure = 0u;
                }
            }
            if j < params.n {
                cut_short();
            }
        }
    }
    end_walks(inv.lid);
}

// ---- Forward sweeps over the sorted order (sorted keys, gathered spheres):
// SWEEP_AXIS (x/xy/xyz last axis): while lo_q <= hi_p on params.axis, survivors only;
// SWEEP_SAP: same on the axis of largest spread, boxes must overlap on the other two axes;
// SWEEP_ORIGIN: keys are |c|, while D_q - D_p <= 2 r_max + 1e-5 D_q;
// SWEEP_ALL (many worlds only): every later object of the world.
//
// Many worlds (FLAG_WORLDS, docs/design.md §2.13): the keys are world ranks and the order is
// (world, lo, index), the shared objects' rank last, from params.shared_from on. A walk ends at
// its world's end as well; lo is read from the gathered sphere. Every object outside the shared
// run then walks that run whole (SWEEP_ALL): a shared object meets every world.

// The sweep's axis (SWEEP_SAP: the axis of largest spread).
var<private> my_axis: u32;
// Many worlds: the rank of the world being walked, and whether the walk takes every object of
// it (SWEEP_ALL, or the shared run).
var<private> my_world: u32;
var<private> walk_all: bool;

// One branch per visit, as in visit_forward below (docs/design.md §9.12): SwiftShader took 3.1 s
// to build this kernel with early returns.
fn visit_sweep(q: u32) {
    visit_bit = q - block_base;
    let at = min(q, params.n - 1u);
    let kq = keys[at];
    // ORIGIN_KEY_SLACK (src/geom/sphere.rs): the keys' rounding. The keys are the CPU's bits and
    // this bound is rounded as the CPU rounds it (its product unfused), so the walk ends where
    // the CPU's does on every device (docs/design.md §9.13).
    // Many worlds: the keys are world ranks, lo comes from the gathered sphere. (SWEEP_ORIGIN's
    // |c| computed here in each unrolled visit, or one `past` formula shared by both branches,
    // made SwiftShader's build of this kernel 3.7 s and 79 s: docs/design.md §2.13.)
    var past: bool;
    if (params.flags & FLAG_WORLDS) != 0u {
        past = kq != my_world || (!walk_all && lo_of(sorted[at], my_axis) > reach);
    } else {
        let dq = unordered(kq);
        past = select(dq > reach, dq - reach > limit + unfused(1e-5 * dq), params.mode == SWEEP_ORIGIN);
    }
    let live = !done & (q < params.n) & (kq != NONE) & !past;
    done = !live;
    if live {
        let t = sorted[at];
        var other = true;
        if params.mode == SWEEP_SAP && !walk_all {
            let b = (my_axis + 1u) % 3u;
            let c = (my_axis + 2u) % 3u;
            other = lo_of(me, b) <= hi_of(t, b) && lo_of(t, b) <= hi_of(me, b)
                && lo_of(me, c) <= hi_of(t, c) && lo_of(t, c) <= hi_of(me, c);
        }
        if other {
            test_pair(t, values[at]);
        }
    }
}

// Whether a sweep goes on into the shared run after its own world (begin_sweep, next_block).
var<private> then_shared: bool;

// The start of a sweep from sorted position p (sweep, world_origin_sweep), false where p is
// past the end or holds no object (key NONE): its own world, whole when `all`; then, in a batch
// of worlds (`worlds`), the shared run for an object outside it (next_block).
fn begin_sweep(p: u32, all: bool, worlds: bool) -> bool {
    let walks = p < params.n && keys[p] != NONE;
    if walks {
        walk_sorted(p);
        limit = 2.0 * r_max();
        done = false;
        my_world = keys[p];
        walk_all = all;
        then_shared = worlds && p < params.shared_from && params.shared_from < params.n;
    }
    return walks;
}

// A sweep's step after a block of visits from q: the block's unsure candidates decided; the
// next block's first position, the shared run's start where the walk has just ended its own
// world and goes on there (then_shared).
fn next_block(q: u32) -> u32 {
    settle_sorted();
    var next = q + UNROLL;
    if done && then_shared {
        then_shared = false;
        done = false;
        walk_all = true;
        next = params.shared_from;
        my_world = keys[next];
    }
    return next;
}

@compute @workgroup_size(256)
fn sweep(inv: Invocation) {
    let p = flat_id(inv);
    begin_walks();
    // Many worlds: after its own world, an object outside the shared run walks that run.
    if begin_sweep(p, params.mode == SWEEP_ALL, (params.flags & FLAG_WORLDS) != 0u) {
        my_axis = params.axis;
        if params.mode == SWEEP_SAP {
            my_axis = sap_axis();
        }
        reach = select(hi_of(me, my_axis), unordered(keys[p]), params.mode == SWEEP_ORIGIN);
        for (var q = p + 1u; !done; q = next_block(q)) {
            block_base = q;
            // #unroll 16 visit_sweep(q + {k}u);
        }
        if !done {
            cut_short();
        }
    }
    end_walks(inv.lid);
}

// ---- Many worlds under origin_distance (FLAG_WORLDS, docs/design.md §2.13): the order is
// (world, |c|, index), the keys are world ranks and `starts` holds each sorted position's
// ordered |c| (`origin_of_sorted` in sort/keys.wgsl). A walk ends at its world's end or where
// D_q - D_p > 2 r_max + 1e-5 D_q, as the plain sweep's SWEEP_ORIGIN; then an object outside
// the shared run walks that run whole. An entry point of its own, so that `sweep` compiles as
// it did (its world branch computing |c|, or sharing one formula, made SwiftShader's build of
// `sweep` 3.7 s and 79 s).
fn visit_world_origin(q: u32) {
    visit_bit = q - block_base;
    let at = min(q, params.n - 1u);
    let kq = keys[at];
    var past = kq != my_world;
    if !walk_all {
        let dq = unordered(starts[at]);
        past = past || dq - reach > limit + unfused(1e-5 * dq);
    }
    let live = !done & (q < params.n) & (kq != NONE) & !past;
    done = !live;
    if live {
        test_pair(sorted[at], values[at]);
    }
}

@compute @workgroup_size(256)
fn world_origin_sweep(inv: Invocation) {
    let p = flat_id(inv);
    begin_walks();
    // Only in a batch of worlds: its own world's run by distance, then the shared run.
    let every_later = false;
    let in_batch = true;
    if begin_sweep(p, every_later, in_batch) {
        reach = unordered(starts[p]);
        for (var q = p + 1u; !done; q = next_block(q)) {
            block_base = q;
            // #unroll 16 visit_world_origin(q + {k}u);
        }
        if !done {
            cut_short();
        }
    }
    end_walks(inv.lid);
}

// ---- grid (docs/design.md §2.7, §9.9): keys are bucket ids (sorted), starts[b] = 1 + first
// position of bucket b, `occupied` the occupancy map. Each object tests the objects after it in
// its own bucket that share its cell, then visits the 13 cells after its own in (z, y, x) order
// (offsets nb = 14..26 below) whose map bit is set, testing the objects of each: every pair of
// objects in neighbouring cells is tested once, from the earlier cell. A bucket may hold other
// cells too: they are skipped, not tested. A candidate's cell is computed from its sphere
// (cell_of is exact on every device), not read: a cell array read by original index cost a
// random sector a candidate, and one in sorted order 16 bytes a visit. Most neighbours are
// empty (0.019 objects a cell at the density million), and their bits share the map's sectors,
// so the walk reads a bucket's start only for the cells that hold an object (counted in
// counters[SPHERE_GRID_LOOKUPS] for the traffic model).

// The cell being walked, its bucket, the cells' side and the giants' split.
var<private> cell: vec3<i32>;
var<private> bucket: u32;
var<private> walk_side: f32;
var<private> walk_split: u32;
var<private> lookups: u32;
// Keys in Z-order over the whole box: a bucket is one cell, so no candidate's cell is computed.
var<private> one_cell_a_key: bool;
// A key's bits above the bucket's: its world's rank as far as it fits (0 outside a batch of
// worlds); the walking object's full rank is my_world (declared with the sweep's walk), its
// bits that fit my_tag.
var<private> bucket_bits: u32;
var<private> my_tag: u32;
// A batch of worlds: a candidate of the walker's bucket, tag and cell is tested only when its
// own rank (grid_rank, by index) is the walker's, as ranks past the key's bits are cut.
var<private> grid_worlds: bool;

// Object `index`'s world rank in a batch of worlds, from the tail of grid's `starts`.
fn grid_rank(index: u32) -> u32 {
    return starts[params.buckets + index];
}

// One branch per visit and no early return, as in visit_sweep.
fn visit_bucket(q: u32) {
    visit_bit = q - block_base;
    let at = min(q, params.n - 1u);
    let key = keys[at];
    let live = !done & (q < params.n) & ((key & (params.buckets - 1u)) == bucket);
    done = !live;
    if live {
        let t = sorted[at];
        // Giants are tested by grid_giants. The candidate's index is read for a hit only
        // (in a batch of worlds, for its rank too).
        if (key >> bucket_bits) == my_tag && !is_giant(t, walk_split)
            && (one_cell_a_key || all(cell_of(t.xyz, walk_side) == cell)) {
            if !grid_worlds || grid_rank(values[at]) == my_world {
                if tested(t) {
                    emit(my_index, values[at]);
                }
            }
        }
    }
}

// The own cell is offset 13, (0, 0, 0); 14..26 are the forward neighbours.
const GRID_OWN: i32 = 13;
// A bucket holds about one object (buckets >= n), so its walk is short: 4 visits per loop
// iteration, not UNROLL, waste less on checks after the end (still about 260,000 candidates
// per invocation under lavapipe's loop cap; a longer walk there is counted, never cut silently).
const GRID_UNROLL: u32 = 4u;

@compute @workgroup_size(256)
fn grid(inv: Invocation) {
    let p = flat_id(inv);
    begin_walks();
    lookups = 0u;
    if p < params.n {
        walk_sorted(p);
        walk_side = grid_side();
        walk_split = giant_split();
        // Cells are unclamped and |cell| < 2^31 - 2^27: a neighbour never overflows, and a
        // neighbour no object occupies finds no match in its bucket.
        let home = cell_of(me.xyz, walk_side);
        let order = grid_order();
        // Many worlds: buckets hash the cell with the world (world_bucket), never one a cell.
        let worlds = (params.flags & FLAG_WORLDS) != 0u;
        one_cell_a_key = order.mode == GRID_Z_ORDER && !worlds;
        bucket_bits = countTrailingZeros(params.buckets);
        grid_worlds = worlds;
        my_world = select(0u, grid_rank(my_index), worlds);
        my_tag = keys[p] >> bucket_bits;
        let map_order = grid_map_order();
        let map_bits = arrayLength(&occupied) * 32u;
        // The own cell: the objects after p in its bucket. A giant walks no cells
        // (grid_giants tests it), nor does a batch's shared object (it is on the giants' list).
        let listed = is_giant(me, walk_split) || (worlds && my_world == params.shared_from);
        var nb = select(GRID_OWN, 27, listed);
        var q = p + 1u;
        cell = home;
        bucket = keys[p] & (params.buckets - 1u);
        while nb < 27 {
            done = false;
            for (; !done; q += GRID_UNROLL) {
                block_base = q;
                // #unroll 4 visit_bucket(q + {k}u);
                settle_sorted();
            }
            if !done {
                break;
            }
            // The next neighbour whose map bit is set and whose bucket holds an object.
            for (nb++; nb < 27; nb++) {
                cell = home + vec3<i32>(nb % 3 - 1, (nb / 3) % 3 - 1, nb / 9 - 1);
                let bit = tiled_code(map_order, map_bits, cell);
                if bit == NONE || (occupied[bit >> 5u] & (1u << (bit & 31u))) == 0u {
                    continue;
                }
                lookups++;
                bucket = select(grid_key(order, cell), world_bucket(cell, my_world), worlds);
                let start = select(starts[min(bucket, params.buckets - 1u)], 0u, bucket == NONE);
                if start != 0u {
                    q = start - 1u;
                    break;
                }
            }
        }
        if nb < 27 {
            cut_short();
        }
    }
    end_walks(inv.lid);
    add_counts(inv.lid, SPHERE_GRID_LOOKUPS, lookups, SPHERE_GRID_LOOKUPS, 0u);
}

// ---- grid giants (docs/design.md §2.7): one thread per object (original order) against the
// giants on ext's list, GIANT_TILE at a time in workgroup memory: a giant tests the giants with
// a larger index whose reach [cell(c - r) - 1, cell(c + r) + 1] overlaps its own on every axis,
// any other object each giant whose reach holds its cell on every axis. In a batch of worlds (§2.13) the list holds the shared objects
// too, and two objects meet when they are of one world or either is shared.

// Giants a workgroup holds at once (52 bytes each): the list (up to GIANT_SLOTS) goes by tiles.
const GIANT_TILE: u32 = 48u;
var<workgroup> giant_count: u32;
var<workgroup> giant_sphere: array<vec4<f32>, GIANT_TILE>;
var<workgroup> giant_index: array<u32, GIANT_TILE>;
var<workgroup> giant_lo: array<vec3<i32>, GIANT_TILE>;
var<workgroup> giant_hi: array<vec3<i32>, GIANT_TILE>;

@compute @workgroup_size(256)
fn grid_giants(inv: Invocation) {
    if inv.lid == 0u {
        giant_count = min(atomicLoad(&ext[EXT_GIANT_COUNT]), GIANT_SLOTS);
    }
    let g = workgroupUniformLoad(&giant_count);
    if g == 0u {
        return;
    }
    let i = flat_id(inv);
    let side = grid_side();
    begin_walks();
    let live = i < params.n;
    // Many worlds: a giant meets its own world's objects and the shared ones.
    let worlds = (params.flags & FLAG_WORLDS) != 0u;
    let shared_world = params.shared_from;
    var c = vec3<i32>(0);
    var world = 0u;
    var giant = false;
    // A listed object's own reach (the giants it meets overlap it).
    var reach_lo = vec3<i32>(0);
    var reach_hi = vec3<i32>(0);
    if live {
        me = spheres[i];
        my_index = i;
        c = cell_of(me.xyz, side);
        world = select(0u, world_rank[i], worlds);
        giant = is_giant(me, giant_split()) || (worlds && world == shared_world);
        if giant {
            reach_lo = cell_of(me.xyz - vec3<f32>(me.w), side) - vec3<i32>(1);
            reach_hi = cell_of(me.xyz + vec3<f32>(me.w), side) + vec3<i32>(1);
        }
    }
    visit_bit = 0u;
    // g is uniform (workgroupUniformLoad): every invocation takes every tile's barriers.
    for (var base = 0u; base < g; base += GIANT_TILE) {
        workgroupBarrier();
        if inv.lid < GIANT_TILE && base + inv.lid < g {
            let j = atomicLoad(&ext[EXT_GIANTS + base + inv.lid]);
            let s = spheres[j];
            giant_sphere[inv.lid] = s;
            giant_index[inv.lid] = j;
            giant_lo[inv.lid] = cell_of(s.xyz - vec3<f32>(s.w), side) - vec3<i32>(1);
            giant_hi[inv.lid] = cell_of(s.xyz + vec3<f32>(s.w), side) + vec3<i32>(1);
        }
        workgroupBarrier();
        let tile = min(GIANT_TILE, g - base);
        for (var t = 0u; live && t < tile; t++) {
            let j = giant_index[t];
            var same_world = true;
            if worlds {
                let other = world_rank[j];
                same_world = other == world || other == shared_world || world == shared_world;
            }
            if giant {
                let meets = all(reach_lo <= giant_hi[t]) && all(giant_lo[t] <= reach_hi);
                if j > i && same_world && meets {
                    test_pair(giant_sphere[t], j);
                }
            } else if same_world && all(c >= giant_lo[t]) && all(c <= giant_hi[t]) {
                test_pair(giant_sphere[t], j);
            }
            if block_unsure != 0u {
                block_unsure = 0u;
                settle(giant_sphere[t], j);
            }
        }
    }
    end_walks(inv.lid);
}

// ---- min_axis, run once per axis: keys/values/sorted/choice are in the lo order of
// params.axis. The object at position p, if its chosen axis is this one, tests the objects j
// overlapping it there whose priority (m, index) is larger: forward while lo_q <= hi_p,
// backward while lo_q can still reach lo_p (hi - lo <= 2 r_max, with a margin for rounding:
// every candidate is checked exactly, the margin only bounds the walk).

// The walker's priority m and lower bound on the axis; the backward walk starts at end. The
// walks stay in the run [end - back_span, run_end): the whole order, or with many worlds the
// walker's world. lo is read from the gathered sphere (the keys are world ranks with many
// worlds; with one, the same comparison as the key's: `ordered` keeps the order of lo).
var<private> my_m: u32;
var<private> my_lo: f32;
var<private> end: u32;
var<private> run_end: u32;
var<private> back_span: u32;

fn owns(mj: u32, j: u32) -> bool {
    return my_m < mj || (my_m == mj && my_index < j);
}

// Each visit is one branch and no early return: `live` is computed with the non-short-circuit
// `&` (reads clamped into the array, so a visit past the end reads a valid slot and discards it).
// The early-return form (`if done || ... { done = true; return; }`, 32 copies in one kernel) made
// SwiftShader's compiler grow exponentially with the unroll: 12 visits per loop 81 s, 16 out of
// memory (docs/design.md §9.12).
fn visit_forward(q: u32) {
    visit_bit = q - block_base;
    let at = min(q, params.n - 1u);
    let live = !done & (q < run_end) & !(lo_of(sorted[at], params.axis) > reach);
    done = !live;
    if live {
        let j = values[at];
        if owns(choice[at].x, j) {
            test_pair(sorted[at], j);
        }
    }
}

// Position r = end - d (d = 1, 2, ...: walking down from end = p).
fn visit_backward(d: u32) {
    visit_bit = d - block_base;
    let r = end - min(d, end);
    let live = !done & (d <= back_span) & !(lo_of(sorted[r], params.axis) < limit);
    done = !live;
    if live {
        let t = sorted[r];
        let j = values[r];
        if hi_of(t, params.axis) >= my_lo && owns(choice[r].x, j) {
            test_pair(t, j);
        }
    }
}

// Many worlds (FLAG_WORLDS, docs/design.md §2.13): the order is (world, lo, index), the keys
// world ranks, the shared objects last from params.shared_from; both walks end at the owner's
// world's bounds. The shared run is tested whole by every other object in `owner_shared`.
@compute @workgroup_size(256)
fn owner(inv: Invocation) {
    let p = flat_id(inv);
    begin_walks();
    if p < params.n && choice[p].y == params.axis {
        let a = params.axis;
        walk_sorted(p);
        my_m = choice[p].x;
        my_lo = lo_of(me, a);
        run_end = params.n;
        var run_start = 0u;
        if (params.flags & FLAG_WORLDS) != 0u {
            run_start = world_run_bound(keys[p], false);
            run_end = world_run_bound(keys[p], true);
        }
        back_span = p - run_start;
        reach = hi_of(me, a);
        done = false;
        for (var q = p + 1u; !done; q += UNROLL) {
            block_base = q;
            // #unroll 16 visit_forward(q + {k}u);
            settle_sorted();
        }
        let forward_done = done;
        let span = 2.0 * r_max();
        limit = my_lo - (span + 1e-5 * (abs(my_lo) + span)) - 1e-30;
        end = p;
        done = false;
        for (var d = 1u; !done; d += UNROLL) {
            block_base = d;
            // #unroll 16 visit_backward(d + {k}u);
            for (var left = 0u; block_unsure != 0u && left < 32u; left++) {
                let r = end - (block_base + firstTrailingBit(block_unsure));
                block_unsure &= block_unsure - 1u;
                settle(sorted[r], values[r]);
            }
            if block_unsure != 0u {
                cut_short();
                block_unsure = 0u;
            }
        }
        if !(forward_done && done) {
            cut_short();
        }
    }
    end_walks(inv.lid);
}

// Many worlds: a shared object at sorted position q, tested whole.
fn visit_shared(q: u32) {
    visit_bit = q - block_base;
    if q < params.n {
        test_pair(sorted[q], values[q]);
    }
}

// Many worlds under min_axis, once after the owner walks (any axis's order): every object
// before params.shared_from tests the shared run [shared_from, n) whole, so a shared object
// meets every world (its own kernel: inside `owner`, a third unrolled walk made SwiftShader's
// build of it 64 s).
@compute @workgroup_size(256)
fn owner_shared(inv: Invocation) {
    let p = flat_id(inv);
    begin_walks();
    if p < params.shared_from && params.shared_from < params.n {
        walk_sorted(p);
        var q = params.shared_from;
        for (; q < params.n; q += UNROLL) {
            block_base = q;
            // #unroll 16 visit_shared(q + {k}u);
            settle_sorted();
        }
        if q < params.n {
            cut_short();
        }
    }
    end_walks(inv.lid);
}
