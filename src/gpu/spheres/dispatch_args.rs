//! Indirect dispatch arguments over the resident pair list (docs/design.md §10): after a
//! resident frame, one thread on the device turns the device's own pair count into the
//! `(x, y, 1)` workgroups of a caller's pass with one thread per pair, and the clamped count,
//! so that a simulation's narrow phase runs over the pairs with no count read back.

use crate::error::Result;
use crate::gpu::context::{GpuContext, Uniform};
use crate::gpu::spheres::broad_phase::ResidentPairs;

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/spheres/dispatch_args.wgsl` (its import
    /// `spheres/dispatch_args_params.wgsl`).
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub(crate) struct Params {
        count_index: u32,
        capacity: u32,
        workgroup: u32,
        max_groups_x: u32,
    }
}

/// The arguments' buffer (`INDIRECT` and storage: `[x, y, 1, pairs]`) and its kernel.
pub struct PairDispatch {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    written: Option<Params>,
    args: wgpu::Buffer,
}

impl PairDispatch {
    /// Compiles the kernel on `ctx` and allocates the arguments' buffer.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let module = ctx.shader_file("spheres/dispatch_args.wgsl")?;
        Ok(Self {
            pipeline: ctx.pipeline(&module, "pair_dispatch_args", &[])?,
            params: ctx.uniform_buffer("pair dispatch params", Params::uniform_size())?,
            written: None,
            args: ctx.storage_buffer_with(
                "pair dispatch args",
                16,
                wgpu::BufferUsages::INDIRECT,
            )?,
        })
    }

    /// Records the kernel into `encoder` (after the frame that wrote `list`): workgroups of
    /// `workgroup` threads. The parameters are uploaded only when they change.
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        list: &ResidentPairs<'_>,
        workgroup: u32,
    ) -> Result<()> {
        let params = Params {
            count_index: list.count_index,
            capacity: list.capacity,
            workgroup: workgroup.max(1),
            max_groups_x: ctx.limits.max_compute_workgroups_per_dimension,
        };
        if self.written != Some(params) {
            ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
            self.written = Some(params);
        }
        let group = ctx.bind_buffers(
            "pair dispatch args",
            &self.pipeline,
            &[(0, &self.params), (1, list.counters), (2, &self.args)],
        );
        ctx.dispatch_pass(
            encoder,
            "pair dispatch args",
            None,
            &self.pipeline,
            &group,
            [1, 1, 1],
        );
        Ok(())
    }

    /// `[x, y, 1, pairs]`: pass it to `dispatch_workgroups_indirect(args, 0)`, and bind it as
    /// read-only storage for the count at index 3.
    pub fn args(&self) -> &wgpu::Buffer {
        &self.args
    }
}

/// The CPU twin of `pair_dispatch_args`: the arguments for `count` pairs appended to a list of
/// `capacity`.
#[cfg(test)]
pub fn expected_args(count: u32, capacity: u32, workgroup: u32, max_groups_x: u32) -> [u32; 4] {
    let count = count.min(capacity);
    let groups = count.div_ceil(workgroup.max(1));
    let x = groups.min(max_groups_x);
    let y = if x > 0 { groups.div_ceil(x) } else { 0 };
    [x, y, 1, count]
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "spheres/dispatch_args.wgsl", "params");

    #[test]
    fn the_device_writes_the_cpu_twins_arguments() {
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        let mut dispatch = PairDispatch::new(&ctx).unwrap();
        let counters = ctx.storage_buffer("test counters", 32).unwrap();
        let pairs = ctx.storage_buffer("test pairs", 8).unwrap();
        // Counts around the workgroup size and the capacity; past 2^16 groups (two rows).
        let cases = [
            (0u32, 100u32, 64u32),
            (1, 100, 64),
            (64, 100, 64),
            (65, 100, 64),
            (500, 100, 64),
            (u32::MAX, u32::MAX, 64),
            (10_000_000, 20_000_000, 1),
            (7, 7, 1),
        ];
        for (count, capacity, workgroup) in cases {
            let mut words = [0u32; 8];
            words[crate::gpu::slots::SPHERE_APPEND as usize] = count;
            ctx.write_buffer(&counters, 0, bytemuck::cast_slice(&words));
            let list = ResidentPairs {
                pairs: &pairs,
                capacity,
                counters: &counters,
                count_index: crate::gpu::slots::SPHERE_APPEND,
            };
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            dispatch.encode(&ctx, &mut enc, &list, workgroup).unwrap();
            ctx.submit(enc);
            let got: Vec<u32> = ctx.read(dispatch.args(), 4).unwrap();
            let max_x = ctx.limits.max_compute_workgroups_per_dimension;
            assert_eq!(
                got,
                expected_args(count, capacity, workgroup, max_x),
                "{count} pairs, capacity {capacity}, workgroup {workgroup}"
            );
        }
    }
}
