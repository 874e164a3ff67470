//! The sector ("fan") of docs/design.md §5: the volume swept by a box rotating about an axis, as an
//! annular sector extruded along the rotation axis. Also the rotating box it is built from.
//!
//! Local frame (thesis 2.2): origin O, z = U (rotation axis), x = A (centre axis of the fan),
//! y = K = U x A. A point P is inside iff |P_z| <= h, r^2 <= P_x^2 + P_y^2 <= R^2 and
//! P_x / |P_xy| >= cos(theta) (the axis itself, |P_xy| = 0, counts as inside when r = 0).

pub mod body;
#[cfg(feature = "paper")]
pub mod classify;
pub(crate) mod distance;
pub(crate) mod exact_sweep;
#[cfg(feature = "paper")]
pub mod free_classify;
pub mod general;
pub(crate) mod overlap;
pub(crate) mod proxy;
pub(crate) mod sector2d;
pub(crate) mod swept_box;
pub mod vs_box;
pub mod vs_convex;
pub mod vs_sector;

pub use crate::geom::capsule::{Capsule2, Capsule3};
pub use crate::geom::primitives2d::Rect2;
pub use proxy::{Proxy, Swept, proxy_aabb, proxy_overlaps_sphere, validate_boxes};
pub use sector2d::Sector2;

use crate::error::Result;
use glam::{Quat, Vec3};
use std::f32::consts::PI;

/// An annular sector extruded along its axis: rotation centre, axes, half-angle, radii and
/// half-thickness. `half_angle >= PI` is a full ring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sector {
    /// Rotation centre O.
    pub origin: Vec3,
    /// Rotation axis U (unit).
    pub axis: Vec3,
    /// Centre axis A of the fan (unit, perpendicular to U).
    pub centre_axis: Vec3,
    /// Half-angle theta in [0, PI].
    pub half_angle: f32,
    /// Inner radius r >= 0.
    pub inner_radius: f32,
    /// Outer radius R >= r.
    pub outer_radius: f32,
    /// Half-thickness h >= 0 along U.
    pub half_thickness: f32,
}

/// Tolerance on |U| = |A| = 1 and U.A = 0 when validating user-built sectors.
const UNIT_TOLERANCE: f32 = 1e-4;

/// What is wrong with a sector's half-angle and radii, if anything: the rules 0 <= theta <= PI
/// and 0 <= r <= R of [`Sector`] and [`Sector2`].
fn angle_or_radii_problem(
    half_angle: f32,
    inner_radius: f32,
    outer_radius: f32,
) -> Option<&'static str> {
    if !(0.0..=PI).contains(&half_angle) {
        return Some("half-angle must be in [0, pi]");
    }
    (inner_radius < 0.0 || outer_radius < inner_radius).then_some("radii must satisfy 0 <= r <= R")
}

impl Sector {
    /// Validates and builds a sector: finite fields, unit perpendicular axes (within 1e-4),
    /// 0 <= theta <= PI, 0 <= r <= R, h >= 0.
    pub fn new(
        origin: Vec3,
        axis: Vec3,
        centre_axis: Vec3,
        half_angle: f32,
        inner_radius: f32,
        outer_radius: f32,
        half_thickness: f32,
    ) -> Result<Self> {
        let bad = |problem: &str| crate::geom::invalid("sector", problem);
        let finite = origin.is_finite()
            && axis.is_finite()
            && centre_axis.is_finite()
            && [half_angle, inner_radius, outer_radius, half_thickness]
                .iter()
                .all(|v| v.is_finite());
        if !finite {
            return bad("non-finite field");
        }
        if (axis.length() - 1.0).abs() > UNIT_TOLERANCE
            || (centre_axis.length() - 1.0).abs() > UNIT_TOLERANCE
        {
            return bad("axes U and A must be unit vectors");
        }
        if axis.dot(centre_axis).abs() > UNIT_TOLERANCE {
            return bad("centre axis A must be perpendicular to the rotation axis U");
        }
        if let Some(problem) = angle_or_radii_problem(half_angle, inner_radius, outer_radius) {
            return bad(problem);
        }
        if half_thickness < 0.0 {
            return bad("half-thickness must be >= 0");
        }
        Ok(Self {
            origin,
            axis,
            centre_axis,
            half_angle,
            inner_radius,
            outer_radius,
            half_thickness,
        })
    }

    /// K = U x A, the local y axis.
    #[inline]
    pub fn side_axis(&self) -> Vec3 {
        self.axis.cross(self.centre_axis)
    }

    /// Q' = [A; K; U](Q - O): world point to local coordinates.
    #[inline]
    pub fn to_local(&self, p: Vec3) -> Vec3 {
        let d = p - self.origin;
        Vec3::new(
            d.dot(self.centre_axis),
            d.dot(self.side_axis()),
            d.dot(self.axis),
        )
    }

