//! Seeded oriented-box and polygon scenes for the SAT pipeline: each sphere of a sphere scene
//! becomes a box at its centre with half-extents uniform in [0.25, 1] r and a uniformly random
//! rotation, or a convex polygon around its (x, y).

use crate::random;
use crate::random::vec3_in;
use crate::{Scene, SceneKind, SceneParams};
use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::error::{Error, Result};
use sweepfan::geom::obb::Obb;
use sweepfan::geom::polygon::Polygon;

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
            Obb::new(s.center, half_extents, random::unit_quaternion(&mut rng))
        })
        .collect()
}

/// Convex polygons placed like the spheres of `Scene::generate(kind, params)`, projected to
/// (x, y): 3 to 8 vertices at increasing angles (jittered within their share of the turn) on an
/// ellipse with semi-axes uniform in [0.5, 1] r, rotated uniformly; half are given clockwise
/// (`Polygon` stores them counter-clockwise).
///
/// A scene whose spheres are too small for their coordinates in f32 (the wide scene: radius 1
/// at coordinates up to 1e7, where neighbouring f32 values are 1 apart) cannot make convex
/// polygons: an error naming the first polygon that collapses.
pub fn generate_polygons(kind: SceneKind, params: &SceneParams) -> Result<Vec<Polygon>> {
    let scene = Scene::generate(kind, params);
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed ^ 0x9017_90a5);
    scene
        .spheres
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let k = rng.random_range(3..=8usize);
            let axes = Vec2::new(
                s.radius * rng.random_range(0.5f32..=1.0),
                s.radius * rng.random_range(0.5f32..=1.0),
            );
            let turn = Vec2::from_angle(rng.random_range(0.0..std::f32::consts::TAU));
            let step = std::f32::consts::TAU / k as f32;
            let centre = s.center.truncate();
            let mut vertices: Vec<Vec2> = (0..k)
                .map(|v| {
                    let a = step * (v as f32 + rng.random_range(0.0f32..0.5));
                    centre + turn.rotate(axes * Vec2::new(a.cos(), a.sin()))
                })
                .collect();
            if rng.random::<bool>() {
                vertices.reverse();
            }
            // Points on an ellipse at angles at least half a step apart are strictly convex,
            // where f32 can tell them apart.
            Polygon::new(&vertices).map_err(|e| {
                Error::Config(format!(
                    "the {} scene cannot be made of polygons: polygon {index} (radius {} at \
                     ({}, {})) is not convex once its vertices are rounded to f32 ({e}); use \
                     --shape sphere or obb, or another scene",
                    kind.name(),
                    s.radius,
                    centre.x,
                    centre.y
                ))
            })
        })
        .collect()
}

/// `n` seeded needles: boxes with one half-extent 20 to 60 times the other two, uniformly
/// rotated, uniform in a cube sized for a few overlaps each. Their bounding spheres are far
/// looser than their AABBs (the scene that separates the two broad-phase proxies).
pub fn needle_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let side = (n as f32).cbrt() * 3.0;
    (0..n)
        .map(|_| {
            let thin = rng.random_range(0.03f32..0.06);
            let long = thin * rng.random_range(20.0f32..60.0);
            let centre = vec3_in(&mut rng, 0.0..side);
            Obb::new(
                centre,
                Vec3::new(long, thin, thin),
                random::unit_quaternion(&mut rng),
            )
        })
        .collect()
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
                vec3_in(&mut rng, 0.0..side),
                vec3_in(&mut rng, 0.1..0.6),
                if q.length() < 1e-3 {
                    Quat::IDENTITY
                } else {
                    q.normalize()
                },
            )
        })
        .collect()
}

