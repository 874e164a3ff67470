//! The 2D annular sector (the thesis's 2D "fan", and the cross-section of the 3D sector): point
//! test, boundary pieces and exact signed distance.
//!
//! Local frame: centre at the origin, centre axis along +x. A point at radius rho and angle phi
//! is inside iff r <= rho <= R and |phi| <= theta (rho = 0 counts as inside when r = 0).

use crate::error::Result;
use crate::geom::primitives2d::{closest_parameter_on_segment, scaled_length};
use crate::geom::sector::Sector;
use glam::Vec2;
use std::f32::consts::PI;

/// A 2D annular sector: centre, unit centre axis, half-angle in [0, PI], radii 0 <= r <= R.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sector2 {
    /// The centre (apex of the fan).
    pub center: Vec2,
    /// Unit direction of the fan's centre axis A.
    pub axis: Vec2,
    /// Half-angle theta around the centre axis, in radians, in [0, PI].
    pub half_angle: f32,
    /// Inner radius r (>= 0).
    pub inner_radius: f32,
    /// Outer radius R (>= r).
    pub outer_radius: f32,
}

impl Sector2 {
    /// Validates and builds a sector: finite fields, unit axis (within 1e-4), 0 <= theta <= PI,
    /// 0 <= r <= R.
    pub fn new(
        center: Vec2,
        axis: Vec2,
        half_angle: f32,
        inner_radius: f32,
        outer_radius: f32,
    ) -> Result<Self> {
        let sector = Self {
            center,
            axis,
            half_angle,
            inner_radius,
            outer_radius,
        };
        match sector.problem() {
            Some(problem) => crate::geom::invalid("2D sector", problem),
            None => Ok(sector),
        }
    }

