//! Our own GPU LSD radix sort of (u32 key, u32 value) pairs: 8-bit digits, each pass
//! reduce-then-scan (per-block digit histograms -> `ExclusiveScan` -> stable scatter). No
//! workgroup waits on another; any n up to the binding limit. Two scatters, see [`Variant`]:
//! the portable one (no optional feature) and a subgroup one (`radix_sort_subgroup`).

use crate::error::{Error, Result};
use crate::gpu::context::WorkgroupMemory;
use crate::gpu::context::{GpuContext, dispatch_2d};
use crate::gpu::sort::radix_sort_subgroup;
use crate::gpu::sort::radix_tiles::TileSort;
use crate::gpu::sort::scan::{ExclusiveScan, exact_binding};
use crate::gpu::sort::{ParamTable, Scratch};
use crate::gpu::timer::PassTimer;

/// Invocations per workgroup; must match `WG` in `shaders/sort/radix_sort.wgsl`.
const WORKGROUP: u32 = 256;
/// Bits per pass (256 digits: one per invocation when clearing/loading digit tables).
const DIGIT_BITS: u32 = 8;
const RADIX: u32 = 1 << DIGIT_BITS;
/// Passes for 32-bit keys.
const MAX_PASSES: u32 = 32 / DIGIT_BITS;
/// Default rounds of 256 keys per block: 4,096 keys per block, so the histogram (and the scan
/// between passes) is 1/16 of the keys while 4M keys still give 1,024 workgroups.
pub(crate) const DEFAULT_ROUNDS: u32 = 16;
const MAX_ROUNDS: u32 = 64;

/// Which scatter kernel ranks the keys within a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// No optional feature: keys ranked in rounds of 256 through per-digit invocation bitmasks
    /// in workgroup memory (three barriers per round).
    Portable,
    /// Needs `Features::SUBGROUP`: warp-level multisplit, each subgroup ranking whole blocks
    /// with ballots; two barriers per workgroup.
    Subgroup,
    /// Needs 16 KB of workgroup memory: tiles of 2,048 or 4,096 keys ranked in workgroup memory and
    /// written in digit runs, one read of the keys for every pass's digit counts, passes of one
    /// digit skipped (`crate::gpu::sort::radix_tiles`).
    Tiles,
}

impl Variant {
    /// The variant's name in reports: `portable` or `subgroup`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Portable => "portable",
            Variant::Subgroup => "subgroup",
            Variant::Tiles => "tiles",
        }
    }

    /// [`Variant::Subgroup`] when the device can run it, else [`Variant::Portable`]: which
    /// variants exist here ([`plan_for`] picks one per n).
    pub fn best(ctx: &GpuContext) -> Self {
        if radix_sort_subgroup::unsupported(ctx).is_none() {
            Variant::Subgroup
        } else {
            Variant::Portable
        }
    }
}

/// Stable ascending sort of (key, value) pairs on the GPU. Pipelines are built once; the
/// ping-pong buffers and the histogram are scratch owned here and grown when a larger n arrives.
pub struct RadixSort {
    /// `sort/radix_sort.wgsl`, for histogram and portable scatter pipelines built on demand.
    module: wgpu::ShaderModule,
    choice: Choice,
    /// Pipelines per (variant, rounds) used so far; `last` indexes the latest.
    kernels: Vec<Kernels>,
    last: Option<usize>,
    /// The tiled sort, made on first use; `tiled_last`: whether it ran the last sort.
    tiles: Option<Box<TileSort>>,
    tiled_last: bool,
    scan: ExclusiveScan,
    /// One `PassParams` (shift, mask) per (pass, digit width).
    params: ParamTable,
    /// The ping-pong keys and values, and the histogram.
    scratch: Scratch,
    /// After an odd number of digit passes: the scratch back into the caller's buffers.
    copy_back: wgpu::ComputePipeline,
    /// One timed pass per stage in [`Self::encode`] ([`Self::set_stage_timing`]).
    stage_timing: bool,
    max_groups_per_dim: u32,
}

/// How a sort picks its kernels for n keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// [`plan_for`]: variant and block size from n and the adapter (docs/design.md §9.8).
    Auto,
    Fixed {
        variant: Variant,
        rounds: u32,
        ballots_only: bool,
    },
}

/// The pipelines of one (variant, rounds).
struct Kernels {
    variant: Variant,
    rounds: u32,
    ballots_only: bool,
    histogram: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    /// Keys per block (`WORKGROUP * rounds`): the histogram's workgroup.
    block: u32,
    /// Blocks per scatter workgroup (1 portable, several for the subgroup variant).
    scatter_blocks: u32,
}

