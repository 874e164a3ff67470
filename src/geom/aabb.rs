//! Axis-aligned bounding boxes: the broad-phase proxy of shapes that are not spheres.

use crate::error::Result;
use crate::geom::sphere::Sphere;
use glam::Vec3;

/// Closed axis-aligned box `[min, max]` (2D shapes use z = 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Aabb {
    /// The lower corner.
    pub min: Vec3,
    /// The upper corner (`>= min` on every axis).
    pub max: Vec3,
}

impl Aabb {
    /// The box from its lower and upper corners.
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// Whether a coordinate is subnormal (a GPU may flush it to zero in a comparison).
    pub(crate) fn has_subnormal(&self) -> bool {
        self.min
            .to_array()
            .iter()
            .chain(&self.max.to_array())
            .any(|v| v.is_subnormal())
    }

    /// Closed-interval overlap on all three axes: touching boxes overlap, like touching shapes.
    #[inline(always)]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Closed containment of a point, per axis.
    #[inline]
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// The smallest box holding both.
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb::new(self.min.min(other.min), self.max.max(other.max))
    }
}

impl super::Validate for Aabb {
    /// A coordinate that is NaN or infinite, or `min > max` on an axis. (A box of zero extent,
    /// a point, is valid.)
    fn problem(&self) -> Option<String> {
        let named = [
            ("min.x", self.min.x),
            ("min.y", self.min.y),
            ("min.z", self.min.z),
            ("max.x", self.max.x),
            ("max.y", self.max.y),
            ("max.z", self.max.z),
        ];
        if let Some(problem) = super::non_finite(named) {
            return Some(problem);
        }
        ["x", "y", "z"]
            .into_iter()
            .zip(self.min.to_array().into_iter().zip(self.max.to_array()))
            .find(|(_, (lo, hi))| lo > hi)
            .map(|(axis, (lo, hi))| format!("min.{axis} = {lo} is above max.{axis} = {hi}"))
    }
}

/// Sphere vs axis-aligned box: squared distance from the centre to the box <= r^2.
#[inline]
pub fn aabb_touches_sphere(b: &Aabb, s: &Sphere) -> bool {
    let nearest = s.center.clamp(b.min, b.max);
    (s.center - nearest).length_squared() <= s.radius * s.radius
}

/// Validates a set of boxes ([`super::Validate`]'s convention): each passes
/// [`super::Validate::check`] (the lowest bad index named), fewer than 2^32 - 1; none is fine.
pub fn validate_aabbs(boxes: &[Aabb]) -> Result<()> {
    super::validate_all(boxes, "boxes")
}

/// Whether any box has a subnormal coordinate (a GPU may flush it to zero in a comparison).
pub(crate) fn any_subnormal(boxes: &[Aabb]) -> bool {
    boxes.iter().any(Aabb::has_subnormal)
}
