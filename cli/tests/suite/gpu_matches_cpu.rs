//! Every method: GPU pairs and test counts equal the CPU reference's, at the sizes the issue
//! names (paper box n = 50, 1000, 5000; density n = 200k), over two frames (one at 200k) so
//! resident buffers are reused. Fails (not skips) without an adapter unless SWEEPFAN_NO_GPU=1.

use crate::common::shared_gpu;
use std::sync::Arc;
use sweepfan::gpu::GpuBroadPhase;
use sweepfan::{BroadPhase, Method, canonicalize};
use sweepfan_cli::run::verify::compare_pairs;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn check_scene(
    ctx: &Arc<sweepfan::gpu::GpuContext>,
    scene: &Scene,
    methods: &[Method],
    frames: usize,
) {
    for &m in methods {
        let mut cpu = sweepfan::cpu::broad_phase(m);
        let mut gpu = GpuBroadPhase::new(ctx.clone(), m).unwrap();
        let mut s = scene.clone();
        for frame in 0..frames {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let sa = cpu.find_pairs(&s.spheres, Some(&mut a)).unwrap();
            let sb = gpu.find_pairs(&s.spheres, Some(&mut b)).unwrap();
            canonicalize(&mut a);
            canonicalize(&mut b);
            let cmp = compare_pairs(&s.spheres, &a, &b);
            assert!(
                cmp.is_ok(),
                "{m} {} n={} frame {frame}: {}",
                scene.name,
                s.len(),
                cmp.summary()
            );
            // Near-touching pairs may differ between devices; counts then differ by as many.
            if cmp.near_touching.is_empty() {
                assert_eq!(
                    sa.tests,
                    sb.tests,
                    "{m} {} n={} frame {frame}",
                    scene.name,
                    s.len()
                );
                assert_eq!(sa.pairs, sb.pairs);
            }
            assert!(sb.stages.iter().any(|st| st.stage == "total"));
            s.step();
        }
    }
}

#[test]
fn paper_box_every_method_gpu_equals_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    for n in [50, 1000, 5000] {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 11));
        check_scene(&ctx, &scene, &Method::ALL, 2);
    }
}

#[test]
#[ignore = "slow (1-4 min on 2 cores): scripts/test.sh --slow runs it, and CI"]
fn density_200k_gpu_equals_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    let scene = Scene::generate(SceneKind::Density, &SceneParams::new(200_000, 5));
    // brute_force (2e10 tests a frame) is left to smaller scenes.
    let methods: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|&m| m != Method::BruteForce)
        .collect();
    // One frame: about a minute on lavapipe already.
    check_scene(&ctx, &scene, &methods, 1);
}

/// The CPU grid's test count on `scene`, one frame.
fn cpu_grid_tests(scene: &Scene) -> u64 {
    let mut grid = sweepfan::cpu::broad_phase(Method::Grid);
    grid.find_pairs(&scene.spheres, None).unwrap().tests
}

#[test]
fn adversarial_scenes_gpu_equals_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    for kind in [
        SceneKind::Clusters,
        SceneKind::LineX,
        SceneKind::MixedRadii,
        SceneKind::Giant,
        SceneKind::Wide,
    ] {
        let scene = Scene::generate(kind, &SceneParams::new(3000, 2));
        check_scene(&ctx, &scene, &Method::ALL, 2);
    }
}

/// The grid without its cliffs (docs/design.md §2.7) on both backends: the wide scene at
/// 40,000 (cells far past the old 2^20 clamp), the giant scene at 20,000, and five giants of
/// several sizes, touching each other, in a moving density scene. Pairs and test counts equal
/// the CPU's, and the wide scene's tests stay below two per object (the 2^20 clamp put every
/// far object in the last cells: hundreds of millions of tests).
#[test]
fn wide_and_giant_scenes_gpu_equals_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    let wide = Scene::generate(SceneKind::Wide, &SceneParams::new(40_000, 4));
    check_scene(&ctx, &wide, &[Method::Grid, Method::Sap], 1);
    let tests = cpu_grid_tests(&wide);
    assert!(tests < 2 * wide.len() as u64, "{tests} tests");
    let giant = Scene::generate(SceneKind::Giant, &SceneParams::new(20_000, 4));
    check_scene(&ctx, &giant, &[Method::Grid], 1);
    let mut giants = Scene::generate(SceneKind::Density, &SceneParams::new(30_000, 6));
    let half = giants.half_extent.unwrap();
    for (k, r) in [40.0f32, 40.0, 90.0, 9.0, 300.0].into_iter().enumerate() {
        let c = glam::Vec3::new(half * 0.1 * k as f32, -half * 0.05 * k as f32, 0.0);
        giants.spheres[k * 17] = sweepfan::Sphere::new(c, r);
        giants.velocities[k * 17] = glam::Vec3::ZERO;
    }
    check_scene(&ctx, &giants, &[Method::Grid, Method::Sap], 2);
}

