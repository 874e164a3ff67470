//! How spheres move in a cube with reflecting walls, and how large a cube holds them: the rule
//! of the scene generators (`sweepfan-scenes`) and of the GPU's resident scene
//! (`gpu::DeviceScene`), which moves the spheres on the device bit for bit as [`step_in_cube`]
//! does.

use crate::geom::sphere::Sphere;
use glam::Vec3;
use rayon::prelude::*;

/// Half side of a cube holding n spheres of radius r at the given volume fraction.
pub fn density_half_extent(n: usize, r: f32, volume_fraction: f32) -> f32 {
    let volume = n.max(1) as f64 * 4.0 / 3.0 * std::f64::consts::PI * (r as f64).powi(3);
    let side = (volume / volume_fraction as f64).cbrt();
    (0.5 * side).max(2.0 * r as f64) as f32
}

/// Moves every sphere by its velocity inside the cube [-half, half]^3: a sphere that crosses a
/// wall is mirrored back inside and that velocity component flips (shared by every moving scene).
pub fn step_in_cube(spheres: &mut [Sphere], velocities: &mut [Vec3], half: f32) {
    spheres
        .par_iter_mut()
        .zip(velocities.par_iter_mut())
        .with_min_len(4096)
        .for_each(|(s, v)| {
            let limit = (half - s.radius).max(0.0);
            let mut c = s.center + *v;
            for axis in 0..3 {
                if c[axis] > limit {
                    c[axis] = 2.0 * limit - c[axis];
                    v[axis] = -v[axis];
                } else if c[axis] < -limit {
                    c[axis] = -2.0 * limit - c[axis];
                    v[axis] = -v[axis];
                }
            }
            s.center = c;
        });
}
