//! The thesis's sector tests (docs/design.md §5, chapter 2): circle (2.4), rectangle and any convex
//! polygon (2.3), 2D capsule (2.6), sphere (2.5) and the approximate 3D capsule (2.7).
//!
//! Two small corrections to the thesis, both in its radial conditions: (r - rc)^2 <= rho^2 is
//! written as rho >= r - rc, so that a circle larger than the inner hole (rc > r) still counts;
//! and the polygon test checks a boundary point of each shape inside the other (the thesis's
//! "any point" must be a boundary point for annuli: a polygon can cover the hole only).

use crate::geom::capsule::{Capsule2, Capsule3};
use crate::geom::primitives2d::{
    Rect2, point_in_convex_polygon, point_segment_distance, segment_circle_intersections,
    segment_segment_distance, segments_intersect,
};
use crate::geom::sector::Sector;
use crate::geom::sector::sector2d::Sector2;
use crate::geom::sphere::Sphere;
use glam::{Vec2, Vec3, Vec3Swizzles};
use std::f32::consts::FRAC_PI_2;

impl Sector2 {
    /// Thesis 2.4: circle (centre, radius). Inside the wedge the radial band widened by the
    /// radius decides; outside it, the distance to the two straight edges. Exact.
    pub fn overlaps_circle(&self, center: Vec2, radius: f32) -> bool {
        self.overlaps_circle_local(self.to_local(center), radius)
    }

    /// [`Self::overlaps_circle`] with the centre in local coordinates.
    pub fn overlaps_circle_local(&self, p: Vec2, radius: f32) -> bool {
        if self.in_wedge_local(p) {
            let rho2 = p.length_squared();
            let outer = self.outer_radius + radius;
            let inner = self.inner_radius - radius;
            return rho2 <= outer * outer && (inner <= 0.0 || rho2 >= inner * inner);
        }
        let (g, h) = self.edge_directions();
        let (r, rr) = (self.inner_radius, self.outer_radius);
        // Thesis 2.9.4 on both edges.
        point_segment_distance(p, r * g, rr * g) <= radius
            || point_segment_distance(p, r * h, rr * h) <= radius
    }

    /// Thesis 2.3: rectangle. Exact.
    pub fn overlaps_rectangle(&self, rect: &Rect2) -> bool {
        self.overlaps_convex_polygon(&rect.corners())
    }

    /// Thesis 2.3 generalised to any convex polygon (vertices in order; flat polygons allowed):
    /// a polygon edge crossing a straight edge (2.9.1) or an arc (2.9.2, crossing point inside
    /// the wedge), or a boundary point of one inside the other (2.2, 2.9.3). Exact.
    pub fn overlaps_convex_polygon(&self, vertices: &[Vec2]) -> bool {
        if vertices.is_empty() {
            return false;
        }
        if vertices.iter().any(|v| self.contains_point(*v)) {
            return true;
        }
        if point_in_convex_polygon(self.corner(), vertices) {
            return true;
        }
        let n = vertices.len();
        let edge_count = if n >= 3 { n } else { n - 1 };
        let sector_edges = self.edges();
        for i in 0..edge_count {
            let (a, b) = (vertices[i], vertices[(i + 1) % n]);
            if sector_edges
                .iter()
                .any(|&(e, f)| segments_intersect(a, b, e, f))
            {
                return true;
            }
            if self.segment_crosses_arcs(a, b) {
                return true;
            }
        }
        false
    }

    /// True when segment AB (world) meets the inner or outer arc.
    pub(crate) fn segment_crosses_arcs(&self, a: Vec2, b: Vec2) -> bool {
        for radius in [self.inner_radius, self.outer_radius] {
            let (s, count) = segment_circle_intersections(a, b, self.center, radius);
            for &si in &s[..count] {
                if self.in_wedge_local(self.to_local(a.lerp(b, si))) {
                    return true;
                }
            }
        }
        false
    }

