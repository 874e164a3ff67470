//! [`GpuBroadPhase`]: every broad-phase [`Method`] on the GPU, with exactly the pairs and the test
//! counts of the CPU semantics (docs/design.md §2; the method docs on [`Method`]).
//!
//! A frame is one submission: upload -> extents -> per method keys / radix sort / gather
//! (/ cascade marks, min_axis choice) -> pair emission -> copy of the u64 totals; then one map of
//! the totals and, when pairs are stored, one read of exactly the pairs found (plus the pass
//! timestamps when the device has them). Pairs are appended at atomic slots; when a frame finds
//! more than the list holds, the list grows to fit and the frame runs once more (or the call
//! fails with [`Error::TooLarge`] beyond the binding limit): no pair is ever dropped. Buffers stay
//! resident across frames and grow only when n (or the pair count) grows.
//!
//! Stage labels in [`Stats::stages`]: `extents`, `keys`, `sort` (its histograms, scans and
//! scatters in one pass), `gather`, `cascade`, `min_axis`, `pairs` (GPU timestamps), and
//! `total` (wall time including upload and readback).
//!
//! Test counts, per method, as the kernels evaluate them (the sweeps' order is ascending by
//! (key, index); every touching pair is emitted once, as (min, max)):
//! * brute_force: n(n-1)/2.
//! * origin_distance: for each sorted position p, the following q while D_q - D_p <= 2 r_max,
//!   D = |c| (WGSL `length`, which may round differently from the CPU's: see the tests).
//! * x / xy / xyz: the cascade drops, axis by axis, survivors overlapping no other survivor; on
//!   the last axis every overlapping pair of survivors is tested.
//! * min_axis: owner rule: pair {i, j} is tested iff it overlaps on the axis a(o) of its owner o,
//!   the one with the smaller (m, index), m = min over axes of the number of objects overlapping.
//! * sap: pairs overlapping on the axis of largest centre spread (ties: lowest axis) whose boxes
//!   also overlap on the two other axes.
//! * grid (docs/design.md §2.7): up to 4,096 giants set aside by the radius histogram; cell side
//!   s = 2 r (r the largest other radius, 1 if 0), cell k = floor(c / s) per axis below 2^24
//!   cells and one cell per f32 value beyond, never clamped. Tests = pairs i < j of non-giants
//!   whose cells differ by at most 1 on every axis (each object visits its own cell, testing
//!   the objects j > i there, and the 13 cells after it in (z, y, x) order, testing every object
//!   there, as the CPU grid does), each giant pair whose reaches overlap, and each giant with
//!   the objects in its reach. Cells are keyed into a power-of-two number of buckets: by their Z-order code where
//!   the scene's cells fit (one cell per key, docs/design.md §9.17), else by a hash; objects of
//!   other cells sharing a bucket are skipped by an exact cell comparison, so the count does not
//!   depend on the key. A neighbour's bucket is looked up only when its bit in the occupancy
//!   map (a bit a cell) is set (docs/design.md §9.9).

use crate::broadphase::{
    Backend, BroadPhase, Clock, Diagnostics, FrameEvents, Method, Pair, Stats,
};
use crate::error::{Error, Result};
use crate::geom::sphere::Sphere;
use crate::gpu::context::{GpuContext, count_u32};
use crate::gpu::events::GpuEvents;
use crate::gpu::frame::{ParamArena, Recorder};
use crate::gpu::readback::{self, Readback};
use crate::gpu::sort::keys::{EXTENTS_INIT, EXTENTS_WORDS, KeyInputs, KeyMode, KeyParams, Keys};
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::spheres::cascade::Cascade;
use crate::gpu::spheres::min_axis::MinAxis;
use crate::gpu::spheres::pairs::{PairKernels, PairSink, SortedOrder, Sweep};
use crate::gpu::timer::PassTimer;
use min_axis_frame::record_min_axis;
use std::sync::Arc;
use web_time::Instant;

