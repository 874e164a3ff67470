//! [`GpuAabbSap`]: sweep and prune over the shapes' axis-aligned bounding boxes on the GPU
//! (`shaders/boxes/aabb_sap.wgsl`), the broad phase of the box / polygon pipeline.
//!
//! [`GpuAabbSap::encode`] records, into the caller's encoder, from shape buffers the caller owns
//! ([`SweepShapes`]): bounds (one AABB per shape, computed on the GPU or the caller's own;
//! key = ordered(min.x)) ->
//! [`RadixSort`] of (key, index) -> column keys -> a second, stable sort by column -> gather of
//! the AABBs in (column, min.x, index) order -> column ranges -> walk: each box, in every column
//! that can hold the lower corner of a box overlapping it, visits the boxes after it in
//! (min.x, index) order while min_q.x <= max_p.x and appends (i, j), i < j (input indices), when
//! the boxes overlap on every axis (closed intervals: touching counts). Columns cut the (y, z)
//! plane ([`SweepColumns`]) so that a walk does not visit every box overlapping on x alone
//! (about n^(2/3) of them in a 3D volume); with one column it is the plain sweep. The list and its
//! count stay on the device for the next stage ([`GpuAabbSap::candidates`]); after the
//! submission [`GpuAabbSap::totals_from`] reads the exact count (from the frame's one readback,
//! [`GpuAabbSap::plan_readback`]), which keeps counting past the
//! list's capacity: the caller grows the list ([`GpuAabbSap::grow_candidates`]) and records the
//! frame again, so no candidate is ever lost.
//!
//! AABBs: boxes `c ± (|R| h + (|R| h + |c| + Σh) * 5 eps)`, the formula of `Obb::aabb` (the CPU
//! pipeline's) with one more epsilon of margin, so the GPU's candidates contain the CPU's and
//! differ only by pairs whose AABBs are within about an ulp of touching; polygons: the vertex
//! min / max at z = 0, exactly the CPU's.
//!
//! Wide shapes ([`SweepLayout`]): a few shapes far wider on y or z than the rest (a terrain tile,
//! a building, a trigger volume among small bodies) would force `reach` up to their width and
//! collapse the columns into one. The host lists them; they get no column, no walk, and one pass
//! of their own tests each against every shape (`aabb wide`).
//!
//! Stage labels of the pass times: `aabb bounds`, `aabb mark wide`, the sorts' passes,
//! `aabb columns`, `aabb gather`, `aabb walk`, `aabb wide`.

use crate::error::{Error, Exceeds, Result};
use crate::gpu::boxes::sat::{SatCandidates, SatShapes};
use crate::gpu::context::Uniform;
use crate::gpu::context::{GpuContext, dispatch_2d};
use crate::gpu::readback::{self, Readback};
use crate::gpu::slots;
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::timer::PassTimer;

mod encode;
mod layout;
#[cfg(test)]
mod tests;

pub use layout::{SweepColumns, SweepLayout};

