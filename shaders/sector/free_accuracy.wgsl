// The generalised sector accuracy experiment (docs/design.md §5.8): per rotation of any convex
// body in any pose, the 64-bin histogram of membership masks over the 100^3 grid. Mirrors
// src/geom/sector/free_classify.rs, src/geom/sector/exact_sweep.rs and
// src/cpu/sector_grid.rs; the per-rotation constants come precomputed from the CPU.
//
// One workgroup = one rotation x one grid row, a thread per point; as in sector/accuracy.wgsl
// the speculative AABBs are counted as index ranges and only the points of the row inside the
// gate's cylinder and slab are classified. The exact sweep needs no angle: a point (x0, y0, z) of the rotation's frame is inside the body
// turned by t iff (x0 c + y0 s, y0 c - x0 s, z) is inside the start pose, (c, s) = (cos t,
// sin t). The body is an OR of clauses, each an AND of quadrics; on the point's circle each
// quadric is g = k0 + k1 c + k2 s + k3 (c^2 - s^2) + k4 (2 c s), and the clause holds
// somewhere in the turn iff it holds at t = 0, at the end, or at a root of one of its
// quadrics (closed form for degree 1, a quartic in u = tan(tau / 2) for degree 2).

// #import dispatch.wgsl
// #import math.wgsl
// #import sector/grid_rows.wgsl

struct Rotation {
    origin: vec4<f32>,              // O, w = alpha >= 0
    e1: vec4<f32>,                  // w = cos alpha
    e2: vec4<f32>,                  // w = sin alpha
    axis: vec4<f32>,                // U, w = tan(half-turn / 4)
    halves: array<vec4<f32>, 2>,    // cos c, sin c, cos 2c, sin 2c
    counts: vec4<u32>,              // first constraint, clauses, half-turns, pieces
    clause_ends: vec4<u32>,         // relative to the first constraint
    conservative: array<vec4<f32>, 2>,
    gate: array<vec4<f32>, 2>,
    pieces: array<vec4<f32>, 16>,
    bound: vec4<f32>,               // gate's axial middle, w = gate radius
    bound_half: vec4<f32>,          // x = gate's axial half-range
    boxes: SpeculativeBoxes,
}

// (xx, yy, zz, xy), (xz, yz, lx, ly), (lz, k, max |M|, |l|)
struct Constraint {
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
}

@group(0) @binding(0) var<storage, read> rotations: array<Rotation>;
@group(0) @binding(3) var<storage, read> constraints: array<Constraint>;
@group(0) @binding(4) var<storage, read> steps: array<vec2<f32>>;

const PI: f32 = 3.14159265358979;
const STEPS: u32 = 101u;
// src/geom/sector/exact_sweep.rs TOLERANCE.
const TOLERANCE: f32 = 1e-6;

// The union of the sub-piece sectors holds the thesis sector's bit.
const PIECE_UNION: u32 = SECTOR;

// A workgroup per grid row, a thread per point of it (100 of 128 work). A thread per row
// would loop over up to 100 points, each over the body's faces squared: lavapipe stops every
// loop of an invocation after 65,535 iterations in all, and a hull's row passes that.
const WG: u32 = 128u;

// The point of the rotation's frame being classified.
struct Point {
    x: f32,
    y: f32,
    z: f32,
    scale: f32,
}

struct Trig {
    k0: f32,
    k: vec4<f32>,   // k1 .. k4
    tol: f32,
    linear: bool,
}

fn in_local_sector(s0: vec4<f32>, s1: vec4<f32>, x: f32, y: f32, z: f32) -> bool {
    let rho2 = x * x + y * y;
    return z >= s1.z && z <= s1.w && rho2 >= s1.x && rho2 <= s1.y
        && (s0.w != 0.0 || x * s0.x + y * s0.y >= s0.z * m_sqrt(rho2));
}

// Quadric::trig.
fn trig(q: Constraint, p: Point) -> Trig {
    let x0 = p.x;
    let y0 = p.y;
    let z = p.z;
    let rho2 = x0 * x0 + y0 * y0;
    let diff = q.a.x - q.a.y;
    var t: Trig;
    t.k0 = q.a.z * z * z + q.c.x * z + q.c.y + 0.5 * (q.a.x + q.a.y) * rho2;
    t.k = vec4<f32>(
        q.b.z * x0 + q.b.w * y0 + 2.0 * z * (q.b.x * x0 + q.b.y * y0),
        q.b.z * y0 - q.b.w * x0 + 2.0 * z * (q.b.x * y0 - q.b.y * x0),
        0.5 * diff * (x0 * x0 - y0 * y0) + 2.0 * q.a.w * x0 * y0,
        diff * x0 * y0 + q.a.w * (y0 * y0 - x0 * x0),
    );
    t.tol = TOLERANCE * (q.c.z * p.scale * p.scale + q.c.w * p.scale + abs(q.c.y));
    t.linear = q.a.x == q.a.y && q.a.w == 0.0;
    return t;
}

