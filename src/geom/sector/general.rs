//! The sector of any rotating convex body in any pose (docs/design.md §5.8): the rotation's
//! frame, the body's cylindrical extent about the axis, the conservative sector and the union
//! of its sub-pieces' sectors, and the body as quadric clauses for the exact sweep test.

use super::Sector;
use super::body::{ConvexBody, RotatingBody};
use super::exact_sweep::{Quadric, Turn, step_poses, sweep_membership};
use glam::{DVec2, DVec3, Vec3};
use std::f64::consts::{PI, TAU};

/// The rotation's frame: origin O, e1 towards the body's centre (perpendicular to U), e2 =
/// U x e1, and U, flipped with the angle when the angle is negative so that alpha >= 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepFrame {
    /// The axis's point O.
    pub origin: DVec3,
    /// Unit, perpendicular to the axis, towards the body's centre.
    pub e1: DVec3,
    /// `axis x e1`.
    pub e2: DVec3,
    /// The unit axis U (flipped for a negative angle).
    pub axis: DVec3,
    /// The angle turned, in `0..=2 pi` radians.
    pub alpha: f64,
}

impl SweepFrame {
    /// The frame of `r`'s rotation.
    pub fn new(r: &RotatingBody) -> Self {
        let mut axis = r.axis.as_dvec3().normalize();
        let mut alpha = r.angle as f64;
        if alpha < 0.0 {
            axis = -axis;
            alpha = -alpha;
        }
        let d = (r.body.center() - r.origin).as_dvec3();
        let e1 = (d - d.dot(axis) * axis)
            .try_normalize()
            .unwrap_or_else(|| axis.any_orthonormal_vector());
        Self {
            origin: r.origin.as_dvec3(),
            e1,
            e2: axis.cross(e1),
            axis,
            alpha: alpha.min(TAU),
        }
    }

    /// World point to (x, y, z) = ((p - O).e1, (p - O).e2, (p - O).U).
    pub fn local(&self, p: DVec3) -> DVec3 {
        let d = p - self.origin;
        DVec3::new(d.dot(self.e1), d.dot(self.e2), d.dot(self.axis))
    }

    fn local_dir(&self, v: DVec3) -> DVec3 {
        DVec3::new(v.dot(self.e1), v.dot(self.e2), v.dot(self.axis))
    }
}

/// Where a body lies about the axis: radial range, axial range, and (when it stays off the
/// axis) its angular span (lo, hi) about e1, in radians within (-pi, pi).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CylindricalExtent {
    /// Smallest distance from the axis.
    pub r_min: f64,
    /// Largest distance from the axis.
    pub r_max: f64,
    /// Lowest point along the axis.
    pub z_min: f64,
    /// Highest point along the axis.
    pub z_max: f64,
    /// The angular span (lo, hi) about e1, when the body stays off the axis.
    pub span: Option<(f64, f64)>,
}

/// Convex hull of 2D points, counter-clockwise (Andrew's monotone chain).
fn hull_2d(mut p: Vec<DVec2>) -> Vec<DVec2> {
    p.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: DVec2, a: DVec2, b: DVec2| (a - o).perp_dot(b - o);
    let mut h: Vec<DVec2> = Vec::with_capacity(2 * p.len());
    for pass in 0..2 {
        let start = h.len();
        let iter: Box<dyn Iterator<Item = &DVec2>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while h.len() >= start + 2 && cross(h[h.len() - 2], h[h.len() - 1], q) <= 0.0 {
                h.pop();
            }
            h.push(q);
        }
        h.pop();
    }
    h
}

