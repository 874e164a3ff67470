//! [`GpuAabbSap`]: sweep and prune over the shapes' axis-aligned bounding boxes on the GPU
//! (`shaders/aabb_sap.wgsl`), the broad phase of the box / polygon pipeline.
//!
//! [`GpuAabbSap::encode`] records, into the caller's encoder, from shape buffers the caller owns
//! ([`SatShapes`]): bounds (one AABB per shape, computed on the GPU; key = ordered(min.x)) ->
//! [`RadixSort`] of (key, index) -> column keys -> a second, stable sort by column -> gather of
//! the AABBs in (column, min.x, index) order -> column ranges -> walk: each box, in every column
//! that can hold the lower corner of a box overlapping it, visits the boxes after it in
//! (min.x, index) order while min_q.x <= max_p.x and appends (i, j), i < j (input indices), when
//! the boxes overlap on every axis (closed intervals: touching counts). Columns cut the (y, z)
//! plane ([`SweepColumns`]) so that a walk does not visit every box overlapping on x alone
//! (about n^(2/3) of them in a 3D volume); with one column it is the plain sweep. The list and its
//! count stay on the device for the next stage ([`GpuAabbSap::candidates`]); after the
//! submission [`GpuAabbSap::finish`] reads the exact count, which keeps counting past the
//! list's capacity: the caller grows the list ([`GpuAabbSap::grow_candidates`]) and records the
//! frame again, so no candidate is ever lost.
//!
//! AABBs: boxes `c ± (|R| h + (|R| h + |c|) * 5 eps)`, the formula of `Obb::aabb` (the CPU
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

use crate::error::{Error, Result};
use crate::geom::obb::ObbFrame;
use crate::geom::polygon::PolygonSet;
use crate::gpu::boxes::sat::{SatCandidates, SatShapes};
use crate::gpu::context::{GpuContext, PassTimer, dispatch_2d};
use crate::gpu::sort::radix_sort::RadixSort;
use bytemuck::{Pod, Zeroable};

const SHADER: &str = concat!(
    include_str!("../../../../shaders/ordered_float.wgsl"),
    include_str!("../../../../shaders/boxes/aabb_sap.wgsl")
);

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
/// A shape is wide when its AABB is more than this many times the median width on y or z:
/// columns stay at most this many typical shapes wide, and ordinary scenes (sizes spread 4 to 1,
/// random rotations, needles) have no wide shape, so nothing changes for them.
const WIDE_FACTOR: f32 = 8.0;
/// Candidate list allocated before the first frame (pairs).
const INITIAL_CAPACITY: u64 = 1 << 16;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct Params {
    n: u32,
    capacity: u32,
    dims: [u32; 2],
    origin: [f32; 2],
    inv_cell: f32,
    reach: f32,
    wide_count: u32,
    wide_lanes: u32,
    pad: [u32; 2],
}

/// How the (y, z) plane is cut into sweep columns. Any layout gives the same candidates as long
/// as `reach` is at least every AABB's width on y and z (the walk visits the columns between
/// column(min - reach) and column(max)); `cell` and `dims` only set the speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepColumns {
    /// Lower (y, z) corner of column (0, 0).
    pub origin: [f32; 2],
    /// Side of a column.
    pub cell: f32,
    /// At least the width on y and on z of every shape's AABB.
    pub reach: f32,
    /// Columns along y and z (at least 1 each); coordinates beyond are clamped into the edge
    /// columns.
    pub dims: [u32; 2],
}

impl SweepColumns {
    /// One column: the plain sweep along x.
    pub fn single() -> Self {
        Self {
            origin: [0.0; 2],
            cell: 1.0,
            reach: 0.0,
            dims: [1, 1],
        }
    }

    /// Columns for `n` shapes whose AABB lower corners lie (mostly) in `lo..=hi` on (y, z) and
    /// whose AABB widths on y and z are at most `max_width`: cells as wide as the widest AABB (so a
    /// walk meets about 2 x 2 columns) but at most about n columns in all.
    pub fn covering(lo: [f32; 2], hi: [f32; 2], max_width: f32, n: u32) -> Self {
        let per_axis = ((n as f64).sqrt().floor() as u32).max(1);
        let extent = [(hi[0] - lo[0]).max(0.0), (hi[1] - lo[1]).max(0.0)];
        let cell = max_width
            .max(extent[0] / per_axis as f32)
            .max(extent[1] / per_axis as f32);
        let usable = cell.is_finite()
            && cell > 0.0
            && (1.0 / cell).is_finite()
            && lo.iter().chain(&hi).all(|v| v.is_finite());
        if !usable {
            return Self::single();
        }
        let dims = extent.map(|e| ((e / cell).floor() as u32).saturating_add(1).min(per_axis));
        Self {
            origin: lo,
            cell,
            reach: max_width,
            dims,
        }
    }

