//! Beyond the thesis (SPEC 4.3): the exact signed distance of the 3D sector (the 2D ring-sector
//! distance extruded by h along U), the exact sphere and circle tests it gives, and a certified
//! 3D sector-capsule test by branch and bound on the capsule's axis parameter.

use super::capsule::Capsule3;
use super::sector::Sector;
use super::sector2d::Sector2;
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
        d2.max(dz).min(0.0) + Vec2::new(d2.max(0.0), dz.max(0.0)).length()
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
    /// ([`CAPSULE_TOLERANCE_REL`] times R + h + radius + axis length).
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
pub fn closest_point(sector: &Sector, p: Vec3) -> Vec3 {
    let q = sector.to_local(p);
    let xy = Sector2::profile(sector).closest_point_local(q.xy());
    let h = sector.half_thickness;
    sector.to_world(Vec3::new(xy.x, xy.y, q.z.clamp(-h, h)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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
}
