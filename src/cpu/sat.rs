//! Separating-axis narrow phase on the CPU (docs/design.md §4): exact closed overlap of convex
//! polygons and oriented boxes, one pair at a time and batched over candidate lists, plus the
//! full CPU pipeline (AABB sweep and prune, then SAT).

use crate::broadphase::narrow::filter_in_chunks;
use crate::broadphase::shapes::ShapeOverlaps;
use crate::broadphase::{Clock, Pair, Stats, check_candidates, orient_and_canonicalize};
use crate::cpu::aabb_sweep::{BoxSweep, pair_budget};
use crate::error::Result;
use crate::geom::aabb::Aabb;
use crate::geom::exact::settle;
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet, polygon_aabbs};
use crate::geom::sat::{
    PolygonReach, SatVerdict, obb_frames_verdict, pair_bound, polygons_overlap_within,
};
use rayon::prelude::*;
use web_time::Instant;

/// The candidate pairs whose boxes overlap (or touch), into `out` (cleared first) in canonical
/// order: each `[min, max]`, sorted, whatever the candidates' order and orientation (a
/// candidate given twice is listed twice). Boxes are assumed validated ([`validate_obbs`]); an
/// out-of-range index or a self-pair is an error, and leaves `out` empty. (The narrow phase as
/// a trait, with validation and counting: `CpuNarrowPhase`.)
pub fn obb_pairs(boxes: &[Obb], candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    ordered(out, |out| obb_pairs_unordered(boxes, candidates, out))
}

/// The pairs `unordered` keeps into `out`, then put in canonical order; `out` left empty where
/// it fails.
fn ordered(
    out: &mut Vec<Pair>,
    unordered: impl FnOnce(&mut Vec<Pair>) -> Result<()>,
) -> Result<()> {
    if let Err(e) = unordered(out) {
        out.clear();
        return Err(e);
    }
    orient_and_canonicalize(out);
    Ok(())
}

/// [`obb_pairs`] without the ordering: the overlapping candidates as given, in candidate order.
pub fn obb_pairs_unordered(boxes: &[Obb], candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    obb_frame_pairs_unordered(&obb_frames(boxes), |i| &boxes[i], candidates, out)
}

/// [`obb_pairs_unordered`] on precomputed frames (see [`obb_frames`]); `box_at(i)` is the box of
/// frame `i`, for the pairs the filtered test leaves unsure (settled exactly, docs/design.md
/// §4.2).
pub fn obb_frame_pairs_unordered<'a>(
    frames: &[ObbFrame],
    box_at: impl Fn(usize) -> &'a Obb + Sync,
    candidates: &[Pair],
    out: &mut Vec<Pair>,
) -> Result<()> {
    check_candidates(frames.len(), candidates)?;
    out.clear();
    filter_in_chunks(candidates, out, |p| {
        let (i, j) = (p[0] as usize, p[1] as usize);
        match obb_frames_verdict(&frames[i], &frames[j]) {
            SatVerdict::Apart => false,
            SatVerdict::Overlap => true,
            SatVerdict::Unsure(axes) => settle(box_at(i), box_at(j), axes),
        }
    })
}

/// The polygon equivalent of [`obb_pairs`] (canonical order).
pub fn polygon_pairs(polygons: &[Polygon], candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    ordered(out, |out| {
        polygon_pairs_unordered(polygons, candidates, out)
    })
}

/// [`polygon_pairs`] without the ordering: the overlapping candidates as given, in candidate
/// order.
pub fn polygon_pairs_unordered(
    polygons: &[Polygon],
    candidates: &[Pair],
    out: &mut Vec<Pair>,
) -> Result<()> {
    polygon_set_pairs_unordered(&PolygonSet::new(polygons)?, candidates, out)
}

/// [`polygon_pairs_unordered`] on a flat polygon set.
pub fn polygon_set_pairs_unordered(
    set: &PolygonSet,
    candidates: &[Pair],
    out: &mut Vec<Pair>,
) -> Result<()> {
    check_candidates(set.len(), candidates)?;
    out.clear();
    // Each polygon's reach once, not once a candidate (docs/design.md §4.6).
    let reach: Vec<PolygonReach> = (0..set.len())
        .into_par_iter()
        .map(|i| PolygonReach::of(set.polygon(i)))
        .collect();
    filter_in_chunks(candidates, out, |&[i, j]| {
        let (i, j) = (i as usize, j as usize);
        let bound = pair_bound(&reach[i], &reach[j]);
        polygons_overlap_within(set.polygon(i), set.polygon(j), bound)
    })
}

