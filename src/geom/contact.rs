//! Contacts of touching pairs: a normal, a depth and up to four points, what a solver takes
//! from a narrow phase (docs/design.md §4.8). One function per shape pair; the batched forms
//! are `cpu::contacts`.
//!
//! **Conventions**, for a pair `(a, b)` (a canonical pair `[i, j]`: `a = i`, `b = j`):
//! * `normal` is a unit vector from `a` towards `b`: moving `b` by `depth * normal` (or `a` by
//!   the opposite) separates them to touching;
//! * `depth >= 0` is that translation's length (for boxes and polygons the separating-axis
//!   test's least overlap over its axes, which for convex polytopes is the penetration depth);
//!   exact touching gives 0 and still a contact;
//! * each point lies midway between the two surfaces along the normal, with its own depth (the
//!   surfaces' distance there, `<= depth` up to rounding); spheres have one point, polygons up
//!   to two (z = 0), boxes up to four (a face contact clipped and reduced, an edge-edge contact
//!   one point).
//!
//! A pair that does not touch gets no points and a negative `depth`: minus a lower bound of the
//! gap (the exact gap for spheres).

use crate::geom::obb::{Obb, ObbFrame};
use crate::geom::polygon::Polygon;
use crate::geom::sphere::Sphere;
use glam::{DVec3, Vec2, Vec3};

/// The most points of one contact.
pub const MAX_CONTACT_POINTS: usize = 4;

/// The contact of a touching pair (module docs: the conventions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contact {
    /// Unit normal from the pair's first shape towards its second.
    pub normal: Vec3,
    /// Penetration along `normal` (>= 0); negative for a pair that does not touch.
    pub depth: f32,
    /// Points in use in `points` and `depths`.
    pub count: u32,
    /// The points, midway between the surfaces (the first `count`).
    pub points: [Vec3; MAX_CONTACT_POINTS],
    /// Each point's depth: the surfaces' distance along the normal there (the first `count`).
    pub depths: [f32; MAX_CONTACT_POINTS],
}

impl Contact {
    /// The points in use.
    pub fn points(&self) -> &[Vec3] {
        &self.points[..self.count as usize]
    }

    /// Their depths.
    pub fn depths(&self) -> &[f32] {
        &self.depths[..self.count as usize]
    }

    /// A contact with `normal` and `depth` and no points yet.
    fn along(normal: Vec3, depth: f32) -> Self {
        Self {
            normal,
            depth,
            ..Self::default()
        }
    }

    /// Adds a point unless one within `tolerance` is there already (a degenerate face gives
    /// repeated corners) or the contact is full.
    fn push(&mut self, point: Vec3, depth: f32, tolerance: f32) {
        let n = self.count as usize;
        if n == MAX_CONTACT_POINTS
            || self.points[..n]
                .iter()
                .any(|p| p.distance(point) <= tolerance)
        {
            return;
        }
        self.points[n] = point;
        self.depths[n] = depth;
        self.count += 1;
    }
}

/// The contact of two spheres, in f64: the normal along the centres (`+x` for coincident
/// centres), `depth = ra + rb - |cb - ca|`, one point midway between the surfaces. Whether they
/// touch is [`Sphere::touches`]' exact verdict, not the depth's sign: f64 rounds a pair apart
/// by less than its rounding to depth 0 (spheres of radius 1 at `(2, 1e-10, 0)` lie apart by
/// 2.5e-21); such a pair gets depth `-0.0` and no point, and a touching pair whose depth
/// rounded below 0 gets depth 0 and its point (docs/design.md §4.8).
pub fn sphere_contact(a: &Sphere, b: &Sphere) -> Contact {
    let (ca, cb) = (a.center.as_dvec3(), b.center.as_dvec3());
    let d = cb - ca;
    let len = d.length();
    let n = if len > 0.0 { d / len } else { DVec3::X };
    let depth = a.radius as f64 + b.radius as f64 - len;
    let touching = a.touches(b);
    let depth = if touching {
        depth.max(0.0)
    } else {
        depth.min(-0.0)
    };
    let mut c = Contact::along(n.as_vec3(), depth as f32);
    if touching {
        let point = ca + n * (a.radius as f64 - depth / 2.0);
        c.push(point.as_vec3(), depth as f32, 0.0);
    }
    c
}

