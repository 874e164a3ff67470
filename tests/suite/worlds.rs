//! Many worlds in one call (`cpu::WorldBatch`): every method's pairs, world by world, equal a
//! brute force over each world (with the shared objects) written here with the exact oracle,
//! on random, clustered and adversarial batches; counts, limits and bad input.

use crate::common::{exact_contact_scene, touch_oracle};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use sweepfan::cpu::WorldBatch;
use sweepfan::{Method, Pair, SHARED, Sphere, WorldPairs};
use sweepfan_scenes::random::vec3_in;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

mod refusals;
pub(crate) use refusals::{check_empty_and_bad_input, check_pair_limit};

/// The expected groups: each world's pairs among its objects and the shared ones (shared with
/// shared only in the group of `SHARED`), ascending worlds, `SHARED` last where present.
pub(crate) fn oracle(spheres: &[Sphere], worlds: &[u32]) -> Vec<(u32, Vec<Pair>)> {
    let mut members: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, &w) in worlds.iter().enumerate() {
        members.entry(w).or_default().push(i as u32);
    }
    let shared = members.get(&SHARED).cloned().unwrap_or_default();
    let touch = |a: u32, b: u32| touch_oracle(&spheres[a as usize], &spheres[b as usize]);
    let mut out = Vec::new();
    for (&w, own) in &members {
        let mut pairs = Vec::new();
        for (k, &a) in own.iter().enumerate() {
            for &b in &own[k + 1..] {
                if touch(a, b) {
                    pairs.push([a.min(b), a.max(b)]);
                }
            }
            if w != SHARED {
                for &s in &shared {
                    if touch(a, s) {
                        pairs.push([a.min(s), a.max(s)]);
                    }
                }
            }
        }
        pairs.sort_unstable();
        out.push((w, pairs));
    }
    out
}

fn batches() -> Vec<Box<dyn WorldBatchFactory>> {
    let mut out: Vec<Box<dyn WorldBatchFactory>> =
        Method::ALL.into_iter().map(|m| Box::new(m) as _).collect();
    out.push(Box::new(Auto));
    out
}

trait WorldBatchFactory {
    fn make(&self) -> WorldBatch;
}
impl WorldBatchFactory for Method {
    fn make(&self) -> WorldBatch {
        WorldBatch::new(*self)
    }
}
struct Auto;
impl WorldBatchFactory for Auto {
    fn make(&self) -> WorldBatch {
        WorldBatch::auto()
    }
}

/// Every method (and `auto`) on one batch: grouped pairs equal the oracle, offsets and worlds
/// consistent, the count-only call counts the same, a second call on the same instance too.
fn check(label: &str, spheres: &[Sphere], worlds: &[u32]) {
    let expected = oracle(spheres, worlds);
    let total: usize = expected.iter().map(|(_, p)| p.len()).sum();
    for factory in batches() {
        let mut batch = factory.make();
        let name = batch.name().to_string();
        for round in 0..2 {
            let mut out = WorldPairs::new();
            let stats = batch.find_pairs(spheres, worlds, Some(&mut out)).unwrap();
            let got: Vec<(u32, Vec<Pair>)> = out.iter().map(|(w, p)| (w, p.to_vec())).collect();
            assert!(
                got == expected,
                "{label}, {name}, round {round}: groups differ"
            );
            assert_eq!(stats.pairs, total as u64, "{label}, {name}");
            assert_eq!(
                out.offsets().len(),
                out.worlds().len() + 1,
                "{label}, {name}"
            );
            assert_eq!(out.world_of_each_pair().len(), out.len());
            let counted = batch.find_pairs(spheres, worlds, None).unwrap();
            assert_eq!(counted.pairs, total as u64, "{label}, {name}: count only");
        }
    }
}

/// `worlds` objects per world from generator `kind`, each world its own seed, world ids
/// `id(k)`, concatenated world by world.
pub(crate) fn generated(
    kind: SceneKind,
    worlds: usize,
    n: usize,
    id: impl Fn(usize) -> u32,
) -> (Vec<Sphere>, Vec<u32>) {
    let mut spheres = Vec::new();
    let mut ids = Vec::new();
    for k in 0..worlds {
        let s = Scene::generate(kind, &SceneParams::new(n, 100 + k as u64)).spheres;
        ids.extend(std::iter::repeat_n(id(k), s.len()));
        spheres.extend(s);
    }
    (spheres, ids)
}

