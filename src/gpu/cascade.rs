//! Cascade stage of x/xy/xyz: after a sort on one axis (dropped objects carry the maximum key and
//! sort last), marks the survivors that overlap at least one other survivor on that axis. The
//! marks feed the next axis's keys, so n stays static and nothing is read back between axes.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{ParamArena, Params, WG, bind, dispatch_groups, module};

pub struct Cascade {
    block_maxima: wgpu::ComputePipeline,
    block_prefix: wgpu::ComputePipeline,
    survivors: wgpu::ComputePipeline,
}

/// Bytes of the block-maximum scratch for n objects.
pub fn block_max_bytes(n: u32) -> u64 {
    4 * n.div_ceil(WG).max(1) as u64
}

impl Cascade {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let m = module(
            ctx,
            "cascade.wgsl",
            include_str!("../../shaders/cascade.wgsl"),
        )?;
        Ok(Self {
            block_maxima: ctx.pipeline(&m, "block_maxima", &[]),
            block_prefix: ctx.pipeline(&m, "block_prefix", &[]),
            survivors: ctx.pipeline(&m, "survivors", &[]),
        })
    }

    /// `sorted`/`keys`/`values`: the gathered spheres, keys and indices in sorted order on
    /// `axis`. Writes `mark[i]` for every object.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        axis: u32,
        sorted: &wgpu::Buffer,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        block_max: &wgpu::Buffer,
        mark: &wgpu::Buffer,
    ) -> Result<()> {
        let off = arena.push(Params {
            n,
            axis,
            ..Default::default()
        })?;
        let blocks = n.div_ceil(WG) as u64;
        let p = || arena.binding(off);
        let maxima = bind(
            ctx,
            &self.block_maxima,
            &[
                (0, p()),
                (3, sorted.as_entire_binding()),
                (4, keys.as_entire_binding()),
                (6, block_max.as_entire_binding()),
            ],
        );
        let prefix = bind(
            ctx,
            &self.block_prefix,
            &[(0, p()), (6, block_max.as_entire_binding())],
        );
        let survivors = bind(
            ctx,
            &self.survivors,
            &[
                (0, p()),
                (3, sorted.as_entire_binding()),
                (4, keys.as_entire_binding()),
                (5, values.as_entire_binding()),
                (6, block_max.as_entire_binding()),
                (7, mark.as_entire_binding()),
            ],
        );
        pass.set_pipeline(&self.block_maxima);
        pass.set_bind_group(0, &maxima, &[]);
        dispatch_groups(ctx, pass, blocks);
        pass.set_pipeline(&self.block_prefix);
        pass.set_bind_group(0, &prefix, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_pipeline(&self.survivors);
        pass.set_bind_group(0, &survivors, &[]);
        dispatch_groups(ctx, pass, blocks);
        Ok(())
    }
}
