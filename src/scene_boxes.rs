//! Seeded oriented-box scenes for the SAT pipeline: each sphere of a sphere scene becomes a
//! box at its centre with half-extents uniform in [0.25, 1] r and a uniformly random rotation.

use crate::geom::obb::Obb;
use crate::scene::{Scene, SceneKind, SceneParams};
use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Boxes placed like the spheres of `Scene::generate(kind, params)`.
pub fn generate_boxes(kind: SceneKind, params: &SceneParams) -> Vec<Obb> {
    let scene = Scene::generate(kind, params);
    // A stream of its own, so the centres are exactly the sphere scene's.
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed ^ 0x0bb5_ca1e);
    scene
        .spheres
        .iter()
        .map(|s| {
            let mut half = || s.radius * rng.random_range(0.25f32..=1.0);
            let half_extents = Vec3::new(half(), half(), half());
            Obb::new(s.center, half_extents, random_rotation(&mut rng))
        })
        .collect()
}

/// A uniformly distributed unit quaternion (Shoemake's method).
fn random_rotation(rng: &mut ChaCha8Rng) -> Quat {
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let tau = std::f32::consts::TAU;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    Quat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

/// `n` seeded boxes, uniform in a cube sized for a few overlaps per box, with half-extents in
/// [0.1, 0.6) and uniformly random rotations (the SAT tests', bench's and example's workload).
pub fn random_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // About 0.35 boxes of mean volume ~0.2 per unit volume: a few overlaps per box.
    let side = (n as f32 * 0.6).cbrt() * 2.0;
    (0..n)
        .map(|_| {
            let q = Quat::from_xyzw(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            Obb::new(
                Vec3::new(
                    rng.random_range(0.0..side),
                    rng.random_range(0.0..side),
                    rng.random_range(0.0..side),
                ),
                Vec3::new(
                    rng.random_range(0.1..0.6),
                    rng.random_range(0.1..0.6),
                    rng.random_range(0.1..0.6),
                ),
                if q.length() < 1e-3 {
                    Quat::IDENTITY
                } else {
                    q.normalize()
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_keep_the_sphere_centres_and_stay_inside_them() {
        let p = SceneParams::new(2_000, 9);
        let boxes = generate_boxes(SceneKind::Density, &p);
        let spheres = Scene::generate(SceneKind::Density, &p).spheres;
        assert_eq!(boxes.len(), spheres.len());
        for (b, s) in boxes.iter().zip(&spheres) {
            assert_eq!(b.center, s.center);
            assert!(b.half_extents.min_element() >= 0.25 * s.radius);
            assert!(b.half_extents.max_element() <= s.radius);
            assert!((b.rotation.length() - 1.0).abs() < 1e-5);
            assert!(b.check(0).is_ok());
        }
        assert_eq!(boxes, generate_boxes(SceneKind::Density, &p));
    }
}
