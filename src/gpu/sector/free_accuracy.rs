//! The general pose of the sector accuracy experiment (docs/design.md §5.8) on the GPU: any
//! body in any pose, through the runner both poses share (`accuracy::AccuracyGpu`). A batch
//! uploads its constants ([`FreeRotationParams`]), quadrics and reference poses; a workgroup
//! classifies one grid row of one rotation, a point per thread. The CPU twin is
//! `cpu::sector_grid::pose_histograms`; they agree up to points within rounding of a boundary.

use super::accuracy::{AccuracyGpu, GpuPose};
use crate::error::{Error, Result};
use crate::geom::sector::classify::REFERENCE_STEPS;
use crate::geom::sector::free_classify::{ConstraintRow, FreeRotation, FreeRotationParams};
use crate::gpu::adapter_check::LAVAPIPE_LOOP_CAP;
use crate::gpu::context::GpuContext;

// The shader's `Rotation` is 34 vec4 and `Constraint` 3.
const _: () = assert!(std::mem::size_of::<FreeRotationParams>() == 34 * 16);
const _: () = assert!(std::mem::size_of::<ConstraintRow>() == 3 * 16);
const STEPS: usize = REFERENCE_STEPS as usize + 1;

/// Loop iterations of one point's classification at most, for f constraints: every root and
/// both ends of the turn against every constraint (4 roots per half-turn of a degree-2 one, 2
/// of a degree-1 one), and the reference's poses against every constraint.
fn worst_loop_iterations(f: usize) -> u64 {
    let f = f as u64;
    (8 * f + 2) * f + f + STEPS as u64 * f
}

/// The generalised experiment on the GPU.
pub type FreeExperimentGpu = AccuracyGpu<FreeRotation>;

/// Any convex body in any pose (docs/design.md §5.8): the constants, then the quadrics
/// (binding 3) and the reference's poses (binding 4).
impl GpuPose for FreeRotation {
    const NAME: &'static str = "the generalised sector experiment";
    const SHADER: &'static str = "sector/free_accuracy.wgsl";
    const ENTRY: &'static str = "classify_points";
    /// One grid point per thread, a workgroup per grid row.
    const WORKGROUP: u32 = 128;
    const GROUPS_PER_ROTATION: u32 = 10_000;
    const DEFAULT_BATCH: usize = 512;

    fn pack(batch: &[Self]) -> Result<Vec<Vec<u8>>> {
        let mut params: Vec<FreeRotationParams> = Vec::with_capacity(batch.len());
        let mut rows: Vec<ConstraintRow> = Vec::new();
        let mut steps: Vec<[f32; 2]> = Vec::with_capacity(batch.len() * STEPS);
        for r in batch {
            let mut p = r.params;
            p.counts[0] = rows.len() as u32;
            params.push(p);
            rows.extend_from_slice(&r.constraints);
            if r.steps.len() != STEPS {
                return Err(Error::gpu(
                    crate::error::GpuFailure::Internal,
                    "free sector: a rotation without its poses",
                ));
            }
            steps.extend_from_slice(&r.steps);
        }
        Ok(vec![
            bytemuck::cast_slice(&params).to_vec(),
            bytemuck::cast_slice(&rows).to_vec(),
            bytemuck::cast_slice(&steps).to_vec(),
        ])
    }

    /// llvmpipe's loop cap would stop a big hull's loops silently: refused there.
    fn check_adapter(ctx: &GpuContext, rotations: &[Self]) -> Result<()> {
        if ctx.info.device_type != wgpu::DeviceType::Cpu {
            return Ok(());
        }
        let Some((index, r)) = rotations
            .iter()
            .enumerate()
            .find(|(_, r)| worst_loop_iterations(r.constraints.len()) > LAVAPIPE_LOOP_CAP)
        else {
            return Ok(());
        };
        Err(Error::InvalidObject {
            index,
            problem: format!(
                "free sector on a software adapter: {} constraints need up to {} loop \
                 iterations a point, past llvmpipe's {LAVAPIPE_LOOP_CAP} (it would stop the \
                 loops silently); use the CPU backend or a GPU",
                r.constraints.len(),
                worst_loop_iterations(r.constraints.len())
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(
        super::super::accuracy::Params,
        "sector/free_accuracy.wgsl",
        "params"
    );

    #[test]
    fn experiment_bodies_fit_llvmpipes_loop_cap_and_big_hulls_are_refused_there() {
        // A hull of 32 points has at most 60 faces; a box 6; a capsule's clauses 3.
        assert!(worst_loop_iterations(60) <= LAVAPIPE_LOOP_CAP);
        assert!(worst_loop_iterations(100) > LAVAPIPE_LOOP_CAP);
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
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
        let got = gpu.histograms(&ctx, &r, None);
        if ctx.info.device_type == wgpu::DeviceType::Cpu {
            let e = got.unwrap_err();
            assert!(e.to_string().contains("loop"), "{e}");
        } else {
            // A hardware GPU has no such cap: the big hull runs.
            got.unwrap();
        }
    }
}