/// The giants' rule at its edges decides the same on the device as on the CPU (equal test
/// counts): 100 giants (set aside: more than the device's tile of 48 and the CPU's coarse
/// index), the budget of 8,000 objects (a sixteenth: set aside), one more (too many: the cells
/// grow), large spheres exactly twice the rest (kept in the cells) and just past twice (set
/// aside, in the next exponent bin).
#[test]
fn giant_rule_edges_gpu_equals_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    let base = Scene::generate(SceneKind::Density, &SceneParams::new(8_000, 9));
    let half = base.half_extent.unwrap();
    let most = 8_000 / 16;
    let mut tests = Vec::new();
    for (count, radius) in [
        (100, 9.0f32),
        (most, 9.0),
        (most + 1, 9.0),
        (20, 2.0),
        (20, 2.5),
    ] {
        let mut scene = base.clone();
        for k in 0..count {
            let t = k as f32 / count as f32;
            let c = glam::Vec3::new(half * (t - 0.5), half * (0.5 - t) * 0.7, half * 0.2);
            scene.spheres[k * 7] = sweepfan::Sphere::new(c, radius);
        }
        check_scene(&ctx, &scene, &[Method::Grid], 2);
        tests.push(cpu_grid_tests(&scene));
    }
    // The scenes are on the sides of the rule they were meant for: one giant too many makes
    // cells 18 wide, spheres exactly twice the rest 4 wide, not 2, and 2 again with the spheres
    // of radius 2.5 aside.
    let plain = cpu_grid_tests(&base);
    assert!(tests[2] > 50 * plain, "{tests:?} against {plain}");
    assert!(tests[3] > 3 * plain, "{tests:?} against {plain}");
    assert!(tests[4] < 2 * plain, "{tests:?} against {plain}");
}

/// More giants than `GIANTS_NEAR_MAX` (docs/design.md §2.7): 2,000 boulders of radius 12 (past
/// `FAR_GIANT_RATIO` times the others' 1) through a density scene of 40,000 (a budget of 2,500)
/// are set aside, and 2,000 of radius 2.5 are not (they size the cells); either way the device
/// decides as the CPU (equal test counts) with the CPU's pairs, its giants' walk reading the
/// list in 42 tiles.
#[test]
fn two_thousand_giants_gpu_equals_cpu() {
    use rand::{Rng, SeedableRng};
    use sweepfan::geom::radii::{giants_budget, giants_of};
    let Some(ctx) = shared_gpu() else { return };
    for (radius, set_aside) in [(12.0f32, 2000), (2.5, 0)] {
        let mut scene = Scene::generate(SceneKind::Density, &SceneParams::new(40_000, 11));
        let half = scene.half_extent.unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for k in 0..2000 {
            let c = glam::Vec3::new(rng.random(), rng.random(), rng.random()) * (2.0 * half)
                - glam::Vec3::splat(half);
            scene.spheres[k * 20] = sweepfan::Sphere::new(c, radius);
        }
        let n = scene.len() as u64;
        let giants = giants_of(&scene.spheres, giants_budget(n)).0.len();
        assert_eq!(giants, set_aside, "radius {radius}");
        check_scene(&ctx, &scene, &[Method::Grid], 1);
    }
}

