//! Beyond the thesis (docs/design.md §5.3): the exact signed distance of the 3D sector (the 2D ring-sector
//! distance extruded by h along U), the exact sphere and circle tests it gives, and a certified
//! 3D sector-capsule test by branch and bound on the capsule's axis parameter.

use crate::geom::capsule::Capsule3;
use crate::geom::primitives2d::scaled_length;
use crate::geom::sector::Sector;
use crate::geom::sector::sector2d::Sector2;
use crate::geom::sphere::Sphere;
use glam::{Vec2, Vec3, Vec3Swizzles};

/// Default over-detection band of [`Sector::overlaps_capsule_certified`], relative to the
/// problem's size (R + h + capsule radius + axis length): a reported hit is within this of a
/// true contact. 1e-4 keeps the search short while staying far above f32 rounding (~1e-6).
pub const CAPSULE_TOLERANCE_REL: f32 = 1e-4;

impl Sector {
    /// Exact signed distance of a local point: the 2D profile distance d2 and the slab distance
    /// dz = |z| - h combined as an extrusion: min(max(d2, dz), 0) + |max((d2, dz), 0)|.
    #[inline]
    pub fn signed_distance_local(&self, q: Vec3) -> f32 {
        let d2 = Sector2::profile(self).signed_distance_local(q.xy());
        let dz = q.z.abs() - self.half_thickness;
        d2.max(dz).min(0.0) + scaled_length(Vec2::new(d2.max(0.0), dz.max(0.0)))
    }

    /// Exact signed distance of a world point.
    #[inline]
    pub fn signed_distance(&self, p: Vec3) -> f32 {
        self.signed_distance_local(self.to_local(p))
    }

    /// Exact sphere test by distance: sd(centre) <= radius. No case analysis.
    #[inline]
    pub fn overlaps_sphere_exact(&self, sphere: &Sphere) -> bool {
        self.signed_distance(sphere.center) <= sphere.radius
    }

    /// Certified 3D sector-capsule test with the default tolerance
    /// (`CAPSULE_TOLERANCE_REL` times R + h + radius + axis length).
    pub fn overlaps_capsule_certified_default(&self, capsule: &Capsule3) -> bool {
        let scale = self.outer_radius
            + self.half_thickness
            + capsule.radius
            + (capsule.end - capsule.start).length();
        self.overlaps_capsule_certified(capsule, CAPSULE_TOLERANCE_REL * scale)
    }

    /// Certified 3D sector-capsule test: never misses a contact (up to f32 rounding of the
    /// distance), and a reported hit means the capsule axis passes within `radius + tolerance`
    /// of the sector. Branch and bound on f(t) = sd(S + tV) - rc, which is |V|-Lipschitz in t
    /// (the signed distance is 1-Lipschitz): an interval is dropped when its midpoint value
    /// exceeds |V| times its half-width, and accepted when it has shrunk below the tolerance.
    pub fn overlaps_capsule_certified(&self, capsule: &Capsule3, tolerance: f32) -> bool {
        let s = self.to_local(capsule.start);
        let v = self.to_local(capsule.end) - s;
        let rc = capsule.radius;
        let lip = v.length();
        // Bounds the depth (2^-20 of the axis) whatever tolerance is asked for.
        let tol = tolerance.max(lip * 9.6e-7).max(f32::MIN_POSITIVE);
        let f = |t: f32| self.signed_distance_local(s + t * v) - rc;
        // Depth-first: the stack holds at most one pending sibling per level.
        let mut stack = [(0.0f32, 1.0f32); 48];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (a, b) = stack[top];
            let m = 0.5 * (a + b);
            let fm = f(m);
            if fm <= 0.0 {
                return true;
            }
            let reach = lip * 0.5 * (b - a);
            if fm > reach {
                continue;
            }
            if reach <= tol || top + 2 > stack.len() {
                return true;
            }
            stack[top] = (m, b);
            stack[top + 1] = (a, m);
            top += 2;
        }
        false
    }
}

impl Sector2 {
    /// Exact circle test by distance: sd(centre) <= radius.
    #[inline]
    pub fn overlaps_circle_exact(&self, center: Vec2, radius: f32) -> bool {
        self.signed_distance(center) <= radius
    }
}

