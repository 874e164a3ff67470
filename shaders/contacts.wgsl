// Contacts of touching pairs (docs/design.md §4.8): one pair per thread, the CPU's steps
// (src/geom/contact.rs) in the same order, for boxes (`box_contacts`), spheres
// (`sphere_contacts`) and convex polygons (`polygon_contacts`). Lengths and quotients are
// math.wgsl's (docs/design.md §9.11): the GPU agrees with the CPU within a tolerance, not bit
// for bit.
//
// Boxes: the least overlap over the 15 separating axes (an edge axis shorter than MIN_EDGE_AXIS
// skipped, a face axis winning ties within the tolerance), then on a face axis the other box's
// most opposed face clipped by the reference face's four side planes and reduced to four
// points, on an edge axis the two supporting edges' closest points. Normal from the pair's
// first shape towards its second; points midway between the surfaces, each with its depth.
//
// The pairs come from a buffer and a count word, like the SAT stage's candidates: the host's
// pairs with their count, or the SAT stage's output list in the same submission (`prepare`, one
// thread, turns the count into indirect dispatch arguments). There, with params.canonical, a
// pair listed reversed (the SAT stage's unsure pairs, (j, i)) is taken as (i, j); the host
// settles it and drops its contact when it does not overlap.

// #import dispatch.wgsl
// #import dispatch_grid.wgsl
// #import math.wgsl
// #import contacts_params.wgsl

// geom::obb::ObbFrame: the centre (w: exact axes, unused here), then each unit axis with its
// half-extent in w.
struct Frame {
    center: vec4<f32>,
    axes: array<vec4<f32>, 3>,
}

