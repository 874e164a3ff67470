//! Batched sector-sphere test on the CPU: one sector against many spheres, structure-of-arrays,
//! branch-free so the compiler can vectorise it, split across threads with rayon.
//!
//! The test is the exact signed-distance one (`Sector::overlaps_sphere_exact`), simplified where
//! the answer cannot change: inside the wedge the radial gap alone is used (inside the sector the
//! true depth is only ever compared with a radius >= 0), and the final comparison is squared.
//! The wedge test is `Sector2::in_wedge_local`'s; the lengths are plain squares, not
//! `scaled_length`s (a division each, in a kernel timed for throughput): they agree with the
//! exact test for sizes whose squares stay in f32's normal range (above about 1e-18), the
//! thesis's scale and the experiments' (docs/design.md §5.3).

use crate::geom::sector::Sector;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;

/// Spheres as four separate arrays (x, y, z, radius), the layout wide loads want.
#[derive(Clone, Debug, Default)]
pub struct SphereColumns {
    /// Centre x of each sphere.
    pub x: Vec<f32>,
    /// Centre y of each sphere.
    pub y: Vec<f32>,
    /// Centre z of each sphere.
    pub z: Vec<f32>,
    /// Radius of each sphere.
    pub radius: Vec<f32>,
}

impl SphereColumns {
    /// The columns of `spheres`, in their order.
    pub fn from_spheres(spheres: &[Sphere]) -> Self {
        Self {
            x: spheres.iter().map(|s| s.center.x).collect(),
            y: spheres.iter().map(|s| s.center.y).collect(),
            z: spheres.iter().map(|s| s.center.z).collect(),
            radius: spheres.iter().map(|s| s.radius).collect(),
        }
    }

    /// Number of spheres.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no spheres.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// A sector's constants, precomputed once per batch.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    origin: [f32; 3],
    rows: [[f32; 3]; 3],
    full_ring: bool,
    edge: [f32; 2],
    inner: f32,
    outer: f32,
    half_thickness: f32,
}

impl Prepared {
    fn new(s: &Sector) -> Self {
        let (sin, cos) = s.half_angle.sin_cos();
        Self {
            origin: s.origin.to_array(),
            rows: [
                s.centre_axis.to_array(),
                s.side_axis().to_array(),
                s.axis.to_array(),
            ],
            full_ring: s.is_full_ring(),
            edge: [cos, sin],
            inner: s.inner_radius,
            outer: s.outer_radius,
            half_thickness: s.half_thickness,
        }
    }

    #[inline(always)]
    fn hit(&self, x: f32, y: f32, z: f32, rs: f32) -> bool {
        let d = [x - self.origin[0], y - self.origin[1], z - self.origin[2]];
        let dot = |r: [f32; 3]| r[0] * d[0] + r[1] * d[1] + r[2] * d[2];
        let (qx, qy, qz) = (dot(self.rows[0]), dot(self.rows[1]), dot(self.rows[2]));
        let rho = (qx * qx + qy * qy).sqrt();
        let radial = (self.inner - rho).max(rho - self.outer);
        // Distance to the straight edge on the point's side (fold y to |y|).
        let ay = qy.abs();
        let t = (qx * self.edge[0] + ay * self.edge[1]).clamp(self.inner, self.outer);
        let (ex, ey) = (qx - t * self.edge[0], ay - t * self.edge[1]);
        let edge = (ex * ex + ey * ey).sqrt();
        // Sector2::in_wedge_local's rule (cos rounds to 1 at small half-angles).
        let in_wedge = self.full_ring
            | ((ay * self.edge[0] <= qx * self.edge[1]) & ((qx >= 0.0) | (self.edge[0] < 0.0)));
        let d2 = if in_wedge { radial } else { edge };
        let dz = qz.abs() - self.half_thickness;
        let (ox, oz) = (d2.max(0.0), dz.max(0.0));
        (d2.max(dz) <= 0.0) | (ox * ox + oz * oz <= rs * rs)
    }
}

/// Spheres per rayon task: large enough to amortise scheduling, small enough to balance.
const CHUNK: usize = 8192;

/// Number of spheres of `spheres` touching the sector, on one thread.
pub fn count_sector_sphere_hits(sector: &Sector, spheres: &SphereColumns) -> u64 {
    count_range(&Prepared::new(sector), spheres, 0, spheres.len())
}

/// Number of spheres touching the sector, split across rayon's threads.
pub fn count_sector_sphere_hits_parallel(sector: &Sector, spheres: &SphereColumns) -> u64 {
    let p = Prepared::new(sector);
    let n = spheres.len();
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| count_range(&p, spheres, c * CHUNK, ((c + 1) * CHUNK).min(n)))
        .sum()
}

/// Writes one flag per sphere (1 = touches), in parallel.
pub fn sector_sphere_flags_parallel(sector: &Sector, spheres: &SphereColumns, out: &mut Vec<u8>) {
    let p = Prepared::new(sector);
    out.clear();
    out.resize(spheres.len(), 0);
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, flags)| {
            let base = c * CHUNK;
            for (i, f) in flags.iter_mut().enumerate() {
                let k = base + i;
                *f = p.hit(spheres.x[k], spheres.y[k], spheres.z[k], spheres.radius[k]) as u8;
            }
        });
}

fn count_range(p: &Prepared, s: &SphereColumns, lo: usize, hi: usize) -> u64 {
    let (x, y, z, r) = (&s.x[lo..hi], &s.y[lo..hi], &s.z[lo..hi], &s.radius[lo..hi]);
    let mut hits = 0u32;
    for i in 0..x.len() {
        hits += p.hit(x[i], y[i], z[i], r[i]) as u32;
    }
    hits as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::sector::RotatingBox;
    use crate::test_scenes::vec3_in;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn batched_counts_and_flags_match_the_thesis_sphere_test() {
        let mut rng = ChaCha8Rng::seed_from_u64(41);
        let spheres: Vec<Sphere> = (0..20_000)
            .map(|_| Sphere::new(vec3_in(&mut rng, -30.0..30.0), rng.random_range(0.0..3.0)))
            .collect();
        let cols = SphereColumns::from_spheres(&spheres);
        let mut flags = Vec::new();
        for k in 0..20u32 {
            let axis = vec3_in(&mut rng, -1.0..1.0).normalize();
            let b = RotatingBox {
                origin: Vec3::ZERO,
                axis,
                arm: axis.any_orthonormal_vector(),
                distance: rng.random_range(12.5..25.0),
                widths: vec3_in(&mut rng, 0.0..25.0),
                angle: if k == 0 {
                    7.0
                } else {
                    rng.random_range(0.0..6.3)
                },
            };
            let sector = if k.is_multiple_of(2) {
                b.sector()
            } else {
                b.conservative_sector()
            };
            // The thesis's case analysis (2.5) is an independent formulation of the same test.
            let expected: Vec<bool> = spheres.iter().map(|s| sector.overlaps_sphere(s)).collect();
            let n = expected.iter().filter(|&&h| h).count() as u64;
            assert!(n > 0, "rotation {k} hits nothing: a weak check");
            assert_eq!(count_sector_sphere_hits(&sector, &cols), n);
            assert_eq!(count_sector_sphere_hits_parallel(&sector, &cols), n);
            sector_sphere_flags_parallel(&sector, &cols, &mut flags);
            for (i, (&f, &e)) in flags.iter().zip(&expected).enumerate() {
                assert_eq!(f == 1, e, "sphere {i} of rotation {k}");
            }
        }
    }
}