fn trig_at(t: Trig, cs: vec2<f32>) -> f32 {
    let c = cs.x;
    let s = cs.y;
    return t.k0 + t.k.x * c + t.k.y * s + t.k.z * (c * c - s * s) + t.k.w * (2.0 * c * s);
}

// Whether every constraint of [first, end) holds at (c, s), within its tolerance or exactly.
fn clause_holds(first: u32, end: u32, p: Point, cs: vec2<f32>, slack: bool) -> bool {
    for (var j = first; j < end; j = j + 1u) {
        let t = trig(constraints[j], p);
        var tol = 0.0;
        if (slack) {
            tol = t.tol;
        }
        if (trig_at(t, cs) > tol) {
            return false;
        }
    }
    return true;
}

// Turn::holds: the angle of (c, s) lies in [0, alpha].
fn in_turn(r: Rotation, cs: vec2<f32>) -> bool {
    let before_end = cs.x * r.e2.w - cs.y * r.e1.w >= 0.0;
    if (r.origin.w <= PI) {
        return cs.y >= 0.0 && before_end;
    }
    return cs.y >= 0.0 || before_end;
}

struct Roots {
    v: array<f32, 4>,
    n: u32,
}

fn horner(p: array<f32, 5>, u: f32) -> f32 {
    return (((p[4] * u + p[3]) * u + p[2]) * u + p[1]) * u + p[0];
}

fn push_root(r: ptr<function, Roots>, u: f32) {
    if ((*r).n < 4u) {
        (*r).v[(*r).n] = u;
        (*r).n = (*r).n + 1u;
    }
}

// exact_sweep.rs roots_between: p is monotone between consecutive critical points.
fn roots_between(p: array<f32, 5>, crit: Roots, lo: f32, hi: f32) -> Roots {
    var out: Roots;
    out.n = 0u;
    var a = lo;
    var fa = horner(p, a);
    if (fa == 0.0) {
        push_root(&out, a);
    }
    for (var i = 0u; i <= crit.n; i = i + 1u) {
        var b = hi;
        if (i < crit.n) {
            b = crit.v[i];
        }
        let fb = horner(p, b);
        if (fb == 0.0) {
            push_root(&out, b);
        } else if (fa != 0.0 && (fa < 0.0) != (fb < 0.0)) {
            var x0 = a;
            var x1 = b;
            var f0 = fa;
            for (var k = 0; k < 40; k = k + 1) {
                let mid = 0.5 * (x0 + x1);
                if (mid <= x0 || mid >= x1) {
                    break;
                }
                let fm = horner(p, mid);
                if ((fm < 0.0) == (f0 < 0.0)) {
                    x0 = mid;
                    f0 = fm;
                } else {
                    x1 = mid;
                }
            }
            push_root(&out, 0.5 * (x0 + x1));
        }
        a = b;
        fa = fb;
    }
    return out;
}

// exact_sweep.rs quartic_roots.
fn quartic_roots(p: array<f32, 5>, lo: f32, hi: f32) -> Roots {
    if (p[0] == 0.0 && p[1] == 0.0 && p[2] == 0.0 && p[3] == 0.0 && p[4] == 0.0) {
        var none: Roots;
        none.n = 0u;
        return none;
    }
    let d1 = array<f32, 5>(p[1], 2.0 * p[2], 3.0 * p[3], 4.0 * p[4], 0.0);
    let d2 = array<f32, 5>(d1[1], 2.0 * d1[2], 3.0 * d1[3], 0.0, 0.0);
    var r3: Roots;
    r3.n = 0u;
    let lead = 2.0 * d2[2];
    if (lead != 0.0) {
        let u = m_div(-d2[1], lead);
        if (lo < u && u < hi) {
            push_root(&r3, u);
        }
    }
    let r2 = roots_between(d2, r3, lo, hi);
    let r1 = roots_between(d1, r2, lo, hi);
    return roots_between(p, r1, lo, hi);
}