mod buffers;
mod diagnostics;
use crate::gpu::context::block::blocking;
use buffers::grid_buckets;
mod in_flight;
#[cfg(test)]
mod map_tests;
mod min_axis_frame;
mod parts;
mod read_back;
mod resident;
#[cfg(test)]
mod resident_events_tests;
mod worlds;
pub use in_flight::{MAX_IN_FLIGHT, SubmittedFrame};
pub use resident::{ResidentPairs, ResidentReadback, ResidentTotals};
pub use worlds::{GPU_CASCADE_SHARED_MAX, GPU_GRID_SHARED_MAX, GpuWorldBatch};

/// Dispatches one frame may use (parameter slots; min_axis, the longest, uses 22).
const PARAM_SLOTS: usize = 64;
/// Timed passes per frame (min_axis, the longest, has about 150 with the sorts' passes).
const TIMED_PASSES: u32 = 256;
/// Words of the totals buffer (see `frame.wgsl`).
pub(super) const COUNTER_WORDS: u64 = crate::gpu::slots::SPHERE_COUNTERS as u64;

/// Buffers that live across frames, sized for `capacity` objects.
struct Resident {
    capacity: u32,
    spheres: wgpu::Buffer,
    keys: wgpu::Buffer,
    values: wgpu::Buffer,
    sorted: wgpu::Buffer,
    /// Cascade survivor marks (a 4-byte placeholder for other methods).
    mark: wgpu::Buffer,
    block_max: wgpu::Buffer,
    /// Grid bucket starts (placeholder for other methods).
    starts: wgpu::Buffer,
    /// Grid: the occupancy map, a bit a cell (placeholder for other methods; [`grid_map_words`](buffers::grid_map_words)).
    occupied: wgpu::Buffer,
    min_axis: Option<MinAxisBuffers>,
    bytes: u64,
}

struct MinAxisBuffers {
    lo_keys: [wgpu::Buffer; 3],
    lo_idx: [wgpu::Buffer; 3],
    rank: [wgpu::Buffer; 3],
    choice: wgpu::Buffer,
    /// `choice` in the lo order of the axis being walked.
    sorted_choice: wgpu::Buffer,
    forward_best: wgpu::Buffer,
}

/// The GPU broad phase for one [`Method`].
pub struct GpuBroadPhase {
    ctx: Arc<GpuContext>,
    method: Method,
    keys: Keys,
    sort: RadixSort,
    cascade: Option<Cascade>,
    pairs: PairKernels,
    min_axis: Option<MinAxis>,
    arena: ParamArena,
    timer: PassTimer,
    counters: wgpu::Buffer,
    ext: wgpu::Buffer,
    resident: Option<Resident>,
    pair_list: wgpu::Buffer,
    pair_capacity: u64,
    /// Most pairs one call may store ([`crate::broadphase::MAX_STORED_PAIRS`] by default).
    pair_limit: u64,
    /// One `MAP_READ` buffer per frame's results: totals, timestamps and (when storing) the
    /// pair list, copied in the frame's own submission so a frame waits on the host once.
    readback: Readback,
    /// The last frame's pair count: how much of the list the next readback copies, and how
    /// many slots the events' and the canonical order's sorts walk (docs/design.md §9.16).
    pair_hint: readback::ListHint,
    /// Slots the sorts walk ([`Self::sorted_slots`]): `None` before a frame's count is known.
    sorted_slots: Option<u64>,
    /// The rest of lists longer than planned ([`readback::read_tails`]), kept across frames.
    tail_readback: Readback,
    /// The spheres' upload through a staging buffer kept across frames.
    upload: crate::gpu::upload::Upload,
    /// Frame events on the device, when tracked ([`BroadPhase::track_events`]).
    events: Option<Box<GpuEvents>>,
    last_events: Option<FrameEvents>,
    /// The canonical sort alone, for [`Self::set_canonical`] without events.
    canonical: Option<Box<GpuEvents>>,
    last_n: u32,
    /// The pair list's capacity when the last resident frame was recorded (none yet: MAX):
    /// whether that frame was cut short, whatever the list has grown to since.
    resident_capacity: u64,
    /// Frames from the caller's buffer recorded since the last [`Self::check_resident`]: a host
    /// frame checks them first, as the check would (its own growth of the list cleared their
    /// count of lists cut short, and its events compared with a list cut short).
    resident_unchecked: bool,
    /// What those checks refused, oldest first, each for one [`Self::check_resident`].
    resident_refusals: std::collections::VecDeque<Error>,
    paper_min_axis_tests: Option<u64>,
    /// The grid walk's bucket lookups per object in the last frame (or part), for the
    /// traffic model (docs/design.md §9.9).
    grid_lookups_per_object: Option<f64>,
    /// Frames in parts: other devices' broad phases, the host's events ([`parts`]).
    parts: Option<Box<parts::Parts>>,
    /// Indirect-dispatch arguments over the resident pairs (`resident_dispatch_args`), made by
    /// the first resident frame, and the workgroup size they count in.
    pair_dispatch: Option<crate::gpu::spheres::dispatch_args::PairDispatch>,
    dispatch_workgroup: u32,
    /// The host side of the frame being run, by step (`host_ms` in the rows).
    host: crate::gpu::timer::HostSteps,
    /// Frames submitted and not yet finished ([`Self::submit_frame`]).
    in_flight: in_flight::InFlight,
    /// Many worlds ([`GpuWorldBatch`]): the world ranks the frames sweep by.
    worlds: Option<worlds::WorldRanks>,
}