    /// Local coordinates back to world.
    #[inline]
    pub fn to_world(&self, q: Vec3) -> Vec3 {
        self.origin + q.x * self.centre_axis + q.y * self.side_axis() + q.z * self.axis
    }

    /// True when the fan closes into a full ring.
    #[inline]
    pub fn is_full_ring(&self) -> bool {
        self.half_angle >= PI
    }

    /// Point test in local coordinates (thesis 2.2). The angular test is done without division,
    /// as [`Sector2::in_wedge_local`](sector2d::Sector2::in_wedge_local): `|y| cos(theta) <= x
    /// sin(theta)`.
    #[inline]
    pub fn contains_local(&self, q: Vec3) -> bool {
        if q.z.abs() > self.half_thickness {
            return false;
        }
        let rho2 = q.x * q.x + q.y * q.y;
        if rho2 < self.inner_radius * self.inner_radius
            || rho2 > self.outer_radius * self.outer_radius
        {
            return false;
        }
        let (sin, cos) = self.half_angle.sin_cos();
        self.is_full_ring() || (q.y.abs() * cos <= q.x * sin && (q.x >= 0.0 || cos < 0.0))
    }

    /// Point test in world coordinates.
    #[inline]
    pub fn contains_point(&self, p: Vec3) -> bool {
        self.contains_local(self.to_local(p))
    }
}

/// How far a [`RotatingBox`]'s axis and arm may be from unit length, and its arm from
/// perpendicular to its axis: what f32 normalisation leaves, with room. Its sectors use the
/// vectors as given, so what it admits shifts them by up to this much of the box's distance
/// from its axis. (It was 1e-3: an arm 1.0009 long put a box turning 1,000 from its axis 0.9
/// from where its sector was, which missed a sphere at the box's own centre.)
pub const BOX_UNIT_TOLERANCE: f32 = 1e-5;

/// A box rotating about an axis through O (thesis 2.1): the box's local Z' is the rotation axis
/// U, its centre P lies at `distance` from O along Y', X' = Y' x Z'. It turns by `angle` (radians,
/// positive = counter-clockwise about U) from its start pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotatingBox {
    /// Rotation centre O.
    pub origin: Vec3,
    /// Rotation axis U = Z' (unit).
    pub axis: Vec3,
    /// Y' at the start pose (unit, perpendicular to U); P - O is parallel to it.
    pub arm: Vec3,
    /// |P - O|.
    pub distance: f32,
    /// Full widths (Wx, Wy, Wz) along X', Y', Z'.
    pub widths: Vec3,
    /// Rotation angle alpha >= 0 (radians).
    pub angle: f32,
}

impl crate::geom::Validate for RotatingBox {
    /// What is wrong with this box, if anything: non-finite fields, axis or arm not unit, arm not
    /// perpendicular to the axis (each within [`BOX_UNIT_TOLERANCE`]), negative distance, widths or
    /// angle, a non-zero origin coordinate, distance or width below the spheres'
    /// [`MIN_MAGNITUDE`](crate::geom::sphere::MIN_MAGNITUDE), a reach `|origin| + distance +
    /// |widths|` past their [`MAX_COORDINATE`](crate::geom::sphere::MAX_COORDINATE) (widths of
    /// 3e38 made a sector of NaN bounds, which missed the spheres inside the box).
    fn problem(&self) -> Option<String> {
        use crate::geom::sphere::{MAX_COORDINATE, MIN_MAGNITUDE};
        let finite = self.origin.is_finite()
            && self.axis.is_finite()
            && self.arm.is_finite()
            && self.widths.is_finite()
            && self.distance.is_finite()
            && self.angle.is_finite();
        if !finite {
            return Some("non-finite field".into());
        }
        if (self.axis.length() - 1.0).abs() > BOX_UNIT_TOLERANCE
            || (self.arm.length() - 1.0).abs() > BOX_UNIT_TOLERANCE
        {
            return Some(format!(
                "axis and arm must be unit vectors (within {BOX_UNIT_TOLERANCE:e}; lengths {} and {})",
                self.axis.length(),
                self.arm.length()
            ));
        }
        if self.axis.dot(self.arm).abs() > BOX_UNIT_TOLERANCE {
            return Some(format!(
                "arm must be perpendicular to the axis (within {BOX_UNIT_TOLERANCE:e}; arm . axis = {})",
                self.axis.dot(self.arm)
            ));
        }
        if self.distance < 0.0 || self.widths.min_element() < 0.0 || self.angle < 0.0 {
            return Some("distance, widths and angle must be >= 0".into());
        }
        let (o, w) = (self.origin, self.widths);
        let named = [
            ("origin x", o.x),
            ("origin y", o.y),
            ("origin z", o.z),
            ("distance", self.distance),
            ("width x", w.x),
            ("width y", w.y),
            ("width z", w.z),
        ];
        if let Some(problem) = crate::geom::below_min_magnitude(named, MIN_MAGNITUDE) {
            return Some(problem);
        }
        let reach =
            f64::from(o.abs().max_element()) + f64::from(self.distance) + w.as_dvec3().length();
        (reach > f64::from(MAX_COORDINATE)).then(|| {
            format!(
                "|origin| + distance + |widths| = {reach:e} exceeds {MAX_COORDINATE:e} (f32 \
                 squares would overflow)"
            )
        })
    }
}

