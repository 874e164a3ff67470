//! A scene that lives on the device (docs/design.md §10): its spheres and velocities uploaded
//! once, moved each frame by a compute pass (`shaders/spheres/motion.wgsl`) with the rule of
//! the CPU's `step_in_cube` (`geom::motion`), bit for bit, and read by the broad phase
//! straight from the device ([`GpuBroadPhase::encode_from_buffer`]): the frame an embedded
//! simulation pays, with nothing uploaded. `bench --resident` times it.
//!
//! [`GpuBroadPhase::encode_from_buffer`]: crate::gpu::spheres::broad_phase::GpuBroadPhase::encode_from_buffer

use crate::error::Result;
use crate::geom::sphere::Sphere;
use crate::gpu::context::{GpuContext, Uniform, count_u32};
use crate::gpu::readback::Readback;
use glam::Vec3;

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/spheres/motion.wgsl` (its import `spheres/motion_params.wgsl`).
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub(crate) struct Params {
        n: u32,
        half_extent: f32,
    }
}

/// Spheres and velocities on the device, and the pass that moves them.
pub struct DeviceScene {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    spheres: wgpu::Buffer,
    velocities: wgpu::Buffer,
    n: u32,
    /// Walls at `±half_extent`; `None`: a static scene (the pass is not recorded).
    half_extent: Option<f32>,
}

impl DeviceScene {
    /// Uploads `spheres` and their `velocities` (one per sphere), moving between walls at
    /// `±half_extent` (`None`: the scene stays where it is).
    pub fn upload(
        ctx: &GpuContext,
        spheres: &[Sphere],
        velocities: &[Vec3],
        half_extent: Option<f32>,
    ) -> Result<Self> {
        let n = count_u32("spheres", spheres.len())?;
        crate::error::check_length("velocities", velocities.len(), spheres.len(), || {
            format!(
                "{} velocities for {} spheres",
                velocities.len(),
                spheres.len()
            )
        })?;
        let module = ctx.shader_file("spheres/motion.wgsl")?;
        let pipeline = ctx.pipeline(&module, "step_in_cube", &[])?;
        let bytes = 16 * u64::from(n);
        let sphere_buffer = ctx.storage_buffer("device scene spheres", bytes)?;
        let velocity_buffer = ctx.storage_buffer("device scene velocities", bytes)?;
        ctx.write_buffer(&sphere_buffer, 0, bytemuck::cast_slice(spheres));
        let padded: Vec<[f32; 4]> = velocities.iter().map(|v| [v.x, v.y, v.z, 0.0]).collect();
        ctx.write_buffer(&velocity_buffer, 0, bytemuck::cast_slice(&padded));
        let params = ctx.uniform_buffer("device scene motion", Params::uniform_size())?;
        let p = Params {
            n,
            half_extent: half_extent.unwrap_or(0.0),
        };
        ctx.write_buffer(&params, 0, &p.to_bytes()?);
        Ok(Self {
            pipeline,
            params,
            spheres: sphere_buffer,
            velocities: velocity_buffer,
            n,
            half_extent,
        })
    }

    /// Objects in the scene.
    pub fn len(&self) -> u32 {
        self.n
    }

    /// Whether the scene has no spheres.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The spheres' buffer (`[f32; 4]` each: x, y, z, radius), what
    /// `GpuBroadPhase::encode_from_buffer` reads.
    pub fn spheres(&self) -> &wgpu::Buffer {
        &self.spheres
    }

    /// Records one step of motion into `encoder`, timed as `motion` by `timer` when the device
    /// has timestamps (nothing for a static scene).
    pub fn encode_step(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        timer: &mut crate::gpu::timer::PassTimer,
    ) {
        if self.half_extent.is_none() || self.n == 0 {
            return;
        }
        let group = ctx.bind_buffers(
            "device scene motion",
            &self.pipeline,
            &[(0, &self.params), (1, &self.spheres), (2, &self.velocities)],
        );
        let mut pass = crate::gpu::frame::begin(ctx, encoder, timer, "motion");
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[]);
        crate::gpu::frame::dispatch(ctx, &mut pass, u64::from(self.n));
    }

    /// The spheres as they are on the device now (one wait).
    pub fn read_spheres(&self, ctx: &GpuContext) -> Result<Vec<Sphere>> {
        let mut rb = Readback::new("device scene spheres");
        let at = rb.add(&self.spheres, 0, 16 * u64::from(self.n));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        rb.record(ctx, &mut enc)?;
        ctx.submit(enc);
        rb.map(ctx, |bytes| bytemuck::pod_collect_to_vec(&bytes[at]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_scenes::{Scene, SceneKind, SceneParams};

    crate::gpu::shader::uniform_layout_test!(Params, "spheres/motion.wgsl", "params");

    /// Frames moved on the device equal the CPU's `Scene::step`, bit for bit (walls hit on
    /// every axis: the paper box's spheres bounce within a few dozen frames at speed 0.5).
    #[test]
    fn the_device_moves_the_scene_as_the_cpu_does() {
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        let mut timer = crate::gpu::timer::PassTimer::new(&ctx, 1);
        for (kind, n) in [(SceneKind::Paper, 3000), (SceneKind::Density, 70_000)] {
            let mut scene = Scene::generate(kind, &SceneParams::new(n, 9));
            let device =
                DeviceScene::upload(&ctx, &scene.spheres, &scene.velocities, scene.half_extent)
                    .unwrap();
            for frame in 1..=40 {
                timer.reset();
                let mut enc = ctx.device.create_command_encoder(&Default::default());
                device.encode_step(&ctx, &mut enc, &mut timer);
                ctx.submit(enc);
                scene.step();
                if frame % 20 == 0 {
                    let got = device.read_spheres(&ctx).unwrap();
                    let same = got
                        .iter()
                        .zip(&scene.spheres)
                        .filter(|(a, b)| bytemuck::bytes_of(*a) == bytemuck::bytes_of(*b))
                        .count();
                    assert_eq!(same, n, "{kind:?} frame {frame}");
                }
            }
        }
    }
}