/// Totals read back after a frame.
struct Totals {
    tests: u64,
    pairs: u64,
    paper_min_axis: u64,
    grid_lookups: u64,
}

impl GpuBroadPhase {
    /// Compiles the method's kernels. Buffers are allocated by the first frame.
    ///
    /// ```
    /// use glam::Vec3;
    /// use std::sync::Arc;
    /// use sweepfan::{BroadPhase, GpuBroadPhase, GpuContext, Method, Sphere};
    ///
    /// // Runs where an adapter exists (the test suite's GPU tests fail without one).
    /// let Ok(ctx) = GpuContext::default_adapter() else { return Ok(()) };
    /// let mut grid = GpuBroadPhase::new(Arc::new(ctx), Method::Grid)?;
    /// let spheres: Vec<Sphere> =
    ///     (0..100).map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0)).collect();
    /// let mut pairs = Vec::new();
    /// let stats = grid.find_pairs(&spheres, Some(&mut pairs))?; // canonical, as on the CPU
    /// assert_eq!(pairs.len(), 99); // neighbours 1.5 apart touch (radius sum 2), others do not
    /// assert_eq!((pairs[0], stats.pairs), ([0, 1], 99));
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn new(ctx: Arc<GpuContext>, method: Method) -> Result<Self> {
        if method == Method::Auto {
            // `auto` is a broad phase of its own, over this type (docs/design.md §2.12).
            return Err(Error::invalid_argument(
                "method",
                "a GpuBroadPhase runs one rule; auto on the GPU is `gpu::auto(ctx)` or \
                 `gpu::broad_phase(ctx, Method::Auto)`",
            ));
        }
        // One broad phase per other device of the context (`--adapters`): frames are then
        // spread over them in parts.
        let helpers = ctx
            .peers()
            .iter()
            .map(|peer| GpuBroadPhase::new(peer.clone(), method))
            .collect::<Result<Vec<_>>>()?;
        let parts = (!helpers.is_empty()).then(|| Box::new(parts::Parts::with_helpers(helpers)));
        let c = &*ctx;
        let uses_cascade = matches!(method, Method::X | Method::Xy | Method::Xyz);
        let counters = c.storage_buffer("counters", COUNTER_WORDS * 4)?;
        let ext = c.storage_buffer("extents", 4 * EXTENTS_WORDS)?;
        let initial_pairs = (1u64 << 16).min(c.max_binding_bytes() / 8);
        let pair_list = c.storage_buffer("pair list", initial_pairs * 8)?;
        Ok(Self {
            keys: Keys::new(c)?,
            sort: RadixSort::new(c)?,
            cascade: if uses_cascade {
                Some(Cascade::new(c)?)
            } else {
                None
            },
            pairs: PairKernels::new(c)?,
            min_axis: if method == Method::MinAxis {
                Some(MinAxis::new(c)?)
            } else {
                None
            },
            arena: ParamArena::new(c, PARAM_SLOTS)?,
            timer: PassTimer::new(c, TIMED_PASSES),
            counters,
            ext,
            resident: None,
            pair_list,
            pair_capacity: initial_pairs,
            pair_limit: crate::broadphase::MAX_STORED_PAIRS,
            readback: Readback::new("sphere frame readback"),
            pair_hint: Default::default(),
            sorted_slots: None,
            tail_readback: Readback::new("sphere frame readback, the rest"),
            upload: crate::gpu::upload::Upload::new("sphere upload"),
            events: None,
            last_events: None,
            canonical: None,
            last_n: 0,
            resident_capacity: u64::MAX,
            resident_unchecked: false,
            resident_refusals: Default::default(),
            paper_min_axis_tests: None,
            grid_lookups_per_object: None,
            parts,
            pair_dispatch: None,
            dispatch_workgroup: 64,
            host: Default::default(),
            in_flight: Default::default(),
            worlds: None,
            method,
            ctx,
        })
    }

