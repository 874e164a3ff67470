// Scene extents, per-method sort keys, gathers into sorted order, grid bucket starts
// (src/gpu/sort/keys.rs).

// #import frame.wgsl

@group(0) @binding(3) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> values: array<u32>;
@group(0) @binding(6) var<storage, read> mark: array<u32>;
@group(0) @binding(7) var<storage, read_write> sorted: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> starts: array<u32>;
// Grid: the occupancy map (frame.wgsl), cleared before make_keys sets a bit a cell; its length,
// a power of two of words, is the map's size.
@group(0) @binding(9) var<storage, read_write> occupied: array<atomic<u32>>;
// Many worlds: each object's world rank (docs/design.md §2.13), by original index.
@group(0) @binding(10) var<storage, read> world_rank: array<u32>;

const MODE_ORIGIN: u32 = 0u;
const MODE_LO: u32 = 1u;
const MODE_HI: u32 = 2u;
const MODE_GRID: u32 = 3u;
const MODE_SAP: u32 = 4u;

var<workgroup> wext: array<atomic<u32>, 7>;
var<workgroup> wbins: array<atomic<u32>, 256>;
var<workgroup> wbin_max: array<atomic<u32>, 256>;

// What validate_spheres (src/geom/sphere.rs) accepts, decided on the bits so that no device
// flushes or rounds: finite, magnitude 0 or within [MIN_MAGNITUDE, MAX_COORDINATE] = [1e-30,
// 1e18], radius not negative. Only spheres from a caller's device buffer can fail it (host
// scenes are validated before upload); they are counted in ext[7] and the host reports them.
const MIN_MAGNITUDE_BITS: u32 = 0x0da24260u; // 1e-30
const MAX_COORDINATE_BITS: u32 = 0x5d5e0b6bu; // 1e18

fn magnitude_ok(x: f32) -> bool {
    let a = bitcast<u32>(x) & 0x7fffffffu;
    return a == 0u || (a >= MIN_MAGNITUDE_BITS && a <= MAX_COORDINATE_BITS);
}

fn valid_sphere(s: vec4<f32>) -> bool {
    let negative_radius = (bitcast<u32>(s.w) & 0x80000000u) != 0u
        && (bitcast<u32>(s.w) & 0x7fffffffu) != 0u;
    return magnitude_ok(s.x) && magnitude_ok(s.y) && magnitude_ok(s.z) && magnitude_ok(s.w)
        && !negative_radius;
}

// Min/max centre per axis, max radius and the radius histogram (count and largest radius per
// exponent bin), in two levels (docs/design.md §9.17): each thread reduces its objects (a
// stride of the whole dispatch, which `Keys::extents` bounds to EXTENT_GROUPS workgroups) in
// registers, keeping the histogram's current bin as a run; the workgroup combines its threads
// with one workgroup atomic per thread and value; one thread per value then makes the global
// atomic. Same-word global atomics: 7 per workgroup, at most 7 x EXTENT_GROUPS a frame.
fn flush_run(bin: u32, count: u32, largest: u32) {
    if count != 0u {
        atomicAdd(&wbins[bin], count);
        atomicMax(&wbin_max[bin], largest);
    }
}

