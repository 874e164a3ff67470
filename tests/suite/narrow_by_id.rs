//! The narrow phase by the caller's ids (`NarrowPhase::*_by_id`, docs/design.md §4.9): shapes
//! under scattered u64 ids, candidates by id in any order and orientation (as `BoxBroadPhase`
//! gives them, or shuffled and flipped), on the CPU and the GPU alike: the touching pairs the
//! exact oracles name, by id, `[min, max]`, sorted; contacts in the pairs' order and
//! orientation; bad ids refused with nothing left in the caller's list.

use crate::common::polygon_oracle;
use crate::narrow_phase::{backends, expected, scrambled_pairs};
use crate::sat_oracle::obb_expected;
use glam::Vec3;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::Shapes;
use sweepfan::{BoxBroadPhase, Contact, Error, Id, IdPair, Obb, Pair, Sphere};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

/// `n` distinct ids spread over the whole u64 range, in no order.
fn scattered_ids(n: usize, seed: u64) -> Vec<Id> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ids: Vec<Id> = Vec::with_capacity(n);
    while ids.len() < n {
        let id = rng.random::<u64>() | u64::from(rng.random_bool(0.1)) << 63;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Pairs of positions as pairs of ids, each in its orientation.
fn by_id(ids: &[Id], pairs: &[Pair]) -> Vec<IdPair> {
    pairs
        .iter()
        .map(|&[i, j]| [ids[i as usize], ids[j as usize]])
        .collect()
}

/// The oracle's pairs of positions as the by-id call must give them: `[min, max]` by id, sorted.
fn sorted_by_id(ids: &[Id], pairs: &[Pair]) -> Vec<IdPair> {
    let mut out: Vec<IdPair> = by_id(ids, pairs)
        .into_iter()
        .map(|[a, b]| [a.min(b), a.max(b)])
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn box_and_polygon_pairs_by_id_are_the_oracles_on_every_backend() {
    let boxes = random_boxes(400, 17);
    let ids = scattered_ids(boxes.len(), 1);
    // The same ids ascending (searched in place, no sort), another naming of the boxes.
    let mut ascending = ids.clone();
    ascending.sort_unstable();
    let candidates = scrambled_pairs(boxes.len(), 8);
    let touching = expected(&candidates, |i, j| {
        obb_expected(&boxes[i], &boxes[j]).expect("outside the oracle's band")
    });
    let want = sorted_by_id(&ids, &touching);
    let polygons = generate_polygons(SceneKind::Density, &SceneParams::new(300, 5)).unwrap();
    let polygon_ids = scattered_ids(polygons.len(), 2);
    let polygon_candidates = scrambled_pairs(polygons.len(), 9);
    let polygon_want = expected(&polygon_candidates, |i, j| {
        polygon_oracle(polygons[i].vertices(), polygons[j].vertices())
    });
    let polygon_want = sorted_by_id(&polygon_ids, &polygon_want);
    // The premises: touching and apart pairs both, and ids whose order is not the positions'.
    assert!(want.len() > 50 && polygon_want.len() > 50);
    assert!(!ids.is_sorted());
    let id_candidates = by_id(&ids, &candidates);
    let shapes = Shapes::Obbs(&boxes);
    for (name, mut narrow) in backends() {
        let mut got = vec![[1, 1]];
        let stats = narrow
            .pairs_by_id(&ids, shapes, &id_candidates, Some(&mut got))
            .unwrap();
        assert_eq!(got, want, "{name}");
        assert_eq!(
            (stats.tests, stats.pairs),
            (candidates.len() as u64, want.len() as u64),
            "{name}"
        );
        let counted = narrow
            .pairs_by_id(&ids, shapes, &id_candidates, None)
            .unwrap();
        assert_eq!(counted.pairs, want.len() as u64, "{name}: counting");
        narrow
            .pairs_by_id(
                &ascending,
                shapes,
                &by_id(&ascending, &candidates),
                Some(&mut got),
            )
            .unwrap();
        assert_eq!(
            got,
            sorted_by_id(&ascending, &touching),
            "{name}: ascending ids"
        );
        let candidates = by_id(&polygon_ids, &polygon_candidates);
        narrow
            .pairs_by_id(
                &polygon_ids,
                Shapes::Polygons(&polygons),
                &candidates,
                Some(&mut got),
            )
            .unwrap();
        assert_eq!(got, polygon_want, "{name}: polygons");
    }
}

/// The frame loop of a simulation: the box broad phase's pairs by id go to the narrow phase as
/// they are, and what comes back is the oracle's touching pairs among them.
#[test]
fn the_box_broad_phase_pairs_go_to_the_narrow_phase_as_they_are() {
    let boxes = random_boxes(600, 23);
    let ids = scattered_ids(boxes.len(), 3);
    let mut broad = BoxBroadPhase::cpu();
    let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
    broad.set_many(&ids, &aabbs).unwrap();
    broad.update().unwrap();
    let at = |id: Id| ids.iter().position(|&x| x == id).unwrap();
    let mut want: Vec<IdPair> = broad
        .pairs()
        .iter()
        .filter(|&&[a, b]| obb_expected(&boxes[at(a)], &boxes[at(b)]).expect("clear"))
        .copied()
        .collect();
    want.sort_unstable();
    assert!(
        want.len() > 20 && want.len() < broad.pairs().len(),
        "{}",
        want.len()
    );
    for (name, mut narrow) in backends() {
        let mut got = Vec::new();
        narrow
            .pairs_by_id(&ids, Shapes::Obbs(&boxes), broad.pairs(), Some(&mut got))
            .unwrap();
        assert_eq!(got, want, "{name}");
    }
}

/// Contacts by id follow the pairs' order and orientation: a pair given `[b, a]` has the normal
/// from b's shape towards a's (spheres: the closed form along the centres).
#[test]
fn contacts_by_id_follow_each_pair_as_given() {
    let spheres: Vec<Sphere> = (0..50)
        .map(|k| Sphere::new(Vec3::new(k as f32 * 1.5, 0.3 * (k % 4) as f32, 0.0), 1.0))
        .collect();
    let ids: Vec<Id> = (0..50u64).map(|k| 1_000_003 * (50 - k)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut pairs: Vec<IdPair> = (0..49)
        .map(|k| {
            let (a, b) = (ids[k], ids[k + 1]);
            if rng.random_bool(0.5) { [b, a] } else { [a, b] }
        })
        .collect();
    pairs.shuffle(&mut rng);
    let at = |id: Id| ids.iter().position(|&x| x == id).unwrap();
    let boxes = random_boxes(300, 6);
    let box_ids = scattered_ids(boxes.len(), 5);
    let box_pairs: Vec<Pair> = expected(&scrambled_pairs(boxes.len(), 7), |i, j| {
        obb_expected(&boxes[i], &boxes[j]) == Some(true)
    });
    assert!(box_pairs.len() > 5, "{}", box_pairs.len());
    for (name, mut narrow) in backends() {
        let mut got = vec![Contact::default()];
        narrow
            .contacts_by_id(&ids, Shapes::Spheres(&spheres), &pairs, &mut got)
            .unwrap();
        assert_eq!(got.len(), pairs.len(), "{name}");
        for (c, &[a, b]) in got.iter().zip(&pairs) {
            let (p, q) = (
                spheres[at(a)].center.as_dvec3(),
                spheres[at(b)].center.as_dvec3(),
            );
            let normal = (q - p) / (q - p).length();
            let depth = 2.0 - (q - p).length();
            assert!(
                (c.normal.as_dvec3() - normal).length() < 1e-5,
                "{name}: [{a}, {b}]"
            );
            assert!(
                (f64::from(c.depth) - depth).abs() < 1e-5,
                "{name}: [{a}, {b}]"
            );
        }
        // Boxes: the same contacts as by position.
        let mut want = Vec::new();
        narrow
            .contacts(Shapes::Obbs(&boxes), &box_pairs, &mut want)
            .unwrap();
        narrow
            .contacts_by_id(
                &box_ids,
                Shapes::Obbs(&boxes),
                &by_id(&box_ids, &box_pairs),
                &mut got,
            )
            .unwrap();
        assert_eq!(got, want, "{name}: boxes");
    }
}

#[test]
fn bad_ids_are_refused_and_leave_no_list() {
    let boxes = random_boxes(6, 2);
    let ids: Vec<Id> = vec![10, 20, 30, 40, 50, 60];
    for (name, mut narrow) in backends() {
        let mut out = vec![[1, 2]];
        let e = narrow
            .pairs_by_id(
                &[10, 20, 30, 20, 50, 60],
                Shapes::Obbs(&boxes),
                &[[10, 20]],
                Some(&mut out),
            )
            .unwrap_err();
        assert!(matches!(e, Error::InvalidId { id: 20, .. }), "{name}: {e}");
        assert!(out.is_empty(), "{name}: a refused call leaves no pairs");
        let e = narrow
            .pairs_by_id(&ids, Shapes::Obbs(&boxes), &[[10, 20], [30, 35]], None)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    argument: "candidates",
                    ..
                }
            ) && e.to_string().contains("pair 1 = [30, 35] names id 35"),
            "{name}: {e}"
        );
        let e = narrow
            .pairs_by_id(&ids, Shapes::Obbs(&boxes), &[[40, 40]], None)
            .unwrap_err();
        assert!(e.to_string().contains("with itself"), "{name}: {e}");
        let e = narrow
            .pairs_by_id(&ids[..5], Shapes::Obbs(&boxes), &[], None)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::LengthMismatch {
                    argument: "ids",
                    given: 5,
                    expected: 6,
                    ..
                }
            ),
            "{name}: {e}"
        );
        let mut contacts = vec![Contact::default()];
        let e = narrow
            .contacts_by_id(&ids, Shapes::Obbs(&boxes), &[[60, 7]], &mut contacts)
            .unwrap_err();
        assert!(e.to_string().contains("names id 7"), "{name}: {e}");
        assert!(
            contacts.is_empty(),
            "{name}: a refused call leaves no contacts"
        );
        // No shapes, no candidates: no pairs, not an error.
        narrow
            .pairs_by_id(&[], Shapes::Obbs(&[]), &[], Some(&mut out))
            .unwrap();
        assert!(out.is_empty(), "{name}");
    }
}