// geom::contact::Contact as the device writes it (96 bytes): normal and depth, four points with
// their depths in w, the count in count.x.
struct Contact {
    normal: vec4<f32>,
    points: array<vec4<f32>, 4>,
    count: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> pair_count: array<u32>;
@group(0) @binding(3) var<storage, read_write> contacts: array<Contact>;
@group(0) @binding(4) var<storage, read_write> dispatch_args: array<u32, 3>;
@group(0) @binding(5) var<storage, read> frames: array<Frame>;
// geom::sphere::Sphere: centre and radius.
@group(0) @binding(6) var<storage, read> spheres: array<vec4<f32>>;
// Polygon i is vertices[offsets[i] .. offsets[i + 1]], counter-clockwise (geom::PolygonSet).
@group(0) @binding(7) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> offsets: array<u32>;

// Independent threads: 64 fills every common SIMD width.
const WG: u32 = 64u;
// geom::contact::CONTACT_TOLERANCE (64 f32 epsilons) and MIN_EDGE_AXIS.
const CONTACT_TOLERANCE: f32 = 7.62939453125e-6;
const MIN_EDGE_AXIS: f32 = 1e-3;

fn axis_of(f: Frame, k: u32) -> vec3<f32> {
    return f.axes[k].xyz;
}

fn half_of(f: Frame, k: u32) -> f32 {
    return f.axes[k].w;
}

fn projected_radius(f: Frame, d: vec3<f32>) -> f32 {
    return f.axes[0].w * abs(dot(f.axes[0].xyz, d)) + f.axes[1].w * abs(dot(f.axes[1].xyz, d))
        + f.axes[2].w * abs(dot(f.axes[2].xyz, d));
}

// The corner of `f` furthest along `dir` (ties: the + side).
fn support(f: Frame, dir: vec3<f32>) -> vec3<f32> {
    var p = f.center.xyz;
    for (var k = 0u; k < 3u; k++) {
        let s = select(1.0, -1.0, dot(axis_of(f, k), dir) < 0.0);
        p += axis_of(f, k) * (s * half_of(f, k));
    }
    return p;
}

// Up to eight points with a depth each (geom::contact's Clipped).
struct Clipped {
    p: array<vec3<f32>, 8>,
    depth: array<f32, 8>,
    n: u32,
}

fn pushed(c: Clipped, p: vec3<f32>, depth: f32) -> Clipped {
    var out = c;
    if (out.n < 8u) {
        out.p[out.n] = p;
        out.depth[out.n] = depth;
        out.n += 1u;
    }
    return out;
}

// Sutherland-Hodgman: the part of the closed polygon where (p - rc) . axis * sign <= half.
fn clip_side(polygon: Clipped, rc: vec3<f32>, axis: vec3<f32>, sign: f32, half: f32) -> Clipped {
    var out: Clipped;
    out.n = 0u;
    for (var k = 0u; k < polygon.n; k++) {
        let p = polygon.p[k];
        let q = polygon.p[select(k + 1u, 0u, k + 1u == polygon.n)];
        let dp = dot(p - rc, axis) * sign - half;
        let dq = dot(q - rc, axis) * sign - half;
        if (dp <= 0.0) {
            out = pushed(out, p, 0.0);
        }
        if ((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) {
            out = pushed(out, p + (q - p) * m_div(dp, dp - dq), 0.0);
        }
    }
    return out;
}

// The face of `incident` most opposed to `nr`, clipped by the side planes of `reference`'s face
// on axis `rk`.
fn clipped_incident_face(reference: Frame, rk: u32, incident: Frame, nr: vec3<f32>) -> Clipped {
    var j = 0u;
    for (var x = 1u; x < 3u; x++) {
        if (abs(dot(axis_of(incident, x), nr)) > abs(dot(axis_of(incident, j), nr))) {
            j = x;
        }
    }
    let facing = select(1.0, -1.0, dot(axis_of(incident, j), nr) > 0.0);
    let ic = incident.center.xyz + axis_of(incident, j) * (facing * half_of(incident, j));
    let u = (j + 1u) % 3u;
    let v = (j + 2u) % 3u;
    let eu = axis_of(incident, u) * half_of(incident, u);
    let ev = axis_of(incident, v) * half_of(incident, v);
    var polygon: Clipped;
    polygon.n = 0u;
    polygon = pushed(polygon, ic + eu + ev, 0.0);
    polygon = pushed(polygon, ic - eu + ev, 0.0);
    polygon = pushed(polygon, ic - eu - ev, 0.0);
    polygon = pushed(polygon, ic + eu - ev, 0.0);
    let rc = reference.center.xyz;
    for (var s = 1u; s < 3u; s++) {
        let side = (rk + s) % 3u;
        polygon = clip_side(polygon, rc, axis_of(reference, side), 1.0, half_of(reference, side));
        polygon = clip_side(polygon, rc, axis_of(reference, side), -1.0, half_of(reference, side));
    }
    return polygon;
}

// The index of the largest `key` (the first of equals).
fn best_depth(c: Clipped) -> u32 {
    var b = 0u;
    for (var q = 1u; q < c.n; q++) {
        if (c.depth[q] > c.depth[b]) {
            b = q;
        }
    }
    return b;
}

fn best_distance(c: Clipped, p0: vec3<f32>) -> u32 {
    var b = 0u;
    for (var q = 1u; q < c.n; q++) {
        let dq = c.p[q] - p0;
        let db = c.p[b] - p0;
        if (dot(dq, dq) > dot(db, db)) {
            b = q;
        }
    }
    return b;
}

fn best_area(c: Clipped, p0: vec3<f32>, p1: vec3<f32>, normal: vec3<f32>, sign: f32) -> u32 {
    var b = 0u;
    for (var q = 1u; q < c.n; q++) {
        let aq = dot(cross(p1 - p0, c.p[q] - p0), normal) * sign;
        let ab = dot(cross(p1 - p0, c.p[b] - p0), normal) * sign;
        if (aq > ab) {
            b = q;
        }
    }
    return b;
}

// Adds a point unless one within `tolerance` is there or the contact is full.
fn contact_pushed(c: Contact, p: vec3<f32>, depth: f32, tolerance: f32) -> Contact {
    var out = c;
    let n = out.count.x;
    if (n >= 4u) {
        return out;
    }
    for (var k = 0u; k < n; k++) {
        if (m_length3(out.points[k].xyz - p) <= tolerance) {
            return out;
        }
    }
    out.points[n] = vec4<f32>(p, depth);
    out.count.x = n + 1u;
    return out;
}

// The closest points of the segments pa ± da ea and pb ± db eb (unit directions).
fn closest_mid(pa: vec3<f32>, da: vec3<f32>, ea: f32, pb: vec3<f32>, db: vec3<f32>, eb: f32) -> vec3<f32> {
    let r = pa - pb;
    let cosine = dot(da, db);
    let c = dot(da, r);
    let f = dot(db, r);
    let denom = 1.0 - cosine * cosine;
    var s = 0.0;
    if (denom > 1e-6) {
        s = clamp(m_div(cosine * f - c, denom), -ea, ea);
    }
    var t = cosine * s + f;
    if (t < -eb || t > eb) {
        t = clamp(t, -eb, eb);
        s = clamp(cosine * t - c, -ea, ea);
    }
    return ((pa + da * s) + (pb + db * t)) * 0.5;
}

fn obb_contact(a: Frame, b: Frame) -> Contact {
    var c: Contact;
    c.count = vec4<u32>(0u);
    let d = b.center.xyz - a.center.xyz;
    let ha = a.axes[0].w + a.axes[1].w + a.axes[2].w;
    let hb = b.axes[0].w + b.axes[1].w + b.axes[2].w;
    let tolerance = CONTACT_TOLERANCE * (abs(d.x) + abs(d.y) + abs(d.z) + ha + hb);
    // Face axes: A's 0-2, B's 3-5.
    // Above every overlap (coordinates and extents are at most 1e18).
    var face_o = 3.0e38;
    var face_l = vec3<f32>(1.0, 0.0, 0.0);
    var face_k = 0u;
    for (var k = 0u; k < 6u; k++) {
        var l: vec3<f32>;
        if (k < 3u) {
            l = axis_of(a, k);
        } else {
            l = axis_of(b, k - 3u);
        }
        let o = projected_radius(a, l) + projected_radius(b, l) - abs(dot(d, l));
        if (o < face_o) {
            face_o = o;
            face_l = l;
            face_k = k;
        }
    }
    var edge_o = 3.0e38;
    var edge_l = vec3<f32>(1.0, 0.0, 0.0);
    var edge_i = 0u;
    var edge_j = 0u;
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let raw = cross(axis_of(a, i), axis_of(b, j));
            let len = m_length3(raw);
            if (len >= MIN_EDGE_AXIS) {
                let l = raw * m_div(1.0, len);
                let o = projected_radius(a, l) + projected_radius(b, l) - abs(dot(d, l));
                if (o < edge_o) {
                    edge_o = o;
                    edge_l = l;
                    edge_i = i;
                    edge_j = j;
                }
            }
        }
    }
    if (edge_o < face_o - tolerance) {
        let n = select(edge_l, -edge_l, dot(d, edge_l) < 0.0);
        c.normal = vec4<f32>(n, max(edge_o, 0.0));
        if (edge_o < -tolerance) {
            c.normal.w = edge_o;
            return c;
        }
        var pa = a.center.xyz;
        var pb = b.center.xyz;
        for (var k = 0u; k < 3u; k++) {
            if (k != edge_i) {
                pa += axis_of(a, k) * (half_of(a, k) * select(1.0, -1.0, dot(axis_of(a, k), n) < 0.0));
            }
            if (k != edge_j) {
                pb -= axis_of(b, k) * (half_of(b, k) * select(1.0, -1.0, dot(axis_of(b, k), n) < 0.0));
            }
        }
        let mid = closest_mid(pa, axis_of(a, edge_i), half_of(a, edge_i), pb, axis_of(b, edge_j), half_of(b, edge_j));
        return contact_pushed(c, mid, c.normal.w, tolerance);
    }
    let n = select(face_l, -face_l, dot(d, face_l) < 0.0);
    c.normal = vec4<f32>(n, max(face_o, 0.0));
    if (face_o < -tolerance) {
        c.normal.w = face_o;
        return c;
    }
    var reference = a;
    var incident = b;
    var nr = n;
    if (face_k >= 3u) {
        reference = b;
        incident = a;
        nr = -n;
    }
    let rk = face_k % 3u;
    let face = clipped_incident_face(reference, rk, incident, nr);
    let rc = reference.center.xyz + nr * half_of(reference, rk);
    var kept: Clipped;
    kept.n = 0u;
    for (var q = 0u; q < face.n; q++) {
        let p = face.p[q];
        let s = dot(p - rc, nr);
        if (s <= tolerance) {
            kept = pushed(kept, p - nr * (s * 0.5), max(-s, 0.0));
        }
    }
    if (kept.n == 0u) {
        let p = support(incident, -nr);
        let s = dot(p - rc, nr);
        kept = pushed(kept, p - nr * (s * 0.5), max(-s, 0.0));
    }
    if (kept.n <= 4u) {
        for (var q = 0u; q < kept.n; q++) {
            c = contact_pushed(c, kept.p[q], kept.depth[q], tolerance);
        }
        return c;
    }
    let first = best_depth(kept);
    let p0 = kept.p[first];
    let second = best_distance(kept, p0);
    let p1 = kept.p[second];
    let third = best_area(kept, p0, p1, nr, 1.0);
    let fourth = best_area(kept, p0, p1, nr, -1.0);
    c = contact_pushed(c, kept.p[first], kept.depth[first], tolerance);
    if (second != first) {
        c = contact_pushed(c, kept.p[second], kept.depth[second], tolerance);
    }
    if (third != first && third != second) {
        c = contact_pushed(c, kept.p[third], kept.depth[third], tolerance);
    }
    if (fourth != first && fourth != second && fourth != third) {
        c = contact_pushed(c, kept.p[fourth], kept.depth[fourth], tolerance);
    }
    return c;
}

