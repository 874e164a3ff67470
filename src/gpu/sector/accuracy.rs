//! The sector accuracy experiments on the GPU (docs/design.md §5.5, §5.8), one runner for both
//! poses ([`AccuracyGpu`]): the rotations' constants are uploaded in batches, one dispatch per
//! batch classifies the grid, and only the per-rotation 64-bin histograms come back. A pose
//! ([`GpuPose`]) names its shader and packs its batch: the thesis's box ([`RotationParams`],
//! here) and any body in any pose (`FreeRotation`, in `free_accuracy`). Same constants and same
//! row algorithm as `cpu::sector_grid`, so the histograms agree up to points within rounding of
//! a boundary.

use crate::error::{Error, Result};
use crate::geom::sector::RotatingBox;
use crate::geom::sector::classify::{
    AccuracyPose, Histogram, RotationParams, fill_empty_bin, rotation_params,
};
use crate::gpu::context::GpuContext;
use crate::gpu::context::Uniform;
use crate::gpu::readback::{self, Readback};
use crate::gpu::timer::PassTimer;
use std::marker::PhantomData;

/// What the runner needs of one pose: its shader, and the storage a batch of its rotations
/// uploads. Every pose's shader binds the rotations' constants at 0, the histograms (64 `u32`
/// per rotation) at 1, the uniform parameters (rotations, workgroups per rotation) at 2, and
/// any further storage from 3 on.
pub trait GpuPose: AccuracyPose + Sized {
    /// Names the experiment in labels and errors.
    const NAME: &'static str;
    /// The shader file.
    const SHADER: &'static str;
    /// The shader's entry point.
    const ENTRY: &'static str;
    /// Threads per workgroup (`WG` in the shader).
    const WORKGROUP: u32;
    /// Workgroups per rotation.
    const GROUPS_PER_ROTATION: u32;
    /// Rotations per submission by default.
    const DEFAULT_BATCH: usize;

    /// A batch's storage in binding order: the constants (binding 0), then bindings 3, 4, ...
    fn pack(batch: &[Self]) -> Result<Vec<Vec<u8>>>;

    /// Refuses rotations this adapter would classify unfaithfully (none by default).
    fn check_adapter(_ctx: &GpuContext, _rotations: &[Self]) -> Result<()> {
        Ok(())
    }
}

/// The thesis's pose: a box about an axis, its sector among the shapes (thesis 3.1).
impl GpuPose for RotationParams {
    const NAME: &'static str = "the sector experiment";
    const SHADER: &'static str = "sector/accuracy.wgsl";
    const ENTRY: &'static str = "classify_rows";
    /// One grid row per thread.
    const WORKGROUP: u32 = 64;
    /// 10,000 grid rows, 64 a workgroup.
    const GROUPS_PER_ROTATION: u32 = 10_000u32.div_ceil(64);
    /// About 0.2 MiB of constants and 0.25 MiB of histograms a submission.
    const DEFAULT_BATCH: usize = 1024;

    fn pack(batch: &[Self]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![bytemuck::cast_slice(batch).to_vec()])
    }
}

// The thesis shader's `Rotation` is 14 vec4<f32>.
const _: () = assert!(std::mem::size_of::<RotationParams>() == 14 * 16);

crate::gpu::shader::uniform_struct! {
    /// The uniform of both shaders (`sector/grid_rows.wgsl` imports its declaration,
    /// `sector/grid_rows_params.wgsl`).
    #[derive(Clone, Copy)]
    pub(crate) struct Params {
        rotation_count: u32,
        groups_per_rotation: u32,
    }
}

/// A buffer of at least `bytes` (never empty), the one in `slot` when it is large enough.
fn grown(
    ctx: &GpuContext,
    slot: &mut Option<(wgpu::Buffer, u64)>,
    label: &str,
    bytes: u64,
) -> Result<wgpu::Buffer> {
    let bytes = bytes.max(16);
    match slot {
        Some((b, capacity)) if *capacity >= bytes => Ok(b.clone()),
        _ => {
            let b = ctx.storage_buffer(label, bytes)?;
            *slot = Some((b.clone(), bytes));
            Ok(b)
        }
    }
}

/// One pose's pipeline and scratch buffers, grown on demand and reused across calls.
pub struct AccuracyGpu<P> {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    /// The pose's storage (binding 0, then 3 on) and the histograms, each with its size.
    storage: Vec<Option<(wgpu::Buffer, u64)>>,
    histograms: Option<(wgpu::Buffer, u64)>,
    timer: PassTimer,
    readback: Readback,
    /// Rotations per submission.
    pub batch: usize,
    /// GPU time of the classify passes of the last [`Self::histograms`] call, from timestamp
    /// queries; `None` when the adapter has none.
    pub last_gpu_seconds: Option<f64>,
    pose: PhantomData<fn(&P)>,
}

/// The thesis's experiment (thesis 3.1) on the GPU.
pub type SectorExperimentGpu = AccuracyGpu<RotationParams>;

