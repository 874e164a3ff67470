//! Capsules (a segment swept by a disc or ball) in 2D and 3D, and the capsule-capsule test used
//! as a bounding-volume baseline in the speed tables.

use super::primitives2d::segment_segment_distance;
use crate::error::Result;
use glam::{Vec2, Vec3};

/// A 2D capsule: the points within `radius` of segment `start`-`end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule2 {
    /// One end of the segment.
    pub start: Vec2,
    /// The other end of the segment.
    pub end: Vec2,
    /// Distance from the segment that the capsule reaches (>= 0).
    pub radius: f32,
}

/// A 3D capsule: the points within `radius` of segment `start`-`end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule3 {
    /// One end of the segment.
    pub start: Vec3,
    /// The other end of the segment.
    pub end: Vec3,
    /// Distance from the segment that the capsule reaches (>= 0).
    pub radius: f32,
}

/// A capsule type's `new` and its validating `checked`, for end points of type `$point`.
macro_rules! constructors {
    ($point:ty) => {
        /// A capsule from its segment and radius, unchecked (see `checked`).
        pub const fn new(start: $point, end: $point, radius: f32) -> Self {
            Self { start, end, radius }
        }

        /// Validating constructor: finite end points and radius, radius >= 0.
        pub fn checked(start: $point, end: $point, radius: f32) -> Result<Self> {
            check_capsule(start.is_finite() && end.is_finite(), radius)?;
            Ok(Self::new(start, end, radius))
        }
    };
}

fn check_capsule(finite: bool, radius: f32) -> Result<()> {
    let bad = |problem: &str| super::invalid("capsule", problem);
    if !finite || !radius.is_finite() {
        return bad("non-finite field");
    }
    if radius < 0.0 {
        return bad("radius must be >= 0");
    }
    Ok(())
}

impl Capsule2 {
    constructors!(Vec2);

    /// Capsules overlap iff their segments are within the sum of the radii.
    #[inline]
    pub fn overlaps(&self, other: &Capsule2) -> bool {
        segment_segment_distance(self.start, self.end, other.start, other.end)
            <= self.radius + other.radius
    }
}

impl Capsule3 {
    constructors!(Vec3);

    /// Point on the axis at parameter t in [0, 1].
    #[inline]
    pub fn point(&self, t: f32) -> Vec3 {
        self.start + t * (self.end - self.start)
    }

    /// Capsules overlap iff their segments are within the sum of the radii.
    #[inline]
    pub fn overlaps(&self, other: &Capsule3) -> bool {
        let r = self.radius + other.radius;
        segment_segment_distance_squared_3d(self.start, self.end, other.start, other.end) <= r * r
    }
}

/// Squared distance between 3D segments PQ and RS: the closest pair of the two lines, with the
/// parameters clamped to [0, 1] one after the other (the classic clamp-and-reproject scheme,
/// exact for segments; parallel segments take s = 0).
pub fn segment_segment_distance_squared_3d(p: Vec3, q: Vec3, r: Vec3, s: Vec3) -> f32 {
    let d1 = q - p;
    let d2 = s - r;
    let w = p - r;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(w);
    let (sp, tp);
    if a <= f32::EPSILON && e <= f32::EPSILON {
        return w.dot(w);
    }
    if a <= f32::EPSILON {
        sp = 0.0;
        tp = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(w);
        if e <= f32::EPSILON {
            tp = 0.0;
            sp = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let mut s0 = if denom > 1e-7 * a * e {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let mut t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t0 = 0.0;
                s0 = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t0 = 1.0;
                s0 = ((b - c) / a).clamp(0.0, 1.0);
            }
            sp = s0;
            tp = t0;
        }
    }
    let diff = (p + d1 * sp) - (r + d2 * tp);
    diff.dot(diff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::test_util::sampled_min;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn v3(rng: &mut ChaCha8Rng) -> Vec3 {
        Vec3::new(
            rng.random_range(-4.0..4.0),
            rng.random_range(-4.0..4.0),
            rng.random_range(-4.0..4.0),
        )
    }

    #[test]
    fn segment_distance_3d_matches_dense_sampling() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for k in 0..300u32 {
            let (p, q, r) = (v3(&mut rng), v3(&mut rng), v3(&mut rng));
            // Every third case parallel, to exercise the degenerate branch.
            let s = if k.is_multiple_of(3) {
                r + (q - p) * 0.7
            } else {
                v3(&mut rng)
            };
            let exact = segment_segment_distance_squared_3d(p, q, r, s).sqrt();
            let sampled = sampled_min(300, |t, u| (p.lerp(q, t) - r.lerp(s, u)).length());
            assert!(exact <= sampled + 1e-4, "{exact} > {sampled}");
            assert!(sampled - exact < 0.05, "{exact} vs {sampled}");
        }
    }

    #[test]
    fn checked_rejects_bad_capsules() {
        assert!(Capsule3::checked(Vec3::ZERO, Vec3::X, 0.0).is_ok());
        assert!(Capsule3::checked(Vec3::ZERO, Vec3::NAN, 1.0).is_err());
        assert!(Capsule3::checked(Vec3::ZERO, Vec3::X, -1.0).is_err());
        assert!(Capsule2::checked(Vec2::ZERO, Vec2::X, f32::INFINITY).is_err());
    }

    #[test]
    fn capsules_touching_end_to_end() {
        let a = Capsule3::new(Vec3::ZERO, Vec3::X, 0.5);
        let b = Capsule3::new(Vec3::new(2.0, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0), 0.5);
        assert!(a.overlaps(&b));
        let c = Capsule3::new(Vec3::new(2.01, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0), 0.5);
        assert!(!a.overlaps(&c));
        let d = Capsule2::new(Vec2::ZERO, Vec2::Y, 0.25);
        let e = Capsule2::new(Vec2::new(0.6, 0.5), Vec2::new(2.0, 0.5), 0.25);
        assert!(!d.overlaps(&e));
        let f = Capsule2::new(Vec2::new(0.5, 0.5), Vec2::new(2.0, 0.5), 0.25);
        assert!(d.overlaps(&f));
    }
}