    /// Thesis 2.6: capsule. The parameter ranges where the moving circle's centre is inside the
    /// widened radial band (eq. 2.15-2.17) and inside the wedge (eq. 2.18-2.20) are intersected
    /// on [0, 1]; failing that, the capsule segment's distance to the straight edges decides
    /// (2.9.5). Exact.
    pub fn overlaps_capsule(&self, capsule: &Capsule2) -> bool {
        let s = self.to_local(capsule.start);
        let e = self.to_local(capsule.end);
        self.overlaps_capsule_local(s, e, capsule.radius)
    }

    /// [`Self::overlaps_capsule`] with the segment in local coordinates.
    pub fn overlaps_capsule_local(&self, s: Vec2, e: Vec2, rc: f32) -> bool {
        let v = e - s;
        let radial = radial_ranges(s, v, self.inner_radius - rc, self.outer_radius + rc);
        if radial.count > 0 {
            let angular = self.wedge_ranges(s, v);
            for a in &radial.items[..radial.count] {
                for b in &angular.items[..angular.count] {
                    let lo = a.0.max(b.0).max(0.0);
                    let hi = a.1.min(b.1).min(1.0);
                    if lo <= hi {
                        return true;
                    }
                }
            }
        }
        let (g, h) = self.edge_directions();
        let (r, rr) = (self.inner_radius, self.outer_radius);
        segment_segment_distance(s, e, r * g, rr * g) <= rc
            || segment_segment_distance(s, e, r * h, rr * h) <= rc
    }

    /// The t-ranges where S + tV lies in the wedge: G'z >= 0 and/or H'z <= 0 (eq. 2.20).
    fn wedge_ranges(&self, s: Vec2, v: Vec2) -> Ranges {
        let all = Ranges::one(f32::NEG_INFINITY, f32::INFINITY);
        if self.is_full_ring() {
            return all;
        }
        let (g, h) = self.edge_directions();
        // G'z = P x G >= 0 and -H'z = -(P x H) >= 0, both linear in t.
        let left = linear_range(s.perp_dot(g), v.perp_dot(g));
        let right = linear_range(-s.perp_dot(h), -v.perp_dot(h));
        if self.half_angle < FRAC_PI_2 {
            match (left, right) {
                (Some(a), Some(b)) if a.0.max(b.0) <= a.1.min(b.1) => {
                    Ranges::one(a.0.max(b.0), a.1.min(b.1))
                }
                _ => Ranges::default(),
            }
        } else {
            let mut out = Ranges::default();
            for r in [left, right].into_iter().flatten() {
                out.push(r.0, r.1);
            }
            out
        }
    }
}

impl Sector {
    /// Thesis 2.5: sphere. Clamp to the slab (eq. 2.11), take the largest circle of the sphere
    /// inside the slab (eq. 2.12) and run the circle test. Exact.
    pub fn overlaps_sphere(&self, sphere: &Sphere) -> bool {
        self.overlaps_sphere_local(self.to_local(sphere.center), sphere.radius)
    }

    /// [`Self::overlaps_sphere`] with the centre in local coordinates.
    pub fn overlaps_sphere_local(&self, q: Vec3, rs: f32) -> bool {
        let above = q.z.abs() - self.half_thickness;
        if above > rs {
            return false;
        }
        let rm = if above <= 0.0 {
            rs
        } else {
            (rs * rs - above * above).max(0.0).sqrt()
        };
        Sector2::profile(self).overlaps_circle_local(q.xy(), rm)
    }

