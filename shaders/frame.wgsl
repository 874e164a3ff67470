// Prelude imported by every broad-phase shader: the per-dispatch parameters, the
// shared counters and scene extents, and the arithmetic the CPU reference must match exactly.
// Bindings 0..2 are reserved here; each stage's own bindings start at 3.

// #import dispatch.wgsl
// #import math.wgsl
// #import ordered_float.wgsl
// #import hash.wgsl
// #import spheres/touch_exact.wgsl

// #import frame_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
// [0,1] tests (lo, hi words), [2,3] touching pairs, [4] append slot, [5] walks cut short
// (pairs.wgsl),
// [6,7] min_axis diagnostic: tests of the paper's literal rule.
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;
// Ordered-u32 encodings: [0..3] min centre per axis, [3..6] max centre, [6] max radius; [7]
// invalid spheres (keys.wgsl). The grid's giants (docs/design.md §2.7): the radius histogram
// by exponent bin, counts at EXT_BINS and largest radii (bits) at EXT_BIN_MAX (extents); the
// split bin and the cell radius (grid_frame); the giants' count and indices (make_keys).
@group(0) @binding(2) var<storage, read_write> ext: array<atomic<u32>>;

const EXT_GIANT_SPLIT: u32 = 8u;
const EXT_CELL_RADIUS: u32 = 9u;
const EXT_GIANT_COUNT: u32 = 10u;
// The grid's order (grid_frame): the lowest cell (3 words), then the Z-order's bits per axis
// (bytes 0..2) and whether it is used (bit 24); 0: cells are hashed.
const EXT_GRID_LO: u32 = 11u;
const EXT_GRID_BITS: u32 = EXT_GRID_LO + 3u;
// The occupancy map's order (grid_frame): its tiles' bits per axis and mode, as EXT_GRID_BITS.
const EXT_GRID_MAP: u32 = EXT_GRID_BITS + 1u;
// The radius histogram: 256 exponent bins (radius_bin) of counts, then of largest radii.
const EXT_BINS: u32 = 64u;
const EXT_BIN_MAX: u32 = EXT_BINS + 256u;
// sap's sweep axis (sap_frame in sort/keys.wgsl).
const EXT_SAP_AXIS: u32 = EXT_BIN_MAX + 256u;
// The giants' list: GIANT_SLOTS words from EXT_GIANTS (words 16..64 are unused since it grew);
// a number, not EXT_SAP_AXIS + 1u, as the Rust side reads it from this file (wgsl_constant).
const EXT_GIANTS: u32 = 577u;
// Most giants (GIANTS_MAX in src/geom/radii.rs); more than GIANTS_NEAR_MAX only past
// FAR_GIANT_RATIO times the others' radius.
const GIANTS_MAX: u32 = 4096u;
const GIANTS_NEAR_MAX: u32 = 1024u;
const FAR_GIANT_RATIO: f32 = 8.0;
// Slots of the giants' list: the giants and, in a batch of worlds, the grid's shared objects
// (at most GIANT_SLOTS - GIANTS_MAX, docs/design.md §2.13). EXTENTS_WORDS in
// src/gpu/sort/keys.rs is EXT_GIANTS + GIANT_SLOTS.
const GIANT_SLOTS: u32 = 4112u;

// 256 threads: a multiple of every subgroup size in use (8..128) and the size the workgroup
// reductions below are written for.
const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
const FLAG_MARK: u32 = 1u;
const FLAG_STORE: u32 = 2u;
// Many worlds (docs/design.md §2.13): the sweep's keys are world ranks, the order (world, lo,
// index), and the sweep's coordinate comes from the gathered sphere.
const FLAG_WORLDS: u32 = 4u;


fn lo_of(s: vec4<f32>, a: u32) -> f32 {
    return s[a] - s.w;
}

fn hi_of(s: vec4<f32>, a: u32) -> f32 {
    return s[a] + s.w;
}

// 2^-e for the exponent e of a normal m: an exact scale taking m to [1, 2).
fn inverse_power_of_two(m: f32) -> f32 {
    let e = i32((bitcast<u32>(m) >> 23u) & 0xffu) - 127;
    return bitcast<f32>(u32(127 - e) << 23u);
}

// 2^e for the same e (the scale back; WGSL division is not exact, this product is).
fn power_of_two(m: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(m) & 0x7f800000u);
}

