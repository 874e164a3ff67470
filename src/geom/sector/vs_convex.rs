//! Sector against any support-mapped convex body, and sector vs sector with non-parallel axes
//! (docs/design.md §5.8), by GJK over the sector's convex pieces.
//!
//! A sector splits into at most four sub-fans of at most a quarter turn each; the convex hull of
//! such an annular sub-fan is its outer arc and the two ends of its inner arc, extruded by the
//! half-thickness. Its support function is the outer arc's (the arc point along the direction
//! when the direction lies in the fan, else the better end), the inner ends' and +-h along U.
//! The union of the hulls holds the sector and adds only the lens between each inner arc and its
//! chord, so a test through them never misses and over-detects by that lens. GJK on the
//! Minkowski difference decides each piece exactly up to a tolerance, which is taken on the side
//! of overlap; a run that does not converge counts as overlap.

use super::Sector;
use super::body::ConvexBody;
use glam::DVec3;
use std::f64::consts::{FRAC_PI_2, PI};

/// One convex piece of a sector: the hull of an annular sub-fan.
#[derive(Clone, Copy, Debug)]
pub struct SectorPiece {
    origin: DVec3,
    e1: DVec3,
    e2: DVec3,
    axis: DVec3,
    /// Angles (about e1 towards e2) of the sub-fan's edges, lo < hi <= lo + pi / 2.
    lo: f64,
    hi: f64,
    inner: f64,
    outer: f64,
    half_thickness: f64,
}

impl SectorPiece {
    /// The farthest point of the piece along `d`.
    pub fn support(&self, d: DVec3) -> DVec3 {
        let (x, y, z) = (d.dot(self.e1), d.dot(self.e2), d.dot(self.axis));
        let dir = |t: f64| (t.cos(), t.sin());
        let phi = y.atan2(x);
        // The angle of d relative to lo, in [0, 2 pi).
        let rel = (phi - self.lo).rem_euclid(2.0 * PI);
        let best = |c: f64, s: f64, r: f64, b: &mut (f64, f64, f64)| {
            let v = r * (c * x + s * y);
            if v > b.2 {
                *b = (r * c, r * s, v);
            }
        };
        let mut b = (0.0, 0.0, f64::MIN);
        if rel <= self.hi - self.lo && (x != 0.0 || y != 0.0) {
            let (c, s) = dir(phi);
            best(c, s, self.outer, &mut b);
        }
        for t in [self.lo, self.hi] {
            let (c, s) = dir(t);
            best(c, s, self.outer, &mut b);
            best(c, s, self.inner, &mut b);
        }
        let h = if z >= 0.0 {
            self.half_thickness
        } else {
            -self.half_thickness
        };
        self.origin + self.e1 * b.0 + self.e2 * b.1 + self.axis * h
    }
}

impl Sector {
    /// The sector's convex pieces (one to four).
    pub fn convex_pieces(&self) -> Vec<SectorPiece> {
        let axis = self.axis.as_dvec3();
        let e1 = self.centre_axis.as_dvec3();
        let e2 = axis.cross(e1);
        let theta = (self.half_angle as f64).min(PI);
        let count = ((2.0 * theta) / FRAC_PI_2).ceil().clamp(1.0, 4.0) as usize;
        let width = 2.0 * theta / count as f64;
        (0..count)
            .map(|k| SectorPiece {
                origin: self.origin.as_dvec3(),
                e1,
                e2,
                axis,
                lo: -theta + k as f64 * width,
                hi: -theta + (k + 1) as f64 * width,
                inner: self.inner_radius as f64,
                outer: self.outer_radius as f64,
                half_thickness: self.half_thickness as f64,
            })
            .collect()
    }

