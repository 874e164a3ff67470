//! The sector accuracy experiment (thesis 3.1, docs/design.md §5.5) on the GPU: the rotation list is
//! uploaded in batches, one dispatch per batch classifies (rotation, 64 grid rows) per
//! workgroup, and only the per-rotation 64-bin histograms come back. Same per-rotation
//! constants ([`RotationParams`]) and same row algorithm as `cpu::sector_accuracy`, so the
//! histograms agree up to points within rounding of a boundary.

use crate::error::{Error, Result};
use crate::geom::sector::RotatingBox;
use crate::geom::sector::classify::{
    Histogram, RotationParams, fill_empty_bin, validate_rotations,
};
use crate::gpu::context::GpuContext;
use crate::gpu::context::Uniform;
use crate::gpu::readback::{self, Readback};
use crate::gpu::timer::PassTimer;
use encase::ShaderType;

/// Threads per workgroup, one grid row each (`WG` in the shader).
const WORKGROUP: u32 = 64;
/// Grid rows per rotation (100 x 100).
const ROWS: u32 = 10_000;
const GROUPS_PER_ROTATION: u32 = ROWS.div_ceil(WORKGROUP);
// The shader's `Rotation` is 14 vec4<f32>.
const _: () = assert!(std::mem::size_of::<RotationParams>() == 14 * 16);
/// Rotations per submission: keeps buffers small (about 0.2 MiB of parameters and 0.25 MiB of
/// histograms) and gives the progress callback something to report.
pub const DEFAULT_BATCH: usize = 1024;

#[derive(Clone, Copy, ShaderType)]
struct Params {
    rotation_count: u32,
    groups_per_rotation: u32,
}

/// Pipeline and scratch buffers, grown on demand and reused across calls.
pub struct SectorExperimentGpu {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    rotations: Option<wgpu::Buffer>,
    histograms: Option<wgpu::Buffer>,
    capacity: usize,
    timer: PassTimer,
    readback: Readback,
    /// Rotations per submission.
    pub batch: usize,
    /// GPU time of the classify passes of the last [`Self::histograms`] call, from timestamp
    /// queries; `None` when the adapter has none.
    pub last_gpu_seconds: Option<f64>,
}

impl SectorExperimentGpu {
    /// Compiles the classifier on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the sector experiment", WORKGROUP)?;
        let module = ctx.shader_file("sector/accuracy.wgsl")?;
        let pipeline = ctx.pipeline(&module, "classify_rows", &[])?;
        let params = ctx.uniform_buffer("sector params", Params::uniform_size());
        ctx.check()?;
        Ok(Self {
            pipeline,
            params,
            rotations: None,
            histograms: None,
            capacity: 0,
            timer: PassTimer::new(ctx, 1),
            readback: Readback::new("sector histograms readback"),
            batch: DEFAULT_BATCH,
            last_gpu_seconds: None,
        })
    }

    fn ensure_capacity(&mut self, ctx: &GpuContext, n: usize) -> Result<()> {
        if n <= self.capacity && self.rotations.is_some() {
            return Ok(());
        }
        let rot_bytes = (n * std::mem::size_of::<RotationParams>()) as u64;
        let hist_bytes = (n * 64 * 4) as u64;
        self.rotations = Some(ctx.storage_buffer("sector rotations", rot_bytes)?);
        self.histograms = Some(ctx.storage_buffer("sector histograms", hist_bytes)?);
        self.capacity = n;
        Ok(())
    }

    /// The 64-bin histogram of every rotation. `progress` is called with the number of rotations
    /// finished after each batch.
    pub fn histograms(
        &mut self,
        ctx: &GpuContext,
        rotations: &[RotatingBox],
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Vec<Histogram>> {
        validate_rotations(rotations)?;
        let batch = self.batch.max(1);
        // Keep the dispatch within a 2D grid of the adapter's per-dimension limit.
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as u64;
        let batch = batch.min((max_dim * max_dim / GROUPS_PER_ROTATION as u64) as usize);
        let mut out = Vec::with_capacity(rotations.len());
        let mut gpu_seconds = ctx.has_timestamps().then_some(0.0);
        for chunk in rotations.chunks(batch) {
            self.ensure_capacity(ctx, chunk.len())?;
            let (Some(rot_buf), Some(hist_buf)) = (&self.rotations, &self.histograms) else {
                return Err(Error::Gpu("sector buffers missing".into()));
            };
            let params: Vec<RotationParams> = chunk.iter().map(RotationParams::new).collect();
            ctx.write_buffer(rot_buf, 0, bytemuck::cast_slice(&params));
            let p = Params {
                rotation_count: chunk.len() as u32,
                groups_per_rotation: GROUPS_PER_ROTATION,
            };
            ctx.write_buffer(&self.params, 0, &p.to_bytes()?);
            let buffers = [(0, rot_buf), (1, hist_buf), (2, &self.params)];
            let bind = ctx.bind_buffers("sector", &self.pipeline, &buffers);
            let hist_len = chunk.len() * 64;
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.clear_buffer(hist_buf, 0, Some(4 * hist_len as u64));
            self.timer.reset();
            let (x, y) = ctx.dispatch_2d(chunk.len() as u32 * GROUPS_PER_ROTATION);
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
            let hist_at = rb.add(hist_buf, 0, 4 * hist_len as u64);
            let times_at = rb.add_timer(&self.timer);
            rb.record(ctx, &mut enc)?;
            ctx.queue.submit([enc.finish()]);
            let timer = &self.timer;
            let (counts, times) = self.readback.map(ctx, |bytes| {
                (
                    readback::words(&bytes[hist_at]),
                    timer.times_from(ctx, &bytes[times_at]),
                )
            })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "sector/accuracy.wgsl", "params");
}