// The f32 filter's error bound relative to dd + ss: TOUCH_FILTER in src/geom/sphere.rs (2^-19).
const TOUCH_FILTER: f32 = 1.9073486e-6;

// Verdicts of the f32 filter (touch_verdict).
const TOUCH_APART: u32 = 0u;
const TOUCH_YES: u32 = 1u;
const TOUCH_UNSURE: u32 = 2u;

// Sphere::touches, first step (docs/design.md §9.6a): the squared centre distance against the
// squared radius sum decides every pair whose margin exceeds the filter's error bound (below
// 2^-100 both squares are redone on d and s scaled by a power of two, §9.6); TOUCH_UNSURE
// leaves the others to touches_exact, called by the walks once per block of visits, not once
// per unrolled visit (pairs.wgsl). The squared distance is m_dot3 (math.wgsl), which a driver
// may fuse: the bound covers it (§9.3, §9.11).
fn touch_verdict(a: vec4<f32>, b: vec4<f32>) -> u32 {
    let d = a.xyz - b.xyz;
    let s = a.w + b.w;
    var dd = m_dot3(d, d);
    var ss = s * s;
    if !(max(dd, ss) >= 7.888609e-31) {
        let m = max(max(abs(d.x), abs(d.y)), max(abs(d.z), s));
        if m == 0.0 {
            return TOUCH_YES;
        }
        let k = inverse_power_of_two(m);
        let dk = d * k;
        let sk = s * k;
        dd = m_dot3(dk, dk);
        ss = sk * sk;
    }
    let margin = dd - ss;
    if !(abs(margin) <= TOUCH_FILTER * (dd + ss)) {
        return select(TOUCH_APART, TOUCH_YES, margin < 0.0);
    }
    return TOUCH_UNSURE;
}

// The plain f32 verdict, for inputs outside validation's range (touches_exact).
fn touches_rounded(a: vec4<f32>, b: vec4<f32>) -> bool {
    let d = a.xyz - b.xyz;
    let s = a.w + b.w;
    return (d.x * d.x + d.y * d.y) + d.z * d.z <= s * s;
}

// ---- Origin keys, bit for bit the CPU's on every device (docs/design.md §9.13).

// p itself, through an integer OR with a value the compiler cannot know (always 0): no driver
// can fuse the product that made p into the add that uses it, nor reassociate across it. Vulkan
// rounds f32 add, subtract and multiply correctly; only contraction and sqrt's precision make a
// device differ from the CPU.
fn unfused(p: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(p) | params.zero_bits);
}

// glam's Vec3::dot(c, c) as the CPU rounds it: ((x x + y y) + z z), each step rounded.
fn norm2_as_cpu(c: vec3<f32>) -> f32 {
    return unfused(unfused(c.x * c.x) + unfused(c.y * c.y)) + unfused(c.z * c.z);
}

// Whether the midpoint between a and the next f32 above it, squared, is below s (a and s
// positive normal floats). Exact: a = A 2^(ea - 150), the midpoint (2A + 1) 2^(ea - 151), its
// square M^2 2^(2 ea - 302) with M^2 < 2^50 in two u32 words, against S 2^(es - 150) shifted.
fn mid_square_below(a: f32, s: f32) -> bool {
    let ba = bitcast<u32>(a);
    let bs = bitcast<u32>(s);
    let m = 2u * ((ba & 0x7fffffu) | 0x800000u) + 1u;
    let ms = (bs & 0x7fffffu) | 0x800000u;
    let d = i32((bs >> 23u) & 0xffu) + 152 - 2 * i32((ba >> 23u) & 0xffu);
    if d < 0 {
        return false; // S 2^d < 2^24 <= M^2
    }
    if d > 40 {
        return true; // S 2^d >= 2^63 > M^2
    }
    let mh = m >> 16u;
    let ml = m & 0xffffu;
    let cross = 2u * mh * ml;
    let ll = ml * ml;
    let lo = ll + (cross << 16u);
    let hi = mh * mh + (cross >> 16u) + select(0u, 1u, lo < ll);
    var s_hi = 0u;
    var s_lo = ms;
    if d >= 32 {
        s_hi = ms << u32(d - 32);
        s_lo = 0u;
    } else if d > 0 {
        s_hi = ms >> u32(32 - d);
        s_lo = ms << u32(d);
    }
    return hi < s_hi || (hi == s_hi && lo < s_lo);
}

