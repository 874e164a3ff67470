//! The box broad phase by the caller's ids (docs/design.md §4.7) against brute force, on the CPU
//! and the GPU: random, clustered and adversarial scenes (exact touching on a lattice, identical
//! boxes past the GPU list's first capacity, points, -0.0, subnormals, giants among small
//! boxes, huge coordinates), ids random `u64` that are not positions, several frames of moves,
//! removals and insertions, the events checked against set differences of the oracle's pairs.

use crate::common::shared_gpu;
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};
use sweepfan::{Aabb, BoxBroadPhase, Error, Id, IdPair};

/// Brute force over every pair, with its own closed-interval test.
fn oracle(boxes: &BTreeMap<Id, Aabb>) -> BTreeSet<IdPair> {
    let all: Vec<(Id, Aabb)> = boxes.iter().map(|(&i, &b)| (i, b)).collect();
    let mut pairs = BTreeSet::new();
    for (k, (a, p)) in all.iter().enumerate() {
        for (b, q) in &all[k + 1..] {
            let touch = (0..3).all(|ax| p.min[ax] <= q.max[ax] && q.min[ax] <= p.max[ax]);
            if touch {
                pairs.insert([*a.min(b), *a.max(b)]);
            }
        }
    }
    pairs
}

fn cube(c: Vec3, half: Vec3) -> Aabb {
    Aabb::new(c - half, c + half)
}

fn random_scene(rng: &mut ChaCha8Rng, n: usize) -> Vec<Aabb> {
    (0..n)
        .map(|_| {
            let c = Vec3::new(rng.random(), rng.random(), rng.random()) * 30.0 - 15.0;
            let half = Vec3::new(rng.random(), rng.random(), rng.random()) * 1.5;
            cube(c, half)
        })
        .collect()
}

fn clustered_scene(rng: &mut ChaCha8Rng, n: usize) -> Vec<Aabb> {
    let centres: Vec<Vec3> = (0..6)
        .map(|_| Vec3::new(rng.random(), rng.random(), rng.random()) * 100.0)
        .collect();
    (0..n)
        .map(|k| {
            let c = centres[k % centres.len()]
                + Vec3::new(rng.random(), rng.random(), rng.random()) * 3.0;
            // Some flat boxes and some points.
            let half = match k % 7 {
                0 => Vec3::ZERO,
                1 => Vec3::new(0.5, 0.0, 0.5),
                _ => Vec3::splat(rng.random::<f32>() * 0.4),
            };
            cube(c, half)
        })
        .collect()
}

/// Exact touching (faces, edges, corners of a unit lattice), 400 identical boxes (79,800 pairs:
/// past the GPU list's first capacity), -0.0 against +0.0, subnormal coordinates, points on
/// faces, a few giants among small boxes, coordinates near 1e30.
fn adversarial_scene() -> Vec<Aabb> {
    let mut v = Vec::new();
    for x in 0..8 {
        for y in 0..8 {
            for z in 0..4 {
                let lo = Vec3::new(x as f32, y as f32, z as f32);
                v.push(Aabb::new(lo, lo + Vec3::ONE));
            }
        }
    }
    let same = Aabb::new(Vec3::splat(50.0), Vec3::splat(51.0));
    v.extend(std::iter::repeat_n(same, 400));
    let tiny = f32::from_bits(1); // the smallest subnormal
    v.push(Aabb::new(
        Vec3::new(-1.0, 100.0, 0.0),
        Vec3::new(-0.0, 101.0, 1.0),
    ));
    v.push(Aabb::new(
        Vec3::new(0.0, 100.0, 0.0),
        Vec3::new(1.0, 101.0, 1.0),
    ));
    v.push(Aabb::new(
        Vec3::new(tiny, 100.0, 0.0),
        Vec3::new(2.0, 101.0, 1.0),
    ));
    v.push(Aabb::new(
        Vec3::new(-3.0, 100.0, 0.0),
        Vec3::new(2.0 * tiny, 101.0, 1.0),
    ));
    v.push(Aabb::new(
        Vec3::new(-3.0, 100.0, 2.0),
        Vec3::new(tiny, 101.0, 3.0),
    ));
    v.push(Aabb::new(
        Vec3::new(3.0 * tiny, 100.0, 2.0),
        Vec3::new(4.0, 101.0, 3.0),
    ));
    let point = Vec3::new(8.0, 3.5, 2.0);
    v.push(Aabb::new(point, point));
    for k in 0..5 {
        let y = 10.0 * k as f32;
        v.push(Aabb::new(
            Vec3::new(-1e4, y, -1e4),
            Vec3::new(1e4, y + 0.5, 1e4),
        ));
    }
    v.push(Aabb::new(Vec3::splat(1e30), Vec3::splat(1.0000001e30)));
    v.push(Aabb::new(Vec3::splat(1.0000001e30), Vec3::splat(2e30)));
    v.push(Aabb::new(Vec3::splat(-3e38), Vec3::splat(3e38)));
    v
}

