//! The box job: every overlapping pair of a slice of axis-aligned boxes (docs/design.md §4.7).
//! The CPU's `BoxSweep` and the GPU's `GpuBoxPipeline` implement it with the sweeps that are
//! also the oriented-box and polygon pipelines' broad phase; `sweepfan::boxes::BoxBroadPhase`
//! holds boxes by the caller's ids over either.

use crate::broadphase::memory::LazyBudget;
use crate::broadphase::world_slots::{EXACT_SLOTS, WorldSlots};
use crate::broadphase::worlds::{WorldGroups, check_world_ids};
use crate::broadphase::{Backend, Pair, Stats};
use crate::error::Result;
use crate::geom::aabb::Aabb;
use std::pin::Pin;

/// Finds every pair of overlapping boxes. Exact: a pair is reported if and only if
/// [`Aabb::overlaps`] holds (closed intervals, so touching boxes overlap), whatever the backend.
///
/// An implementation provides the `_unordered` forms ([`Self::aabb_overlaps_unordered`], and
/// where it has better ones, [`Self::aabb_overlaps_in_worlds_unordered`] and
/// [`Self::aabb_overlaps_unordered_async`]); the ordered forms sort what those return, and
/// `BoxBroadPhase` calls the `_unordered` ones (it orders by the caller's ids). An
/// implementation written before the split, overriding `aabb_overlaps_async` or
/// `aabb_overlaps_in_worlds`, moves those bodies to the `_unordered` names.
pub trait AabbOverlaps: Send {
    /// Short name for reports (`aabb_sweep`).
    fn name(&self) -> String;

    /// Where it runs.
    fn backend(&self) -> Backend;

    /// Every overlapping pair of `boxes` as positions `(i, j)`, `i < j`, each once, in
    /// canonical order (ascending), into `out` (cleared first). `Stats::tests` counts box tests
    /// where the method knows them, `Stats::pairs` the pairs, the stage `order` the sort. Boxes
    /// must be valid ([`Validate::problem`](crate::geom::Validate::problem)): an invalid one is
    /// an [`crate::Error::InvalidObject`] naming its position.
    fn aabb_overlaps(&mut self, boxes: &[Aabb], out: &mut Vec<Pair>) -> Result<Stats> {
        let mut stats = self.aabb_overlaps_unordered(boxes, out)?;
        crate::broadphase::order_pairs(Some(out), &mut stats);
        Ok(stats)
    }

    /// [`Self::aabb_overlaps`] without the ordering: the same pairs in the implementation's own
    /// order, for a caller that only needs the set (a count, a hash set, its own sort: the box
    /// broad phase orders by the caller's ids) and would not pay for the order. What an
    /// implementation provides.
    fn aabb_overlaps_unordered(&mut self, boxes: &[Aabb], out: &mut Vec<Pair>) -> Result<Stats>;

    /// Many worlds (docs/design.md §2.13): the overlapping pairs of `boxes` whose worlds are
    /// equal or one of them [`SHARED`](crate::broadphase::worlds::SHARED) (`worlds[i]` is box
    /// `i`'s), as positions `(i, j)`, `i < j`, each once, in canonical order, into `out`
    /// (cleared first). Exact on any implementation.
    fn aabb_overlaps_in_worlds(
        &mut self,
        boxes: &[Aabb],
        worlds: &[u32],
        out: &mut Vec<Pair>,
    ) -> Result<Stats> {
        let mut stats = self.aabb_overlaps_in_worlds_unordered(boxes, worlds, out)?;
        crate::broadphase::order_pairs(Some(out), &mut stats);
        Ok(stats)
    }

    /// [`Self::aabb_overlaps_in_worlds`] without the ordering.
    ///
    /// The default is one run of [`Self::aabb_overlaps_unordered`] (one GPU frame) over the
    /// batch with each world's y coordinates replaced by their ranks in that world, worlds apart
    /// on y (`world_slots.rs`, docs/design.md §2.13); past about 4 million boxes, where the
    /// ranks no longer fit an f32 exactly, one run per world (its boxes and the shared ones) and
    /// one over the shared boxes alone. The CPU's sweep runs the worlds on the pool instead.
    fn aabb_overlaps_in_worlds_unordered(
        &mut self,
        boxes: &[Aabb],
        worlds: &[u32],
        out: &mut Vec<Pair>,
    ) -> Result<Stats> {
        overlaps_in_worlds_within(self, boxes, worlds, out, EXACT_SLOTS)
    }

    /// [`Self::aabb_overlaps`] as a future, for a browser's page, where a GPU implementation
    /// must not block on its device (docs/design.md §8.5).
    fn aabb_overlaps_async<'a>(
        &'a mut self,
        boxes: &'a [Aabb],
        out: &'a mut Vec<Pair>,
    ) -> Pin<Box<dyn Future<Output = Result<Stats>> + 'a>> {
        Box::pin(async move {
            let mut stats = self.aabb_overlaps_unordered_async(boxes, &mut *out).await?;
            crate::broadphase::order_pairs(Some(out), &mut stats);
            Ok(stats)
        })
    }

    /// [`Self::aabb_overlaps_unordered`] as a future. The default is the blocking call, ready
    /// at once: right for an implementation that never waits for a device (the CPU's).
    fn aabb_overlaps_unordered_async<'a>(
        &'a mut self,
        boxes: &'a [Aabb],
        out: &'a mut Vec<Pair>,
    ) -> Pin<Box<dyn Future<Output = Result<Stats>> + 'a>> {
        Box::pin(std::future::ready(self.aabb_overlaps_unordered(boxes, out)))
    }
}