// The correctly rounded square root of s (0 or a positive normal f32), as the CPU's sqrt: the
// device's estimate (a few ULP off, m_sqrt) moved one ULP at a time until the exact midpoint
// test says it is the nearest float (no ties: a midpoint's square has too many bits to be s).
fn rounded_sqrt(s: f32) -> f32 {
    if s == 0.0 {
        return 0.0;
    }
    var r = m_sqrt(s);
    for (var step = 0u; step < 16u; step++) {
        if mid_square_below(r, s) {
            r = bitcast<f32>(bitcast<u32>(r) + 1u);
        } else if !mid_square_below(bitcast<f32>(bitcast<u32>(r) - 1u), s) {
            r = bitcast<f32>(bitcast<u32>(r) - 1u);
        } else {
            break;
        }
    }
    return r;
}

// geom::sphere::origin_key: |c|, rescaled within 2^-50 of the origin; the CPU's bits exactly.
fn origin_key(c: vec3<f32>) -> f32 {
    let m = max(max(abs(c.x), abs(c.y)), abs(c.z));
    if m >= 8.881784e-16 || m == 0.0 {
        return rounded_sqrt(norm2_as_cpu(c));
    }
    return rounded_sqrt(norm2_as_cpu(c * inverse_power_of_two(m))) * power_of_two(m);
}

fn r_max() -> f32 {
    return unordered(atomicLoad(&ext[6]));
}

fn ext_min() -> vec3<f32> {
    return vec3<f32>(unordered(atomicLoad(&ext[0])), unordered(atomicLoad(&ext[1])),
        unordered(atomicLoad(&ext[2])));
}

fn ext_max() -> vec3<f32> {
    return vec3<f32>(unordered(atomicLoad(&ext[3])), unordered(atomicLoad(&ext[4])),
        unordered(atomicLoad(&ext[5])));
}

// sap: its sweep axis, chosen by `sap_frame` (sort/keys.wgsl) after the extents.
fn sap_axis() -> u32 {
    return atomicLoad(&ext[EXT_SAP_AXIS]);
}

// The exponent bin of a radius (giants: bins above the split).
fn radius_bin(r: f32) -> u32 {
    return (bitcast<u32>(r) & 0x7fffffffu) >> 23u;
}

// grid: whether a sphere is one of the giants (docs/design.md §2.7), which the cells' walk
// leaves to grid_giants (the split bin from grid_frame).
fn is_giant(s: vec4<f32>, split: u32) -> bool {
    return radius_bin(s.w) > split;
}

fn giant_split() -> u32 {
    return atomicLoad(&ext[EXT_GIANT_SPLIT]);
}

// grid: cell side 2 r (1 when 2 r is 0 or below the normal f32 range), r the largest radius
// of the objects that are not giants, or for points half the side from the bounds
// (grid_frame in keys.wgsl).
fn grid_side() -> f32 {
    let s = 2.0 * bitcast<f32>(atomicLoad(&ext[EXT_CELL_RADIUS]));
    return select(s, 1.0, s < 1.17549435e-38);
}

// ---- Grid cells (docs/design.md §9.2, `cell_axis` in src/cpu/grid/mod.rs): per axis, for a
// normal side s, the floor of the real quotient c / s while |c| < 2^24 s, and beyond that
// sign(c) (2^24 + the number of f32 values from 2^24 s up to |c|), where consecutive values
// are more than s apart. Monotone and unclamped: centres at most s apart get cells at most one
// apart, and |cell| <= 2^31 - 3 * 2^26 for any finite c. WGSL's f32 division may be off by
// 2.5 ULP (reciprocal times multiply on NVIDIA and AMD), which moves centres lying within
// rounding of a cell wall; so the estimate from the division is corrected with integer
// comparisons of k * s against |c| on the two 24-bit significands.

const GRID_EXACT_CELLS: u32 = 16777216u;

// 24-bit significand (implicit bit included) and biased exponent of a normal f32.
fn significand(x: f32) -> u32 {
    return (bitcast<u32>(x) & 0x7fffffu) | 0x800000u;
}

fn exponent(x: f32) -> i32 {
    return i32((bitcast<u32>(x) >> 23u) & 0xffu);
}

// a * b as (lo, hi) 32-bit words.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let lo = (p00 & 0xffffu) | (mid << 16u);
    let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(lo, hi);
}

