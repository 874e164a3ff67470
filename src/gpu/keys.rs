//! Keys stage: scene extents (min/max centre per axis, max radius), the per-method sort keys
//! (origin distance, lo or hi endpoint on an axis, grid bucket, sap's lo on the axis of largest
//! spread), the gather of spheres into sorted order, and the grid's bucket starts.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{ParamArena, Params, launch, module};

/// `mode` values of `make_keys` (`MODE_*` in `shaders/keys.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum KeyMode {
    OriginDistance = 0,
    Lo = 1,
    Hi = 2,
    GridBucket = 3,
    SapLo = 4,
}

pub struct Keys {
    extents: wgpu::ComputePipeline,
    make_keys: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
    bucket_starts: wgpu::ComputePipeline,
}

/// Initial contents of the extents buffer: min = all ones, max = 0 (ordered encodings).
pub const EXTENTS_INIT: [u32; 8] = [u32::MAX, u32::MAX, u32::MAX, 0, 0, 0, 0, 0];

impl Keys {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let m = module(ctx, "keys.wgsl", include_str!("../../shaders/keys.wgsl"))?;
        Ok(Self {
            extents: ctx.pipeline(&m, "extents", &[]),
            make_keys: ctx.pipeline(&m, "make_keys", &[]),
            gather: ctx.pipeline(&m, "gather", &[]),
            bucket_starts: ctx.pipeline(&m, "bucket_starts", &[]),
        })
    }

    /// Reduces the extents of `n` spheres into `ext` (which must hold [`EXTENTS_INIT`]).
    pub fn extents(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        spheres: &wgpu::Buffer,
        ext: &wgpu::Buffer,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.extents,
            Params {
                n,
                ..Default::default()
            },
            &[(2, ext), (3, spheres)],
            n as u64,
        )
    }

    /// Writes `keys[i]`, `values[i] = i` for i < n and (MAX, MAX) padding up to `pad`.
    /// `mark`: with `Some`, objects whose mark is 0 get the maximum key (cascade survivors).
    #[allow(clippy::too_many_arguments)]
    pub fn make_keys(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        p: KeyParams,
        spheres: &wgpu::Buffer,
        ext: &wgpu::Buffer,
        mark: &wgpu::Buffer,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.make_keys,
            Params {
                n: p.n,
                pad: p.pad,
                axis: p.axis,
                mode: p.mode as u32,
                flags: if p.use_mark {
                    crate::gpu::frame::FLAG_MARK
                } else {
                    0
                },
                buckets: p.buckets,
                ..Default::default()
            },
            &[(2, ext), (3, spheres), (4, keys), (5, values), (6, mark)],
            p.pad as u64,
        )
    }

    /// `sorted[p] = spheres[values[p]]` for p < n.
    #[allow(clippy::too_many_arguments)]
    pub fn gather(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        spheres: &wgpu::Buffer,
        values: &wgpu::Buffer,
        sorted: &wgpu::Buffer,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.gather,
            Params {
                n,
                ..Default::default()
            },
            &[(3, spheres), (5, values), (7, sorted)],
            n as u64,
        )
    }

    /// `starts[bucket] = 1 + first sorted position` (the buffer must be zeroed first).
    pub fn bucket_starts(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        arena: &mut ParamArena,
        n: u32,
        keys: &wgpu::Buffer,
        starts: &wgpu::Buffer,
    ) -> Result<()> {
        launch(
            ctx,
            pass,
            arena,
            &self.bucket_starts,
            Params {
                n,
                ..Default::default()
            },
            &[(4, keys), (8, starts)],
            n as u64,
        )
    }
}

/// What `make_keys` computes.
#[derive(Clone, Copy, Debug)]
pub struct KeyParams {
    pub n: u32,
    pub pad: u32,
    pub mode: KeyMode,
    pub axis: u32,
    pub use_mark: bool,
    pub buckets: u32,
}