/// Relative tolerance of the box and polygon contacts: a point whose separation is within
/// `CONTACT_TOLERANCE * scale` of zero counts as touching, and points closer than it are one
/// (`scale`: the pair's extent, `|d|_1` plus the half-extents). 64 units of f32 rounding: the
/// separations are sums of a few rounded products.
pub const CONTACT_TOLERANCE: f32 = 64.0 * f32::EPSILON;

/// An edge axis `A_i x B_j` shorter than this (edges within about 0.06 degrees of parallel) is
/// skipped: its direction would carry the rounding of the cross product, and for parallel edges
/// the face axes hold the least overlap.
const MIN_EDGE_AXIS: f32 = 1e-3;

/// The contact of two oriented boxes (their frames, [`crate::geom::obb::Obb::frame`]): the
/// separating-axis test's 15 axes give the least overlap; on a face axis the other box's most
/// opposed face is clipped against the reference face's sides (up to eight points, reduced to
/// four), on an edge axis the two edges' closest points give one. `shaders/contacts.wgsl`
/// takes the same steps in the same order. The frames alone cannot tell a pair within the
/// tolerance of touching (`64 eps` times `|d|_1` plus the half-extents) from one just apart: it
/// is called touching here; `cpu::contacts::obb_contacts` settles it exactly from the boxes.
pub fn obb_contact(a: &ObbFrame, b: &ObbFrame) -> Contact {
    obb_contact_unsettled(a, b).0
}

/// [`obb_contact`], with its least overlap before it was clamped to 0 and its tolerance: a
/// pair within the tolerance of touching is called touching here, which the caller settles
/// exactly where it holds the boxes ([`settle`]).
pub(crate) fn obb_contact_unsettled(a: &ObbFrame, b: &ObbFrame) -> (Contact, f32, f32) {
    let d = b.center() - a.center();
    let (aa, ba) = (a.axis_array(), b.axis_array());
    let scale =
        d.abs().element_sum() + a.half_extents().element_sum() + b.half_extents().element_sum();
    let tolerance = CONTACT_TOLERANCE * scale;
    let overlap = |l: Vec3| a.projected_radius(l) + b.projected_radius(l) - d.dot(l).abs();
    // Face axes: A's 0-2, B's 3-5; the first of equal overlaps wins (A's before B's).
    let mut face = (f32::INFINITY, Vec3::X, 0usize);
    for k in 0..6 {
        let l = if k < 3 { aa[k] } else { ba[k - 3] };
        let o = overlap(l);
        if o < face.0 {
            face = (o, l, k);
        }
    }
    let mut edge = (f32::INFINITY, Vec3::X, 0usize, 0usize);
    for (i, ai) in aa.iter().enumerate() {
        for (j, bj) in ba.iter().enumerate() {
            let l = ai.cross(*bj);
            let len = l.length();
            if len < MIN_EDGE_AXIS {
                continue;
            }
            let l = l / len;
            let o = overlap(l);
            if o < edge.0 {
                edge = (o, l, i, j);
            }
        }
    }
    let toward_b = |l: Vec3| if d.dot(l) < 0.0 { -l } else { l };
    // An edge axis only where its overlap is smaller beyond the tolerance: a face contact's
    // manifold where the two tie. (A 5% preference for faces, as some engines keep for stable
    // stacks, reported depths up to 5% above the least overlap.)
    if edge.0 < face.0 - tolerance {
        let (o, l, i, j) = edge;
        let n = toward_b(l);
        let mut c = Contact::along(n, o.max(0.0));
        if o < -tolerance {
            c.depth = o;
            return (c, o, tolerance);
        }
        // A's edge along A_i furthest along n, B's along B_j furthest along -n.
        let side = |x: f32| if x < 0.0 { -1.0 } else { 1.0 };
        let mut pa = a.center();
        let mut pb = b.center();
        for k in 0..3 {
            if k != i {
                pa += aa[k] * (a.half(k) * side(aa[k].dot(n)));
            }
            if k != j {
                pb -= ba[k] * (b.half(k) * side(ba[k].dot(n)));
            }
        }
        let (qa, qb) = closest_on_segments(pa, aa[i], a.half(i), pb, ba[j], b.half(j));
        c.push((qa + qb) * 0.5, c.depth, tolerance);
        return (c, o, tolerance);
    }
    let (o, l, k) = face;
    let n = toward_b(l);
    let mut c = Contact::along(n, o.max(0.0));
    if o < -tolerance {
        c.depth = o;
        return (c, o, tolerance);
    }
    // The reference box holds the face, its normal `nr` towards the incident box.
    let (reference, incident, nr) = if k < 3 { (a, b, n) } else { (b, a, -n) };
    let rk = k % 3;
    let face = clipped_incident_face(reference, rk, incident, nr);
    let rc = reference.center() + nr * reference.half(rk);
    let mut kept = Clipped::default();
    for &p in face.points() {
        let s = (p - rc).dot(nr);
        if s <= tolerance {
            kept.push(p - nr * (s * 0.5), (-s).max(0.0));
        }
    }
    if kept.n == 0 {
        // Rounding clipped every point away: the incident box's deepest corner.
        let p = support(incident, -nr);
        let s = (p - rc).dot(nr);
        kept.push(p - nr * (s * 0.5), (-s).max(0.0));
    }
    for q in reduced(&kept, nr) {
        c.push(kept.p[q], kept.depth[q], tolerance);
    }
    (c, o, tolerance)
}