/// Memory per pair of the box job: the positions, the caller's ids, and the previous frame's
/// ids for the events (docs/design.md §4.7).
pub(crate) const BOX_JOB_BYTES_PER_PAIR: u64 = 8 + 16 + 16;

/// `total` pairs of the box job (a frame's, or a batch of worlds' so far: each world's sweep is
/// bounded alone, their sum here) against the memory the job may use (`budget`, read once a
/// call and only past 16 MiB): the host-memory error where they do not fit.
pub(crate) fn check_box_job_pairs(total: u64, budget: &LazyBudget) -> Result<()> {
    let bytes = total.saturating_mul(BOX_JOB_BYTES_PER_PAIR);
    // Allowed: no message made (a world's call runs this).
    if budget.allows(bytes) {
        return Ok(());
    }
    budget.check_or(&format!("{total} overlapping box pairs"), bytes, |_| {
        "use fewer boxes, or boxes that overlap less (every pair is stored)".to_string()
    })
}

/// The default [`AabbOverlaps::aabb_overlaps_in_worlds_unordered`], the mapped batch allowed at most
/// `max_slots` slots (the loop over worlds past them).
pub(crate) fn overlaps_in_worlds_within<J: AabbOverlaps + ?Sized>(
    job: &mut J,
    boxes: &[Aabb],
    worlds: &[u32],
    out: &mut Vec<Pair>,
    max_slots: u64,
) -> Result<Stats> {
    let groups = world_groups(boxes, worlds)?;
    out.clear();
    if let Some(slots) = WorldSlots::new(boxes, &groups, max_slots) {
        let mut found = Vec::new();
        let mut stats = if slots.boxes.len() >= 2 {
            job.aabb_overlaps_unordered(&slots.boxes, &mut found)?
        } else {
            Stats::default()
        };
        check_positions(&found, slots.boxes.len())?;
        slots.to_batch(&found, out);
        stats.pairs = out.len() as u64;
        return Ok(stats);
    }
    let mut stats = Stats::default();
    let (mut local, mut found) = (Vec::new(), Vec::new());
    let budget = LazyBudget::new();
    for members in groups.members() {
        gather(boxes, members, &groups.shared, &mut local);
        if local.len() >= 2 {
            stats.tests += job.aabb_overlaps_unordered(&local, &mut found)?.tests;
            check_positions(&found, local.len())?;
            check_box_job_pairs((out.len() + found.len()) as u64, &budget)?;
            to_batch(&found, members, &groups.shared, out);
        }
    }
    stats.pairs = out.len() as u64;
    Ok(stats)
}

/// A box job's pairs `found` among `n` boxes checked: a caller's own [`AabbOverlaps`] may
/// return anything, and positions past the boxes, or a box with itself, are its error (not a
/// panic).
pub(crate) fn check_positions(found: &[Pair], n: usize) -> Result<()> {
    use rayon::prelude::*;
    let n = n.min(u32::MAX as usize) as u32;
    let bad = |&&[i, j]: &&Pair| i == j || i.max(j) >= n;
    if let Some(&[i, j]) = found.par_iter().find_any(bad) {
        return Err(crate::error::Error::invalid_argument(
            "overlaps",
            format!("the box broad phase returned the pair ({i}, {j}) among {n} boxes"),
        ));
    }
    Ok(())
}

pub(crate) fn world_groups(boxes: &[Aabb], worlds: &[u32]) -> Result<WorldGroups> {
    check_world_ids(boxes.len(), worlds, "worlds")?;
    crate::geom::aabb::validate_aabbs(boxes)?;
    let mut groups = WorldGroups::default();
    groups.group(worlds);
    Ok(groups)
}

impl WorldGroups {
    /// Each world's objects, then (when there are at least two shared objects) none: the run
    /// over the shared objects alone, whose pairs are kept once.
    pub(crate) fn members(&self) -> impl Iterator<Item = &[u32]> + '_ {
        let shared_alone = (self.shared.len() >= 2).then_some(&[][..]);
        self.starts
            .windows(2)
            .map(|s| &self.order[s[0]..s[1]])
            .chain(shared_alone)
    }
}

/// A world's boxes (`members`), then the shared ones, into `local`.
pub(crate) fn gather(boxes: &[Aabb], members: &[u32], shared: &[u32], local: &mut Vec<Aabb>) {
    local.clear();
    local.extend(members.iter().chain(shared).map(|&i| boxes[i as usize]));
}

/// Pairs `found` among a world's boxes and the shared ones (local positions: `members` first,
/// then `shared`) appended to `out` in batch positions; pairs of two shared boxes are left to
/// the shared objects' own run (`members` empty), where they are kept.
pub(crate) fn to_batch(found: &[Pair], members: &[u32], shared: &[u32], out: &mut Vec<Pair>) {
    let m = members.len() as u32;
    let at = |l: u32| {
        if l < m {
            members[l as usize]
        } else {
            shared[(l - m) as usize]
        }
    };
    for &[a, b] in found {
        if m > 0 && a >= m && b >= m {
            continue;
        }
        let (a, b) = (at(a), at(b));
        out.push([a.min(b), a.max(b)]);
    }
}
