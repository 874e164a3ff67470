//! [`GpuWorldBatch`]: many independent worlds in one GPU frame (docs/design.md §2.13).
//!
//! The world is a key: each object's world rank (its world's place among the batch's world ids,
//! the shared objects' rank last) goes up with the spheres, a stable sort by it follows the
//! method's own sort, and the sweep's walks end at their world's end. One frame, whatever the
//! number of worlds: no dispatch per world. Every object outside the shared run then walks that
//! run whole, so a shared object meets every world; the shared objects meet each other in their
//! own run, once.
//!
//! Methods: `sap` (the order (world, lo on the batch's axis of largest spread, index), walks
//! while lo_q <= hi_p, boxes overlapping on the two other axes), `x` (the same on x, no filter),
//! `origin_distance` (the order (world, |c|, index), each position's |c| beside the ranks, its
//! own walk), `xy` and `xyz` (x's walk on the last axis after the cascade's survivors on the
//! ones before, each axis's order (world, lo, index) with the dropped objects first; the
//! cascade scans (world, hi) pairs, so each object's running maximum is its own world's),
//! `brute_force` (the order (world, index), every later object of the world), `min_axis`
//! (each axis's lo and hi orders sorted by world after the key, each object's overlap counts
//! within its world's run, the owner walks ending at the world's bounds, then the shared run
//! whole) and the grid (its
//! own frame, each key holding the world's rank above a bucket that hashes the cell with the
//! world; the shared objects, at most [`GPU_GRID_SHARED_MAX`], on the giants' list). `auto` is
//! `sap`.

use super::GpuBroadPhase;
use super::min_axis_frame::{MinAxisParts, record_min_axis};
use crate::broadphase::worlds::{WorldGroups, WorldPairs, start_batch};
use crate::broadphase::{Backend, Clock, Method, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::sphere::{Sphere, validate_spheres};
use crate::gpu::context::block::blocking;
use crate::gpu::context::{GpuContext, count_u32};
use crate::gpu::frame::{ParamArena, Recorder};
use crate::gpu::sort::keys::{KeyInputs, KeyMode, KeyParams, Keys};
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::spheres::cascade::Cascade;
use crate::gpu::spheres::pairs::{PairKernels, PairSink, SortedOrder, Sweep};
use crate::gpu::timer::PassTimer;
use std::sync::Arc;
use web_time::Instant;

/// The world ranks of the frame being run, on the device.
pub(super) struct WorldRanks {
    /// One rank per object, by original index (objects the buffer holds: `capacity`).
    pub(super) buffer: wgpu::Buffer,
    capacity: usize,
    /// Objects of the frame.
    n: u32,
    /// Bits of the largest rank: the stable sort's key width.
    pub(super) bits: u32,
    /// The largest rank.
    largest: u32,
    /// The first sorted position of the shared objects (`n` when there are none).
    pub(super) shared_from: u32,
    /// The shared objects' rank (`u32::MAX` when there are none).
    pub(super) shared_rank: u32,
}

/// `xy` and `xyz` batches: past this many shared objects every object survives each axis of
/// the cascade, rather than each scanning them all for one it overlaps (`SHARED_SCAN_MAX` in
/// `shaders/spheres/cascade.wgsl`): the walk then tests it against them all anyway.
pub const GPU_CASCADE_SHARED_MAX: usize = 1024;

/// Most shared objects the grid's batch takes: they join its giants' list (docs/design.md
/// §2.13), `GIANT_SLOTS - GIANTS_MAX` in `shaders/frame.wgsl`.
pub const GPU_GRID_SHARED_MAX: usize = 16;

/// The cascade's kernels and scratch (block maxima, marks) for `xy` and `xyz`.
pub(super) type CascadeParts<'a> = (&'a Cascade, &'a wgpu::Buffer, &'a wgpu::Buffer);