    /// Thesis 2.7: capsule in 3D, **approximate** (over-detects by design, never misses). The
    /// capsule's part inside the slab, projected on the plane, is a "pseudo capsule": discs of
    /// radius Rm(t) (eq. 2.12) centred on the projected axis. It is enclosed by the tightest 2D
    /// capsule along the projected axis: radius rc' = max Rm (eq. 2.22), ends where its caps
    /// touch the pseudo capsule's extreme points (what eq. 2.23-2.31 compute; here found as the
    /// maximum of a concave function over a few candidates). Then the 2D capsule test (2.6).
    pub fn overlaps_capsule_approx(&self, capsule: &Capsule3) -> bool {
        let s = self.to_local(capsule.start);
        let e = self.to_local(capsule.end);
        let rc = capsule.radius;
        let h = self.half_thickness;
        let profile = Sector2::profile(self);
        // Eq. 2.21: the capsule misses the slab.
        if s.z.min(e.z) - rc > h || s.z.max(e.z) + rc < -h {
            return false;
        }
        let v = e - s;
        // Parameter range [t0, t1] where the axis is within rc of the slab.
        let (t0, t1) = if v.z == 0.0 {
            (0.0f32, 1.0f32)
        } else {
            let ta = (h + rc - s.z) / v.z;
            let tb = (-h - rc - s.z) / v.z;
            (ta.min(tb).max(0.0), ta.max(tb).min(1.0))
        };
        if t0 > t1 {
            return false;
        }
        let disc_radius = |t: f32| {
            let outside = ((s.z + t * v.z).abs() - h).max(0.0);
            (rc * rc - outside * outside).max(0.0).sqrt()
        };
        // Eq. 2.22: the axis crosses the slab -> rc; otherwise the larger end disc.
        let crosses = s.z.min(e.z) <= h && s.z.max(e.z) >= -h;
        let rc2 = if crosses {
            rc
        } else {
            disc_radius(t0).max(disc_radius(t1))
        };
        let v2 = v.xy();
        let len = v2.length();
        if len <= 1e-6 * (rc + v.length()) {
            // Axis parallel to U: the pseudo capsule is a disc.
            let c = (s + 0.5 * (t0 + t1) * v).xy();
            return profile.overlaps_circle_local(c, rc2 + len);
        }
        let dir = v2 / len;
        let base = s.xy().dot(dir);
        // u(t) + Rm(t) and -u(t) + Rm(t) are concave (Rm is a concave function of t): their
        // maxima are at t0, t1, the slab crossings, or the stationary points of the caps.
        let extent = |slope: f32| {
            let mut best = f32::MIN;
            let mut consider = |t: f32| {
                let t = t.clamp(t0, t1);
                best = best.max(slope * t + disc_radius(t));
            };
            consider(t0);
            consider(t1);
            if v.z != 0.0 {
                let w = slope.abs() * rc / (slope * slope + v.z * v.z).sqrt();
                for z in [h, -h, h + w, -h - w] {
                    consider((z - s.z) / v.z);
                }
            }
            best
        };
        let hi = base + extent(len) - rc2;
        let lo = -(extent(-len) - base) + rc2;
        let (lo, hi) = if lo > hi {
            let mid = 0.5 * (lo + hi);
            (mid, mid)
        } else {
            (lo, hi)
        };
        let at = |k: f32| s.xy() + (k - base) * dir;
        profile.overlaps_capsule_local(at(lo), at(hi), rc2)
    }
}

/// Up to two closed parameter intervals.
#[derive(Clone, Copy, Debug, Default)]
struct Ranges {
    items: [(f32, f32); 2],
    count: usize,
}

impl Ranges {
    fn one(lo: f32, hi: f32) -> Self {
        Self {
            items: [(lo, hi), (0.0, 0.0)],
            count: 1,
        }
    }

    fn push(&mut self, lo: f32, hi: f32) {
        self.items[self.count] = (lo, hi);
        self.count += 1;
    }
}

/// The t-range where alpha + beta t >= 0, or `None`.
fn linear_range(alpha: f32, beta: f32) -> Option<(f32, f32)> {
    if beta > 0.0 {
        Some((-alpha / beta, f32::INFINITY))
    } else if beta < 0.0 {
        Some((f32::NEG_INFINITY, -alpha / beta))
    } else if alpha >= 0.0 {
        Some((f32::NEG_INFINITY, f32::INFINITY))
    } else {
        None
    }
}