/// Up to eight points (a quadrilateral clipped by four planes) with a depth each, on the stack.
#[derive(Clone, Copy, Default)]
struct Clipped {
    p: [Vec3; 8],
    depth: [f32; 8],
    n: usize,
}

impl Clipped {
    fn push(&mut self, p: Vec3, depth: f32) {
        if self.n < 8 {
            self.p[self.n] = p;
            self.depth[self.n] = depth;
            self.n += 1;
        }
    }

    fn points(&self) -> &[Vec3] {
        &self.p[..self.n]
    }
}

/// The corner of `f` furthest along `dir` (ties: the + side).
fn support(f: &ObbFrame, dir: Vec3) -> Vec3 {
    let mut p = f.center();
    for k in 0..3 {
        let s = if f.axis(k).dot(dir) < 0.0 { -1.0 } else { 1.0 };
        p += f.axis(k) * (s * f.half(k));
    }
    p
}

/// The face of `incident` most opposed to `nr`, clipped by the four side planes of
/// `reference`'s face on axis `rk` (the face whose outward normal is `nr`): at most 8 points.
fn clipped_incident_face(
    reference: &ObbFrame,
    rk: usize,
    incident: &ObbFrame,
    nr: Vec3,
) -> Clipped {
    // The most opposed axis, the first of equals.
    let mut j = 0;
    for x in 1..3 {
        if incident.axis(x).dot(nr).abs() > incident.axis(j).dot(nr).abs() {
            j = x;
        }
    }
    let facing = if incident.axis(j).dot(nr) > 0.0 {
        -1.0
    } else {
        1.0
    };
    let ic = incident.center() + incident.axis(j) * (facing * incident.half(j));
    let (u, v) = ((j + 1) % 3, (j + 2) % 3);
    let (eu, ev) = (
        incident.axis(u) * incident.half(u),
        incident.axis(v) * incident.half(v),
    );
    let mut polygon = Clipped::default();
    for p in [ic + eu + ev, ic - eu + ev, ic - eu - ev, ic + eu - ev] {
        polygon.push(p, 0.0);
    }
    let rc = reference.center();
    for side in [(rk + 1) % 3, (rk + 2) % 3] {
        for sign in [1.0f32, -1.0] {
            polygon = clip_side(
                &polygon,
                rc,
                reference.axis(side),
                sign,
                reference.half(side),
            );
        }
    }
    polygon
}

/// Sutherland-Hodgman: the part of the closed `polygon` where `(p - rc) . axis * sign <= half`.
fn clip_side(polygon: &Clipped, rc: Vec3, axis: Vec3, sign: f32, half: f32) -> Clipped {
    let dist = |p: Vec3| (p - rc).dot(axis) * sign - half;
    let mut out = Clipped::default();
    for k in 0..polygon.n {
        let p = polygon.p[k];
        let q = polygon.p[if k + 1 == polygon.n { 0 } else { k + 1 }];
        let (dp, dq) = (dist(p), dist(q));
        if dp <= 0.0 {
            out.push(p, 0.0);
        }
        if (dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0) {
            out.push(p + (q - p) * (dp / (dp - dq)), 0.0);
        }
    }
    out
}

