//! Bitonic sort of (u32 key, u32 value) pairs by (key, value), in place, on arrays padded to a
//! power of two. Steps whose compare distance fits a 512-element block run in workgroup memory,
//! so a sort of 2^m elements takes about m + m^2/2 - 36 dispatches instead of m(m+1)/2.
//!
//! The broad phase sorts (key, object index) with the indices starting in order, so ordering by
//! (key, value) is exactly the stable key order the method semantics ask for ("ties broken by
//! index").

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{ParamArena, Params, bind, dispatch, dispatch_groups, module};

/// Elements one workgroup sorts in workgroup memory (`BLOCK` in the shader).
const BLOCK: u32 = 512;

pub struct BitonicSort {
    step: wgpu::ComputePipeline,
    local: wgpu::ComputePipeline,
}

/// The padded length the sort needs for `n` elements.
pub fn padded_len(n: u32) -> u32 {
    n.max(1).next_power_of_two()
}

impl BitonicSort {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let m = module(
            ctx,
            "bitonic_sort.wgsl",
            include_str!("../../shaders/bitonic_sort.wgsl"),
        )?;
        Ok(Self {
            step: ctx.pipeline(&m, "bitonic_step", &[]),
            local: ctx.pipeline(&m, "bitonic_local", &[]),
        })
    }

    /// Sorts `keys[0..pad]`, `values[0..pad]` (pad a power of two; padding holds (MAX, MAX)).
    pub fn encode(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        pad: u32,
    ) -> Result<()> {
        debug_assert!(pad.is_power_of_two());
        if pad < 2 {
            return Ok(());
        }
        let blocks = pad.div_ceil(BLOCK) as u64;
        let local = |pass: &mut wgpu::ComputePass<'_>,
                         arena: &mut ParamArena,
                         mode: u32,
                         j: u32,
                         k: u32|
         -> Result<()> {
            let off = arena.push(Params {
                pad,
                mode,
                j,
                k,
                ..Default::default()
            })?;
            let bg = bind(
                ctx,
                &self.local,
                &[
                    (0, arena.binding(off)),
                    (3, keys.as_entire_binding()),
                    (4, values.as_entire_binding()),
                ],
            );
            pass.set_pipeline(&self.local);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_groups(ctx, pass, blocks);
            Ok(())
        };
        local(pass, arena, 0, 0, 0)?;
        let mut k = BLOCK as u64 * 2;
        while k <= pad as u64 {
            let k32 = k as u32;
            let mut j = k32 / 2;
            while j >= BLOCK {
                let off = arena.push(Params {
                    pad,
                    j,
                    k: k32,
                    ..Default::default()
                })?;
                let bg = bind(
                    ctx,
                    &self.step,
                    &[
                        (0, arena.binding(off)),
                        (3, keys.as_entire_binding()),
                        (4, values.as_entire_binding()),
                    ],
                );
                pass.set_pipeline(&self.step);
                pass.set_bind_group(0, &bg, &[]);
                dispatch(ctx, pass, pad as u64 / 2);
                j /= 2;
            }
            local(pass, arena, 1, BLOCK / 2, k32)?;
            k *= 2;
        }
        Ok(())
    }
}
