//! Parallel pair emission shared by the CPU methods: the candidate loop of a method runs over
//! chunks of its outer index on rayon's pool, each chunk counting tests and pushing touching
//! pairs into its own buffer (owned by the method and reused across frames); the buffers are
//! gathered at the end, in canonical order by default (each chunk partitions its pairs by first
//! index as its walk ends, each bucket is sorted in cache into its place: `ordered`,
//! docs/design.md §2.14), or concatenated as found. Counting without storing (`out = None`)
//! never allocates pairs.
//!
//! Storing, every growth of a buffer is checked before it is made (docs/design.md §9.14): its
//! pairs against the pair limit, its bytes (with every other chunk's, and then the final list's)
//! against the memory this process may use ([`LazyBudget`]: the smallest of available memory,
//! the address-space limit and the cgroup's). Past either, storing stops, the counting goes on,
//! and the call fails with [`Error::TooLarge`] naming the exact count, as the GPU's pair list
//! does when its count exceeds what a binding holds.

use crate::broadphase::memory::LazyBudget;
use crate::broadphase::{Clock, Pair, Stats};
use crate::error::{Error, Exceeds, Result};
use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use web_time::Instant;

pub use crate::broadphase::MAX_STORED_PAIRS;

mod ordered;

/// Pairs a chunk's buffer holds when it first grows.
const MIN_BUFFER_PAIRS: usize = 64;

/// Below this many outer items one chunk runs on the calling thread (no pool round trip).
const SERIAL_MAX_ITEMS: usize = 512;
/// Chunks per call at most: enough for work stealing to even out skewed rows (the triangular
/// brute force, a dense cluster) without making the final merge noticeable.
const MAX_CHUNKS: usize = 128;
/// Most items a chunk hands its work at once, its cancellation looked at in between
/// (docs/design.md §9.18): one object's candidates may be the whole scene (one point, a line, a
/// cell holding every object), so a chunk of 1/128 of the objects ran for seconds with no check.
const CANCEL_SLICE: usize = 1 << 16;
/// The first slice of a chunk; each next one is 8 times larger, up to [`CANCEL_SLICE`], while a
/// slice's tests stay below [`TESTS_PER_LOOK`], and halves while they exceed it. Few calls a
/// chunk: each call of a walk finds its place again (the dense rows' binary search), and slices
/// of at most 512 items, doubling from 32, cost the density million 1-6 ms a frame on one thread.
const FIRST_SLICE: usize = 64;
/// About the tests between two looks at the token (a few ms to tens of ms of work).
const TESTS_PER_LOOK: u64 = 1 << 22;

/// Where one chunk's candidate loop reports its sphere tests.
pub struct Sink<'a> {
    pub tests: u64,
    pub pairs: u64,
    buffer: &'a mut Vec<Pair>,
    store: bool,
    /// Pairs of this buffer already added to `stored`.
    reported: usize,
    stored: &'a AtomicU64,
    /// Bytes of buffer growth this call made, over every chunk.
    grown: &'a AtomicU64,
    budget: &'a LazyBudget,
    overflow: &'a AtomicBool,
    /// Set when the memory budget, not the pair limit, stopped the storing.
    out_of_memory: &'a AtomicBool,
    limit: u64,
    /// The caller's cancellation, for work whose chunks are long ([`Sink::cancelled`]).
    cancel: &'a Option<crate::broadphase::cancel::CancelToken>,
}