// m's significand at s's scale, as (lo, hi) words, for normal s <= m < s * 2^24 (the exponent
// difference is 0..24, so it takes at most 48 bits). k * s compares with m as
// mul_wide(k, significand(s)) with this.
fn scaled_significand(m: f32, s: f32) -> vec2<u32> {
    let sh = u32(exponent(m) - exponent(s));
    let md = significand(m);
    return vec2<u32>(md << sh, select(md >> (32u - sh), 0u, sh == 0u));
}

fn le_wide(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x <= b.x);
}

fn cell_axis(c: f32, s: f32) -> i32 {
    let m = abs(c);
    var magnitude = 0u;
    var exact = m == 0.0;
    if m >= s {
        let far = bitcast<u32>(s) + (24u << 23u);
        if bitcast<u32>(m) >= far {
            magnitude = GRID_EXACT_CELLS + (bitcast<u32>(m) - far);
            exact = true;
        } else {
            // Within 6 of the real floor for any division the WGSL accuracy rules allow
            // (2.5 ULP of a quotient below 2^24, plus the truncation); within 2 below 2^20.
            let ms = scaled_significand(m, s);
            let ss = significand(s);
            var k = min(u32(m_div(m, s)), GRID_EXACT_CELLS - 1u);
            for (var t = 0; t < 6 && !le_wide(mul_wide(k, ss), ms); t++) {
                k -= 1u;
            }
            for (var t = 0; t < 6 && le_wide(mul_wide(k + 1u, ss), ms); t++) {
                k += 1u;
            }
            magnitude = k;
            exact = all(mul_wide(k, ss) == ms);
        }
    }
    if (bitcast<u32>(c) & 0x80000000u) != 0u {
        return -i32(magnitude) - select(1, 0, exact);
    }
    return i32(magnitude);
}

fn cell_of(c: vec3<f32>, side: f32) -> vec3<i32> {
    return vec3<i32>(cell_axis(c.x, side), cell_axis(c.y, side), cell_axis(c.z, side));
}

fn cell_hash(k: vec3<i32>) -> u32 {
    let u = bitcast<vec3<u32>>(k);
    return lowbias32((u.x * 0x8da6b343u) ^ (u.y * 0xd8163841u) ^ (u.z * 0xcb1ab31fu));
}

// ---- The grid's keys (docs/design.md §9.17), over the box of the scene's cells from its
// lowest one. Where the box's bits fit the key's (a power-of-two number of buckets, >= n) on
// every axis together, a cell's key is its Z-order (Morton) code over the box, axis bits
// interleaved from the lowest and an axis with fewer bits dropping out above them: one cell
// per key, objects sorted by key in spatial order, so neighbouring invocations walk
// neighbouring cells and share their lookups. Where they do not, the box is cut into tiles of
// the key's bits: a cell's key is its Z-order code within its tile XOR the tile's hash. Within
// a tile the keys stay one a cell and every aligned block of codes (a sub-box of cells) stays a
// block of keys, so the order stays spatial; each tile covers every key once, so a bucket holds
// at most one cell a tile, and the hash scatters the tiles' blocks. Frames with invalid
// spheres hash the cell itself.

const GRID_HASHED: u32 = 0u;
const GRID_Z_ORDER: u32 = 1u;
const GRID_TILED: u32 = 2u;

struct GridOrder {
    lo: vec3<i32>,
    bits: vec3<u32>,
    mode: u32,
}

// An order word of grid_frame (tile bits in bytes 0..2, the mode in bits 24..) over the lowest
// cell.
fn order_of(lo: vec3<i32>, w: u32) -> GridOrder {
    return GridOrder(lo, vec3<u32>(w & 0xffu, (w >> 8u) & 0xffu, (w >> 16u) & 0xffu), w >> 24u);
}

fn grid_lo() -> vec3<i32> {
    return bitcast<vec3<i32>>(vec3<u32>(atomicLoad(&ext[EXT_GRID_LO]),
        atomicLoad(&ext[EXT_GRID_LO + 1u]), atomicLoad(&ext[EXT_GRID_LO + 2u])));
}

// The keys' order.
fn grid_order() -> GridOrder {
    return order_of(grid_lo(), atomicLoad(&ext[EXT_GRID_BITS]));
}

// The occupancy map's order: the same box cut into tiles of the map's bits.
fn grid_map_order() -> GridOrder {
    return order_of(grid_lo(), atomicLoad(&ext[EXT_GRID_MAP]));
}

