//! Pair emission: one thread per object walks its candidates, counts sphere tests and touching
//! pairs into u64 totals (`counters[0..4]`), and, when storing, appends each touching pair at an
//! atomic slot. Appends past the capacity are counted but not written; the caller compares the
//! total with the capacity and re-runs with a larger list, so no pair is lost.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{FLAG_STORE, ParamArena, Params, launch, module};

/// Which walk `sweep` does (`SWEEP_*` in `shaders/pairs.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Sweep {
    /// Forward while lo_j <= hi_i on a given axis (x/xy/xyz, last axis).
    Axis = 0,
    /// Same on the axis of largest spread, boxes must also overlap on the other two axes.
    Sap = 1,
    /// Forward while |c_j| - |c_i| <= 2 r_max.
    OriginDistance = 2,
}

pub struct PairKernels {
    brute: wgpu::ComputePipeline,
    sweep: wgpu::ComputePipeline,
    grid: wgpu::ComputePipeline,
    owner: wgpu::ComputePipeline,
}

/// Where pairs go: the shared counters and (when `store`) a list of `capacity` pairs.
pub struct PairSink<'a> {
    pub counters: &'a wgpu::Buffer,
    pub ext: &'a wgpu::Buffer,
    pub pairs: &'a wgpu::Buffer,
    pub capacity: u32,
    pub store: bool,
}

impl PairSink<'_> {
    fn params(&self, n: u32) -> Params {
        Params {
            n,
            cap: self.capacity,
            flags: if self.store { FLAG_STORE } else { 0 },
            ..Default::default()
        }
    }
}

impl PairKernels {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let m = module(ctx, "pairs.wgsl", include_str!("../../shaders/pairs.wgsl"))?;
        Ok(Self {
            brute: ctx.pipeline(&m, "brute", &[]),
            sweep: ctx.pipeline(&m, "sweep", &[]),
            grid: ctx.pipeline(&m, "grid", &[]),
            owner: ctx.pipeline(&m, "owner", &[]),
        })
    }

    /// All n(n-1)/2 pairs of `spheres` (original order).
    pub fn brute(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        spheres: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.brute,
            sink.params(n),
            &[(1, sink.counters), (3, spheres), (7, sink.pairs)],
            (n as u64).div_ceil(2),
        )
    }

    /// A forward sweep over the sorted order (`keys` hold the sort keys, `values` the indices,
    /// `sorted` the gathered spheres).
    #[allow(clippy::too_many_arguments)]
    pub fn sweep(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        mode: Sweep,
        axis: u32,
        sorted: &wgpu::Buffer,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.sweep,
            Params {
                mode: mode as u32,
                axis,
                ..sink.params(n)
            },
            &[
                (1, sink.counters),
                (2, sink.ext),
                (4, sorted),
                (5, keys),
                (6, values),
                (7, sink.pairs),
            ],
            n as u64,
        )
    }

    /// Grid neighbour walk: `keys` are sorted bucket ids, `starts` the bucket starts.
    #[allow(clippy::too_many_arguments)]
    pub fn grid(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        buckets: u32,
        sorted: &wgpu::Buffer,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        starts: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.grid,
            Params {
                buckets,
                ..sink.params(n)
            },
            &[
                (1, sink.counters),
                (2, sink.ext),
                (4, sorted),
                (5, keys),
                (6, values),
                (7, sink.pairs),
                (8, starts),
            ],
            n as u64,
        )
    }

    /// min_axis owners of `axis`: `keys`/`values`/`sorted`/`choice` are that axis's sorted lo
    /// keys, indices, spheres and (m, axis) choices.
    #[allow(clippy::too_many_arguments)]
    pub fn owner(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        axis: u32,
        sorted: &wgpu::Buffer,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        choice: &wgpu::Buffer,
        sink: &PairSink<'_>,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.owner,
            Params {
                axis,
                ..sink.params(n)
            },
            &[
                (1, sink.counters),
                (2, sink.ext),
                (4, sorted),
                (5, keys),
                (6, values),
                (7, sink.pairs),
                (9, choice),
            ],
            n as u64,
        )
    }
}
