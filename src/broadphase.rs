//! The broad-phase job: one trait, implemented by every method on every backend.
//!
//! Tests, the CLI and the benchmarks hold a backend as a `Box<dyn BroadPhase>` and never care
//! whether it runs on the CPU or the GPU.

use crate::error::{Error, Result};
use crate::geom::sphere::{Sphere, validate_spheres};
use rayon::prelude::*;
use serde::Serialize;

/// Most pairs one call may store by default, on either backend (8 bytes each: 2 GiB). Beyond
/// the limit (or beyond what memory holds) the call fails with [`Error::TooLarge`] instead of
/// exhausting memory; counting (`out = None`) has no limit.
pub const MAX_STORED_PAIRS: u64 = 1 << 28;

/// An error naming the first pair of `candidates` that refers to an object past the `n` given,
/// or to one object twice (pairs handed to a narrow phase: the SAT, the contacts).
pub(crate) fn check_candidates(n: usize, candidates: &[Pair]) -> Result<()> {
    let bad = candidates
        .par_iter()
        .position_first(|p| p[0] as usize >= n || p[1] as usize >= n || p[0] == p[1]);
    match bad {
        None => Ok(()),
        Some(k) if candidates[k][0] == candidates[k][1] => Err(narrow::self_pair(k, candidates[k])),
        Some(k) => Err(Error::invalid_argument(
            "candidates",
            format!(
                "candidate pair {k} = {:?} refers to an object beyond the {n} given",
                candidates[k]
            ),
        )),
    }
}

/// The error of a call that found `pairs` touching pairs, more than the `limit` it may store
/// (the same words on either backend).
pub(crate) fn stored_pairs_past_limit(pairs: u64, limit: u64) -> Error {
    Error::too_large(
        crate::error::Exceeds::PairList {
            pairs,
            allowed: limit,
        },
        format!(
            "{pairs} touching pairs ({} as a list) exceed the limit of {limit} stored pairs \
             per call; ask for their count alone (no pair list) instead",
            memory::human(pairs.saturating_mul(8)),
        ),
    )
}

/// The caller's name for an object: any `u64`, unique within one `BoxBroadPhase` (and within
/// one call of the narrow phase by id).
pub type Id = u64;

/// A pair of objects by id, the smaller first.
pub type IdPair = [Id; 2];

pub(crate) mod aabbs;
pub mod auto;
pub mod cancel;
pub(crate) mod frame;
pub(crate) mod keys;
pub(crate) mod memory;
pub use frame::SphereFrame;
pub mod limits;
pub(crate) mod narrow;
pub(crate) mod narrow_by_id;
pub(crate) mod radix;
pub(crate) mod shapes;
pub(crate) mod sweep_axis;
pub(crate) mod world_slots;
pub mod worlds;

/// A touching pair of object indices, `i < j`. [`BroadPhase::find_pairs`] returns its list in
/// canonical order (ascending); [`BroadPhase::find_pairs_unordered`] in the method's own, which
/// [`canonicalize`] sorts.
pub type Pair = [u32; 2];

/// Sorts a pair list into the canonical order (lexicographic, `i < j` in each pair) used for
/// comparison. Each pair must already be `i < j` (as every method gives them); one given as
/// `[j, i]` is sorted as given, not turned.
///
/// ```
/// let mut pairs = vec![[3, 9], [0, 5], [3, 4]];
/// sweepfan::canonicalize(&mut pairs);
/// assert_eq!(pairs, [[0, 5], [3, 4], [3, 9]]);
/// ```
///
/// Long lists are sorted by a radix sort over each pair read as one u64 (`i` in the low half on
/// a little-endian machine): the passes over `j`'s bits, then, stable, over `i`'s, only as many
/// bits as the largest index has (docs/design.md §2.14). Where its scratch (8 bytes a pair)
/// cannot be had, a comparison sort in place.
pub fn canonicalize(pairs: &mut [Pair]) {
    if pairs.is_sorted() {
        return;
    }
    if pairs.len() >= RADIX_CANONICAL_MIN && radix_canonicalize(pairs) {
        return;
    }
    if pairs.len() > 1 << 16 {
        use rayon::slice::ParallelSliceMut;
        pairs.par_sort_unstable();
    } else {
        pairs.sort_unstable();
    }
}