@compute @workgroup_size(256)
fn extents(inv: Invocation) {
    if inv.lid < 3u {
        atomicStore(&wext[inv.lid], NONE);
    } else if inv.lid < 7u {
        atomicStore(&wext[inv.lid], 0u);
    }
    atomicStore(&wbins[inv.lid], 0u);
    atomicStore(&wbin_max[inv.lid], 0u);
    workgroupBarrier();
    var lo = vec3<u32>(NONE);
    var hi = vec3<u32>(0u);
    var radius = 0u;
    var invalid = 0u;
    var run_bin = 0u;
    var run_count = 0u;
    var run_max = 0u;
    let stride = inv.nwg.x * inv.nwg.y * WG;
    for (var i = flat_id(inv); i < params.n; i += stride) {
        let s = spheres[i];
        invalid += select(0u, 1u, !valid_sphere(s));
        let o = vec3<u32>(ordered(s.x), ordered(s.y), ordered(s.z));
        lo = min(lo, o);
        hi = max(hi, o);
        radius = max(radius, ordered(s.w));
        let b = radius_bin(s.w);
        if b != run_bin {
            flush_run(run_bin, run_count, run_max);
            run_bin = b;
            run_count = 0u;
            run_max = 0u;
        }
        run_count += 1u;
        run_max = max(run_max, bitcast<u32>(s.w) & 0x7fffffffu);
    }
    flush_run(run_bin, run_count, run_max);
    if invalid != 0u {
        atomicAdd(&ext[7], invalid);
    }
    // Identities (NONE for a min, 0 for a max) from threads with no object change nothing.
    for (var a = 0u; a < 3u; a++) {
        atomicMin(&wext[a], lo[a]);
        atomicMax(&wext[3u + a], hi[a]);
    }
    atomicMax(&wext[6], radius);
    workgroupBarrier();
    if inv.lid < 3u {
        atomicMin(&ext[inv.lid], atomicLoad(&wext[inv.lid]));
    } else if inv.lid < 7u {
        atomicMax(&ext[inv.lid], atomicLoad(&wext[inv.lid]));
    }
    let count = atomicLoad(&wbins[inv.lid]);
    if count != 0u {
        atomicAdd(&ext[EXT_BINS + inv.lid], count);
        atomicMax(&ext[EXT_BIN_MAX + inv.lid], atomicLoad(&wbin_max[inv.lid]));
    }
}

// The order word (frame.wgsl, order_of) of a box of `bits` per axis in codes of `key_bits`:
// Z-order where the box fits, else tiles. The key's bits go one at a time to the axis with the
// most bits left above the tile (x before y before z), so the tiles' count is spread over the
// axes. The sum left is positive at every step: no axis goes past its span's bits.
fn tiled_order(bits: vec3<u32>, key_bits: u32) -> u32 {
    if bits.x + bits.y + bits.z <= key_bits {
        return bits.x | (bits.y << 8u) | (bits.z << 16u) | (GRID_Z_ORDER << 24u);
    }
    var tile = vec3<u32>(0u);
    for (var k = 0u; k < key_bits; k++) {
        let left = bits - tile;
        if left.x >= left.y && left.x >= left.z {
            tile.x++;
        } else if left.y >= left.z {
            tile.y++;
        } else {
            tile.z++;
        }
    }
    return tile.x | (tile.y << 8u) | (tile.z << 16u) | (GRID_TILED << 24u);
}

// The grid's giants and cell radius from the histogram (Histogram::decide in
// src/geom/radii.rs): walking the non-empty bins from the top, the split is the lowest bin
// b whose bins above hold 1..=budget objects, the largest radius more than twice b's
// (2 r is exact).
// One workgroup: every thread loads one bin (one round of global loads, not 512 in a row), then
// one thread walks them in workgroup memory.
var<workgroup> bin_count: array<u32, 256>;
var<workgroup> bin_max: array<u32, 256>;