fn live_pairs() -> u32 {
    let count = pair_count[params.count_index];
    return min(count, min(params.pair_capacity, min(arrayLength(&pairs), arrayLength(&contacts))));
}

@compute @workgroup_size(1)
fn prepare() {
    dispatch_args = indirect_args(live_pairs(), WG, params.max_groups_x);
}

// The pair of thread `i`, canonical when asked; (shape_count, _) past the live pairs or for an
// index out of range (the host validates them; the guard keeps reads in bounds).
fn pair_of(i: u32) -> vec2<u32> {
    if (i >= live_pairs()) {
        return vec2<u32>(params.shape_count);
    }
    var p = pairs[i];
    if (params.canonical != 0u && p.x > p.y) {
        p = p.yx;
    }
    return p;
}

fn no_contact() -> Contact {
    var none: Contact;
    none.count = vec4<u32>(0u);
    return none;
}

// Whether thread i, whose pair is p (pair_of), has a contact to find: not past the live pairs,
// nor where a shape of p is past the shape count or past `shapes` (the shapes its kernel's
// buffer holds); such a pair's contact is written here as no contact.
fn has_pair(i: u32, p: vec2<u32>, shapes: u32) -> bool {
    if (i >= live_pairs()) {
        return false;
    }
    if (max(p.x, p.y) >= min(params.shape_count, shapes)) {
        contacts[i] = no_contact();
        return false;
    }
    return true;
}

