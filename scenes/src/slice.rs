//! One process's share of a generated scene: objects `start..end` of [`Scene::generate`], bit
//! for bit, without making the others (docs/design.md §3.4: every scene is seeded and
//! deterministic, so each share can be drawn where it is used).
//!
//! The generators draw from one ChaCha8 stream seeded with `SceneParams::seed`, and every draw is
//! `random_range` on an inclusive f32 range. In rand 0.9 that is
//! `UniformFloat::sample_single_inclusive`: one `next_u32` (23 of its bits become the fraction),
//! no rejection and no 64-bit draw, so each draw takes exactly one 32-bit word of the stream.
//! An object that draws k numbers therefore takes k words, and `ChaCha8Rng::set_word_pos` jumps
//! straight to the first object of a range. Per scene:
//! * `paper`, `giant`, `density`: six words per sphere (centre, velocity); the giant is the last
//!   sphere, in whichever share holds it.
//! * `wide`: four words per clustered sphere (radius, offset), three per sparse one.
//! * `mixed-radii`: the n radii come first (one word each), and the box follows from the sum of
//!   all their volumes, so every share reads the n radii (time O(n), memory O(share)); then six
//!   words per sphere.
//! * `clusters`: the cluster centres come first (three words each), then each sphere's offset,
//!   drawn by rejection (three words per try): no sphere's words are known in advance, so a share
//!   reads the offsets of every sphere before it. Time O(end), memory O(share + 1).
//! * `line-x`, `one-point`: closed form, no stream.
//! * `rotating`: made whole and cut (memory and time of the whole scene).

use super::{
    ClusterLayout, GIANT_SPHERE, MovingBox, ONE_POINT_SPHERE, SPHERES_PER_CLUSTER, Scene,
    SceneKind, SceneParams, WIDE_HALF_EXTENT, WideLayout, boulders_half_extent, boulders_sphere,
    line_x_sphere, mixed_radii_half_extent, mixed_radii_sphere, mixed_radius, moving_spheres,
    sphere_volume,
};
use glam::Vec3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::ops::Range;
use sweepfan::geom::sphere::Sphere;

/// Words of the stream per sphere of the paper, giant and density scenes: centre, velocity.
const MOVING_SPHERE_WORDS: u128 = 6;

/// Words of the stream per mixed-radii sphere after the radii: centre, velocity.
const MIXED_RADII_SPHERE_WORDS: u128 = 6;

/// Words of the stream per cluster centre.
const CLUSTER_CENTRE_WORDS: u128 = 3;

/// Objects `range` of the scene `Scene::generate(kind, p)` makes, bit for bit (centres, radii,
/// velocities), with the whole scene's `half_extent` and `name`, without storing the others.
///
/// `range` is clamped to `0..p.n`: an empty or out-of-bounds range gives an empty scene with the
/// same `half_extent` and `name`. The shares of consecutive ranges, concatenated, are the whole
/// scene. Memory is that of the share, except `rotating`, which is made whole and cut; time is
/// that of the share, except `mixed-radii` (O(n): its box depends on every radius) and
/// `clusters` (O(range.end): its spheres are drawn by rejection). See the module documentation.
pub fn generate_range(kind: SceneKind, p: &SceneParams, range: Range<usize>) -> Scene {
    let end = range.end.min(p.n);
    let objects = range.start.min(end)..end;
    match kind {
        SceneKind::Paper | SceneKind::Giant => {
            let b = MovingBox::paper();
            let (mut spheres, mut velocities) = moving_range(p.seed, &b, objects.clone());
            // The giant replaces the scene's last sphere.
            if kind == SceneKind::Giant && !objects.is_empty() && objects.end == p.n {
                let last = objects.len() - 1;
                spheres[last] = GIANT_SPHERE;
                velocities[last] = Vec3::ZERO;
            }
            Scene::walled(kind, spheres, velocities, b.half_extent)
        }
        SceneKind::Density => {
            let b = MovingBox::density(p);
            let (spheres, velocities) = moving_range(p.seed, &b, objects);
            Scene::walled(kind, spheres, velocities, b.half_extent)
        }
        SceneKind::Clusters => clusters_range(p, objects),
        SceneKind::LineX => {
            let spheres = objects.map(|i| line_x_sphere(p, i)).collect();
            Scene::fixed(kind, spheres)
        }
        SceneKind::OnePoint => Scene::fixed(kind, vec![ONE_POINT_SPHERE; objects.len()]),
        SceneKind::MixedRadii => mixed_radii_range(p, objects),
        SceneKind::Rotating => {
            let mut scene = Scene::generate(kind, p);
            keep_range(&mut scene.spheres, objects.clone());
            keep_range(&mut scene.velocities, objects);
            scene
        }
        SceneKind::Boulders => {
            let half = boulders_half_extent(p.n);
            let mut rng = stream_at(p.seed, objects.start as u128 * 3);
            let count = objects.len();
            let spheres = objects
                .map(|i| boulders_sphere(&mut rng, p, half, i))
                .collect();
            Scene::walled(kind, spheres, vec![Vec3::ZERO; count], half)
        }
        SceneKind::Wide => {
            let w = WideLayout::new(p.n);
            let mut rng = stream_at(p.seed, w.draws_before(objects.start));
            let count = objects.len();
            let spheres = objects.map(|i| w.sphere(&mut rng, i)).collect();
            Scene::walled(kind, spheres, vec![Vec3::ZERO; count], WIDE_HALF_EXTENT)
        }
    }
}

