//! Convex bodies for the general sector (docs/design.md §5.8): a box of any orientation, a
//! capsule, a cylinder, or the convex hull of points, each as plain data with its support
//! function, and [`RotatingBody`], one of them turning about any axis by any angle.

use crate::error::Result;
use crate::geom::aabb::Aabb;
use crate::geom::obb::ObbFrame;
use glam::{DVec3, Quat, Vec3};
use std::f32::consts::TAU;

/// The convex hull of a point set: its vertices and its face planes `n . p <= d` (unit n).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    points: Vec<Vec3>,
    planes: Vec<(DVec3, f64)>,
}

/// Relative tolerance of the hull's plane test, in units of the point set's extent.
const HULL_TOLERANCE: f64 = 1e-7;

impl ConvexHull {
    /// The hull of 4 to 256 finite points that span a volume. Faces come from every triple whose
    /// plane has all points on one side (at most 256^3 / 6 triples: these hulls are small).
    pub fn new(points: &[Vec3]) -> Result<Self> {
        let bad = |problem: String| crate::geom::invalid("hull", problem);
        if !(4..=256).contains(&points.len()) {
            return bad(format!("needs 4 to 256 points, got {}", points.len()));
        }
        if let Some(i) = points.iter().position(|p| !p.is_finite()) {
            return bad(format!("point {i} is not finite"));
        }
        let p: Vec<DVec3> = points.iter().map(|v| v.as_dvec3()).collect();
        let lo = p.iter().fold(DVec3::splat(f64::MAX), |a, v| a.min(*v));
        let hi = p.iter().fold(DVec3::splat(f64::MIN), |a, v| a.max(*v));
        let extent = (hi - lo).max_element().max(f64::MIN_POSITIVE);
        let tol = HULL_TOLERANCE * extent;
        let mut planes: Vec<(DVec3, f64)> = Vec::new();
        let n = p.len();
        for i in 0..n {
            for j in i + 1..n {
                for k in j + 1..n {
                    let normal = (p[j] - p[i]).cross(p[k] - p[i]);
                    let len = normal.length();
                    if len <= 1e-12 * extent * extent {
                        continue;
                    }
                    let mut normal = normal / len;
                    let mut d = normal.dot(p[i]);
                    let above = p.iter().any(|q| normal.dot(*q) - d > tol);
                    let below = p.iter().any(|q| normal.dot(*q) - d < -tol);
                    if above && below {
                        continue;
                    }
                    // A face: no point in front of it (within the tolerance), normal outwards.
                    if !below && !above {
                        continue; // every point on this plane: no face of a solid
                    }
                    if above {
                        normal = -normal;
                        d = -d;
                    }
                    let known = planes
                        .iter()
                        .any(|(m, e)| m.dot(normal) > 1.0 - 1e-9 && (e - d).abs() <= tol);
                    if !known {
                        planes.push((normal, d));
                    }
                }
            }
        }
        if planes.len() < 4 {
            return bad("points are coplanar: the hull has no volume".into());
        }
        // The boundary points: those on some face's plane (points strictly inside are dropped;
        // points on a face but not at a corner stay, harmlessly).
        let vertices: Vec<Vec3> = points
            .iter()
            .zip(&p)
            .filter(|(_, q)| planes.iter().any(|(m, d)| (m.dot(**q) - d).abs() <= tol))
            .map(|(v, _)| *v)
            .collect();
        Ok(Self {
            points: vertices,
            planes,
        })
    }

    /// The points on the hull's boundary.
    pub fn vertices(&self) -> &[Vec3] {
        &self.points
    }

    /// Face planes `(n, d)`: the hull is every p with `n . p <= d` for all of them.
    pub fn planes(&self) -> &[(DVec3, f64)] {
        &self.planes
    }
}

/// A convex body at its start pose, in world coordinates.
#[derive(Clone, Debug, PartialEq)]
pub enum ConvexBody {
    /// An oriented box: centre, orthonormal axes, half-extents along them.
    Box(ObbFrame),
    /// Every point within `radius` of the segment `a`-`b`.
    Capsule {
        /// One end of the segment.
        a: Vec3,
        /// The other end.
        b: Vec3,
        /// The radius (>= 0).
        radius: f32,
    },
    /// A solid right circular cylinder.
    Cylinder(Cylinder),
    /// The convex hull of points.
    Hull(ConvexHull),
}

/// A solid right circular cylinder: centre, unit axis, radius, half-height along the axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cylinder {
    /// The centre.
    pub center: Vec3,
    /// The unit axis.
    pub axis: Vec3,
    /// The radius (>= 0).
    pub radius: f32,
    /// Half the height along the axis (>= 0).
    pub half_height: f32,
}

/// Tolerance on unit and orthogonal axes.
const AXIS_TOLERANCE: f32 = 1e-3;