    /// Sector against any convex body; never misses. Exact for a box (the sector-box test of
    /// docs/design.md §5.3) and a ball (a capsule of zero length: the signed-distance test);
    /// otherwise GJK against the convex pieces, over-detecting by the lens between each piece's
    /// inner arc and its chord.
    pub fn overlaps_convex(&self, body: &ConvexBody) -> bool {
        match body {
            ConvexBody::Box(frame) => return self.overlaps_box(frame),
            ConvexBody::Capsule { a, b, radius } if a == b => {
                return self.overlaps_sphere_exact(&crate::geom::sphere::Sphere::new(*a, *radius));
            }
            _ => {}
        }
        let scale = self.scale() + body.support(glam::Vec3::X).length() as f64;
        let other = |d: DVec3| body.support(d.as_vec3()).as_dvec3();
        self.convex_pieces()
            .iter()
            .any(|p| gjk_overlap(&|d| p.support(d), &other, scale))
    }

    /// Sector vs sector through the convex pieces of both: never misses, for any axes.
    pub fn overlaps_sector_pieces(&self, other: &Sector) -> bool {
        let scale = self.scale() + other.scale();
        let mine = self.convex_pieces();
        let theirs = other.convex_pieces();
        mine.iter().any(|a| {
            theirs
                .iter()
                .any(|b| gjk_overlap(&|d| a.support(d), &|d| b.support(d), scale))
        })
    }

    fn scale(&self) -> f64 {
        (self.origin.length() + self.outer_radius + self.half_thickness) as f64 + 1.0
    }
}

/// Whether two convex sets given by support functions meet (GJK on their Minkowski difference,
/// closest points by checking every face, edge and vertex of the simplex). Distances below
/// 1e-9 of `scale` count as contact; a run that does not converge in 64 steps counts as contact.
pub(crate) fn gjk_overlap(
    a: &dyn Fn(DVec3) -> DVec3,
    b: &dyn Fn(DVec3) -> DVec3,
    scale: f64,
) -> bool {
    let tol = 1e-9 * scale;
    let support = |d: DVec3| a(d) - b(-d);
    let mut simplex: Vec<DVec3> = vec![support(DVec3::X)];
    for _ in 0..64 {
        let (v, keep) = closest_on_simplex(&simplex);
        if v.length() <= tol {
            return true;
        }
        simplex = keep;
        let w = support(-v);
        // Every point of the difference has x . (-v) <= w . (-v): below zero, a separating plane.
        if w.dot(-v) < -tol * v.length() {
            return false;
        }
        // No progress towards the origin: |v| is the distance, and it is above the tolerance.
        if v.length_squared() - v.dot(w) <= 1e-12 * v.length_squared() {
            return false;
        }
        simplex.push(w);
    }
    true
}

/// The point of the simplex (1 to 4 points) nearest the origin, and the points of the smallest
/// face, edge or vertex holding it (the whole simplex when the origin is inside it).
fn closest_on_simplex(s: &[DVec3]) -> (DVec3, Vec<DVec3>) {
    match s.len() {
        1 => (s[0], s.to_vec()),
        2 => segment_closest(s[0], s[1]),
        3 => triangle_closest(s[0], s[1], s[2]),
        _ => {
            let (a, b, c, d) = (s[0], s[1], s[2], s[3]);
            let vol = (b - a).dot((c - a).cross(d - a));
            if vol.abs() > 1e-18 {
                // Inside iff the origin is on the inner side of every face.
                let side = |p: DVec3, q: DVec3, r: DVec3, o: DVec3| {
                    let n = (q - p).cross(r - p);
                    (n.dot(-p) >= 0.0) == (n.dot(o - p) >= 0.0)
                };
                if side(a, b, c, d) && side(a, b, d, c) && side(a, c, d, b) && side(b, c, d, a) {
                    return (DVec3::ZERO, s.to_vec());
                }
            }
            [(a, b, c), (a, b, d), (a, c, d), (b, c, d)]
                .into_iter()
                .map(|(p, q, r)| triangle_closest(p, q, r))
                .min_by(|x, y| x.0.length_squared().total_cmp(&y.0.length_squared()))
                .unwrap_or((a, vec![a]))
        }
    }
}