@compute @workgroup_size(WG)
fn box_contacts(inv: Invocation) {
    let i = flat_id(inv);
    let p = pair_of(i);
    if (has_pair(i, p, arrayLength(&frames))) {
        contacts[i] = obb_contact(frames[p.x], frames[p.y]);
    }
}

// geom::contact::sphere_contact in f32: the normal along the centres (+x for coincident
// centres), depth = ra + rb - |cb - ca|, one point midway between the surfaces. A pair within
// the tolerance of touching gets depth 0 and its point (the CPU decides in f64).
fn sphere_contact(a: vec4<f32>, b: vec4<f32>) -> Contact {
    var c = no_contact();
    let d = b.xyz - a.xyz;
    // The difference scaled by its largest component before its length: squares of components
    // below about 1e-19 underflow (centres 1e-25 apart had length 0, depth and normal wrong).
    let s = max(abs(d.x), max(abs(d.y), abs(d.z)));
    var len = 0.0;
    var n = vec3<f32>(1.0, 0.0, 0.0);
    if (s > 0.0) {
        let u = vec3<f32>(m_div(d.x, s), m_div(d.y, s), m_div(d.z, s));
        let lu = m_length3(u);
        len = s * lu;
        n = u * m_div(1.0, lu);
    }
    let depth = a.w + b.w - len;
    let extent = abs(a.x) + abs(a.y) + abs(a.z) + abs(b.x) + abs(b.y) + abs(b.z) + a.w + b.w;
    c.normal = vec4<f32>(n, depth);
    if (depth >= -CONTACT_TOLERANCE * extent) {
        c.normal.w = max(depth, 0.0);
        c.points[0] = vec4<f32>(a.xyz + n * (a.w - c.normal.w * 0.5), c.normal.w);
        c.count.x = 1u;
    }
    return c;
}

