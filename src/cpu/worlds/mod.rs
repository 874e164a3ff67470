//! Many worlds in one call on the CPU (docs/design.md §2.13): the objects grouped by world
//! once, then every world run by the method on the calling thread of a task, the worlds spread
//! over the pool in chunks of about equal objects. A world of one object, or of none, costs
//! nothing; a huge world is a chunk of its own and the method parallelises it as usual.
//!
//! [`SHARED`] objects are indexed once a call ([`shared::SharedIndex`]): each world's objects
//! test the shared ones whose x intervals overlap theirs after the world's own run; the shared
//! objects' pairs with each other come from one run over them alone, as the group of world
//! `SHARED`. (They once joined every world's run, which found their pairs with each other in
//! every world again: 500 shared spheres touching one another beside 4,000 worlds of one object
//! took 2.4 s.) Each world's pairs are made canonical where they are found, so the list comes
//! out grouped and sorted with no global sort.

mod lean;
mod shared;

use super::grid::LeanGrid;
use crate::broadphase::auto::{Auto, Chosen};
use crate::broadphase::memory;
use crate::broadphase::worlds::{SHARED, WorldGroups, WorldPairs, start_batch};
use crate::broadphase::{BroadPhase, Clock, Method, Pair, Stats, cancel, stored_pairs_past_limit};
use crate::error::Result;
use crate::geom::check_u32_count;
use crate::geom::sphere::{Sphere, all_valid, invalid_scene_error};
use lean::{SweepScratch, brute_world, cascade_world, origin_world, sweep_world};
use rayon::prelude::*;
use shared::SharedIndex;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use web_time::Instant;

type Factory = dyn Fn(u64) -> Instance + Send + Sync;

/// A task's method: the batch's own, or `auto`, which runs each world by that world's own
/// choice ([`WorldBatch::auto`]).
enum Instance {
    Method(Box<dyn BroadPhase + Send>),
    Auto(Box<Auto>),
}

impl Instance {
    /// `run` on this method, with world `chosen`'s choice where it is `auto`.
    fn run<R>(
        &mut self,
        chosen: Option<&mut Chosen>,
        run: impl FnOnce(&mut dyn BroadPhase) -> R,
    ) -> R {
        match (self, chosen) {
            (Instance::Method(method), _) => run(method.as_mut()),
            (Instance::Auto(auto), Some(chosen)) => auto.with_chosen(chosen, |a| run(a)),
            (Instance::Auto(auto), None) => run(auto.as_mut()),
        }
    }

    /// `call` on this method ([`Self::run`]) into `out`; where the method's own stored-pair
    /// limit refuses the list, `call` again with no list, so that the batch goes on counting
    /// and fails naming the exact total (docs/design.md §2.13): the error named the first
    /// world (or the shared objects' run) past the limit, with its own count. The stats, and
    /// whether the list was refused (`out` then holds nothing of this call).
    fn run_counting_past_limit(
        &mut self,
        mut chosen: Option<&mut Chosen>,
        mut out: Option<&mut Vec<Pair>>,
        call: impl Fn(&mut dyn BroadPhase, Option<&mut Vec<Pair>>) -> Result<Stats>,
    ) -> Result<(Stats, bool)> {
        match self.run(chosen.as_deref_mut(), |m| call(m, out.as_deref_mut())) {
            Err(e) if matches!(e.exceeds(), Some(crate::error::Exceeds::PairList { .. })) => {
                if let Some(out) = out {
                    out.clear();
                }
                let counted = self.run(chosen, |m| call(m, None))?;
                Ok((counted, true))
            }
            result => result.map(|s| (s, false)),
        }
    }
}

/// The largest world `auto` sweeps itself (its own objects): beyond it a world is
/// a scene of its own, where `auto`'s choice (the grid, mostly) wins. At 64 spheres a world of
/// the paper's box, `sap` took 16.4 ms for 4,096 worlds in a loop of calls against 22.5 for the
/// grid and 22.7 for brute force (2-core VM); at 1,024 the grid 41 ms against sap's 209.
pub const AUTO_SWEEP_MAX: usize = 256;