/// One broad phase through three frames of the scene: all of it under random ids; then moves,
/// removals and insertions; then most removed. Each frame's pairs and events against brute
/// force. Returns every frame's pairs, for comparing backends.
fn run_frames(broad: &mut BoxBroadPhase, scene: &[Aabb], seed: u64) -> Vec<Vec<IdPair>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut held = BTreeMap::new();
    let ids: Vec<Id> = scene.iter().map(|_| rng.random()).collect();
    held.extend(ids.iter().copied().zip(scene.iter().copied()));
    assert_eq!(held.len(), scene.len(), "random ids collided");
    broad.set_many(&ids, scene).unwrap();
    let mut previous = BTreeSet::new();
    let mut frames = Vec::new();
    // Frames after the first go into one frame of the caller's, left holding junk before.
    let mut kept = sweepfan::BoxFrame {
        found: vec![[7, 7]; 3],
        lost: vec![[8, 8]],
        persisting: 99,
        ..Default::default()
    };
    for frame in 0..3 {
        if frame == 1 {
            for (k, &id) in ids.iter().enumerate() {
                match k % 5 {
                    0 => {
                        let b = held[&id];
                        let d = Vec3::new(rng.random(), rng.random(), rng.random()) - 0.5;
                        let moved = Aabb::new(b.min + d, b.max + d);
                        broad.set(id, moved).unwrap();
                        held.insert(id, moved);
                    }
                    1 => {
                        assert_eq!(broad.remove(id), held.remove(&id));
                    }
                    _ => {}
                }
            }
            let new_ids: Vec<Id> = (0..scene.len() / 10).map(|_| rng.random()).collect();
            let new_boxes: Vec<Aabb> = new_ids
                .iter()
                .map(|_| scene[rng.random_range(0..scene.len())])
                .collect();
            broad.set_many(&new_ids, &new_boxes).unwrap();
            held.extend(new_ids.into_iter().zip(new_boxes));
        }
        if frame == 2 {
            let keep: Vec<Id> = held.keys().copied().step_by(9).collect();
            for id in held.keys().copied().collect::<Vec<_>>() {
                if !keep.contains(&id) {
                    assert!(broad.remove(id).is_some());
                }
            }
            held.retain(|id, _| keep.contains(id));
        }
        assert_eq!(broad.len(), held.len());
        let got = if frame == 0 {
            broad.update()
        } else {
            broad.update_into(&mut kept).map(|()| kept.clone())
        }
        .unwrap_or_else(|e| panic!("{} frame {frame}: {e}", broad.name()));
        let want = oracle(&held);
        let pairs: Vec<IdPair> = broad.pairs().to_vec();
        let name = broad.name();
        let got_set: BTreeSet<IdPair> = pairs.iter().copied().collect();
        assert_eq!(
            got_set.len(),
            pairs.len(),
            "{name} frame {frame}: a pair twice"
        );
        assert!(pairs.is_sorted(), "{name} frame {frame}: pairs not sorted");
        let extra: Vec<_> = got_set.difference(&want).take(5).collect();
        let missing: Vec<_> = want.difference(&got_set).take(5).collect();
        assert!(
            extra.is_empty() && missing.is_empty(),
            "{name} frame {frame}: {} pairs, brute force {}; extra {extra:?}, missing {missing:?}",
            pairs.len(),
            want.len()
        );
        let found: Vec<IdPair> = want.difference(&previous).copied().collect();
        let lost: Vec<IdPair> = previous.difference(&want).copied().collect();
        assert_eq!(got.found, found, "{name} frame {frame}: found");
        assert_eq!(got.lost, lost, "{name} frame {frame}: lost");
        let persisting = want.intersection(&previous).count() as u64;
        assert_eq!(
            got.persisting, persisting,
            "{name} frame {frame}: persisting"
        );
        assert_eq!(got.stats.pairs, want.len() as u64, "{name} frame {frame}");
        previous = want;
        frames.push(pairs);
    }
    frames
}

