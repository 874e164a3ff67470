//! The two proxies a rotating box or body can hand a broad phase, and the checks of a
//! rotating-scene frame's input (docs/design.md §5.7, §5.8).

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sector::body::RotatingBody;
use crate::geom::sector::{RotatingBox, Sector};
use crate::geom::sphere::{Sphere, validate_spheres};
use glam::Quat;

/// A rotating object as the rotating scene's broad phase takes it: its conservative sector, its
/// speculative AABB, and the next frame's start pose. The thesis's [`RotatingBox`] and any
/// [`RotatingBody`].
pub trait Swept: Clone + Send + Sync {
    /// What is wrong with it, if anything.
    fn problem(&self) -> Option<String>;
    /// The sector that holds its whole sweep.
    fn conservative_sector(&self) -> Sector;
    /// The start pose's AABB grown by the chord of its centre (docs/design.md §5.4).
    fn speculative_aabb(&self) -> crate::geom::aabb::Aabb;
    /// Its start pose turned by its angle: the next frame's.
    fn advance(&mut self);
}

/// The [`Swept`] methods that the type's own methods of the same names answer, its problem
/// worded "`$what`: PROBLEM".
macro_rules! by_own_methods {
    ($t:ident, $what:literal) => {
        fn problem(&self) -> Option<String> {
            <$t as crate::geom::Validate>::problem(self).map(|p| format!("{}: {p}", $what))
        }
        fn conservative_sector(&self) -> Sector {
            $t::conservative_sector(self)
        }
        fn speculative_aabb(&self) -> Aabb {
            $t::speculative_aabb(self)
        }
    };
}

impl Swept for RotatingBox {
    by_own_methods!(RotatingBox, "rotating box");
    fn advance(&mut self) {
        // The arm is re-orthonormalised so it does not drift off U.
        let arm = crate::geom::sector::rodrigues(self.arm, self.axis, self.angle);
        self.arm = (arm - self.axis * arm.dot(self.axis)).normalize();
    }
}

impl Swept for RotatingBody {
    by_own_methods!(RotatingBody, "rotating body");
    fn advance(&mut self) {
        self.body = self
            .body
            .rotated(Quat::from_axis_angle(self.axis, self.angle), self.origin);
    }
}

/// What a box hands to the broad phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// World AABB of the conservative sector's bounding box (`conservative_sector()` then
    /// `bounding_box()`).
    ConservativeSector,
    /// The speculative-CCD AABB (start pose grown by the chord).
    Speculative,
}

impl Proxy {
    /// Every proxy, in report order.
    pub const ALL: [Proxy; 2] = [Proxy::ConservativeSector, Proxy::Speculative];

    /// Method name in reports.
    pub fn method_name(self) -> &'static str {
        match self {
            Proxy::ConservativeSector => "rotating-conservative-sector",
            Proxy::Speculative => "rotating-speculative",
        }
    }
}

/// The proxy AABB of one box or body, grown by its rounding slack (`ROUNDING_ULPS`).
pub fn proxy_aabb(b: &impl Swept, proxy: Proxy) -> Aabb {
    let a = match proxy {
        Proxy::ConservativeSector => {
            let obb = b.conservative_sector().bounding_box();
            let extent = obb.axis(0).abs() * obb.half(0)
                + obb.axis(1).abs() * obb.half(1)
                + obb.axis(2).abs() * obb.half(2);
            Aabb::new(obb.center() - extent, obb.center() + extent)
        }
        Proxy::Speculative => {
            let a = b.speculative_aabb();
            Aabb::new(a.min, a.max)
        }
    };
    let slack = a.min.abs().max(a.max.abs()) * (ROUNDING_ULPS * f32::EPSILON);
    Aabb::new(a.min - slack, a.max + slack)
}

/// Units in the last place, of a corner's magnitude, that a proxy's corners are grown by: the
/// corners are f32 sums and products of the body's frame (a handful of roundings each), so far
/// from the origin they fell short of the volume they bound (a box turning 1.2e7 from the
/// origin: spheres touching it by 0.19 lay outside its proxy, and the exact test never saw
/// them). Near the origin the growth is below 1e-5 of the body's size.
pub const ROUNDING_ULPS: f32 = 4.0;