    /// Columns for validated boxes, every one in the columns (see [`frame_extents`]).
    pub fn for_frames(frames: &[ObbFrame]) -> Self {
        columns_over(&frame_extents(frames), &[])
    }

    /// Columns for polygons (z = 0: columns along y only), every one in the columns.
    pub fn for_polygons(set: &PolygonSet) -> Self {
        columns_over(&polygon_extents(set), &[])
    }
}

/// Per box: its centre's (y, z) and a bound on its AABB width on y and z. The half-width on
/// axis a is `sum_k |axis_k[a]| h_k` plus the GPU's margin of 5 epsilons of (extent + |centre|),
/// bounded here with room to spare for rounding.
fn frame_extents(frames: &[ObbFrame]) -> Vec<([f32; 2], f32)> {
    frames
        .iter()
        .map(|f| {
            let c = f.center();
            let ext = f.axis(0).abs() * f.half(0)
                + f.axis(1).abs() * f.half(1)
                + f.axis(2).abs() * f.half(2);
            let half = ext.y.max(ext.z);
            let far = c.y.abs().max(c.z.abs());
            (
                [c.y, c.z],
                2.0 * (half + 1e-6 * (half + far)) * (1.0 + 1e-5),
            )
        })
        .collect()
}

/// Per polygon: its lowest y (z = 0) and its width on y (vertex bounds: exact, plus room).
fn polygon_extents(set: &PolygonSet) -> Vec<([f32; 2], f32)> {
    (0..set.len())
        .map(|i| {
            let (a, b) = set
                .polygon(i)
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.y), b.max(p.y))
                });
            ([a, 0.0], (b - a) * (1.0 + 1e-5))
        })
        .collect()
}

/// Columns covering the shapes (from [`frame_extents`] or [`polygon_extents`]) except those
/// listed in `skip` (increasing indices), with reach their widest.
fn columns_over(shapes: &[([f32; 2], f32)], skip: &[u32]) -> SweepColumns {
    let (mut lo, mut hi, mut reach) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2], 0.0f32);
    let mut next_skip = skip.iter().peekable();
    for (i, &(p, w)) in shapes.iter().enumerate() {
        if next_skip.next_if_eq(&&(i as u32)).is_some() {
            continue;
        }
        lo = [lo[0].min(p[0]), lo[1].min(p[1])];
        hi = [hi[0].max(p[0]), hi[1].max(p[1])];
        reach = reach.max(w);
    }
    let counted = (shapes.len() - skip.len()).min(u32::MAX as usize) as u32;
    SweepColumns::covering(lo, hi, reach, counted)
}

/// Columns plus the shapes kept out of them: the input indices (increasing) of the *wide* shapes,
/// which the sweep tests against every shape instead. `columns.reach` must bound the widths on y
/// and z of the other shapes only.
///
/// Rule ([`Self::for_frames`], [`Self::for_polygons`]): wide = AABB width on y or z above
/// `WIDE_FACTOR` x the median. They are set apart only when there are at most
/// min(n / 64, n^(2/3)) of them: their pass costs (wide count) x n AABB tests, which this keeps
/// below both n^2 / 64 and the n^(5/3) steps of the plain sweep they would otherwise force.
/// Past that, or with none, every shape goes in the columns (reach = the widest, as before).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLayout {
    pub columns: SweepColumns,
    pub wide: Vec<u32>,
}

impl From<SweepColumns> for SweepLayout {
    fn from(columns: SweepColumns) -> Self {
        Self {
            columns,
            wide: Vec::new(),
        }
    }
}

impl SweepLayout {
    /// One column, no wide shapes: the plain sweep along x.
    pub fn single() -> Self {
        SweepColumns::single().into()
    }

    /// Layout for validated boxes (widths bounded as in [`SweepColumns::for_frames`]).
    pub fn for_frames(frames: &[ObbFrame]) -> Self {
        Self::from_extents(&frame_extents(frames))
    }

    /// Layout for polygons (z = 0: width on y).
    pub fn for_polygons(set: &PolygonSet) -> Self {
        Self::from_extents(&polygon_extents(set))
    }

    /// Most wide shapes set apart among `n`: min(n / 64, floor(cbrt(n))^2).
    pub fn max_wide(n: usize) -> usize {
        // Integer cube root, so that exact cubes give exact squares.
        let mut root = (n as f64).cbrt() as usize;
        while (root + 1).pow(3) <= n {
            root += 1;
        }
        while root.pow(3) > n {
            root -= 1;
        }
        (n / 64).min(root * root)
    }