/// Invocations a sort pass should keep in flight to fill a large GPU: about half of what the
/// largest current ones hold resident (an H100: 132 SMs x 2,048; an RX 7900 XTX: 96 CUs x
/// 2,048), enough to hide memory latency (docs/design.md §9.8).
pub const FILL_INVOCATIONS: u64 = 1 << 17;
/// Fewest rounds per block: below 4 x 256 keys (portable) the 256-counter histogram per block
/// costs more device bytes than a quarter of the keys' own.
const MIN_PORTABLE_ROUNDS: u32 = 4;
/// Fewest rounds per subgroup chunk (512 keys: the histogram is 2 bytes per key per pass).
const MIN_SUBGROUP_ROUNDS: u32 = 2;

/// The variant and rounds per block [`RadixSort::new`] sorts n keys with (docs/design.md §9.8).
///
/// Each variant's parallelism is what decides: the portable scatter runs 256 invocations per
/// block of 256 x rounds keys; the subgroup scatter one subgroup (its lanes) per chunk of
/// 256 x rounds keys, ranked serially, reading each key once. The subgroup scatter is chosen when,
/// at its fewest rounds, its chunks already keep [`FILL_INVOCATIONS`] busy (n >= 2^21 on 32-lane
/// GPUs, 2^20 on 64-lane ones, 2^23 on lavapipe's 8); then, as for the portable one below, the rounds are the largest
/// power of two that still fills the GPU (fewer histogram bytes), at most 16.
///
/// On NVIDIA the plan keeps the portable scatter at every n (`plan_lanes`).
///
/// Where the adapter gives a workgroup the 16 KB the tiled sort ranks a tile in
/// ([`crate::gpu::sort::radix_tiles::unsupported`]), the plan is [`Variant::Tiles`] at every n
/// (its tiles are fixed; the rounds reported are the default's): it moves fewer bytes a pair
/// and writes its keys in runs (docs/design.md §9.8). The other variants stay for adapters
/// with less workgroup memory or fewer storage buffers and for `sort-bench`'s comparison.
pub fn plan_for(ctx: &GpuContext, n: u32) -> (Variant, u32) {
    if crate::gpu::sort::radix_tiles::unsupported(ctx).is_none() {
        return (Variant::Tiles, DEFAULT_ROUNDS);
    }
    plan(n as u64, plan_lanes(ctx))
}

/// PCI vendor id of NVIDIA.
const NVIDIA: u32 = 0x10de;

/// The subgroup lanes [`plan`] may use on this adapter: `None` where the subgroup scatter cannot
/// run, and on NVIDIA, where it did not pay at any size measured (docs/design.md §9.8). `sort-bench`
/// on an H200 (2026-11-25, results/nvidia-h200/2026-11-25/radix_sort_ours.txt), portable against
/// subgroup G pairs/s: 4.20 / 1.94 at 1M, 4.52 / 4.28 at 4M, 4.98 / 2.40 at 16M, and at 64M
/// 1.82 against 2.15 and 0.84 for the same subgroup configuration in the same run; on an H100
/// (2026-11-28, ../shared/baselines.md) 4.58 against 1.92 at 16M, 0.99 against 1.21 at 64M.
pub fn plan_lanes(ctx: &GpuContext) -> Option<u64> {
    let runs = radix_sort_subgroup::unsupported(ctx).is_none() && ctx.info.vendor != NVIDIA;
    runs.then(|| radix_sort_subgroup::lanes_of(ctx) as u64)
}

/// [`plan_for`] from n and the subgroup lanes (`None`: no subgroup scatter on the device).
/// 1M keys on a 32-lane GPU: 256-invocation blocks of 2,048 keys fill it, subgroup chunks would
/// not; from 2^21 keys the subgroup scatter's chunks do (`tests::plan_fills_the_device`).
pub fn plan(n: u64, lanes: Option<u64>) -> (Variant, u32) {
    let rounds = |fill_rounds: u64, min: u32| {
        let r = fill_rounds.clamp(1, DEFAULT_ROUNDS as u64) as u32;
        (1u32 << r.ilog2()).max(min)
    };
    if let Some(lanes) = lanes {
        // Invocations in flight at r rounds: (n / (256 r)) chunks x lanes.
        let fill_rounds = n * lanes / (256 * FILL_INVOCATIONS);
        if fill_rounds >= MIN_SUBGROUP_ROUNDS as u64 {
            return (Variant::Subgroup, rounds(fill_rounds, MIN_SUBGROUP_ROUNDS));
        }
    }
    // (n / (256 r)) blocks x 256 invocations.
    let fill_rounds = n / FILL_INVOCATIONS;
    (Variant::Portable, rounds(fill_rounds, MIN_PORTABLE_ROUNDS))
}