/// The t-ranges where inner <= |S + tV| <= outer (eq. 2.15-2.17); `inner <= 0` means no inner
/// bound. The three cases of the thesis's discriminants D_R, D_r.
fn radial_ranges(s: Vec2, v: Vec2, inner: f32, outer: f32) -> Ranges {
    let a = v.dot(v);
    let b = s.dot(v);
    let c = s.dot(s);
    if a == 0.0 {
        let ok = c <= outer * outer && (inner <= 0.0 || c >= inner * inner);
        return if ok {
            Ranges::one(f32::NEG_INFINITY, f32::INFINITY)
        } else {
            Ranges::default()
        };
    }
    let roots = |rho: f32| {
        let disc = b * b - a * (c - rho * rho);
        (disc >= 0.0).then(|| {
            let root = disc.sqrt();
            ((-b - root) / a, (-b + root) / a)
        })
    };
    let Some((a_r, b_r)) = roots(outer) else {
        return Ranges::default();
    };
    if inner <= 0.0 {
        return Ranges::one(a_r, b_r);
    }
    match roots(inner) {
        None => Ranges::one(a_r, b_r),
        Some((a_i, b_i)) => {
            let mut out = Ranges::one(a_r, a_i);
            out.push(b_i, b_r);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circle_larger_than_the_hole_overlaps() {
        // The thesis's literal (r - rc)^2 <= rho^2 would reject this circle covering the hole.
        let s = Sector2::local(0.3, 2.0, 3.0);
        assert!(s.overlaps_circle_local(Vec2::new(0.1, 0.0), 2.5));
        assert!(!s.overlaps_circle_local(Vec2::new(0.1, 0.0), 1.5));
    }

    #[test]
    fn capsule_beside_an_edge_is_caught_by_the_segment_distance() {
        // Thesis fig. 2.8: no centre of the moving circle is in the wedge; only 2.9.5 sees it.
        let s = Sector2::local(0.2, 1.0, 3.0);
        let (g, _) = s.edge_directions();
        let side = g.perp() * 0.1;
        let c = |rc| Capsule2::new(1.5 * g + side, 2.5 * g + side, rc);
        assert!(s.overlaps_capsule(&c(0.11)));
        assert!(!s.overlaps_capsule(&c(0.09)));
    }

    #[test]
    fn sphere_straddling_the_slab_face() {
        let s = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.5, 1.0, 2.0, 0.5).unwrap();
        // Centre 0.8 above the slab face: the slice radius is sqrt(1 - 0.64) = 0.6.
        let sphere = |x: f32| Sphere::new(Vec3::new(x, 0.0, 1.3), 1.0);
        assert!(s.overlaps_sphere(&sphere(2.55)));
        assert!(!s.overlaps_sphere(&sphere(2.65)));
    }

    #[test]
    fn approximate_capsule_is_exact_for_a_capsule_inside_the_slab_or_along_the_axis() {
        let s = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.5, 1.0, 2.0, 0.5).unwrap();
        let flat = Capsule3::new(Vec3::new(2.5, -1.0, 0.2), Vec3::new(2.5, 1.0, 0.2), 0.45);
        assert!(!s.overlaps_capsule_approx(&flat));
        let flat_hit = Capsule3::new(Vec3::new(2.4, -1.0, 0.2), Vec3::new(2.4, 1.0, 0.2), 0.45);
        assert!(s.overlaps_capsule_approx(&flat_hit));
        let vertical = Capsule3::new(Vec3::new(1.5, 0.0, 3.0), Vec3::new(1.5, 0.0, 5.0), 0.6);
        assert!(!s.overlaps_capsule_approx(&vertical));
        let vertical_hit = Capsule3::new(Vec3::new(1.5, 0.0, 3.0), Vec3::new(1.5, 0.0, 1.0), 0.6);
        assert!(s.overlaps_capsule_approx(&vertical_hit));
    }
}
