//! The peer crates (feature `peers`) find brute force's pairs, and, as all three test exactly
//! the pairs whose boxes overlap on every axis, their test counts equal sap's.
#![cfg(feature = "peers")]

use glam::Vec3;
use sweepfan::cpu::broad_phase;
use sweepfan::cpu::peers::{PEER_NAMES, peer};
use sweepfan::{Method, Pair, Sphere, canonicalize};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn pairs_of(bp: &mut dyn sweepfan::BroadPhase, s: &[Sphere]) -> (Vec<Pair>, u64) {
    let mut pairs = Vec::new();
    let stats = bp.find_pairs(s, Some(&mut pairs)).unwrap();
    assert!(pairs.iter().all(|p| p[0] < p[1]), "{}", bp.name());
    assert_eq!(stats.pairs, pairs.len() as u64);
    canonicalize(&mut pairs);
    (pairs, stats.tests)
}

#[test]
fn peers_match_brute_force_and_sap_counts() {
    let mut scenes: Vec<Vec<Sphere>> = [
        (SceneKind::Paper, 2000),
        (SceneKind::MixedRadii, 2000),
        (SceneKind::Clusters, 2000),
        (SceneKind::Giant, 800),
        (SceneKind::LineX, 500),
        (SceneKind::OnePoint, 150),
    ]
    .iter()
    .map(|&(kind, n)| Scene::generate(kind, &SceneParams::new(n, 5)).spheres)
    .collect();
    // Exact contacts: boxes touching at one face.
    scenes.push(vec![
        Sphere::new(Vec3::ZERO, 1.0),
        Sphere::new(Vec3::new(2.0, 0.0, 0.0), 1.0),
        Sphere::new(Vec3::new(2.0, 3.0, 0.0), 2.0),
    ]);
    scenes.push(vec![Sphere::new(Vec3::ONE, 1.0)]);
    for s in &scenes {
        let (expected, _) = pairs_of(broad_phase(Method::BruteForce).as_mut(), s);
        let (_, sap_tests) = pairs_of(broad_phase(Method::Sap).as_mut(), s);
        for name in PEER_NAMES {
            let mut bp = peer(name).unwrap();
            assert_eq!(bp.name(), name);
            let (pairs, tests) = pairs_of(bp.as_mut(), s);
            assert!(
                pairs == expected,
                "{name}: {} vs {} pairs",
                pairs.len(),
                expected.len()
            );
            assert_eq!(tests, sap_tests, "{name}");
        }
    }
    assert!(peer("peer-nothing").is_none());
}