/// Each pair turned `[min, max]`, then the list sorted ([`canonicalize`]): candidates given in
/// any orientation, in canonical order.
pub(crate) fn orient_and_canonicalize(pairs: &mut [Pair]) {
    for p in pairs.iter_mut() {
        *p = [p[0].min(p[1]), p[0].max(p[1])];
    }
    canonicalize(pairs);
}

/// From this many pairs [`canonicalize`] sorts by radix (not tuned: below it, four passes'
/// counters weigh against a few thousand comparisons; the gain measured, at 5.0M pairs, is in
/// docs/design.md §2.14).
const RADIX_CANONICAL_MIN: usize = 1 << 12;

/// [`canonicalize`]'s radix sort; false (the pairs untouched) where it does not apply: a
/// big-endian machine, a list not 8-byte aligned, no memory for the scratch.
fn radix_canonicalize(pairs: &mut [Pair]) -> bool {
    if cfg!(target_endian = "big") {
        return false;
    }
    let Ok(keys) = bytemuck::try_cast_slice_mut::<Pair, u64>(pairs) else {
        return false;
    };
    let mut scratch: Vec<u64> = Vec::new();
    if scratch.try_reserve_exact(keys.len()).is_err() {
        return false;
    }
    scratch.resize(keys.len(), 0);
    // The bits of every index, `i` and `j` alike: a caller's pair given `j < i` breaks the
    // contract, but the list still comes back sorted.
    let either = |&k: &u64| (k >> 32) as u32 | k as u32;
    let largest = if keys.len() >= 1 << 16 {
        keys.par_iter().map(either).max()
    } else {
        keys.iter().map(either).max()
    }
    .unwrap_or(0);
    let bits = 32 - largest.leading_zeros();
    // The low half is i, the high half j (little-endian): j first, then i, stable.
    radix::radix_sort_slice(keys, &mut scratch, 32, 32 + bits);
    radix::radix_sort_slice(keys, &mut scratch, 0, bits);
    true
}

/// What changed between the previous frame and this one (pairs canonical: `i < j`, sorted):
/// see the `events` module (a vocabulary type here, so that backends can return it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrameEvents {
    /// Pairs touching now that did not touch in the previous frame.
    pub found: Vec<Pair>,
    /// Pairs that touched in the previous frame and do not now.
    pub lost: Vec<Pair>,
    /// Pairs touching in both frames.
    pub persisting: u64,
}

impl FrameEvents {
    /// Pairs touching now: `persisting + found`.
    pub fn pairs_now(&self) -> u64 {
        self.persisting + self.found.len() as u64
    }
}

/// Where a method runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The host's cores (rayon).
    Cpu,
    /// A GPU through wgpu.
    Gpu,
}

impl Backend {
    /// `"cpu"` or `"gpu"`, as printed and written to JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }
}

/// The broad-phase methods (docs/design.md §2). Each returns exactly the set of touching pairs; they differ
/// in how many sphere tests they perform to find it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The method chosen per scene from its shape (docs/design.md §2.12, `broadphase::auto`):
    /// one of the others, named in each frame's `Stats::chosen`. Not in [`Method::ALL`].
    Auto,
    /// All n(n-1)/2 pairs.
    BruteForce,
    /// Paper method 1: sort by |c|, test forward while the key gap is <= 2 r_max.
    OriginDistance,
    /// Paper method 2, x axis only (endpoint sort, drop non-overlapping, test on x).
    X,
    /// Paper method 2, cascade x then y.
    Xy,
    /// Paper method 2, cascade x, y, z.
    Xyz,
    /// Paper 3.3.2: per object, the axis with the fewest forward candidates.
    MinAxis,
    /// Pair-level sweep and prune on the axis of largest spread, AABB rejection before the test.
    Sap,
    /// Uniform grid, sorted cell keys, neighbour cells: the cell side at least twice the largest
    /// radius but for up to 4,096 giants set aside and tested apart, from the centres' bounds
    /// where every radius is 0 (docs/design.md §2.7).
    Grid,
}

