//! The partitioned broad phase (docs/design.md §2.10): a scene too large for one run of a method
//! (a storage binding, a device's memory) is split into parts along the axis of largest
//! spread; each part holds a block of consecutive objects (*owned*) and the later objects
//! within their reach (*ghosts*), and keeps the touching pairs with an owned object, so that
//! each pair is found in exactly one part. Giants (the grid's rule, [`crate::geom::radii`]) are
//! tested against every object in a pass of their own. Any method runs inside a part, on any
//! number of devices ("runners"); a part that does not fit (an [`Error::TooLarge`]) is split
//! in two and run again.
//!
//! ```
//! use glam::Vec3;
//! use sweepfan::partition::{self, PartRunner};
//! use sweepfan::cpu::MAX_STORED_PAIRS;
//! use sweepfan::{BroadPhase, Method, Sphere, cpu};
//!
//! let spheres: Vec<Sphere> =
//!     (0..1000).map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0)).collect();
//! let mut grid = cpu::broad_phase(Method::Grid);
//! let mut run = |part: &[Sphere], out: &mut Vec<[u32; 2]>| grid.find_pairs(part, Some(out));
//! let mut pairs = Vec::new();
//! // Parts of at most 100 objects: 20 blocks of 50, each with its one ghost.
//! let (stats, report) =
//!     partition::find_pairs(&spheres, Some(&mut pairs), 100, MAX_STORED_PAIRS, &mut [&mut run as &mut PartRunner])?;
//! assert!(pairs.is_sorted()); // canonical, as every list the library returns
//! assert_eq!((pairs.len(), stats.pairs), (999, 999));
//! assert_eq!(report.parts, 20);
//! # Ok::<(), sweepfan::Error>(())
//! ```

mod pairs;
mod plan;
pub mod slabs;
#[cfg(test)]
pub(crate) mod tests;

pub use crate::broadphase::PartsReport;
use crate::broadphase::{Clock, Pair, Stats};
use crate::error::{Error, Exceeds, Result};
use crate::geom::radii::{WHOLE_SCENE_GIANTS_MAX, giants_of};
use crate::geom::sphere::Sphere;
use pairs::{Storing, giant_pass, keep_pairs, reserve_pairs};
use plan::{Order, Tile, initial_tiles};
use rayon::prelude::*;
use std::sync::{Condvar, Mutex};
use web_time::Instant;

