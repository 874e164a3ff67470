//! Sector vs oriented box, exact. The 3D sector is its 2D profile times the slab |z| <= h, so a
//! box meets it iff the projection of (box ∩ slab) on the plane meets the profile. That part is
//! a convex polytope; its projection is the convex hull of the projected vertices (box corners
//! inside the slab and box edges crossing the slab faces), and the 2D convex polygon test decides.
//!
//! The box is an `ObbFrame` (centre, three unit axes, half-extents), the form of an `Obb` that
//! the separating-axis test and the GPU use too (`Obb::frame`).

use crate::geom::obb::ObbFrame;
use crate::geom::primitives2d::convex_hull;
use crate::geom::sector::Sector;
use crate::geom::sector::sector2d::Sector2;
use glam::{Vec2, Vec3, Vec3Swizzles};

impl Sector {
    /// Exact sector vs oriented box test.
    pub fn overlaps_box(&self, bx: &ObbFrame) -> bool {
        let h = self.half_thickness;
        let centre_z = (bx.center() - self.origin).dot(self.axis);
        if (centre_z.abs() - bx.projected_radius(self.axis)) > h {
            return false;
        }
        // Cheap exits by distance: the box lies within its half-diagonal of its centre.
        let sd = self.signed_distance(bx.center());
        if sd <= 0.0 {
            return true;
        }
        if sd > bx.half_extents().length() {
            return false;
        }
        let corners: [Vec3; 8] = std::array::from_fn(|k| self.to_local(bx.corner(k)));
        // At most 8 corners + 12 edges x 2 faces crossing points.
        let mut points = [Vec2::ZERO; 32];
        let mut n = 0;
        for c in &corners {
            if c.z.abs() <= h {
                points[n] = c.xy();
                n += 1;
            }
        }
        for k in 0..8 {
            for i in 0..3 {
                let j = k | (1 << i);
                if j == k {
                    continue;
                }
                let (a, b) = (corners[k], corners[j]);
                for face in [h, -h] {
                    let (da, db) = (a.z - face, b.z - face);
                    if (da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0) {
                        points[n] = a.xy().lerp(b.xy(), da / (da - db));
                        n += 1;
                    }
                }
            }
        }
        if n == 0 {
            return false;
        }
        let mut hull = Vec::with_capacity(n);
        convex_hull(&mut points[..n], &mut hull);
        Sector2::profile(self).overlaps_convex_polygon(&hull)
    }

    /// A box enclosing the sector: its local 2D bounds extruded by h.
    pub fn bounding_box(&self) -> ObbFrame {
        let (lo, hi) = Sector2::profile(self).local_bounds();
        let mid = 0.5 * (lo + hi);
        ObbFrame::from_parts(
            self.to_world(Vec3::new(mid.x, mid.y, 0.0)),
            [self.centre_axis, self.side_axis(), self.axis],
            Vec3::new(
                0.5 * (hi.x - lo.x),
                0.5 * (hi.y - lo.y),
                self.half_thickness,
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::obb::Obb;

    #[test]
    fn converted_obb_has_the_same_corners() {
        // A non-unit quaternion too: `Obb` normalises it where used.
        for (q, h) in [
            (glam::Quat::from_rotation_z(0.3), Vec3::new(1.0, 2.0, 0.5)),
            (
                glam::Quat::from_xyzw(0.2, -0.5, 0.1, 0.9) * 1.0005,
                Vec3::new(0.0, 3.0, 1.5),
            ),
        ] {
            let obb = Obb::new(Vec3::new(4.0, -1.0, 2.0), h, q);
            let bx = obb.frame();
            assert!(ObbFrame::from_axes(bx.center(), bx.axis_array(), bx.half_extents()).is_ok());
            // Same corner numbering (bit i: +half-extent along axis i) in both types.
            for (k, c) in obb.corners().iter().enumerate() {
                assert!((bx.corner(k) - *c).length() < 1e-5, "corner {k}");
            }
        }
    }

    #[test]
    fn new_rejects_bad_boxes() {
        let axes = [Vec3::X, Vec3::Y, Vec3::Z];
        assert!(ObbFrame::from_axes(Vec3::ZERO, axes, Vec3::ZERO).is_ok());
        assert!(ObbFrame::from_axes(Vec3::NAN, axes, Vec3::ONE).is_err());
        assert!(ObbFrame::from_axes(Vec3::ZERO, axes, -Vec3::ONE).is_err());
        assert!(ObbFrame::from_axes(Vec3::ZERO, [Vec3::X, Vec3::X, Vec3::Z], Vec3::ONE).is_err());
        assert!(
            ObbFrame::from_axes(Vec3::ZERO, [Vec3::X * 2.0, Vec3::Y, Vec3::Z], Vec3::ONE).is_err()
        );
    }

    #[test]
    fn box_covering_only_the_hole_misses_and_box_across_the_ring_hits() {
        let s = Sector::new(
            Vec3::ZERO,
            Vec3::Z,
            Vec3::X,
            std::f32::consts::PI,
            2.0,
            3.0,
            0.5,
        )
        .unwrap();
        let aligned = [Vec3::X, Vec3::Y, Vec3::Z];
        let in_hole = ObbFrame::from_parts(Vec3::ZERO, aligned, Vec3::new(1.0, 1.0, 5.0));
        assert!(!s.overlaps_box(&in_hole));
        // Covers the whole ring: no box corner in the sector and no edge crossing; the sector's
        // boundary point inside the box decides.
        let around = ObbFrame::from_parts(Vec3::ZERO, aligned, Vec3::new(4.0, 4.0, 5.0));
        assert!(s.overlaps_box(&around));
        // Zero-thickness box (a rectangle) lying in the slab's top face.
        let flat = Vec3::new(0.1, 0.1, 0.0);
        let sheet = ObbFrame::from_parts(Vec3::new(2.5, 0.0, 0.5), aligned, flat);
        assert!(s.overlaps_box(&sheet));
        let above = ObbFrame::from_parts(Vec3::new(2.5, 0.0, 0.51), aligned, flat);
        assert!(!s.overlaps_box(&above));
    }
}