/// The broad-phase test of a box proxy against a sphere's AABB: closed overlap on all axes,
/// computed exactly like this on CPU and GPU.
#[inline(always)]
pub fn proxy_overlaps_sphere(a: &Aabb, s: &Sphere) -> bool {
    (s.center - s.radius).cmple(a.max).all() && (s.center + s.radius).cmpge(a.min).all()
}

/// Checks the boxes or bodies ([`Swept::problem`], [`crate::geom::Validate`]'s convention: the
/// lowest bad index named, fewer than 2^32 - 1, none is fine).
pub fn validate_boxes(boxes: &[impl Swept]) -> Result<()> {
    crate::geom::check_u32_count(boxes.len(), "rotating boxes")?;
    crate::geom::check_each(boxes, |b, index| match b.problem() {
        Some(problem) => Err(Error::InvalidObject { index, problem }),
        None => Ok(()),
    })
}

/// Validates a frame's input. Empty inputs are fine (nothing to find).
pub fn validate_frame_input(boxes: &[impl Swept], spheres: &[Sphere]) -> Result<()> {
    validate_boxes(boxes)?;
    validate_spheres(spheres)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    /// Boxes turning far from the origin (1e5 to 1.2e7, where an f32 step is up to 1): every
    /// corner of every pose, computed in f64, lies in the conservative sector's proxy AABB (it
    /// fell short by up to 0.19 at 1.2e7, so touching spheres were never tested). (The
    /// speculative proxy bounds the centre's chord only, by its definition.)
    #[test]
    fn proxies_far_from_the_origin_hold_every_pose() {
        let unit = |v: DVec3| v.normalize().as_vec3();
        for (k, scale) in [1e5f64, 1e6, 3e6, 1.2e7].into_iter().enumerate() {
            for m in 0..40 {
                let f = (k * 40 + m) as f64;
                let axis = unit(DVec3::new(f.sin(), (1.7 * f).cos(), 0.3 + (0.9 * f).sin()));
                let side = unit(DVec3::new((2.1 * f).cos(), 0.4, (1.3 * f).sin()));
                let arm =
                    unit(side.as_dvec3() - side.as_dvec3().dot(axis.as_dvec3()) * axis.as_dvec3());
                let b = RotatingBox {
                    origin: (DVec3::new(0.57, -0.78, -0.34) * scale).as_vec3(),
                    axis,
                    arm,
                    distance: (1.25 + (f * 0.37) % 1.25) as f32,
                    widths: DVec3::new(1.0 + (f * 0.11) % 1.5, 0.5 + (f * 0.23) % 2.0, 2.0)
                        .as_vec3(),
                    angle: ((f * 0.19) % 0.8) as f32,
                };
                assert!(crate::geom::Validate::problem(&b).is_none(), "{b:?}");
                {
                    let proxy = Proxy::ConservativeSector;
                    let a = proxy_aabb(&b, proxy);
                    for step in 0..=64 {
                        let phi = b.angle as f64 * step as f64 / 64.0;
                        let (u, y0) = (b.axis.as_dvec3(), b.arm.as_dvec3());
                        let turn = |v: DVec3| {
                            v * phi.cos()
                                + u.cross(v) * phi.sin()
                                + u * u.dot(v) * (1.0 - phi.cos())
                        };
                        let (y, x) = (turn(y0), turn(y0.cross(u)));
                        let centre = b.origin.as_dvec3() + b.distance as f64 * y;
                        let half = b.widths.as_dvec3() * 0.5;
                        for corner in 0..8 {
                            let s = |bit: usize| if corner >> bit & 1 == 1 { 1.0 } else { -1.0 };
                            let p =
                                centre + x * half.x * s(0) + y * half.y * s(1) + u * half.z * s(2);
                            assert!(
                                (0..3)
                                    .all(|i| f64::from(a.min[i]) <= p[i]
                                        && p[i] <= f64::from(a.max[i])),
                                "{proxy:?} at {scale}: {p} outside {a:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
