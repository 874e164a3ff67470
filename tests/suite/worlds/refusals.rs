//! World batches refusing what they cannot do: bad input, the stored-pair limit and the
//! memory budget, on every CPU method and `auto` (the GPU's batches through the shared checks).

use super::{batches, generated, oracle};
use glam::Vec3;
use sweepfan::{Error, SHARED, Sphere, WorldBroadPhase, WorldPairs};
use sweepfan_scenes::SceneKind;

/// An empty batch has no pairs; world ids of another length and a NaN are refused, naming
/// them; then the batch still works, a smaller batch after a larger one.
pub(crate) fn check_empty_and_bad_input(batch: &mut dyn WorldBroadPhase) {
    let mut out = WorldPairs::new();
    let stats = batch.find_pairs(&[], &[], Some(&mut out)).unwrap();
    assert_eq!((stats.pairs, out.len(), out.worlds().len()), (0, 0, 0));
    let s = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
    match batch.find_pairs(&s, &[0], Some(&mut out)) {
        Err(Error::LengthMismatch {
            argument: "worlds",
            given: 1,
            expected: 2,
            message,
        }) => assert!(message.contains("1 world ids for 2"), "{message}"),
        other => panic!("expected a length mismatch, got {other:?}"),
    }
    let bad = [s[0], Sphere::new(Vec3::new(f32::NAN, 0.0, 0.0), 1.0)];
    assert!(matches!(
        batch.find_pairs(&bad, &[0, 1], Some(&mut out)),
        Err(Error::InvalidObject { .. })
    ));
    batch.find_pairs(&s, &[5, 5], Some(&mut out)).unwrap();
    assert_eq!(out.of(5), &[[0, 1]]);
    check_bad_spheres_anywhere(batch);
}

/// A bad sphere anywhere in a batch (a late world of many, a world of one, a shared object,
/// worlds in order or interleaved, two bad ones) fails naming the lowest bad index, leaving
/// no pairs behind: in small worlds (each validated by the batch before its lean walk) and in
/// two worlds larger than any lean walk takes (each validated by the method's own call).
fn check_bad_spheres_anywhere(batch: &mut dyn WorldBroadPhase) {
    for (worlds, objects) in [(300, 20), (2, 4_200)] {
        check_bad_spheres_in(batch, worlds, objects);
    }
}

/// [`check_bad_spheres_anywhere`] in `worlds` worlds of `objects` spheres.
fn check_bad_spheres_in(batch: &mut dyn WorldBroadPhase, worlds: usize, objects: usize) {
    let (spheres, in_order) = generated(SceneKind::Paper, worlds, objects, |k| k as u32);
    let n = spheres.len();
    let interleaved: Vec<u32> = (0..n as u32).map(|i| i % worlds as u32).collect();
    let nan = Sphere::new(Vec3::new(0.0, f32::NAN, 0.0), 1.0);
    let negative = Sphere::new(Vec3::ZERO, -1.0);
    // (case, bad spheres at, an id changed: (index, world))
    let cases = [
        ("late world", vec![(n - 3, nan)], None),
        ("two bad", vec![(n - 1, nan), (n / 2, negative)], None),
        (
            "world of one",
            vec![(n - 1, negative)],
            Some((n - 1, 7_000)),
        ),
        ("shared", vec![(10, nan)], Some((10, SHARED))),
        ("shared last", vec![(n - 1, nan)], Some((n - 1, SHARED))),
    ];
    for ids in [&in_order, &interleaved] {
        for (name, bad, edit) in &cases {
            let (mut s, mut w) = (spheres.clone(), ids.clone());
            for &(i, sphere) in bad {
                s[i] = sphere;
            }
            if let Some((i, world)) = *edit {
                w[i] = world;
            }
            let lowest = bad.iter().map(|b| b.0).min().unwrap();
            let mut out = WorldPairs::new();
            batch.find_pairs(&spheres, ids, Some(&mut out)).unwrap();
            match batch.find_pairs(&s, &w, Some(&mut out)) {
                Err(Error::InvalidObject { index, .. }) => {
                    assert_eq!(
                        index,
                        lowest,
                        "{}: {worlds} x {objects}: {name}",
                        batch.name()
                    )
                }
                other => panic!(
                    "{}: {worlds} x {objects}: {name}: expected InvalidObject, got {other:?}",
                    batch.name()
                ),
            }
            let left = out.len();
            assert_eq!(
                left,
                0,
                "{}: {worlds} x {objects}: {name}: pairs left behind",
                batch.name()
            );
        }
    }
}

#[test]
fn empty_batches_and_bad_input() {
    for factory in batches() {
        check_empty_and_bad_input(&mut factory.make());
    }
}