/// The largest world the grid's batch walks itself ([`LeanGrid`]: the grid's frame, tests and
/// pairs in one sweep over x cells); beyond it the grid's own call, whose rows and layouts pay.
/// Paper box, 2^18 spheres in worlds of n, one thread (`examples/world_batch`), lean against
/// the call: n = 64 8.7 ms against 15.9, 96 13.2 and 13.1, 128 7.8 and 8.5, 256 20.6 and 13.8.
/// What did not pay: a column walk for larger worlds (rows in `(kx, ky)` order, each object
/// visiting its own x cell's next rows and the next x cell's three y cells by a pointer that
/// only moves forward) took 80.7 ms for 1,024 worlds of 1,024 against the call's 56.0.
const GRID_LEAN_MAX: usize = 128;

/// Worlds up to this many objects run `x`, `xy`, `xyz` and `origin_distance` as a lean walk on
/// one thread; a larger world runs the method's call, whose pair emission spreads one world over
/// the pool (a batch of one huge world would otherwise use one thread).
const LEAN_MAX: usize = 4096;

/// [`LEAN_MAX`] for brute force, whose walk is quadratic.
const BRUTE_LEAN_MAX: usize = 1024;

/// Chunks per pool thread: enough for work stealing to even out worlds of unequal sizes.
const CHUNKS_PER_THREAD: usize = 8;

/// A broad phase over a batch of independent worlds, on the CPU: `method` (or `auto`, choosing
/// per world) run in every world, the worlds in parallel. Buffers and the per-thread method
/// instances are kept across calls (a simulation calls it every step).
pub struct WorldBatch {
    name: String,
    /// Which worlds run a lean walk of the method's own rule instead of its call.
    lean: Lean,
    limit: u64,
    make: Box<Factory>,
    /// One method instance per pool thread (and one for a caller outside the pool).
    instances: Vec<Mutex<Instance>>,
    /// Under `auto`, each world's choice by its id, in the groups' order: a world keeps its own
    /// choice across calls, as a scene's `auto` does (a thread's `auto` once chose again for
    /// each world of another size, and gave a world of the size it had chosen for the choice
    /// of another: 3-14x the grid's time on batches of unequal or unlike worlds).
    choices: Option<Vec<(u32, Chosen)>>,
    groups: WorldGroups,
    chunks: Vec<Chunk>,
    shared_index: SharedIndex,
}

/// What one task found over its worlds.
#[derive(Default)]
struct Chunk {
    worlds: std::ops::Range<usize>,
    pairs: Vec<Pair>,
    counts: Vec<u64>,
    tests: u64,
    /// A world's spheres gathered (its own, then the shared ones) and its pairs, local indices.
    local: Vec<Sphere>,
    local_pairs: Vec<Pair>,
    keys: Vec<u64>,
    sweep: SweepScratch,
    alive: Vec<u32>,
    grid: LeanGrid,
}

/// The worlds a batch runs without a call's fixed costs, and how.
#[derive(Clone, Copy)]
enum Lean {
    /// Every world by the method's own call.
    Never,
    /// Worlds of at most this many objects of their own by [`sweep_world`].
    Sweep(usize),
    /// Worlds of at most this many objects by the grid's lean walk ([`LeanGrid`]).
    Grid(usize),
    /// Worlds of at most this many objects by [`cascade_world`] on this many axes.
    Cascade(usize, usize),
    /// Worlds of at most this many objects by [`brute_world`].
    Brute(usize),
    /// Worlds of at most this many objects by [`origin_world`].
    Origin(usize),
}

impl Lean {
    /// Whether a world of `objects` objects of its own (the shared ones not counted) is one for
    /// a lean walk.
    fn takes(self, objects: usize) -> bool {
        match self {
            Lean::Never => false,
            Lean::Sweep(max)
            | Lean::Grid(max)
            | Lean::Cascade(_, max)
            | Lean::Brute(max)
            | Lean::Origin(max) => objects <= max,
        }
    }
}