    /// The method this broad phase runs.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Frames whose spheres went up through the kept staging buffer, and those that went
    /// through `queue.write_buffer` (the first, a larger scene, a map not resolved in time).
    pub fn upload_counts(&self) -> (u64, u64) {
        (self.upload.kept, self.upload.direct)
    }

    /// min_axis only: tests the paper's literal rule (each object tests its forward candidates
    /// on the axis where it has the fewest) would have made in the last frame. That rule misses
    /// pairs; it is reported beside the owner rule's count for comparison with the paper.
    pub fn paper_min_axis_tests(&self) -> Option<u64> {
        self.paper_min_axis_tests
    }

    /// Records one frame (upload, every pass, the copy of the totals) into a new encoder.
    fn record_frame(&mut self, spheres: &[Sphere], store: bool) -> Result<wgpu::CommandEncoder> {
        let n = count_u32("spheres", spheres.len())?;
        // A frame from the host grows its own list: no resident frame to check is the last.
        self.resident_capacity = u64::MAX;
        self.record_frame_from(Source::Host(spheres), n, store)
    }

    /// [`Self::record_frame`] from either source of spheres.
    fn record_frame_from(
        &mut self,
        source: Source<'_>,
        n: u32,
        store: bool,
    ) -> Result<wgpu::CommandEncoder> {
        self.ensure_resident(n)?;
        let ctx = &*self.ctx;
        let res = self.resident.as_ref().expect("allocated above");
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        match source {
            // Through the kept staging buffer (docs/design.md §9.16): the caller's spheres are
            // copied once, straight into the mapped staging memory.
            Source::Host(spheres) => {
                self.host.lap("encode");
                self.upload.write(
                    ctx,
                    &mut enc,
                    &res.spheres,
                    0,
                    bytemuck::cast_slice(spheres),
                )?;
                self.host.lap("upload");
            }
            Source::Device(buffer) => {
                enc.copy_buffer_to_buffer(buffer, 0, &res.spheres, 0, n as u64 * 16)
            }
        }
        // Word 7 counts spheres the host would reject; frames from a caller's buffer keep adding
        // to it until `check_resident`, and a frame from the host (validated before upload, so
        // adding nothing) leaves it too: zeroing it there hid a resident frame's bad spheres
        // from the check after it. (The buffer starts zeroed.)
        ctx.write_buffer(&self.ext, 0, bytemuck::cast_slice(&EXTENTS_INIT[..7]));
        self.arena.reset();
        self.timer.reset();
        let arena = &mut self.arena;
        let timer = &mut self.timer;
        let buckets = grid_buckets(n);
        enc.clear_buffer(&self.counters, 0, None);
        // The giants' words and the radius histogram start at 0 (after the write above).
        enc.clear_buffer(&self.ext, 4 * EXTENTS_INIT.len() as u64, None);
        let sink = PairSink {
            counters: &self.counters,
            ext: &self.ext,
            pairs: &self.pair_list,
            capacity: self.pair_capacity.min(u32::MAX as u64) as u32,
            store,
        };
        let sap_axis = self.method == Method::Sap;
        Recorder::begin(ctx, &mut enc, timer, arena, "extents").record(|rec| {
            self.keys
                .extents(rec, n, (&res.spheres, &self.ext), sap_axis)
        })?;
        let key_params = |mode: KeyMode, axis: u32, use_mark: bool| KeyParams {
            n,
            pad: n,
            mode,
            axis,
            use_mark,
            buckets,
        };
        let key_bits = |mode: KeyMode| match mode {
            KeyMode::GridBucket => buckets.trailing_zeros().max(1),
            _ => 32,
        };
        let inputs = KeyInputs {
            spheres: &res.spheres,
            ext: &self.ext,
            mark: &res.mark,
            occupied: &res.occupied,
            world_rank: self.worlds.as_ref().map(|w| (&w.buffer, w.shared_rank)),
        };
        let order = SortedOrder {
            sorted: &res.sorted,
            keys: &res.keys,
            values: &res.values,
        };
        // keys -> sort -> gather into `order`.
        let sort = &mut self.sort;
        let mut sorted_pass = |enc: &mut wgpu::CommandEncoder,
                               arena: &mut ParamArena,
                               timer: &mut PassTimer,
                               kp: KeyParams|
         -> Result<()> {
            Recorder::begin(ctx, enc, timer, arena, "keys")
                .record(|rec| self.keys.make_keys(rec, kp, inputs, &res.keys, &res.values))?;
            sort.encode(
                ctx,
                enc,
                &res.keys,
                &res.values,
                n,
                key_bits(kp.mode),
                Some(timer),
            )?;
            Recorder::begin(ctx, enc, timer, arena, "gather").record(|rec| {
                self.keys
                    .gather(rec, n, &res.spheres, &res.values, &res.sorted)
            })
        };
        match self.method {
            Method::Auto => unreachable!("refused by GpuBroadPhase::new"),
            m if self.worlds.is_some() && m != Method::Grid => {
                let ranks = self.worlds.as_ref().expect("matched");
                let kernels = (&self.keys, &mut *sort, &self.pairs);
                let mut rec = (&mut enc, &mut *timer, &mut *arena);
                let order = (&order, &res.starts);
                let cascade = self
                    .cascade
                    .as_ref()
                    .map(|c| (c, &res.block_max, &res.mark));
                let min_axis = self.min_axis.as_ref().zip(res.min_axis.as_ref());
                worlds::record(
                    ctx,
                    kernels,
                    &mut rec,
                    self.method,
                    ranks,
                    inputs,
                    order,
                    cascade,
                    min_axis,
                    &sink,
                )?;
            }
            Method::BruteForce => {
                Recorder::begin(ctx, &mut enc, timer, arena, "pairs")
                    .record(|rec| self.pairs.brute(rec, n, &res.spheres, &sink))?;
            }
            Method::OriginDistance | Method::Sap => {
                let (mode, sweep) = if self.method == Method::Sap {
                    (KeyMode::SapLo, Sweep::Sap)
                } else {
                    (KeyMode::OriginDistance, Sweep::OriginDistance)
                };
                sorted_pass(&mut enc, arena, timer, key_params(mode, 0, false))?;
                Recorder::begin(ctx, &mut enc, timer, arena, "pairs")
                    .record(|rec| self.pairs.sweep(rec, n, (sweep, 0), None, &order, &sink))?;
            }
            Method::Grid => {
                // make_keys sets the map's bits; grid_frame reads its size.
                enc.clear_buffer(&res.occupied, 0, None);
                Recorder::begin(ctx, &mut enc, timer, arena, "extents")
                    .record(|rec| self.keys.grid_frame(rec, &self.ext, &res.occupied, buckets))?;
                sorted_pass(
                    &mut enc,
                    arena,
                    timer,
                    key_params(KeyMode::GridBucket, 0, false),
                )?;
                enc.clear_buffer(&res.starts, 0, None);
                Recorder::begin(ctx, &mut enc, timer, arena, "gather").record(|rec| {
                    self.keys
                        .bucket_starts(rec, n, buckets, &res.keys, &res.starts)
                })?;
                // A batch of worlds (docs/design.md §2.13): ranks above the buckets in the keys,
                // as far as they fit, and by index after the bucket starts.
                let world_rank = inputs.world_rank;
                if let Some((ranks, _)) = world_rank {
                    enc.copy_buffer_to_buffer(
                        ranks,
                        0,
                        &res.starts,
                        4 * buckets as u64,
                        4 * n as u64,
                    );
                }
                Recorder::begin(ctx, &mut enc, timer, arena, "pairs").record(|rec| {
                    let (starts, occupied) = (&res.starts, &res.occupied);
                    let p = &self.pairs;
                    p.grid(rec, n, buckets, world_rank, &order, starts, occupied, &sink)?;
                    p.grid_giants(rec, n, &res.spheres, world_rank, &sink)
                })?;
            }
            Method::X | Method::Xy | Method::Xyz => {
                let axes: u32 = match self.method {
                    Method::X => 1,
                    Method::Xy => 2,
                    _ => 3,
                };
                let cascade = self.cascade.as_ref().expect("built for cascade methods");
                for axis in 0..axes {
                    sorted_pass(
                        &mut enc,
                        arena,
                        timer,
                        key_params(KeyMode::Lo, axis, axis > 0),
                    )?;
                    if axis + 1 < axes {
                        Recorder::begin(ctx, &mut enc, timer, arena, "cascade").record(|rec| {
                            cascade.encode(rec, n, axis, &order, &res.block_max, &res.mark, None)
                        })?;
                    } else {
                        Recorder::begin(ctx, &mut enc, timer, arena, "pairs").record(|rec| {
                            self.pairs
                                .sweep(rec, n, (Sweep::Axis, axis), None, &order, &sink)
                        })?;
                    }
                }
            }
            Method::MinAxis => {
                let kernels = self.min_axis.as_ref().expect("built for min_axis");
                let mb = res.min_axis.as_ref().expect("allocated for min_axis");
                let parts = (&self.keys, &mut *sort, &self.pairs);
                let rec = &mut (&mut enc, &mut *timer, &mut *arena);
                let min_axis = (kernels, mb);
                record_min_axis(ctx, parts, rec, n, None, inputs, &order, min_axis, &sink)?;
            }
        }
        timer.resolve(&mut enc);
        arena.flush(ctx);
        Ok(enc)
    }
}