/// `2 count` boxes in pairs `(2k, 2k + 1)`, each pair within a few ulps of touching (or a
/// little more: 1e-7 and 1e-6 of the distance either way), in its own cell of a 3D grid far
/// from the others. Sizes span four decades, rotations are random, exact quarter turns or
/// nearly unit quaternions. The distance at which a pair stops touching is found by bisection
/// with the exact test (docs/design.md §4.2): the scene where rounding would decide, if
/// anything did.
pub fn near_touching_pairs(count: usize, seed: u64) -> Vec<Obb> {
    use sweepfan::geom::obbs_overlap_exactly;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let quat = |rng: &mut ChaCha8Rng| {
        let v = glam::Vec4::from_array(std::array::from_fn(|_| rng.random_range(-1.0..1.0)));
        let s = std::f32::consts::FRAC_1_SQRT_2;
        match rng.random_range(0..4) {
            0 => Quat::from_xyzw(0.0, s, 0.0, s),
            1 => Quat::from_vec4(v * (1.0005 / v.length())),
            _ => Quat::from_vec4(v.normalize()),
        }
    };
    let unit = |rng: &mut ChaCha8Rng| vec3_in(rng, -1.0..1.0).normalize_or(Vec3::X);
    let mut out = Vec::with_capacity(2 * count);
    for k in 0..count {
        let scale = 10f32.powi(rng.random_range(-1..3));
        let half = |rng: &mut ChaCha8Rng| {
            Vec3::from_array(std::array::from_fn(|_| rng.random_range(0.05..2.0))) * scale
        };
        let cell = Vec3::new((k % 16) as f32, (k / 16 % 16) as f32, (k / 256) as f32);
        let a = Obb::new(
            cell * 5e3 + vec3_in(&mut rng, -scale..scale),
            half(&mut rng),
            quat(&mut rng),
        );
        let (hb, qb, dir) = (half(&mut rng), quat(&mut rng), unit(&mut rng));
        let at = |s: f32| Obb::new(a.center + dir * s, hb, qb);
        let (mut lo, mut hi) = (0.0f32, 20.0 * scale);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid == lo || mid == hi {
                break;
            }
            if obbs_overlap_exactly(&a, &at(mid)) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let s = match rng.random_range(0..8) {
            0 => hi,
            1 => hi.next_up(),
            2 => lo.next_down(),
            3 => lo * (1.0 - 1e-6),
            4 => hi * (1.0 + 1e-6),
            5 => lo * (1.0 - 1e-7),
            6 => hi * (1.0 + 1e-7),
            _ => lo,
        };
        out.extend([a, at(s)]);
    }
    out
}

/// `random_boxes(n, seed)` plus, last, a terrain tile: a flat axis-aligned box through the middle
/// of their cube, spanning it on x and y (1 thick on z), so it overlaps the few percent of boxes
/// that cross its plane. One shape far wider than the rest (docs/design.md §4.5, adversarial scenes).
pub fn tile_among_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut boxes = random_boxes(n, seed);
    // random_boxes' cube side.
    let half = (n as f32 * 0.6).cbrt();
    boxes.push(Obb::axis_aligned(
        Vec3::splat(half),
        Vec3::new(half + 1.0, half + 1.0, 0.5),
    ));
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tile_spans_the_other_boxes_on_x_and_y() {
        let boxes = tile_among_boxes(2_000, 4);
        let (tile, rest) = boxes.split_last().unwrap();
        assert_eq!(rest.len(), 2_000);
        for b in rest {
            for a in 0..2 {
                assert!((b.center[a] - tile.center[a]).abs() < tile.half_extents[a]);
            }
        }
        // Centres within 0.5 + 0.6 sqrt(3) of the tile's plane may touch it; some do.
        let near = rest
            .iter()
            .filter(|b| (b.center.z - tile.center.z).abs() < 0.5)
            .count();
        assert!(near > 20, "{near}");
    }

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
            assert!(sweepfan::Validate::check(b, 0).is_ok());
        }
        assert_eq!(boxes, generate_boxes(SceneKind::Density, &p));
    }

    #[test]
    fn polygons_sit_on_the_sphere_centres_inside_their_circles() {
        let p = SceneParams::new(3_000, 4);
        let polygons = generate_polygons(SceneKind::Density, &p).unwrap();
        let spheres = Scene::generate(SceneKind::Density, &p).spheres;
        assert_eq!(polygons.len(), spheres.len());
        let mut sizes = [0usize; 9];
        for (poly, s) in polygons.iter().zip(&spheres) {
            let v = poly.vertices();
            sizes[v.len()] += 1;
            let c = s.center.truncate();
            for &x in v {
                let d = (x - c).length();
                assert!(
                    d <= s.radius * 1.0001 && d >= 0.5 * s.radius * 0.9999,
                    "{d}"
                );
            }
            // Stored counter-clockwise: positive signed area.
            let area: f32 = (0..v.len())
                .map(|i| v[i].perp_dot(v[(i + 1) % v.len()]))
                .sum();
            assert!(area > 0.0);
        }
        assert!((3..=8).all(|k| sizes[k] > 100), "{sizes:?}");
        assert_eq!(polygons, generate_polygons(SceneKind::Density, &p).unwrap());
    }
}