/// Records the world frame's passes after the extents: keys (sap's lo; the values the objects'
/// indices), for `sap` their sort, the world keys and their stable sort, the gather and the
/// sweep.
#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    ctx: &GpuContext,
    (keys, sort, pairs): (&Keys, &mut RadixSort, &PairKernels),
    (enc, timer, arena): &mut (&mut wgpu::CommandEncoder, &mut PassTimer, &mut ParamArena),
    method: Method,
    ranks: &WorldRanks,
    inputs: KeyInputs<'_>,
    (order, origins): (&SortedOrder<'_>, &wgpu::Buffer),
    cascade: Option<CascadeParts<'_>>,
    min_axis: Option<MinAxisParts<'_>>,
    sink: &PairSink<'_>,
) -> Result<()> {
    let n = ranks.n;
    if let (Method::MinAxis, Some(parts)) = (method, min_axis) {
        let kernels = (keys, sort, pairs);
        return record_min_axis(
            ctx,
            kernels,
            &mut (&mut **enc, &mut **timer, &mut **arena),
            n,
            Some(ranks),
            inputs,
            order,
            parts,
            sink,
        );
    }
    if let (Method::Xy | Method::Xyz, Some((cascade, block_max, mark))) = (method, cascade) {
        // Each axis: its lo keys (the dropped objects' NONE), their sort, the world keys with
        // the dropped first, the stable sort, the gather; then the survivors, or on the last
        // axis x's walk (docs/design.md §2.13).
        let axes = if method == Method::Xy { 2 } else { 3 };
        let bits = 32 - (ranks.largest + 1).leading_zeros();
        for axis in 0..axes {
            let kp = KeyParams {
                n,
                pad: n,
                mode: KeyMode::Lo,
                axis,
                use_mark: axis > 0,
                buckets: 1,
            };
            Recorder::begin(ctx, enc, timer, arena, "keys")
                .record(|rec| keys.make_keys(rec, kp, inputs, order.keys, order.values))?;
            sort.encode(ctx, enc, order.keys, order.values, n, 32, Some(timer))?;
            Recorder::begin(ctx, enc, timer, arena, "keys").record(|rec| {
                let order_buffers = (order.keys, order.values);
                keys.world_keys(rec, n, &ranks.buffer, order_buffers, true)
            })?;
            sort.encode(ctx, enc, order.keys, order.values, n, bits, Some(timer))?;
            Recorder::begin(ctx, enc, timer, arena, "gather").record(|rec| {
                keys.gather(rec, n, inputs.spheres, order.values, order.sorted)?;
                keys.unrank_dropped(rec, n, order.keys)
            })?;
            let from = ranks.shared_from;
            if axis + 1 < axes {
                Recorder::begin(ctx, enc, timer, arena, "cascade").record(|rec| {
                    cascade.encode(rec, n, axis, order, block_max, mark, Some(from))
                })?;
            } else {
                Recorder::begin(ctx, enc, timer, arena, "pairs").record(|rec| {
                    pairs.sweep(rec, n, (Sweep::Axis, axis), Some(from), order, sink)
                })?;
            }
        }
        return Ok(());
    }
    // The method's keys and walk (brute force: the values alone, no sort by key).
    let (mode, sweep) = match method {
        Method::Sap => (KeyMode::SapLo, Sweep::Sap),
        Method::X => (KeyMode::Lo, Sweep::Axis),
        Method::OriginDistance => (KeyMode::OriginDistance, Sweep::OriginDistance),
        _ => (KeyMode::SapLo, Sweep::All),
    };
    let kp = KeyParams {
        n,
        pad: n,
        mode,
        axis: 0,
        use_mark: false,
        buckets: 1,
    };
    Recorder::begin(ctx, enc, timer, arena, "keys")
        .record(|rec| keys.make_keys(rec, kp, inputs, order.keys, order.values))?;
    if sweep != Sweep::All {
        sort.encode(ctx, enc, order.keys, order.values, n, 32, Some(timer))?;
    }
    Recorder::begin(ctx, enc, timer, arena, "keys")
        .record(|rec| keys.world_keys(rec, n, &ranks.buffer, (order.keys, order.values), false))?;
    sort.encode(
        ctx,
        enc,
        order.keys,
        order.values,
        n,
        ranks.bits,
        Some(timer),
    )?;
    Recorder::begin(ctx, enc, timer, arena, "gather")
        .record(|rec| keys.gather(rec, n, inputs.spheres, order.values, order.sorted))?;
    if sweep == Sweep::OriginDistance {
        // The keys are ranks now: each sorted position's |c| goes beside them (docs/design.md
        // §2.13), in the buffer the grid keeps its bucket starts in.
        Recorder::begin(ctx, enc, timer, arena, "keys")
            .record(|rec| keys.origin_of_sorted(rec, n, order.sorted, origins))?;
        let from = ranks.shared_from;
        return Recorder::begin(ctx, enc, timer, arena, "pairs")
            .record(|rec| pairs.world_origin_sweep(rec, n, from, order, origins, sink));
    }
    Recorder::begin(ctx, enc, timer, arena, "pairs")
        .record(|rec| pairs.sweep(rec, n, (sweep, 0), Some(ranks.shared_from), order, sink))
}