impl WorldBatch {
    /// `method` in every world ([`Method::Auto`]: [`Self::auto`]).
    pub fn new(method: Method) -> Self {
        if method == Method::Auto {
            return Self::auto();
        }
        let mut batch = Self::with(method.name().to_string(), move |limit| {
            Instance::Method(super::broad_phase_with_pair_limit(method, limit))
        });
        batch.lean = match method {
            // Sap's own rule, without a call's fixed costs, for worlds of every size.
            Method::Sap => Lean::Sweep(usize::MAX),
            Method::Grid => Lean::Grid(GRID_LEAN_MAX),
            Method::X => Lean::Cascade(1, LEAN_MAX),
            Method::Xy => Lean::Cascade(2, LEAN_MAX),
            Method::Xyz => Lean::Cascade(3, LEAN_MAX),
            Method::BruteForce => Lean::Brute(BRUTE_LEAN_MAX),
            Method::OriginDistance => Lean::Origin(LEAN_MAX),
            _ => Lean::Never,
        };
        batch
    }

    /// `auto` in every world: worlds of at most [`AUTO_SWEEP_MAX`] objects swept as `sap`
    /// sweeps (without a call's fixed costs), larger ones by the method `auto` chooses from
    /// each world's own objects, each world choosing as a scene of its own does (on its first
    /// call, when its size changes, every `RECHOOSE_EVERY` calls or after a call that outgrew
    /// its choice: `broadphase::auto`).
    pub fn auto() -> Self {
        let mut batch = Self::with("auto".to_string(), |limit| {
            Instance::Auto(Box::new(super::auto_with_pair_limit(limit)))
        });
        batch.lean = Lean::Sweep(AUTO_SWEEP_MAX);
        batch.choices = Some(Vec::new());
        batch
    }

    fn with(name: String, make: impl Fn(u64) -> Instance + Send + Sync + 'static) -> Self {
        Self {
            name,
            lean: Lean::Never,
            limit: super::MAX_STORED_PAIRS,
            make: Box::new(make),
            instances: Vec::new(),
            choices: None,
            groups: WorldGroups::default(),
            chunks: Vec::new(),
            shared_index: SharedIndex::default(),
        }
    }