/// Shuffles objects (and their ids) so that worlds interleave.
pub(crate) fn shuffled(spheres: &mut [Sphere], ids: &mut [u32], seed: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for i in (1..spheres.len()).rev() {
        let j = rng.random_range(0..=i);
        spheres.swap(i, j);
        ids.swap(i, j);
    }
}

/// 40 worlds of 60 all in the paper's box (worlds overlap in space, so pairs across worlds
/// abound), world by world and then interleaved, each batch handed to `check`.
pub(crate) fn overlapping_in_space(check: Check) {
    let batch = generated(SceneKind::Paper, 40, 60, |k| (k * 7) as u32);
    in_order_and_interleaved(check, "paper", batch, 3);
}

/// `check` on a batch world by world, then with its worlds interleaved (`shuffled` by `seed`).
fn in_order_and_interleaved(
    check: Check,
    what: &str,
    (mut spheres, mut ids): (Vec<Sphere>, Vec<u32>),
    seed: u64,
) {
    check(&format!("{what}, world by world"), &spheres, &ids);
    shuffled(&mut spheres, &mut ids, seed);
    check(&format!("{what}, interleaved"), &spheres, &ids);
}

#[test]
fn random_worlds_overlapping_in_space_interleaved_and_in_order() {
    overlapping_in_space(&check);
}

/// Giants reaching past 2^31 cells of their world's others (radius ratios 1e10 and more), in
/// worlds the grid walks itself (2 and 60 objects) and by its call (300), and a shared one:
/// every method's pairs equal the oracle's (the grid's giants once met nothing there).
#[test]
fn giants_far_larger_than_their_worlds_match_brute_force() {
    far_reaching_giants(&check);
}

/// [`giants_far_larger_than_their_worlds_match_brute_force`]'s batches, each handed to `check`.
pub(crate) fn far_reaching_giants(check: Check) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let (mut spheres, mut ids) = (Vec::new(), Vec::new());
    for (w, n, giant) in [
        (0u32, 1usize, Sphere::new(Vec3::ZERO, 1e7)),
        (1, 59, Sphere::new(Vec3::new(0.3, 0.2, 0.1), 1e9)),
        (2, 299, Sphere::new(Vec3::new(0.5, -0.5, 0.0), 3e12)),
        (3, 40, Sphere::new(Vec3::new(-1e7, 0.0, 0.0), 1e7)),
        // Shared: near the origin, as every world's centres (a far centre leaves the fast
        // cells' range, which the giants' reach once overflowed).
        (SHARED, 0, Sphere::new(Vec3::new(0.1, 0.0, -0.1), 2e9)),
    ] {
        for _ in 0..n {
            let c = vec3_in(&mut rng, -1.0..1.0);
            spheres.push(Sphere::new(c, 1e-3));
            ids.push(w);
        }
        spheres.push(giant);
        ids.push(w);
    }
    let expected = oracle(&spheres, &ids);
    let with_a_giant: usize = expected
        .iter()
        .map(|(_, p)| {
            p.iter()
                .filter(|p| spheres[p[1] as usize].radius > 1.0)
                .count()
        })
        .sum();
    assert!(
        with_a_giant > 200,
        "the giants touch their worlds: {with_a_giant}"
    );
    check("giants past 2^31 cells", &spheres, &ids);
    shuffled(&mut spheres, &mut ids, 7);
    check("giants past 2^31 cells, interleaved", &spheres, &ids);
}