/// At most four of the points (their indices) spanning the largest area in the plane of
/// `normal`: the deepest, the one furthest from it, then the furthest on either side of the
/// line through those two (the first of equals each time).
fn reduced(points: &Clipped, normal: Vec3) -> impl Iterator<Item = usize> {
    let mut chosen = [0usize, 1, 2, 3];
    let mut count = points.n.min(MAX_CONTACT_POINTS);
    if points.n > MAX_CONTACT_POINTS {
        let best = |key: &dyn Fn(usize) -> f32| {
            let mut b = 0;
            for q in 1..points.n {
                if key(q) > key(b) {
                    b = q;
                }
            }
            b
        };
        let first = best(&|q| points.depth[q]);
        let p0 = points.p[first];
        let second = best(&|q| points.p[q].distance_squared(p0));
        let p1 = points.p[second];
        let area = |q: usize| (p1 - p0).cross(points.p[q] - p0).dot(normal);
        let third = best(&|q| area(q));
        let fourth = best(&|q| -area(q));
        count = 0;
        for q in [first, second, third, fourth] {
            if !chosen[..count].contains(&q) {
                chosen[count] = q;
                count += 1;
            }
        }
    }
    chosen.into_iter().take(count)
}

/// The closest points of the segments `pa ± da * ea` and `pb ± db * eb` (unit directions).
fn closest_on_segments(pa: Vec3, da: Vec3, ea: f32, pb: Vec3, db: Vec3, eb: f32) -> (Vec3, Vec3) {
    let r = pa - pb;
    let cos = da.dot(db);
    let (c, f) = (da.dot(r), db.dot(r));
    let denom = 1.0 - cos * cos;
    let mut s = if denom > 1e-6 {
        ((cos * f - c) / denom).clamp(-ea, ea)
    } else {
        0.0
    };
    let mut t = cos * s + f;
    if t < -eb || t > eb {
        t = t.clamp(-eb, eb);
        s = (cos * t - c).clamp(-ea, ea);
    }
    (pa + da * s, pb + db * t)
}

/// The contact of two convex polygons (counter-clockwise vertices,
/// [`crate::geom::polygon::Polygon`]), in the plane z = 0: the edge of least overlap over both
/// polygons' edge normals (the first's on a tie) is the reference; the other polygon's most
/// opposed edge, clipped to the reference edge's span, gives up to two points.
/// A pair within the tolerance of touching is settled by the exact separating-axis test.
pub fn polygon_contact(a: &Polygon, b: &Polygon) -> Contact {
    vertices_contact(a.vertices(), b.vertices())
}

/// [`polygon_contact`] of two vertex loops that [`Polygon::new`] accepts (at least three
/// vertices, convex, counter-clockwise).
pub(crate) fn vertices_contact(a: &[Vec2], b: &[Vec2]) -> Contact {
    settle(polygon_contact_unsettled(a, b), || {
        crate::geom::sat::polygons_overlap(a, b)
    })
}