/// The generators' stream for `seed`, positioned at 32-bit word `word`.
fn stream_at(seed: u64, word: u128) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_word_pos(word);
    rng
}

/// Spheres `objects` of a paper, giant or density scene in box `b` (the giant not placed).
fn moving_range(seed: u64, b: &MovingBox, objects: Range<usize>) -> (Vec<Sphere>, Vec<Vec3>) {
    let mut rng = stream_at(seed, objects.start as u128 * MOVING_SPHERE_WORDS);
    moving_spheres(&mut rng, objects.len(), b)
}

/// Spheres `objects` of the clusters scene: the centres of the clusters they belong to, then,
/// past all centres, the offsets of every sphere before them (drawn and dropped), then theirs.
fn clusters_range(p: &SceneParams, objects: Range<usize>) -> Scene {
    let kind = SceneKind::Clusters;
    let c = ClusterLayout::new(p);
    if objects.is_empty() {
        return Scene::walled(kind, Vec::new(), Vec::new(), c.half_extent);
    }
    let first_cluster = objects.start / SPHERES_PER_CLUSTER;
    let last_cluster = (objects.end - 1) / SPHERES_PER_CLUSTER;
    let mut rng = stream_at(p.seed, first_cluster as u128 * CLUSTER_CENTRE_WORDS);
    let centres: Vec<Vec3> = (first_cluster..=last_cluster)
        .map(|_| c.centre(&mut rng))
        .collect();
    rng.set_word_pos(c.clusters as u128 * CLUSTER_CENTRE_WORDS);
    for _ in 0..objects.start {
        let _ = c.offset(&mut rng);
    }
    let count = objects.len();
    let spheres = objects
        .map(|i| c.sphere_around(&mut rng, centres[i / SPHERES_PER_CLUSTER - first_cluster]))
        .collect();
    Scene::walled(kind, spheres, vec![Vec3::ZERO; count], c.half_extent)
}

/// Spheres `objects` of the mixed-radii scene. The box follows from the volumes of all n radii,
/// summed in index order as [`Scene::generate`] sums them (the same f32 additions), so the radii
/// are all drawn once here without being stored; then the share's radii are drawn again, and its
/// centres and velocities after all radii.
fn mixed_radii_range(p: &SceneParams, objects: Range<usize>) -> Scene {
    let n = p.n;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let volume: f32 = (0..n).map(|_| sphere_volume(mixed_radius(&mut rng))).sum();
    let half = mixed_radii_half_extent(volume);
    rng.set_word_pos(objects.start as u128);
    let radii: Vec<f32> = objects.clone().map(|_| mixed_radius(&mut rng)).collect();
    rng.set_word_pos(n as u128 + objects.start as u128 * MIXED_RADII_SPHERE_WORDS);
    let (spheres, velocities) = radii
        .iter()
        .map(|&r| mixed_radii_sphere(&mut rng, half, r))
        .unzip();
    Scene::walled(SceneKind::MixedRadii, spheres, velocities, half)
}