fn scenes() -> Vec<(&'static str, Vec<Aabb>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    vec![
        ("random", random_scene(&mut rng, 1500)),
        ("clustered", clustered_scene(&mut rng, 1200)),
        ("adversarial", adversarial_scene()),
    ]
}

#[test]
fn cpu_boxes_by_id_match_brute_force_over_frames() {
    for (what, scene) in scenes() {
        let frames = run_frames(&mut BoxBroadPhase::cpu(), &scene, 7);
        assert!(
            frames[0].len() > scene.len() / 4,
            "{what}: too few pairs to mean much"
        );
    }
}

#[test]
fn gpu_boxes_by_id_match_brute_force_and_the_cpu() {
    let Some(ctx) = shared_gpu() else { return };
    let mut gpu = BoxBroadPhase::gpu(ctx).unwrap();
    for (what, scene) in scenes() {
        let on_gpu = run_frames(&mut gpu, &scene, 7);
        let on_cpu = run_frames(&mut BoxBroadPhase::cpu(), &scene, 7);
        assert!(
            on_gpu == on_cpu,
            "{what}: the GPU's pairs differ from the CPU's"
        );
        gpu.clear();
        gpu.update().unwrap();
    }
}

/// `update_into` refills the caller's lists in their allocations, and `set_from` takes
/// `(id, box)` items as `set_many` takes slices, all or nothing.
#[test]
fn update_into_reuses_the_callers_lists_and_set_from_takes_items() {
    let unit = |x: f32| cube(Vec3::new(x, 0.0, 0.0), Vec3::splat(0.5));
    let mut broad = BoxBroadPhase::cpu();
    let row: BTreeMap<Id, Aabb> = (0..100u64).map(|i| (i * 3, unit(i as f32 * 0.9))).collect();
    broad.set_from(row.iter().map(|(&id, &b)| (id, b))).unwrap();
    let mut frame = sweepfan::BoxFrame::default();
    broad.update_into(&mut frame).unwrap();
    assert_eq!(frame.found.len(), 99);
    let (found_at, capacity) = (frame.found.as_ptr(), frame.found.capacity());
    // The boxes shuffled along the row: still 99 pairs, most between other ids.
    let moved: Vec<(Id, Aabb)> = (0..100u64)
        .map(|i| (i * 3, unit(((i * 37) % 100) as f32 * 0.9)))
        .collect();
    broad.set_from(moved).unwrap();
    broad.update_into(&mut frame).unwrap();
    let (found, lost) = (frame.found.len(), frame.lost.len());
    assert!(found == lost && found > 50, "{found} found, {lost} lost");
    assert_eq!(frame.persisting as usize + found, 99);
    assert_eq!(
        (frame.found.as_ptr(), frame.found.capacity()),
        (found_at, capacity)
    );
    // A bad item: nothing changes.
    let bad = [(1, unit(0.0)), (3, Aabb::new(Vec3::ONE, Vec3::ZERO))];
    assert!(broad.set_from(bad).is_err());
    assert_eq!((broad.len(), broad.get(1)), (100, None));
}

