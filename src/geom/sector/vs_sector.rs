//! Sector vs sector. Exact in 2D (boundary crossings or a boundary point of one inside the
//! other) and in 3D when the rotation axes are parallel (slab overlap along U and the 2D test in
//! the common plane). With non-parallel axes the test is **conservative**: each sector against
//! the other's bounding box, exactly, then GJK over both sectors' convex pieces (`vs_convex`);
//! it never misses and over-detects by what both leave: the lens between a piece's inner arc and
//! its chord, where the boxes also hold it.

use crate::geom::primitives2d::{circle_circle_intersections, segments_intersect};
use crate::geom::sector::Sector;
use crate::geom::sector::sector2d::Sector2;
use glam::{Vec2, Vec3Swizzles};

/// |U1 . U2| at or above which two rotation axes count as parallel.
pub(crate) const PARALLEL_AXES_COS: f32 = 1.0 - 1e-6;

impl Sector2 {
    /// Exact 2D sector vs sector test.
    pub fn overlaps_sector(&self, other: &Sector2) -> bool {
        if self.contains_point(other.corner()) || other.contains_point(self.corner()) {
            return true;
        }
        let mine = self.edges();
        let theirs = other.edges();
        for &(a, b) in &mine {
            if theirs.iter().any(|&(c, d)| segments_intersect(a, b, c, d)) {
                return true;
            }
            if other.segment_crosses_arcs(a, b) {
                return true;
            }
        }
        for &(c, d) in &theirs {
            if self.segment_crosses_arcs(c, d) {
                return true;
            }
        }
        for r0 in [self.inner_radius, self.outer_radius] {
            for r1 in [other.inner_radius, other.outer_radius] {
                let (points, n) = circle_circle_intersections(self.center, r0, other.center, r1);
                for p in &points[..n] {
                    if self.in_wedge_local(self.to_local(*p))
                        && other.in_wedge_local(other.to_local(*p))
                    {
                        return true;
                    }
                }
            }
        }
        false
    }
}

impl Sector {
    /// True when the two rotation axes are parallel (either sense), so that
    /// [`Self::overlaps_sector_conservative`] is exact.
    pub fn axes_parallel(&self, other: &Sector) -> bool {
        self.axis.dot(other.axis).abs() >= PARALLEL_AXES_COS
    }

    /// Sector vs sector: exact when the axes are parallel, conservative (never misses) otherwise.
    pub fn overlaps_sector_conservative(&self, other: &Sector) -> bool {
        if self.axes_parallel(other) {
            return self.overlaps_parallel_sector(other);
        }
        self.overlaps_box(&other.bounding_box())
            && other.overlaps_box(&self.bounding_box())
            && self.overlaps_sector_pieces(other)
    }

    /// Exact test for a sector whose axis is parallel to this one's.
    fn overlaps_parallel_sector(&self, other: &Sector) -> bool {
        let o = self.to_local(other.origin);
        if o.z.abs() > self.half_thickness + other.half_thickness {
            return false;
        }
        // The other sector's centre axis seen in this sector's plane; the fan is symmetric about
        // it, so the sense of U does not matter.
        let a = self.to_local(self.origin + other.centre_axis).xy();
        let profile = Sector2 {
            center: o.xy(),
            axis: a.normalize_or(Vec2::X),
            half_angle: other.half_angle,
            inner_radius: other.inner_radius,
            outer_radius: other.outer_radius,
        };
        Sector2::profile(self).overlaps_sector(&profile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn rings_nested_without_touching_and_touching() {
        let ring = |r, rr| Sector2::local(std::f32::consts::PI, r, rr);
        assert!(!ring(1.0, 2.0).overlaps_sector(&ring(3.0, 4.0)));
        assert!(ring(1.0, 3.0).overlaps_sector(&ring(3.0, 4.0)));
        // A disc filling the other's hole only.
        assert!(!ring(0.0, 0.9).overlaps_sector(&ring(1.0, 2.0)));
    }

    #[test]
    fn parallel_axes_opposite_sense() {
        let a = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.3, 1.0, 2.0, 0.5).unwrap();
        let b = Sector::new(
            Vec3::new(3.5, 0.0, 0.9),
            -Vec3::Z,
            -Vec3::X,
            0.3,
            1.0,
            2.0,
            0.5,
        )
        .unwrap();
        assert!(a.overlaps_sector_conservative(&b));
        let lifted = Sector {
            origin: Vec3::new(3.5, 0.0, 1.1),
            ..b
        };
        assert!(!a.overlaps_sector_conservative(&lifted));
        let far = Sector {
            origin: Vec3::new(4.1, 0.0, 0.9),
            ..b
        };
        assert!(!a.overlaps_sector_conservative(&far));
    }
}
