// The sector accuracy experiment (thesis 3.1, docs/design.md §5.5): per rotation, the 64-bin histogram
// of membership masks over the 100^3 grid. Mirrors src/cpu/sector_grid.rs and src/geom/sector/classify.rs and
// src/geom/sector/swept_box.rs line by line; the per-rotation constants come precomputed from the CPU.
//
// One workgroup = one rotation x 64 grid rows (x varies along a row). Each thread owns a row:
// the two speculative AABBs are index intervals counted in O(1); only the points inside a
// cylinder-and-slab bound of the conservative sector are classified one by one. Counts go to a
// workgroup histogram, then 63 atomics per workgroup to the rotation's global histogram
// (bin 0, "in no shape", is filled in on the CPU from the total).

// #import dispatch.wgsl
// #import math.wgsl
// #import sector/grid_rows.wgsl

struct Rotation {
    origin: vec4<f32>,
    arm: vec4<f32>,                 // e1, w = |P - O|
    sweep_dir: vec4<f32>,           // e2 = U x e1, w = alpha
    axis: vec4<f32>,                // U, w = Wz / 2
    half_widths: vec4<f32>,         // Wx/2, Wy/2, bound radius, bound half-height
    sector_axis: vec4<f32>,         // A, w = cos(theta)
    sector_radii: vec4<f32>,        // r^2, R^2, full ring, -
    conservative_axis: vec4<f32>,
    conservative_radii: vec4<f32>,
    gate: vec4<f32>,                // (r'-s)^2, (R'+s)^2, cos(theta'+s), -
    boxes: SpeculativeBoxes,
}

@group(0) @binding(0) var<storage, read> rotations: array<Rotation>;

const PI: f32 = 3.14159265358979;
const TAU: f32 = 6.28318530717959;
const REFERENCE_STEPS: f32 = 100.0;

// 64 threads: one per histogram bin for the flush, and a multiple of every common SIMD width
// (8 on lavapipe, 32, 64).
const WG: u32 = 64u;

// Vulkan lets atan/atan2 be off by 4096 ulp (and acos/asin inherit it): enough to move
// thousands of boundary points. These versions are accurate to a few 1e-7 rad everywhere. Their
// divisions and square roots, like every other here, are math.wgsl's m_div and m_sqrt
// (docs/design.md §9.11).
const SQRT3: f32 = 1.7320508075688772;
const TAN_PI_12: f32 = 0.2679491924311227;

// atan(t) for |t| <= tan(pi / 12) by its Taylor series: the next term is below 3e-10.
fn atan_small(t: f32) -> f32 {
    let t2 = t * t;
    return t * (1.0 + t2 * (-1.0 / 3.0 + t2 * (1.0 / 5.0 + t2 * (-1.0 / 7.0
        + t2 * (1.0 / 9.0 + t2 * (-1.0 / 11.0 + t2 * (1.0 / 13.0)))))));
}

// atan(r) for r in [0, 1]: atan(r) = pi/6 + atan((r sqrt3 - 1) / (r + sqrt3)) above tan(pi/12).
fn atan_unit(r: f32) -> f32 {
    if (r > TAN_PI_12) {
        return PI / 6.0 + atan_small(m_div(r * SQRT3 - 1.0, r + SQRT3));
    }
    return atan_small(r);
}

fn precise_atan2(y: f32, x: f32) -> f32 {
    let ax = abs(x);
    let ay = abs(y);
    let big = max(ax, ay);
    if (big == 0.0) {
        return 0.0;
    }
    var a = atan_unit(m_div(min(ax, ay), big));
    if (ay > ax) {
        a = 0.5 * PI - a;
    }
    if (x < 0.0) {
        a = PI - a;
    }
    if (y < 0.0) {
        a = -a;
    }
    return a;
}

// acos(c), c in [-1, 1]; (1 - c)(1 + c) keeps precision near |c| = 1.
fn precise_acos(c: f32) -> f32 {
    return precise_atan2(m_sqrt(max((1.0 - c) * (1.0 + c), 0.0)), c);
}

// asin(s), s in [0, 1].
fn precise_asin(s: f32) -> f32 {
    return precise_atan2(s, m_sqrt(max((1.0 - s) * (1.0 + s), 0.0)));
}

fn in_sector(q: vec3<f32>, rho2: f32, axis: vec4<f32>, radii: vec4<f32>) -> bool {
    return rho2 >= radii.x && rho2 <= radii.y
        && (radii.z != 0.0 || dot(q, axis.xyz) >= axis.w * m_sqrt(rho2));
}