impl RotatingBox {
    /// Box centre at the start pose.
    pub fn start_center(&self) -> Vec3 {
        self.origin + self.distance * self.arm
    }

    /// X' = Y' x Z' at the start pose.
    pub fn x_axis(&self) -> Vec3 {
        self.arm.cross(self.axis)
    }

    /// Rotation by `t * angle` about U.
    pub fn rotation_at(&self, t: f32) -> Quat {
        Quat::from_axis_angle(self.axis, t * self.angle)
    }

    /// Centre and (X', Y', Z') axes at parameter t in [0, 1].
    pub fn pose(&self, t: f32) -> (Vec3, [Vec3; 3]) {
        let q = self.rotation_at(t);
        let arm = q * self.arm;
        (
            self.origin + self.distance * arm,
            [q * self.x_axis(), arm, self.axis],
        )
    }

    /// The sector of thesis 2.1: theta = alpha / 2, r = |P-O| - Wy/2, R = |P-O| + Wy/2,
    /// h = Wz/2, A = Y' rotated by theta about U (Rodrigues). It ignores the width Wx, so it
    /// misses part of the swept volume (about 31% in the thesis's experiment) by design.
    pub fn sector(&self) -> Sector {
        let theta = (0.5 * self.angle).min(PI);
        Sector {
            origin: self.origin,
            axis: self.axis,
            centre_axis: rodrigues(self.arm, self.axis, theta),
            half_angle: theta,
            inner_radius: (self.distance - 0.5 * self.widths.y).max(0.0),
            outer_radius: self.distance + 0.5 * self.widths.y,
            half_thickness: 0.5 * self.widths.z,
        }
    }

    /// The conservative sector (docs/design.md §5.3): encloses the whole swept box.
    ///
    /// ```
    /// use glam::Vec3;
    /// use sweepfan::Sphere;
    /// use sweepfan::geom::sector::RotatingBox;
    ///
    /// // A 2 x 2 x 2 box centred 5 from the z axis on +y, turning a quarter turn towards -x.
    /// let b = RotatingBox {
    ///     origin: Vec3::ZERO,
    ///     axis: Vec3::Z,
    ///     arm: Vec3::Y,
    ///     distance: 5.0,
    ///     widths: Vec3::splat(2.0),
    ///     angle: std::f32::consts::FRAC_PI_2,
    /// };
    /// let sweep = b.conservative_sector();
    /// // Halfway through the turn the box is near (-3.5, 3.5, 0); at the end near (-5, 0, 0).
    /// assert!(sweep.overlaps_sphere_exact(&Sphere::new(Vec3::new(-3.5, 3.5, 0.0), 0.1)));
    /// assert!(sweep.overlaps_sphere_exact(&Sphere::new(Vec3::new(-5.0, 0.0, 0.0), 0.1)));
    /// // Behind the start pose and beyond the reach of the box: no contact.
    /// assert!(!sweep.overlaps_sphere_exact(&Sphere::new(Vec3::new(3.0, 3.0, 0.0), 0.1)));
    /// assert!(!sweep.overlaps_sphere_exact(&Sphere::new(Vec3::new(0.0, 8.0, 0.0), 0.5)));
    /// ```
    /// theta' = alpha/2 + atan2(Wx/2, |P-O| - Wy/2), r' = |P-O| - Wy/2,
    /// R' = hypot(|P-O| + Wy/2, Wx/2); a full ring when the box reaches the axis or 2 theta' >= 2 pi.
    /// Grown outward by the general sectors' rounding margin (docs/design.md §5.8), 2e-6 of
    /// R' + h on every side and 2e-6 rad on the half-angle (as far at R'): its f32 fields and
    /// a sphere's local coordinates round by a few units in the last place of R', and unpadded
    /// it missed spheres touching the box (one 0.1 deep into a box turning 3e6 from its axis).
    pub fn conservative_sector(&self) -> Sector {
        let near = self.distance - 0.5 * self.widths.y;
        let half_wx = 0.5 * self.widths.x;
        let (widen, inner) = if near > 0.0 {
            (half_wx.atan2(near), near)
        } else {
            // The box reaches the rotation axis: the sweep is a full disk.
            (PI, 0.0)
        };
        let outer = (self.distance + 0.5 * self.widths.y).hypot(half_wx);
        let half_thickness = 0.5 * self.widths.z;
        let pad = general::SECTOR_PAD as f32 * (outer + half_thickness);
        let theta = 0.5 * self.angle + widen + general::SECTOR_PAD as f32;
        Sector {
            origin: self.origin,
            axis: self.axis,
            centre_axis: rodrigues(self.arm, self.axis, 0.5 * self.angle),
            half_angle: theta.min(PI),
            inner_radius: (inner - pad).max(0.0),
            outer_radius: outer + pad,
            half_thickness: half_thickness + pad,
        }
    }
}