/// [`polygon_contact`] before its settling: with its least overlap (minus the largest
/// separation) and tolerance, as [`obb_contact_unsettled`].
fn polygon_contact_unsettled(a: &[Vec2], b: &[Vec2]) -> (Contact, f32, f32) {
    // (|bounds' span|_1, |bounds' furthest corner|_1).
    let sizes = |p: &[Vec2]| {
        let (lo, hi) = p
            .iter()
            .fold((p[0], p[0]), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        Vec2::new(
            (hi - lo).element_sum(),
            lo.abs().max(hi.abs()).element_sum(),
        )
    };
    let size = sizes(a) + sizes(b);
    // Touching within the rounding of the places too (the exact test settles such a pair); the
    // points' steps, taken from the reference vertex, within the rounding of the pair's size:
    // with the corners' part a pair 1e5 from the origin merged points 1.75 apart and kept one
    // 0.55 outside both polygons (docs/design.md §4.8).
    let tolerance = CONTACT_TOLERANCE * size.element_sum();
    let near = CONTACT_TOLERANCE * size.x;
    let (sa, ea) = max_separation(a, b);
    let (sb, eb) = max_separation(b, a);
    // b's axis where its separation is larger beyond the rounding of the pair's own size: the
    // choice does not move with the pair's place, as the corners' part of `tolerance` would (a
    // pair 65,536 from the origin took an axis 49% deeper than the least).
    let flip = sb > sa + CONTACT_TOLERANCE * size.x;
    let (reference, incident, e, separation) = if flip { (b, a, eb, sb) } else { (a, b, ea, sa) };
    let v1 = reference[e];
    let v2 = reference[(e + 1) % reference.len()];
    let nr = outward(v1, v2);
    let n = if flip { -nr } else { nr };
    let mut c = Contact::along(n.extend(0.0), (-separation).max(0.0));
    if separation > tolerance {
        c.depth = -separation;
        return (c, -separation, tolerance);
    }
    // The incident edge: the one whose normal is most opposed to nr.
    let count = incident.len();
    let k = (0..count)
        .min_by(|&x, &y| {
            let nx = outward(incident[x], incident[(x + 1) % count]).dot(nr);
            let ny = outward(incident[y], incident[(y + 1) % count]).dot(nr);
            nx.total_cmp(&ny).then(x.cmp(&y))
        })
        .expect("three vertices");
    // From v1 on: the incident edge and the reference edge's end, differences of the shapes'
    // own vertices, rounded at the pair's size and not at their place.
    let (mut w1, mut w2) = (incident[k] - v1, incident[(k + 1) % count] - v1);
    // Clip to the reference edge's span along its tangent.
    let e = v2 - v1;
    let t = e.normalize();
    for (origin, dir) in [(Vec2::ZERO, t), (e, -t)] {
        let (d1, d2) = ((w1 - origin).dot(dir), (w2 - origin).dot(dir));
        if d1 < 0.0 && d2 < 0.0 {
            continue; // rounding: keep the segment, the separations decide
        }
        if d1 < 0.0 {
            w1 = w1 + (w2 - w1) * (d1 / (d1 - d2));
        } else if d2 < 0.0 {
            w2 = w2 + (w1 - w2) * (d2 / (d2 - d1));
        }
    }
    let mut kept = [w1, w2]
        .into_iter()
        .map(|p| (p, p.dot(nr)))
        .filter(|&(_, s)| s <= near)
        .collect::<Vec<_>>();
    if kept.is_empty() {
        let deepest = incident
            .iter()
            .map(|&p| p - v1)
            .min_by(|p, q| p.dot(nr).total_cmp(&q.dot(nr)))
            .expect("three vertices");
        kept.push((deepest, deepest.dot(nr)));
    }
    for (p, s) in kept {
        c.push((v1 + (p - nr * (s * 0.5))).extend(0.0), (-s).max(0.0), near);
    }
    (c, -separation, tolerance)
}

/// Relative tolerance of a device's contacts against the CPU's (times the pair's extent,
/// `|d|_1` plus the half-extents): both in f32 on the same axes (docs/design.md §4.8).
pub const CONTACT_REL: f32 = 1.0 / 16384.0;

/// A shape whose contacts the CPU and the GPU both compute, with the scale of a pair's contact
/// rounding and its depth along any normal, which checking a device's contacts against the
/// CPU's needs (`cpu::contacts::compare_contacts`, docs/design.md §4.8). Spheres, oriented
/// boxes and convex polygons; sealed.
pub trait ContactShape: sealed::Sealed + Sync {
    /// The scale of the contact rounding of `self` with `other`: a device's depth may differ
    /// from the CPU's by [`CONTACT_REL`] of it. Boxes: `|d|_1` plus both half-extents; spheres:
    /// both centres' `|c|_1` and both radii; polygons: four times the largest `|v|_1` of their
    /// vertices.
    fn pair_extent(&self, other: &Self) -> f32;

    /// How deep `other` reaches into `self` along `normal` (from `self` towards `other`):
    /// `self`'s furthest point along it less `other`'s nearest, in f64 (polygons: in the plane,
    /// `normal`'s z ignored). The depth of a contact whose normal is `normal`; another axis at
    /// the same depth is a tie, a wrong or flipped normal reaches deeper.
    fn depth_along(&self, other: &Self, normal: Vec3) -> f64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Obb {}
    impl Sealed for super::Sphere {}
    impl Sealed for super::Polygon {}
}

impl ContactShape for Obb {
    fn pair_extent(&self, other: &Self) -> f32 {
        (other.center - self.center).abs().element_sum()
            + self.half_extents.element_sum()
            + other.half_extents.element_sum()
    }

    /// Both projected radii less the centres' distance along `normal`, in f64 (not from the
    /// corners, which f32 rounds at the size of the centres: a tie 1e5 from the origin came out
    /// 6e-3 off).
    fn depth_along(&self, other: &Self, normal: Vec3) -> f64 {
        let radius = |o: &Obb| -> f64 {
            let axes = o.axes();
            (0..3)
                .map(|k| f64::from(o.half_extents[k]) * dot64(axes[k], normal).abs())
                .sum()
        };
        radius(self) + radius(other) - (dot64(other.center, normal) - dot64(self.center, normal))
    }
}

impl ContactShape for Sphere {
    fn pair_extent(&self, other: &Self) -> f32 {
        self.center.abs().element_sum()
            + other.center.abs().element_sum()
            + self.radius
            + other.radius
    }

    fn depth_along(&self, other: &Self, normal: Vec3) -> f64 {
        f64::from(self.radius) + f64::from(other.radius)
            - (dot64(other.center, normal) - dot64(self.center, normal))
    }
}

impl ContactShape for Polygon {
    fn pair_extent(&self, other: &Self) -> f32 {
        let far = |p: &Polygon| {
            p.vertices()
                .iter()
                .map(|v| v.abs().element_sum())
                .fold(0.0, f32::max)
        };
        4.0 * far(self).max(far(other))
    }

    fn depth_along(&self, other: &Self, normal: Vec3) -> f64 {
        let along = |v: &Vec2| dot64(v.extend(0.0), normal.with_z(0.0));
        depth_along(
            self.vertices().iter().map(along),
            other.vertices().iter().map(along),
        )
    }
}

/// `a`'s largest projection less `b`'s smallest.
fn depth_along(a: impl Iterator<Item = f64>, b: impl Iterator<Item = f64>) -> f64 {
    a.fold(f64::NEG_INFINITY, f64::max) - b.fold(f64::INFINITY, f64::min)
}

/// `v . n` in f64.
fn dot64(v: Vec3, n: Vec3) -> f64 {
    v.as_dvec3().dot(n.as_dvec3())
}

/// A device's contacts of `pairs` settled as the CPU settles its own: a pair whose depth lies
/// within [`CONTACT_REL`] of the pair's extent ([`ContactShape::pair_extent`] of `shapes`) of 0
/// takes `settled` (the CPU's contact, exact about touching) where that decides touching
/// otherwise (the device's f32 calls a pair within its tolerance touching). Few pairs lie so
/// near.
pub(crate) fn settle_device_contacts<S: ContactShape>(
    contacts: &mut [Contact],
    pairs: &[[u32; 2]],
    shapes: &[S],
    settled: impl Fn(usize, usize) -> Contact,
) {
    for (c, &[i, j]) in contacts.iter_mut().zip(pairs) {
        let (i, j) = (i as usize, j as usize);
        if c.depth.abs() <= CONTACT_REL * shapes[i].pair_extent(&shapes[j]) {
            let cpu = settled(i, j);
            if (cpu.count > 0) != (c.count > 0) {
                *c = cpu;
            }
        }
    }
}

/// A contact whose least overlap `least` lies within `tolerance` of 0 (where the f32 test
/// cannot tell touching from apart) with its pair's touching decided by `touches` (the exact
/// test): a pair that does not touch gets no points and depth `least`, or `-0.0` where rounding
/// made it 0 or more (docs/design.md §4.8).
pub(crate) fn settle(
    (mut c, least, tolerance): (Contact, f32, f32),
    touches: impl FnOnce() -> bool,
) -> Contact {
    if c.count > 0 && least <= tolerance && !touches() {
        c.count = 0;
        c.depth = least.min(-0.0);
    }
    c
}

/// The unit outward normal of the counter-clockwise edge `v1 -> v2`.
/// The edge is first scaled to a largest component of 1: the square of an edge shorter than
/// about 1e-19 underflows f32 (a corner cut at 1e-23 once gave an infinite normal, and its
/// polygon no contact), of one longer than 1e19 overflows. `outward` in `shaders/contacts.wgsl`.
fn outward(v1: Vec2, v2: Vec2) -> Vec2 {
    let e = v2 - v1;
    let e = e / e.abs().max_element();
    Vec2::new(e.y, -e.x).normalize()
}

/// The edge of `p` along whose outward normal `q` lies furthest out (the largest of the least
/// signed distances of `q`'s vertices), and that distance (negative: overlap).
fn max_separation(p: &[Vec2], q: &[Vec2]) -> (f32, usize) {
    let mut best = (f32::NEG_INFINITY, 0);
    for i in 0..p.len() {
        let v1 = p[i];
        let n = outward(v1, p[(i + 1) % p.len()]);
        let s = q
            .iter()
            .map(|v| (*v - v1).dot(n))
            .fold(f32::INFINITY, f32::min);
        if s > best.0 {
            best = (s, i);
        }
    }
    best
}

#[cfg(test)]
mod tests;