impl Method {
    /// Every method that runs one rule, in the paper's order then ours ([`Method::Auto`], which
    /// runs one of them, is not among them).
    pub const ALL: [Method; 8] = [
        Method::BruteForce,
        Method::OriginDistance,
        Method::X,
        Method::Xy,
        Method::Xyz,
        Method::MinAxis,
        Method::Sap,
        Method::Grid,
    ];

    /// The name the CLI, Python and reports use (`"origin_distance"`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::BruteForce => "brute_force",
            Method::OriginDistance => "origin_distance",
            Method::X => "x",
            Method::Xy => "xy",
            Method::Xyz => "xyz",
            Method::MinAxis => "min_axis",
            Method::Sap => "sap",
            Method::Grid => "grid",
        }
    }

    /// The method of a name (`-` read as `_`; `"auto"` is [`Method::Auto`]); an unknown one is
    /// an error listing the known.
    pub fn parse(s: &str) -> Result<Method> {
        let t = s.trim().replace('-', "_");
        std::iter::once(Method::Auto)
            .chain(Method::ALL)
            .find(|m| m.name() == t)
            .ok_or_else(|| Error::UnknownName {
                what: "method",
                name: s.to_string(),
                known: Method::ALL
                    .iter()
                    .chain([&Method::Auto])
                    .map(|m| m.name().to_string())
                    .collect(),
                note: String::new(),
            })
    }

    /// Whether this is one rule ([`Method::ALL`]), not [`Method::Auto`].
    pub fn is_rule(self) -> bool {
        self != Method::Auto
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// [`Method::parse`], for `str::parse` and option parsers.
///
/// ```
/// use sweepfan::Method;
/// assert_eq!("min-axis".parse::<Method>()?, Method::MinAxis);
/// assert!("grdi".parse::<Method>().is_err());
/// # Ok::<(), sweepfan::Error>(())
/// ```
impl std::str::FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Method> {
        Method::parse(s)
    }
}

/// Which clock measured a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// Host wall time (CPU stages; GPU totals including upload and readback).
    Wall,
    /// GPU timestamp queries (device time of one pass).
    GpuTimestamp,
    /// Host wall time of one host-side step of a GPU frame (checking, copying into staging,
    /// encoding, submitting, waiting, reading back, finishing; docs/design.md §9.16); a row
    /// reports these apart from the stages, as `host_ms`.
    Host,
}

/// Time spent in one named stage of a method.
#[derive(Clone, Debug, Serialize)]
pub struct StageTime {
    /// The stage's label (`"sort"`, `"aabb walk"`, `"total"`, ...).
    pub stage: &'static str,
    /// Its duration.
    pub seconds: f64,
    /// The clock that measured it.
    pub clock: Clock,
}

/// What one call of a broad phase did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Narrow-phase (sphere-sphere) tests performed: the paper's "判定回数".
    pub tests: u64,
    /// Touching pairs found (also when the pairs were not stored).
    pub pairs: u64,
    /// Per-stage times, in pipeline order.
    pub stages: Vec<StageTime>,
    /// What `auto` chose for this call ([`auto`]); `None` for every named method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<auto::Choice>,
}

impl Stats {
    /// Appends a stage's time.
    pub fn stage(&mut self, stage: &'static str, seconds: f64, clock: Clock) {
        self.stages.push(StageTime {
            stage,
            seconds,
            clock,
        });
    }
}

/// How often a GPU backend made the host wait for the device, how many compute dispatches it
/// recorded, what it created on the device and the bytes it moved to and from the host,
/// cumulative since its device was opened (docs/design.md §6.5, §9.16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Times the host waited for the device (a map or a poll until done).
    pub host_waits: u64,
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Objects created on the device: bind groups, buffers, timestamp query sets, compute
    /// pipelines (docs/design.md §9.16).
    pub bind_groups: u64,
    /// Buffers created.
    pub buffers: u64,
    /// Timestamp query sets created.
    pub query_sets: u64,
    /// Compute pipelines created.
    pub pipelines: u64,
    /// Bytes of mapped staging the host read.
    pub bytes_to_host: u64,
    /// Bytes the host wrote to the device.
    pub bytes_from_host: u64,
    /// Compute passes opened (one per stage; docs/design.md §9.16).
    pub compute_passes: u64,
}