/// Distance from the origin to the segment a-b.
fn origin_to_segment(a: DVec2, b: DVec2) -> f64 {
    let d = b - a;
    let t = if d.length_squared() > 0.0 {
        (-a.dot(d) / d.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + t * d).length()
}

impl CylindricalExtent {
    /// The extent of the convex hull of `points` (frame coordinates): a vertex set's radial
    /// maximum, axial range and angular span are its vertices'; its radial minimum is the
    /// distance from the axis to the hull of their projections (0 when that holds the axis).
    pub fn of_points(points: &[DVec3]) -> Self {
        let z_min = points.iter().map(|p| p.z).fold(f64::MAX, f64::min);
        let z_max = points.iter().map(|p| p.z).fold(f64::MIN, f64::max);
        let flat: Vec<DVec2> = points.iter().map(|p| p.truncate()).collect();
        let r_max = flat.iter().map(|p| p.length()).fold(0.0, f64::max);
        let poly = hull_2d(flat.clone());
        let n = poly.len();
        let inside = n >= 3 && (0..n).all(|i| poly[i].perp_dot(poly[(i + 1) % n]) >= 0.0);
        let r_min = if inside {
            0.0
        } else {
            (0..n.max(1))
                .map(|i| origin_to_segment(poly[i], poly[(i + 1) % n]))
                .fold(f64::MAX, f64::min)
        };
        Self::with_span(r_min, r_max, z_min, z_max, || {
            // Angles about the centroid's direction, then about e1.
            let mid = flat.iter().copied().sum::<DVec2>() / flat.len() as f64;
            let base = mid.y.atan2(mid.x);
            let rel = |p: &DVec2| (mid.perp_dot(*p)).atan2(mid.dot(*p));
            let lo = flat.iter().map(rel).fold(f64::MAX, f64::min);
            let hi = flat.iter().map(rel).fold(f64::MIN, f64::max);
            (base + lo, base + hi)
        })
    }

    /// The extent of every point within `radius` of the segment a-b (frame coordinates), with
    /// `z_reach` the body's axial reach beyond the segment's ends (a capsule's radius; a
    /// cylinder's disc). The radial bounds and span are those of the projected segment grown by
    /// `radius`: exact for a capsule, enclosing for a cylinder.
    pub fn of_segment(a: DVec3, b: DVec3, radius: f64, z_reach: f64) -> Self {
        let (a2, b2) = (a.truncate(), b.truncate());
        let r_min = (origin_to_segment(a2, b2) - radius).max(0.0);
        let r_max = a2.length().max(b2.length()) + radius;
        let z_min = a.z.min(b.z) - z_reach;
        let z_max = a.z.max(b.z) + z_reach;
        Self::with_span(r_min, r_max, z_min, z_max, || {
            let mid = 0.5 * (a2 + b2);
            let base = mid.y.atan2(mid.x);
            let cone = |p: DVec2| {
                let phi = mid.perp_dot(p).atan2(mid.dot(p));
                let widen = (radius / p.length()).min(1.0).asin();
                (phi - widen, phi + widen)
            };
            let (ca, cb) = (cone(a2), cone(b2));
            (base + ca.0.min(cb.0), base + ca.1.max(cb.1))
        })
    }

    fn with_span(
        r_min: f64,
        r_max: f64,
        z_min: f64,
        z_max: f64,
        span: impl FnOnce() -> (f64, f64),
    ) -> Self {
        Self {
            r_min,
            r_max,
            z_min,
            z_max,
            span: (r_min > 0.0).then(span),
        }
    }

    /// Both extents at once (each bound the tighter of the two): an enclosure of the
    /// intersection of the bodies. `None` when they cannot meet.
    pub fn intersect(&self, o: &Self) -> Option<Self> {
        let span = match (self.span, o.span) {
            (Some(a), Some(b)) => {
                // Both spans are under half a turn: on the branch where their centres are
                // within pi of each other, arcs that meet overlap as intervals.
                let shift = TAU * ((0.5 * (a.0 + a.1 - b.0 - b.1)) / TAU).round();
                Some((a.0.max(b.0 + shift), a.1.min(b.1 + shift)))
            }
            (a, b) => a.or(b),
        };
        let e = Self {
            r_min: self.r_min.max(o.r_min),
            r_max: self.r_max.min(o.r_max),
            z_min: self.z_min.max(o.z_min),
            z_max: self.z_max.min(o.z_max),
            span,
        };
        let empty = e.r_min > e.r_max || e.z_min > e.z_max || span.is_some_and(|s| s.0 > s.1);
        (!empty).then_some(e)
    }

    /// The sector this extent sweeps turning by alpha >= 0, grown by a rounding margin.
    pub fn swept(&self, alpha: f64) -> LocalSector {
        let scale = self.r_max + self.z_min.abs().max(self.z_max.abs()) + 1.0;
        let pad = SECTOR_PAD * scale;
        let (centre, half_angle) = match self.span {
            Some((lo, hi)) if hi - lo + alpha + 2.0 * ANGLE_PAD < TAU => {
                (0.5 * (lo + hi + alpha), 0.5 * (hi - lo + alpha) + ANGLE_PAD)
            }
            _ => (0.0, PI),
        };
        LocalSector {
            centre,
            half_angle: half_angle.min(PI),
            r_min: (self.r_min - pad).max(0.0),
            r_max: self.r_max + pad,
            z_min: self.z_min - pad,
            z_max: self.z_max + pad,
        }
    }
}

/// Outward margin of the built sectors, relative to their size, and of their half-angle
/// (radians): more than f32 rounding of the point tests, so no enclosed point falls out.
pub(crate) const SECTOR_PAD: f64 = 2e-6;
/// Outward margin of the built sectors' half-angle (radians).
pub(crate) const ANGLE_PAD: f64 = 1e-5;

/// A sector in the rotation's frame: centre angle about e1, half-angle (pi = full ring),
/// radial and axial ranges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalSector {
    /// Centre angle about e1 (radians).
    pub centre: f64,
    /// Half-angle (pi: the full ring).
    pub half_angle: f64,
    /// Inner radius.
    pub r_min: f64,
    /// Outer radius.
    pub r_max: f64,
    /// Lowest point along the axis.
    pub z_min: f64,
    /// Highest point along the axis.
    pub z_max: f64,
}