    /// The method's name (`"grid"`, `"auto"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the most pairs one call may store over all worlds (default
    /// [`MAX_STORED_PAIRS`](crate::cpu::MAX_STORED_PAIRS)); a call finding more fails with
    /// `Error::TooLarge`.
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.limit = limit;
        self.instances.clear();
    }

    /// Finds the touching pairs of each world: `worlds[i]` is sphere `i`'s world ([`SHARED`]:
    /// every world's). With `out = None` only counts (`Stats::pairs`). An empty batch has no
    /// pairs; spheres are validated as [`BroadPhase::find_pairs`] does, and `worlds` must hold
    /// one id per sphere.
    pub fn find_pairs(
        &mut self,
        spheres: &[Sphere],
        worlds: &[u32],
        mut out: Option<&mut WorldPairs>,
    ) -> Result<Stats> {
        let mut stats = Stats::default();
        if !start_batch(spheres.len(), worlds, &mut out)? {
            return Ok(stats);
        }
        let start = Instant::now();
        // Spheres are validated where they are read: each task its worlds' (docs/design.md
        // §2.13), the shared ones here; a batch found invalid goes through `validate_spheres`
        // for the error naming its first bad sphere.
        check_u32_count(spheres.len(), "objects")?;
        self.groups.group(worlds);
        let threads = rayon::current_num_threads();
        if self.instances.len() != threads + 1 {
            self.instances = (0..=threads)
                .map(|_| Mutex::new((self.make)(self.limit)))
                .collect();
        }
        self.plan_chunks(threads);
        stats.stage("group", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let store = out.is_some();
        let shared_spheres: Vec<Sphere> = self
            .groups
            .shared
            .iter()
            .map(|&i| spheres[i as usize])
            .collect();
        if !all_valid(&shared_spheres) {
            return Err(invalid_scene_error(spheres, "the world batch"));
        }
        // The shared objects' own pairs: found in every world's run, kept once.
        let mut shared_pairs = Vec::new();
        let overflow = AtomicBool::new(false);
        let shared_found = if shared_spheres.len() >= 2 {
            let mut method = (self.make)(self.limit);
            let into = store.then_some(&mut shared_pairs);
            let (s, refused) = method.run_counting_past_limit(None, into, |m, out| {
                m.find_pairs_validated(&shared_spheres, out)
            })?;
            overflow.store(refused, Ordering::Relaxed);
            stats.tests += s.tests;
            for p in &mut shared_pairs {
                let (a, b) = (
                    self.groups.shared[p[0] as usize],
                    self.groups.shared[p[1] as usize],
                );
                *p = [a.min(b), a.max(b)];
            }
            shared_pairs.sort_unstable();
            s.pairs
        } else {
            0
        };
        self.shared_index.build(&shared_spheres);
        let stored = AtomicU64::new(shared_pairs.len() as u64);
        let budget = memory::LazyBudget::new();
        let invalid = AtomicBool::new(false);
        let limits = crate::broadphase::limits::current();
        let token = limits.cancel.clone();
        let job = Job {
            spheres,
            groups: &self.groups,
            shared: &shared_spheres,
            shared_index: &self.shared_index,
            store,
            limit: self.limit,
            stored: &stored,
            budget: &budget,
            overflow: &overflow,
            invalid: &invalid,
            token: &token,
            instances: &self.instances,
            make: &*self.make,
            lean: self.lean,
        };
        // Each chunk with its worlds' choices (none but under `auto`).
        let mut choices: Vec<&mut [(u32, Chosen)]> = Vec::with_capacity(self.chunks.len());
        let mut rest = match &mut self.choices {
            Some(kept) => {
                kept.resize_with(self.groups.ids.len(), Default::default);
                for (kept, &id) in kept.iter_mut().zip(&self.groups.ids) {
                    if kept.0 != id {
                        *kept = (id, Chosen::default());
                    }
                }
                &mut kept[..]
            }
            None => &mut [],
        };
        for chunk in &self.chunks {
            let len = chunk.worlds.len().min(rest.len());
            let (these, after) = std::mem::take(&mut rest).split_at_mut(len);
            choices.push(these);
            rest = after;
        }
        let results: Vec<Result<()>> = self
            .chunks
            .par_iter_mut()
            .zip(choices)
            .map(|(chunk, choices)| limits.run(|| job.run(chunk, choices)))
            .collect();
        cancel::check(&token)?;
        let outcome = results.into_iter().collect::<Result<()>>();
        // Bad input is the batch's error whatever else failed (a world's call past the pair
        // limit, its memory refused), as if the batch were validated first: the tasks that
        // stopped early may not have read the bad sphere.
        if invalid.load(Ordering::Relaxed) || (outcome.is_err() && !all_valid_batch(spheres)) {
            return Err(invalid_scene_error(spheres, "the world batch"));
        }
        outcome?;

        stats.tests += self.chunks.iter().map(|c| c.tests).sum::<u64>();
        let world_pairs: u64 = self.chunks.iter().flat_map(|c| &c.counts).sum();
        stats.pairs = world_pairs + shared_found;
        if overflow.load(Ordering::Relaxed) {
            self.chunks.iter_mut().for_each(|c| c.pairs = Vec::new());
            return Err(stored_pairs_past_limit(stats.pairs, self.limit));
        }
        if let Some(out) = out {
            let (pairs, ids, offsets) = out.parts_mut();
            pairs.clear();
            memory::reserve_pairs(pairs, stats.pairs as usize, stats.pairs)?;
            ids.extend_from_slice(&self.groups.ids);
            offsets.push(0);
            for chunk in &self.chunks {
                pairs.extend_from_slice(&chunk.pairs);
                for &c in &chunk.counts {
                    offsets.push(offsets.last().copied().unwrap_or(0) + c as usize);
                }
            }
            if !self.groups.shared.is_empty() {
                ids.push(SHARED);
                pairs.extend_from_slice(&shared_pairs);
                offsets.push(pairs.len());
            }
        }
        stats.stage("pairs", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }

    /// Splits the worlds into chunks of about equal objects (shared ones counted in each).
    fn plan_chunks(&mut self, threads: usize) {
        let g = &self.groups;
        let worlds = g.ids.len();
        let per_world_shared = g.shared.len();
        let total = g.order.len() + worlds * per_world_shared;
        let target = total.div_ceil(threads * CHUNKS_PER_THREAD).max(1);
        let mut ranges = Vec::new();
        let (mut begin, mut objects) = (0, 0);
        for k in 0..worlds {
            objects += g.starts[k + 1] - g.starts[k] + per_world_shared;
            if objects >= target {
                ranges.push(begin..k + 1);
                (begin, objects) = (k + 1, 0);
            }
        }
        if begin < worlds {
            ranges.push(begin..worlds);
        }
        self.chunks.resize_with(ranges.len(), Chunk::default);
        for (chunk, range) in self.chunks.iter_mut().zip(ranges) {
            chunk.worlds = range;
        }
    }
}

/// Whether every sphere of a batch passes the rule, in parallel pieces for a large batch (only
/// on a failed call's path).
fn all_valid_batch(spheres: &[Sphere]) -> bool {
    spheres.par_chunks(1 << 14).all(all_valid)
}

/// What every task reads.
struct Job<'a> {
    spheres: &'a [Sphere],
    groups: &'a WorldGroups,
    shared: &'a [Sphere],
    shared_index: &'a SharedIndex,
    store: bool,
    limit: u64,
    stored: &'a AtomicU64,
    /// The memory the stored pairs may take, all worlds together (read once a call, past
    /// 16 MiB: docs/design.md §9.14).
    budget: &'a memory::LazyBudget,
    /// Set once the stored pairs pass the limit: later worlds only count, and the call fails
    /// naming the exact total.
    overflow: &'a AtomicBool,
    /// Set by a task that read an invalid sphere; the others stop at their next world.
    invalid: &'a AtomicBool,
    token: &'a Option<cancel::CancelToken>,
    instances: &'a [Mutex<Instance>],
    make: &'a Factory,
    lean: Lean,
}

