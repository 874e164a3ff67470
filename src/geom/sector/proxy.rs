//! The two proxies a rotating box can hand a broad phase, and the checks of a rotating-scene
//! frame's input (docs/design.md, rotating scene).

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sector::RotatingBox;
use crate::geom::sphere::{Sphere, validate_spheres};

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
    pub const ALL: [Proxy; 2] = [Proxy::ConservativeSector, Proxy::Speculative];

    /// Method name in reports.
    pub fn method_name(self) -> &'static str {
        match self {
            Proxy::ConservativeSector => "rotating-conservative-sector",
            Proxy::Speculative => "rotating-speculative",
        }
    }
}

/// The proxy AABB of one box.
pub fn proxy_aabb(b: &RotatingBox, proxy: Proxy) -> Aabb {
    match proxy {
        Proxy::ConservativeSector => {
            let obb = b.conservative_sector().bounding_box();
            let extent = obb.axes[0].abs() * obb.half_extents.x
                + obb.axes[1].abs() * obb.half_extents.y
                + obb.axes[2].abs() * obb.half_extents.z;
            Aabb::new(obb.center - extent, obb.center + extent)
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

/// Checks the boxes ([`RotatingBox::problem`]) and that every index fits u32.
pub fn validate_boxes(boxes: &[RotatingBox]) -> Result<()> {
    if boxes.len() > u32::MAX as usize - 1 {
        return Err(Error::TooLarge(format!("{} rotating boxes", boxes.len())));
    }
    for (index, b) in boxes.iter().enumerate() {
        if let Some(problem) = b.problem() {
            return Err(Error::InvalidObject {
                index,
                problem: format!("rotating box: {problem}"),
            });
        }
    }
    Ok(())
}

/// Validates a frame's input. Empty inputs are fine (nothing to find).
pub fn validate_frame_input(boxes: &[RotatingBox], spheres: &[Sphere]) -> Result<()> {
    validate_boxes(boxes)?;
    if !spheres.is_empty() {
        validate_spheres(spheres)?;
    }
    Ok(())
}