// Whether the clause [first, end) holds at 0, at alpha, or at a root of one of its constraints.
fn clause_swept(r: Rotation, first: u32, end: u32, p: Point) -> bool {
    if (clause_holds(first, end, p, vec2<f32>(1.0, 0.0), true)
        || clause_holds(first, end, p, vec2<f32>(r.e1.w, r.e2.w), true)) {
        return true;
    }
    for (var j = first; j < end; j = j + 1u) {
        let t = trig(constraints[j], p);
        if (t.linear) {
            let a = t.k.x;
            let b = t.k.y;
            let c = t.k0;
            let m2 = a * a + b * b;
            let disc = m2 - c * c;
            if (m2 == 0.0 || disc < 0.0) {
                continue;
            }
            let rt = m_sqrt(disc);
            let r0 = vec2<f32>(m_div(-a * c - b * rt, m2), m_div(-b * c + a * rt, m2));
            let r1 = vec2<f32>(m_div(-a * c + b * rt, m2), m_div(-b * c - a * rt, m2));
            if ((in_turn(r, r0) && clause_holds(first, end, p, r0, true))
                || (in_turn(r, r1) && clause_holds(first, end, p, r1, true))) {
                return true;
            }
            continue;
        }
        for (var h = 0u; h < r.counts.z; h = h + 1u) {
            let hv = r.halves[h];
            let cc = hv.x;
            let sc = hv.y;
            let k1 = t.k.x * cc + t.k.y * sc;
            let k2 = t.k.y * cc - t.k.x * sc;
            let k3 = t.k.z * hv.z + t.k.w * hv.w;
            let k4 = t.k.w * hv.z - t.k.z * hv.w;
            let poly = array<f32, 5>(
                t.k0 + k1 + k3,
                2.0 * k2 + 4.0 * k4,
                2.0 * t.k0 - 6.0 * k3,
                2.0 * k2 - 4.0 * k4,
                t.k0 - k1 + k3,
            );
            let roots = quartic_roots(poly, -r.axis.w, r.axis.w);
            for (var i = 0u; i < roots.n; i = i + 1u) {
                let u = roots.v[i];
                let den = 1.0 + u * u;
                let ct = m_div(1.0 - u * u, den);
                let st = m_div(2.0 * u, den);
                let cs = vec2<f32>(cc * ct - sc * st, sc * ct + cc * st);
                if (clause_holds(first, end, p, cs, true)) {
                    return true;
                }
            }
        }
    }
    return false;
}

// Bits EXACT_SWEEP and REFERENCE of a frame point.
fn sweep_bits(r: Rotation, rotation: u32, p: Point) -> u32 {
    var exact = false;
    var discrete = false;
    var first = r.counts.x;
    for (var c = 0u; c < r.counts.y; c = c + 1u) {
        let end = r.counts.x + r.clause_ends[c];
        if (!exact) {
            exact = clause_swept(r, first, end, p);
        }
        if (!discrete) {
            for (var k = 0u; k < STEPS; k = k + 1u) {
                if (clause_holds(first, end, p, steps[rotation * STEPS + k], false)) {
                    discrete = true;
                    break;
                }
            }
        }
        if (exact && discrete) {
            break;
        }
        first = end;
    }
    return select(0u, EXACT_SWEEP, exact) | select(0u, REFERENCE, discrete);
}

fn classify(r: Rotation, rotation: u32, p: vec3<f32>) -> u32 {
    var mask = aabb_bits(r.boxes, p);
    let q = p - r.origin.xyz;
    let x = dot(q, r.e1.xyz);
    let y = dot(q, r.e2.xyz);
    let z = dot(q, r.axis.xyz);
    if (in_local_sector(r.conservative[0], r.conservative[1], x, y, z)) {
        mask = mask | CONSERVATIVE_SECTOR;
    }
    for (var i = 0u; i < r.counts.w; i = i + 1u) {
        if (in_local_sector(r.pieces[2u * i], r.pieces[2u * i + 1u], x, y, z)) {
            mask = mask | PIECE_UNION;
            break;
        }
    }
    if (in_local_sector(r.gate[0], r.gate[1], x, y, z)) {
        let pt = Point(x, y, z, m_sqrt(x * x + y * y + z * z) + 1.0);
        mask = mask | sweep_bits(r, rotation, pt);
    }
    return mask;
}

@compute @workgroup_size(WG)
fn classify_points(inv: Invocation) {
    let g = begin_rotation(inv);
    let rotation = g.x;
    let row = g.y;
    if (rotation < params.rotation_count) {
        let r = rotations[rotation];
        let y = grid_coord(i32(row % 100u));
        let z = grid_coord(i32(row / 100u));
        let c = candidate_range(r.bound.xyz, r.axis.xyz, r.bound.w, r.bound_half.x, y, z);
        let i = i32(inv.lid);
        if (i >= c.x && i <= c.y) {
            let m = classify(r, rotation, vec3<f32>(grid_coord(i), y, z));
            if (m != 0u) {
                atomicAdd(&local_hist[m], 1u);
            }
        }
        // Outside the candidate range only the two AABB bits can be set: counted as ranges.
        if (inv.lid == 0u) {
            add_outside(r.boxes, y, z, c);
        }
    }
    end_rotation(inv.lid, rotation);
}