#[test]
fn bad_boxes_are_refused_by_id_and_change_nothing() {
    let mut broad = BoxBroadPhase::cpu();
    let ok = Aabb::new(Vec3::ZERO, Vec3::ONE);
    broad.set_many(&[5, 6], &[ok, ok]).unwrap();
    let nan = Aabb::new(Vec3::new(0.0, f32::NAN, 0.0), Vec3::ONE);
    let inverted = Aabb::new(Vec3::new(0.0, 0.0, 2.0), Vec3::ONE);
    let infinite = Aabb::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 1.0, 1.0));
    for (bad, expect) in [
        (nan, "min.y is NaN"),
        (inverted, "min.z = 2 is above max.z = 1"),
        (infinite, "max.x is infinite"),
    ] {
        match broad.set_many(&[7, 99, 8], &[ok, bad, ok]) {
            Err(Error::InvalidId { id: 99, problem }) => assert_eq!(problem, expect),
            other => panic!("expected object id 99 to be refused, got {other:?}"),
        }
        assert_eq!(broad.len(), 2, "a refused call changed the set");
    }
    match broad.set_many(&[7, 8, 7], &[ok, ok, ok]) {
        Err(e @ Error::InvalidId { id: 7, .. }) => {
            assert_eq!(e.to_string(), "object id 7: given twice in one call")
        }
        other => panic!("expected the repeated id to be refused, got {other:?}"),
    }
    assert!(matches!(
        broad.set_many(&[1, 2], &[ok]),
        Err(Error::LengthMismatch { argument: "ids", given: 2, expected: 1, message })
            if message.contains("2 ids for 1 boxes")
    ));
    assert_eq!(broad.len(), 2);
    assert_eq!(broad.remove(12345), None);
    assert_eq!(broad.update().unwrap().found, [[5, 6]]);
    // The positional job names the position.
    let mut sweep = sweepfan::cpu::BoxSweep::new();
    let err = sweepfan::AabbOverlaps::aabb_overlaps(&mut sweep, &[ok, nan], &mut Vec::new());
    assert!(
        matches!(err, Err(Error::InvalidObject { index: 1, .. })),
        "{err:?}"
    );
}

/// Brute force within worlds: pairs of boxes of one world, or with a `SHARED` one.
fn world_oracle(boxes: &BTreeMap<Id, (Aabb, u32)>) -> BTreeSet<IdPair> {
    let all: Vec<(Id, Aabb, u32)> = boxes.iter().map(|(&i, &(b, w))| (i, b, w)).collect();
    let mut pairs = BTreeSet::new();
    for (k, (a, p, wa)) in all.iter().enumerate() {
        for (b, q, wb) in &all[k + 1..] {
            let same = wa == wb || *wa == sweepfan::SHARED || *wb == sweepfan::SHARED;
            let touch = (0..3).all(|ax| p.min[ax] <= q.max[ax] && q.min[ax] <= p.max[ax]);
            if same && touch {
                pairs.insert([*a.min(b), *a.max(b)]);
            }
        }
    }
    pairs
}

/// Two ids `check_worlds` keeps in place and moves to another world together.
const PINNED: [Id; 2] = [5, 6];