@compute @workgroup_size(256)
fn grid_frame(inv: Invocation) {
    bin_count[inv.lid] = atomicLoad(&ext[EXT_BINS + inv.lid]);
    bin_max[inv.lid] = atomicLoad(&ext[EXT_BIN_MAX + inv.lid]);
    workgroupBarrier();
    if inv.lid != 0u {
        return;
    }
    var largest = 0u;
    var seen = false;
    var split = 255u;
    var cell_radius = 0u;
    var above = 0u;
    // The budget (giants_budget in src/geom/radii.rs): a sixteenth of the objects, 32 to
    // GIANTS_MAX; more than GIANTS_NEAR_MAX only FAR_GIANT_RATIO times the rest (decide_within).
    var objects = 0u;
    for (var b = 0u; b < 256u; b++) {
        objects += bin_count[b];
    }
    let most = clamp(objects / 16u, 32u, GIANTS_MAX);
    for (var b = 255u; b < 256u; b--) {
        let count = bin_count[b];
        if count == 0u {
            continue;
        }
        let m = bin_max[b];
        if !seen {
            largest = m;
            seen = true;
        }
        let few_or_far = above <= GIANTS_NEAR_MAX
            || bitcast<f32>(largest) > FAR_GIANT_RATIO * bitcast<f32>(m);
        if above > 0u && bitcast<f32>(largest) > 2.0 * bitcast<f32>(m) && few_or_far {
            split = b;
            cell_radius = m;
        }
        above += count;
        if above > most {
            break;
        }
    }
    if split == 255u {
        cell_radius = largest;
    }
    let lo_c = vec3<u32>(atomicLoad(&ext[0]), atomicLoad(&ext[1]), atomicLoad(&ext[2]));
    let hi_c = vec3<u32>(atomicLoad(&ext[3]), atomicLoad(&ext[4]), atomicLoad(&ext[5]));
    // Points (2 r below the normal range): the side from the bounds (points_side in
    // src/cpu/grid/frame.rs), kept as the radius of half of it (exact: the side is normal).
    if 2.0 * bitcast<f32>(cell_radius) < 1.17549435e-38 && all(lo_c <= hi_c) {
        let d = vec3<f32>(unordered(hi_c.x), unordered(hi_c.y), unordered(hi_c.z))
            - vec3<f32>(unordered(lo_c.x), unordered(lo_c.y), unordered(lo_c.z));
        let k = (32u - countLeadingZeros(objects) + 2u) / 3u;
        let side = max(max(d.x, d.y), d.z) * bitcast<f32>((127u - k) << 23u);
        // 2^-100, POINTS_SIDE_MIN; below it grid_side's 1.
        if side >= bitcast<f32>(27u << 23u) {
            cell_radius = bitcast<u32>(side * 0.5);
        }
    }
    atomicStore(&ext[EXT_GIANT_SPLIT], split);
    atomicStore(&ext[EXT_CELL_RADIUS], cell_radius);
    // The grid's order (frame.wgsl, grid_key): Z-order where the scene's cells fit the key,
    // tiles of Z-order with the tile's hash XOR-ed in where they do not.
    var word = 0u;
    var map_word = 0u;
    // Not with invalid spheres (ext[7], the frame an error): a NaN's extents could shrink the
    // box below valid cells, which would then lose their walks.
    if all(lo_c <= hi_c) && atomicLoad(&ext[7]) == 0u {
        let side = grid_side();
        let lo = cell_of(vec3<f32>(unordered(lo_c.x), unordered(lo_c.y), unordered(lo_c.z)), side);
        let hi = cell_of(vec3<f32>(unordered(hi_c.x), unordered(hi_c.y), unordered(hi_c.z)), side);
        // Cells are monotone in the centre, so every object's lies in [lo, hi]; the span
        // hi - lo < 2^32 (|cell| < 2^31) is exact in wrapping u32 arithmetic.
        let span = bitcast<vec3<u32>>(hi) - bitcast<vec3<u32>>(lo);
        let bits = vec3<u32>(32u) - countLeadingZeros(span);
        for (var a = 0u; a < 3u; a++) {
            atomicStore(&ext[EXT_GRID_LO + a], bitcast<u32>(lo[a]));
        }
        word = tiled_order(bits, countTrailingZeros(params.buckets));
        map_word = tiled_order(bits, countTrailingZeros(arrayLength(&occupied)) + 5u);
    }
    atomicStore(&ext[EXT_GRID_MAP], map_word);
    atomicStore(&ext[EXT_GRID_BITS], word);
}