/// Host bytes per AABB candidate pair while the pipeline holds it (docs/design.md §9.14): the
/// list (8), rayon's gathering of it before the copy into the list (8), and the SAT's kept pairs
/// with their per-chunk copies (at most 8).
const BYTES_PER_CANDIDATE: u64 = 24;

/// Maps pairs of positions in `order` back to input indices, `i < j`.
fn unpermute(pairs: &mut [Pair], order: &[u32]) {
    pairs.par_iter_mut().for_each(|p| {
        let (a, b) = (order[p[0] as usize], order[p[1] as usize]);
        *p = [a.min(b), a.max(b)];
    });
}

/// Every overlapping (or touching) pair of boxes, `i < j`, in canonical order: validation,
/// AABB sweep and prune, then the separating-axis test, then the sort (the stage `order`).
/// `Stats::tests` counts SAT tests. (One frame of a fresh [`CpuBoxPipeline`].)
pub fn obb_overlaps(boxes: &[Obb]) -> Result<(Vec<Pair>, Stats)> {
    let mut pairs = Vec::new();
    let stats = CpuBoxPipeline::new().obb_overlaps(boxes, Some(&mut pairs))?;
    Ok((pairs, stats))
}

/// The polygon equivalent of [`obb_overlaps`] (polygons are validated when constructed).
pub fn polygon_overlaps(polygons: &[Polygon]) -> Result<(Vec<Pair>, Stats)> {
    let mut pairs = Vec::new();
    let stats = CpuBoxPipeline::new().polygon_overlaps(polygons, Some(&mut pairs))?;
    Ok((pairs, stats))
}

/// The CPU box / polygon pipeline with its buffers, kept between frames (see [`BoxSweep`]).
#[derive(Default)]
pub struct CpuBoxPipeline {
    aabbs: Vec<Aabb>,
    sorted_aabbs: Vec<Aabb>,
    order: Vec<u32>,
    frames: Vec<ObbFrame>,
    candidates: Vec<Pair>,
    sweep: BoxSweep,
    /// The list of a frame that only counts.
    counted: Vec<Pair>,
}

impl CpuBoxPipeline {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The box job ([`AabbOverlaps`](crate::broadphase::aabbs::AabbOverlaps)) through this
    /// pipeline's own sweep: every overlapping pair of the caller's boxes, in canonical order,
    /// into `out` (cleared first), as `GpuBoxPipeline::aabb_overlaps`; the broad phase
    /// of the oriented-box and polygon calls fed the boxes as they are.
    pub fn aabb_overlaps(&mut self, aabbs: &[Aabb], out: &mut Vec<Pair>) -> Result<Stats> {
        crate::broadphase::aabbs::AabbOverlaps::aabb_overlaps(&mut self.sweep, aabbs, out)
    }

    /// The pairs of one frame into the caller's list, or the pipeline's own when it only
    /// counts; `out` left empty where the frame fails.
    fn with_list(
        &mut self,
        out: Option<&mut Vec<Pair>>,
        frame: impl FnOnce(&mut Self, &mut Vec<Pair>) -> Result<Stats>,
    ) -> Result<Stats> {
        let counting = out.is_none();
        let mut own = std::mem::take(&mut self.counted);
        let list = out.unwrap_or(&mut own);
        list.clear();
        let result = frame(self, list);
        if result.is_err() || counting {
            list.clear();
        }
        self.counted = own;
        result
    }
}