/// Worlds overlapping in space (each the same random region), a floor and a wall shared by all,
/// over frames of moves, world changes, removals and insertions: pairs and events against the
/// world oracle, on `broad`.
fn check_worlds(mut broad: BoxBroadPhase, label: &str) {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let mut held: BTreeMap<Id, (Aabb, u32)> = BTreeMap::new();
    let worlds = 40u32;
    let mut ids = Vec::new();
    let mut boxes = Vec::new();
    let mut in_world = Vec::new();
    for k in 0..worlds * 30 {
        ids.push(rng.random::<u64>() >> 1);
        boxes.push(random_scene(&mut rng, 1)[0]);
        in_world.push(k % worlds + 1000);
    }
    let floor = Aabb::new(Vec3::new(-20.0, -16.0, -20.0), Vec3::new(20.0, -14.0, 20.0));
    let wall = Aabb::new(Vec3::new(14.0, -20.0, -20.0), Vec3::new(16.0, 20.0, 20.0));
    ids.extend([u64::MAX, 7]);
    boxes.extend([floor, wall]);
    in_world.extend([sweepfan::SHARED, sweepfan::SHARED]);
    // Two touching boxes of world 1000, kept in place (they change world after frame 1).
    let pinned = cube(Vec3::new(-30.0, 30.0, 0.0), Vec3::splat(1.0));
    ids.extend(PINNED);
    boxes.extend([pinned, pinned]);
    in_world.extend([1000, 1000]);
    broad.set_many_in_worlds(&ids, &boxes, &in_world).unwrap();
    for ((&i, &b), &w) in ids.iter().zip(&boxes).zip(&in_world) {
        held.insert(i, (b, w));
    }
    let mut before = BTreeSet::new();
    // The boxes as they were at the last update (the lost pairs' worlds are theirs).
    let mut held_before = held.clone();
    for frame in 0..4 {
        let f = broad
            .update()
            .unwrap_or_else(|e| panic!("{label}, frame {frame}: {e}"));
        let now = world_oracle(&held);
        // A pair's world: its boxes', a shared box's partner's.
        let world_of = |at: &BTreeMap<Id, (Aabb, u32)>, [a, b]: IdPair| match at[&a].1 {
            sweepfan::SHARED => at[&b].1,
            w => w,
        };
        // The events are the differences of the pairs with their worlds: a touching pair
        // whose boxes changed world together is lost in the old and found in the new.
        let with_worlds = |pairs: &BTreeSet<IdPair>, at: &BTreeMap<Id, (Aabb, u32)>| {
            pairs
                .iter()
                .map(|&p| (p, world_of(at, p)))
                .collect::<BTreeSet<(IdPair, u32)>>()
        };
        let (now_w, before_w) = (with_worlds(&now, &held), with_worlds(&before, &held_before));
        let (found, found_worlds): (Vec<IdPair>, Vec<u32>) =
            now_w.difference(&before_w).copied().unzip();
        let (lost, lost_worlds): (Vec<IdPair>, Vec<u32>) =
            before_w.difference(&now_w).copied().unzip();
        assert!(
            frame == 0 || !f.lost.is_empty(),
            "{label}, frame {frame}: nothing lost"
        );
        assert_eq!(
            broad.pairs(),
            now.iter().copied().collect::<Vec<_>>(),
            "{label} {frame}"
        );
        let moved_together = now
            .intersection(&before)
            .filter(|&&p| world_of(&held, p) != world_of(&held_before, p))
            .count();
        assert_eq!(
            f.persisting,
            (now.intersection(&before).count() - moved_together) as u64,
            "{label}, frame {frame}"
        );
        if frame == 2 {
            assert!(
                moved_together > 0,
                "{label}: no touching pair changed world"
            );
        }
        held_before = held.clone();
        assert_eq!(
            (f.found, f.found_worlds, f.lost, f.lost_worlds),
            (found, found_worlds, lost, lost_worlds),
            "{label}, frame {frame}: events"
        );
        assert!(
            now.iter().any(|p| p.contains(&u64::MAX)),
            "the floor meets worlds"
        );
        before = now;
        // Move a third, send a few to another world, remove some, add some (world 0 included).
        let keys: Vec<Id> = held.keys().copied().collect();
        // The floor and the pinned pair stay where they are.
        let moves = keys.iter().step_by(3);
        for &id in moves.filter(|&&id| id != u64::MAX && !PINNED.contains(&id)) {
            let (_, w) = held[&id];
            let moved = random_scene(&mut rng, 1)[0];
            let to = if rng.random_range(0..5) == 0 && w != sweepfan::SHARED {
                rng.random_range(1000..1000 + worlds)
            } else {
                w
            };
            broad.set_many_in_worlds(&[id], &[moved], &[to]).unwrap();
            held.insert(id, (moved, to));
        }
        // After frame 1, the pinned pair (touching, world 1000) moves to another world
        // together, its boxes unmoved.
        if frame == 1 {
            for id in PINNED {
                broad
                    .set_many_in_worlds(&[id], &[held[&id].0], &[1000 + worlds])
                    .unwrap();
                held.insert(id, (held[&id].0, 1000 + worlds));
            }
        }
        for &id in keys.iter().skip(1).step_by(17) {
            if id != u64::MAX && !PINNED.contains(&id) {
                assert_eq!(broad.remove(id).map(|b| b.min), Some(held[&id].0.min));
                held.remove(&id);
            }
        }
        for _ in 0..20 {
            let id = rng.random::<u64>() >> 1;
            let b = random_scene(&mut rng, 1)[0];
            broad.set(id, b).unwrap();
            // A new box by `set` is in world 0.
            held.insert(id, (b, 0));
            assert_eq!(broad.world(id), Some(0));
        }
    }
    let e = broad
        .set_many_in_worlds(&[1, 2], &[floor, wall], &[3])
        .unwrap_err();
    assert!(e.to_string().contains("1 world ids for 2 boxes"), "{e}");
}