@compute @workgroup_size(WG)
fn sphere_contacts(inv: Invocation) {
    let i = flat_id(inv);
    let p = pair_of(i);
    if (has_pair(i, p, arrayLength(&spheres))) {
        contacts[i] = sphere_contact(spheres[p.x], spheres[p.y]);
    }
}

// Polygon `k`'s vertex `v` (its first vertex `start`, `count` of them), cyclically.
fn vertex(start: u32, count: u32, v: u32) -> vec2<f32> {
    return vertices[start + v % count];
}

// The unit outward normal of the counter-clockwise edge v1 -> v2, the edge first scaled to a
// largest component of 1 (the square of a short edge underflows: geom::contact::outward).
fn outward(v1: vec2<f32>, v2: vec2<f32>) -> vec2<f32> {
    let d = v2 - v1;
    let e = d * m_div(1.0, max(abs(d.x), abs(d.y)));
    return vec2<f32>(e.y, -e.x) * m_div(1.0, m_length2(e));
}

// (|bounds' span|_1, |bounds' furthest corner|_1): geom::contact::polygon_contact's `bounds`.
fn polygon_span_and_corner(start: u32, count: u32) -> vec2<f32> {
    var lo = vertices[start];
    var hi = lo;
    for (var k = 1u; k < count; k++) {
        lo = min(lo, vertices[start + k]);
        hi = max(hi, vertices[start + k]);
    }
    let far = max(abs(lo), abs(hi));
    return vec2<f32>((hi.x - lo.x) + (hi.y - lo.y), far.x + far.y);
}

struct Separation {
    distance: f32,
    edge: u32,
}

// The edge of polygon p along whose outward normal q lies furthest out, and that distance
// (negative: overlap); the first of equals.
fn max_separation(ps: u32, pn: u32, qs: u32, qn: u32) -> Separation {
    var best = Separation(-3.0e38, 0u);
    for (var i = 0u; i < pn; i++) {
        let v1 = vertices[ps + i];
        let n = outward(v1, vertex(ps, pn, i + 1u));
        var s = 3.0e38;
        for (var k = 0u; k < qn; k++) {
            s = min(s, dot(vertices[qs + k] - v1, n));
        }
        if (s > best.distance || i == 0u) {
            best = Separation(s, i);
        }
    }
    return best;
}