/// Where a frame's spheres come from.
enum Source<'a> {
    Host(&'a [Sphere]),
    Device(&'a wgpu::Buffer),
}

impl BroadPhase for GpuBroadPhase {
    fn name(&self) -> &str {
        self.method.name()
    }

    fn backend(&self) -> Backend {
        Backend::Gpu
    }

    fn track_events(&mut self, on: bool) -> Result<bool> {
        self.events = if on {
            Some(Box::new(GpuEvents::new(&self.ctx)?))
        } else {
            None
        };
        self.last_events = None;
        self.reset_host_events(on);
        Ok(true)
    }

    fn take_events(&mut self) -> Option<FrameEvents> {
        self.last_events.take()
    }

    fn diagnostics(&self) -> Option<&dyn Diagnostics> {
        Some(self)
    }

    /// The frame whole, or in parts (docs/design.md §2.10) when it exceeds a size limit of the
    /// device (then every later frame too), or when the context has other devices.
    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        if spheres.is_empty() {
            return self.empty_frame(out);
        }
        // One frame, its parts included (each part's run is nested in it).
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        if self.in_parts() {
            return self.find_pairs_in_parts(spheres, out);
        }
        match self.find_pairs_whole(spheres, out.as_deref_mut()) {
            Err(e) if crate::gpu::context::is_size_limit(&e) => {
                self.start_parts()?;
                self.find_pairs_in_parts(spheres, out)
            }
            other => {
                self.ran_whole();
                other
            }
        }
    }
}

