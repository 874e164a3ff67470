//! Sweep and prune over axis-aligned boxes: the CPU broad phase of the shapes that are not
//! spheres (oriented boxes, polygons).
//!
//! A single sweep along one axis tests every pair whose intervals meet on that axis, which in a
//! 3D volume grows like n^(5/3). So the plane across the sweep axis is first cut into square
//! columns about as wide as the large boxes: each box enters the columns it touches, each column
//! is swept on its own, and a pair is reported only by the column holding the lower corner of the
//! two boxes' overlap across the sweep (inside both boxes, so exactly one column reports it).
//! When most boxes are huge the columns widen until this is a plain sweep.

use crate::broadphase::aabbs::{AabbOverlaps, BOX_JOB_BYTES_PER_PAIR};
use crate::broadphase::keys::ordered_bits;
use crate::broadphase::memory;
use crate::broadphase::radix::radix_sort_carrying;
use crate::broadphase::{Backend, Clock, Pair, Stats};
use crate::error::{Error, Exceeds, Result};
use crate::geom::aabb::Aabb;
use rayon::prelude::*;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};

/// A sweep that would find more candidate pairs than its caller allows: at least `at_least`
/// (the count stopped past the limit) and at most `bound` (the sweep's runs, before the
/// overlap tests across the sweep).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyCandidates {
    /// Candidates counted before the count stopped, past the limit.
    pub at_least: u64,
    /// The sweep's bound on the candidates (its runs, before the tests across the sweep).
    pub bound: u64,
}

impl TooManyCandidates {
    /// The error for a sweep of `shapes` shapes whose pairs memory cannot hold at
    /// `bytes_per_pair` each; `hint` says what the caller can change.
    pub fn error(self, shapes: usize, bytes_per_pair: u64, hint: &str) -> Error {
        let what = format!(
            "{shapes} shapes: more than {} AABB candidate pairs (the sweep bounds them by {})",
            self.at_least, self.bound
        );
        let needed = self.at_least.saturating_mul(bytes_per_pair);
        match memory::available() {
            Some(a) => memory::too_large(&what, needed, &a, hint),
            None => Error::too_large(
                Exceeds::HostMemory {
                    needed,
                    usable: None,
                },
                format!(
                    "{what}: about {} of memory needed; {hint}",
                    memory::human(needed)
                ),
            ),
        }
    }
}

/// Pairs the memory this process may use holds at `bytes_per_pair` each.
pub fn pair_budget(bytes_per_pair: u64) -> u64 {
    memory::available().map_or(u64::MAX, |a| a.usable() / bytes_per_pair.max(1))
}

/// Up to this many candidate pairs (8 MiB as a list) a sweep stores without checking.
const UNCHECKED_CANDIDATES: u64 = 1 << 20;

/// Maps coordinates across the sweep to column indices; the same floats always give the same
/// column, and the map is monotonic, which the exactly-once rule relies on.
#[derive(Clone, Copy, Debug)]
struct Columns {
    origin: [f32; 2],
    inv_cell: f32,
    dims: [u32; 2],
}

impl Columns {
    /// The column index of `v` on cross axis `k`: the floor of `(v - origin) / cell`, clamped to
    /// the columns. (`as u32` truncates, which is the floor for the non-negative values and
    /// saturates the negative ones to 0, where the floor would have been clamped: the same
    /// column as `floor`, which x86-64's baseline has no instruction for and called as a
    /// function: 5% of the box pipeline's time at density 100k.)
    #[inline(always)]
    fn cell(&self, k: usize, v: f32) -> u32 {
        // NaN cannot occur (validated input); the clamp guards rounding at the far edge.
        (((v - self.origin[k]) * self.inv_cell) as u32).min(self.dims[k] - 1)
    }
    #[inline(always)]
    fn id(&self, c1: u32, c2: u32) -> u32 {
        c1 * self.dims[1] + c2
    }
}

/// How a set of boxes is swept: the axis and the columns across it. It depends only on the
/// set, not on its order, so [`BoxSweep::order`] and [`BoxSweep::pairs`] of one frame share it.
#[derive(Clone, Copy, Debug)]
struct SweepPlan {
    axis: usize,
    across: [usize; 2],
    columns: Columns,
}

