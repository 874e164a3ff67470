//! The generalised sector accuracy experiment (docs/design.md §5.8) on the GPU: per batch of
//! rotations, their constants ([`FreeRotationParams`]), their quadrics and their reference
//! poses are uploaded, one dispatch classifies (rotation, grid row) per workgroup, a point per thread, and only
//! the 64-bin histograms come back. The CPU twin is `cpu::sector_free_grid`; they agree up to
//! points within rounding of a boundary.

use crate::error::{Error, Result};
use crate::geom::sector::classify::{Histogram, REFERENCE_STEPS, fill_empty_bin};
use crate::geom::sector::free_classify::{ConstraintRow, FreeRotation, FreeRotationParams};
use crate::gpu::context::{GpuContext, Uniform};
use crate::gpu::readback::{self, Readback};
use encase::ShaderType;

/// Threads per workgroup, one grid point each (`WG` in the shader); a workgroup per grid row.
const WORKGROUP: u32 = 128;
const GROUPS_PER_ROTATION: u32 = 10_000;
// The shader's `Rotation` is 34 vec4 and `Constraint` 3.
const _: () = assert!(std::mem::size_of::<FreeRotationParams>() == 34 * 16);
const _: () = assert!(std::mem::size_of::<ConstraintRow>() == 3 * 16);
/// Rotations per submission.
pub const DEFAULT_BATCH: usize = 512;
const STEPS: usize = REFERENCE_STEPS as usize + 1;

/// llvmpipe stops every loop of an invocation after this many iterations in all.
const LAVAPIPE_LOOP_CAP: u64 = 65_535;

/// Loop iterations of one point's classification at most, for f constraints: every root and
/// both ends of the turn against every constraint (4 roots per half-turn of a degree-2 one, 2
/// of a degree-1 one), and the reference's poses against every constraint.
fn worst_loop_iterations(f: usize) -> u64 {
    let f = f as u64;
    (8 * f + 2) * f + f + STEPS as u64 * f
}

#[derive(Clone, Copy, ShaderType)]
struct Params {
    rotation_count: u32,
    groups_per_rotation: u32,
}

/// Pipeline and scratch buffers, grown on demand and reused across calls.
pub struct FreeExperimentGpu {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    buffers: Option<[wgpu::Buffer; 4]>,
    capacity: (usize, usize),
    readback: Readback,
    /// Rotations per submission.
    pub batch: usize,
}