/// A batch runs each method's own rule in every world (its lean walks included: sap's sweep,
/// the grid's below 128 objects): its tests are the sum of the method's calls on each world,
/// on worlds of every size around the lean walks' bounds, with giants and points among them.
#[test]
fn each_method_tests_in_a_batch_what_its_calls_test_world_by_world() {
    let mut spheres = Vec::new();
    let mut ids = Vec::new();
    let kinds = [
        SceneKind::Paper,
        SceneKind::Giant,
        SceneKind::MixedRadii,
        SceneKind::OnePoint,
    ];
    for (k, n) in [2usize, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 127, 128, 129, 300]
        .into_iter()
        .enumerate()
    {
        for (t, kind) in kinds.into_iter().enumerate() {
            let s = Scene::generate(kind, &SceneParams::new(n, (10 * k + t) as u64)).spheres;
            ids.extend(std::iter::repeat_n((10 * k + t) as u32, s.len()));
            spheres.extend(s);
        }
    }
    // Worlds whose intervals meet at their ends only: rows of unit spheres 2 apart on x (hi of
    // one is lo of the next, exactly), offset on y by 2 a row, so a cascade keeps them by an
    // equality; and exact contacts at small and large scale.
    for (k, rows) in [1usize, 3, 7].into_iter().enumerate() {
        for r in 0..rows {
            for c in 0..12 {
                let at = Vec3::new(2.0 * c as f32, 2.0 * r as f32, (c % 2) as f32 * 2.0);
                spheres.push(Sphere::new(at, 1.0));
                ids.push(1000 + k as u32);
            }
        }
    }
    for (k, scale) in [0.5f32, 1e3].into_iter().enumerate() {
        let s = exact_contact_scene(40, 7 + k as u64, scale);
        ids.extend(std::iter::repeat_n(2000 + k as u32, s.len()));
        spheres.extend(s);
    }
    shuffled(&mut spheres, &mut ids, 5);
    let mut members: BTreeMap<u32, Vec<Sphere>> = BTreeMap::new();
    for (s, &w) in spheres.iter().zip(&ids) {
        members.entry(w).or_default().push(*s);
    }
    for method in Method::ALL {
        let mut call = sweepfan::cpu::broad_phase(method);
        let mut want = (0, 0);
        for world in members.values() {
            let s = call.find_pairs(world, None).unwrap();
            want = (want.0 + s.tests, want.1 + s.pairs);
        }
        let got = WorldBatch::new(method)
            .find_pairs(&spheres, &ids, None)
            .unwrap();
        assert_eq!((got.tests, got.pairs), want, "{method:?}: (tests, pairs)");
    }
}

/// A check of one batch: its label, spheres and world ids.
pub(crate) type Check<'a> = &'a dyn Fn(&str, &[Sphere], &[u32]);

/// Clustered worlds of 0 to 90 objects with ids near the largest, world by world and then
/// interleaved, each batch handed to `check`.
pub(crate) fn clustered_and_unequal(check: Check) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let (mut spheres, mut ids) = (Vec::new(), Vec::new());
    for k in 0..30u32 {
        let n = rng.random_range(0..90);
        let s = Scene::generate(SceneKind::Clusters, &SceneParams::new(n, u64::from(k))).spheres;
        ids.extend(std::iter::repeat_n(u32::MAX - 1 - k * 1000, s.len()));
        spheres.extend(s);
    }
    in_order_and_interleaved(check, "clusters, unequal", (spheres, ids), 4);
}

#[test]
fn clustered_and_unequal_worlds() {
    clustered_and_unequal(&check);
}

/// One world of 1,500 beside 400 of 3, then the huge one alone (the batch is a plain call),
/// each handed to `check`.
pub(crate) fn huge_beside_tiny(check: Check) {
    // The huge world is past auto's own sweep (AUTO_SWEEP_MAX) and a chunk of its own.
    let (mut spheres, mut ids) = generated(SceneKind::Paper, 1, 1500, |_| 500);
    let (tiny, tiny_ids) = generated(SceneKind::Paper, 400, 3, |k| k as u32);
    spheres.extend(tiny);
    ids.extend(tiny_ids);
    check("huge and tiny", &spheres, &ids);
    check("one world", &spheres[..1500], &[42u32; 1500]);
}

#[test]
fn one_huge_world_beside_many_tiny_ones() {
    huge_beside_tiny(&check);
}

/// 25 worlds stacked exactly on top of each other, with exact and near contacts, then 20 line
/// worlds (every sweep's worst case), each batch handed to `check`. Returns the first.
pub(crate) fn identical_and_line_worlds(check: Check) -> (Vec<Sphere>, Vec<u32>) {
    let scene = exact_contact_scene(40, 5, 1.0);
    let copies = 25u32;
    let spheres: Vec<Sphere> = (0..copies).flat_map(|_| scene.iter().copied()).collect();
    let ids: Vec<u32> = (0..copies)
        .flat_map(|w| std::iter::repeat_n(w, scene.len()))
        .collect();
    check("identical", &spheres, &ids);
    let (lines, line_ids) = generated(SceneKind::LineX, 20, 50, |k| k as u32);
    check("lines", &lines, &line_ids);
    (spheres, ids)
}

