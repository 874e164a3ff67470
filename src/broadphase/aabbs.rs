//! The box job: every overlapping pair of a slice of axis-aligned boxes (docs/design.md §4.7).
//! The CPU's `BoxSweep` and the GPU's `GpuBoxPipeline` implement it with the sweeps that are
//! also the oriented-box and polygon pipelines' broad phase; `sweepfan::boxes::BoxBroadPhase`
//! holds boxes by the caller's ids over either.

use crate::broadphase::{Backend, Pair, Stats};
use crate::error::Result;
use crate::geom::aabb::Aabb;
use std::pin::Pin;

/// Finds every pair of overlapping boxes. Exact: a pair is reported if and only if
/// [`Aabb::overlaps`] holds (closed intervals, so touching boxes overlap), whatever the backend.
pub trait AabbOverlaps: Send {
    /// Short name for reports (`aabb_sweep`).
    fn name(&self) -> String;

    /// Where it runs.
    fn backend(&self) -> Backend;

    /// Every overlapping pair of `boxes` as positions `(i, j)`, `i < j`, each once, in no
    /// particular order, into `out` (cleared first). `Stats::tests` counts box tests where the
    /// method knows them, `Stats::pairs` the pairs. Boxes must be valid ([`Aabb::problem`]):
    /// an invalid one is an [`crate::Error::InvalidObject`] naming its position.
    fn aabb_overlaps(&mut self, boxes: &[Aabb], out: &mut Vec<Pair>) -> Result<Stats>;

    /// [`Self::aabb_overlaps`] as a future, for a browser's page, where a GPU implementation
    /// must not block on its device (docs/design.md §8.5). The default is the blocking call,
    /// ready at once: right for an implementation that never waits for a device (the CPU's).
    fn aabb_overlaps_async<'a>(
        &'a mut self,
        boxes: &'a [Aabb],
        out: &'a mut Vec<Pair>,
    ) -> Pin<Box<dyn Future<Output = Result<Stats>> + 'a>> {
        Box::pin(std::future::ready(self.aabb_overlaps(boxes, out)))
    }
}