impl RadixSort {
    /// Variant and block size chosen per call from n and the adapter ([`plan_for`]).
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        Self::build(ctx, Choice::Auto)
    }

    /// The portable variant whatever the device offers.
    pub fn portable(ctx: &GpuContext) -> Result<Self> {
        Self::with_variant(ctx, Variant::Portable, DEFAULT_ROUNDS)
    }

    /// The device's fastest variant ([`Variant::best`]) with `rounds` x 256 keys per block
    /// (1..=64) whatever n. Tests use 1 to pass 65,535 workgroups within the binding limit.
    #[cfg(test)]
    pub fn with_rounds(ctx: &GpuContext, rounds: u32) -> Result<Self> {
        Self::with_variant(ctx, Variant::best(ctx), rounds)
    }

    /// A given variant with `rounds` x 256 keys per block (1..=64) whatever n.
    /// [`Error::AdapterLacks`] when the device cannot run the variant.
    pub fn with_variant(ctx: &GpuContext, variant: Variant, rounds: u32) -> Result<Self> {
        Self::build(
            ctx,
            Choice::Fixed {
                variant,
                rounds,
                ballots_only: false,
            },
        )
    }

    /// The subgroup variant matching digits with ballots even where a fixed small subgroup size
    /// would pick broadcasts, so tests cover that path on such adapters (lavapipe). A test
    /// knob: the variant is the same sort as [`Self::with_variant`]'s.
    pub fn subgroup_with_ballots(ctx: &GpuContext, rounds: u32) -> Result<Self> {
        Self::build(
            ctx,
            Choice::Fixed {
                variant: Variant::Subgroup,
                rounds,
                ballots_only: true,
            },
        )
    }

    fn build(ctx: &GpuContext, choice: Choice) -> Result<Self> {
        ctx.check_workgroup("radix sort", WORKGROUP)?;
        let module = ctx.shader_file("sort/radix_sort.wgsl")?;
        let slots = (0..MAX_PASSES).flat_map(|pass| {
            (1..=DIGIT_BITS).map(move |bits| {
                let words = [pass * DIGIT_BITS, (1u32 << bits) - 1];
                (param_slot(pass, bits), words)
            })
        });
        let count = (MAX_PASSES * DIGIT_BITS) as u64;
        let params = ParamTable::new(ctx, "radix pass params", 16, count, slots);
        let mut sort = Self {
            module: module.clone(),
            choice,
            kernels: Vec::new(),
            last: None,
            tiles: None,
            tiled_last: false,
            scan: ExclusiveScan::new(ctx)?,
            params,
            scratch: Scratch::default(),
            copy_back: ctx.pipeline(&module, "copy_back", &[])?,
            stage_timing: false,
            max_groups_per_dim: ctx.limits.max_compute_workgroups_per_dimension,
        };
        if let Choice::Fixed {
            variant: Variant::Tiles,
            ..
        } = choice
        {
            sort.tiles = Some(Box::new(TileSort::new(ctx)?));
            sort.tiled_last = true;
        } else if let Choice::Fixed {
            variant,
            rounds,
            ballots_only,
        } = choice
        {
            // Built now, so a variant the device cannot run is an error here.
            let at = sort.kernels_for(ctx, variant, rounds, ballots_only)?;
            sort.last = Some(at);
        }
        ctx.check()?;
        Ok(sort)
    }

    /// The pipelines of (variant, rounds), built on first use.
    fn kernels_for(
        &mut self,
        ctx: &GpuContext,
        variant: Variant,
        rounds: u32,
        ballots_only: bool,
    ) -> Result<usize> {
        if let Some(at) = self
            .kernels
            .iter()
            .position(|k| (k.variant, k.rounds, k.ballots_only) == (variant, rounds, ballots_only))
        {
            return Ok(at);
        }
        if !(1..=MAX_ROUNDS).contains(&rounds) {
            return Err(Error::invalid_argument(
                "rounds",
                format!("radix sort: rounds per block must be 1..={MAX_ROUNDS}, got {rounds}"),
            ));
        }
        let constants = [("ROUNDS", rounds as f64)];
        let scatter = match variant {
            Variant::Portable => {
                ctx.pipeline_with(&self.module, "scatter", &constants, WorkgroupMemory::AsLeft)?
            }
            Variant::Subgroup => radix_sort_subgroup::scatter_pipeline(ctx, rounds, ballots_only)?,
            Variant::Tiles => unreachable!("the tiled sort has kernels of its own"),
        };
        self.kernels.push(Kernels {
            variant,
            rounds,
            ballots_only,
            histogram: ctx.pipeline_with(
                &self.module,
                "histogram",
                &constants,
                WorkgroupMemory::AsLeft,
            )?,
            scatter,
            block: WORKGROUP * rounds,
            scatter_blocks: match variant {
                Variant::Portable | Variant::Tiles => 1,
                Variant::Subgroup => radix_sort_subgroup::chunks_per_group(ctx),
            },
        });
        Ok(self.kernels.len() - 1)
    }

    /// The variant of the last sort (a fixed one, or what [`plan_for`] chose for the last n;
    /// before any sort of more than one key, [`Variant::Portable`]).
    pub fn variant(&self) -> Variant {
        if self.tiled_last {
            return Variant::Tiles;
        }
        self.last
            .map_or(Variant::Portable, |at| self.kernels[at].variant)
    }

    /// Where the last sort's count of digit passes run lies on the device, when the tiled sort
    /// ran it (it skips passes where every key has the same digit): the buffer and the byte
    /// offset of that u32, to read after the sort's submission.
    pub fn passes_run_at(&self) -> Option<(&wgpu::Buffer, u64)> {
        let tiles = self.tiles.as_ref().filter(|_| self.tiled_last)?;
        Some((tiles.plan_buffer(), TileSort::live_passes_offset()))
    }

    /// Rounds of 256 keys per block of the last sort (see [`Self::variant`]).
    pub fn rounds(&self) -> u32 {
        if self.tiled_last {
            return DEFAULT_ROUNDS;
        }
        self.last
            .map_or(DEFAULT_ROUNDS, |at| self.kernels[at].rounds)
    }

    /// Caps the groups per grid dimension below the device limit: a test knob that reaches
    /// the 2-D dispatch with few keys. The sort is the same.
    pub fn set_max_groups_per_dim(&mut self, max: u32) {
        self.max_groups_per_dim = max.max(1);
        self.scan.set_max_groups_per_dim(max);
    }

    /// Records a stable ascending sort of `(keys[i], values[i])`, i < n, considering only the low
    /// `key_bits` bits (1..=32; fewer bits = fewer passes); the result ends in `keys`/`values`.
    ///
    /// `keys` and `values` are distinct buffers with `STORAGE` usage. Elements past `n` are
    /// untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        n: u32,
        key_bits: u32,
        timer: Option<&mut PassTimer>,
    ) -> Result<()> {
        match timer {
            Some(timer) if self.stage_timing => {
                let mut stages = Stages::Timed { encoder, timer };
                self.record_stages(ctx, &mut stages, keys, values, n, key_bits)
            }
            timer => {
                // One compute pass for the whole sort (timed as one stage, `sort`): wgpu orders
                // the dispatches inside it, and a pass per dispatch only cost encoding
                // (docs/design.md §9.16).
                let mut pass = ctx.compute_pass(
                    encoder,
                    &wgpu::ComputePassDescriptor {
                        label: Some("sort"),
                        timestamp_writes: timer.and_then(|t| t.pass("sort")),
                    },
                );
                self.record(ctx, &mut pass, keys, values, n, key_bits)
            }
        }
    }

    /// With `on`, [`Self::encode`] given a timer records each stage in a timed pass of its own
    /// (`sort histogram`, `scan`, `sort scatter`, `sort copy back`): the per-stage times of
    /// `examples/radix_sort_stages.rs`, at the cost of a pass per dispatch. Frames keep one.
    pub fn set_stage_timing(&mut self, on: bool) {
        self.stage_timing = on;
    }

    /// [`Self::encode`] into a compute pass the caller has open (a stage whose other
    /// dispatches share it, such as the frame events').
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        n: u32,
        key_bits: u32,
    ) -> Result<()> {
        self.record_stages(ctx, &mut Stages::In(pass), keys, values, n, key_bits)
    }

    fn record_stages(
        &mut self,
        ctx: &GpuContext,
        stages: &mut Stages<'_, '_>,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        n: u32,
        key_bits: u32,
    ) -> Result<()> {
        if !(1..=32).contains(&key_bits) {
            return Err(Error::invalid_argument(
                "key_bits",
                format!("radix sort: key_bits must be 1..=32, got {key_bits}"),
            ));
        }
        if keys == values {
            return Err(Error::invalid_argument(
                "values",
                "radix sort: keys and values must be distinct buffers",
            ));
        }
        let bytes = n as u64 * 4;
        for (what, buf) in [("keys", keys), ("values", values)] {
            crate::gpu::sort::check_holds(buf, bytes, |size| {
                format!("radix sort: {n} {what} need {bytes} bytes; the buffer has {size}")
            })?;
        }
        ctx.check_binding("radix sort keys", bytes)?;
        if n <= 1 {
            return Ok(()); // already sorted
        }
        let tiled = match self.choice {
            Choice::Auto => plan_for(ctx, n).0 == Variant::Tiles,
            Choice::Fixed { variant, .. } => variant == Variant::Tiles,
        };
        self.tiled_last = tiled;
        if tiled {
            let tiles = match &mut self.tiles {
                Some(t) => t,
                slot => slot.insert(Box::new(TileSort::new(ctx)?)),
            };
            let max_groups = self.max_groups_per_dim;
            return tiles.record(
                ctx,
                keys,
                values,
                n,
                key_bits,
                max_groups,
                &mut |label, pipeline, entries, groups| {
                    stages.stage(ctx, label, |p| {
                        record(ctx, p, pipeline, entries, groups);
                        Ok(())
                    })
                },
            );
        }
        let at = match self.choice {
            Choice::Auto => {
                let (variant, rounds) = plan_for(ctx, n);
                self.kernels_for(ctx, variant, rounds, false)?
            }
            Choice::Fixed { .. } => self.last.expect("built with the sort"),
        };
        self.last = Some(at);
        let kernels = &self.kernels[at];
        let blocks = n.div_ceil(kernels.block);
        let hist_len = RADIX.checked_mul(blocks).ok_or_else(|| {
            Error::past_u32(
                u64::from(RADIX) * u64::from(blocks),
                format!("radix sort histogram for {n} keys"),
            )
        })?;
        let labels = ["radix tmp keys", "radix tmp values", "radix histogram"];
        let [tmp_keys, tmp_values, hist] =
            self.scratch.grow(ctx, labels, bytes, hist_len as u64 * 4)?;
        let (gx, gy) = dispatch_2d(blocks, self.max_groups_per_dim);
        let (sx, sy) = dispatch_2d(
            blocks.div_ceil(kernels.scatter_blocks),
            self.max_groups_per_dim,
        );

        let scan = &mut self.scan;
        let passes = key_bits.div_ceil(DIGIT_BITS);
        for digit in 0..passes {
            let bits = (key_bits - digit * DIGIT_BITS).min(DIGIT_BITS);
            let params = self.params.entry(param_slot(digit, bits), 8);
            let (src_k, src_v, dst_k, dst_v) = if digit % 2 == 0 {
                (keys, values, &tmp_keys, &tmp_values)
            } else {
                (&tmp_keys, &tmp_values, keys, values)
            };

            let entries = [
                params.clone(),
                exact_binding(1, src_k, n),
                exact_binding(2, &hist, hist_len),
            ];
            stages.stage(ctx, "sort histogram", |p| {
                record(ctx, p, &kernels.histogram, &entries, (gx, gy));
                Ok(())
            })?;
            stages.stage(ctx, "scan", |p| scan.record(ctx, p, &hist, hist_len, None))?;
            let entries = [
                params,
                exact_binding(1, src_k, n),
                exact_binding(2, &hist, hist_len),
                exact_binding(3, src_v, n),
                exact_binding(4, dst_k, n),
                exact_binding(5, dst_v, n),
            ];
            stages.stage(ctx, "sort scatter", |p| {
                record(ctx, p, &kernels.scatter, &entries, (sx, sy));
                Ok(())
            })?;
        }
        if passes % 2 == 1 {
            let entries = [
                exact_binding(1, &tmp_keys, n),
                exact_binding(3, &tmp_values, n),
                exact_binding(4, keys, n),
                exact_binding(5, values, n),
            ];
            let (x, y) = dispatch_2d(n.div_ceil(WORKGROUP), self.max_groups_per_dim);
            stages.stage(ctx, "sort copy back", |p| {
                record(ctx, p, &self.copy_back, &entries, (x, y));
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Convenience for tests and benches: upload, sort, read back.
    pub fn sort_pairs(
        &mut self,
        ctx: &GpuContext,
        keys: &[u32],
        values: &[u32],
    ) -> Result<(Vec<u32>, Vec<u32>)> {
        self.sort_pairs_bits(ctx, keys, values, 32)
    }

    /// [`Self::sort_pairs`] on the low `key_bits` bits only.
    pub fn sort_pairs_bits(
        &mut self,
        ctx: &GpuContext,
        keys: &[u32],
        values: &[u32],
        key_bits: u32,
    ) -> Result<(Vec<u32>, Vec<u32>)> {
        crate::error::check_length("values", values.len(), keys.len(), || {
            format!(
                "radix sort: {} keys but {} values",
                keys.len(),
                values.len()
            )
        })?;
        let n = u32::try_from(keys.len()).map_err(|_| {
            Error::past_u32(
                keys.len() as u64,
                format!("radix sort of {} keys", keys.len()),
            )
        })?;
        let bytes = n as u64 * 4;
        let kb = ctx.storage_buffer("sort keys", bytes)?;
        let vb = ctx.storage_buffer("sort values", bytes)?;
        ctx.write_buffer(&kb, 0, bytemuck::cast_slice(keys));
        ctx.write_buffer(&vb, 0, bytemuck::cast_slice(values));
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        self.encode(ctx, &mut encoder, &kb, &vb, n, key_bits, None)?;
        ctx.submit(encoder);
        ctx.wait()?;
        Ok((ctx.read(&kb, keys.len())?, ctx.read(&vb, keys.len())?))
    }

    /// Estimated device-memory traffic per key per pass, in bytes (model, not a measurement):
    /// histogram reads the key (4); scatter reads key + value and writes both (16); the histogram
    /// (256 counters per block) is written, scanned (read, read + write) and read by the scatter
    /// (5 x 4 bytes per counter). Higher scan levels and the odd-pass copy-back are left out.
    /// Both variants move the same device bytes (the subgroup scatter also reads its blocks'
    /// 256 scanned counters once, as the portable one does): they differ only in the work
    /// inside a workgroup (the portable scatter's bitmask tables and three barriers per 256
    /// keys, the subgroup one's ballots or broadcasts and one atomic per distinct digit).
    pub fn bytes_per_key_per_pass(&self) -> f64 {
        bytes_per_key_per_pass(WORKGROUP * self.rounds())
    }
}

/// [`RadixSort::bytes_per_key_per_pass`] for blocks of `block` keys.
pub fn bytes_per_key_per_pass(block: u32) -> f64 {
    20.0 + 20.0 * RADIX as f64 / block as f64
}

/// Where a sort records its stages: the one pass it is given, or a timed pass each
/// ([`RadixSort::set_stage_timing`]).
enum Stages<'p, 'e> {
    In(&'p mut wgpu::ComputePass<'e>),
    Timed {
        encoder: &'p mut wgpu::CommandEncoder,
        timer: &'p mut PassTimer,
    },
}

impl Stages<'_, '_> {
    /// Runs `f` on the pass that records the stage `label`.
    fn stage(
        &mut self,
        ctx: &GpuContext,
        label: &'static str,
        f: impl FnOnce(&mut wgpu::ComputePass<'_>) -> Result<()>,
    ) -> Result<()> {
        match self {
            Stages::In(pass) => f(pass),
            Stages::Timed { encoder, timer } => {
                let mut pass = ctx.compute_pass(
                    encoder,
                    &wgpu::ComputePassDescriptor {
                        label: Some(label),
                        timestamp_writes: timer.pass(label),
                    },
                );
                f(&mut pass)
            }
        }
    }
}

/// Records one dispatch of `pipeline` on `entries` (bind group 0) into `pass`.
fn record(
    ctx: &GpuContext,
    pass: &mut wgpu::ComputePass<'_>,
    pipeline: &wgpu::ComputePipeline,
    entries: &[wgpu::BindGroupEntry<'_>],
    (x, y): (u32, u32),
) {
    let bg = ctx.bind_group_for("sort", pipeline, entries);
    ctx.dispatch_in(pass, pipeline, &bg, [x, y, 1]);
}

fn param_slot(pass: u32, bits: u32) -> u64 {
    (pass * DIGIT_BITS + bits - 1) as u64
}

#[cfg(test)]
mod tests;