/// The walks' two ends (docs/design.md §9.17): the subgroup one where the adapter offers
/// SUBGROUP, and the portable one (workgroup barriers, no subgroup operation) on the same
/// adapter opened without it. Both give the CPU's pairs and counts, on scenes where objects
/// touch more than the 4 pairs a thread holds (so full hands are appended during the walks).
#[test]
fn walk_ends_with_and_without_subgroups_gpu_equals_cpu() {
    let Some(contexts) = crate::common::both_appends() else {
        return;
    };
    for kind in [SceneKind::Clusters, SceneKind::Giant] {
        let scene = Scene::generate(kind, &SceneParams::new(4000, 9));
        let pairs = crate::common::cpu_grid_pairs(&scene.spheres);
        let mut per_object = vec![0u32; scene.len()];
        for p in &pairs {
            per_object[p[0] as usize] += 1;
            per_object[p[1] as usize] += 1;
        }
        assert!(per_object.iter().any(|&k| k > 8), "{kind:?}: no full hands");
    }
    for ctx in contexts.map(Arc::new) {
        for kind in [SceneKind::Clusters, SceneKind::Giant] {
            let scene = Scene::generate(kind, &SceneParams::new(4000, 9));
            check_scene(&ctx, &scene, &Method::ALL, 1);
        }
    }
}

/// The grid's keys in Z-order (the scene's cells fit the key, docs/design.md §9.17) and in
/// tiles of Z-order with the tile's hash (they do not) give the CPU's pairs and counts: a
/// jittered lattice of 30 x 30 x 30 spheres whose cells (side 2 r) need 5 + 5 + 5 bits, within
/// the 15 of 32,768 buckets, and the same spheres spread ten times wider (cells need 8 bits an
/// axis: 512 tiles of 5 + 5 + 5 bits). The occupancy map (128 bits a bucket: 22 bits) holds the
/// first box whole and the second in 4 tiles, whose bits other tiles' cells share (§9.9).
#[test]
fn grid_in_z_order_whole_and_in_tiles_gpu_equals_cpu() {
    use rand::{Rng, SeedableRng};
    let Some(ctx) = shared_gpu() else { return };
    for (spacing, fits) in [(1.0f32, true), (10.0, false)] {
        let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(27_000, 3));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let r = 0.55f32;
        for (i, s) in scene.spheres.iter_mut().enumerate() {
            let k = [i % 30, i / 30 % 30, i / 900].map(|k| k as f32 * spacing);
            let c = glam::Vec3::new(k[0], k[1], k[2])
                + glam::Vec3::new(rng.random(), rng.random(), rng.random()) * 0.2;
            *s = sweepfan::Sphere::new(c, r);
        }
        // The bits of cells the keys need, by hand: the span of cells on each axis.
        let bits: u32 = (0..3)
            .map(|a| {
                let cell = |s: &sweepfan::Sphere| (s.center[a] / (2.0 * r)).floor() as i64;
                let lo = scene.spheres.iter().map(cell).min().unwrap();
                let hi = scene.spheres.iter().map(cell).max().unwrap();
                64 - ((hi - lo) as u64).leading_zeros()
            })
            .sum();
        assert_eq!(bits <= 15, fits, "{bits} bits of cells");
        check_scene(&ctx, &scene, &[Method::Grid], 2);
    }
}

/// Points (radius 0) take cells sized by their bounds, and a sphere among them is a giant: the
/// grid tests about as many pairs as there are points, not all n(n - 1) / 2 (a cloud in a cube
/// of 0.5 was one cell of side 1, and one sphere of radius 50 sized the cells of 100,000
/// points), with the device counting as the CPU and the oracle (`oracle_grid_tests`).
#[test]
fn points_are_gridded_by_their_bounds_gpu_equals_cpu() {
    use crate::common::oracle_tests;
    let Some(ctx) = shared_gpu() else { return };
    for (shrink, boulder) in [(true, false), (false, true)] {
        let mut scene = Scene::generate(SceneKind::Density, &SceneParams::new(20_000, 13));
        let half = scene.half_extent.unwrap();
        for s in &mut scene.spheres {
            if shrink {
                s.center *= 0.25 / half;
            }
            s.radius = 0.0;
        }
        // Coincident points: the only pairs among points.
        for k in 0..50 {
            scene.spheres[2 * k + 1].center = scene.spheres[2 * k].center;
        }
        if boulder {
            scene.spheres[777].radius = 50.0;
        }
        let n = scene.len() as u64;
        let stats = sweepfan::cpu::broad_phase(Method::Grid)
            .find_pairs(&scene.spheres, None)
            .unwrap();
        let what = format!("shrunk {shrink}, boulder {boulder}");
        assert_eq!(
            stats.tests,
            oracle_tests(Method::Grid, &scene.spheres),
            "{what}"
        );
        assert!(stats.tests < 40 * n, "{what}: {} tests", stats.tests);
        check_scene(&ctx, &scene, &[Method::Grid], 1);
    }
}