impl ShapeOverlaps for CpuBoxPipeline {
    /// [`obb_overlaps`], reusing this pipeline's buffers (and the caller's list).
    fn obb_overlaps(&mut self, boxes: &[Obb], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        // No boxes: no pairs, as every broad phase's empty frame (docs/design.md §1).
        if boxes.is_empty() {
            return Ok(crate::broadphase::no_pairs(out));
        }
        // Checked with the list cleared: a frame refused (a bad box) leaves no list of the
        // frame before.
        self.with_list(out, |pipeline, list| {
            validate_obbs(boxes)?;
            // The pipeline's per-box buffers within the budget (docs/design.md §9.14).
            crate::broadphase::memory::check_boxes(boxes.len())?;
            let start = Instant::now();
            let mut aabbs = std::mem::take(&mut pipeline.aabbs);
            aabbs.clear();
            aabbs.par_extend(boxes.par_iter().map(Obb::aabb));
            let mut frames = std::mem::take(&mut pipeline.frames);
            let result = pipeline.sweep_then_sat(
                start,
                &aabbs,
                |order| {
                    frames.clear();
                    frames.par_extend(order.par_iter().map(|&i| boxes[i as usize].frame()));
                    Ok(&frames[..])
                },
                |frames, order, candidates, pairs| {
                    obb_frame_pairs_unordered(
                        frames,
                        |i| &boxes[order[i] as usize],
                        candidates,
                        pairs,
                    )
                },
                list,
            );
            (pipeline.aabbs, pipeline.frames) = (aabbs, frames);
            result
        })
    }

    /// [`polygon_overlaps`], reusing this pipeline's buffers (and the caller's list).
    fn polygon_overlaps(
        &mut self,
        polygons: &[Polygon],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        if polygons.is_empty() {
            return Ok(crate::broadphase::no_pairs(out));
        }
        self.with_list(out, |pipeline, list| {
            crate::geom::check_u32_count(polygons.len(), "polygons")?;
            crate::broadphase::memory::check_boxes(polygons.len())?;
            let start = Instant::now();
            let aabbs = polygon_aabbs(polygons);
            pipeline.sweep_then_sat(
                start,
                &aabbs,
                |order| PolygonSet::in_order(polygons, order),
                |set, _, candidates, pairs| polygon_set_pairs_unordered(set, candidates, pairs),
                list,
            )
        })
    }
}

impl CpuBoxPipeline {
    /// The pipeline shared by boxes and polygons. Works in the sweep's order (see
    /// [`BoxSweep::order`]): `reorder` lays the shapes out in it, the AABB sweep finds
    /// candidates, `sat` keeps the overlapping ones; pairs are mapped back to input indices at
    /// the end.
    fn sweep_then_sat<S>(
        &mut self,
        start: Instant,
        aabbs: &[Aabb],
        reorder: impl FnOnce(&[u32]) -> Result<S>,
        sat: impl FnOnce(&S, &[u32], &[Pair], &mut Vec<Pair>) -> Result<()>,
        pairs: &mut Vec<Pair>,
    ) -> Result<Stats> {
        let mut stats = Stats::default();
        // One plan (axis and columns) for the order and the sweep: the set is the same.
        self.sweep.plan(aabbs);
        self.sweep.order(aabbs, &mut self.order);
        let order = &self.order;
        self.sorted_aabbs.clear();
        self.sorted_aabbs
            .par_extend(order.par_iter().map(|&i| aabbs[i as usize]));
        let shapes = reorder(order)?;
        let t1 = Instant::now();
        stats.stage("bounds", (t1 - start).as_secs_f64(), Clock::Wall);
        // Refused before the list is stored when memory cannot hold it (100,000 identical boxes:
        // 5e9 candidates), as the GPU pipeline refuses a list its binding cannot hold.
        self.sweep
            .pairs_at_most(&self.sorted_aabbs, &mut self.candidates, || {
                pair_budget(BYTES_PER_CANDIDATE)
            })
            .map_err(|e| {
                e.error(
                    aabbs.len(),
                    BYTES_PER_CANDIDATE,
                    "use fewer shapes, or shapes that overlap less (the CPU pipeline stores \
                     every candidate pair, with or without --count-only)",
                )
            })?;
        // A cancelled sweep stopped short.
        crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
        let t2 = Instant::now();
        stats.stage("aabb_sweep", (t2 - t1).as_secs_f64(), Clock::Wall);
        sat(&shapes, order, &self.candidates, pairs)?;
        unpermute(pairs, order);
        stats.stage("sat", t2.elapsed().as_secs_f64(), Clock::Wall);
        stats.tests = self.candidates.len() as u64;
        stats.pairs = pairs.len() as u64;
        crate::broadphase::order_pairs(Some(pairs), &mut stats);
        Ok(stats)
    }
}
