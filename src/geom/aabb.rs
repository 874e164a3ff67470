//! Axis-aligned bounding boxes: the broad-phase proxy of shapes that are not spheres.

use crate::geom::sphere::Sphere;
use glam::Vec3;

/// Closed axis-aligned box `[min, max]` (2D shapes use z = 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
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

/// Sphere vs axis-aligned box: squared distance from the centre to the box <= r^2.
#[inline]
pub fn aabb_touches_sphere(b: &Aabb, s: &Sphere) -> bool {
    let nearest = s.center.clamp(b.min, b.max);
    (s.center - nearest).length_squared() <= s.radius * s.radius
}