fn segment_closest(a: DVec3, b: DVec3) -> (DVec3, Vec<DVec3>) {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 == 0.0 {
        return (a, vec![a]);
    }
    let t = -a.dot(ab) / len2;
    if t <= 0.0 {
        (a, vec![a])
    } else if t >= 1.0 {
        (b, vec![b])
    } else {
        (a + ab * t, vec![a, b])
    }
}

/// The regions of triangle abc's vertex `v` and edge a-v in [`triangle_closest`], for `v = a + e`
/// and the other edge `f` from a, with `(de, df) = (e.(-a), f.(-a))`: the closest point and its
/// simplex when the origin is in one of them, else `(e.(-v), f.(-v))` and the barycentric
/// numerator of the third vertex (the same products in either of the two symmetric roles).
fn vertex_or_edge(
    a: DVec3,
    v: DVec3,
    e: DVec3,
    f: DVec3,
    (de, df): (f64, f64),
) -> Result<(DVec3, Vec<DVec3>), (f64, f64, f64)> {
    let vp = -v;
    let (ve, vf) = (e.dot(vp), f.dot(vp));
    if ve >= 0.0 && vf <= ve {
        return Ok((v, vec![v]));
    }
    let numerator = de * vf - ve * df;
    if numerator <= 0.0 && de >= 0.0 && ve <= 0.0 {
        return Ok((a + e * (de / (de - ve)), vec![a, v]));
    }
    Err((ve, vf, numerator))
}