impl crate::geom::Validate for ConvexBody {
    /// What is wrong with this body, if anything.
    fn problem(&self) -> Option<String> {
        let unit = |v: Vec3| (v.length() - 1.0).abs() <= AXIS_TOLERANCE;
        match self {
            ConvexBody::Box(frame) => {
                let (center, axes, half_extents) =
                    (&frame.center(), &frame.axis_array(), &frame.half_extents());
                if !center.is_finite() || !half_extents.is_finite() {
                    return Some("box: non-finite field".into());
                }
                if !axes.iter().all(|a| a.is_finite() && unit(*a))
                    || axes[0].dot(axes[1]).abs() > AXIS_TOLERANCE
                    || axes[0].dot(axes[2]).abs() > AXIS_TOLERANCE
                    || axes[1].dot(axes[2]).abs() > AXIS_TOLERANCE
                {
                    return Some("box: axes must be orthonormal".into());
                }
                (half_extents.min_element() < 0.0).then(|| "box: half-extents must be >= 0".into())
            }
            ConvexBody::Capsule { a, b, radius } => {
                if !a.is_finite() || !b.is_finite() || !radius.is_finite() {
                    return Some("capsule: non-finite field".into());
                }
                (*radius < 0.0).then(|| "capsule: radius must be >= 0".into())
            }
            ConvexBody::Cylinder(c) => {
                let sizes = c.radius + c.half_height;
                if !c.center.is_finite() || !c.axis.is_finite() || !sizes.is_finite() {
                    return Some("cylinder: non-finite field".into());
                }
                if !unit(c.axis) {
                    return Some("cylinder: axis must be a unit vector".into());
                }
                (c.radius < 0.0 || c.half_height < 0.0)
                    .then(|| "cylinder: radius and half-height must be >= 0".into())
            }
            ConvexBody::Hull(_) => None, // checked when built
        }
    }
}

impl ConvexBody {
    /// How far the body reaches from the world origin at most (a bound, in f64): its centre's
    /// largest coordinate and its extent about it.
    fn reach(&self) -> f64 {
        let far = |v: Vec3| f64::from(v.abs().max_element());
        match self {
            ConvexBody::Box(frame) => {
                far(frame.center()) + frame.half_extents().as_dvec3().length()
            }
            ConvexBody::Capsule { a, b, radius } => far(*a).max(far(*b)) + f64::from(*radius),
            ConvexBody::Cylinder(c) => {
                far(c.center) + f64::from(c.radius) + f64::from(c.half_height)
            }
            ConvexBody::Hull(h) => h.vertices().iter().map(|v| far(*v)).fold(0.0, f64::max),
        }
    }

    /// A point inside the body: box and cylinder centre, capsule midpoint, hull vertex mean.
    pub fn center(&self) -> Vec3 {
        match self {
            ConvexBody::Box(frame) => frame.center(),
            ConvexBody::Cylinder(c) => c.center,
            ConvexBody::Capsule { a, b, .. } => 0.5 * (*a + *b),
            ConvexBody::Hull(h) => {
                h.points.iter().copied().sum::<Vec3>() / h.points.len().max(1) as f32
            }
        }
    }

    /// The farthest point of the body along `d` (any non-zero direction).
    pub fn support(&self, d: Vec3) -> Vec3 {
        match self {
            ConvexBody::Box(frame) => {
                let (center, axes, half_extents) =
                    (&frame.center(), &frame.axis_array(), &frame.half_extents());
                let mut p = *center;
                for (a, h) in axes.iter().zip(half_extents.to_array()) {
                    p += a * h * d.dot(*a).signum();
                }
                p
            }
            ConvexBody::Capsule { a, b, radius } => {
                let end = if d.dot(*b - *a) > 0.0 { *b } else { *a };
                end + d.normalize_or_zero() * *radius
            }
            ConvexBody::Cylinder(c) => {
                let along = d.dot(c.axis);
                let across = (d - along * c.axis).normalize_or_zero();
                c.center + c.axis * (c.half_height * along.signum()) + across * c.radius
            }
            ConvexBody::Hull(h) => h
                .points
                .iter()
                .copied()
                .max_by(|p, q| p.dot(d).total_cmp(&q.dot(d)))
                .unwrap_or(Vec3::ZERO),
        }
    }