    /// What is wrong with this sector, if anything (the rules of [`Self::new`]).
    fn problem(&self) -> Option<&'static str> {
        let finite = self.center.is_finite()
            && self.axis.is_finite()
            && [self.half_angle, self.inner_radius, self.outer_radius]
                .iter()
                .all(|v| v.is_finite());
        if !finite {
            return Some("non-finite field");
        }
        if (self.axis.length() - 1.0).abs() > 1e-4 {
            return Some("axis must be a unit vector");
        }
        super::angle_or_radii_problem(self.half_angle, self.inner_radius, self.outer_radius)
    }

    /// A sector in its own local frame (centre at the origin, axis +x).
    pub const fn local(half_angle: f32, inner_radius: f32, outer_radius: f32) -> Self {
        Self {
            center: Vec2::ZERO,
            axis: Vec2::X,
            half_angle,
            inner_radius,
            outer_radius,
        }
    }

    /// The cross-section of a 3D sector, in that sector's local frame.
    pub fn profile(s: &Sector) -> Self {
        Self::local(s.half_angle, s.inner_radius, s.outer_radius)
    }

    /// World point to local coordinates (x along the axis).
    #[inline]
    pub fn to_local(&self, p: Vec2) -> Vec2 {
        let d = p - self.center;
        Vec2::new(d.dot(self.axis), self.axis.perp_dot(d))
    }

    /// Local point back to world.
    #[inline]
    pub fn to_world(&self, q: Vec2) -> Vec2 {
        self.center + q.x * self.axis + q.y * self.axis.perp()
    }

    /// Whether the half-angle reaches PI (an annulus, no angular bound).
    #[inline]
    pub fn is_full_ring(&self) -> bool {
        self.half_angle >= PI
    }

    /// Angular test in local coordinates: `q` turned from the centre axis by at most the
    /// half-angle, `|q.y| cos(theta) <= q.x sin(theta)` (the side of the edge direction `G`
    /// it lies on). Thesis eq. 2.7's `q.x >= cos(theta) |q|` is the same test in real
    /// arithmetic, but `cos(theta)` rounds to 1 below about 3.5e-4 rad: a box turning 1e-4 at
    /// 10,000 from its axis had a wedge of 3.5e-4 about its centre line, and a sphere 0.9
    /// behind its trailing face a hit. Below a right angle the wedge lies at `x >= 0`: at a
    /// half-angle of 0 (`sin` 0) the side test alone also held on the ray behind the centre.
    #[inline]
    pub fn in_wedge_local(&self, q: Vec2) -> bool {
        self.in_wedge_along(q, self.edge_directions().0)
    }

    /// [`Self::in_wedge_local`] with the edge direction `g = (cos, sin)` already at hand (the
    /// signed distance computes it for the edge).
    #[inline]
    fn in_wedge_along(&self, q: Vec2, g: Vec2) -> bool {
        let (cos, sin) = (g.x, g.y);
        self.is_full_ring() || (q.y.abs() * cos <= q.x * sin && (q.x >= 0.0 || cos < 0.0))
    }

    /// Point test in local coordinates (thesis 2.2 restricted to the plane).
    #[inline]
    pub fn contains_local(&self, q: Vec2) -> bool {
        let rho2 = q.length_squared();
        rho2 >= self.inner_radius * self.inner_radius
            && rho2 <= self.outer_radius * self.outer_radius
            && self.in_wedge_local(q)
    }

    /// Point test in world coordinates.
    #[inline]
    pub fn contains_point(&self, p: Vec2) -> bool {
        self.contains_local(self.to_local(p))
    }

    /// Unit directions G = (cos theta, sin theta) and H = (cos theta, -sin theta) of the two
    /// straight edges, in local coordinates (thesis eq. 2.9).
    #[inline]
    pub fn edge_directions(&self) -> (Vec2, Vec2) {
        let (s, c) = self.half_angle.sin_cos();
        (Vec2::new(c, s), Vec2::new(c, -s))
    }

    /// The two straight edges in world coordinates: (r G, R G) and (r H, R H) (thesis eq. 2.10).
    pub fn edges(&self) -> [(Vec2, Vec2); 2] {
        let (g, h) = self.edge_directions();
        let (r, rr) = (self.inner_radius, self.outer_radius);
        [
            (self.to_world(r * g), self.to_world(rr * g)),
            (self.to_world(r * h), self.to_world(rr * h)),
        ]
    }

    /// A point that certainly belongs to the sector (on the centre axis, mid-radius).
    pub fn interior_point(&self) -> Vec2 {
        self.to_world(Vec2::new(
            0.5 * (self.inner_radius + self.outer_radius),
            0.0,
        ))
    }

    /// The corner r G (world), a point of the sector's boundary. When another shape's boundary
    /// misses this sector's boundary, overlap means one contains a boundary point of the other.
    pub fn corner(&self) -> Vec2 {
        let (g, _) = self.edge_directions();
        self.to_world(self.inner_radius * g)
    }

    /// Exact signed distance in local coordinates: negative inside, zero on the boundary.
    ///
    /// Outside the wedge the nearest sector point lies on the straight edge on the same side
    /// (distance to a radial segment grows with the angle between), so with |y| one edge suffices.
    /// Inside the wedge the radial gaps are exact; inside the sector the depth is the least of
    /// the radial gaps and the distance to the nearer straight edge.
    ///
    /// Lengths are `primitives2d::scaled_length`s (no square underflows at any accepted size), and the
    /// nearest point of the radial edge `t G`, `t` in `[r, R]`, is `G`'s dot product clamped,
    /// as on the GPU.
    pub fn signed_distance_local(&self, q: Vec2) -> f32 {
        let (r, rr) = (self.inner_radius, self.outer_radius);
        let rho = scaled_length(q);
        let radial = (r - rho).max(rho - rr);
        if self.is_full_ring() {
            // A disk's centre is interior, not boundary: its depth is R - rho alone.
            return if r > 0.0 { radial } else { rho - rr };
        }
        let (g, _) = self.edge_directions();
        let folded = Vec2::new(q.x, q.y.abs());
        // max then min, not clamp: a sector built with r > R must not panic.
        let edge = scaled_length(folded - folded.dot(g).max(r).min(rr) * g);
        if !self.in_wedge_along(q, g) {
            return edge;
        }
        if radial > 0.0 {
            return radial;
        }
        radial.max(-edge)
    }

    /// Exact signed distance of a world point.
    #[inline]
    pub fn signed_distance(&self, p: Vec2) -> f32 {
        self.signed_distance_local(self.to_local(p))
    }

    /// The nearest sector point to a local point outside the sector (the point itself when inside).
    pub fn closest_point_local(&self, q: Vec2) -> Vec2 {
        if self.contains_local(q) {
            return q;
        }
        let (r, rr) = (self.inner_radius, self.outer_radius);
        let rho = q.length();
        if self.in_wedge_local(q) {
            let dir = if rho > 0.0 { q / rho } else { Vec2::X };
            return dir * rho.clamp(r, rr);
        }
        let (g, h) = self.edge_directions();
        let edge_dir = if q.y >= 0.0 { g } else { h };
        let t = closest_parameter_on_segment(q, r * edge_dir, rr * edge_dir);
        (r + t * (rr - r)) * edge_dir
    }

    /// Local axis-aligned bounding box (min, max): the four corners and the outer arc's extreme
    /// points that fall inside the wedge.
    pub fn local_bounds(&self) -> (Vec2, Vec2) {
        let rr = self.outer_radius;
        if self.is_full_ring() {
            return (Vec2::splat(-rr), Vec2::splat(rr));
        }
        let (g, h) = self.edge_directions();
        let mut lo = Vec2::splat(f32::MAX);
        let mut hi = Vec2::splat(f32::MIN);
        let mut add = |p: Vec2| {
            lo = lo.min(p);
            hi = hi.max(p);
        };
        for p in [self.inner_radius * g, self.inner_radius * h, rr * g, rr * h] {
            add(p);
        }
        for p in [Vec2::X, Vec2::Y, -Vec2::Y, -Vec2::X] {
            if self.in_wedge_local(p) {
                add(rr * p);
            }
        }
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Dense polar samples of the boundary of a local sector.
    fn boundary_samples(s: &Sector2, n: usize) -> Vec<Vec2> {
        let mut out = Vec::new();
        let (r, rr, th) = (s.inner_radius, s.outer_radius, s.half_angle);
        for i in 0..=n {
            let f = i as f32 / n as f32;
            let phi = -th + 2.0 * th * f;
            // A disk (full ring, r = 0) has no inner boundary: its centre is interior.
            if r > 0.0 || th < PI {
                out.push(Vec2::from_angle(phi) * r);
            }
            out.push(Vec2::from_angle(phi) * rr);
            if th < PI {
                let rho = r + (rr - r) * f;
                out.push(Vec2::from_angle(th) * rho);
                out.push(Vec2::from_angle(-th) * rho);
            }
        }
        out
    }

    #[test]
    fn signed_distance_matches_sampled_boundary() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let n = 4000;
        for k in 0..300u32 {
            let th = match k % 5 {
                0 => PI,
                1 => rng.random_range(0.0..0.05),
                _ => rng.random_range(0.0..PI),
            };
            let r = if k.is_multiple_of(7) {
                0.0
            } else {
                rng.random_range(0.0..3.0)
            };
            let s = Sector2::local(th, r, r + rng.random_range(0.0..4.0));
            let samples = boundary_samples(&s, n);
            // Sample spacing bound: the outer arc's step R * 2 theta / n, and the edges' (R - r) / n.
            let step = (s.outer_radius * 2.0 * th / n as f32).max(s.outer_radius / n as f32);
            for _ in 0..40 {
                let q = Vec2::new(rng.random_range(-8.0..8.0), rng.random_range(-8.0..8.0));
                let to_boundary = samples
                    .iter()
                    .map(|b| (*b - q).length())
                    .fold(f32::MAX, f32::min);
                let sd = s.signed_distance_local(q);
                assert!(
                    (sd.abs() - to_boundary).abs() <= step + 1e-4,
                    "k {k} sector {s:?} q {q}: sd {sd} sampled {to_boundary}"
                );
                if to_boundary > step {
                    assert_eq!(sd < 0.0, s.contains_local(q), "sign at {q}");
                }
                let c = s.closest_point_local(q);
                assert!(((c - q).length() - sd.max(0.0)).abs() < 1e-3);
            }
        }
    }

    #[test]
    fn bounds_contain_dense_interior_samples() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        for _ in 0..200 {
            let th = rng.random_range(0.0..PI);
            let r = rng.random_range(0.0..3.0);
            let s = Sector2::local(th, r, r + rng.random_range(0.0..3.0));
            let (lo, hi) = s.local_bounds();
            let mut seen_lo = Vec2::splat(f32::MAX);
            let mut seen_hi = Vec2::splat(f32::MIN);
            for b in boundary_samples(&s, 2000) {
                assert!(b.cmpge(lo - 1e-4).all() && b.cmple(hi + 1e-4).all());
                seen_lo = seen_lo.min(b);
                seen_hi = seen_hi.max(b);
            }
            // Tight: the box is the samples' box up to the sample spacing.
            assert!((seen_lo - lo).abs().max_element() < 0.01);
            assert!((seen_hi - hi).abs().max_element() < 0.01);
        }
    }

    /// A half-angle of 0 (a box that does not turn): the wedge is the centre ray alone, not the
    /// ray behind the centre (`sin` 0 made the side test hold there), and a tiny half-angle
    /// is its own width, not `cos`'s rounding (3.5e-4 rad).
    #[test]
    fn narrow_wedges_hold_only_their_own_angle() {
        let flat = Sector2::new(Vec2::ZERO, Vec2::X, 0.0, 4.0, 6.0).unwrap();
        assert!(flat.in_wedge_local(Vec2::new(5.0, 0.0)));
        assert!(!flat.in_wedge_local(Vec2::new(-5.0, 0.0)));
        assert_eq!(flat.signed_distance_local(Vec2::new(-5.0, 0.0)), 9.0);
        assert_eq!(flat.signed_distance_local(Vec2::new(5.0, 0.0)), 0.0);
        let narrow = Sector2::new(Vec2::ZERO, Vec2::X, 1e-4, 9_000.0, 11_000.0).unwrap();
        assert!(narrow.in_wedge_local(Vec2::new(10_000.0, 0.9)));
        assert!(!narrow.in_wedge_local(Vec2::new(10_000.0, 1.1)));
        // 2.0 beside a wedge 1.0 wide there: about 1.0 away, not inside.
        let d = narrow.signed_distance_local(Vec2::new(10_000.0, 2.0));
        assert!((d - 1.0).abs() < 1e-3, "{d}");
    }

    #[test]
    fn new_rejects_bad_sectors() {
        assert!(Sector2::new(Vec2::ZERO, Vec2::X, 1.0, 1.0, 2.0).is_ok());
        assert!(Sector2::new(Vec2::ZERO, Vec2::X * 2.0, 1.0, 1.0, 2.0).is_err());
        assert!(Sector2::new(Vec2::ZERO, Vec2::X, 4.0, 1.0, 2.0).is_err());
        assert!(Sector2::new(Vec2::ZERO, Vec2::X, 1.0, 3.0, 2.0).is_err());
        assert!(Sector2::new(Vec2::NAN, Vec2::X, 1.0, 1.0, 2.0).is_err());
    }

    #[test]
    fn world_frame_round_trip_and_containment() {
        let s = Sector2 {
            center: Vec2::new(1.0, 2.0),
            axis: Vec2::from_angle(0.7),
            half_angle: 0.4,
            inner_radius: 1.0,
            outer_radius: 3.0,
        };
        let p = Vec2::new(-0.3, 5.1);
        assert!((s.to_world(s.to_local(p)) - p).length() < 1e-5);
        assert!(s.contains_point(s.interior_point()));
        assert!(s.contains_point(s.to_world(Vec2::new(2.0, 0.0))));
        assert!(!s.contains_point(s.to_world(Vec2::new(-2.0, 0.0))));
    }
}