#[test]
fn boxes_by_id_in_worlds_on_the_cpu() {
    check_worlds(BoxBroadPhase::cpu(), "cpu");
}

#[test]
fn gpu_boxes_by_id_in_worlds() {
    let Some(ctx) = shared_gpu() else { return };
    check_worlds(BoxBroadPhase::gpu(ctx).unwrap(), "gpu");
}

/// At the smallest binding cap a context may set (`MIN_BINDING_CAP`), the GPU box broad phase
/// opens and runs (its first candidate list asked for 512 KiB, refused).
#[test]
fn gpu_boxes_by_id_open_at_the_smallest_binding_cap() {
    let Some(ctx) = crate::common::gpu_at_the_smallest_binding_cap() else {
        return;
    };
    let mut gpu = BoxBroadPhase::gpu(ctx).unwrap();
    let (_, scene) = scenes().swap_remove(0);
    let on_gpu = run_frames(&mut gpu, &scene, 2);
    assert!(on_gpu == run_frames(&mut BoxBroadPhase::cpu(), &scene, 2));
}

/// Boxes in worlds whose pairs fit the memory world by world but not together are refused as
/// too large (never an abort, docs/design.md §9.14), the broad phase unchanged: 30 worlds of
/// 300 identical boxes (44,850 pairs each, 1.8 MB with the job's ids and events, 54 MB in all)
/// under a budget of 16 MB. Five of those worlds fit.
#[test]
fn boxes_in_worlds_past_the_memory_budget_are_refused() {
    use sweepfan::{Limits, MemoryBudget};
    let limits = Limits::new().with_memory(MemoryBudget::Bytes(16 << 20));
    let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
    let ids: Vec<Id> = (0..9000).collect();
    let worlds: Vec<u32> = (0..9000).map(|i| i / 300).collect();
    let mut broads = vec![("cpu", BoxBroadPhase::cpu())];
    if let Some(ctx) = shared_gpu() {
        broads.push(("gpu", BoxBroadPhase::gpu(ctx).unwrap()));
    }
    for (label, mut broad) in broads {
        broad
            .set_many_in_worlds(&ids, &vec![unit; ids.len()], &worlds)
            .unwrap();
        match limits.run(|| broad.update()) {
            Err(e) => assert!(matches!(e, Error::TooLarge { .. }), "{label}: {e}"),
            Ok(f) => panic!("{label}: {} pairs found past the budget", f.found.len()),
        }
        assert!(
            broad.pairs().is_empty(),
            "{label}: the last update's pairs kept"
        );
        for &id in &ids[1500..] {
            broad.remove(id);
        }
        let frame = limits
            .run(|| broad.update())
            .unwrap_or_else(|e| panic!("{label}: five worlds fit: {e}"));
        assert_eq!(frame.found.len(), 5 * 300 * 299 / 2, "{label}");
    }
}

