//! Every CPU method finds exactly brute force's pairs, and counts its tests as its definition
//! says; the counts are checked against naive O(n^2) oracles written here from the definitions.

use glam::Vec3;
use proptest::prelude::*;
use sweepfan::cpu::broad_phase;
use sweepfan::{Method, Pair, Scene, SceneKind, SceneParams, Sphere, canonicalize};

fn lo(s: &Sphere, a: usize) -> f32 {
    s.center[a] - s.radius
}
fn hi(s: &Sphere, a: usize) -> f32 {
    s.center[a] + s.radius
}
fn overlap(s: &Sphere, t: &Sphere, a: usize) -> bool {
    lo(s, a) <= hi(t, a) && lo(t, a) <= hi(s, a)
}

fn all_pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

fn oracle_pairs(s: &[Sphere]) -> Vec<Pair> {
    all_pairs(s.len())
        .filter(|&(i, j)| {
            let d = s[i].center - s[j].center;
            let r = s[i].radius + s[j].radius;
            d.x * d.x + d.y * d.y + d.z * d.z <= r * r
        })
        .map(|(i, j)| [i as u32, j as u32])
        .collect()
}

fn r_max(s: &[Sphere]) -> f32 {
    s.iter().fold(0.0f32, |m, x| m.max(x.radius))
}

/// The cascade: drop objects overlapping no other survivor on each axis but the last, then
/// count survivor pairs overlapping on the last.
fn oracle_cascade_tests(s: &[Sphere], axes: usize) -> u64 {
    let mut alive: Vec<usize> = (0..s.len()).collect();
    for a in 0..axes - 1 {
        alive = alive
            .iter()
            .copied()
            .filter(|&i| alive.iter().any(|&j| j != i && overlap(&s[i], &s[j], a)))
            .collect();
    }
    let last = axes - 1;
    all_pairs(alive.len())
        .filter(|&(p, q)| overlap(&s[alive[p]], &s[alive[q]], last))
        .count() as u64
}

fn oracle_origin_distance_tests(s: &[Sphere]) -> u64 {
    let reach = 2.0 * r_max(s);
    all_pairs(s.len())
        .filter(|&(i, j)| {
            let (a, b) = (s[i].center.length(), s[j].center.length());
            a.max(b) - a.min(b) <= reach
        })
        .count() as u64
}

fn oracle_min_axis_tests(s: &[Sphere]) -> u64 {
    let n = s.len();
    let chosen: Vec<(usize, usize)> = (0..n)
        .map(|i| {
            let counts: Vec<usize> = (0..3)
                .map(|a| {
                    (0..n)
                        .filter(|&j| j != i && overlap(&s[i], &s[j], a))
                        .count()
                })
                .collect();
            let m = *counts.iter().min().unwrap();
            (m, counts.iter().position(|&c| c == m).unwrap())
        })
        .collect();
    all_pairs(n)
        .filter(|&(i, j)| {
            let owner = if (chosen[i].0, i) < (chosen[j].0, j) {
                i
            } else {
                j
            };
            overlap(&s[i], &s[j], chosen[owner].1)
        })
        .count() as u64
}

fn oracle_sap_tests(s: &[Sphere]) -> u64 {
    all_pairs(s.len())
        .filter(|&(i, j)| (0..3).all(|a| overlap(&s[i], &s[j], a)))
        .count() as u64
}

fn oracle_grid_tests(s: &[Sphere]) -> u64 {
    let r = r_max(s);
    let side = if r > 0.0 { 2.0 * r } else { 1.0 };
    let m = s.iter().fold(Vec3::INFINITY, |m, x| m.min(x.center));
    let cell = |x: &Sphere| -> [i64; 3] {
        [0, 1, 2].map(|a| (((x.center[a] - m[a]) / side).floor() as i64).clamp(0, (1 << 20) - 1))
    };
    let cells: Vec<[i64; 3]> = s.iter().map(cell).collect();
    all_pairs(s.len())
        .filter(|&(i, j)| (0..3).all(|a| (cells[i][a] - cells[j][a]).abs() <= 1))
        .count() as u64
}

fn oracle_tests(method: Method, s: &[Sphere]) -> u64 {
    let n = s.len() as u64;
    match method {
        Method::BruteForce => n * n.saturating_sub(1) / 2,
        Method::OriginDistance => oracle_origin_distance_tests(s),
        Method::X => oracle_cascade_tests(s, 1),
        Method::Xy => oracle_cascade_tests(s, 2),
        Method::Xyz => oracle_cascade_tests(s, 3),
        Method::MinAxis => oracle_min_axis_tests(s),
        Method::Sap => oracle_sap_tests(s),
        Method::Grid => oracle_grid_tests(s),
    }
}

/// Runs every method twice on one instance (stored, then counted only) and compares pairs and
/// counts with the oracles. `check_counts` runs the O(n^2) count oracles.
fn check_scene(s: &[Sphere], check_counts: bool) -> Result<(), TestCaseError> {
    let expected = oracle_pairs(s);
    for method in Method::ALL {
        let mut bp = broad_phase(method);
        prop_assert_eq!(bp.name(), method.name());
        let mut pairs = vec![[7, 7]];
        let stats = bp.find_pairs(s, Some(&mut pairs)).unwrap();
        prop_assert!(
            pairs.iter().all(|p| p[0] < p[1]),
            "{method}: pair with i >= j"
        );
        canonicalize(&mut pairs);
        prop_assert!(
            pairs == expected,
            "{}: {} pairs, expected {}",
            method,
            pairs.len(),
            expected.len()
        );
        prop_assert_eq!(stats.pairs, expected.len() as u64, "{}", method);
        let counted = bp.find_pairs(s, None).unwrap();
        prop_assert_eq!(counted.tests, stats.tests, "{}", method);
        prop_assert_eq!(counted.pairs, stats.pairs, "{}", method);
        prop_assert!(stats.tests >= stats.pairs);
        if check_counts {
            prop_assert_eq!(stats.tests, oracle_tests(method, s), "{} tests", method);
        }
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
        Just(12.0),
    ];
    prop_oneof![
        // Integer coordinates: exact contacts and exact interval touches are common.
        ((-8i32..8, -8i32..8, -8i32..8), radius.clone())
            .prop_map(|((x, y, z), r)| Sphere::new(Vec3::new(x as f32, y as f32, z as f32), r)),
        ((-20.0f32..20.0, -20.0f32..20.0, -20.0f32..20.0), radius)
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

/// Larger scenes than the O(n^2) count oracles allow: pairs still checked against brute force,
/// with buffers reused by one instance across scenes of different sizes (parallel chunks).
#[test]
fn reused_instances_on_larger_scenes() {
    let scenes = [
        generated(SceneKind::Density, 20_000),
        generated(SceneKind::Clusters, 5_000),
        generated(SceneKind::Density, 3_000),
    ];
    let expected: Vec<Vec<Pair>> = scenes
        .iter()
        .map(|s| {
            let mut p = Vec::new();
            broad_phase(Method::BruteForce)
                .find_pairs(s, Some(&mut p))
                .unwrap();
            canonicalize(&mut p);
            p
        })
        .collect();
    assert_eq!(expected[2], oracle_pairs(&scenes[2]));
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
