//! min_axis axis choice: per object and axis, the number of other objects overlapping it there
//! (two binary searches in the sorted lo and hi keys), the smallest one and its (lowest) axis,
//! plus the paper's literal-rule diagnostic (sum over objects of the smallest forward-candidate
//! count, into `counters[6..8]`).

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{ParamArena, Params, bind, dispatch, launch, module};

pub struct MinAxis {
    rank_scatter: wgpu::ComputePipeline,
    choose: wgpu::ComputePipeline,
    gather_axis: wgpu::ComputePipeline,
}

/// One axis's sorted data.
pub struct AxisOrder<'a> {
    pub lo_keys: &'a wgpu::Buffer,
    pub lo_idx: &'a wgpu::Buffer,
    pub hi_keys: &'a wgpu::Buffer,
    pub rank: &'a wgpu::Buffer,
}

impl MinAxis {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let m = module(
            ctx,
            "min_axis.wgsl",
            include_str!("../../shaders/min_axis.wgsl"),
        )?;
        Ok(Self {
            rank_scatter: ctx.pipeline(&m, "rank_scatter", &[]),
            choose: ctx.pipeline(&m, "choose", &[]),
            gather_axis: ctx.pipeline(&m, "gather_axis", &[]),
        })
    }

    /// Ranks on `axis`, then folds that axis into `choice` / `forward_best`. Call for axis
    /// 0, 1, 2 in that order.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        axis: u32,
        spheres: &wgpu::Buffer,
        order: &AxisOrder<'_>,
        choice: &wgpu::Buffer,
        forward_best: &wgpu::Buffer,
        counters: &wgpu::Buffer,
    ) -> Result<()> {
        let off = arena.push(Params {
            n,
            axis,
            ..Default::default()
        })?;
        let rank = bind(
            ctx,
            &self.rank_scatter,
            &[
                (0, arena.binding(off)),
                (5, order.lo_idx.as_entire_binding()),
                (7, order.rank.as_entire_binding()),
            ],
        );
        let entries = [
            (0, arena.binding(off)),
            // `choose` adds the literal-rule total on the last axis.
            (1, counters.as_entire_binding()),
            (3, spheres.as_entire_binding()),
            (4, order.lo_keys.as_entire_binding()),
            (6, order.hi_keys.as_entire_binding()),
            (7, order.rank.as_entire_binding()),
            (8, choice.as_entire_binding()),
            (9, forward_best.as_entire_binding()),
        ];
        let choose = bind(ctx, &self.choose, &entries);
        pass.set_pipeline(&self.rank_scatter);
        pass.set_bind_group(0, &rank, &[]);
        dispatch(ctx, pass, n as u64);
        pass.set_pipeline(&self.choose);
        pass.set_bind_group(0, &choose, &[]);
        dispatch(ctx, pass, n as u64);
        Ok(())
    }

    /// Gathers spheres and choices into the lo order of one axis (after all three
    /// [`Self::encode`] calls).
    #[allow(clippy::too_many_arguments)]
    pub fn gather(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        spheres: &wgpu::Buffer,
        lo_idx: &wgpu::Buffer,
        choice: &wgpu::Buffer,
        sorted: &wgpu::Buffer,
        sorted_choice: &wgpu::Buffer,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.gather_axis,
            Params {
                n,
                ..Default::default()
            },
            &[
                (3, spheres),
                (5, lo_idx),
                (8, choice),
                (10, sorted),
                (11, sorted_choice),
            ],
            n as u64,
        )
    }
}