impl Sink<'_> {
    /// Whether the caller cancelled the call (docs/design.md §9.18): work whose rows are long
    /// (brute force: a row is n tests) looks at it between rows and stops early. The chunk's
    /// results are then never used: the call returns `Error::Interrupted`.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(crate::broadphase::cancel::CancelToken::is_cancelled)
    }

    /// One narrow-phase test: [`Sphere::touches`] on objects `ia` and `ib` (in either order).
    #[inline(always)]
    pub fn test(&mut self, a: &Sphere, b: &Sphere, ia: u32, ib: u32) {
        self.tests += 1;
        if a.touches(b) {
            self.pairs += 1;
            if self.store {
                self.push(if ia < ib { [ia, ib] } else { [ib, ia] });
            }
        }
    }

    /// Adds `count` tests that the caller performs itself, reporting each touching pair with
    /// [`Sink::touching`] (loops that know their candidate count up front).
    #[inline(always)]
    pub fn add_tests(&mut self, count: u64) {
        self.tests += count;
    }

    /// A touching pair found by a test already counted with [`Sink::add_tests`].
    #[inline(always)]
    pub fn touching(&mut self, ia: u32, ib: u32) {
        self.pairs += 1;
        if self.store {
            self.push(if ia < ib { [ia, ib] } else { [ib, ia] });
        }
    }

    #[inline(always)]
    fn push(&mut self, pair: Pair) {
        if self.buffer.len() == self.buffer.capacity() {
            self.grow();
            if !self.store {
                return;
            }
        }
        self.buffer.push(pair);
    }

    /// Runs only when the buffer is full, so the shared counters are touched rarely: counts its
    /// pairs against the pair limit and its growth (a doubling) against the memory budget, and
    /// grows it only when both allow (docs/design.md §9.14).
    #[cold]
    fn grow(&mut self) {
        // A cancelled call stops storing (its result is dropped anyway): storing, not testing,
        // is what a slice of a degenerate scene spends its time on (one point, 200,000
        // spheres: 800 MB of pairs a slice, seconds between two looks at the token).
        if self.cancelled() {
            self.store = false;
            *self.buffer = Vec::new();
            self.reported = 0;
            return;
        }
        let len = self.buffer.len();
        let fresh = (len - self.reported) as u64;
        self.reported = len;
        let total = self.stored.fetch_add(fresh, Ordering::Relaxed) + fresh;
        let extra = len.max(MIN_BUFFER_PAIRS);
        let bytes = (extra * std::mem::size_of::<Pair>()) as u64;
        let grown = self.grown.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let out_of_memory = total <= self.limit && !self.budget.allows(grown);
        if out_of_memory {
            self.out_of_memory.store(true, Ordering::Relaxed);
        }
        if out_of_memory || total > self.limit || self.overflow.load(Ordering::Relaxed) {
            self.stop_storing();
            return;
        }
        // The allocator may refuse what the budget allowed (an address-space limit tighter
        // than the budget read, another thread's allocations): a refusal, not an abort.
        if self.buffer.try_reserve_exact(extra).is_err() {
            self.out_of_memory.store(true, Ordering::Relaxed);
            self.stop_storing();
        }
    }

    /// Marks the call overflowed and stops storing, releasing what was gathered (the call
    /// fails anyway).
    fn stop_storing(&mut self) {
        self.overflow.store(true, Ordering::Relaxed);
        self.store = false;
        *self.buffer = Vec::new();
        self.reported = 0;
    }
}

/// One chunk's buffers, kept across calls: the pairs as found and, gathering in order, the
/// same pairs partitioned by bucket of first index (`ordered`).
#[derive(Default)]
struct ChunkBuffers {
    pairs: Vec<Pair>,
    parted: ordered::Parted,
    /// Whether `parted` holds this call's pairs.
    is_parted: bool,
}

/// Per-chunk pair buffers, kept across calls.
pub struct PairEmitter {
    buffers: Vec<ChunkBuffers>,
    limit: u64,
    /// Calls with at most this many items run as one chunk on the calling thread.
    serial_max_items: usize,
    /// Whether the stored pairs are gathered in canonical order (the default).
    ordered: bool,
    /// Every index of the next call's pairs is below this (taken by the call).
    objects: Option<usize>,
    /// Whether the last call gathered its pairs in canonical order.
    in_order: bool,
}

impl Default for PairEmitter {
    fn default() -> Self {
        Self {
            buffers: Vec::new(),
            limit: MAX_STORED_PAIRS,
            serial_max_items: SERIAL_MAX_ITEMS,
            ordered: true,
            objects: None,
            in_order: false,
        }
    }
}

impl PairEmitter {
    /// Sets the most pairs one call may store (default [`MAX_STORED_PAIRS`]).
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Sets how many items a call may have and still run on the calling thread (default 512):
    /// methods whose per-item work is small pay more in pool round trips than they gain.
    pub fn set_serial_max_items(&mut self, items: usize) {
        self.serial_max_items = items.max(SERIAL_MAX_ITEMS);
    }

    /// Whether the pairs are gathered into `out` in canonical order (`i < j`, ascending; the
    /// default, made in the gather: docs/design.md §2.14) or as the chunks found them.
    pub fn set_ordered(&mut self, ordered: bool) {
        self.ordered = ordered;
    }

    /// Every index the next call's pairs hold is below `objects` (the scene's size): the call
    /// can then gather them in order (without it, they are gathered as found).
    pub fn set_objects(&mut self, objects: usize) {
        self.objects = Some(objects);
    }

    /// Whether the last call's pairs were gathered in canonical order (then no one needs to
    /// look); reset by the asking.
    pub fn take_in_order(&mut self) -> bool {
        std::mem::take(&mut self.in_order)
    }