impl DeviceCounts {
    /// The counts between `before` and `self`.
    pub fn since(self, before: DeviceCounts) -> DeviceCounts {
        DeviceCounts {
            host_waits: self.host_waits.saturating_sub(before.host_waits),
            dispatches: self.dispatches.saturating_sub(before.dispatches),
            bind_groups: self.bind_groups.saturating_sub(before.bind_groups),
            buffers: self.buffers.saturating_sub(before.buffers),
            query_sets: self.query_sets.saturating_sub(before.query_sets),
            pipelines: self.pipelines.saturating_sub(before.pipelines),
            bytes_to_host: self.bytes_to_host.saturating_sub(before.bytes_to_host),
            bytes_from_host: self.bytes_from_host.saturating_sub(before.bytes_from_host),
            compute_passes: self.compute_passes.saturating_sub(before.compute_passes),
        }
    }

    /// The counts of `self` and `other` together (several devices).
    pub fn plus(self, other: DeviceCounts) -> DeviceCounts {
        DeviceCounts {
            host_waits: self.host_waits + other.host_waits,
            dispatches: self.dispatches + other.dispatches,
            bind_groups: self.bind_groups + other.bind_groups,
            buffers: self.buffers + other.buffers,
            query_sets: self.query_sets + other.query_sets,
            pipelines: self.pipelines + other.pipelines,
            bytes_to_host: self.bytes_to_host + other.bytes_to_host,
            bytes_from_host: self.bytes_from_host + other.bytes_from_host,
            compute_passes: self.compute_passes + other.compute_passes,
        }
    }
}

/// What a partitioned run did (the `partition` module, docs/design.md §2.10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PartsReport {
    /// Parts run to the end (a block of owned objects with one chunk of its ghosts).
    pub parts: u64,
    /// Parts that did not fit and were split (their runs count nowhere else).
    pub splits: u64,
    /// Ghost copies, summed over the parts run.
    pub ghosts: u64,
    /// Objects of the largest part run.
    pub largest: u64,
    /// Giants tested in their own pass.
    pub giants: u32,
    /// Runners (devices) the parts were spread over.
    pub devices: u32,
}

impl PartsReport {
    /// "in 52 parts (1900 ghosts, 0 split) on 1 device", for reports.
    pub fn describe(&self) -> String {
        let giants = match self.giants {
            0 => String::new(),
            g => format!(", {g} giants apart"),
        };
        format!(
            "in {} parts ({} ghosts, {} split{giants}) on {} device{}",
            self.parts,
            self.ghosts,
            self.splits,
            self.devices,
            if self.devices == 1 { "" } else { "s" }
        )
    }
}

/// [`BroadPhase::find_pairs_unordered`]'s provided body: the scene validated by
/// [`validate_spheres`] (the stage `check` on a GPU backend), then `broad`'s pairs; `out` left
/// empty where either fails.
pub(crate) fn validated_unordered<B: BroadPhase + ?Sized>(
    broad: &mut B,
    spheres: &[Sphere],
    mut out: Option<&mut Vec<Pair>>,
) -> Result<Stats> {
    let start = web_time::Instant::now();
    let result = match spheres.is_empty() {
        true => broad.find_pairs_validated(spheres, out.as_deref_mut()),
        false => validate_spheres(spheres).and_then(|()| {
            let checked = start.elapsed().as_secs_f64();
            let mut stats = broad.find_pairs_validated(spheres, out.as_deref_mut())?;
            if broad.backend() == Backend::Gpu {
                stats.stage("check", checked, Clock::Host);
            }
            Ok(stats)
        }),
    };
    cleared_on_error(out, result)
}

/// [`BroadPhase::find_pairs`]'s last step: the pairs into canonical order where they are not,
/// the time it took the stage `order`.
pub(crate) fn order_pairs(out: Option<&mut Vec<Pair>>, stats: &mut Stats) {
    if let Some(out) = out
        && !out.is_sorted()
    {
        let start = web_time::Instant::now();
        canonicalize(out);
        stats.stage("order", start.elapsed().as_secs_f64(), Clock::Wall);
    }
}