// The Z-order code of the low bits[a] bits of `rel` on axis a (sum <= 31).
fn z_order_code(rel: vec3<u32>, bits: vec3<u32>) -> u32 {
    var key = 0u;
    var at = 0u;
    let levels = max(bits.x, max(bits.y, bits.z));
    for (var i = 0u; i < levels; i++) {
        if i < bits.x {
            key |= ((rel.x >> i) & 1u) << at;
            at++;
        }
        if i < bits.y {
            key |= ((rel.y >> i) & 1u) << at;
            at++;
        }
        if i < bits.z {
            key |= ((rel.z >> i) & 1u) << at;
            at++;
        }
    }
    return key;
}

// A cell's code below `codes` (a power of two) in order o, or NONE for a cell outside the
// Z-order's box (no object lies there). A neighbour outside a tiled box wraps to some tile: a
// code, no object's cell.
fn tiled_code(o: GridOrder, codes: u32, cell: vec3<i32>) -> u32 {
    if o.mode == GRID_HASHED {
        return cell_hash(cell) & (codes - 1u);
    }
    let rel = bitcast<vec3<u32>>(cell) - bitcast<vec3<u32>>(o.lo);
    let tile = rel >> o.bits;
    if o.mode == GRID_Z_ORDER {
        if any(tile != vec3<u32>(0u)) {
            return NONE;
        }
        return z_order_code(rel, o.bits);
    }
    // cell_hash(0) = 0: the lowest tile's codes are its Z-order codes.
    let scatter = cell_hash(bitcast<vec3<i32>>(tile)) & (codes - 1u);
    return z_order_code(rel, o.bits) ^ scatter;
}

// A cell's key below params.buckets, or NONE outside the box.
fn grid_key(o: GridOrder, cell: vec3<i32>) -> u32 {
    return tiled_code(o, params.buckets, cell);
}

// Many worlds (FLAG_WORLDS, docs/design.md §2.13): a cell's bucket in world `rank`, the cell
// and the rank hashed together, so one cell of many worlds spreads over many buckets. The key
// make_keys writes is (rank << bucket bits) | bucket, the rank's bits past 32 shifted out: the
// sort orders the bucket bits alone, and the walk compares a candidate's key bits with its own
// before it reads the candidate's full rank.
fn world_bucket(cell: vec3<i32>, rank: u32) -> u32 {
    return lowbias32(cell_hash(cell) ^ (rank * 0x9e3779b9u)) & (params.buckets - 1u);
}

// ---- The occupancy map (docs/design.md §2.7, §9.9): one bit a cell over the box, in Z-order
// (in tiles XOR their hash where the box has more cells than the map bits), set by make_keys
// for every object that is not a giant. A clear bit means no such object lies in the cell; a
// set one (of a tiled or hashed map, possibly another cell's) sends the walk to the bucket,
// where cells are compared exactly. In Z-order an aligned 32-byte sector of the map is a block
// of 8 x 8 x 4 cells, so an object's 13 forward neighbours fall in one to four sectors.
// A cell's bit is tiled_code(grid_map_order(), map bits, cell); NONE: no object lies there.

// ---- u64 totals: per-thread u32 counts, summed per workgroup as (lo, hi) words with carry,
// then added to the global counters with carry detection (one add per workgroup).

var<workgroup> red: array<vec4<u32>, 256>;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn global_add64(slot: u32, v: vec2<u32>) {
    if v.x != 0u {
        let old = atomicAdd(&counters[slot], v.x);
        if old + v.x < old {
            atomicAdd(&counters[slot + 1u], 1u);
        }
    }
    if v.y != 0u {
        atomicAdd(&counters[slot + 1u], v.y);
    }
}

// Must be reached by every thread of the workgroup (it has barriers).
fn flush_counts(lid: u32, slot_a: u32, a: u32, slot_b: u32, b: u32) {
    red[lid] = vec4<u32>(a, 0u, b, 0u);
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            let x = red[lid];
            let y = red[lid + s];
            red[lid] = vec4<u32>(add64(x.xy, y.xy), add64(x.zw, y.zw));
        }
        workgroupBarrier();
    }
    if lid == 0u {
        let t = red[0];
        global_add64(slot_a, t.xy);
        global_add64(slot_b, t.zw);
    }
}