// geom::contact::polygon_contact: the reference edge of the larger separation (a's unless b's
// is larger by the rounding of the pair's size), the incident edge most opposed to it clipped to
// its span (from the reference vertex), the clipped ends within `near` (the rounding of the
// pair's own size) kept (else the deepest incident vertex).
fn polygon_contact(a: u32, b: u32) -> Contact {
    var c = no_contact();
    let a0 = offsets[a];
    let an = offsets[a + 1u] - a0;
    let b0 = offsets[b];
    let bn = offsets[b + 1u] - b0;
    let sizes = polygon_span_and_corner(a0, an) + polygon_span_and_corner(b0, bn);
    // Touching within the rounding of the places too; the points' steps, taken from the
    // reference vertex, within the rounding of the pair's size (geom::contact's `near`).
    let tolerance = CONTACT_TOLERANCE * (sizes.x + sizes.y);
    let near = CONTACT_TOLERANCE * sizes.x;
    let sa = max_separation(a0, an, b0, bn);
    let sb = max_separation(b0, bn, a0, an);
    // b's axis where its separation is larger beyond the rounding of the pair's own size: the
    // choice does not move with the pair's place (the corners' part of `tolerance` would).
    let flip = sb.distance > sa.distance + CONTACT_TOLERANCE * sizes.x;
    var r0 = a0;
    var rn = an;
    var i0 = b0;
    var inn = bn;
    var sep = sa;
    if (flip) {
        r0 = b0;
        rn = bn;
        i0 = a0;
        inn = an;
        sep = sb;
    }
    let v1 = vertex(r0, rn, sep.edge);
    let v2 = vertex(r0, rn, sep.edge + 1u);
    let nr = outward(v1, v2);
    let n = select(nr, -nr, flip);
    c.normal = vec4<f32>(n, 0.0, max(-sep.distance, 0.0));
    if (sep.distance > tolerance) {
        c.normal.w = -sep.distance;
        return c;
    }
    var k = 0u;
    var most = dot(outward(vertex(i0, inn, 0u), vertex(i0, inn, 1u)), nr);
    for (var x = 1u; x < inn; x++) {
        let o = dot(outward(vertex(i0, inn, x), vertex(i0, inn, x + 1u)), nr);
        if (o < most) {
            most = o;
            k = x;
        }
    }
    // From v1 on: differences of the shapes' own vertices, rounded at the pair's size.
    var w1 = vertex(i0, inn, k) - v1;
    var w2 = vertex(i0, inn, k + 1u) - v1;
    let e = v2 - v1;
    let t = e * m_div(1.0, m_length2(e));
    for (var side = 0u; side < 2u; side++) {
        let origin = select(vec2<f32>(0.0), e, side == 1u);
        let dir = select(t, -t, side == 1u);
        let d1 = dot(w1 - origin, dir);
        let d2 = dot(w2 - origin, dir);
        if (d1 < 0.0 && d2 < 0.0) {
            continue; // rounding: keep the segment, the separations decide
        }
        if (d1 < 0.0) {
            w1 = w1 + (w2 - w1) * m_div(d1, d1 - d2);
        } else if (d2 < 0.0) {
            w2 = w2 + (w1 - w2) * m_div(d2, d2 - d1);
        }
    }
    for (var end = 0u; end < 2u; end++) {
        let p = select(w1, w2, end == 1u);
        let s = dot(p, nr);
        if (s <= near) {
            c = contact_pushed(c, vec3<f32>(v1 + (p - nr * (s * 0.5)), 0.0), max(-s, 0.0), near);
        }
    }
    if (c.count.x == 0u) {
        var deepest = vertex(i0, inn, 0u) - v1;
        for (var x = 1u; x < inn; x++) {
            let q = vertex(i0, inn, x) - v1;
            if (dot(q, nr) < dot(deepest, nr)) {
                deepest = q;
            }
        }
        let s = dot(deepest, nr);
        c = contact_pushed(c, vec3<f32>(v1 + (deepest - nr * (s * 0.5)), 0.0), max(-s, 0.0), near);
    }
    return c;
}

@compute @workgroup_size(WG)
fn polygon_contacts(inv: Invocation) {
    let i = flat_id(inv);
    let p = pair_of(i);
    if (!has_pair(i, p, arrayLength(&offsets) - 1u)) {
        return;
    }
    if (offsets[p.x + 1u] > arrayLength(&vertices) || offsets[p.y + 1u] > arrayLength(&vertices)) {
        contacts[i] = no_contact();
        return;
    }
    contacts[i] = polygon_contact(p.x, p.y);
}