impl SweepPlan {
    /// The plan for these boxes (any plan will do for fewer than two).
    fn new(aabbs: &[Aabb]) -> Self {
        if aabbs.len() < 2 {
            return Self {
                axis: 0,
                across: [1, 2],
                columns: Columns {
                    origin: [0.0; 2],
                    inv_cell: 1.0,
                    dims: [1, 1],
                },
            };
        }
        let axis = widest_axis(aabbs);
        let across = [(axis + 1) % 3, (axis + 2) % 3];
        Self {
            axis,
            across,
            columns: columns_for(aabbs, across),
        }
    }

    /// The column of the box's lower corner across the sweep.
    #[inline(always)]
    fn lower_column(&self, b: &Aabb) -> u32 {
        let [o1, o2] = self.across;
        self.columns.id(
            self.columns.cell(0, b.min[o1]),
            self.columns.cell(1, b.min[o2]),
        )
    }

    /// Sort key: column, then lower bound on the sweep axis.
    #[inline(always)]
    fn key(&self, column: u32, b: &Aabb) -> u64 {
        (u64::from(column) << 32) | u64::from(ordered_bits(b.min[self.axis]))
    }

    /// The columns the box enters, on each cross axis.
    #[inline(always)]
    fn span(&self, b: &Aabb) -> (RangeInclusive<u32>, RangeInclusive<u32>) {
        let ([o1, o2], columns) = (self.across, &self.columns);
        let (lo1, hi1) = (columns.cell(0, b.min[o1]), columns.cell(0, b.max[o1]));
        let (lo2, hi2) = (columns.cell(1, b.min[o2]), columns.cell(1, b.max[o2]));
        (lo1..=hi1, lo2..=hi2)
    }

    /// Bits of the largest key.
    fn key_bits(&self) -> u32 {
        let columns = u64::from(self.columns.dims[0]) * u64::from(self.columns.dims[1]);
        32 + (64 - (columns - 1).leading_zeros())
    }
}

/// The sweep of one set of boxes with its buffers, kept between frames: [`BoxSweep::order`]
/// and [`BoxSweep::pairs`] share the frame's plan (axis and columns), made by
/// [`BoxSweep::plan`] (or by the first of them to run). Any plan gives exact pairs (a box's
/// columns are a monotone map of its bounds, so the overlap's lower corner lies in a column
/// both boxes enter); one made for other boxes is replaced when it would enter more than
/// 8 columns per box on average. (Fresh buffers every frame, faulted in again each
/// time, took about 16% of the box pipeline's time at density 100k on 2 cores.)
#[derive(Default)]
pub struct BoxSweep {
    plan: Option<SweepPlan>,
    keys: Vec<u64>,
    scratch: Vec<u64>,
    items: Vec<u32>,
    item_scratch: Vec<u32>,
    /// Each entry's box, in the order the entries are made.
    input: Vec<u32>,
    /// Entries per chunk of boxes (then their offsets).
    chunk_entries: Vec<usize>,
    column: Vec<u32>,
    lo: Vec<f32>,
    hi: Vec<f32>,
    rest: Vec<[f32; 4]>,
}

impl BoxSweep {
    /// A sweep with no plan and empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Plans the sweep of these boxes: the plan holds for this set in any order, until the
    /// next call.
    pub fn plan(&mut self, aabbs: &[Aabb]) {
        self.plan = Some(SweepPlan::new(aabbs));
    }

    /// The plan, made for `aabbs` when there is none yet.
    fn plan_for(&mut self, aabbs: &[Aabb]) -> SweepPlan {
        *self.plan.get_or_insert_with(|| SweepPlan::new(aabbs))
    }

    /// A permutation of the boxes (position -> index) in the order the sweep visits them: by
    /// the column of the box's lower corner, then by its lower bound on the sweep axis, then by
    /// index. Storing shape data in this order before the sweep makes the narrow phase read it
    /// almost sequentially (nearby candidates name nearby positions) instead of one cache miss
    /// per shape per test.
    pub fn order(&mut self, aabbs: &[Aabb], order: &mut Vec<u32>) {
        let plan = self.plan_for(aabbs);
        self.keys.clear();
        self.keys
            .par_extend(aabbs.par_iter().map(|b| plan.key(plan.lower_column(b), b)));
        // Radix sorts, here and in `pairs`, carrying the box's position. (Was a parallel
        // comparison sort of `(key, index)` tuples: 19% of the box pipeline's time at density
        // 100k on 2 cores, another 9% in its insertion sorts.)
        // Stopped by the caller's token, the order is still a permutation (it only places the
        // shapes' data for the sweep, which then stops at the token itself).
        let _sorted = radix_sort_carrying(
            &mut self.keys,
            &mut self.scratch,
            &mut self.items,
            &mut self.item_scratch,
            |i, _| i as u32,
            0,
            plan.key_bits(),
        );
        order.clear();
        order.extend_from_slice(&self.items);
    }