/// Many worlds in one GPU frame (docs/design.md §2.13): the GPU twin of
/// `cpu::WorldBatch`, with the same input and output.
///
/// ```
/// use glam::Vec3;
/// use std::sync::Arc;
/// use sweepfan::gpu::GpuWorldBatch;
/// use sweepfan::{GpuContext, Method, SHARED, Sphere, WorldPairs};
///
/// let Ok(ctx) = GpuContext::default_adapter() else { return Ok(()) };
/// let mut batch = GpuWorldBatch::new(Arc::new(ctx), Method::Sap)?;
/// // Two worlds with the same two touching spheres, and a floor shared by both.
/// let ball = |x: f32| Sphere::new(Vec3::new(x, 1.0, 0.0), 1.0);
/// let floor = Sphere::new(Vec3::new(0.0, -10.0, 0.0), 10.5);
/// let spheres = [ball(0.0), ball(1.5), ball(0.0), ball(1.5), floor];
/// let worlds = [7, 7, 9, 9, SHARED];
/// let mut pairs = WorldPairs::new();
/// batch.find_pairs(&spheres, &worlds, Some(&mut pairs))?;
/// assert_eq!(pairs.of(7), &[[0, 1], [0, 4], [1, 4]]);
/// assert_eq!(pairs.of(9), &[[2, 3], [2, 4], [3, 4]]);
/// # Ok::<(), sweepfan::Error>(())
/// ```
pub struct GpuWorldBatch {
    frame: GpuBroadPhase,
    name: &'static str,
    groups: WorldGroups,
    /// Each object's world rank (the shared objects': the number of worlds).
    ranks: Vec<u32>,
    /// The frame's pairs in the order the device appended them.
    found: Vec<Pair>,
    /// (rank, i, j) of each pair, for the grouping.
    keys: Vec<u128>,
}

impl GpuWorldBatch {
    /// A batch running `method` (any of [`Method::ALL`]), or [`Method::Auto`]
    /// ([`Self::auto`]). A context carrying peers (several devices) is an
    /// [`Error::InvalidArgument`]: the batch runs on one. The grid's batch takes at most
    /// [`GPU_GRID_SHARED_MAX`](crate::gpu::GPU_GRID_SHARED_MAX) shared objects a frame (they join
    /// its giants' list); more is an [`Error::InvalidArgument`] naming the count, and every
    /// other method takes any number.
    pub fn new(ctx: Arc<GpuContext>, method: Method) -> Result<Self> {
        if method == Method::Auto {
            return Self::auto(ctx);
        }
        if !ctx.peers().is_empty() {
            // Its frame runs whole on one device (docs/design.md §2.13): peers would sit idle.
            return Err(Error::invalid_argument(
                "ctx",
                format!(
                    "a batch of worlds runs on one device, and this context carries {} more \
                 (several devices, --adapters): open it without peers",
                    ctx.peers().len()
                ),
            ));
        }
        Ok(Self {
            frame: GpuBroadPhase::new(ctx, method)?,
            name: method.name(),
            groups: WorldGroups::default(),
            ranks: Vec::new(),
            found: Vec::new(),
            keys: Vec::new(),
        })
    }

    /// `auto`: `sap`, the sweep ending at each world's end (the worlds of a batch are small,
    /// where a sweep beats the grid's fixed costs).
    pub fn auto(ctx: Arc<GpuContext>) -> Result<Self> {
        let mut batch = Self::new(ctx, Method::Sap)?;
        batch.name = "auto";
        Ok(batch)
    }