/// Threads per workgroup (`WG` in the shader).
const WG: u32 = 64;
/// Bytes per AABB on the device (two `vec4<f32>`).
const AABB_BYTES: u64 = 32;
/// Timed passes per frame: bounds, gather, walk, the wide ones and the sorts' (a few per 8-bit
/// digit).
const TIMED_PASSES: u32 = 80;
/// Steps of one `wide_pairs` invocation at most (`WIDE_CHUNK` in the shader): far below
/// lavapipe's 65,535 loop iterations, and small enough that one wide shape among a million
/// makes about 4,000 invocations, enough to fill a GPU.
const WIDE_CHUNK: u32 = 256;
/// Candidate list allocated before the first frame (pairs).
const INITIAL_CAPACITY: u64 = 1 << 16;

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/boxes/aabb_sap.wgsl` (its import `boxes/aabb_sap_params.wgsl`).
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct Params {
        n: u32,
        /// Pairs `pairs` holds.
        capacity: u32,
        /// Columns per axis (y, z); their product is at most the length of `ranges`.
        dims_y: u32,
        dims_z: u32,
        /// Lower corner of column (0, 0) and 1 / cell side.
        origin_y: f32,
        origin_z: f32,
        inv_cell: f32,
        /// At least the width on y and z of every AABB outside the wide list.
        reach: f32,
        /// Wide shapes, and invocations of wide_pairs per wide shape.
        wide_count: u32,
        wide_lanes: u32,
    }
}

/// Per-object buffers, sized for `objects` shapes.
struct Scratch {
    objects: u32,
    boxes: wgpu::Buffer,
    keys: wgpu::Buffer,
    values: wgpu::Buffer,
    /// [start, end) per column (at most one column per object).
    ranges: wgpu::Buffer,
    /// Sorted (min.y, max.y, min.z, max.z) and min.x.
    sorted_yz: wgpu::Buffer,
    sorted_lo_x: wgpu::Buffer,
}

/// What the sweep reads its boxes from, in buffers the caller owns.
#[derive(Clone, Copy)]
pub enum SweepShapes<'a> {
    /// Shapes whose AABBs the sweep computes (oriented boxes, polygons).
    Shapes(SatShapes<'a>),
    /// `boxes`: `n` AABBs as they are, `(min, 0)` then `(max, 0)` as `vec4<f32>` (32 bytes each;
    /// [`aabb_bytes`]).
    Aabbs { boxes: &'a wgpu::Buffer, n: u32 },
}

impl<'a> From<SatShapes<'a>> for SweepShapes<'a> {
    fn from(shapes: SatShapes<'a>) -> Self {
        SweepShapes::Shapes(shapes)
    }
}

/// The device layout of [`SweepShapes::Aabbs`]: per box `min.xyz, 0, max.xyz, 0`.
pub fn aabb_bytes(boxes: &[crate::geom::aabb::Aabb]) -> Vec<[f32; 8]> {
    boxes
        .iter()
        .map(|b| {
            let (lo, hi) = (b.min, b.max);
            [lo.x, lo.y, lo.z, 0.0, hi.x, hi.y, hi.z, 0.0]
        })
        .collect()
}

/// What one frame found, read after its submission.
#[derive(Clone, Debug)]
pub struct CandidateTotals {
    /// Exact number of candidate pairs (also when they did not all fit the list).
    pub candidates: u64,
    /// GPU seconds per stage (empty without timestamp queries).
    pub pass_times: Vec<(&'static str, f64)>,
}

crate::gpu::context::entry_pipelines! {
    /// The sweep's pipelines.
    struct SapKernels = "boxes/aabb_sap.wgsl" [
        aabb_bounds, obb_bounds, polygon_bounds, gather, walk, columns, column_ranges, mark_wide,
        wide_pairs
    ]
}

/// The GPU AABB sweep and prune with its pipelines and reusable buffers (grown when needed).
pub struct GpuAabbSap {
    kernels: SapKernels,
    sort: RadixSort,
    params: wgpu::Buffer,
    counters: wgpu::Buffer,
    scratch: Option<Scratch>,
    /// Input indices of the wide shapes (grown when needed).
    wide: Option<wgpu::Buffer>,
    pairs: wgpu::Buffer,
    capacity: u32,
    max_groups_per_dim: u32,
    timer: PassTimer,
}

impl GpuAabbSap {
    /// Compiles the sweep's pipelines on `ctx` and allocates its first buffers.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let params = ctx.uniform_buffer("aabb_sap params", Params::uniform_size())?;
        let counters = ctx.storage_buffer("aabb_sap counters", 16)?;
        // Within the binding limit the context holds (as low as MIN_BINDING_CAP): the list
        // grows past it only as far as frames need.
        let capacity = INITIAL_CAPACITY.min(ctx.max_binding_bytes() / 8).max(1);
        let pairs = ctx.storage_buffer("aabb_sap candidates", capacity * 8)?;
        Ok(Self {
            kernels: SapKernels::new(ctx)?,
            sort: RadixSort::new(ctx)?,
            params,
            counters,
            scratch: None,
            wide: None,
            pairs,
            capacity: capacity as u32,
            max_groups_per_dim: ctx.limits.max_compute_workgroups_per_dimension,
            timer: PassTimer::new(ctx, TIMED_PASSES),
        })
    }

    /// Caps workgroups per dispatch dimension below the adapter's limit (and the sort's), so
    /// tests can exercise the 2D dispatch path with small inputs.
    pub fn set_max_groups_per_dim(&mut self, max: u32) {
        self.max_groups_per_dim = max.max(1);
        self.sort.set_max_groups_per_dim(max);
    }

    /// Pairs the candidate list holds.
    #[cfg(test)]
    pub fn candidate_capacity(&self) -> u32 {
        self.capacity
    }

    /// Sets the candidate list's capacity (pairs, at least 1). It still grows when a frame finds
    /// more; a tiny capacity exercises that path.
    pub fn set_candidate_capacity(&mut self, ctx: &GpuContext, pairs: u64) -> Result<()> {
        let pairs = pairs.clamp(1, u32::MAX as u64);
        self.pairs = ctx.storage_buffer("aabb_sap candidates", pairs * 8)?;
        self.capacity = pairs as u32;
        Ok(())
    }

    /// Grows the candidate list to hold `need` pairs (plus an eighth for the next frames), or
    /// fails with [`Error::TooLarge`] when one binding cannot hold them.
    pub fn grow_candidates(&mut self, ctx: &GpuContext, need: u64) -> Result<()> {
        let max_pairs = ctx.max_binding_bytes() / 8;
        if need > max_pairs.min(u32::MAX as u64) {
            return Err(Error::too_large(
                Exceeds::Binding {
                    needed: need.saturating_mul(8),
                    allowed: max_pairs.min(u32::MAX as u64) * 8,
                },
                format!(
                    "{need} AABB candidate pairs: a list of {} bytes exceeds one binding \
                     ({max_pairs} pairs): {}",
                    need * 8,
                    ctx.whose_binding_limit()
                ),
            ));
        }
        self.set_candidate_capacity(ctx, (need + need / 8).min(max_pairs))
    }

    /// The candidate list and its on-device count, for a stage recorded after [`Self::encode`]
    /// in the same submission (the count is clamped to `capacity` by the reader).
    pub fn candidates(&self) -> SatCandidates<'_> {
        SatCandidates {
            pairs: &self.pairs,
            capacity: self.capacity,
            count: &self.counters,
            count_index: slots::SWEEP_APPEND,
        }
    }

    fn ensure_scratch(&mut self, ctx: &GpuContext, n: u32) -> Result<()> {
        if self.scratch.as_ref().is_some_and(|s| s.objects >= n) {
            return Ok(());
        }
        // Grow by at least a quarter so a slowly growing scene reallocates rarely, but never
        // past what one binding holds when n itself fits.
        let max_objects = ctx.max_binding_bytes() / AABB_BYTES;
        let grown = self
            .scratch
            .as_ref()
            .map_or(n, |s| n.max(s.objects.saturating_add(s.objects / 4)));
        let objects = if grown as u64 > max_objects && n as u64 <= max_objects {
            max_objects as u32
        } else {
            grown
        };
        let bytes = objects as u64 * AABB_BYTES;
        ctx.check_binding(&format!("AABBs of {n} shapes"), n as u64 * AABB_BYTES)?;
        self.scratch = Some(Scratch {
            objects,
            boxes: ctx.storage_buffer("aabb_sap boxes", bytes)?,
            keys: ctx.storage_buffer("aabb_sap keys", 4 * objects as u64)?,
            values: ctx.storage_buffer("aabb_sap values", 4 * objects as u64)?,
            ranges: ctx.storage_buffer("aabb_sap column ranges", 8 * objects as u64)?,
            sorted_yz: ctx.storage_buffer("aabb_sap sorted y z", 16 * objects as u64)?,
            sorted_lo_x: ctx.storage_buffer("aabb_sap sorted min x", 4 * objects as u64)?,
        });
        Ok(())
    }

    /// Plans the readback of the last [`Self::encode`]'s counters and timestamps into `rb`.
    pub fn plan_readback(&self, rb: &mut Readback) -> SapReadback {
        SapReadback {
            counters: rb.add(&self.counters, 0, 16),
            times: rb.add_timer(&self.timer),
        }
    }

    /// From the bytes planned by [`Self::plan_readback`]: the exact candidate count and the pass
    /// times. A loop the device cut short or malformed polygon offsets are errors, never a short
    /// list.
    pub fn totals_from(
        &self,
        ctx: &GpuContext,
        bytes: &[u8],
        plan: &SapReadback,
    ) -> Result<CandidateTotals> {
        let words = readback::words(&bytes[plan.counters.clone()]);
        let word = |slot: u32| words[slot as usize];
        if word(slots::SWEEP_BAD_OFFSETS) > 0 {
            return Err(Error::invalid_argument(
                "offsets",
                format!(
                    "{} polygons have malformed vertex offsets",
                    word(slots::SWEEP_BAD_OFFSETS)
                ),
            ));
        }
        if word(slots::SWEEP_CUT_SHORT) > 0 {
            return Err(Error::gpu(
                crate::error::GpuFailure::CutShort,
                format!(
                    "the device '{}' cut {} AABB sweep loops short (lavapipe stops an invocation \
                 after 65,535 loop iterations): the candidate list would be incomplete",
                    ctx.info.name,
                    word(slots::SWEEP_CUT_SHORT)
                ),
            ));
        }
        Ok(CandidateTotals {
            candidates: (word(slots::SWEEP_WRAPS) as u64) << 32 | word(slots::SWEEP_APPEND) as u64,
            pass_times: self.timer.times_from(ctx, &bytes[plan.times.clone()]),
        })
    }
}

/// Where [`GpuAabbSap::plan_readback`] put the sweep's results in the mapped bytes.
pub struct SapReadback {
    counters: std::ops::Range<usize>,
    times: std::ops::Range<usize>,
}