    /// Every pair of overlapping (closed, so touching counts) boxes, `i < j`, into `out`
    /// (cleared first), in the sweep's own order. Stopped by the caller's cancellation
    /// ([`crate::Limits::with_cancel`]): [`crate::Error::Interrupted`], `out` empty.
    pub fn pairs(&mut self, aabbs: &[Aabb], out: &mut Vec<Pair>) -> crate::error::Result<()> {
        // No limit: nothing to refuse but a cancellation, which leaves the list short.
        let token = crate::broadphase::cancel::current();
        let unlimited = self.pairs_at_most(aabbs, out, || u64::MAX);
        debug_assert!(unlimited.is_ok());
        let result = crate::broadphase::cancel::check(&token);
        crate::broadphase::cleared_on_error(Some(out), result)
    }

    /// [`BoxSweep::pairs`], refusing before it stores them more candidate pairs than `max()`
    /// (called only when the sweep may find more than 2^20): the runs of
    /// the sweep bound the count without visiting the candidates; past `max()`, the candidates
    /// are counted (stopping once past it) and only more than `max()` is refused, with `out`
    /// left empty (docs/design.md §9.14).
    pub fn pairs_at_most(
        &mut self,
        aabbs: &[Aabb],
        out: &mut Vec<Pair>,
        max: impl FnOnce() -> u64,
    ) -> Result<(), TooManyCandidates> {
        out.clear();
        if aabbs.len() < 2 {
            return Ok(());
        }
        // One entry per (column, box), sorted by column, then by lower bound on the sweep
        // axis, then by position: counted per chunk of boxes, then written at the chunks'
        // offsets.
        let n = aabbs.len();
        let chunk = ENTRY_CHUNK.max(n.div_ceil(4 * rayon::current_num_threads().max(1)));
        let chunks = n.div_ceil(chunk);
        let boxes_of = |c: usize| c * chunk..n.min((c + 1) * chunk);
        let count = |plan: &SweepPlan, chunk_entries: &mut Vec<usize>| {
            chunk_entries.clear();
            chunk_entries.par_extend((0..chunks).into_par_iter().map(|c| {
                aabbs[boxes_of(c)]
                    .iter()
                    .map(|b| {
                        let (r1, r2) = plan.span(b);
                        r1.count() * r2.count()
                    })
                    .sum::<usize>()
            }));
            chunk_entries.iter().sum::<usize>()
        };
        let mut plan = self.plan_for(aabbs);
        let mut total = count(&plan, &mut self.chunk_entries);
        if total as f64 > MAX_ENTRIES_PER_BOX * n as f64 && plan.columns.dims != [1, 1] {
            // A plan made for other boxes: plan these (which bounds the entries).
            plan = SweepPlan::new(aabbs);
            self.plan = Some(plan);
            total = count(&plan, &mut self.chunk_entries);
        }
        let (axis, [o1, o2], columns) = (plan.axis, plan.across, &plan.columns);
        self.keys.resize(total, 0);
        self.input.resize(total, 0);
        let (mut keys, mut input) = (&mut self.keys[..], &mut self.input[..]);
        let mut parts = Vec::with_capacity(chunks);
        for (c, &count) in self.chunk_entries.iter().enumerate() {
            let (chunk_keys, rest_keys) = std::mem::take(&mut keys).split_at_mut(count);
            let (chunk_input, rest_input) = std::mem::take(&mut input).split_at_mut(count);
            parts.push((c, chunk_keys, chunk_input));
            (keys, input) = (rest_keys, rest_input);
        }
        parts
            .into_par_iter()
            .for_each(|(c, chunk_keys, chunk_input)| {
                let mut k = 0;
                for i in boxes_of(c) {
                    let b = &aabbs[i];
                    let (r1, r2) = plan.span(b);
                    for c1 in r1 {
                        for c2 in r2.clone() {
                            chunk_keys[k] = plan.key(columns.id(c1, c2), b);
                            chunk_input[k] = i as u32;
                            k += 1;
                        }
                    }
                }
            });
        let input = &self.input;
        if !radix_sort_carrying(
            &mut self.keys,
            &mut self.scratch,
            &mut self.items,
            &mut self.item_scratch,
            |i, _| input[i],
            0,
            plan.key_bits(),
        ) {
            // Stopped by the caller's token, which every caller looks at after the sweep: no
            // pairs from keys left unsorted.
            out.clear();
            return Ok(());
        }

        // Sorted structure of arrays: the inner loop reads these sequentially.
        let index = &self.items;
        self.column.clear();
        self.column
            .par_extend(self.keys.par_iter().map(|&k| (k >> 32) as u32));
        self.lo.clear();
        self.lo
            .par_extend(index.par_iter().map(|&i| aabbs[i as usize].min[axis]));
        self.hi.clear();
        self.hi
            .par_extend(index.par_iter().map(|&i| aabbs[i as usize].max[axis]));
        self.rest.clear();
        self.rest.par_extend(index.par_iter().map(|&i| {
            let b = &aabbs[i as usize];
            [b.min[o1], b.max[o1], b.min[o2], b.max[o2]]
        }));
        let m = index.len();
        let (column, lo, hi, rest) = (&self.column, &self.lo, &self.hi, &self.rest);
        // Entry `a`'s candidates: the later entries of its column while `lo_b <= hi_a`, kept when
        // the boxes overlap across the sweep and `a`'s column holds their overlap's lower corner.
        let candidates = move |a: usize| {
            let (hi_a, ra, ia, col) = (hi[a], rest[a], index[a], column[a]);
            (a + 1..m)
                .take_while(move |&b| column[b] == col && lo[b] <= hi_a)
                .filter(move |&b| {
                    let rb = rest[b];
                    ra[0] <= rb[1]
                        && rb[0] <= ra[1]
                        && ra[2] <= rb[3]
                        && rb[2] <= ra[3]
                        // Report in the column of the overlap's lower corner only.
                        && columns.id(
                            columns.cell(0, ra[0].max(rb[0])),
                            columns.cell(1, ra[2].max(rb[2])),
                        ) == col
                })
                .map(move |b| {
                    let ib = index[b];
                    [ia.min(ib), ia.max(ib)]
                })
        };
        // Checked before anything is stored: the list (and rayon's gathering of it) would
        // otherwise abort the process where it does not fit (100,000 identical boxes: 5e9).
        let all = (m as u64).saturating_mul(m as u64 - 1) / 2;
        if all > UNCHECKED_CANDIDATES {
            let bound = candidate_bound(column, lo, hi);
            if bound > UNCHECKED_CANDIDATES {
                let max = max();
                if bound > max {
                    let at_least = count_candidates_past(m, candidates, max);
                    if at_least > max {
                        return Err(TooManyCandidates { at_least, bound });
                    }
                }
            }
        }
        // In blocks, the caller's cancellation looked at between them (docs/design.md §9.18): a
        // cancelled sweep stops with `out` short, and its callers fail as interrupted.
        let token = crate::broadphase::cancel::current();
        for start in (0..m).step_by(CANCEL_BLOCK) {
            if crate::broadphase::cancel::stopped(&token) {
                break;
            }
            out.par_extend(
                (start..m.min(start + CANCEL_BLOCK))
                    .into_par_iter()
                    .with_min_len(256)
                    .flat_map_iter(candidates),
            );
        }
        Ok(())
    }
}