impl Job<'_> {
    /// Runs the chunk's worlds, each (under `auto`) with its choice from `choices`, the chunk's
    /// worlds' in order (empty otherwise).
    fn run(&self, chunk: &mut Chunk, choices: &mut [(u32, Chosen)]) -> Result<()> {
        chunk.pairs.clear();
        chunk.counts.clear();
        chunk.tests = 0;
        let slot = rayon::current_thread_index().unwrap_or(self.instances.len() - 1);
        // The thread's instance; taken already when this thread runs a second chunk while its
        // first waits inside the method (work stealing), a fresh one.
        let mut fresh = None;
        let mut guard = self.instances[slot.min(self.instances.len() - 1)]
            .try_lock()
            .ok();
        let method: &mut Instance = match guard.as_deref_mut() {
            Some(m) => m,
            None => fresh.insert((self.make)(self.limit)),
        };
        let g = self.groups;
        let worlds = chunk.worlds.clone();
        let first = worlds.start;
        for k in worlds {
            cancel::check(self.token)?;
            if self.invalid.load(Ordering::Relaxed) {
                return Ok(());
            }
            let range = g.starts[k]..g.starts[k + 1];
            let m = range.len();
            let local: &[Sphere] = if g.contiguous {
                &self.spheres[range.clone()]
            } else {
                chunk.local.clear();
                chunk.local.extend(
                    g.order[range.clone()]
                        .iter()
                        .map(|&i| self.spheres[i as usize]),
                );
                &chunk.local
            };
            // A world the method's call takes is validated by the call, as a loop of calls
            // would be (the grid in its survey, which reads the spheres anyway); a lean walk's
            // world first, by one pass of its own. (The chunk's spheres all validated before
            // its worlds, or a separate pass over each world before the grid's call, cost 43 ms
            // for 1,024 worlds of 1,024 on one thread against 38.5 for the loop: the pass
            // paid the spheres' trip from memory that the survey would have overlapped.)
            let by_call = local.len() >= 2 && !self.lean.takes(local.len());
            if !by_call && !all_valid(local) {
                self.invalid.store(true, Ordering::Relaxed);
                return Ok(());
            }
            if local.len() < 2 && self.shared.is_empty() {
                chunk.counts.push(0);
                continue;
            }
            let mut store = self.store && !self.overflow.load(Ordering::Relaxed);
            chunk.local_pairs.clear();
            let mut local_pairs = store.then_some(&mut chunk.local_pairs);
            let into = local_pairs.as_deref_mut();
            let lean = match self.lean {
                Lean::Sweep(max) if local.len() <= max => {
                    Some(sweep_world(local, &mut chunk.sweep, into))
                }
                // `None` where the world spans more cells than its walk takes.
                Lean::Grid(max) if local.len() <= max => chunk.grid.find_pairs(local, into),
                Lean::Cascade(axes, max) if local.len() <= max => Some(cascade_world(
                    local,
                    axes,
                    &mut chunk.sweep,
                    &mut chunk.alive,
                    into,
                )),
                Lean::Brute(max) if local.len() <= max => Some(brute_world(local, into)),
                Lean::Origin(max) if local.len() <= max => {
                    Some(origin_world(local, &mut chunk.keys, into))
                }
                _ => None,
            };
            let (s, past_limit) = match lean {
                Some(s) => (s, false),
                None if by_call => {
                    // Unordered: the world's pairs are sorted below, in batch indices.
                    let chosen = choices.get_mut(k - first).map(|c| &mut c.1);
                    match method.run_counting_past_limit(chosen, local_pairs, |m, out| {
                        m.find_pairs_unordered(local, out)
                    }) {
                        Ok(s) => s,
                        Err(_) if !all_valid(local) => {
                            self.invalid.store(true, Ordering::Relaxed);
                            return Ok(());
                        }
                        Err(e) => return Err(e),
                    }
                }
                None if local.len() >= 2 => {
                    let chosen = choices.get_mut(k - first).map(|c| &mut c.1);
                    method.run_counting_past_limit(chosen, local_pairs, |m, out| {
                        m.find_pairs_validated(local, out)
                    })?
                }
                None => (Stats::default(), false),
            };
            if past_limit {
                // Past the limit in one world: this and later worlds only count.
                self.overflow.store(true, Ordering::Relaxed);
                store = false;
            }
            chunk.tests += s.tests;
            let what = "the worlds' pairs";
            if store && (chunk.local_pairs.len() as u64) < s.pairs {
                // A lean walk whose list memory refused to grow (docs/design.md §9.14).
                return Err(memory::pairs_refused(
                    what,
                    s.pairs,
                    s.pairs.saturating_mul(8),
                ));
            }
            // The world's objects against the shared ones (local indices from `m` on).
            let mut crossing = 0u64;
            let mut refused = false;
            if !self.shared.is_empty() {
                let list = &mut chunk.local_pairs;
                for (k, o) in local.iter().enumerate() {
                    chunk.tests += self.shared_index.meet(o, self.shared, |t| {
                        crossing += 1;
                        let pair = [k as u32, (m + t as usize) as u32];
                        refused |= store && !memory::try_push(list, pair);
                    });
                }
            }
            if refused {
                let pairs = s.pairs + crossing;
                return Err(memory::pairs_refused(what, pairs, pairs.saturating_mul(8)));
            }
            if !store {
                chunk.counts.push(s.pairs + crossing);
                continue;
            }
            // The pairs stored so far, this world's with them, within the budget; then room,
            // grown as a list grows (an exact reservation a world copied the list each time).
            let adding = chunk.local_pairs.len() as u64;
            let bytes = (self.stored.load(Ordering::Relaxed) + adding).saturating_mul(8);
            let pairs = bytes / 8;
            self.budget
                .check(what, bytes)
                .map_err(|e| memory::for_pair_list(e, pairs))?;
            if chunk.pairs.try_reserve(chunk.local_pairs.len()).is_err() {
                return Err(memory::pairs_refused(what, pairs, bytes));
            }
            let begin = chunk.pairs.len();
            let global = |l: u32| -> u32 {
                let l = l as usize;
                if l >= m {
                    g.shared[l - m]
                } else if g.contiguous {
                    (range.start + l) as u32
                } else {
                    g.order[range.start + l]
                }
            };
            for p in &chunk.local_pairs {
                let (a, b) = (global(p[0]), global(p[1]));
                chunk.pairs.push([a.min(b), a.max(b)]);
            }
            chunk.pairs[begin..].sort_unstable();
            let count = (chunk.pairs.len() - begin) as u64;
            // Most small worlds find nothing: no shared counter touched for them.
            if count > 0 && self.stored.fetch_add(count, Ordering::Relaxed) + count > self.limit {
                self.overflow.store(true, Ordering::Relaxed);
                chunk.pairs = Vec::new();
            }
            chunk.counts.push(count);
        }
        Ok(())
    }
}

crate::broadphase::worlds::world_broad_phase_by_own_methods!(
    WorldBatch,
    crate::broadphase::Backend::Cpu
);