/// An empty frame's result: no pairs (`out` cleared), nothing tested.
pub(crate) fn no_pairs(out: Option<&mut Vec<Pair>>) -> Stats {
    if let Some(out) = out {
        out.clear();
    }
    Stats::default()
}

/// A call's result, the caller's list emptied where it failed: after an error `out` holds no
/// pairs, never a partial, over-limit or earlier frame's list (the one rule of every backend).
pub(crate) fn cleared_on_error<T>(out: Option<&mut Vec<Pair>>, result: Result<T>) -> Result<T> {
    if let (Err(_), Some(out)) = (&result, out) {
        out.clear();
    }
    result
}

/// The broad-phase job: a frame's pairs (and, where asked, its events). CPU and GPU implement
/// it alike. How a run went beyond its [`Stats`] (device memory, waits, traffic, parts) is a
/// separate trait, [`Diagnostics`], reached through [`BroadPhase::diagnostics`].
pub trait BroadPhase {
    /// Method name as printed and written to JSON (`"sap"`, `"peer-rstar"`, ...).
    fn name(&self) -> &str;
    /// Where it runs.
    fn backend(&self) -> Backend;

    /// Asks the backend to compute frame events itself (the GPU: on the device, docs/design.md
    /// §10) for every following frame that stores its pairs; false when it cannot (the caller
    /// then tracks them from the pairs with an `EventTracker`).
    fn track_events(&mut self, _on: bool) -> Result<bool> {
        Ok(false)
    }

    /// The last frame's events, when the backend tracks them ([`Self::track_events`]).
    fn take_events(&mut self) -> Option<FrameEvents> {
        None
    }

    /// Finds every touching pair of an already validated scene. With `out = None` only counts.
    /// Implementations push pairs with `i < j` into `out` (after clearing it) in any order (the
    /// provided [`Self::find_pairs`] orders them). An empty scene has no pairs (and, where the
    /// backend tracks events, loses every pair of the frame before).
    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats>;

    /// Validates the scene (clear errors for NaN, infinities, negative radii, more objects than
    /// u32 indices), then finds every touching pair, into `out` in canonical order (`i < j`,
    /// sorted: the same list on every method and backend, run to run). An empty scene has
    /// none: `out` is cleared (a simulation whose objects are all gone for a frame is no
    /// error). With `out = None` only counts. The ordering is the stage `order` of the stats
    /// (absent when the method's list came ordered, as the GPU's does after `set_canonical`).
    /// A call that fails (bad input, too many pairs, cancelled) leaves `out` empty.
    fn find_pairs(&mut self, spheres: &[Sphere], mut out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = self.find_pairs_unordered(spheres, out.as_deref_mut())?;
        order_pairs(out, &mut stats);
        Ok(stats)
    }

    /// [`Self::find_pairs`] without the ordering: the same pairs (each `i < j`) in the method's
    /// own order, for a caller that only needs the set (a count, a hash set, its own sort) and
    /// would not pay for the order.
    fn find_pairs_unordered(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        validated_unordered(self, spheres, out)
    }

    /// One frame of a simulation into the caller's [`SphereFrame`]: this frame's pairs (as
    /// [`Self::find_pairs`] gives them) into `frame.pairs`, and the pairs found and lost since
    /// the frame before into `frame.found` and `frame.lost`, all in the frame's own vectors
    /// (their allocations reused frame after frame). A frame that fails (bad input, too many
    /// pairs, cancelled) leaves the last good frame's pairs and no events, so the next frame
    /// compares with the last one that succeeded. An empty scene loses every pair.
    fn update_into(&mut self, spheres: &[Sphere], frame: &mut SphereFrame) -> Result<()> {
        frame.begin();
        match self.find_pairs(spheres, Some(&mut frame.pairs)) {
            Ok(stats) => {
                frame.finish(stats);
                Ok(())
            }
            Err(e) => {
                frame.abandon();
                Err(e)
            }
        }
    }

    /// What this broad phase can say about how it runs, where it says anything (GPU methods,
    /// frames in parts).
    fn diagnostics(&self) -> Option<&dyn Diagnostics> {
        None
    }
}

