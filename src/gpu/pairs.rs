//! Pair emission: one thread per object walks its candidates, counts sphere tests and touching
//! pairs into u64 totals (`counters[0..4]`), and, when storing, appends each touching pair at an
//! atomic slot. Appends past the capacity are counted but not written; the caller compares the
//! total with the capacity and re-runs with a larger list, so no pair is lost.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{FLAG_STORE, ParamArena, Params, bind, dispatch, module};

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
        let off = arena.push(sink.params(n))?;
        let bg = bind(
            ctx,
            &self.brute,
            &[
                (0, arena.binding(off)),
                (1, sink.counters.as_entire_binding()),
                (3, spheres.as_entire_binding()),
                (7, sink.pairs.as_entire_binding()),
            ],
        );
        pass.set_pipeline(&self.brute);
        pass.set_bind_group(0, &bg, &[]);
        dispatch(ctx, pass, (n as u64).div_ceil(2));
        Ok(())
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
        let off = arena.push(Params {
            mode: mode as u32,
            axis,
            ..sink.params(n)
        })?;
        let bg = bind(
            ctx,
            &self.sweep,
            &[
                (0, arena.binding(off)),
                (1, sink.counters.as_entire_binding()),
                (2, sink.ext.as_entire_binding()),
                (4, sorted.as_entire_binding()),
                (5, keys.as_entire_binding()),
                (6, values.as_entire_binding()),
                (7, sink.pairs.as_entire_binding()),
            ],
        );
        pass.set_pipeline(&self.sweep);
        pass.set_bind_group(0, &bg, &[]);
        dispatch(ctx, pass, n as u64);
        Ok(())
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
        let off = arena.push(Params {
            buckets,
            ..sink.params(n)
        })?;
        let bg = bind(
            ctx,
            &self.grid,
            &[
                (0, arena.binding(off)),
                (1, sink.counters.as_entire_binding()),
                (2, sink.ext.as_entire_binding()),
                (4, sorted.as_entire_binding()),
                (5, keys.as_entire_binding()),
                (6, values.as_entire_binding()),
                (7, sink.pairs.as_entire_binding()),
                (8, starts.as_entire_binding()),
            ],
        );
        pass.set_pipeline(&self.grid);
        pass.set_bind_group(0, &bg, &[]);
        dispatch(ctx, pass, n as u64);
        Ok(())
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
        let off = arena.push(Params {
            axis,
            ..sink.params(n)
        })?;
        let bg = bind(
            ctx,
            &self.owner,
            &[
                (0, arena.binding(off)),
                (1, sink.counters.as_entire_binding()),
                (2, sink.ext.as_entire_binding()),
                (4, sorted.as_entire_binding()),
                (5, keys.as_entire_binding()),
                (6, values.as_entire_binding()),
                (7, sink.pairs.as_entire_binding()),
                (9, choice.as_entire_binding()),
            ],
        );
        pass.set_pipeline(&self.owner);
        pass.set_bind_group(0, &bg, &[]);
        dispatch(ctx, pass, n as u64);
        Ok(())
    }
}
