//! min_axis axis choice: per object and axis, the number of other objects overlapping it there
//! (two binary searches in the sorted lo and hi keys), the smallest one and its (lowest) axis,
//! plus the paper's literal-rule diagnostic (sum over objects of the smallest forward-candidate
//! count, into `counters[6..8]`).

use crate::error::Result;
use crate::gpu::frame::{FLAG_WORLDS, Params, Recorder};

crate::gpu::context::entry_pipelines! {
    pub struct MinAxis = "spheres/min_axis.wgsl" [rank_scatter, choose, gather_axis]
}

/// One axis's sorted data (many worlds: `lo_keys` the world ranks, `hi_keys` the indices in
/// the order (world, hi, index)).
pub struct AxisOrder<'a> {
    pub lo_keys: &'a wgpu::Buffer,
    pub lo_idx: &'a wgpu::Buffer,
    pub hi_keys: &'a wgpu::Buffer,
    pub rank: &'a wgpu::Buffer,
}

impl MinAxis {
    /// Ranks on `axis`, then folds that axis into `choice` / `forward_best`. Call for axis
    /// 0, 1, 2 in that order. Many worlds (`worlds`): `order.lo_keys` holds the world ranks in
    /// the order (world, lo, index) and `order.hi_keys` the indices in the order (world, hi,
    /// index); each object counts within its world (docs/design.md §2.13).
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        axis: u32,
        spheres: &wgpu::Buffer,
        order: &AxisOrder<'_>,
        choice: &ChoiceBuffers<'_>,
        worlds: bool,
    ) -> Result<()> {
        let params = Params {
            n,
            axis,
            flags: if worlds { FLAG_WORLDS } else { 0 },
            ..Default::default()
        };
        let rank = [(5, order.lo_idx), (7, order.rank)];
        rec.launch(&self.rank_scatter, params, &rank, n as u64)?;
        let choose = [
            // `choose` adds the literal-rule total on the last axis.
            (1, choice.counters),
            (3, spheres),
            (4, order.lo_keys),
            // Many worlds: a run's lo values are read through the lo order's indices.
            (5, order.lo_idx),
            (6, order.hi_keys),
            (7, order.rank),
            (8, choice.choice),
            (9, choice.forward_best),
        ];
        rec.launch(&self.choose, params, &choose, n as u64)
    }

    /// Gathers spheres and choices into the lo order of one axis (after all three
    /// [`Self::encode`] calls).
    pub fn gather(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        lo_idx: &wgpu::Buffer,
        choice: &wgpu::Buffer,
        sorted: &AxisSorted<'_>,
    ) -> Result<()> {
        let buffers = [
            (3, spheres),
            (5, lo_idx),
            (8, choice),
            (10, sorted.spheres),
            (11, sorted.choice),
        ];
        rec.launch(&self.gather_axis, Params::n(n), &buffers, n as u64)
    }
}

/// Per object: the chosen (m, axis) and the literal rule's smallest forward count so far; the
/// frame's counters, which receive the literal-rule total.
pub struct ChoiceBuffers<'a> {
    pub choice: &'a wgpu::Buffer,
    pub forward_best: &'a wgpu::Buffer,
    pub counters: &'a wgpu::Buffer,
}

/// Outputs of [`MinAxis::gather`]: spheres and choices in one axis's lo order.
pub struct AxisSorted<'a> {
    pub spheres: &'a wgpu::Buffer,
    pub choice: &'a wgpu::Buffer,
}
