//! Cascade stage of x/xy/xyz: after a sort on one axis (dropped objects carry the maximum key and
//! sort last), marks the survivors that overlap at least one other survivor on that axis. The
//! marks feed the next axis's keys, so n stays static and nothing is read back between axes.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{Params, Recorder, WG, pipelines};
use crate::gpu::spheres::pairs::SortedOrder;

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
        let [block_maxima, block_prefix, survivors] = pipelines(
            ctx,
            "spheres/cascade.wgsl",
            ["block_maxima", "block_prefix", "survivors"],
        )?;
        Ok(Self {
            block_maxima,
            block_prefix,
            survivors,
        })
    }

    /// `order`: the gathered spheres, keys and indices in sorted order on `axis`. Writes
    /// `mark[i]` for every object.
    pub fn encode(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        axis: u32,
        order: &SortedOrder<'_>,
        block_max: &wgpu::Buffer,
        mark: &wgpu::Buffer,
    ) -> Result<()> {
        let params = Params {
            n,
            axis,
            ..Default::default()
        };
        let threads = n as u64;
        let maxima = [(3, order.sorted), (4, order.keys), (6, block_max)];
        rec.launch(&self.block_maxima, params, &maxima, threads)?;
        // One workgroup scans the block maxima.
        rec.launch(&self.block_prefix, params, &[(6, block_max)], 1)?;
        let survivors = [
            (3, order.sorted),
            (4, order.keys),
            (5, order.values),
            (6, block_max),
            (7, mark),
        ];
        rec.launch(&self.survivors, params, &survivors, threads)
    }
}