/// Bad input wins over a pair limit passed; a pair limit one short of a batch's pairs (50 worlds
/// of 80) fails naming the count, counting alone still counts them, and the limit at the count
/// stores them all.
pub(crate) fn check_pair_limit(batch: &mut dyn WorldBroadPhase) {
    // Bad input wins over a world's call past the limit, wherever the bad sphere is: two
    // worlds larger than any lean walk, a limit of one pair, the last sphere NaN.
    let (mut big, big_ids) = generated(SceneKind::Paper, 2, 4_200, |k| k as u32);
    let last = big.len() - 1;
    big[last].radius = f32::NAN;
    batch.set_pair_limit(1);
    match batch.find_pairs(&big, &big_ids, Some(&mut WorldPairs::new())) {
        Err(Error::InvalidObject { index, .. }) => assert_eq!(index, last, "{}", batch.name()),
        other => panic!("{}: expected InvalidObject, got {other:?}", batch.name()),
    }

    let (spheres, ids) = generated(SceneKind::Paper, 50, 80, |k| k as u32);
    let total: usize = oracle(&spheres, &ids).iter().map(|(_, p)| p.len()).sum();
    assert!(total > 10);
    batch.set_pair_limit(total as u64 - 1);
    let mut out = WorldPairs::new();
    match batch.find_pairs(&spheres, &ids, Some(&mut out)) {
        Err(e @ Error::TooLarge { .. }) => {
            assert!(
                e.to_string().contains(&format!("{total} touching pairs")),
                "{e}"
            )
        }
        other => panic!("{}: expected TooLarge, got {other:?}", batch.name()),
    }
    assert_eq!(
        batch.find_pairs(&spheres, &ids, None).unwrap().pairs,
        total as u64
    );
    batch.set_pair_limit(total as u64);
    batch.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
    assert_eq!(out.len(), total);

    // Past the limit inside one call of the method (a world larger than any lean walk, or the
    // shared objects' own pairs): the batch goes on counting and names every world's pairs
    // (the CPU's named that call's own count: 3 pairs of the shared objects where 10 touch).
    let (mut large, mut large_ids) = generated(SceneKind::Paper, 1, 4_200, |_| 0);
    let (small, small_ids) = generated(SceneKind::Paper, 20, 80, |k| k as u32 + 1);
    large.extend(small);
    large_ids.extend(small_ids);
    let point = vec![Sphere::new(Vec3::ZERO, 1.0); 5];
    let shared_ids = vec![SHARED, SHARED, SHARED, 0, 0];
    for (what, spheres, ids) in [
        ("a large world", &large, &large_ids),
        ("shared", &point, &shared_ids),
    ] {
        let groups = oracle(spheres, ids);
        let total: usize = groups.iter().map(|(_, p)| p.len()).sum();
        let largest = groups.iter().map(|(_, p)| p.len()).max().unwrap();
        assert!(
            largest > 1 && total > largest,
            "{what}: {largest} of {total}"
        );
        batch.set_pair_limit(1);
        match batch.find_pairs(spheres, ids, Some(&mut out)) {
            Err(e @ Error::TooLarge { .. }) => assert!(
                e.to_string()
                    .starts_with(&format!("too large: {total} touching pairs")),
                "{}: {what}: {e}",
                batch.name()
            ),
            other => panic!("{}: {what}: expected TooLarge, got {other:?}", batch.name()),
        }
        batch.set_pair_limit(total as u64);
        batch.find_pairs(spheres, ids, Some(&mut out)).unwrap();
        assert_eq!(out.len(), total, "{}: {what}", batch.name());
    }
}

#[test]
fn the_pair_limit_counts_over_all_worlds() {
    for factory in batches() {
        check_pair_limit(&mut factory.make());
    }
}

/// A batch whose pairs do not fit the memory it may use is refused as too large, never an
/// abort (docs/design.md §9.14), whichever method walks its worlds: one world of 2,000 spheres
/// all touching (about 2M pairs, 16 MB) under a budget of 4 MB, alone and beside small worlds;
/// within the budget the same methods store every pair.
#[test]
fn worlds_past_the_memory_budget_are_refused() {
    use sweepfan::{Limits, MemoryBudget};
    let limits = Limits::new().with_memory(MemoryBudget::Bytes(4 << 20));
    let clump: Vec<Sphere> = (0..2000)
        .map(|i| Sphere::new(Vec3::new(i as f32 * 1e-4, 0.0, 0.0), 1.0))
        .collect();
    let mut beside = clump.clone();
    beside.extend((0..200).map(|i| Sphere::new(Vec3::new(0.0, 10.0 * i as f32, 0.0), 1.0)));
    let beside_ids: Vec<u32> = (0..beside.len())
        .map(|i| if i < 2000 { 7 } else { (i % 50) as u32 })
        .collect();
    for factory in batches() {
        let mut batch = factory.make();
        let name = batch.name().to_string();
        for (what, spheres, ids) in [
            ("one world", &clump, vec![0u32; clump.len()]),
            ("beside small ones", &beside, beside_ids.clone()),
        ] {
            let mut out = WorldPairs::new();
            let e = limits
                .run(|| batch.find_pairs(spheres, &ids, Some(&mut out)))
                .expect_err(&format!("{name}, {what}: refused"));
            assert!(matches!(e, Error::TooLarge { .. }), "{name}, {what}: {e}");
        }
        let small = &clump[..300];
        let mut out = WorldPairs::new();
        limits
            .run(|| batch.find_pairs(small, &[3; 300], Some(&mut out)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.pairs().len(), 300 * 299 / 2, "{name}");
    }
}