// sap's sweep axis into ext[EXT_SAP_AXIS] (docs/design.md §2.6; `broadphase::sweep_axis` in
// src/broadphase/sweep_axis.rs word for word): below SWEEP_SAMPLE_FROM objects the axis of
// largest range, ties to the lowest; from there, of the SWEEP_SAMPLE centres at positions
// k * (n / SWEEP_SAMPLE), sorted on each axis in workgroup memory (bitonic, every key ordered,
// so the order is the CPU's exactly), the axis with the fewest sample pairs within reach
// (c_j - c_i <= twice the sample's HI_RANK-th radius, its radii sorted the same way: each i's j
// are a prefix, found by a binary search, the CPU's count), then the largest interdecile range
// (ranks LO_RANK and HI_RANK), then the lowest. One workgroup, after the extents.
const SWEEP_SAMPLE_FROM: u32 = 4096u;
const SWEEP_SAMPLE: u32 = 1024u;
const LO_RANK: u32 = 102u;
const HI_RANK: u32 = 921u;
var<workgroup> sample_keys: array<u32, SWEEP_SAMPLE>;
var<workgroup> sample_crowd: array<atomic<u32>, 3>;

@compute @workgroup_size(256)
fn sap_frame(inv: Invocation) {
    var spread = ext_max() - ext_min();
    var crowd = vec3<u32>(0u);
    if params.n >= SWEEP_SAMPLE_FROM {
        let step = params.n / SWEEP_SAMPLE;
        if inv.lid < 3u {
            atomicStore(&sample_crowd[inv.lid], 0u);
        }
        // Round 0 sorts the radii (>= 0: their bits order as they do), rounds 1-3 the axes.
        var reach = 0.0;
        for (var round = 0u; round < 4u; round++) {
            let a = (round + 3u) % 4u;
            for (var k = inv.lid; k < SWEEP_SAMPLE; k += WG) {
                if a == 3u {
                    sample_keys[k] = bitcast<u32>(spheres[k * step].w);
                } else {
                    sample_keys[k] = ordered(spheres[k * step][a]);
                }
            }
            workgroupBarrier();
            for (var size = 2u; size <= SWEEP_SAMPLE; size <<= 1u) {
                for (var half = size >> 1u; half > 0u; half >>= 1u) {
                    for (var t = inv.lid; t < SWEEP_SAMPLE / 2u; t += WG) {
                        let i = ((t & ~(half - 1u)) << 1u) | (t & (half - 1u));
                        let j = i | half;
                        let x = sample_keys[i];
                        let y = sample_keys[j];
                        if (x > y) == ((i & size) == 0u) {
                            sample_keys[i] = y;
                            sample_keys[j] = x;
                        }
                    }
                    workgroupBarrier();
                }
            }
            if a == 3u {
                reach = 2.0 * bitcast<f32>(sample_keys[HI_RANK]);
            } else {
                var within = 0u;
                for (var i = inv.lid; i < SWEEP_SAMPLE; i += WG) {
                    let ci = unordered(sample_keys[i]);
                    var lo = i;
                    var hi = SWEEP_SAMPLE - 1u;
                    while lo < hi {
                        let mid = (lo + hi + 1u) / 2u;
                        if unordered(sample_keys[mid]) - ci <= reach {
                            lo = mid;
                        } else {
                            hi = mid - 1u;
                        }
                    }
                    within += lo - i;
                }
                atomicAdd(&sample_crowd[a], within);
                spread[a] = unordered(sample_keys[HI_RANK]) - unordered(sample_keys[LO_RANK]);
            }
            workgroupBarrier();
        }
        crowd = vec3<u32>(
            atomicLoad(&sample_crowd[0]),
            atomicLoad(&sample_crowd[1]),
            atomicLoad(&sample_crowd[2]),
        );
    }
    if inv.lid == 0u {
        var axis = 0u;
        for (var b = 1u; b < 3u; b++) {
            if crowd[b] < crowd[axis] || (crowd[b] == crowd[axis] && spread[b] > spread[axis]) {
                axis = b;
            }
        }
        atomicStore(&ext[EXT_SAP_AXIS], axis);
    }
}