    /// [`PairEmitter::run`] as a method's "pairs" stage: stores the counts in `stats` and
    /// records the wall time since `start` (the stage may begin before the emission itself).
    pub fn run_pairs_stage<F>(
        &mut self,
        stats: &mut Stats,
        start: Instant,
        items: usize,
        out: Option<&mut Vec<Pair>>,
        work: F,
    ) -> Result<()>
    where
        F: Fn(Range<usize>, &mut Sink) + Sync,
    {
        let (tests, pairs) = self.run(items, out, work)?;
        stats.tests = tests;
        stats.pairs = pairs;
        stats.stage("pairs", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(())
    }

    /// Runs `work(range, sink)` over `0..items` in chunks, in parallel when `items` is large,
    /// and gathers the pairs into `out` (cleared first) when given. Returns `(tests, pairs)`.
    pub fn run<F>(
        &mut self,
        items: usize,
        out: Option<&mut Vec<Pair>>,
        work: F,
    ) -> Result<(u64, u64)>
    where
        F: Fn(Range<usize>, &mut Sink) + Sync,
    {
        let chunks = if items <= self.serial_max_items {
            1
        } else {
            (items / SERIAL_MAX_ITEMS).clamp(1, MAX_CHUNKS)
        };
        if self.buffers.len() < chunks {
            self.buffers.resize_with(chunks, ChunkBuffers::default);
        }
        let store = out.is_some();
        self.in_order = false;
        // Gathering in order, each chunk partitions its pairs while they are in cache.
        let split = self
            .objects
            .take()
            .filter(|_| store && self.ordered)
            .map(ordered::Split::of);
        let stored = AtomicU64::new(0);
        let grown = AtomicU64::new(0);
        // Stored pairs cost 8 bytes in a chunk buffer and 8 in the output: the buffers' growth,
        // then the output's, is checked against `budget` before it is made.
        let budget = LazyBudget::new();
        let overflow = AtomicBool::new(false);
        let out_of_memory = AtomicBool::new(false);
        let per_chunk = items.div_ceil(chunks).max(1);
        let limit = self.limit;
        // A caller's cancellation is looked at before each chunk (docs/design.md §9.18).
        let cancel = crate::broadphase::cancel::current();
        let run_chunk = |c: usize, chunk: &mut ChunkBuffers| -> (u64, u64) {
            chunk.is_parted = false;
            let buffer = &mut chunk.pairs;
            buffer.clear();
            if crate::broadphase::cancel::check(&cancel).is_err() {
                return (0, 0);
            }
            let range = (c * per_chunk).min(items)..((c + 1) * per_chunk).min(items);
            let mut sink = Sink {
                tests: 0,
                pairs: 0,
                buffer,
                store,
                reported: 0,
                stored: &stored,
                grown: &grown,
                budget: &budget,
                overflow: &overflow,
                out_of_memory: &out_of_memory,
                limit,
                cancel: &cancel,
            };
            let (mut at, mut slice) = (range.start, FIRST_SLICE);
            while at < range.end {
                let to = (at + slice).min(range.end);
                let before = sink.tests;
                work(at..to, &mut sink);
                at = to;
                if sink.cancelled() {
                    break;
                }
                let tests = sink.tests - before;
                slice = if tests > TESTS_PER_LOOK {
                    (slice / 2).max(1)
                } else if tests < TESTS_PER_LOOK / 4 {
                    (slice * 8).min(CANCEL_SLICE)
                } else {
                    slice
                };
            }
            // A cancelled call's pairs are dropped: not partitioned (a degenerate scene's chunk
            // may hold gigabytes of them, seconds of work after the caller asked to stop).
            // Nor are a call's past the pair limit (counted so far, this chunk's included), nor
            // a small call's (under ORDERED_GATHER_MIN pairs, as its chunks' sizes say: the
            // order stage's sort of the concatenation in cache costs no more).
            let storing = sink.store
                && sink.buffer.len() * chunks >= ordered::ORDERED_GATHER_MIN
                && !sink.cancelled()
                && stored.load(Ordering::Relaxed) + (sink.buffer.len() - sink.reported) as u64
                    <= limit;
            let (tests, pairs) = (sink.tests, sink.pairs);
            if let Some(split) = split.filter(|_| storing && !overflow.load(Ordering::Relaxed)) {
                // The partitioned copy's growth is counted against the budget like the
                // buffers'; where it does not fit, the pairs are gathered as found.
                let bytes = chunk.parted.growth(&split, chunk.pairs.len());
                if budget.allows(grown.fetch_add(bytes, Ordering::Relaxed) + bytes) {
                    let cancelled = || crate::broadphase::cancel::check(&cancel).is_err();
                    chunk.is_parted = chunk.parted.partition(&split, &chunk.pairs, cancelled);
                }
            }
            (tests, pairs)
        };
        let buffers = &mut self.buffers[..chunks];
        let (tests, pairs) = if chunks == 1 {
            run_chunk(0, &mut buffers[0])
        } else {
            buffers
                .par_iter_mut()
                .enumerate()
                .map(|(c, buffer)| run_chunk(c, buffer))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        crate::broadphase::cancel::check(&cancel)?;
        if let Some(out) = out {
            let pair_bytes = std::mem::size_of::<Pair>() as u64;
            let list_bytes = pairs
                .saturating_sub(out.capacity() as u64)
                .saturating_mul(pair_bytes);
            let list_fits = budget.allows(grown.load(Ordering::Relaxed).saturating_add(list_bytes));
            let overflowed = overflow.load(Ordering::Relaxed);
            if overflowed || pairs > limit || !list_fits {
                out.clear();
                for b in buffers.iter_mut() {
                    *b = ChunkBuffers::default();
                }
                // Name what stopped the storing: the memory, or else the pair limit.
                let memory =
                    out_of_memory.load(Ordering::Relaxed) || (!overflowed && pairs <= limit);
                let list_bytes = pairs.saturating_mul(pair_bytes);
                let (why, exceeds) = if memory {
                    // Without a budget to read it was the allocator that refused: still memory.
                    let available = budget.available();
                    let why = match &available {
                        Some(a) => format!("what this run may allocate, {}", a.describe()),
                        None => "what the allocator gave".to_string(),
                    };
                    let usable = available.map(|a| a.usable());
                    let needed = list_bytes;
                    (
                        why,
                        Exceeds::PairListMemory {
                            pairs,
                            needed,
                            usable,
                        },
                    )
                } else {
                    let why = format!("the limit of {limit} stored pairs per call");
                    (
                        why,
                        Exceeds::PairList {
                            pairs,
                            allowed: limit,
                        },
                    )
                };
                return Err(Error::too_large(
                    exceeds,
                    format!(
                        "{pairs} touching pairs ({} as a list) exceed {why}; ask for their \
                         count alone (no pair list) instead",
                        crate::broadphase::memory::human(list_bytes),
                    ),
                ));
            }
            // In order from ORDERED_GATHER_MIN pairs: the chunks that did not partition their
            // pairs as their walks ended (fewer than their share) do it now, within the budget.
            let split = split.filter(|_| pairs as usize >= ordered::ORDERED_GATHER_MIN);
            let parted = split.is_some_and(|split| {
                let bytes: u64 = buffers
                    .iter()
                    .filter(|b| !b.is_parted)
                    .map(|b| b.parted.growth(&split, b.pairs.len()))
                    .sum();
                budget.allows(grown.fetch_add(bytes, Ordering::Relaxed) + bytes) && {
                    let cancelled = || crate::broadphase::cancel::check(&cancel).is_err();
                    buffers
                        .par_iter_mut()
                        .filter(|b| !b.is_parted)
                        .for_each(|b| {
                            b.is_parted = b.parted.partition(&split, &b.pairs, cancelled);
                        });
                    buffers.iter().all(|b| b.is_parted)
                }
            });
            crate::broadphase::cancel::check(&cancel)?;
            match split {
                Some(split) if parted => {
                    let parts: Vec<&ordered::Parted> = buffers.iter().map(|b| &b.parted).collect();
                    ordered::gather(&split, &parts, pairs as usize, out);
                    self.in_order = true;
                }
                _ => {
                    out.clear();
                    out.reserve(pairs as usize);
                    for b in buffers.iter() {
                        out.extend_from_slice(&b.pairs);
                    }
                }
            }
        }
        Ok((tests, pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `touching` keeps exactly the hits, in any chunking, and still enforces the limit.
    #[test]
    fn touching_keeps_exactly_the_hits() {
        let hit = |i: usize| i % 7 == 3 || i.is_multiple_of(11);
        let expected: Vec<Pair> = (0..5000u32)
            .filter(|&i| hit(i as usize))
            .map(|i| [i, i + 1])
            .collect();
        for serial_max in [0, 1 << 20] {
            let mut emitter = PairEmitter::default();
            emitter.set_serial_max_items(serial_max);
            let work = |range: Range<usize>, sink: &mut Sink| {
                for i in range {
                    sink.add_tests(1);
                    if hit(i) {
                        sink.touching(i as u32 + 1, i as u32);
                    }
                }
            };
            let mut out = Vec::new();
            let (tests, pairs) = emitter.run(5000, Some(&mut out), work).unwrap();
            out.sort_unstable();
            assert_eq!((tests, pairs), (5000, expected.len() as u64));
            assert_eq!(out, expected);
            emitter.set_pair_limit(expected.len() as u64 - 1);
            assert!(matches!(
                emitter.run(5000, Some(&mut out), work),
                Err(Error::TooLarge { .. })
            ));
        }
    }

    /// Stored with the scene's size given, the pairs come gathered in canonical order (and say
    /// so) from many chunks, for a call large enough to pay for it; a small call's come as
    /// found, for the order stage; unordered, as found.
    #[test]
    fn the_emitter_gathers_in_order_when_asked_and_large_enough() {
        let pair_of = |k: usize| {
            let i = ((k * 7919) % 50_000) as u32; // some chunks hold more than others
            let j = i + 1 + ((k * 104_729) % 1_000) as u32;
            [i, j]
        };
        for (items, ordered, in_order) in [
            (1_100_000, true, true),
            (1_100_000, false, false),
            (2_000, true, false),
        ] {
            let mut emitter = PairEmitter::default();
            emitter.set_ordered(ordered);
            emitter.set_objects(51_000);
            let mut out = vec![[5, 6]; 3];
            let work = |range: Range<usize>, sink: &mut Sink| {
                for k in range {
                    sink.add_tests(1);
                    let [i, j] = pair_of(k);
                    sink.touching(j, i);
                }
            };
            emitter.run(items, Some(&mut out), work).unwrap();
            assert_eq!(emitter.take_in_order(), in_order, "{items} items");
            assert!(!emitter.take_in_order(), "the asking resets it");
            let mut expected: Vec<Pair> = (0..items).map(pair_of).collect();
            expected.sort_unstable();
            if in_order {
                assert!(out == expected, "{items} items, in order");
            } else {
                assert!(!out.is_sorted(), "{items} items: as found");
                out.sort_unstable();
                assert!(out == expected, "{items} items");
            }
        }
    }

    /// A chunk of many items looks at its token between slices of its items, not only before
    /// it starts: cancelled during its first slice, it stops there.
    #[test]
    fn a_long_chunk_stops_within_a_slice_of_its_items() {
        let token = crate::broadphase::cancel::CancelToken::new();
        let mut emitter = PairEmitter::default();
        emitter.set_serial_max_items(1 << 20);
        let handed = std::sync::Mutex::new(Vec::new());
        let result = crate::Limits::new().with_cancel(token.clone()).run(|| {
            emitter.run(100_000, None, |range, sink| {
                handed.lock().unwrap().push(range.clone());
                token.cancel();
                sink.add_tests(range.len() as u64);
            })
        });
        assert!(matches!(result, Err(Error::Interrupted)), "{result:?}");
        assert_eq!(*handed.lock().unwrap(), vec![0..FIRST_SLICE]);
    }

    /// Slices follow the work: cheap items go in slices growing to `CANCEL_SLICE`, items of
    /// many tests each (a degenerate scene) in slices shrinking to one item.
    #[test]
    fn slices_grow_on_cheap_items_and_shrink_on_costly_ones() {
        let mut emitter = PairEmitter::default();
        emitter.set_serial_max_items(1 << 20);
        for (per_item, want_last) in [(1u64, CANCEL_SLICE), (TESTS_PER_LOOK, 1)] {
            let handed = std::sync::Mutex::new(Vec::new());
            emitter
                .run(200_000, None, |range, sink| {
                    handed.lock().unwrap().push(range.len());
                    sink.add_tests(per_item * range.len() as u64);
                })
                .unwrap();
            let handed = handed.into_inner().unwrap();
            assert_eq!(handed.iter().sum::<usize>(), 200_000);
            assert_eq!(handed[handed.len() - 2], want_last, "{handed:?}");
        }
    }

    /// A cancelled token stops the pair emission between chunks.
    #[test]
    fn a_cancelled_emission_fails_as_interrupted() {
        let token = crate::broadphase::cancel::CancelToken::new();
        let mut emitter = PairEmitter::default();
        let result = crate::Limits::new().with_cancel(token.clone()).run(|| {
            emitter.run(100_000, None, |range, sink| {
                if range.start >= 50_000 {
                    token.cancel();
                }
                sink.add_tests(range.len() as u64);
            })
        });
        assert!(matches!(result, Err(Error::Interrupted)), "{result:?}");
        assert!(emitter.run(10, None, |_, _| {}).is_ok());
    }
}