impl GpuBroadPhase {
    /// A frame without objects: no pairs. With events tracked on the device, it runs as a frame
    /// of one point, which touches nothing: its events lose every pair of the frame before, and
    /// the next frame finds them again.
    /// In parts (docs/design.md §2.10) the events live in the host's tracker, which the empty
    /// frame updates instead (the device's lists are a part's, or stale).
    fn empty_frame(&mut self, out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        if self.in_parts() {
            self.take_events_from_device()?;
            let stored = out.is_some();
            let stats = crate::broadphase::no_pairs(out);
            self.last_events = None;
            if let Some(parts) = &mut self.parts {
                parts.last = None;
                if let (true, Some(tracker)) = (stored, parts.tracker.as_mut()) {
                    self.last_events = Some(tracker.update(Vec::new()));
                }
            }
            return Ok(stats);
        }
        if self.events.is_none() {
            return Ok(crate::broadphase::no_pairs(out));
        }
        let alone = [Sphere::new(glam::Vec3::ZERO, 0.0)];
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        self.find_pairs_whole(&alone, out)
    }

    blocking! {
        /// One frame as one run of the method (no parts): fails with [`Error::TooLarge`] past a
        /// binding.
        pub(super) fn find_pairs_whole = "a frame";
        async fn find_pairs_whole_async(
            &mut self,
            spheres: &[Sphere],
            out: Option<&mut Vec<Pair>>,
        ) -> Result<Stats> {
            let mut out = out;
            if spheres.is_empty() {
                return Err(Error::EmptyScene);
            }
            // A frame (or a part of one): its bind groups are kept across frames
            // (docs/design.md §9.16).
            let ctx = self.ctx.clone();
            let _frame = ctx.frame();
            ctx.settle()?;
            let start = Instant::now();
            self.host.start();
            let store = out.is_some();
            // One host wait per frame; a second only when the pair list overflowed.
            let (mut totals, mut stored, mut times) = self
                .run_frame_read_back(spheres, out.as_deref_mut())
                .await?;
            // The count is exact past the list: a frame with more pairs than any call may
            // store fails now, as on the CPU, not after a frame in parts (a one-point scene
            // of 25,000 spheres took 79 s on lavapipe to end so).
            let need = totals.pairs;
            if store && need > self.pair_limit {
                self.clear_event_overflow();
                return Err(crate::broadphase::stored_pairs_past_limit(
                    need,
                    self.pair_limit,
                ));
            }
            if store && !stored {
                // Grow to the exact need plus headroom for the next frames, then run again (the
                // overflowed frame's events were not kept). A list that fits but outgrew the slots
                // the sorts walked (sized by the last frame's count) runs again as it is, the
                // sorts sized by this frame's.
                self.clear_event_overflow();
                if need > self.pair_capacity {
                    self.grow_pair_list(need)?;
                }
                (totals, stored, times) = self.run_frame_read_back(spheres, out).await?;
                if !stored {
                    return Err(Error::gpu(
                        crate::error::GpuFailure::Inconsistent,
                        format!(
                            "pair count changed between two runs of the same frame ({need} \
                             then {})",
                            totals.pairs
                        ),
                    ));
                }
            }
            let mut stats = self.frame_stats(&totals, spheres.len() as u32, times);
            self.host.lap("finish");
            self.host.report(&mut stats);
            stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
            Ok(stats)
        }
    }

    /// [`BroadPhase::find_pairs`] as a future, for a browser's page (docs/design.md §8.5): the
    /// frame's read-back awaits the browser instead of blocking. There a frame runs whole: one
    /// past a size limit of the device is the error, not a frame in parts. Natively it is
    /// [`BroadPhase::find_pairs`], parts included.
    pub async fn find_pairs_async(
        &mut self,
        spheres: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        if !cfg!(target_arch = "wasm32") {
            return self.find_pairs(spheres, out);
        }
        if spheres.is_empty() {
            return self.empty_frame(out);
        }
        crate::geom::sphere::validate_spheres(spheres)?;
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        let mut stats = self
            .find_pairs_whole_async(spheres, out.as_deref_mut())
            .await?;
        self.ran_whole();
        crate::broadphase::order_pairs(out, &mut stats);
        Ok(stats)
    }
}