/// Closest point of triangle abc to the origin (Voronoi regions of vertices, edges, face).
fn triangle_closest(a: DVec3, b: DVec3, c: DVec3) -> (DVec3, Vec<DVec3>) {
    let (ab, ac, ap) = (b - a, c - a, -a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, vec![a]);
    }
    let (d3, d4, vc) = match vertex_or_edge(a, b, ab, ac, (d1, d2)) {
        Ok(closest) => return closest,
        Err(products) => products,
    };
    // c's roles swapped: (d6, d5) = (ac.(-c), ab.(-c)), and d2 d5 - d6 d1 = d5 d2 - d1 d6.
    let (d6, d5, vb) = match vertex_or_edge(a, c, ac, ab, (d2, d1)) {
        Ok(closest) => return closest,
        Err(products) => products,
    };
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return (
            b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))),
            vec![b, c],
        );
    }
    let denom = va + vb + vc;
    if denom == 0.0 {
        // A degenerate triangle: its edges decide.
        return [
            segment_closest(a, b),
            segment_closest(b, c),
            segment_closest(a, c),
        ]
        .into_iter()
        .min_by(|x, y| x.0.length_squared().total_cmp(&y.0.length_squared()))
        .unwrap_or((a, vec![a]));
    }
    let (v, w) = (vb / denom, vc / denom);
    (a + ab * v + ac * w, vec![a, b, c])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::sector::body::ConvexHull;
    use crate::geom::test_util::for_each_drawn;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn unit(rng: &mut ChaCha8Rng) -> Vec3 {
        loop {
            let v = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            if v.length() > 0.2 && v.length() < 1.0 {
                return v.normalize();
            }
        }
    }

    fn random_sector(rng: &mut ChaCha8Rng) -> Sector {
        let axis = unit(rng);
        let centre_axis = axis.any_orthonormal_vector();
        let inner = rng.random_range(0.0..3.0);
        Sector::new(
            Vec3::new(rng.random_range(-1.0..1.0), 0.0, 0.0),
            axis,
            centre_axis,
            rng.random_range(0.1..PI as f32),
            inner,
            inner + rng.random_range(0.5..4.0),
            rng.random_range(0.2..2.0),
        )
        .unwrap()
    }

    #[test]
    fn gjk_separates_and_joins_simple_shapes() {
        let ball = |c: DVec3, r: f64| move |d: DVec3| c + d.normalize_or_zero() * r;
        let (a, b) = (ball(DVec3::ZERO, 1.0), ball(DVec3::new(2.5, 0.0, 0.0), 1.0));
        assert!(!gjk_overlap(&a, &b, 10.0));
        let c = ball(DVec3::new(1.9, 0.3, -0.2), 1.0);
        assert!(gjk_overlap(&a, &c, 10.0));
        // A point inside a cube.
        let cube = |d: DVec3| DVec3::new(d.x.signum(), d.y.signum(), d.z.signum());
        assert!(gjk_overlap(&cube, &|_| DVec3::new(0.3, -0.2, 0.9), 10.0));
        assert!(!gjk_overlap(&cube, &|_| DVec3::new(0.3, -1.2, 0.9), 10.0));
    }

    #[test]
    fn pieces_hold_the_sector_and_gjk_never_misses_a_box() {
        // Boxes as hulls through GJK against the exact sector-box test.
        let (mut exact_yes, mut gjk_yes) = (0, 0);
        for_each_drawn(4, 3000, random_sector, |s, rng| {
            let c = Vec3::new(
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
            );
            let (u, v) = unit(rng).any_orthonormal_pair();
            let axes = [u, v, u.cross(v)];
            let half = Vec3::new(
                rng.random_range(0.1..2.0),
                rng.random_range(0.1..2.0),
                rng.random_range(0.1..2.0),
            );
            let bx = ConvexBody::Box(crate::geom::obb::ObbFrame::from_parts(c, axes, half));
            let corners: Vec<Vec3> = (0..8)
                .map(|k| {
                    let sg = |b: usize| if k >> b & 1 == 0 { -1.0 } else { 1.0 };
                    c + axes[0] * sg(0) * half.x
                        + axes[1] * sg(1) * half.y
                        + axes[2] * sg(2) * half.z
                })
                .collect();
            let hull = ConvexBody::Hull(ConvexHull::new(&corners).unwrap());
            let exact = s.overlaps_convex(&bx);
            let through_gjk = s.overlaps_convex(&hull);
            exact_yes += exact as u32;
            gjk_yes += through_gjk as u32;
            assert!(!exact || through_gjk, "missed {s:?} {bx:?}");
        });
        eprintln!("boxes: exact {exact_yes} yes, GJK over the pieces {gjk_yes} yes of 3000");
        assert!(exact_yes > 300 && gjk_yes < exact_yes + exact_yes / 5);
    }

    #[test]
    fn sector_pairs_through_pieces_never_miss_and_beat_the_bounding_boxes() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (mut witnessed, mut pieces, mut boxes) = (0, 0, 0);
        for _ in 0..1500 {
            let a = random_sector(&mut rng);
            let mut b = random_sector(&mut rng);
            b.origin += Vec3::new(
                rng.random_range(-5.0..5.0),
                rng.random_range(-5.0..5.0),
                0.0,
            );
            // Points of b: a witness inside a proves contact.
            let mut witness = false;
            for _ in 0..400 {
                let t = rng.random_range(-b.half_angle..=b.half_angle);
                let r = rng.random_range(b.inner_radius..=b.outer_radius);
                let z = rng.random_range(-b.half_thickness..=b.half_thickness);
                let local = Vec3::new(r * t.cos(), r * t.sin(), z);
                if a.contains_point(b.to_world(local)) {
                    witness = true;
                    break;
                }
            }
            let by_pieces = a.overlaps_sector_pieces(&b);
            let by_boxes = a.overlaps_box(&b.bounding_box()) && b.overlaps_box(&a.bounding_box());
            assert!(!witness || (by_pieces && by_boxes), "{a:?} {b:?}");
            witnessed += witness as u32;
            pieces += by_pieces as u32;
            boxes += by_boxes as u32;
        }
        eprintln!("sector pairs: {witnessed} witnessed, pieces {pieces} yes, boxes {boxes} yes");
        assert!(witnessed > 100 && pieces < boxes);
    }
}