/// A caller's own box broad phase that returns positions past the boxes, or a box with
/// itself, is an error naming it, not a panic; a pair it returns twice is one pair.
#[test]
fn a_callers_box_job_is_checked() {
    use sweepfan::{Backend, Pair, Stats};
    struct Gives(Vec<Pair>);
    impl sweepfan::AabbOverlaps for Gives {
        fn name(&self) -> String {
            "gives".into()
        }
        fn backend(&self) -> Backend {
            Backend::Cpu
        }
        fn aabb_overlaps_unordered(
            &mut self,
            _: &[Aabb],
            out: &mut Vec<Pair>,
        ) -> sweepfan::Result<Stats> {
            out.clone_from(&self.0);
            Ok(Stats::default())
        }
    }
    let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    for bad in [vec![[0, 5]], vec![[1, 1]]] {
        let mut bp = BoxBroadPhase::new(Box::new(Gives(bad.clone())));
        bp.set_many(&[10, 20], &[unit(0.0), unit(0.5)]).unwrap();
        let e = bp.update().unwrap_err();
        assert!(e.to_string().contains("returned the pair"), "{bad:?}: {e}");
        // In worlds, where the batch's positions are mapped back first.
        let mut bp = BoxBroadPhase::new(Box::new(Gives(bad.clone())));
        bp.set_many_in_worlds(&[10, 20], &[unit(0.0), unit(0.5)], &[3, 3])
            .unwrap();
        let e = bp.update().unwrap_err();
        assert!(
            e.to_string().contains("returned the pair"),
            "{bad:?} in worlds: {e}"
        );
    }
    let mut bp = BoxBroadPhase::new(Box::new(Gives(vec![[0, 1], [1, 0], [0, 1]])));
    bp.set_many(&[10, 20], &[unit(0.0), unit(0.5)]).unwrap();
    let frame = bp.update().unwrap();
    assert_eq!(frame.found, [[10, 20]]);
}

/// Touching pairs that change world together, to world 0 (where every box then is, the
/// broad phase leaving its worlds) and back: each is lost in its old world and found in its
/// new, in pair order among the other events.
fn check_world_changes(mut broad: BoxBroadPhase, label: &str) {
    let at = |x: f32| cube(Vec3::new(x, 0.0, 0.0), Vec3::splat(1.0));
    // Pairs [1, 2] and [5, 6] touch; 3 and 4 touch nothing yet.
    let (ids, boxes) = (
        [1, 2, 3, 4, 5, 6],
        [at(0.0), at(1.5), at(10.0), at(20.0), at(30.0), at(31.0)],
    );
    broad.set_many_in_worlds(&ids, &boxes, &[3; 6]).unwrap();
    let f = broad.update().unwrap();
    assert_eq!(
        (f.found, f.found_worlds),
        (vec![[1, 2], [5, 6]], vec![3, 3]),
        "{label}"
    );
    // Every box to world 0; 4 moves onto 3.
    broad.set_many_in_worlds(&ids, &boxes, &[0; 6]).unwrap();
    broad.set(4, at(11.0)).unwrap();
    let f = broad.update().unwrap();
    assert_eq!(
        (f.found, f.found_worlds, f.lost, f.lost_worlds, f.persisting),
        (
            vec![[1, 2], [3, 4], [5, 6]],
            vec![0, 0, 0],
            vec![[1, 2], [5, 6]],
            vec![3, 3],
            0
        ),
        "{label}: to world 0"
    );
    // Back: 1 and 2 to world 7 together, 5 and 6 stay.
    broad
        .set_many_in_worlds(&[1, 2], &boxes[..2], &[7, 7])
        .unwrap();
    let f = broad.update().unwrap();
    assert_eq!(
        (f.found, f.found_worlds, f.lost, f.lost_worlds, f.persisting),
        (vec![[1, 2]], vec![7], vec![[1, 2]], vec![0], 2),
        "{label}: to world 7"
    );
}

#[test]
fn touching_pairs_that_change_world_are_lost_and_found() {
    check_world_changes(BoxBroadPhase::cpu(), "cpu");
    let Some(ctx) = shared_gpu() else { return };
    check_world_changes(BoxBroadPhase::gpu(ctx).unwrap(), "gpu");
}