impl<P: GpuPose> AccuracyGpu<P> {
    /// Compiles the pose's classifier on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup(P::NAME, P::WORKGROUP)?;
        let module = ctx.shader_file(P::SHADER)?;
        let pipeline = ctx.pipeline(&module, P::ENTRY, &[])?;
        let params = ctx.uniform_buffer(P::NAME, Params::uniform_size())?;
        ctx.check()?;
        Ok(Self {
            pipeline,
            params,
            storage: Vec::new(),
            histograms: None,
            timer: PassTimer::new(ctx, 1),
            readback: Readback::new("sector histograms readback"),
            batch: P::DEFAULT_BATCH,
            last_gpu_seconds: None,
            pose: PhantomData,
        })
    }

    /// The 64-bin histogram of every rotation. `progress` is called with the number of rotations
    /// finished after each batch.
    pub fn histograms(
        &mut self,
        ctx: &GpuContext,
        rotations: &[P],
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Vec<Histogram>> {
        P::check_adapter(ctx, rotations)?;
        // Keep the dispatch within a 2D grid of the adapter's per-dimension limit.
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as u64;
        let most = (max_dim * max_dim / P::GROUPS_PER_ROTATION as u64) as usize;
        let batch = self.batch.clamp(1, most.max(1));
        let mut out = Vec::with_capacity(rotations.len());
        let mut gpu_seconds = ctx.has_timestamps().then_some(0.0);
        for chunk in rotations.chunks(batch) {
            let hist_len = chunk.len() * 64;
            let hist_buf = grown(
                ctx,
                &mut self.histograms,
                "sector histograms",
                4 * hist_len as u64,
            )?;
            let blobs = P::pack(chunk)?;
            self.storage
                .resize_with(self.storage.len().max(blobs.len()), || None);
            let mut bound = Vec::with_capacity(blobs.len());
            for (i, blob) in blobs.iter().enumerate() {
                let label = format!("sector storage {i}");
                let buf = grown(ctx, &mut self.storage[i], &label, blob.len() as u64)?;
                ctx.write_buffer(&buf, 0, blob);
                bound.push((if i == 0 { 0 } else { i as u32 + 2 }, buf));
            }
            let p = Params {
                rotation_count: chunk.len() as u32,
                groups_per_rotation: P::GROUPS_PER_ROTATION,
            };
            ctx.write_buffer(&self.params, 0, &p.to_bytes()?);
            let mut buffers: Vec<(u32, &wgpu::Buffer)> =
                bound.iter().map(|(at, b)| (*at, b)).collect();
            buffers.extend([(1, &hist_buf), (2, &self.params)]);
            buffers.sort_by_key(|(at, _)| *at);
            let bind = ctx.bind_buffers(P::NAME, &self.pipeline, &buffers);
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.clear_buffer(&hist_buf, 0, Some(4 * hist_len as u64));
            self.timer.reset();
            let (x, y) = ctx.dispatch_2d(chunk.len() as u32 * P::GROUPS_PER_ROTATION);
            let timed = self.timer.pass("classify");
            let pipeline = &self.pipeline;
            ctx.dispatch_pass(
                &mut enc,
                "sector classify",
                timed,
                pipeline,
                &bind,
                [x, y, 1],
            );
            self.timer.resolve(&mut enc);
            // The histograms and the pass time come back in one readback: one wait per batch.
            let rb = &mut self.readback;
            rb.clear();
            let hist_at = rb.add(&hist_buf, 0, 4 * hist_len as u64);
            let times_at = rb.add_timer(&self.timer);
            rb.record(ctx, &mut enc)?;
            ctx.submit(enc);
            let timer = &self.timer;
            let (counts, times) = self.readback.map(ctx, |bytes| {
                (
                    readback::words(&bytes[hist_at]),
                    timer.times_from(ctx, &bytes[times_at]),
                )
            })?;
            if counts.len() != hist_len {
                return Err(Error::gpu(
                    crate::error::GpuFailure::ReadBack,
                    "sector histograms: a short read-back",
                ));
            }
            if let Some(total) = gpu_seconds.as_mut() {
                *total += times.iter().map(|(_, s)| s).sum::<f64>();
            }
            for c in counts.chunks_exact(64) {
                let mut h: Histogram = [0; 64];
                h.copy_from_slice(c);
                h[0] = 0;
                fill_empty_bin(&mut h);
                out.push(h);
            }
            if let Some(f) = progress {
                f(chunk.len() as u64);
            }
        }
        self.last_gpu_seconds = gpu_seconds;
        Ok(out)
    }
}

impl AccuracyGpu<RotationParams> {
    /// The thesis's experiment: its rotations checked, then [`Self::histograms`].
    pub fn box_histograms(
        &mut self,
        ctx: &GpuContext,
        rotations: &[RotatingBox],
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Vec<Histogram>> {
        self.histograms(ctx, &rotation_params(rotations)?, progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "sector/accuracy.wgsl", "params");
}