#[test]
fn identical_and_line_worlds_find_the_same_pairs_each() {
    let (spheres, ids) = identical_and_line_worlds(&check);
    let copies = 25;
    let mut out = WorldPairs::new();
    WorldBatch::new(Method::Grid)
        .find_pairs(&spheres, &ids, Some(&mut out))
        .unwrap();
    let first = out.of(0).len();
    assert!(first > 0);
    for w in 0..copies as u32 {
        assert_eq!(out.of(w).len(), first, "world {w}");
    }
}

/// 30 worlds of 40 with a floor under the box, a wall through it and a ball touching both,
/// shared; then the shared objects alone, a pair of them, and one object beside them: each
/// batch handed to `check`. Returns the first batch.
pub(crate) fn with_shared_objects(check: Check) -> (Vec<Sphere>, Vec<u32>) {
    let (mut spheres, mut ids) = generated(SceneKind::Paper, 30, 40, |k| k as u32);
    let floor = Sphere::new(Vec3::new(0.0, -1000.0, 0.0), 960.0);
    let wall = Sphere::new(Vec3::new(1020.0, 0.0, 0.0), 1000.0);
    let ball = Sphere::new(Vec3::new(30.0, -45.0, 0.0), 20.0);
    for (k, s) in [floor, wall, ball].into_iter().enumerate() {
        let at = 17 * (k + 1);
        spheres.insert(at, s);
        ids.insert(at, SHARED);
    }
    check("shared", &spheres, &ids);
    check("shared only", &[floor], &[SHARED]);
    check("shared pair", &[floor, ball], &[SHARED, SHARED]);
    check(
        "one object and the shared",
        &[floor, ball, wall],
        &[SHARED, 3, SHARED],
    );
    // Many shared objects (more than the GPU grid takes) in a chain touching one another and
    // the worlds of one to three objects around them, interleaved.
    let (mut many, mut many_ids) = (Vec::new(), Vec::new());
    for k in 0..60 {
        let f = k as f32;
        many.push(Sphere::new(Vec3::new(f * 1.5, (f * 0.7) % 5.0, 0.0), 1.0));
        many_ids.push(SHARED);
    }
    for w in 0..40u32 {
        for j in 0..w % 3 + 1 {
            let f = (w * 3 + j) as f32;
            let at = Vec3::new((f * 2.3) % 95.0, (f * 1.1) % 8.0, j as f32 - 1.0);
            many.push(Sphere::new(at, 0.6));
            many_ids.push(w);
        }
    }
    shuffled(&mut many, &mut many_ids, 9);
    let want = oracle(&many, &many_ids);
    let crossing = want
        .iter()
        .filter(|(w, _)| *w != SHARED)
        .map(|(_, p)| p.len())
        .sum::<usize>();
    assert!(crossing > 30, "{crossing} pairs with the worlds' objects");
    check("many shared beside tiny worlds", &many, &many_ids);
    (spheres, ids)
}

#[test]
fn shared_objects_touch_every_world_and_each_other_once() {
    let (spheres, ids) = with_shared_objects(&check);
    let mut out = WorldPairs::new();
    WorldBatch::new(Method::Sap)
        .find_pairs(&spheres, &ids, Some(&mut out))
        .unwrap();
    assert_eq!(out.worlds().last(), Some(&SHARED));
    assert!(
        !out.of(SHARED).is_empty(),
        "the shared objects touch each other"
    );
    let touching_shared = (0..30u32)
        .filter(|&w| {
            out.of(w)
                .iter()
                .any(|p| p.iter().any(|&i| ids[i as usize] == SHARED))
        })
        .count();
    assert!(
        touching_shared > 20,
        "the floor and the wall reach most worlds: {touching_shared}"
    );
}

/// 2^16 worlds of two spheres, every other pair touching.
pub(crate) fn worlds_of_two() -> (Vec<Sphere>, Vec<u32>) {
    let mut spheres = Vec::new();
    let mut ids = Vec::new();
    for w in 0..1u32 << 16 {
        let gap = if w % 2 == 0 { 1.5 } else { 2.5 };
        spheres.push(Sphere::new(Vec3::ZERO, 1.0));
        spheres.push(Sphere::new(Vec3::new(gap, 0.0, 0.0), 1.0));
        ids.extend([w, w]);
    }
    (spheres, ids)
}

