//! Batched exact sector-vs-sphere tests on the GPU: many (sector, sphere) index pairs -> one hit
//! flag each, by the annular sector's signed distance (docs/design.md §5.3). The CPU method
//! `Sector::overlaps_sphere_exact` (`geom::sector_distance`) is the oracle.

use crate::error::{Error, Exceeds, Result};
use crate::geom::sector::Sector;
use crate::geom::sphere::Sphere;
use crate::gpu::context::Uniform;
use crate::gpu::context::{GpuContext, count_u32};
use bytemuck::{Pod, Zeroable};

/// Threads per workgroup (`WG` in the shader), one pair each.
const WORKGROUP: u32 = 64;

/// A sector as the shader reads it (4 x `vec4<f32>`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSector {
    origin_cos: [f32; 4],
    axis_sin: [f32; 4],
    centre_axis_h: [f32; 4],
    radii: [f32; 4],
}

// The shader's `GpuSector` is 4 vec4<f32>.
const _: () = assert!(std::mem::size_of::<GpuSector>() == 64);

impl From<&Sector> for GpuSector {
    fn from(s: &Sector) -> Self {
        // sin and cos on the CPU, as `Sector2::edge_directions` computes them.
        let (sin, cos) = s.half_angle.sin_cos();
        let o = s.origin;
        let u = s.axis;
        let a = s.centre_axis;
        Self {
            origin_cos: [o.x, o.y, o.z, cos],
            axis_sin: [u.x, u.y, u.z, sin],
            centre_axis_h: [a.x, a.y, a.z, s.half_thickness],
            radii: [
                s.inner_radius,
                s.outer_radius,
                s.half_angle,
                if s.is_full_ring() { 1.0 } else { 0.0 },
            ],
        }
    }
}

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/sector/sector_sphere.wgsl` (its import
    /// `sector/sector_sphere_params.wgsl`).
    #[derive(Clone, Copy)]
    pub(crate) struct Params {
        pair_count: u32,
        sector_count: u32,
        sphere_count: u32,
    }
}

/// Pipeline and buffers (grown on demand, reused across calls).
pub struct SectorSphereGpu {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    buffers: Option<[wgpu::Buffer; 4]>,
    /// Capacities in elements: sectors, spheres, pairs.
    capacity: [usize; 3],
}

impl SectorSphereGpu {
    /// Compiles the test on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the sector-sphere test", WORKGROUP)?;
        let module = ctx.shader_file("sector/sector_sphere.wgsl")?;
        let pipeline = ctx.pipeline(&module, "test_pairs", &[])?;
        let params = ctx.uniform_buffer("sector sphere params", Params::uniform_size())?;
        ctx.check()?;
        Ok(Self {
            pipeline,
            params,
            buffers: None,
            capacity: [0; 3],
        })
    }

    fn ensure_capacity(&mut self, ctx: &GpuContext, need: [usize; 3]) -> Result<()> {
        if self.buffers.is_some() && need.iter().zip(&self.capacity).all(|(n, c)| n <= c) {
            return Ok(());
        }
        let cap = [
            need[0].max(self.capacity[0]),
            need[1].max(self.capacity[1]),
            need[2].max(self.capacity[2]),
        ];
        self.buffers = Some([
            ctx.storage_buffer("sectors", (cap[0] * 64) as u64)?,
            ctx.storage_buffer("spheres", (cap[1] * 16) as u64)?,
            ctx.storage_buffer("sector sphere pairs", (cap[2] * 8) as u64)?,
            ctx.storage_buffer("sector sphere hits", (cap[2] * 4) as u64)?,
        ]);
        self.capacity = cap;
        Ok(())
    }

    /// Hit flag (1 = the sphere touches the sector) of every (sector index, sphere index) pair.
    /// Out-of-range indices or a pair count beyond the dispatch limit are an [`Error::InvalidArgument`] /
    /// [`Error::TooLarge`].
    pub fn test_pairs(
        &mut self,
        ctx: &GpuContext,
        sectors: &[Sector],
        spheres: &[Sphere],
        pairs: &[[u32; 2]],
    ) -> Result<Vec<u32>> {
        if let Some((i, p)) = pairs
            .iter()
            .enumerate()
            .find(|(_, p)| p[0] as usize >= sectors.len() || p[1] as usize >= spheres.len())
        {
            return Err(Error::invalid_argument(
                "pairs",
                format!(
                    "sector-sphere pair {i} = {p:?} indexes past {} sectors / {} spheres",
                    sectors.len(),
                    spheres.len()
                ),
            ));
        }
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let groups = pairs.len().div_ceil(WORKGROUP as usize);
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as usize;
        if groups > max_dim * max_dim || pairs.len() > u32::MAX as usize {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!(
                    "{} sector-sphere pairs exceed one dispatch; split the batch",
                    pairs.len()
                ),
            ));
        }
        self.ensure_capacity(ctx, [sectors.len(), spheres.len(), pairs.len()])?;
        let Some([sec_buf, sph_buf, pair_buf, hit_buf]) = &self.buffers else {
            return Err(Error::OutOfOrder("sector-sphere buffers missing".into()));
        };
        let gpu_sectors: Vec<GpuSector> = sectors.iter().map(GpuSector::from).collect();
        ctx.write_buffer(sec_buf, 0, bytemuck::cast_slice(&gpu_sectors));
        ctx.write_buffer(sph_buf, 0, bytemuck::cast_slice(spheres));
        ctx.write_buffer(pair_buf, 0, bytemuck::cast_slice(pairs));
        let p = Params {
            pair_count: count_u32("sector-sphere pairs", pairs.len())?,
            sector_count: count_u32("sectors", sectors.len())?,
            sphere_count: count_u32("spheres", spheres.len())?,
        };
        ctx.write_buffer(&self.params, 0, &p.to_bytes()?);
        let buffers = [
            (0, sec_buf),
            (1, sph_buf),
            (2, pair_buf),
            (3, hit_buf),
            (4, &self.params),
        ];
        let bind = ctx.bind_buffers("sector sphere", &self.pipeline, &buffers);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let (x, y) = ctx.dispatch_2d(groups as u32);
        ctx.dispatch_pass(
            &mut enc,
            "sector sphere",
            None,
            &self.pipeline,
            &bind,
            [x, y, 1],
        );
        ctx.submit(enc);
        ctx.read(hit_buf, pairs.len())
    }
}

#[cfg(test)]
mod tests {

    crate::gpu::shader::uniform_layout_test!(Params, "sector/sector_sphere.wgsl", "params");

    use super::*;
    use crate::geom::sector::rodrigues;
    use crate::gpu::context::test_gpu;
    use crate::test_scenes::vec3_in;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::f32::consts::{PI, TAU};

    fn random_sectors(rng: &mut ChaCha8Rng, n: usize) -> Vec<Sector> {
        (0..n)
            .map(|_| {
                let axis = vec3_in(rng, -1.0..1.0).normalize();
                let a = rodrigues(
                    axis.any_orthonormal_vector(),
                    axis,
                    rng.random_range(0.0..TAU),
                );
                let r = rng.random_range(0.0..4.0);
                let theta = if rng.random_bool(0.1) {
                    PI
                } else {
                    rng.random_range(0.0..PI)
                };
                Sector::new(
                    vec3_in(rng, -5.0..5.0),
                    axis,
                    a.normalize(),
                    theta,
                    r,
                    r + rng.random_range(0.0..6.0),
                    rng.random_range(0.0..2.0),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn gpu_hits_match_the_cpu_signed_distance() {
        let Some(ctx) = test_gpu() else { return };
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        let sectors = random_sectors(&mut rng, 300);
        let spheres: Vec<Sphere> = (0..2_000)
            .map(|_| Sphere::new(vec3_in(&mut rng, -10.0..10.0), rng.random_range(0.0..5.0)))
            .collect();
        // More than 65,535 x 64 pairs: the dispatch needs its second dimension.
        let pairs: Vec<[u32; 2]> = (0..4_300_000)
            .map(|_| [rng.random_range(0..300), rng.random_range(0..2_000)])
            .collect();
        let mut gpu = SectorSphereGpu::new(&ctx).unwrap();
        let got = gpu.test_pairs(&ctx, &sectors, &spheres, &pairs).unwrap();
        let (mut hits, mut boundary) = (0, 0);
        for (p, &g) in pairs.iter().zip(&got) {
            let (s, sp) = (&sectors[p[0] as usize], &spheres[p[1] as usize]);
            let want = s.overlaps_sphere_exact(sp);
            hits += want as usize;
            if (g == 1) != want {
                // Only a rounding-level tie may differ.
                let gap = (s.signed_distance(sp.center) - sp.radius).abs();
                assert!(gap < 1e-4, "pair {p:?}: gpu {g}, cpu {want}, gap {gap}");
                boundary += 1;
            }
        }
        eprintln!(
            "{} pairs: {hits} hits, {boundary} rounding ties",
            pairs.len()
        );
        assert!(hits > 100_000 && hits < 4_000_000, "{hits}");
        assert!(boundary < 100, "{boundary}");
        // Reuse with a smaller batch, and bad indices.
        let few = gpu
            .test_pairs(&ctx, &sectors, &spheres, &pairs[..100])
            .unwrap();
        assert_eq!(few, got[..100]);
        assert!(
            gpu.test_pairs(&ctx, &sectors, &spheres, &[[300, 0]])
                .is_err()
        );
        assert!(
            gpu.test_pairs(&ctx, &sectors, &spheres, &[])
                .unwrap()
                .is_empty()
        );
    }
}