/// Keeps elements `range` of `v` (within its length), in order, and drops the rest.
fn keep_range<T: Copy>(v: &mut Vec<T>, range: Range<usize>) {
    let end = range.end.min(v.len());
    let start = range.start.min(end);
    v.copy_within(start..end, 0);
    v.truncate(end - start);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bits of spheres, so that -0.0 and 0.0 differ.
    fn sphere_bits(spheres: &[Sphere]) -> Vec<[u32; 4]> {
        spheres
            .iter()
            .map(|s| {
                let c = s.center;
                [c.x, c.y, c.z, s.radius].map(f32::to_bits)
            })
            .collect()
    }

    /// The bits of velocities.
    fn velocity_bits(velocities: &[Vec3]) -> Vec<[u32; 3]> {
        velocities
            .iter()
            .map(|v| v.to_array().map(f32::to_bits))
            .collect()
    }

    /// Asserts that `part` is objects `range` (clamped) of `whole`, bit for bit.
    fn assert_share(whole: &Scene, part: &Scene, range: &Range<usize>, what: &str) {
        let end = range.end.min(whole.len());
        let start = range.start.min(end);
        assert_eq!(part.name, whole.name, "{what}");
        assert_eq!(
            part.half_extent.map(f32::to_bits),
            whole.half_extent.map(f32::to_bits),
            "{what}"
        );
        assert_eq!(
            sphere_bits(&part.spheres),
            sphere_bits(&whole.spheres[start..end]),
            "{what}"
        );
        assert_eq!(
            velocity_bits(&part.velocities),
            velocity_bits(&whole.velocities[start..end]),
            "{what}"
        );
    }

    /// Ranges to cut a scene of `n >= 200` objects at: empty ones (also past the end and
    /// reversed), from 0, in the middle, across cluster (64) and wide-cluster (n / 10) edges, the
    /// tail, one object, the whole, and beyond.
    fn ranges(n: usize) -> Vec<Range<usize>> {
        let (a, b) = (n / 2, n / 4);
        vec![
            0..0,
            5..5,
            n..n,
            n..n + 5,
            a..b,
            usize::MAX - 1..usize::MAX,
            0..1,
            0..64,
            0..n / 3,
            7..n / 2,
            n / 3..2 * n / 3,
            63..65,
            64..128,
            100..101,
            n / 10 - 1..n / 10 + 2,
            n / 10..n,
            n - 1..n,
            n - 37..n,
            n - 3..n + 10,
            0..n,
            0..usize::MAX,
        ]
    }

    #[test]
    fn every_share_is_the_generated_scene_cut() {
        for kind in SceneKind::ALL {
            for n in [1000, 2999] {
                for seed in [1, 77] {
                    let p = SceneParams::new(n, seed);
                    let whole = Scene::generate(kind, &p);
                    assert_eq!(whole.len(), n);
                    for range in ranges(n) {
                        let part = generate_range(kind, &p, range.clone());
                        let what = format!("{kind:?} n {n} seed {seed} range {range:?}");
                        assert_share(&whole, &part, &range, &what);
                    }
                }
            }
        }
    }

    #[test]
    fn consecutive_shares_make_the_whole_scene() {
        for kind in SceneKind::ALL {
            let n = 2345;
            let mut p = SceneParams::new(n, 5);
            if kind.uses_radius() {
                p.radius = 0.75;
            }
            if kind.uses_volume_fraction() {
                p.volume_fraction = 0.03;
            }
            let whole = Scene::generate(kind, &p);
            for (a, b) in [(0, 0), (1, 2), (640, 1700), (777, 778), (n - 1, n), (n, n)] {
                let mut spheres = Vec::new();
                let mut velocities = Vec::new();
                for range in [0..a, a..b, b..n] {
                    let part = generate_range(kind, &p, range.clone());
                    assert_share(&whole, &part, &range, &format!("{kind:?} {range:?}"));
                    spheres.extend(part.spheres);
                    velocities.extend(part.velocities);
                }
                let what = format!("{kind:?} split at {a}, {b}");
                assert_eq!(sphere_bits(&spheres), sphere_bits(&whole.spheres), "{what}");
                assert_eq!(
                    velocity_bits(&velocities),
                    velocity_bits(&whole.velocities),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn small_and_empty_scenes_cut_cleanly() {
        for kind in SceneKind::ALL {
            for n in [0, 1, 2, 9, 10, 11, 65] {
                let p = SceneParams::new(n, 3);
                let whole = Scene::generate(kind, &p);
                for range in [0..0, 0..1, 0..n, n.saturating_sub(1)..n, 1..n + 1, n..n + 2] {
                    let part = generate_range(kind, &p, range.clone());
                    assert_share(&whole, &part, &range, &format!("{kind:?} n {n} {range:?}"));
                }
            }
        }
    }

    #[test]
    fn the_giant_is_in_the_last_share_only() {
        let p = SceneParams::new(500, 9);
        let head = generate_range(SceneKind::Giant, &p, 0..499);
        assert!(head.spheres.iter().all(|s| s.radius == 2.0));
        let tail = generate_range(SceneKind::Giant, &p, 498..500);
        assert_eq!(tail.spheres[1], GIANT_SPHERE);
        assert_eq!(tail.velocities[1], Vec3::ZERO);
        assert_eq!(tail.spheres[0].radius, 2.0);
    }
}