/// Runs the parts of a frame. Any `FnMut(&[Sphere], &mut Vec<Pair>) -> Result<Stats>` closure
/// is one ([`RunsParts::run`]). A runner whose device works apart from the host (a GPU) also
/// *starts* a part before it finishes the one before: the host then gathers and uploads the next
/// part, and keeps the last part's pairs, while the device runs (docs/design.md §2.10).
pub trait RunsParts: Send {
    /// Every touching pair of `part` (local indices, `i < j`, any order) into `out`,
    /// replacing its contents. An [`Error::TooLarge`] asks for smaller parts; any other error
    /// ends the run.
    fn run(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats>;

    /// Starts `part` without waiting for it. `true`: it is finished later by [`Self::finish`]
    /// (parts finish in the order they started); `false` (the default): nothing was started,
    /// [`Self::run`] runs it. Errors as [`Self::run`]'s.
    fn start(&mut self, _part: &[Sphere]) -> Result<bool> {
        Ok(false)
    }

    /// Finishes the oldest part started ([`Self::start`]; `part` is that part again): its
    /// pairs, as [`Self::run`] gives them.
    fn finish(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        self.run(part, out)
    }
}

impl<F> RunsParts for F
where
    F: FnMut(&[Sphere], &mut Vec<Pair>) -> Result<Stats> + Send,
{
    fn run(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        self(part, out)
    }
}

/// A runner of parts, as [`find_pairs`] takes them.
pub type PartRunner<'a> = dyn RunsParts + 'a;

/// Every touching pair of `spheres` (validated; an empty scene has none), found part by part
/// with parts of at most `max_objects` objects to begin with, spread over `runners` (each on
/// its own thread when there are several). Pairs `i < j` in canonical order (the joined lists
/// sorted in the stage `order`; [`find_pairs_unordered`] skips it).
///
/// `Stats::tests`: the tests of every part run (ghosts with ghosts included) plus the giants'
/// (each giant against every other object, each giant pair once).
///
/// `pair_limit`: the most pairs the call may store over all parts; a call finding more fails
/// with [`Error::TooLarge`] naming the exact count: past it the parts' pairs are counted, no
/// longer stored (each part meets its method's own limit too). A part too large for
/// its runner's device or memory is split; one past a pair list's limit or u32 indices is not.
pub fn find_pairs(
    spheres: &[Sphere],
    mut out: Option<&mut Vec<Pair>>,
    max_objects: usize,
    pair_limit: u64,
    runners: &mut [&mut PartRunner<'_>],
) -> Result<(Stats, PartsReport)> {
    let (mut stats, report) = find_pairs_unordered(
        spheres,
        out.as_deref_mut(),
        max_objects,
        pair_limit,
        runners,
    )?;
    crate::broadphase::order_pairs(out, &mut stats);
    Ok((stats, report))
}

/// [`find_pairs`] without the ordering: the same pairs (each `i < j`) as the parts gave them,
/// for a caller that only needs the set or orders them itself.
pub fn find_pairs_unordered(
    spheres: &[Sphere],
    mut out: Option<&mut Vec<Pair>>,
    max_objects: usize,
    pair_limit: u64,
    runners: &mut [&mut PartRunner<'_>],
) -> Result<(Stats, PartsReport)> {
    let result = find_pairs_into(
        spheres,
        out.as_deref_mut(),
        max_objects,
        pair_limit,
        runners,
    );
    crate::broadphase::cleared_on_error(out, result)
}

/// [`find_pairs`], `out` as it left it on an error.
fn find_pairs_into(
    spheres: &[Sphere],
    out: Option<&mut Vec<Pair>>,
    max_objects: usize,
    pair_limit: u64,
    runners: &mut [&mut PartRunner<'_>],
) -> Result<(Stats, PartsReport)> {
    if spheres.is_empty() {
        return Ok((crate::broadphase::no_pairs(out), PartsReport::default()));
    }
    if runners.is_empty() {
        return Err(Error::invalid_argument(
            "runner",
            "a partitioned run needs a runner",
        ));
    }
    let start = Instant::now();
    let (giants, _) = giants_of(spheres, WHOLE_SCENE_GIANTS_MAX);
    let members: Vec<u32> = if giants.is_empty() {
        (0..spheres.len() as u32).collect()
    } else {
        let mut is_giant = vec![false; spheres.len()];
        giants.iter().for_each(|&g| is_giant[g as usize] = true);
        (0..spheres.len() as u32)
            .filter(|&i| !is_giant[i as usize])
            .collect()
    };
    let store = out.is_some();
    let storing = Storing::new(store, pair_limit);
    let mut found = Vec::new();
    let mut report = PartsReport {
        giants: giants.len() as u32,
        devices: runners.len() as u32,
        ..Default::default()
    };
    let mut tests = 0u64;
    let mut pairs = 0u64;
    let mut host = HostSteps::default();
    // The objects' spatial order and the first tiles: the stage `tiles` (`order` names the
    // canonical sort of a call's pairs, absent where the list came ordered).
    host.add("tiles", start.elapsed().as_secs_f64());
    if !members.is_empty() {
        let begun = Instant::now();
        let order = Order::new(spheres, members);
        let tiles = initial_tiles(&order, max_objects);
        host.add("tiles", begun.elapsed().as_secs_f64());
        let done = run_tiles(spheres, &order, tiles, runners, &storing)?;
        tests += done.tests;
        pairs += done.pairs;
        found = done.found;
        report.parts = done.parts;
        report.splits = done.splits;
        report.ghosts = done.ghosts;
        report.largest = done.largest;
        host.merge(done.host);
    }
    let begun = Instant::now();
    let out_of_giants = storing.now().then_some(&mut found);
    let (giant_tests, giant_pairs) = giant_pass(spheres, &giants, out_of_giants)?;
    host.add("giants", begun.elapsed().as_secs_f64());
    tests += giant_tests;
    pairs += giant_pairs;
    if store && pairs > pair_limit {
        return Err(crate::broadphase::stored_pairs_past_limit(
            pairs, pair_limit,
        ));
    }
    if let Some(out) = out {
        *out = found;
    }
    let mut stats = Stats {
        tests,
        pairs,
        stages: Vec::new(),
        chosen: None,
    };
    stats.stage("partitioned", start.elapsed().as_secs_f64(), Clock::Wall);
    // Where the parts report their host side by step (a GPU's frames, docs/design.md §9.16),
    // the frame does too: theirs summed over the parts, with the partition's own (the order,
    // each part's gather and the pairs it keeps, the giants), summed over runners.
    if host.from_parts {
        for (step, seconds) in host.steps {
            stats.stage(step, seconds, Clock::Host);
        }
    }
    Ok((stats, report))
}

/// Host time by step, summed over the parts of a frame.
#[derive(Default)]
struct HostSteps {
    steps: Vec<(&'static str, f64)>,
    /// Whether a part reported host steps of its own (`Clock::Host` stages).
    from_parts: bool,
}

impl HostSteps {
    fn add(&mut self, step: &'static str, seconds: f64) {
        match self.steps.iter_mut().find(|(s, _)| *s == step) {
            Some((_, t)) => *t += seconds,
            None => self.steps.push((step, seconds)),
        }
    }

    /// A part's `Clock::Host` stages.
    fn add_part(&mut self, stats: &Stats) {
        for s in stats.stages.iter().filter(|s| s.clock == Clock::Host) {
            self.add(s.stage, s.seconds);
            self.from_parts = true;
        }
    }

    fn merge(&mut self, other: HostSteps) {
        for (step, seconds) in other.steps {
            self.add(step, seconds);
        }
        self.from_parts |= other.from_parts;
    }
}

/// Totals of the parts run.
#[derive(Default)]
struct Done {
    tests: u64,
    pairs: u64,
    parts: u64,
    splits: u64,
    ghosts: u64,
    largest: u64,
    found: Vec<Pair>,
    host: HostSteps,
}

/// The queue the runners share: parts waiting, parts running (a running part may come back
/// split), and the first error.
struct Queue {
    waiting: Vec<Tile>,
    running: usize,
    error: Option<Error>,
    /// A runner's panic, raised again on the caller's thread.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

fn run_tiles(
    spheres: &[Sphere],
    order: &Order,
    tiles: Vec<Tile>,
    runners: &mut [&mut PartRunner<'_>],
    storing: &Storing,
) -> Result<Done> {
    let queue = Mutex::new(Queue {
        waiting: tiles,
        running: 0,
        error: None,
        panic: None,
    });
    let changed = Condvar::new();
    let results: Vec<Done> = if runners.len() == 1 {
        vec![worker(
            spheres,
            order,
            &queue,
            &changed,
            &mut *runners[0],
            storing,
        )]
    } else {
        // Each runner's thread runs under the caller's limits (budget, cancellation).
        let limits = &crate::broadphase::limits::current();
        std::thread::scope(|scope| {
            let handles: Vec<_> = runners
                .iter_mut()
                .map(|runner| {
                    let (queue, changed) = (&queue, &changed);
                    scope.spawn(move || {
                        limits
                            .run(|| worker(spheres, order, queue, changed, &mut **runner, storing))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let queue = queue.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(payload) = queue.panic {
        std::panic::resume_unwind(payload);
    }
    if let Some(e) = queue.error {
        return Err(e);
    }
    let mut total = Done::default();
    for d in results {
        total.tests += d.tests;
        total.pairs += d.pairs;
        total.parts += d.parts;
        total.splits += d.splits;
        total.ghosts += d.ghosts;
        total.largest = total.largest.max(d.largest);
        total.host.merge(d.host);
        if storing.past() {
            // Past the caller's limit: the pairs are counted, the lists dropped.
            total.found = Vec::new();
        } else if total.found.is_empty() {
            total.found = d.found;
        } else {
            reserve_pairs(&mut total.found, d.found.len())?;
            total.found.extend_from_slice(&d.found);
        }
    }
    Ok(total)
}

/// A part ready to run: its tile, its objects' global indices (owned, then ghosts) and their
/// spheres. Each runner keeps two, the one running and the next.
#[derive(Default)]
struct Part {
    tile: Option<Tile>,
    ids: Vec<u32>,
    spheres: Vec<Sphere>,
    start: Start,
}

/// Where a part stands with its runner ([`RunsParts::start`]).
#[derive(Default)]
enum Start {
    /// Not asked yet.
    #[default]
    No,
    /// Started: [`RunsParts::finish`] gives its pairs.
    InFlight,
    /// Not started: [`RunsParts::run`] runs it.
    Whole,
    /// Its start failed, or panicked: the part's result.
    Failed(Error),
    Panicked(Box<dyn std::any::Any + Send>),
}

impl Part {
    /// Takes `tile` and gathers its objects.
    fn load(&mut self, tile: Tile, spheres: &[Sphere], order: &Order) {
        gather(spheres, order, &tile, &mut self.ids, &mut self.spheres);
        self.tile = Some(tile);
        self.start = Start::No;
    }

    /// Asks `runner` to start the part. A cancelled run starts none (docs/design.md §9.18):
    /// a device's submission may block while it runs the part before (lavapipe's does), so a
    /// run that went on starting parts after Ctrl-C kept the process for whole frames.
    fn start(&mut self, runner: &mut PartRunner<'_>) {
        if let Err(e) = crate::broadphase::cancel::check(&crate::broadphase::cancel::current()) {
            self.start = Start::Failed(e);
            return;
        }
        self.start = match guarded(|| runner.start(&self.spheres)) {
            Ok(Ok(true)) => Start::InFlight,
            Ok(Ok(false)) => Start::Whole,
            Ok(Err(e)) => Start::Failed(e),
            Err(payload) => Start::Panicked(payload),
        };
    }

    fn in_flight(&self) -> bool {
        matches!(self.start, Start::InFlight)
    }

    /// The part's pairs into `out`: finished, run, or its start's failure.
    fn result(&mut self, runner: &mut PartRunner<'_>, out: &mut Vec<Pair>) -> Result<Stats> {
        match std::mem::take(&mut self.start) {
            Start::InFlight => runner.finish(&self.spheres, out),
            Start::Failed(e) => Err(e),
            Start::Panicked(payload) => std::panic::resume_unwind(payload),
            Start::No | Start::Whole => {
                crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
                runner.run(&self.spheres, out)
            }
        }
    }

    /// A part started and no longer wanted (the run stops): finished, its result dropped, so
    /// the runner is left with nothing in flight.
    fn drain(&mut self, runner: &mut PartRunner<'_>, out: &mut Vec<Pair>) {
        if self.in_flight() {
            let _ = guarded(|| self.result(runner, out));
        }
        self.start = Start::No;
    }
}

/// `f`, a panic caught as its payload.
fn guarded<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
}

/// One runner's loop: takes a part, runs it, keeps its pairs or puts its halves back. On a
/// runner that starts parts ([`RunsParts::start`]), the next part is gathered and started
/// while the current one runs on the device, and the current one's pairs are kept while the
/// next runs. On another, a large next part, when one is waiting, is gathered on a thread of
/// its own while the current one runs.
fn worker(
    spheres: &[Sphere],
    order: &Order,
    queue: &Mutex<Queue>,
    changed: &Condvar,
    runner: &mut PartRunner<'_>,
    storing: &Storing,
) -> Done {
    let lock = || queue.lock().unwrap_or_else(|p| p.into_inner());
    // A waiting tile, taken (counted as running). `wait`: while none waits and other parts
    // run (they may come back split); `None` once the run is over or has failed. Without
    // `wait`: `None` when none waits now.
    let take = |wait: bool| {
        let mut q = lock();
        loop {
            if q.error.is_some() {
                return None;
            }
            if let Some(t) = q.waiting.pop() {
                q.running += 1;
                return Some(t);
            }
            if q.running == 0 || !wait {
                return None;
            }
            q = changed.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    };
    let mut done = Done::default();
    let mut local = Vec::new();
    let (mut current, mut next) = (Part::default(), Part::default());
    loop {
        if current.tile.is_none() {
            match take(true) {
                Some(tile) => {
                    let begun = Instant::now();
                    current.load(tile, spheres, order);
                    done.host.add("gather", begun.elapsed().as_secs_f64());
                }
                None => return done,
            }
        }
        // A runner that starts parts starts this one now (unless it did as the next part).
        if matches!(current.start, Start::No) {
            current.start(runner);
        }
        // The next part: one to follow a part on the device, and a small one, are gathered
        // now; a large one to follow a part run here, while this part runs.
        let ahead = take(false);
        let (run_now, gather_later) = match ahead {
            Some(t) if !current.in_flight() && t.owned.len() + t.ghosts.len() >= PARALLEL_PART => {
                (None, Some(t))
            }
            other => (other, None),
        };
        if let Some(tile) = run_now {
            let begun = Instant::now();
            next.load(tile, spheres, order);
            done.host.add("gather", begun.elapsed().as_secs_f64());
            if current.in_flight() {
                next.start(runner);
            }
        }
        // A runner that panics must not leave the others waiting for its part: the panic ends
        // the run as an error, and is raised again once every runner has stopped.
        let mut run = || guarded(|| current.result(runner, &mut local));
        let result = match gather_later {
            None => run(),
            Some(tile) => std::thread::scope(|scope| {
                let next = &mut next;
                let gathering = scope.spawn(move || next.load(tile, spheres, order));
                let result = run();
                if let Err(payload) = gathering.join() {
                    std::panic::resume_unwind(payload);
                }
                result
            }),
        };
        let tile = current.tile.take().expect("a part to run");
        let result = match result {
            Ok(result) => result,
            Err(payload) => {
                next.drain(runner, &mut local);
                let mut q = lock();
                q.running -= 1 + usize::from(next.tile.is_some());
                q.panic.get_or_insert(payload);
                q.error
                    .get_or_insert(Error::Panicked("a part's runner panicked".into()));
                drop(q);
                changed.notify_all();
                return done;
            }
        };
        let (mut halves, mut failure) = (None, None);
        let size = current.spheres.len();
        match result {
            Ok(stats) => {
                done.parts += 1;
                done.tests += stats.tests;
                done.ghosts += tile.ghosts.len() as u64;
                done.largest = done.largest.max(size as u64);
                done.host.add_part(&stats);
                let begun = Instant::now();
                let keeping = storing.now();
                let found = keeping.then_some(&mut done.found);
                match keep_pairs(&tile, &local, &current.ids, found) {
                    Ok(pairs) => {
                        done.pairs += pairs;
                        if keeping && storing.add(pairs) {
                            done.found = Vec::new();
                        }
                    }
                    Err(e) => failure = Some(e),
                }
                done.host.add("keep", begun.elapsed().as_secs_f64());
            }
            // Smaller parts fit a device's bindings, memory and dispatches and the host's
            // memory (a part's own list's included); a count (a pair list's limit, u32 indices)
            // they do not lower.
            Err(Error::TooLarge {
                exceeds,
                message: why,
            }) if !matches!(exceeds, Exceeds::PairList { .. } | Exceeds::Index32 { .. }) => {
                match tile.split(order) {
                    Some(two) => {
                        done.splits += 1;
                        halves = Some(two);
                    }
                    None => {
                        failure = Some(Error::too_large(
                            exceeds,
                            format!("{why} (even a part of {size} objects does not fit)"),
                        ))
                    }
                }
            }
            Err(e) => failure = Some(e),
        }
        let failed = failure.is_some();
        let mut q = lock();
        q.running -= 1;
        if let Some(two) = halves {
            q.waiting.extend(two);
        }
        if let Some(e) = failure {
            q.error.get_or_insert(e);
        }
        // After an error (this part's or another runner's) the next part is not run: it no
        // longer counts as running.
        let stop = q.error.is_some();
        if stop {
            q.running -= usize::from(next.tile.take().is_some());
        }
        drop(q);
        changed.notify_all();
        if failed || stop {
            next.drain(runner, &mut local);
            return done;
        }
        std::mem::swap(&mut current, &mut next);
    }
}

/// From this many objects (or pairs) a part is gathered (or its pairs kept) in parallel: the
/// gather reads the scene at random, by the order along the split axis, and a part of tens of
/// millions of objects spent seconds in it on one thread.
const PARALLEL_PART: usize = 1 << 16;

/// The part of `tile`: its objects' global indices (owned, then ghosts) and their spheres.
fn gather(
    spheres: &[Sphere],
    order: &Order,
    tile: &Tile,
    ids: &mut Vec<u32>,
    part: &mut Vec<Sphere>,
) {
    let id = |&p: &u32| order.ids[p as usize];
    ids.clear();
    part.clear();
    if tile.owned.len() + tile.ghosts.len() < PARALLEL_PART {
        ids.extend(tile.owned.clone().map(|p| id(&p)));
        ids.extend(tile.ghosts.iter().map(id));
        part.extend(ids.iter().map(|&i| spheres[i as usize]));
    } else {
        ids.par_extend(tile.owned.clone().into_par_iter().map(|p| id(&p)));
        ids.par_extend(tile.ghosts.par_iter().map(id));
        part.par_extend(ids.par_iter().map(|&i| spheres[i as usize]));
    }
}