    /// The axis-aligned bounding box, from the support function along the world axes.
    pub fn aabb(&self) -> Aabb {
        let mut min = Vec3::ZERO;
        let mut max = Vec3::ZERO;
        for (i, e) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
            max[i] = self.support(e)[i];
            min[i] = self.support(-e)[i];
        }
        Aabb { min, max }
    }

    /// The body turned by `q` about `pivot`.
    pub fn rotated(&self, q: Quat, pivot: Vec3) -> ConvexBody {
        let map = |p: Vec3| pivot + q * (p - pivot);
        match self {
            ConvexBody::Box(frame) => ConvexBody::Box(ObbFrame::from_parts(
                map(frame.center()),
                frame.axis_array().map(|a| q * a),
                frame.half_extents(),
            )),
            ConvexBody::Capsule { a, b, radius } => ConvexBody::Capsule {
                a: map(*a),
                b: map(*b),
                radius: *radius,
            },
            ConvexBody::Cylinder(c) => ConvexBody::Cylinder(Cylinder {
                center: map(c.center),
                axis: q * c.axis,
                ..*c
            }),
            ConvexBody::Hull(h) => {
                let qd = q.as_dquat();
                let pd = pivot.as_dvec3();
                ConvexBody::Hull(ConvexHull {
                    points: h.points.iter().map(|p| map(*p)).collect(),
                    planes: h
                        .planes
                        .iter()
                        .map(|(n, d)| {
                            let m = qd * *n;
                            // n.p <= d  <=>  (q n).(pivot + q (p - pivot)) <= d + (q n).pivot - n.pivot
                            (m, d + m.dot(pd) - n.dot(pd))
                        })
                        .collect(),
                })
            }
        }
    }

    /// A box that holds the body, aligned with its own axes (a hull's is world-aligned): the
    /// body's sub-pieces (docs/design.md §5.8) are the body cut by this box's octants.
    pub fn bounding_box(&self) -> (Vec3, [Vec3; 3], Vec3) {
        match self {
            ConvexBody::Box(frame) => (frame.center(), frame.axis_array(), frame.half_extents()),
            ConvexBody::Capsule { a, b, radius } => {
                let d = *b - *a;
                let u = d.try_normalize().unwrap_or(Vec3::X);
                let (v, w) = u.any_orthonormal_pair();
                let h = Vec3::new(0.5 * d.length() + radius, *radius, *radius);
                (0.5 * (*a + *b), [u, v, w], h)
            }
            ConvexBody::Cylinder(c) => {
                let (v, w) = c.axis.any_orthonormal_pair();
                let half = Vec3::new(c.half_height, c.radius, c.radius);
                (c.center, [c.axis, v, w], half)
            }
            ConvexBody::Hull(_) => {
                let b = self.aabb();
                (
                    0.5 * (b.min + b.max),
                    [Vec3::X, Vec3::Y, Vec3::Z],
                    0.5 * (b.max - b.min),
                )
            }
        }
    }
}

/// A convex body turning about the axis through `origin` along the unit `axis` by `angle`
/// radians (counter-clockwise about the axis; negative turns the other way; |angle| <= 2 pi).
/// Any pose: nothing ties the body's orientation or offset to the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct RotatingBody {
    /// The body at the start of the turn.
    pub body: ConvexBody,
    /// A point of the axis.
    pub origin: Vec3,
    /// The unit axis.
    pub axis: Vec3,
    /// The angle turned (radians, counter-clockwise about the axis).
    pub angle: f32,
}

impl crate::geom::Validate for RotatingBody {
    /// What is wrong with this rotation, if anything.
    fn problem(&self) -> Option<String> {
        use crate::geom::sphere::MAX_COORDINATE;
        if let Some(p) = self.body.problem() {
            return Some(p);
        }
        if !self.origin.is_finite() || !self.axis.is_finite() || !self.angle.is_finite() {
            return Some("rotation: non-finite field".into());
        }
        // As the spheres' reach: a capsule from y = -3e38 to 3e38 gave a sector of NaN bounds,
        // which no sphere was a candidate of.
        let reach = self
            .body
            .reach()
            .max(f64::from(self.origin.abs().max_element()));
        if reach > f64::from(MAX_COORDINATE) {
            return Some(format!(
                "reach from the world origin {reach:e} (the body's, or the rotation origin's) \
                 exceeds {MAX_COORDINATE:e} (f32 squares would overflow)"
            ));
        }
        if (self.axis.length() - 1.0).abs() > AXIS_TOLERANCE {
            return Some("rotation: axis must be a unit vector".into());
        }
        (self.angle.abs() > TAU).then(|| "rotation: |angle| must be <= 2 pi".into())
    }
}

impl RotatingBody {
    /// The body at parameter t in [0, 1] of the turn.
    pub fn pose(&self, t: f32) -> ConvexBody {
        self.body.rotated(
            Quat::from_axis_angle(self.axis, t * self.angle),
            self.origin,
        )
    }

    /// Distance from the body's centre to the rotation axis.
    pub fn arm_length(&self) -> f32 {
        let d = self.body.center() - self.origin;
        (d - d.dot(self.axis) * self.axis).length()
    }

    /// The chord the body's centre travels between the start and end poses.
    pub fn chord(&self) -> f32 {
        2.0 * self.arm_length() * (0.5 * self.angle.abs().min(std::f32::consts::PI)).sin()
    }