impl LocalSector {
    /// The world sector (origin moved along U to the middle of the axial range).
    pub fn to_world(&self, f: &SweepFrame) -> Sector {
        let mid = 0.5 * (self.z_min + self.z_max);
        let a = f.e1 * self.centre.cos() + f.e2 * self.centre.sin();
        Sector {
            origin: (f.origin + f.axis * mid).as_vec3(),
            axis: f.axis.as_vec3(),
            centre_axis: a.normalize().as_vec3(),
            half_angle: self.half_angle as f32,
            inner_radius: self.r_min as f32,
            outer_radius: self.r_max as f32,
            half_thickness: (0.5 * (self.z_max - self.z_min)) as f32,
        }
    }

    /// The f32 fields the classifiers test: (cos c, sin c, cos theta, full ring) and (r^2, R^2,
    /// z_min, z_max).
    pub fn fields(&self) -> [[f32; 4]; 2] {
        let full = self.half_angle >= PI;
        [
            [
                self.centre.cos() as f32,
                self.centre.sin() as f32,
                self.half_angle.cos() as f32,
                if full { 1.0 } else { 0.0 },
            ],
            [
                (self.r_min * self.r_min) as f32,
                (self.r_max * self.r_max) as f32,
                self.z_min as f32,
                self.z_max as f32,
            ],
        ]
    }
}

/// The f32 sector test on the frame point (x, y, z), as the GPU does it.
#[inline]
pub fn in_local_sector(f: &[[f32; 4]; 2], x: f32, y: f32, z: f32) -> bool {
    let rho2 = x * x + y * y;
    z >= f[1][2]
        && z <= f[1][3]
        && rho2 >= f[1][0]
        && rho2 <= f[1][1]
        && (f[0][3] != 0.0 || x * f[0][0] + y * f[0][1] >= f[0][2] * rho2.sqrt())
}

/// The body's constraints and extents in one rotation's frame.
#[derive(Clone, Debug)]
pub struct GeneralSweep {
    /// The rotation's frame.
    pub frame: SweepFrame,
    /// The body's extent in it.
    pub extent: CylindricalExtent,
    /// The body as an OR of clauses, each an AND of quadrics `<= 0`.
    pub clauses: Vec<Vec<Quadric>>,
    /// The turn, for the exact sweep test.
    pub turn: Turn,
}

fn box_corners(center: Vec3, axes: &[Vec3; 3], half: Vec3) -> [DVec3; 8] {
    std::array::from_fn(|k| {
        let s = |bit: usize| if k >> bit & 1 == 0 { -1.0 } else { 1.0 };
        center.as_dvec3()
            + axes[0].as_dvec3() * (s(0) * half.x as f64)
            + axes[1].as_dvec3() * (s(1) * half.y as f64)
            + axes[2].as_dvec3() * (s(2) * half.z as f64)
    })
}