/// The pairs of [`worlds_of_two`]: one in each even world, none in the odd ones.
pub(crate) fn assert_worlds_of_two(out: &WorldPairs, what: &str) {
    assert_eq!(out.worlds().len(), 1 << 16, "{what}");
    assert_eq!(out.len(), 1 << 15, "{what}");
    for (w, pairs) in out.iter() {
        let expected: &[Pair] = if w % 2 == 0 {
            &[[2 * w, 2 * w + 1]]
        } else {
            &[]
        };
        assert_eq!(pairs, expected, "{what} world {w}");
    }
}

#[test]
fn many_worlds_of_two() {
    let (spheres, ids) = worlds_of_two();
    for batch in [
        WorldBatch::auto(),
        WorldBatch::new(Method::Grid),
        WorldBatch::new(Method::Sap),
    ] {
        let mut batch = batch;
        let mut out = WorldPairs::new();
        batch.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
        assert_worlds_of_two(&out, batch.name());
    }
}

/// Frame events per world from `batch` over moving worlds (each world a paper scene stepping on
/// its own, three shared objects still), against set differences of the oracle's groups; the
/// pairs rebuild from the events world by world every frame.
pub(crate) fn check_world_events(batch: &mut dyn sweepfan::WorldBroadPhase, frames: usize) {
    use std::collections::BTreeSet;
    use sweepfan::WorldEventTracker;
    let mut scenes: Vec<Scene> = (0..12)
        .map(|k| Scene::generate(SceneKind::Paper, &SceneParams::new(150, 40 + k)))
        .collect();
    let shared = [
        Sphere::new(Vec3::new(0.0, -1000.0, 0.0), 955.0),
        Sphere::new(Vec3::new(1000.0, 0.0, 0.0), 955.0),
        Sphere::new(Vec3::new(0.0, 30.0, 0.0), 8.0),
    ];
    let mut tracker = WorldEventTracker::new();
    let mut before: BTreeMap<u32, BTreeSet<Pair>> = BTreeMap::new();
    let (mut changes, mut out) = (0, WorldPairs::new());
    for frame in 0..frames {
        // World 5 is absent from every other frame: its pairs are then all lost or all found.
        let mut spheres: Vec<Sphere> = shared.to_vec();
        let mut ids = vec![SHARED; shared.len()];
        for (k, s) in scenes.iter().enumerate() {
            if k == 5 && frame % 2 == 1 {
                continue;
            }
            spheres.extend(&s.spheres);
            ids.extend(std::iter::repeat_n(k as u32, s.len()));
        }
        batch.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
        let events = tracker.update(&out).clone();
        let now: BTreeMap<u32, BTreeSet<Pair>> = oracle(&spheres, &ids)
            .into_iter()
            .map(|(w, p)| (w, p.into_iter().collect()))
            .collect();
        let worlds: BTreeSet<u32> = before.keys().chain(now.keys()).copied().collect();
        let worlds: Vec<u32> = worlds.into_iter().collect();
        assert_eq!(events.found.worlds(), worlds, "frame {frame}");
        assert_eq!(events.lost.worlds(), worlds, "frame {frame}");
        let empty = BTreeSet::new();
        let mut persisting = 0;
        for &w in &worlds {
            let (b, a) = (
                before.get(&w).unwrap_or(&empty),
                now.get(&w).unwrap_or(&empty),
            );
            let found: Vec<Pair> = a.difference(b).copied().collect();
            let lost: Vec<Pair> = b.difference(a).copied().collect();
            assert_eq!(events.found.of(w), found, "frame {frame}, world {w}: found");
            assert_eq!(events.lost.of(w), lost, "frame {frame}, world {w}: lost");
            persisting += a.intersection(b).count() as u64;
            if frame > 0 {
                changes += found.len() + lost.len();
            }
        }
        assert_eq!(events.persisting, persisting, "frame {frame}");
        before = now;
        for s in &mut scenes {
            s.step();
        }
    }
    assert!(changes > 50, "the worlds moved: {changes} events");
}

#[test]
fn events_per_world_on_the_cpu() {
    for mut batch in [WorldBatch::auto(), WorldBatch::new(Method::Grid)] {
        check_world_events(&mut batch, 5);
    }
}