// key[i] for the method (mode), value[i] = i; the padding up to params.pad sorts last.
// With FLAG_MARK, objects whose mark is 0 (dropped by the cascade) get the maximum key so they
// sort after every survivor and n stays static.
@compute @workgroup_size(256)
fn make_keys(inv: Invocation) {
    let i = flat_id(inv);
    if i >= params.pad {
        return;
    }
    if i >= params.n {
        keys[i] = NONE;
        values[i] = NONE;
        return;
    }
    let s = spheres[i];
    var key = 0u;
    switch params.mode {
        case MODE_ORIGIN: {
            key = ordered(origin_key(s.xyz));
        }
        case MODE_LO: {
            key = ordered(lo_of(s, params.axis));
            if (params.flags & FLAG_MARK) != 0u && mark[i] == 0u {
                key = NONE;
            }
        }
        case MODE_HI: {
            key = ordered(hi_of(s, params.axis));
        }
        case MODE_GRID: {
            let cell = cell_of(s.xyz, grid_side());
            let worlds = (params.flags & FLAG_WORLDS) != 0u;
            // Giants stay out of the grid's walk and its map, and go on the giants' list; so do
            // a batch's shared objects, which grid_giants pairs with every world.
            if is_giant(s, giant_split()) || (worlds && world_rank[i] == params.shared_from) {
                let slot = atomicAdd(&ext[EXT_GIANT_COUNT], 1u);
                if slot < GIANT_SLOTS {
                    atomicStore(&ext[EXT_GIANTS + slot], i);
                }
            } else {
                let bit = tiled_code(grid_map_order(), arrayLength(&occupied) * 32u, cell);
                if bit != NONE {
                    atomicOr(&occupied[bit >> 5u], 1u << (bit & 31u));
                }
            }
            // A valid sphere's cell lies in the Z-order's box (NONE only from spheres the
            // frame reports invalid): kept below the buckets, so no start is written outside.
            key = grid_key(grid_order(), cell);
            key = select(key, 0u, key == NONE);
            if worlds {
                let rank = world_rank[i];
                key = (rank << countTrailingZeros(params.buckets)) | world_bucket(cell, rank);
            }
        }
        default: {
            key = ordered(lo_of(s, sap_axis()));
        }
    }
    keys[i] = key;
    values[i] = i;
}

// Many worlds (docs/design.md §2.13): keys[p] = the world rank of the object at sorted position
// p, for the stable sort that makes the order (world, key, index).
@compute @workgroup_size(256)
fn world_keys(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n {
        let i = values[p];
        let rank = select(NONE, world_rank[i], i < arrayLength(&world_rank));
        if (params.flags & FLAG_MARK) != 0u {
            // A cascade's later axis: the objects it dropped (key NONE) first, as rank 0, the
            // worlds after them from 1 (`unrank_dropped` makes their keys NONE again).
            keys[p] = select(rank + 1u, 0u, keys[p] == NONE);
        } else {
            keys[p] = rank;
        }
    }
}

// After the stable sort by `world_keys`' ranks with FLAG_MARK: the dropped objects, first, get
// their NONE back; the walks and scans skip them.
@compute @workgroup_size(256)
fn unrank_dropped(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n && keys[p] == 0u {
        keys[p] = NONE;
    }
}

// Many worlds under origin_distance (docs/design.md §2.13): starts[p] = the ordered |c| of the
// gathered sphere at sorted position p, the key its world's walk ends by (the keys are ranks).
@compute @workgroup_size(256)
fn origin_of_sorted(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n {
        starts[p] = ordered(origin_key(sorted[p].xyz));
    }
}

// sorted[p] = spheres[values[p]]: the sweeps then read neighbours contiguously.
@compute @workgroup_size(256)
fn gather(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n {
        sorted[p] = spheres[values[p]];
    }
}

// Grid: starts[bucket] = 1 + first sorted position of that bucket (0: empty bucket). A key's
// bucket is its bits below params.buckets (a world's rank may sit above them).
@compute @workgroup_size(256)
fn bucket_starts(inv: Invocation) {
    let p = flat_id(inv);
    if p < params.n {
        let mask = params.buckets - 1u;
        let k = keys[p] & mask;
        if p == 0u || (keys[p - 1u] & mask) != k {
            starts[k] = p + 1u;
        }
    }
}