impl FreeExperimentGpu {
    /// Compiles the classifier on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the generalised sector experiment", WORKGROUP)?;
        let module = ctx.shader_file("sector/free_accuracy.wgsl")?;
        let pipeline = ctx.pipeline(&module, "classify_points", &[])?;
        let params = ctx.uniform_buffer("free sector params", Params::uniform_size());
        ctx.check()?;
        Ok(Self {
            pipeline,
            params,
            buffers: None,
            capacity: (0, 0),
            readback: Readback::new("free sector histograms readback"),
            batch: DEFAULT_BATCH,
        })
    }

    /// Buffers for `n` rotations and `m` constraints: rotations, histograms, constraints, steps.
    fn ensure_capacity(&mut self, ctx: &GpuContext, n: usize, m: usize) -> Result<()> {
        if n <= self.capacity.0 && m <= self.capacity.1 && self.buffers.is_some() {
            return Ok(());
        }
        let (n, m) = (n.max(self.capacity.0), m.max(self.capacity.1).max(1));
        let sizes = [
            (
                "free sector rotations",
                n * std::mem::size_of::<FreeRotationParams>(),
            ),
            ("free sector histograms", n * 64 * 4),
            (
                "free sector constraints",
                m * std::mem::size_of::<ConstraintRow>(),
            ),
            ("free sector steps", n * STEPS * 8),
        ];
        let mut made = Vec::with_capacity(4);
        for (label, bytes) in sizes {
            made.push(ctx.storage_buffer(label, bytes as u64)?);
        }
        self.buffers = made.try_into().ok();
        self.capacity = (n, m);
        Ok(())
    }

    /// The 64-bin histogram of every rotation; `progress` is called with the rotations finished
    /// after each batch.
    pub fn histograms(
        &mut self,
        ctx: &GpuContext,
        rotations: &[FreeRotation],
        progress: Option<&(dyn Fn(u64) + Sync)>,
    ) -> Result<Vec<Histogram>> {
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as u64;
        let batch = self
            .batch
            .max(1)
            .min((max_dim * max_dim / GROUPS_PER_ROTATION as u64) as usize);
        if ctx.info.device_type == wgpu::DeviceType::Cpu
            && let Some((i, r)) = rotations
                .iter()
                .enumerate()
                .find(|(_, r)| worst_loop_iterations(r.constraints.len()) > LAVAPIPE_LOOP_CAP)
        {
            return Err(Error::InvalidObject {
                index: i,
                problem: format!(
                    "free sector on a software adapter: {} constraints need up to {} loop \
                     iterations a point, past llvmpipe's {LAVAPIPE_LOOP_CAP} (it would stop the \
                     loops silently); use the CPU backend or a GPU",
                    r.constraints.len(),
                    worst_loop_iterations(r.constraints.len())
                ),
            });
        }
        let mut out = Vec::with_capacity(rotations.len());
        for chunk in rotations.chunks(batch) {
            let mut params: Vec<FreeRotationParams> = Vec::with_capacity(chunk.len());
            let mut rows: Vec<ConstraintRow> = Vec::new();
            let mut steps: Vec<[f32; 2]> = Vec::with_capacity(chunk.len() * STEPS);
            for r in chunk {
                let mut p = r.params;
                p.counts[0] = rows.len() as u32;
                params.push(p);
                rows.extend_from_slice(&r.constraints);
                if r.steps.len() != STEPS {
                    return Err(Error::Gpu(
                        "free sector: a rotation without its poses".into(),
                    ));
                }
                steps.extend_from_slice(&r.steps);
            }
            self.ensure_capacity(ctx, chunk.len(), rows.len())?;
            let Some([rot_buf, hist_buf, con_buf, step_buf]) = &self.buffers else {
                return Err(Error::Gpu("free sector buffers missing".into()));
            };
            ctx.write_buffer(rot_buf, 0, bytemuck::cast_slice(&params));
            ctx.write_buffer(con_buf, 0, bytemuck::cast_slice(&rows));
            ctx.write_buffer(step_buf, 0, bytemuck::cast_slice(&steps));
            let p = Params {
                rotation_count: chunk.len() as u32,
                groups_per_rotation: GROUPS_PER_ROTATION,
            };
            ctx.write_buffer(&self.params, 0, &p.to_bytes()?);
            let bound = [
                (0, rot_buf),
                (1, hist_buf),
                (2, &self.params),
                (3, con_buf),
                (4, step_buf),
            ];
            let bind = ctx.bind_buffers("free sector", &self.pipeline, &bound);
            let hist_len = chunk.len() * 64;
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.clear_buffer(hist_buf, 0, Some(4 * hist_len as u64));
            let (x, y) = ctx.dispatch_2d(chunk.len() as u32 * GROUPS_PER_ROTATION);
            let classify = "free sector classify";
            ctx.dispatch_pass(&mut enc, classify, None, &self.pipeline, &bind, [x, y, 1]);
            let rb = &mut self.readback;
            rb.clear();
            let hist_at = rb.add(hist_buf, 0, 4 * hist_len as u64);
            rb.record(ctx, &mut enc)?;
            ctx.queue.submit([enc.finish()]);
            let counts = self
                .readback
                .map(ctx, |bytes| readback::words(&bytes[hist_at]))?;
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
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "sector/free_accuracy.wgsl", "params");

    #[test]
    fn experiment_bodies_fit_llvmpipes_loop_cap_and_big_hulls_are_refused_there() {
        // A hull of 32 points has at most 60 faces; a box 6; a capsule's clauses 3.
        assert!(worst_loop_iterations(60) <= LAVAPIPE_LOOP_CAP);
        assert!(worst_loop_iterations(100) > LAVAPIPE_LOOP_CAP);
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        if ctx.info.device_type != wgpu::DeviceType::Cpu {
            return;
        }
        // A hull of 120 points on a sphere: far more faces than the cap allows.
        let pts: Vec<glam::Vec3> = (0..120)
            .map(|k| {
                let z = -1.0 + 2.0 * (k as f32 + 0.5) / 120.0;
                let t = k as f32 * 2.399_963;
                let s = (1.0 - z * z).sqrt();
                glam::Vec3::new(20.0 + 5.0 * s * t.cos(), 5.0 * s * t.sin(), 5.0 * z)
            })
            .collect();
        let body = crate::geom::sector::body::RotatingBody {
            body: crate::geom::sector::body::ConvexBody::Hull(
                crate::geom::sector::body::ConvexHull::new(&pts).unwrap(),
            ),
            origin: glam::Vec3::ZERO,
            axis: glam::Vec3::Z,
            angle: 1.0,
        };
        let r = crate::geom::sector::free_classify::free_rotations(&[body]).unwrap();
        let mut gpu = FreeExperimentGpu::new(&ctx).unwrap();
        let e = gpu.histograms(&ctx, &r, None).unwrap_err();
        assert!(e.to_string().contains("loop"), "{e}");
    }
}
