//! Keys stage: scene extents (min/max centre per axis, max radius), the per-method sort keys
//! (origin distance, lo or hi endpoint on an axis, grid bucket, sap's lo on the axis of largest
//! spread), the gather of spheres into sorted order, and the grid's bucket starts.

use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{FLAG_MARK, Params, Recorder, pipelines};

/// `mode` values of `make_keys` (`MODE_*` in `shaders/sort/keys.wgsl`).
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
    grid_frame: wgpu::ComputePipeline,
    make_keys: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
    bucket_starts: wgpu::ComputePipeline,
}

/// Initial contents of the extents buffer's first words: min = all ones, max = 0 (ordered
/// encodings); the rest of its [`EXTENTS_WORDS`] start at 0.
pub const EXTENTS_INIT: [u32; 8] = [u32::MAX, u32::MAX, u32::MAX, 0, 0, 0, 0, 0];
/// Words of the extents buffer (`ext` in `shaders/frame.wgsl`): the extents, the grid's giants
/// and the radius histogram (256 counts from word 64, 256 maxima from word 320).
pub const EXTENTS_WORDS: u64 = 576;

impl Keys {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let [extents, grid_frame, make_keys, gather, bucket_starts] = pipelines(
            ctx,
            "sort/keys.wgsl",
            [
                "extents",
                "grid_frame",
                "make_keys",
                "gather",
                "bucket_starts",
            ],
        )?;
        Ok(Self {
            extents,
            grid_frame,
            make_keys,
            gather,
            bucket_starts,
        })
    }

    /// Reduces the extents of `n` spheres into `ext` (which must hold [`EXTENTS_INIT`]).
    pub fn extents(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        ext: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(2, ext), (3, spheres)];
        rec.launch(&self.extents, Params::n(n), &buffers, n as u64)
    }

    /// The grid's giants and cell radius from the extents' radius histogram (one workgroup;
    /// docs/design.md §2.7).
    pub fn grid_frame(&self, rec: &mut Recorder<'_, '_>, ext: &wgpu::Buffer) -> Result<()> {
        rec.launch(&self.grid_frame, Params::n(1), &[(2, ext)], 256)
    }

    /// Writes `keys[i]`, `values[i] = i` for i < n and (MAX, MAX) padding up to `pad`.
    /// `mark`: with `use_mark`, objects whose mark is 0 get the maximum key (cascade survivors).
    pub fn make_keys(
        &self,
        rec: &mut Recorder<'_, '_>,
        p: KeyParams,
        inputs: KeyInputs<'_>,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
    ) -> Result<()> {
        let params = Params {
            n: p.n,
            pad: p.pad,
            axis: p.axis,
            mode: p.mode as u32,
            flags: if p.use_mark { FLAG_MARK } else { 0 },
            buckets: p.buckets,
            ..Default::default()
        };
        let buffers = [
            (2, inputs.ext),
            (3, inputs.spheres),
            (4, keys),
            (5, values),
            (6, inputs.mark),
            (9, inputs.cells),
        ];
        rec.launch(&self.make_keys, params, &buffers, p.pad as u64)
    }

    /// `sorted[p] = spheres[values[p]]` for p < n.
    pub fn gather(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        values: &wgpu::Buffer,
        sorted: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(3, spheres), (5, values), (7, sorted)];
        rec.launch(&self.gather, Params::n(n), &buffers, n as u64)
    }

    /// `starts[bucket] = 1 + first sorted position` (the buffer must be zeroed first).
    pub fn bucket_starts(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        keys: &wgpu::Buffer,
        starts: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(4, keys), (8, starts)];
        rec.launch(&self.bucket_starts, Params::n(n), &buffers, n as u64)
    }
}

/// What `make_keys` reads (the spheres, the scene extents and the cascade marks) and, for grid
/// keys, where it stores each object's cell (16 bytes per object; any 16 bytes otherwise).
#[derive(Clone, Copy)]
pub struct KeyInputs<'a> {
    pub spheres: &'a wgpu::Buffer,
    pub ext: &'a wgpu::Buffer,
    pub mark: &'a wgpu::Buffer,
    pub cells: &'a wgpu::Buffer,
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