/// The body's extent in the frame and, when `with_clauses`, its quadric clauses.
fn extent_and_clauses(
    f: &SweepFrame,
    body: &ConvexBody,
    with_clauses: bool,
) -> (CylindricalExtent, Vec<Vec<Quadric>>) {
    let (extent, clauses) = match body {
        ConvexBody::Box(frame) => {
            let (center, axes, half_extents) =
                (&frame.center(), &frame.axis_array(), &frame.half_extents());
            let corners = box_corners(*center, axes, *half_extents).map(|p| f.local(p));
            let c = f.local(center.as_dvec3());
            let planes = (0..6)
                .map(|i| {
                    let n = f.local_dir(axes[i % 3].as_dvec3()) * if i < 3 { 1.0 } else { -1.0 };
                    Quadric::plane(n, n.dot(c) + half_extents[i % 3] as f64)
                })
                .collect();
            (CylindricalExtent::of_points(&corners), vec![planes])
        }
        ConvexBody::Hull(h) => {
            let pts: Vec<DVec3> = h.vertices().iter().map(|p| f.local(p.as_dvec3())).collect();
            let planes = h
                .planes()
                .iter()
                .map(|(n, d)| {
                    let m = f.local_dir(*n);
                    Quadric::plane(m, d - n.dot(f.origin))
                })
                .collect();
            (CylindricalExtent::of_points(&pts), vec![planes])
        }
        ConvexBody::Capsule { a, b, radius } => {
            let (a, b, r) = (f.local(a.as_dvec3()), f.local(b.as_dvec3()), *radius as f64);
            let mut clauses = vec![vec![Quadric::ball(a, r)], vec![Quadric::ball(b, r)]];
            let len = (b - a).length();
            if len > 0.0 {
                let u = (b - a) / len;
                clauses.push(vec![
                    Quadric::plane(-u, -u.dot(a)),
                    Quadric::plane(u, u.dot(b)),
                    Quadric::line_cylinder(a, u, r),
                ]);
            }
            (CylindricalExtent::of_segment(a, b, r, r), clauses)
        }
        ConvexBody::Cylinder(cylinder) => {
            let c = f.local(cylinder.center.as_dvec3());
            let u = f.local_dir(cylinder.axis.as_dvec3()).normalize();
            let (rad, h) = (cylinder.radius as f64, cylinder.half_height as f64);
            let clauses = vec![vec![
                Quadric::plane(u, u.dot(c) + h),
                Quadric::plane(-u, -u.dot(c) + h),
                Quadric::line_cylinder(c, u, rad),
            ]];
            // The end discs reach rad * |sin| of the tilt beyond the axis' ends along z.
            let reach = rad * (1.0 - u.z * u.z).max(0.0).sqrt();
            (
                CylindricalExtent::of_segment(c - u * h, c + u * h, rad, reach),
                clauses,
            )
        }
    };
    (extent, if with_clauses { clauses } else { Vec::new() })
}

impl GeneralSweep {
    /// The sweep of `r`: its frame, extent and clauses.
    pub fn new(r: &RotatingBody) -> Self {
        let f = SweepFrame::new(r);
        let (extent, clauses) = extent_and_clauses(&f, &r.body, true);
        Self {
            frame: f,
            extent,
            clauses,
            turn: Turn::new(f.alpha),
        }
    }

    /// The conservative sector: the extent swept by the whole turn.
    pub fn conservative(&self) -> LocalSector {
        self.extent.swept(self.frame.alpha)
    }

    /// The sectors of the body's pieces in the octants of its bounding box (`split` 1 to 4
    /// per axis): each piece's extent is the octant box's cut by the body's. Their union
    /// holds the sweep and lies inside the conservative sector.
    pub fn piece_sectors(&self, body: &ConvexBody, split: u32) -> Vec<LocalSector> {
        let (c, axes, half) = body.bounding_box();
        let n = split.clamp(1, 4);
        let cell = half * 2.0 / n as f32;
        let mut out = Vec::new();
        for k in 0..n * n * n {
            let idx = Vec3::new((k % n) as f32, (k / n % n) as f32, (k / (n * n)) as f32);
            let off = (idx + 0.5) * cell - half;
            let centre = c + axes[0] * off.x + axes[1] * off.y + axes[2] * off.z;
            let corners = box_corners(centre, &axes, 0.5 * cell).map(|p| self.frame.local(p));
            if let Some(e) = CylindricalExtent::of_points(&corners).intersect(&self.extent) {
                out.push(e.swept(self.frame.alpha));
            }
        }
        out
    }

    /// Whether a world point is swept: (exactly, at one of the `steps + 1` poses k alpha / steps).
    pub fn contains(&self, p: Vec3, steps: u32) -> (bool, bool) {
        let poses = step_poses(self.frame.alpha, steps);
        sweep_membership(
            self.clauses.iter().map(|c| c.as_slice()),
            &self.turn,
            self.frame.local(p.as_dvec3()),
            &poses,
        )
    }
}

impl RotatingBody {
    /// The conservative sector (docs/design.md §5.8): the body's radial, axial and angular
    /// extent about the axis, swept by the angle; a full ring when the body reaches the axis
    /// or its span plus the angle reaches a full turn.
    pub fn conservative_sector(&self) -> Sector {
        let f = SweepFrame::new(self);
        let (extent, _) = extent_and_clauses(&f, &self.body, false);
        extent.swept(f.alpha).to_world(&f)
    }

    /// Whether the body passes through the point at some angle of the turn (exact up to
    /// `exact_sweep::TOLERANCE`).
    pub fn sweep_contains(&self, p: Vec3) -> bool {
        GeneralSweep::new(self).contains(p, 0).0
    }
}