    /// The method's name (`"sap"`, `"auto"`).
    pub fn name(&self) -> &str {
        self.name
    }

    /// Sets the most pairs one call may store over all worlds; a call finding more fails with
    /// `Error::TooLarge`.
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.frame.set_pair_limit(limit);
    }

    blocking! {
        /// Finds the touching pairs of each world, as `cpu::WorldBatch::find_pairs` does:
        /// `worlds[i]` is sphere `i`'s world ([`SHARED`](crate::broadphase::worlds::SHARED):
        /// every world's); with `out = None` only counts. The frame runs whole on the context's
        /// first device (no parts): a batch past a binding is `Error::TooLarge`.
        pub fn find_pairs = "a world batch";

        /// The frame's read-back awaits the browser instead of blocking.
        pub async fn find_pairs_async(
            &mut self,
            spheres: &[Sphere],
            worlds: &[u32],
            out: Option<&mut WorldPairs>,
        ) -> Result<Stats> {
            let mut out = out;
            if !start_batch(spheres.len(), worlds, &mut out)? {
                return Ok(Stats::default());
            }
            let start = Instant::now();
            count_u32("spheres", spheres.len())?;
            validate_spheres(spheres)?;
            self.set_ranks(worlds)?;
            let shared = self.groups.shared.len();
            if self.frame.method == Method::Grid && shared > GPU_GRID_SHARED_MAX {
                return Err(Error::invalid_argument(
                    "worlds",
                    format!(
                        "{shared} shared objects: the GPU grid's batch takes at most \
                         {GPU_GRID_SHARED_MAX} (they join its giants' list); every other method \
                         (sap, x, xy, xyz, min_axis, origin_distance, brute_force), auto and the \
                         CPU batch take any number"
                    ),
                ));
            }
            let group_s = start.elapsed().as_secs_f64();
            let store = out.is_some();
            let found = store.then_some(&mut self.found);
            let mut stats = self.frame.find_pairs_whole_async(spheres, found).await?;
            let start = Instant::now();
            if let Some(out) = out {
                out.group_found(&self.found, &self.ranks, &self.groups, &mut self.keys)?;
            }
            stats.stage(
                "group",
                group_s + start.elapsed().as_secs_f64(),
                Clock::Wall,
            );
            Ok(stats)
        }
    }

    /// Groups the worlds, computes each object's rank and puts the ranks on the device.
    fn set_ranks(&mut self, worlds: &[u32]) -> Result<()> {
        let g = &mut self.groups;
        g.group(worlds);
        let count = g.ids.len();
        let shared_rank = u32::try_from(count)
            .ok()
            .filter(|&r| r < u32::MAX)
            .ok_or_else(|| {
                Error::invalid_argument("worlds", format!("{count} worlds: at most 2^32 - 2"))
            })?;
        self.ranks.clear();
        self.ranks.resize(worlds.len(), shared_rank);
        for (rank, span) in g.starts.windows(2).enumerate() {
            for &i in &g.order[span[0]..span[1]] {
                self.ranks[i as usize] = rank as u32;
            }
        }
        let n = worlds.len();
        let ctx = self.frame.ctx.clone();
        let buffer = match self.frame.worlds.take() {
            Some(w) if w.capacity >= n => w.buffer,
            _ => {
                ctx.check_binding("world ranks", 4 * n as u64)?;
                ctx.storage_buffer("world ranks", 4 * n as u64)?
            }
        };
        ctx.write_buffer(&buffer, 0, bytemuck::cast_slice(&self.ranks));
        let largest = if g.shared.is_empty() {
            shared_rank.saturating_sub(1)
        } else {
            shared_rank
        };
        self.frame.worlds = Some(WorldRanks {
            capacity: (buffer.size() / 4) as usize,
            buffer,
            n: n as u32,
            bits: (32 - largest.leading_zeros()).max(1),
            largest,
            shared_from: (n - g.shared.len()) as u32,
            shared_rank: if g.shared.is_empty() {
                u32::MAX
            } else {
                shared_rank
            },
        });
        Ok(())
    }
}

crate::broadphase::worlds::world_broad_phase_by_own_methods!(GpuWorldBatch, Backend::Gpu);