    /// Speculative CCD (docs/design.md §5.3): the start pose's AABB grown by the chord.
    pub fn speculative_aabb(&self) -> Aabb {
        let a = self.body.aabb();
        let grow = Vec3::splat(self.chord());
        Aabb {
            min: a.min - grow,
            max: a.max + grow,
        }
    }

    /// The AABB of the start and end poses.
    pub fn speculative_endpoints(&self) -> Aabb {
        self.body.aabb().union(&self.pose(1.0).aabb())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Validate;

    #[test]
    fn hull_of_a_cube_has_six_faces_and_drops_inner_points() {
        let mut pts: Vec<Vec3> = (0..8)
            .map(|k| {
                Vec3::new(
                    (k & 1) as f32 * 2.0 - 1.0,
                    ((k >> 1) & 1) as f32 * 2.0 - 1.0,
                    ((k >> 2) & 1) as f32 * 2.0 - 1.0,
                )
            })
            .collect();
        pts.push(Vec3::new(0.1, 0.2, -0.3));
        pts.push(Vec3::new(1.0, 0.0, 0.0)); // on a face, not a vertex: kept as a boundary point
        let h = ConvexHull::new(&pts).unwrap();
        assert_eq!(h.planes().len(), 6);
        assert_eq!(h.vertices().len(), 9);
        for (n, d) in h.planes() {
            assert!((n.length() - 1.0).abs() < 1e-12);
            assert!((d - 1.0).abs() < 1e-12, "{n} {d}");
            assert!(pts.iter().all(|p| n.dot(p.as_dvec3()) <= d + 1e-9));
        }
        let flat = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)];
        assert!(ConvexHull::new(&flat).is_err());
        assert!(ConvexHull::new(&flat[..3]).is_err());
        let mut nan = pts.clone();
        nan[3].y = f32::NAN;
        assert!(ConvexHull::new(&nan).is_err());
    }

    #[test]
    fn supports_reach_the_bodies_extremes() {
        let cyl = ConvexBody::Cylinder(Cylinder {
            center: Vec3::new(1.0, 0.0, 0.0),
            axis: Vec3::Z,
            radius: 2.0,
            half_height: 3.0,
        });
        assert!((cyl.support(Vec3::new(1.0, 0.0, 1.0)) - Vec3::new(3.0, 0.0, 3.0)).length() < 1e-6);
        let cap = ConvexBody::Capsule {
            a: Vec3::ZERO,
            b: Vec3::new(0.0, 4.0, 0.0),
            radius: 1.0,
        };
        let b = cap.aabb();
        assert_eq!(
            (b.min, b.max),
            (Vec3::splat(-1.0), Vec3::new(1.0, 5.0, 1.0))
        );
        let aligned = [Vec3::X, Vec3::Y, Vec3::Z];
        let bx = ConvexBody::Box(ObbFrame::from_parts(
            Vec3::ZERO,
            aligned,
            Vec3::new(1.0, 2.0, 3.0),
        ));
        assert_eq!(bx.aabb().max, Vec3::new(1.0, 2.0, 3.0));
        let r = RotatingBody {
            body: bx,
            origin: Vec3::new(0.0, -5.0, 0.0),
            axis: Vec3::Z,
            angle: std::f32::consts::PI,
        };
        // Half a turn about (0, -5, 0) moves the centre to (0, -10, 0).
        assert!((r.pose(1.0).center() - Vec3::new(0.0, -10.0, 0.0)).length() < 1e-5);
        assert!((r.chord() - 10.0).abs() < 1e-5);
        assert!(r.problem().is_none());
        let mut bad = r.clone();
        bad.angle = 7.0;
        assert!(bad.problem().is_some());
        bad.angle = -6.0;
        assert!(bad.problem().is_none());
        bad.axis = Vec3::new(0.0, 0.0, 2.0);
        assert!(crate::geom::Validate::check(&bad, 4).is_err());
    }

    #[test]
    fn rotated_hull_planes_follow_its_points() {
        let pts = [
            Vec3::ZERO,
            Vec3::new(3.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 1.0, 1.0),
        ];
        let body = ConvexBody::Hull(ConvexHull::new(&pts).unwrap());
        let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 1.1);
        let ConvexBody::Hull(h) = body.rotated(q, Vec3::new(4.0, -1.0, 2.0)) else {
            unreachable!()
        };
        for (n, d) in h.planes() {
            let on = h
                .vertices()
                .iter()
                .filter(|p| (n.dot(p.as_dvec3()) - d).abs() < 1e-5)
                .count();
            assert!(on >= 3);
            assert!(h.vertices().iter().all(|p| n.dot(p.as_dvec3()) <= d + 1e-5));
        }
    }
}
