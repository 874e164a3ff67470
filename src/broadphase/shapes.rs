//! The shape job as one trait on either backend (docs/design.md §4.4, §4.5): every touching
//! pair of oriented boxes or convex polygons, broad phase and separating-axis test in one call.
//! `cpu::sat::CpuBoxPipeline` and `GpuBoxPipeline` implement it with the same
//! signatures, keeping their buffers between frames.

use crate::broadphase::{Pair, Stats};
use crate::error::Result;
use crate::geom::obb::Obb;
use crate::geom::polygon::Polygon;

/// Every overlapping (or touching) pair of a frame's shapes, exactly: the same pairs on every
/// backend.
///
/// ```
/// use sweepfan::{Obb, ShapeOverlaps, cpu::sat::CpuBoxPipeline};
/// use glam::Vec3;
///
/// let cube = |x: f32| Obb::axis_aligned(Vec3::new(x, 0.0, 0.0), Vec3::splat(0.5));
/// let mut pipeline = CpuBoxPipeline::new(); // or GpuBoxPipeline::new(context, Proxy::Aabb)?
/// let mut pairs = Vec::new();
/// let stats = pipeline.obb_overlaps(&[cube(0.0), cube(3.0), cube(1.0)], Some(&mut pairs))?;
/// assert_eq!(pairs, [[0, 2]]); // faces touching at x = 0.5 count
/// assert_eq!(stats.pairs, 1);
/// # Ok::<(), sweepfan::Error>(())
/// ```
pub trait ShapeOverlaps {
    /// Every touching pair of `boxes`, `[i, j]` with `i < j`, in canonical order, into `out`
    /// (cleared first); `None` only counts. Boxes are validated (an
    /// [`Error::InvalidObject`](crate::Error::InvalidObject) names the first bad one); no boxes
    /// are no pairs. `Stats::tests` counts the separating-axis tests, `Stats::pairs` the pairs.
    fn obb_overlaps(&mut self, boxes: &[Obb], out: Option<&mut Vec<Pair>>) -> Result<Stats>;

    /// [`Self::obb_overlaps`] for convex polygons in the plane.
    fn polygon_overlaps(
        &mut self,
        polygons: &[Polygon],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats>;
}
