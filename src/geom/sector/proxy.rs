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

/// The proxy AABB of one box or body.
pub fn proxy_aabb(b: &impl Swept, proxy: Proxy) -> Aabb {
    match proxy {
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
    }
}

/// The broad-phase test of a box proxy against a sphere's AABB: closed overlap on all axes,
/// computed exactly like this on CPU and GPU.
#[inline(always)]
pub fn proxy_overlaps_sphere(a: &Aabb, s: &Sphere) -> bool {
    (s.center - s.radius).cmple(a.max).all() && (s.center + s.radius).cmpge(a.min).all()
}

/// Checks the boxes or bodies ([`Swept::problem`]) and that every index fits u32.
pub fn validate_boxes(boxes: &[impl Swept]) -> Result<()> {
    if boxes.len() > u32::MAX as usize - 1 {
        return Err(Error::past_u32(
            boxes.len() as u64,
            format!("{} rotating boxes", boxes.len()),
        ));
    }
    for (index, b) in boxes.iter().enumerate() {
        if let Some(problem) = b.problem() {
            return Err(Error::InvalidObject { index, problem });
        }
    }
    Ok(())
}

/// Validates a frame's input. Empty inputs are fine (nothing to find).
pub fn validate_frame_input(boxes: &[impl Swept], spheres: &[Sphere]) -> Result<()> {
    validate_boxes(boxes)?;
    if !spheres.is_empty() {
        validate_spheres(spheres)?;
    }
    Ok(())
}