/// Nearest point of a world sector to a world point (itself when inside), from the 2D nearest
/// point and the slab clamp (the extrusion separates).
#[cfg(test)]
pub fn closest_point(sector: &Sector, p: Vec3) -> Vec3 {
    let q = sector.to_local(p);
    let xy = Sector2::profile(sector).closest_point_local(q.xy());
    let h = sector.half_thickness;
    sector.to_world(Vec3::new(xy.x, xy.y, q.z.clamp(-h, h)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::test_util::for_each_drawn;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::f32::consts::{PI, TAU};

    #[test]
    fn closest_point_is_in_the_sector_at_the_signed_distance() {
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        for _ in 0..2000 {
            let axis = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize();
            let centre_axis = axis.any_orthonormal_vector();
            let r = rng.random_range(0.0..2.0);
            let s = Sector::new(
                Vec3::ZERO,
                axis,
                centre_axis,
                rng.random_range(0.0..std::f32::consts::PI),
                r,
                r + rng.random_range(0.0..3.0),
                rng.random_range(0.0..1.0),
            )
            .unwrap();
            let p = Vec3::new(
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
            );
            let sd = s.signed_distance(p);
            let c = closest_point(&s, p);
            if sd > 0.0 {
                assert!(
                    ((c - p).length() - sd).abs() < 1e-3,
                    "{sd} vs {}",
                    (c - p).length()
                );
                // The witness is in the (closed) sector, up to rounding.
                assert!(s.signed_distance(c) < 1e-4);
            }
        }
    }

    #[test]
    fn certified_capsule_reduces_to_the_sphere_test_for_a_point_axis() {
        let s = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.4, 1.0, 2.0, 0.3).unwrap();
        for x in [2.2f32, 2.4, 2.6, -0.5] {
            let sphere = Sphere::new(Vec3::new(x, 0.0, 0.5), 0.5);
            let cap = Capsule3::new(sphere.center, sphere.center, 0.5);
            assert_eq!(
                s.overlaps_capsule_certified(&cap, 1e-4),
                s.overlaps_sphere_exact(&sphere)
            );
        }
    }

    fn random_sector(rng: &mut ChaCha8Rng) -> Sector {
        let axis = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize();
        let a = crate::geom::sector::rodrigues(
            axis.any_orthonormal_vector(),
            axis,
            rng.random_range(0.0..TAU),
        )
        .normalize();
        let r = if rng.random_bool(0.2) {
            0.0
        } else {
            rng.random_range(0.0..5.0)
        };
        let half_angle = match rng.random_range(0..6) {
            0 => PI,
            1 => rng.random_range(0.0..0.05),
            _ => rng.random_range(0.0..PI),
        };
        Sector::new(
            Vec3::new(1.0, -2.0, 0.5),
            axis,
            a,
            half_angle,
            r,
            r + rng.random_range(0.0..6.0),
            rng.random_range(0.0..3.0),
        )
        .unwrap()
    }

    /// Points of the sector on a polar grid in local coordinates, and the grid's covering
    /// radius (every point of the sector is within it of a sample).
    fn samples(s: &Sector) -> (Vec<Vec3>, f32) {
        let (nr, na, nz) = (24, 160, 12);
        let theta = s.half_angle.min(PI);
        let mut out = Vec::new();
        for i in 0..=nr {
            let rho = s.inner_radius + (s.outer_radius - s.inner_radius) * i as f32 / nr as f32;
            for j in 0..=na {
                let phi = -theta + 2.0 * theta * j as f32 / na as f32;
                for k in 0..=nz {
                    let z = -s.half_thickness + 2.0 * s.half_thickness * k as f32 / nz as f32;
                    out.push(s.to_world(Vec3::new(rho * phi.cos(), rho * phi.sin(), z)));
                }
            }
        }
        let dr = (s.outer_radius - s.inner_radius) / nr as f32;
        let da = s.outer_radius * 2.0 * theta / na as f32;
        let dz = 2.0 * s.half_thickness / nz as f32;
        (out, 0.5 * (dr * dr + da * da + dz * dz).sqrt())
    }

    #[test]
    fn sphere_test_agrees_with_dense_sampling_of_the_sector() {
        let (mut hits, mut misses) = (0, 0);
        for_each_drawn(21, 60, random_sector, |s, rng| {
            let (pts, cover) = samples(&s);
            for _ in 0..60 {
                let c = s.origin
                    + Vec3::new(
                        rng.random_range(-14.0..14.0),
                        rng.random_range(-14.0..14.0),
                        rng.random_range(-14.0..14.0),
                    );
                let radius = rng.random_range(0.0..6.0);
                // Distance from c to the sampled solid bounds the true distance within `cover`
                // (and is exactly 0-ish when c is inside).
                let sampled = pts
                    .iter()
                    .map(|p| (*p - c).length())
                    .fold(f32::MAX, f32::min);
                let inside = s.contains_point(c);
                let got = s.overlaps_sphere_exact(&Sphere::new(c, radius));
                let d = s.signed_distance(c);
                if inside {
                    assert!(got && d <= 1e-4, "{s:?} {c} d = {d}");
                    hits += 1;
                    continue;
                }
                // Exterior distance: between sampled - cover and sampled.
                assert!(
                    d <= sampled + 1e-3 && d >= sampled - cover - 1e-3,
                    "{s:?} {c}: sdf {d}, sampled {sampled}, cover {cover}"
                );
                if sampled <= radius - 1e-3 {
                    assert!(got);
                    hits += 1;
                } else if sampled - cover > radius + 1e-3 {
                    assert!(!got);
                    misses += 1;
                }
            }
        });
        assert!(hits > 200 && misses > 1_000, "{hits} {misses}");
    }

    /// Points on the sector's boundary surface (caps, inner and outer cylinders, side faces),
    /// and the grid's covering radius on that surface.
    fn boundary_samples(s: &Sector) -> (Vec<Vec3>, f32) {
        let n = 48;
        let theta = s.half_angle.min(PI);
        let (r, rr, h) = (s.inner_radius, s.outer_radius, s.half_thickness);
        let lerp = |a: f32, b: f32, i: usize| a + (b - a) * i as f32 / n as f32;
        let polar =
            |rho: f32, phi: f32, z: f32| s.to_world(Vec3::new(rho * phi.cos(), rho * phi.sin(), z));
        let mut out = Vec::new();
        for i in 0..=n {
            for j in 0..=n {
                let phi = lerp(-theta, theta, j);
                for z in [-h, h] {
                    out.push(polar(lerp(r, rr, i), phi, z)); // caps
                }
                let z = lerp(-h, h, i);
                if r > 0.0 || theta < PI {
                    out.push(polar(r, phi, z)); // inner cylinder (the apex edge when r = 0)
                }
                out.push(polar(rr, phi, z)); // outer cylinder
                if theta < PI {
                    for side in [-theta, theta] {
                        out.push(polar(lerp(r, rr, j), side, z)); // side faces
                    }
                }
            }
        }
        let step = ((rr - r).max(2.0 * h).max(2.0 * theta * rr)) / n as f32;
        (out, step * std::f32::consts::FRAC_1_SQRT_2)
    }

    #[test]
    fn interior_distance_is_the_depth_to_the_nearest_face() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        let mut checked = 0;
        for _ in 0..40 {
            let s = random_sector(&mut rng);
            let (pts, _) = samples(&s);
            let (boundary, cover) = boundary_samples(&s);
            for p in pts.iter().step_by(97) {
                if !s.contains_point(*p) {
                    continue;
                }
                // The depth is the distance to the boundary surface, which the samples bound
                // within their covering radius.
                let depth = -s.signed_distance(*p);
                let sampled = boundary
                    .iter()
                    .map(|b| (*b - *p).length())
                    .fold(f32::MAX, f32::min);
                assert!(
                    depth <= sampled + 1e-4 && depth >= sampled - cover - 1e-4,
                    "{s:?} {p}: depth {depth}, sampled {sampled}, cover {cover}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn profile_distance_known_values() {
        let d = |x: f32, y: f32, r: f32, rr: f32, t: f32| {
            Sector2::local(t, r, rr).signed_distance_local(Vec2::new(x, y))
        };
        // Quarter-width sector of radii 1..2 around +x, half-angle 45 degrees.
        let t = PI / 4.0;
        assert!((d(1.5, 0.0, 1.0, 2.0, t) + 0.5).abs() < 1e-6);
        assert!((d(3.0, 0.0, 1.0, 2.0, t) - 1.0).abs() < 1e-6);
        assert!((d(0.0, 0.0, 1.0, 2.0, t) - 1.0).abs() < 1e-6);
        // Straight below the lower edge's far end at (sqrt2, -sqrt2) moved out by 1 along -y:
        // nearest point is that corner.
        let c = 2.0 * t.cos();
        assert!((d(c, -c - 1.0, 1.0, 2.0, t) - 1.0).abs() < 1e-5);
        // Full ring, and a disk (r = 0), whose centre is 2 deep, not on the boundary.
        assert!((d(-3.0, 0.0, 1.0, 2.0, PI) - 1.0).abs() < 1e-6);
        assert!((d(0.0, 0.0, 0.0, 2.0, PI) + 2.0).abs() < 1e-6);
        assert!((d(0.5, 0.0, 0.0, 2.0, PI) + 1.5).abs() < 1e-6);
        // Extrusion: above a point of the face at depth 0.5, height 2 over h = 1.
        let disk = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, PI, 0.0, 2.0, 1.0).unwrap();
        assert!((disk.signed_distance(Vec3::new(1.5, 0.0, 2.0)) - 1.0).abs() < 1e-6);
        assert!((disk.signed_distance(Vec3::new(0.0, 0.0, 0.0)) + 1.0).abs() < 1e-6);
        assert!((disk.signed_distance(Vec3::new(5.0, 0.0, 5.0)) - 5.0).abs() < 1e-6);
    }
}
