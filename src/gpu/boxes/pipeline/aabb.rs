//! The box broad phase on the GPU pipeline (the box job, docs/design.md §4.7): the caller's
//! axis-aligned boxes through the same sweep as the shapes' broad phase.

use super::{Broad, GpuBoxPipeline, Until, Uploaded, shape_count};
use crate::broadphase::{Clock, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::gpu::boxes::aabb_sap::{SweepLayout, aabb_bytes};
use crate::gpu::boxes::sat::Exact;
use crate::gpu::boxes::uploads::AABBS;
use crate::gpu::context::block::blocking;
use web_time::Instant;

impl GpuBoxPipeline {
    blocking! {
        /// The box broad phase ([`AabbOverlaps`](crate::broadphase::aabbs::AabbOverlaps),
        /// docs/design.md §4.7): every pair of the caller's boxes that overlap or touch (closed
        /// intervals), `i < j`, in canonical order, into `out`; the same
        /// sweep as the shapes' broad phase, fed the boxes as they are. Exact: the walk compares
        /// the caller's floats; when a coordinate is subnormal (which a GPU may flush to zero in a
        /// comparison, which can only add pairs) the host tests the pairs found again. Needs the
        /// AABB proxy (the default).
        pub fn aabb_overlaps = "a box frame";
        pub async fn aabb_overlaps_async(
            &mut self,
            boxes: &[Aabb],
            out: &mut Vec<Pair>,
        ) -> Result<Stats> {
            let mut stats = self.aabb_overlaps_unordered_async(boxes, out).await?;
            crate::broadphase::order_pairs(Some(out), &mut stats);
            Ok(stats)
        }
    }

    /// The box broad phase's pairs in the device's order (the trait's
    /// `aabb_overlaps_unordered`).
    pub(crate) async fn aabb_overlaps_unordered_async(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<Pair>,
    ) -> Result<Stats> {
        let start = Instant::now();
        if !matches!(self.broad, Broad::Aabb(_)) {
            return Err(Error::OutOfOrder(format!(
                "the box broad phase needs the AABB sweep; this pipeline uses {}",
                self.proxy().name()
            )));
        }
        out.clear();
        if boxes.len() < 2 {
            crate::geom::aabb::validate_aabbs(boxes)?;
            let mut stats = Stats::default();
            stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
            return Ok(stats);
        }
        crate::geom::aabb::validate_aabbs(boxes)?;
        let subnormal = crate::geom::aabb::any_subnormal(boxes);
        let n = shape_count(boxes.len())?;
        let device = aabb_bytes(boxes);
        let bytes = bytemuck::cast_slice::<[f32; 8], u8>(&device);
        self.ctx
            .ensure_storage(&mut self.aabbs, "boxes", bytes.len() as u64)?;
        self.uploads.stage(AABBS, bytes);
        self.set_layout(|| SweepLayout::for_aabbs(boxes));
        let mut stats = self
            .run(
                Uploaded::Aabbs(n),
                Until::Candidates,
                Exact::NONE,
                Some(out),
                start,
            )
            .await?;
        if subnormal {
            out.retain(|p| boxes[p[0] as usize].overlaps(&boxes[p[1] as usize]));
        }
        stats.pairs = out.len() as u64;
        Ok(stats)
    }
}