/// Rodrigues' rotation of `v` about the unit axis `u` by `angle`:
/// v cos + (u x v) sin + u (u.v)(1 - cos).
pub fn rodrigues(v: Vec3, u: Vec3, angle: f32) -> Vec3 {
    let (s, c) = angle.sin_cos();
    v * c + u.cross(v) * s + u * u.dot(v) * (1.0 - c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Axis and arm within `BOX_UNIT_TOLERANCE` of unit and perpendicular are accepted, 1e-3
    /// off refused (such a box lay 0.9 from its own sector at 1,000 from its axis).
    #[test]
    fn rotating_boxes_need_unit_axes_within_the_tolerance() {
        use crate::geom::Validate;
        let problem = |b: &RotatingBox| Validate::problem(b);
        let ok = sample_box();
        assert!(problem(&ok).is_none());
        let mut near = ok;
        near.arm = Vec3::Y * (1.0 + 0.5 * BOX_UNIT_TOLERANCE);
        assert!(problem(&near).is_none());
        let mut long = ok;
        long.arm = Vec3::Y * 1.0009;
        assert!(
            problem(&long).unwrap().contains("unit vectors"),
            "{:?}",
            problem(&long)
        );
        let mut tilted = ok;
        tilted.arm = Vec3::new(0.0, 1.0, 0.0009).normalize();
        assert!(problem(&tilted).unwrap().contains("perpendicular"));
    }

    fn sample_box() -> RotatingBox {
        RotatingBox {
            origin: Vec3::new(1.0, -2.0, 0.5),
            axis: Vec3::Z,
            arm: Vec3::Y,
            distance: 10.0,
            widths: Vec3::new(2.0, 4.0, 1.0),
            angle: 1.0,
        }
    }

    #[test]
    fn sector_centre_axis_bisects_the_rotation() {
        let b = sample_box();
        let s = b.sector();
        let (_, [_, end_arm, _]) = b.pose(1.0);
        // A is halfway between the start and end arms.
        let mid = (b.arm + end_arm).normalize();
        assert!((s.centre_axis - mid).length() < 1e-6);
        assert!(s.centre_axis.dot(s.axis).abs() < 1e-6);
    }

    #[test]
    fn box_centre_stays_inside_both_sectors_along_the_sweep() {
        let b = sample_box();
        for k in 0..=100 {
            let (c, _) = b.pose(k as f32 / 100.0);
            assert!(b.sector().contains_point(c), "k = {k}");
            assert!(b.conservative_sector().contains_point(c), "k = {k}");
        }
    }

    #[test]
    fn conservative_sector_contains_every_corner_of_every_pose() {
        let b = sample_box();
        let s = b.conservative_sector();
        for k in 0..=200 {
            let (c, ax) = b.pose(k as f32 / 200.0);
            for corner in 0..8 {
                let sx = if corner & 1 == 0 { -0.5 } else { 0.5 };
                let sy = if corner & 2 == 0 { -0.5 } else { 0.5 };
                let sz = if corner & 4 == 0 { -0.5 } else { 0.5 };
                let p = c
                    + ax[0] * sx * b.widths.x * 0.999
                    + ax[1] * sy * b.widths.y * 0.999
                    + ax[2] * sz * b.widths.z * 0.999;
                assert!(s.contains_point(p), "pose {k} corner {corner}");
            }
        }
    }

    #[test]
    fn new_rejects_bad_sectors() {
        let ok = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 1.0, 1.0, 2.0, 0.5);
        assert!(ok.is_ok());
        assert!(Sector::new(Vec3::ZERO, Vec3::Z, Vec3::Z, 1.0, 1.0, 2.0, 0.5).is_err());
        assert!(Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 4.0, 1.0, 2.0, 0.5).is_err());
        assert!(Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 1.0, 3.0, 2.0, 0.5).is_err());
        assert!(Sector::new(Vec3::ZERO, Vec3::Z * 2.0, Vec3::X, 1.0, 1.0, 2.0, 0.5).is_err());
        assert!(Sector::new(Vec3::NAN, Vec3::Z, Vec3::X, 1.0, 1.0, 2.0, 0.5).is_err());
    }
}