/// Entries of the sweep's candidate loop between two looks at the caller's cancellation.
const CANCEL_BLOCK: usize = 1 << 14;

/// How many of `start..end`, from `start`, satisfy `inside`, which holds on a prefix of the
/// range: galloping (probes at 1, 3, 7, ... past `start`) then bisecting, so a run of k costs
/// about 2 log2(k) probes.
fn prefix_run(start: usize, end: usize, inside: impl Fn(usize) -> bool) -> usize {
    let len = end.saturating_sub(start);
    // `inside` holds for the first `lo`; the run ends within the next `step`.
    let (mut lo, mut step) = (0, 1);
    while lo + step <= len && inside(start + lo + step - 1) {
        lo += step;
        step *= 2;
    }
    let mut hi = (lo + step - 1).min(len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if inside(start + mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The sweep's candidate tests, an upper bound of its pairs, without visiting them: per entry,
/// the length of its run (the later entries of its column with `lo_b <= hi_a`; entries are
/// sorted by column, then by `lo`, so the run is a prefix).
fn candidate_bound(column: &[u32], lo: &[f32], hi: &[f32]) -> u64 {
    let m = column.len();
    (0..m)
        .into_par_iter()
        .with_min_len(4096)
        .map(|a| {
            let (col, hi_a) = (column[a], hi[a]);
            prefix_run(a + 1, m, |b| column[b] == col && lo[b] <= hi_a) as u64
        })
        .sum()
}

/// The candidates of entries `0..m`, counted without storing them until the count passes `max`
/// (then the rows under way finish and the rest are skipped): the exact count when at most
/// `max`, else a count past `max`.
fn count_candidates_past<I: Iterator>(
    m: usize,
    candidates: impl Fn(usize) -> I + Sync,
    max: u64,
) -> u64 {
    let seen = AtomicU64::new(0);
    (0..m).into_par_iter().with_min_len(256).for_each(|a| {
        if seen.load(Ordering::Relaxed) <= max {
            seen.fetch_add(candidates(a).count() as u64, Ordering::Relaxed);
        }
    });
    seen.into_inner()
}

impl AabbOverlaps for BoxSweep {
    fn name(&self) -> String {
        "aabb_sweep".into()
    }

    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    /// The sweep with a fresh plan for these boxes (they move between frames), refused before
    /// the list is stored when memory cannot hold it. `Stats::tests` is not counted (0).
    fn aabb_overlaps_unordered(&mut self, boxes: &[Aabb], out: &mut Vec<Pair>) -> Result<Stats> {
        let start = web_time::Instant::now();
        crate::geom::aabb::validate_aabbs(boxes)?;
        // The sweep's per-box buffers within the budget (10^7 boxes under `ulimit -v` aborted
        // in their growth; docs/design.md §9.14).
        memory::check_boxes(boxes.len())?;
        self.plan(boxes);
        self.pairs_at_most(boxes, out, || pair_budget(BOX_JOB_BYTES_PER_PAIR))
            .map_err(|e| {
                e.error(
                    boxes.len(),
                    BOX_JOB_BYTES_PER_PAIR,
                    "use fewer boxes, or boxes that overlap less (every pair is stored)",
                )
            })?;
        // A cancelled sweep stopped short.
        crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
        let mut stats = Stats {
            pairs: out.len() as u64,
            ..Stats::default()
        };
        stats.stage("aabb_sweep", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }

    /// The worlds on the pool, a sweep each, the shared boxes joined to every world and swept
    /// alone once.
    fn aabb_overlaps_in_worlds_unordered(
        &mut self,
        boxes: &[Aabb],
        worlds: &[u32],
        out: &mut Vec<Pair>,
    ) -> Result<Stats> {
        use crate::broadphase::aabbs::{check_box_job_pairs, gather, to_batch, world_groups};
        let start = web_time::Instant::now();
        memory::check_boxes(boxes.len())?;
        let groups = world_groups(boxes, worlds)?;
        let limits = crate::broadphase::limits::current();
        let token = limits.cancel.clone();
        let members: Vec<&[u32]> = groups.members().collect();
        // Each world's sweep is bounded alone; the sum of their pairs here.
        let total = AtomicU64::new(0);
        let budget = memory::LazyBudget::new();
        let found: Vec<Result<Vec<Pair>>> = members
            .par_chunks(8)
            .map(|chunk| {
                limits.run(|| {
                    let (mut local, mut found, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
                    let mut sweep = BoxSweep::new();
                    for members in chunk {
                        crate::broadphase::cancel::check(&token)?;
                        gather(boxes, members, &groups.shared, &mut local);
                        if local.len() >= 2 {
                            sweep.plan(&local);
                            // A world alone may not store more than memory holds.
                            sweep
                                .pairs_at_most(&local, &mut found, || {
                                    pair_budget(BOX_JOB_BYTES_PER_PAIR)
                                })
                                .map_err(|e| {
                                    e.error(
                                        local.len(),
                                        BOX_JOB_BYTES_PER_PAIR,
                                        "use fewer boxes in a world, or boxes that overlap less",
                                    )
                                })?;
                            let n = found.len() as u64;
                            let sum = total.fetch_add(n, Ordering::Relaxed) + n;
                            check_box_job_pairs(sum, &budget)?;
                            to_batch(&found, members, &groups.shared, &mut pairs);
                        }
                    }
                    // The last world's sweep may have stopped short.
                    crate::broadphase::cancel::check(&token)?;
                    Ok(pairs)
                })
            })
            .collect();
        out.clear();
        for pairs in found {
            out.extend_from_slice(&pairs?);
        }
        let mut stats = Stats {
            pairs: out.len() as u64,
            ..Stats::default()
        };
        stats.stage("aabb_sweep", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}

/// Boxes per chunk at least, when the entries are made in parallel.
const ENTRY_CHUNK: usize = 1 << 12;

/// Every pair of overlapping (closed, so touching counts) boxes, `i < j`, appended to `out`
/// after clearing it, in canonical order. (One frame of a fresh [`BoxSweep`], whose
/// [`BoxSweep::pairs`] leaves them in the sweep's own order; a cancelled call fails as it
/// does.)
pub fn aabb_sweep(aabbs: &[Aabb], out: &mut Vec<Pair>) -> crate::error::Result<()> {
    let mut sweep = BoxSweep::new();
    sweep.plan(aabbs);
    sweep.pairs(aabbs, out)?;
    crate::broadphase::canonicalize(out);
    Ok(())
}

/// The sweep's order of the boxes ([`BoxSweep::order`] of a fresh [`BoxSweep`]).
pub fn sweep_order(aabbs: &[Aabb]) -> Vec<u32> {
    let mut sweep = BoxSweep::new();
    sweep.plan(aabbs);
    let mut order = Vec::new();
    sweep.order(aabbs, &mut order);
    order
}

/// Square columns across the sweep. As wide as the 99th-percentile box (so nearly every box
/// touches at most 2 x 2 columns, while a few giants may touch many) and at most about n of
/// them; widened while the giants would add more than [`MAX_ENTRIES_PER_BOX`] entries per box.
fn columns_for(aabbs: &[Aabb], axes: [usize; 2]) -> Columns {
    let (lo, hi) = aabbs
        .par_iter()
        .map(|b| {
            (
                [b.min[axes[0]], b.min[axes[1]]],
                [b.max[axes[0]], b.max[axes[1]]],
            )
        })
        .reduce(
            || ([f32::MAX; 2], [f32::MIN; 2]),
            |a, b| {
                (
                    [a.0[0].min(b.0[0]), a.0[1].min(b.0[1])],
                    [a.1[0].max(b.1[0]), a.1[1].max(b.1[1])],
                )
            },
        );
    let mut sizes: Vec<f32> = aabbs
        .par_iter()
        .map(|b| (b.max[axes[0]] - b.min[axes[0]]).max(b.max[axes[1]] - b.min[axes[1]]))
        .collect();
    let k = (sizes.len() * 99 / 100).min(sizes.len() - 1);
    let (_, q99, _) = sizes.select_nth_unstable_by(k, f32::total_cmp);
    let span = [(hi[0] - lo[0]) as f64, (hi[1] - lo[1]) as f64];
    let n = aabbs.len() as f64;
    let mut cell = (*q99 as f64).max((span[0] * span[1] / n).sqrt());
    if !(cell > 0.0 && cell.is_finite()) {
        cell = 1.0;
    }
    loop {
        let dims = span.map(|s| ((s / cell).floor() as u64 + 1).clamp(1, 1 << 15) as u32);
        let columns = Columns {
            origin: lo,
            inv_cell: (1.0 / cell) as f32,
            dims,
        };
        let entries: u64 = aabbs
            .par_iter()
            .map(|b| {
                let w1 = columns.cell(0, b.max[axes[0]]) - columns.cell(0, b.min[axes[0]]) + 1;
                let w2 = columns.cell(1, b.max[axes[1]]) - columns.cell(1, b.min[axes[1]]) + 1;
                w1 as u64 * w2 as u64
            })
            .sum();
        if entries as f64 <= MAX_ENTRIES_PER_BOX * n || dims == [1, 1] {
            return columns;
        }
        cell *= 2.0;
    }
}

/// Bound on the (column, box) entries per box on average; 4 is the most any box touches when
/// the columns are as wide as the largest box.
const MAX_ENTRIES_PER_BOX: f64 = 8.0;

/// The axis along which the box centres have the largest variance (fewest sweep overlaps).
fn widest_axis(aabbs: &[Aabb]) -> usize {
    let (sum, sum_sq) = aabbs
        .par_iter()
        .map(|b| {
            let c = ((b.min + b.max) * 0.5).as_dvec3();
            (c, c * c)
        })
        .reduce(
            || (glam::DVec3::ZERO, glam::DVec3::ZERO),
            |a, b| (a.0 + b.0, a.1 + b.1),
        );
    let n = aabbs.len() as f64;
    let var = sum_sq / n - (sum / n) * (sum / n);
    if var.x >= var.y && var.x >= var.z {
        0
    } else if var.y >= var.z {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests;