    /// From each shape's (y, z) position (centre or lower corner) and an upper bound on its AABB
    /// width on y and z.
    fn from_extents(shapes: &[([f32; 2], f32)]) -> Self {
        let n = shapes.len();
        let mut widths: Vec<f32> = shapes.iter().map(|s| s.1).collect();
        let wide: Vec<u32> = if n == 0 {
            Vec::new()
        } else {
            let (_, median, _) = widths.select_nth_unstable_by(n / 2, f32::total_cmp);
            let cutoff = *median * WIDE_FACTOR;
            (0..n as u32)
                .filter(|&i| shapes[i as usize].1 > cutoff)
                .collect()
        };
        let wide = if wide.len() > Self::max_wide(n) {
            Vec::new()
        } else {
            wide
        };
        Self {
            columns: columns_over(shapes, &wide),
            wide,
        }
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

/// What one frame found, read after its submission.
#[derive(Clone, Debug)]
pub struct CandidateTotals {
    /// Exact number of candidate pairs (also when they did not all fit the list).
    pub candidates: u64,
    /// GPU seconds per stage (empty without timestamp queries).
    pub pass_times: Vec<(&'static str, f64)>,
}

/// The GPU AABB sweep and prune with its pipelines and reusable buffers (grown when needed).
pub struct GpuAabbSap {
    obb_bounds: wgpu::ComputePipeline,
    polygon_bounds: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
    walk: wgpu::ComputePipeline,
    columns: wgpu::ComputePipeline,
    column_ranges: wgpu::ComputePipeline,
    sort: RadixSort,
    params: wgpu::Buffer,
    counters: wgpu::Buffer,
    counters_staging: wgpu::Buffer,
    scratch: Option<Scratch>,
    mark_wide: wgpu::ComputePipeline,
    wide_pairs: wgpu::ComputePipeline,
    /// Input indices of the wide shapes (grown when needed).
    wide: Option<wgpu::Buffer>,
    pairs: wgpu::Buffer,
    capacity: u32,
    max_groups_per_dim: u32,
    timer: PassTimer,
}

impl GpuAabbSap {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let module = ctx.shader("aabb_sap.wgsl", SHADER)?;
        let [
            obb_bounds,
            polygon_bounds,
            gather,
            walk,
            columns,
            column_ranges,
            mark_wide,
            wide_pairs,
        ] = ctx.pipelines(
            "aabb_sap",
            &module,
            [
                "obb_bounds",
                "polygon_bounds",
                "gather",
                "walk",
                "columns",
                "column_ranges",
                "mark_wide",
                "wide_pairs",
            ],
        )?;
        let params = ctx.uniform_buffer("aabb_sap params", std::mem::size_of::<Params>() as u64);
        let counters = ctx.storage_buffer("aabb_sap counters", 16, wgpu::BufferUsages::empty())?;
        let counters_staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("aabb_sap counters readback"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let pairs = ctx.storage_buffer(
            "aabb_sap candidates",
            INITIAL_CAPACITY * 8,
            wgpu::BufferUsages::empty(),
        )?;
        Ok(Self {
            obb_bounds,
            polygon_bounds,
            gather,
            walk,
            columns,
            column_ranges,
            sort: RadixSort::new(ctx)?,
            params,
            counters,
            counters_staging,
            scratch: None,
            mark_wide,
            wide_pairs,
            wide: None,
            pairs,
            capacity: INITIAL_CAPACITY as u32,
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
    pub fn candidate_capacity(&self) -> u32 {
        self.capacity
    }

    /// Sets the candidate list's capacity (pairs, at least 1). It still grows when a frame finds
    /// more; a tiny capacity exercises that path.
    pub fn set_candidate_capacity(&mut self, ctx: &GpuContext, pairs: u64) -> Result<()> {
        let pairs = pairs.clamp(1, u32::MAX as u64);
        self.pairs = ctx.storage_buffer(
            "aabb_sap candidates",
            pairs * 8,
            wgpu::BufferUsages::empty(),
        )?;
        self.capacity = pairs as u32;
        Ok(())
    }

    /// Grows the candidate list to hold `need` pairs (plus an eighth for the next frames), or
    /// fails with [`Error::TooLarge`] when one binding cannot hold them.
    pub fn grow_candidates(&mut self, ctx: &GpuContext, need: u64) -> Result<()> {
        let max_pairs = ctx.max_binding_bytes() / 8;
        if need > max_pairs.min(u32::MAX as u64) {
            return Err(Error::TooLarge(format!(
                "{need} AABB candidate pairs: a list of {} bytes exceeds the adapter '{}' limit \
                 of {max_pairs} pairs per binding",
                need * 8,
                ctx.info.name
            )));
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
            count_index: 0,
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
        let none = wgpu::BufferUsages::empty();
        self.scratch = Some(Scratch {
            objects,
            boxes: ctx.storage_buffer("aabb_sap boxes", bytes, none)?,
            keys: ctx.storage_buffer("aabb_sap keys", 4 * objects as u64, none)?,
            values: ctx.storage_buffer("aabb_sap values", 4 * objects as u64, none)?,
            ranges: ctx.storage_buffer("aabb_sap column ranges", 8 * objects as u64, none)?,
            sorted_yz: ctx.storage_buffer("aabb_sap sorted y z", 16 * objects as u64, none)?,
            sorted_lo_x: ctx.storage_buffer("aabb_sap sorted min x", 4 * objects as u64, none)?,
        });
        Ok(())
    }

    /// Records one frame (bounds, sorts, gather, walk, the wide pass, the copy of the counters)
    /// into `encoder`. `layout.columns` must bound the AABB widths of the shapes outside
    /// `layout.wide` (see [`SweepColumns`]; `single()` always does); `layout.wide` must be
    /// increasing input indices below n. The parameters go through `queue.write_buffer`: encode
    /// at most one frame per submission. Submit, then call [`Self::finish`].
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        shapes: SatShapes<'_>,
        layout: &SweepLayout,
    ) -> Result<()> {
        let columns = layout.columns;
        let n = match shapes {
            SatShapes::Obbs { frames, n } => {
                if frames.size() < 64 * n as u64 {
                    return Err(Error::Config(format!(
                        "{n} box frames need {} bytes; the buffer has {}",
                        64 * n as u64,
                        frames.size()
                    )));
                }
                n
            }
            SatShapes::Polygons { offsets, n, .. } => {
                if offsets.size() < 4 * (n as u64 + 1) {
                    return Err(Error::Config(format!(
                        "{n} polygons need {} offsets; the buffer holds {}",
                        n as u64 + 1,
                        offsets.size() / 4
                    )));
                }
                n
            }
        };
        if n == 0 {
            return Err(Error::EmptyScene);
        }
        self.ensure_scratch(ctx, n)?;
        let column_count = columns.dims[0] as u64 * columns.dims[1] as u64;
        if columns.dims.contains(&0) || column_count > n as u64 {
            return Err(Error::Config(format!(
                "sweep columns {:?}: at least 1 and at most {n} (one per shape) in all",
                columns.dims
            )));
        }
        let wide_count = layout.wide.len() as u64;
        if !layout.wide.windows(2).all(|w| w[0] < w[1])
            || layout.wide.last().is_some_and(|&i| i >= n)
        {
            return Err(Error::Config(format!(
                "wide shapes must be increasing indices below {n}"
            )));
        }
        // Enough invocations per wide shape that each makes at most WIDE_CHUNK steps.
        let wide_lanes = n.div_ceil(WIDE_CHUNK);
        let max_groups = self
            .max_groups_per_dim
            .min(ctx.limits.max_compute_workgroups_per_dimension);
        let wide_groups = (wide_count * wide_lanes as u64).div_ceil(WG as u64);
        if wide_groups > max_groups as u64 * max_groups as u64 {
            return Err(Error::TooLarge(format!(
                "{wide_count} wide shapes among {n}: {wide_groups} workgroups exceed the \
                 adapter's {max_groups} x {max_groups}"
            )));
        }
        if wide_count > 0 {
            let bytes: &[u8] = bytemuck::cast_slice(&layout.wide);
            let buffer =
                ctx.ensure_storage(&mut self.wide, "aabb_sap wide shapes", bytes.len() as u64)?;
            ctx.queue.write_buffer(buffer, 0, bytes);
        } else {
            // The bind group needs a buffer; nothing reads it.
            ctx.ensure_storage(&mut self.wide, "aabb_sap wide shapes", 4)?;
        }
        let params = Params {
            n,
            capacity: self.capacity,
            dims: columns.dims,
            origin: columns.origin,
            inv_cell: 1.0 / columns.cell,
            reach: columns.reach,
            wide_count: wide_count as u32,
            wide_lanes,
            pad: [0; 2],
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        encoder.clear_buffer(&self.counters, 0, None);
        let s = self.scratch.as_ref().expect("allocated above");
        let groups = dispatch_2d(n.div_ceil(WG), max_groups);
        let bind = |pipeline: &wgpu::ComputePipeline, buffers: &[(u32, &wgpu::Buffer)]| {
            let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                .iter()
                .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        };
        let per_object = [
            (0, &self.params),
            (2, &s.boxes),
            (3, &s.keys),
            (4, &s.values),
        ];
        let (bounds_pipeline, bounds_group) = match shapes {
            SatShapes::Obbs { frames, .. } => {
                let mut b = per_object.to_vec();
                b.push((7, frames));
                (&self.obb_bounds, bind(&self.obb_bounds, &b))
            }
            SatShapes::Polygons {
                vertices, offsets, ..
            } => {
                let mut b = per_object.to_vec();
                b.extend([(1, &self.counters), (8, vertices), (9, offsets)]);
                (&self.polygon_bounds, bind(&self.polygon_bounds, &b))
            }
        };
        let columns_group = bind(
            &self.columns,
            &[
                (0, &self.params),
                (2, &s.boxes),
                (3, &s.keys),
                (4, &s.values),
            ],
        );
        let ranges_group = bind(
            &self.column_ranges,
            &[(0, &self.params), (3, &s.keys), (11, &s.ranges)],
        );
        let gather_group = bind(
            &self.gather,
            &[
                (0, &self.params),
                (2, &s.boxes),
                (4, &s.values),
                (5, &s.sorted_yz),
                (10, &s.sorted_lo_x),
            ],
        );
        let walk_group = bind(
            &self.walk,
            &[
                (0, &self.params),
                (1, &self.counters),
                (2, &s.boxes),
                (4, &s.values),
                (5, &s.sorted_yz),
                (6, &self.pairs),
                (10, &s.sorted_lo_x),
                (11, &s.ranges),
            ],
        );
        let wide_buffer = self.wide.as_ref().expect("allocated above");
        let mark_group = bind(
            &self.mark_wide,
            &[(0, &self.params), (2, &s.boxes), (12, wide_buffer)],
        );
        let wide_group = bind(
            &self.wide_pairs,
            &[
                (0, &self.params),
                (1, &self.counters),
                (2, &s.boxes),
                (6, &self.pairs),
                (12, wide_buffer),
            ],
        );
        let wide_groups = dispatch_2d(wide_groups as u32, max_groups);
        let mark_groups = dispatch_2d((wide_count as u32).div_ceil(WG), max_groups);

        self.timer.reset();
        let run = |encoder: &mut wgpu::CommandEncoder,
                   timer: &mut PassTimer,
                   label: &'static str,
                   pipeline: &wgpu::ComputePipeline,
                   group: &wgpu::BindGroup,
                   groups: (u32, u32)| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: timer.pass(label),
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        };
        run(
            encoder,
            &mut self.timer,
            "aabb bounds",
            bounds_pipeline,
            &bounds_group,
            groups,
        );
        if wide_count > 0 {
            run(
                encoder,
                &mut self.timer,
                "aabb mark wide",
                &self.mark_wide,
                &mark_group,
                mark_groups,
            );
        }
        self.sort.encode(
            ctx,
            encoder,
            &s.keys,
            &s.values,
            n,
            32,
            Some(&mut self.timer),
        )?;
        // Wide shapes take the key `column_count`, after every column.
        if column_count > 1 || wide_count > 0 {
            run(
                encoder,
                &mut self.timer,
                "aabb columns",
                &self.columns,
                &columns_group,
                groups,
            );
            // Stable: within a column the (min.x, index) order of the first sort stays.
            let last_key = column_count - 1 + (wide_count > 0) as u64;
            let column_bits = 64 - last_key.leading_zeros();
            self.sort.encode(
                ctx,
                encoder,
                &s.keys,
                &s.values,
                n,
                column_bits,
                Some(&mut self.timer),
            )?;
        } else {
            // One column: every key is column 0.
            encoder.clear_buffer(&s.keys, 0, Some(4 * n as u64));
        }
        encoder.clear_buffer(&s.ranges, 0, Some(8 * column_count));
        run(
            encoder,
            &mut self.timer,
            "aabb columns",
            &self.column_ranges,
            &ranges_group,
            groups,
        );
        run(
            encoder,
            &mut self.timer,
            "aabb gather",
            &self.gather,
            &gather_group,
            groups,
        );
        run(
            encoder,
            &mut self.timer,
            "aabb walk",
            &self.walk,
            &walk_group,
            groups,
        );
        if wide_count > 0 {
            run(
                encoder,
                &mut self.timer,
                "aabb wide",
                &self.wide_pairs,
                &wide_group,
                wide_groups,
            );
        }
        encoder.copy_buffer_to_buffer(&self.counters, 0, &self.counters_staging, 0, 16);
        self.timer.resolve(encoder);
        Ok(())
    }

    /// After the submission of [`Self::encode`]: the exact candidate count and the pass times.
    /// A loop the device cut short or malformed polygon offsets are errors, never a short list.
    pub fn finish(&mut self, ctx: &GpuContext) -> Result<CandidateTotals> {
        let words = map_counters(ctx, &self.counters_staging)?;
        if words[3] > 0 {
            return Err(Error::Config(format!(
                "{} polygons have malformed vertex offsets",
                words[3]
            )));
        }
        if words[2] > 0 {
            return Err(Error::Gpu(format!(
                "the device '{}' cut {} AABB sweep loops short (lavapipe stops an invocation \
                 after 65,535 loop iterations): the candidate list would be incomplete",
                ctx.info.name, words[2]
            )));
        }
        Ok(CandidateTotals {
            candidates: (words[1] as u64) << 32 | words[0] as u64,
            pass_times: self.timer.read(ctx)?,
        })
    }
}

/// Maps the 16-byte counters staging buffer and returns its words.
fn map_counters(ctx: &GpuContext, staging: &wgpu::Buffer) -> Result<[u32; 4]> {
    let w = ctx.map_staging_words(staging, "aabb_sap counters")?;
    Ok([w[0], w[1], w[2], w[3]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::context_for_tests;

    fn buffer_with(ctx: &GpuContext, data: &[u8]) -> wgpu::Buffer {
        let b = ctx
            .storage_buffer("test input", data.len() as u64, wgpu::BufferUsages::empty())
            .unwrap();
        ctx.queue.write_buffer(&b, 0, data);
        b
    }

    fn run(ctx: &GpuContext, sap: &mut GpuAabbSap, shapes: SatShapes<'_>) -> Result<u64> {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sap.encode(ctx, &mut enc, shapes, &SweepLayout::single())?;
        ctx.queue.submit([enc.finish()]);
        Ok(sap.finish(ctx)?.candidates)
    }

    /// Offsets that run backwards or past the vertices are reported, not read out of bounds;
    /// well-formed ones give the vertex-bounds candidates (two unit squares sharing an edge, a
    /// third apart).
    #[test]
    fn polygon_offsets_are_checked_on_the_device() {
        let Some(ctx) = context_for_tests() else {
            return;
        };
        let mut sap = GpuAabbSap::new(&ctx).unwrap();
        let square = |x: f32| [[x, 0.0], [x + 1.0, 0.0], [x + 1.0, 1.0], [x, 1.0]];
        let vertices: Vec<[f32; 2]> = [square(0.0), square(1.0), square(3.0)].concat();
        let vb = buffer_with(&ctx, bytemuck::cast_slice(&vertices));
        let good = buffer_with(&ctx, bytemuck::cast_slice(&[0u32, 4, 8, 12]));
        fn shapes<'a>(vertices: &'a wgpu::Buffer, offsets: &'a wgpu::Buffer) -> SatShapes<'a> {
            SatShapes::Polygons {
                vertices,
                offsets,
                n: 3,
            }
        }
        assert_eq!(run(&ctx, &mut sap, shapes(&vb, &good)).unwrap(), 1);
        for bad in [[0u32, 4, 2, 12], [0, 4, 8, 99]] {
            let offsets = buffer_with(&ctx, bytemuck::cast_slice(&bad));
            let e = run(&ctx, &mut sap, shapes(&vb, &offsets)).unwrap_err();
            assert!(matches!(e, Error::Config(_)), "{bad:?}: {e}");
        }
        let e = run(
            &ctx,
            &mut sap,
            SatShapes::Polygons {
                vertices: &vb,
                offsets: &good,
                n: 0,
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::EmptyScene), "{e}");
    }

    #[test]
    fn candidate_lists_beyond_one_binding_are_too_large() {
        let Some(ctx) = context_for_tests() else {
            return;
        };
        let mut sap = GpuAabbSap::new(&ctx).unwrap();
        let max = ctx.limits.max_storage_buffer_binding_size / 8;
        let e = sap.grow_candidates(&ctx, max + 1).unwrap_err();
        assert!(matches!(e, Error::TooLarge(_)), "{e}");
        sap.grow_candidates(&ctx, 1000).unwrap();
        assert!(sap.candidate_capacity() >= 1000);
    }

    /// Any column layout whose reach bounds the AABB widths gives the plain sweep's candidates:
    /// narrow cells (a walk spans several columns per axis), an origin inside the scene (edge
    /// columns clamp), a single row.
    #[test]
    fn column_layouts_give_the_plain_sweeps_candidates() {
        let Some(ctx) = context_for_tests() else {
            return;
        };
        let mut sap = GpuAabbSap::new(&ctx).unwrap();
        let boxes = crate::scenes::boxes::random_boxes(4_000, 3);
        let frames = crate::geom::obb::obb_frames(&boxes);
        let fb = buffer_with(&ctx, bytemuck::cast_slice(&frames));
        let shapes = SatShapes::Obbs {
            frames: &fb,
            n: boxes.len() as u32,
        };
        let mut candidates = |columns: SweepColumns| {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            sap.encode(&ctx, &mut enc, shapes, &columns.into()).unwrap();
            ctx.queue.submit([enc.finish()]);
            let count = sap.finish(&ctx).unwrap().candidates;
            assert!(count <= sap.candidate_capacity() as u64);
            let mut pairs: Vec<[u32; 2]> =
                ctx.read(sap.candidates().pairs, count as usize).unwrap();
            pairs.sort_unstable();
            pairs
        };
        let plain = candidates(SweepColumns::single());
        assert!(plain.len() > 1_000, "{}", plain.len());
        let auto = SweepColumns::for_frames(&frames);
        assert!(auto.dims[0] > 4 && auto.dims[1] > 4, "{auto:?}");
        assert_eq!(candidates(auto), plain, "{auto:?}");
        let narrow = SweepColumns {
            cell: auto.reach / 3.0,
            dims: [40, 50],
            ..auto
        };
        assert_eq!(candidates(narrow), plain, "{narrow:?}");
        let clamped = SweepColumns {
            origin: [auto.origin[0] + 5.0, auto.origin[1] + 7.0],
            dims: [6, 1],
            ..narrow
        };
        assert_eq!(candidates(clamped), plain, "{clamped:?}");
        let too_many = SweepColumns {
            dims: [4_000, 2],
            ..auto
        };
        assert!(matches!(
            sap.encode(
                &ctx,
                &mut ctx.device.create_command_encoder(&Default::default()),
                shapes,
                &too_many.into()
            ),
            Err(Error::Config(_))
        ));
    }

    #[test]
    fn columns_cover_the_scene_with_at_most_one_per_shape() {
        let c = SweepColumns::covering([0.0, -10.0], [100.0, 10.0], 2.0, 10_000);
        assert_eq!(c.cell, 2.0);
        assert_eq!(c.dims, [51, 11]);
        assert_eq!(c.reach, 2.0);
        // Few shapes: at most sqrt(n) per axis, wider cells.
        let c = SweepColumns::covering([0.0, 0.0], [100.0, 100.0], 2.0, 100);
        assert_eq!(c.dims, [10, 10]);
        assert_eq!(c.cell, 10.0);
        // Degenerate extents: one column.
        assert_eq!(
            SweepColumns::covering([5.0, 5.0], [5.0, 5.0], 0.0, 100),
            SweepColumns::single()
        );
        // Reach: the widest AABB on y or z (here 2 x 3 on z), plus margins; a box turned 45
        // degrees about x is wider on y and z: 2 (2 + 3) / sqrt(2).
        let b = crate::geom::obb::Obb::axis_aligned(
            glam::Vec3::new(1.0, 2.0, 3.0),
            glam::Vec3::new(1.0, 2.0, 3.0),
        );
        let c = SweepColumns::for_frames(&[b.frame(), b.frame()]);
        assert!(c.reach >= 6.0 && c.reach < 6.001, "{c:?}");
        let turned = crate::geom::obb::Obb::new(
            b.center,
            b.half_extents,
            glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
        );
        let c = SweepColumns::for_frames(&[b.frame(), turned.frame()]);
        let want = 10.0 / std::f32::consts::SQRT_2;
        assert!(c.reach >= want && c.reach < want * 1.001, "{c:?}");
    }
    fn boxes_with_giants(n: usize, seed: u64, giants: usize) -> Vec<crate::geom::obb::Obb> {
        use glam::{Quat, Vec3};
        let mut boxes = crate::scenes::boxes::random_boxes(n, seed);
        // Giants spread over the scene at several places, the first two overlapping each other.
        for k in 0..giants {
            let at = match k {
                1 => boxes[0].center + Vec3::new(2.0, 1.0, 0.0),
                _ => boxes[k * 37].center,
            };
            boxes.insert(
                k * 61 + 3,
                crate::geom::obb::Obb::new(
                    at,
                    Vec3::new(6.0 + k as f32, 0.4, 15.0),
                    Quat::from_rotation_x(0.3 * k as f32),
                ),
            );
        }
        boxes
    }

    /// The rule: none wide in an ordinary scene; giants set apart, and the columns then sized for
    /// the others; more giants than `max_wide` -> every shape in the columns again.
    #[test]
    fn wide_shapes_are_the_few_far_wider_than_the_median() {
        let plain = crate::scenes::boxes::random_boxes(4_000, 1);
        let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&plain));
        assert!(layout.wide.is_empty());
        assert_eq!(
            layout.columns,
            SweepColumns::for_frames(&crate::geom::obb::obb_frames(&plain))
        );
        let giants = boxes_with_giants(4_000, 1, 3);
        let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&giants));
        assert_eq!(layout.wide, vec![3, 64, 125]);
        // random_boxes: half-extents below 0.6, so AABB widths below 2 sqrt(3) 0.6 ~ 2.08.
        assert!(layout.columns.reach < 2.1, "{layout:?}");
        assert!(layout.columns.dims.iter().all(|&d| d > 4), "{layout:?}");
        let many = SweepLayout::max_wide(4_064) + 1;
        let crowd = boxes_with_giants(4_000, 1, many);
        let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&crowd));
        assert!(layout.wide.is_empty());
        assert!(layout.columns.reach > 30.0, "{layout:?}");
        assert_eq!(SweepLayout::max_wide(1_000_000), 10_000);
        assert_eq!(SweepLayout::max_wide(6_400), 100);
        assert_eq!(SweepLayout::max_wide(63), 0);
    }

    /// The wide pass and the walk together give the plain sweep's candidates (every shape
    /// walking in one column): for the host's wide list, for an arbitrary one (small boxes
    /// set apart too, so wide-wide pairs among touching neighbours), and through 2D dispatch.
    #[test]
    fn wide_pass_gives_the_plain_sweeps_candidates() {
        let Some(ctx) = context_for_tests() else {
            return;
        };
        let mut sap = GpuAabbSap::new(&ctx).unwrap();
        let boxes = boxes_with_giants(3_000, 9, 4);
        let frames = crate::geom::obb::obb_frames(&boxes);
        let fb = buffer_with(&ctx, bytemuck::cast_slice(&frames));
        let n = boxes.len() as u32;
        let shapes = SatShapes::Obbs { frames: &fb, n };
        let candidates = |sap: &mut GpuAabbSap, layout: &SweepLayout| -> Result<Vec<[u32; 2]>> {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            sap.encode(&ctx, &mut enc, shapes, layout)?;
            ctx.queue.submit([enc.finish()]);
            let count = sap.finish(&ctx)?.candidates;
            assert!(count <= sap.candidate_capacity() as u64);
            let mut pairs: Vec<[u32; 2]> = ctx.read(sap.candidates().pairs, count as usize)?;
            pairs.sort_unstable();
            Ok(pairs)
        };
        let plain = candidates(&mut sap, &SweepLayout::single()).unwrap();
        assert!(plain.len() > 1_000, "{}", plain.len());
        let auto = SweepLayout::for_frames(&frames);
        assert_eq!(auto.wide.len(), 4);
        let giant_pairs = plain
            .iter()
            .filter(|p| p.iter().any(|i| auto.wide.contains(i)))
            .count();
        assert!(giant_pairs > 100, "{giant_pairs}");
        assert!(
            plain.contains(&[auto.wide[0], auto.wide[1]]),
            "giants overlap"
        );
        assert_eq!(candidates(&mut sap, &auto).unwrap(), plain);
        // Every 7th shape and the giants apart; columns bound every width, so any list is sound.
        let arbitrary = SweepLayout {
            columns: SweepColumns::for_frames(&frames),
            wide: (0..n)
                .filter(|i| i % 7 == 0 || auto.wide.contains(i))
                .collect(),
        };
        let wide_wide = plain
            .iter()
            .filter(|p| p.iter().all(|i| arbitrary.wide.contains(i)))
            .count();
        assert!(wide_wide > 10, "{wide_wide}");
        assert_eq!(candidates(&mut sap, &arbitrary).unwrap(), plain);
        // 2D dispatch of every pass (at most 3 groups per dimension, then 10: the wide pass of
        // the arbitrary list is 434 x 12 invocations, 82 groups, more than 3 x 3 can hold).
        sap.set_max_groups_per_dim(3);
        assert_eq!(candidates(&mut sap, &auto).unwrap(), plain);
        let e = candidates(&mut sap, &arbitrary).unwrap_err();
        assert!(matches!(e, Error::TooLarge(_)), "{e}");
        sap.set_max_groups_per_dim(10);
        assert_eq!(candidates(&mut sap, &arbitrary).unwrap(), plain);
        sap.set_max_groups_per_dim(u32::MAX);
        for bad in [vec![5, 5], vec![9, 4], vec![n]] {
            let layout = SweepLayout {
                wide: bad.clone(),
                ..auto.clone()
            };
            let e = candidates(&mut sap, &layout).unwrap_err();
            assert!(matches!(e, Error::Config(_)), "{bad:?}: {e}");
        }
    }
}
