// Contacts of box pairs (docs/design.md §4.8): one pair per thread, the steps of
// `geom::contact::obb_contact` (src/geom/contact.rs) in the same order: the least overlap over
// the 15 separating axes (an edge axis shorter than MIN_EDGE_AXIS skipped, a face axis winning
// ties within the tolerance), then on a face axis the other box's most opposed face clipped by
// the reference face's four side planes and reduced to four points, on an edge axis the two
// supporting edges' closest points. Normal from the pair's first box towards its second; points
// midway between the surfaces, each with its depth. Lengths and quotients are math.wgsl's
// (docs/design.md §9.11): the GPU agrees with the CPU within a tolerance, not bit for bit.

// #import dispatch.wgsl
// #import math.wgsl

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

struct Params {
    pair_count: u32,
    box_count: u32,
}

@group(0) @binding(0) var<storage, read> frames: array<Frame>;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> contacts: array<Contact>;
@group(0) @binding(3) var<uniform> params: Params;

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

@compute @workgroup_size(WG)
fn box_contacts(inv: Invocation) {
    let i = flat_id(inv);
    if (i >= params.pair_count) {
        return;
    }
    let pair = pairs[i];
    // Indices are validated on the CPU; guard anyway so a bad one cannot read out of bounds.
    if (pair.x >= params.box_count || pair.y >= params.box_count) {
        var none: Contact;
        none.count = vec4<u32>(0u);
        contacts[i] = none;
        return;
    }
    contacts[i] = obb_contact(frames[pair.x], frames[pair.y]);
}
