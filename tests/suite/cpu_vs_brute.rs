//! Every CPU method finds exactly brute force's pairs, and counts its tests as its definition
//! says; the counts are checked against naive O(n^2) oracles written here from the definitions.

use crate::common::{
    cell_wall_scene, exact_contact_scene, f32_touch_errors, oracle_grid_tests, oracle_pairs,
    oracle_tests,
};
use glam::Vec3;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use sweepfan::cpu::broad_phase;
use sweepfan::{BroadPhase, Method, Pair, Sphere, canonicalize};
use sweepfan_scenes::random::vec3_in;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Runs every method on one instance (stored, counted only, stored unordered) and compares
/// pairs and counts with the oracles: `find_pairs` gives them in canonical order as they come,
/// `find_pairs_unordered` the same set. `check_counts` runs the O(n^2) count oracles.
fn check_scene(s: &[Sphere], check_counts: bool) -> Result<(), TestCaseError> {
    let expected = oracle_pairs(s);
    for method in Method::ALL {
        let mut bp = broad_phase(method);
        prop_assert_eq!(bp.name(), method.name());
        let mut pairs = vec![[7, 7]];
        let stats = bp.find_pairs(s, Some(&mut pairs)).unwrap();
        prop_assert!(
            pairs == expected,
            "{}: {} pairs, expected {} (in canonical order)",
            method,
            pairs.len(),
            expected.len()
        );
        let mut unordered = vec![[7, 7]];
        let same = bp.find_pairs_unordered(s, Some(&mut unordered)).unwrap();
        prop_assert!(
            unordered.iter().all(|p| p[0] < p[1]),
            "{method}: pair with i >= j"
        );
        canonicalize(&mut unordered);
        prop_assert!(unordered == expected, "{}: unordered set", method);
        prop_assert_eq!(same.tests, stats.tests, "{}", method);
        prop_assert_eq!(stats.pairs, expected.len() as u64, "{}", method);
        let counted = bp.find_pairs(s, None).unwrap();
        prop_assert_eq!(counted.tests, stats.tests, "{}", method);
        prop_assert_eq!(counted.pairs, stats.pairs, "{}", method);
        prop_assert!(stats.tests >= stats.pairs);
        if check_counts {
            prop_assert_eq!(stats.tests, oracle_tests(method, s), "{} tests", method);
        }
    }
    // `auto` runs one of them: its pairs, and the tests of the method it names.
    let mut auto = sweepfan::cpu::auto();
    let mut pairs = Vec::new();
    let stats = auto.find_pairs(s, Some(&mut pairs)).unwrap();
    prop_assert!(pairs == expected, "auto: {} pairs", pairs.len());
    let chosen = stats.chosen.expect("auto says what it chose").method;
    if check_counts {
        prop_assert_eq!(
            stats.tests,
            oracle_tests(chosen, s),
            "auto ({}) tests",
            chosen
        );
    }
    Ok(())
}

fn sphere_strategy() -> impl Strategy<Value = Sphere> {
    let radius = prop_oneof![
        Just(0.0f32),
        Just(0.5),
        Just(1.0),
        Just(2.0),
        0.05f32..4.0,
        // Giants (docs/design.md §2.7): two exponent bins above the rest.
        Just(12.0),
        Just(40.0),
    ];
    prop_oneof![
        // Integer coordinates: exact contacts and exact interval touches are common.
        ((-8i32..8, -8i32..8, -8i32..8), radius.clone())
            .prop_map(|((x, y, z), r)| Sphere::new(Vec3::new(x as f32, y as f32, z as f32), r)),
        (
            (-20.0f32..20.0, -20.0f32..20.0, -20.0f32..20.0),
            radius.clone()
        )
            .prop_map(|((x, y, z), r)| Sphere::new(Vec3::new(x, y, z), r)),
        // Far from the origin: past 2^24 cells of side 1, where each f32 value is a cell.
        ((-3e8f32..3e8, -20.0f32..20.0, 3e7f32..3.00001e7), radius)
            .prop_map(|((x, y, z), r)| Sphere::new(Vec3::new(x, y, z), r)),
    ]
}