fn wrap_angle(v: f32) -> f32 {
    var w = m_rem(v, TAU);
    if (w < 0.0) {
        w = w + TAU;
    }
    if (w >= TAU) {
        w = 0.0;
    }
    return w;
}

fn pose_in_range(lo: f32, hi: f32, alpha: f32) -> bool {
    if (alpha <= 0.0) {
        return lo <= 0.0 && 0.0 <= hi;
    }
    let per_radian = m_div(REFERENCE_STEPS, alpha);
    let k_min = max(ceil(lo * per_radian), 0.0);
    let k_max = min(floor(hi * per_radian), REFERENCE_STEPS);
    return k_min <= k_max;
}

// Bits REFERENCE | EXACT_SWEEP for the arc [start, start + width] of gamma.
fn arc_bits(beta: f32, start: f32, width: f32, alpha: f32) -> u32 {
    let x = wrap_angle(beta - start);
    var m = 0u;
    if (pose_in_range(x - width, x, alpha) || pose_in_range(x - width + TAU, x + TAU, alpha)) {
        m = m | REFERENCE;
    }
    if (x <= width + alpha) {
        m = m | EXACT_SWEEP;
    }
    return m;
}

// Both symmetric arcs of one |gamma| range [lo, hi].
fn range_bits(beta: f32, lo: f32, hi: f32, alpha: f32) -> u32 {
    if (lo > hi) {
        return 0u;
    }
    return arc_bits(beta, lo, hi - lo, alpha) | arc_bits(beta, -hi, hi - lo, alpha);
}

// GammaArcs::new followed by the sweep tests.
fn sweep_bits(rho: f32, beta: f32, r: Rotation) -> u32 {
    let distance = r.arm.w;
    let half_x = r.half_widths.x;
    let half_y = r.half_widths.y;
    let alpha = r.sweep_dir.w;
    if (rho <= 0.0) {
        if (distance - half_y <= 0.0 && 0.0 <= distance + half_y) {
            return range_bits(beta, 0.0, PI, alpha);
        }
        return 0u;
    }
    let c_hi = m_div(distance + half_y, rho);
    let c_lo = m_div(distance - half_y, rho);
    if (c_hi < -1.0 || c_lo > 1.0) {
        return 0u;
    }
    let g_lo = precise_acos(min(c_hi, 1.0));
    let g_hi = precise_acos(max(c_lo, -1.0));
    let s = m_div(half_x, rho);
    if (s >= 1.0) {
        return range_bits(beta, g_lo, g_hi, alpha);
    }
    let a = precise_asin(s);
    return range_bits(beta, g_lo, min(g_hi, a), alpha)
        | range_bits(beta, max(g_lo, PI - a), g_hi, alpha);
}

fn classify(r: Rotation, p: vec3<f32>) -> u32 {
    var mask = aabb_bits(r.boxes, p);
    let q = p - r.origin.xyz;
    let z = dot(q, r.axis.xyz);
    if (abs(z) > r.axis.w) {
        return mask;
    }
    let x = dot(q, r.arm.xyz);
    let y = dot(q, r.sweep_dir.xyz);
    let rho2 = x * x + y * y;
    if (in_sector(q, rho2, r.sector_axis, r.sector_radii)) {
        mask = mask | SECTOR;
    }
    if (in_sector(q, rho2, r.conservative_axis, r.conservative_radii)) {
        mask = mask | CONSERVATIVE_SECTOR;
    }
    let near_sweep = rho2 >= r.gate.x && rho2 <= r.gate.y
        && dot(q, r.conservative_axis.xyz) >= r.gate.z * m_sqrt(rho2);
    if (near_sweep) {
        mask = mask | sweep_bits(m_sqrt(rho2), precise_atan2(y, x), r);
    }
    return mask;
}

@compute @workgroup_size(WG)
fn classify_rows(inv: Invocation) {
    let g = begin_rotation(inv);
    let rotation = g.x;
    let row = g.y * WG + inv.lid;
    if (rotation < params.rotation_count && row < ROWS) {
        let r = rotations[rotation];
        let y = grid_coord(i32(row % 100u));
        let z = grid_coord(i32(row / 100u));
        let c = candidate_range(r.origin.xyz, r.axis.xyz, r.half_widths.z, r.half_widths.w, y, z);
        for (var i = c.x; i <= c.y; i = i + 1) {
            let m = classify(r, vec3<f32>(grid_coord(i), y, z));
            if (m != 0u) {
                atomicAdd(&local_hist[m], 1u);
            }
        }
        add_outside(r.boxes, y, z, c);
    }
    end_rotation(inv.lid, rotation);
}