/// How a broad phase runs, beyond the job ([`BroadPhase`]): what the benchmarks, stress runs
/// and reports print. Every item is optional.
pub trait Diagnostics {
    /// Device memory held across frames per object (pair list excluded), for GPU methods.
    fn resident_bytes_per_object(&self) -> Option<f64> {
        None
    }

    /// The device's wait and dispatch counts so far, for GPU methods (their difference across
    /// a frame is what the frame cost in synchronisation).
    fn device_counts(&self) -> Option<DeviceCounts> {
        None
    }

    /// GPU methods: the device-traffic model of a frame of `n` objects with these `tests` and
    /// `pairs` (stored or only counted), as (stage, bytes per object) (docs/design.md §9.9).
    fn device_traffic(
        &self,
        _n: usize,
        _tests: f64,
        _pairs: f64,
        _store: bool,
    ) -> Option<Vec<(&'static str, f64)>> {
        None
    }

    /// How the last frame was split into parts, when it was (the `partition` module): a scene past
    /// one binding or device, or spread over several devices.
    fn parts(&self) -> Option<PartsReport> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The radix canonical order equals a comparison sort's, from a few thousand pairs (its
    /// threshold) to past the parallel passes, with indices up to 2^32 - 1 (32 bits of each).
    #[test]
    fn canonicalize_by_radix_equals_a_comparison_sort() {
        let mut state = 3u64;
        let mut next = |bound: u64| (crate::geom::test_util::lcg_next(&mut state) >> 16) % bound;
        for (len, largest) in [
            (RADIX_CANONICAL_MIN - 1, 1000),
            (RADIX_CANONICAL_MIN, 40),
            (10_000, 5_000),
            (200_000, 1 << 20),
            (70_000, u64::from(u32::MAX)),
        ] {
            let pairs: Vec<Pair> = (0..len)
                .map(|_| {
                    let j = 1 + next(largest) as u32;
                    [next(u64::from(j)) as u32, j]
                })
                .collect();
            let mut expected = pairs.clone();
            expected.sort_unstable();
            let mut sorted = pairs.clone();
            canonicalize(&mut sorted);
            assert_eq!(sorted, expected, "{len} pairs below {largest}");
            let mut radix = pairs;
            if radix.len() >= RADIX_CANONICAL_MIN {
                assert!(radix_canonicalize(&mut radix), "{len}: the radix path ran");
                assert_eq!(radix, expected);
            }
        }
    }

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        assert_eq!(Method::parse("min-axis").unwrap(), Method::MinAxis);
        let e = Method::parse("bogus\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown method 'bogus\\n' (known: brute_force, origin_distance, x, xy, xyz, \
             min_axis, sap, grid, auto)"
        );
        let Error::UnknownName {
            what, name, known, ..
        } = e
        else {
            panic!("{e:?}")
        };
        assert_eq!((what, name.as_str(), known.len()), ("method", "bogus\n", 9));
        // Auto is a method by name and type, not one of the rules.
        assert_eq!(Method::parse(" auto ").unwrap(), Method::Auto);
        assert_eq!(Method::Auto.name(), "auto");
        assert!(!Method::ALL.contains(&Method::Auto) && !Method::Auto.is_rule());
        assert!(Method::ALL.iter().all(|m| m.is_rule()));
    }
}

/// What one frame's pipeline found for one proxy.
#[derive(Clone, Debug, Default)]
pub struct ProxyFrame {
    /// Broad-phase candidates: (box, sphere) with proxy AABB and sphere AABB overlapping.
    pub candidates: u64,
    /// Candidates whose sphere touches the box's conservative sector (exact test).
    pub hits: u64,
    /// The hits as (box, sphere), sorted, when asked for.
    pub hit_pairs: Option<Vec<[u32; 2]>>,
    /// Per-stage seconds, in pipeline order.
    pub stages: Vec<StageTime>,
}

impl ProxyFrame {
    /// What a frame with no boxes or no spheres finds for each proxy: nothing (an empty hit list
    /// when hits are wanted).
    pub(crate) fn nothing_for(proxies: usize, want_hits: bool) -> Vec<ProxyFrame> {
        (0..proxies)
            .map(|_| ProxyFrame {
                hit_pairs: want_hits.then(Vec::new),
                ..Default::default()
            })
            .collect()
    }
}