/// A scene with duplicates and exactly touching pairs mixed in.
fn scene_strategy() -> impl Strategy<Value = Vec<Sphere>> {
    (
        prop::collection::vec(sphere_strategy(), 1..120),
        prop::collection::vec((any::<prop::sample::Index>(), 0u8..5), 0..30),
    )
        .prop_map(|(mut spheres, extras)| {
            for (pick, kind) in extras {
                let s = spheres[pick.index(spheres.len())];
                // (anchor radius, offset, touching radius): |offset| = sum of radii exactly.
                let (anchor_r, offset, touching_r) = match kind {
                    0 => {
                        spheres.push(s);
                        continue;
                    }
                    1 => (1.0, Vec3::X * 2.0, 1.0),
                    2 => (1.0, Vec3::Z * -3.0, 2.0),
                    3 => (2.0, Vec3::new(3.0, 4.0, 0.0), 3.0),
                    _ => {
                        spheres.push(Sphere::new(s.center, 0.0));
                        continue;
                    }
                };
                let anchor = s.center.round();
                spheres.push(Sphere::new(anchor, anchor_r));
                let touching = Sphere::new(anchor + offset, touching_r);
                spheres.push(touching);
            }
            spheres
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_scenes_match_brute_force(spheres in scene_strategy()) {
        check_scene(&spheres, true)?;
    }
}

fn generated(kind: SceneKind, n: usize) -> Vec<Sphere> {
    Scene::generate(kind, &SceneParams::new(n, 17)).spheres
}

#[test]
fn generated_scenes_match_brute_force() {
    for (kind, n) in [
        (SceneKind::Paper, 600),
        (SceneKind::Clusters, 700),
        (SceneKind::Giant, 500),
        (SceneKind::LineX, 400),
        (SceneKind::OnePoint, 150),
        (SceneKind::MixedRadii, 600),
        (SceneKind::Density, 800),
    ] {
        check_scene(&generated(kind, n), true).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    }
}

/// Many giants (docs/design.md §2.7): 40 and 150 large spheres of mixed radii among 3,000
/// small ones, and 1,100 (past the budget's old cap of 1,024) among 17,600, inside the
/// others' box, on its faces and beyond it, so the grid's coarse index of their reach (the CPU)
/// and every other method find brute force's pairs, and the grid's tests are its rule's. All
/// are set aside, but of 1,100 of radii 1.5 to 4 (under 8 times the others' 0.6) only the 825
/// of radii 2 to 4: at most 1,024, and more than twice 1.5, which sizes the cells.
#[test]
fn many_giants_match_brute_force() {
    use sweepfan::geom::radii::{giants_budget, giants_of};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let far = [3.0f32, 11.0, 40.0, 900.0];
    let near = [1.5f32, 2.0, 3.0, 4.0];
    for (giants, small, radii, set_aside) in [
        (40, 3000, far, 40),
        (150, 3000, far, 150),
        (1100, 17_600, far, 1100),
        (1100, 17_600, near, 825),
    ] {
        let side = 120.0 * (small as f32 / 3000.0).cbrt();
        let mut s: Vec<Sphere> = (0..small)
            .map(|_| {
                let c = Vec3::new(rng.random(), rng.random(), rng.random()) * side;
                Sphere::new(c, rng.random_range(0.2f32..0.6))
            })
            .collect();
        for k in 0..giants {
            let r = radii[k % 4];
            let c = Vec3::new(rng.random(), rng.random(), rng.random()) * (1.5 * side)
                - Vec3::splat(0.25 * side);
            s.push(Sphere::new(c, r));
        }
        let what = format!("{giants} giants up to radius {}", radii[3]);
        let (aside, _) = giants_of(&s, giants_budget(s.len() as u64));
        assert_eq!(aside.len(), set_aside, "{what}: set aside");
        check_scene(&s, true).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// Giants whose reach spans past 2^31 cells of the others (radius ratios 1e6 to 1e15): every
/// method finds brute force's pairs. A giant's reach is `c ± r`, far outside the centres'
/// bounds, where the grid's fast cell path (exact only within 2^20 cells) once overflowed and
/// the giant met nothing: a radius 4,294,968 times the others' lost every pair of the giant.
#[test]
fn giants_reaching_past_two_to_the_31_cells_match_brute_force() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let small = |rng: &mut rand_chacha::ChaCha8Rng, half: f32, r: f32| {
        let c = vec3_in(rng, -half..half);
        Sphere::new(c, r)
    };
    // (giants as (centre, radius), half side of the others' cube, their radius, a point the
    // first giant's surface reaches exactly): centres near the origin (the fast cells' range)
    // and far from it, both signs.
    for (giants, half, r, reached) in [
        (vec![(Vec3::ZERO, 1e7)], 1.2, 1e-3, false),
        (
            vec![
                (Vec3::new(0.3, 0.2, 0.1), 1e9),
                (Vec3::new(-0.4, 0.1, 0.2), 1e9),
            ],
            1.2,
            1e-3,
            false,
        ),
        (vec![(Vec3::new(0.5, -0.5, 0.0), 3e12)], 50.0, 1e-2, false),
        (
            vec![
                (Vec3::new(-1e7, 0.0, 0.0), 1e7),
                (Vec3::new(0.0, 3e8, 0.0), 2.999_999e8),
            ],
            0.5,
            1e-3,
            true,
        ),
        (
            vec![
                (Vec3::new(0.0, 0.0, -5e14), 5e14),
                (Vec3::new(1e3, 0.0, 0.0), 0.5),
            ],
            2.0,
            1e-4,
            false,
        ),
    ] {
        let mut s: Vec<Sphere> = (0..400).map(|_| small(&mut rng, half, r)).collect();
        if reached {
            let (c, gr) = giants[0];
            s.push(Sphere::new(Vec3::new(c.x + gr, c.y, c.z), 0.0));
        }
        s.extend(giants.iter().map(|&(c, gr)| Sphere::new(c, gr)));
        let touching_a_giant = oracle_pairs(&s)
            .iter()
            .filter(|p| p[1] as usize >= s.len() - giants.len())
            .count();
        assert!(
            touching_a_giant > 100,
            "{giants:?}: the giants touch the rest"
        );
        check_scene(&s, true).unwrap_or_else(|e| panic!("giants {giants:?}: {e}"));
    }
}

/// Centres within two ULP of cell walls: the grid's cells are the real floor (docs/design.md
/// §9.2), which the GPU reproduces exactly, not the floor of the f32 quotient.
/// Contacts exact in real arithmetic whose f32 squares round, at three scales: every method
/// finds exactly the pairs of real arithmetic on the inputs (docs/design.md §9.6a), on scenes
/// that f32 arithmetic alone decides wrongly.
#[test]
fn contacts_whose_squares_round_are_exact() {
    for scale in [1.0, 2f32.powi(-60), 2f32.powi(20)] {
        let s = exact_contact_scene(1500, 62, scale);
        assert!(f32_touch_errors(&s) > 30, "the scene tests the exact rule");
        check_scene(&s, true).unwrap();
    }
}

#[test]
fn grid_cells_on_cell_walls_are_the_real_floor() {
    let v = cell_wall_scene();
    check_scene(&v, true).unwrap();
    // The scene tells the two rules apart: flooring the f32 quotient counts other tests.
    let side = 2.0 * v.iter().map(|s| s.radius).fold(0.0f32, f32::max);
    let f32_cells: Vec<i64> = v
        .iter()
        .map(|s| (s.center.x / side).floor() as i64)
        .collect();
    let mut f32_tests = 0u64;
    for i in 0..v.len() {
        for j in i + 1..v.len() {
            f32_tests += u64::from((f32_cells[i] - f32_cells[j]).abs() <= 1);
        }
    }
    assert_ne!(f32_tests, oracle_grid_tests(&v));
}

/// `scene` with every coordinate and radius multiplied by 2^`exp` (exact in f32).
pub fn scaled(scene: &[Sphere], exp: i32) -> Vec<Sphere> {
    let k = 2f32.powi(exp);
    scene
        .iter()
        .map(|s| Sphere::new(s.center * k, s.radius * k))
        .collect()
}

/// A scene and its copy shrunk by 2^-90 (radii near 1e-27, where f32 squares underflow) or by
/// 2^-70: every method finds the same pairs with the same test counts, and the probe
/// (radius 1e-24 in a 4e-23 cube) decides as its copy enlarged by 2^80 does, not "all touch".
#[test]
fn tiny_scenes_decide_as_their_enlarged_copies() {
    let base = generated(SceneKind::MixedRadii, 500);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let probe: Vec<Sphere> = (0..400)
        .map(|_| {
            let c = vec3_in(&mut rng, 0.0..4e-23);
            Sphere::new(c, 1e-24)
        })
        .collect();
    for (name, small, large) in [
        ("mixed x 2^-90", scaled(&base, -90), base.clone()),
        ("mixed x 2^-70", scaled(&base, -70), base.clone()),
        ("probe", probe.clone(), scaled(&probe, 80)),
    ] {
        let want = oracle_pairs(&large);
        assert!(want.len() < large.len() * 3, "{name}: {} pairs", want.len());
        for method in Method::ALL {
            let mut got = Vec::new();
            let st = broad_phase(method)
                .find_pairs(&small, Some(&mut got))
                .unwrap();
            canonicalize(&mut got);
            assert_eq!(got, want, "{name}: {method}");
            // The naive oracle's count on the enlarged copy, where nothing underflows.
            assert_eq!(
                st.tests,
                oracle_tests(method, &large),
                "{name}: {method} tests"
            );
        }
    }
}

/// A few intervals far wider than the rest on an axis (spheres spanning the scene, one to more
/// than min_axis sets aside) beside ordinary ones: every method's pairs and counts as the
/// oracles say (min_axis's backward walks visit the wide intervals apart from its window).
#[test]
fn wide_spheres_beside_small_ones() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(61);
    for wide in [1usize, 3, 40] {
        let mut s: Vec<Sphere> = (0..700)
            .map(|_| {
                let c = vec3_in(&mut rng, 0.0..60.0);
                Sphere::new(c, rng.random_range(0.5..1.5))
            })
            .collect();
        for k in 0..wide {
            // Far out on y and z, some wide enough to reach back over the scene on x; others
            // cross the scene.
            let c = match k % 2 {
                0 => Vec3::new(rng.random_range(0.0..60.0), 200.0 + 70.0 * k as f32, 90.0),
                _ => Vec3::new(30.0, rng.random_range(0.0..60.0), 30.0),
            };
            s.push(Sphere::new(c, rng.random_range(20.0..40.0)));
        }
        check_scene(&s, true).unwrap();
    }
}

#[test]
fn tiny_scenes() {
    let one = [Sphere::new(Vec3::ZERO, 1.0)];
    let apart = [
        Sphere::new(Vec3::ZERO, 1.0),
        Sphere::new(Vec3::new(2.5, 0.0, 0.0), 1.0),
    ];
    let touching = [
        Sphere::new(Vec3::ZERO, 1.0),
        Sphere::new(Vec3::new(0.0, 2.0, 0.0), 1.0),
    ];
    for scene in [&one[..], &apart[..], &touching[..]] {
        check_scene(scene, true).unwrap();
    }
    for method in Method::ALL {
        let mut pairs = Vec::new();
        let stats = broad_phase(method)
            .find_pairs(&touching, Some(&mut pairs))
            .unwrap();
        assert_eq!(pairs, [[0, 1]], "{method}");
        assert_eq!(stats.pairs, 1);
        let stats = broad_phase(method)
            .find_pairs(&one, Some(&mut pairs))
            .unwrap();
        assert!(
            pairs.is_empty() && stats.pairs == 0 && stats.tests == 0,
            "{method}"
        );
    }
}

/// Larger scenes than the O(n^2) count oracles allow: pairs still checked against the pair oracle,
/// with buffers reused by one instance across scenes of different sizes (parallel chunks).
#[test]
fn reused_instances_on_larger_scenes() {
    let scenes = [
        generated(SceneKind::Density, 20_000),
        generated(SceneKind::Clusters, 5_000),
        generated(SceneKind::Density, 3_000),
    ];
    // The oracle's pairs (brute force is one of the methods under test).
    let expected: Vec<Vec<Pair>> = scenes.iter().map(|s| oracle_pairs(s)).collect();
    assert!(expected.iter().all(|p| !p.is_empty()));
    for method in Method::ALL {
        let mut bp = broad_phase(method);
        for (s, want) in scenes.iter().zip(&expected) {
            let mut pairs = Vec::new();
            let stats = bp.find_pairs(s, Some(&mut pairs)).unwrap();
            canonicalize(&mut pairs);
            assert!(
                pairs == *want,
                "{method}: {} vs {} pairs",
                pairs.len(),
                want.len()
            );
            assert_eq!(stats.pairs, want.len() as u64);
        }
    }
}

/// Many pairs, counted without storing: one-point scene, n(n-1)/2 touching pairs.
#[test]
fn one_point_counts_without_storing() {
    let s = generated(SceneKind::OnePoint, 4_000);
    let all = 4_000u64 * 3_999 / 2;
    for method in Method::ALL {
        let stats = broad_phase(method).find_pairs(&s, None).unwrap();
        assert_eq!(stats.pairs, all, "{method}");
        assert_eq!(stats.tests, all, "{method}");
    }
}
