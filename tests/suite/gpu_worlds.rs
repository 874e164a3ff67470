//! Many worlds in one GPU frame (`gpu::GpuWorldBatch`): pairs world by world against the
//! per-world brute force of `worlds.rs` (written with the exact oracle), test counts against a
//! count written here from the sweeps' rule, shared objects, adversarial batches, bad input.

use crate::common::overlap;
use crate::common::test_gpu;
use crate::worlds::{
    assert_worlds_of_two, clustered_and_unequal, far_reaching_giants, generated, huge_beside_tiny,
    identical_and_line_worlds, oracle, overlapping_in_space, shuffled, with_shared_objects,
    worlds_of_two,
};
use glam::Vec3;
use std::sync::{Arc, OnceLock};
use sweepfan::cpu::WorldBatch;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::GpuWorldBatch;
use sweepfan::{Error, Method, Pair, SHARED, Sphere, WorldBroadPhase, WorldPairs};
use sweepfan_scenes::SceneKind;

fn ctx() -> Option<Arc<GpuContext>> {
    static CTX: OnceLock<Option<Arc<GpuContext>>> = OnceLock::new();
    CTX.get_or_init(|| test_gpu().map(Arc::new)).clone()
}

/// The GPU batches: every method it runs, and auto.
fn batches(ctx: &Arc<GpuContext>) -> Vec<GpuWorldBatch> {
    let mut out: Vec<GpuWorldBatch> = Method::ALL
        .iter()
        .map(|&m| GpuWorldBatch::new(ctx.clone(), m).unwrap())
        .collect();
    out.push(GpuWorldBatch::auto(ctx.clone()).unwrap());
    assert_eq!(
        out.len(),
        Method::ALL.len() + 1,
        "every method batches worlds, and auto"
    );
    out
}

/// The tests of `xy` (`axes` 2) and `xyz` (3) on a batch: on each axis but the last, an object
/// of a world survives when it overlaps there another survivor of its world, or a shared
/// object (every one does past `GPU_CASCADE_SHARED_MAX` shared objects); shared objects always
/// survive. On the last axis, every pair of survivors of one world (or both shared)
/// overlapping there, and every survivor outside the shared ones against every shared one.
fn cascade_tests(axes: usize, spheres: &[Sphere], worlds: &[u32]) -> u64 {
    let mut by_world: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, &w) in worlds.iter().enumerate() {
        by_world.entry(w).or_default().push(i);
    }
    let shared = by_world.get(&SHARED).cloned().unwrap_or_default();
    let every = shared.len() > sweepfan::gpu::GPU_CASCADE_SHARED_MAX;
    let mut member = vec![true; spheres.len()];
    for axis in 0..axes - 1 {
        let before = member.clone();
        for (&w, objects) in &by_world {
            if w == SHARED {
                continue;
            }
            for &i in objects {
                let s = &spheres[i];
                let meets = |j: &usize| overlap(s, &spheres[*j], axis);
                member[i] = before[i]
                    && (objects.iter().any(|j| *j != i && before[*j] && meets(j))
                        || every
                        || shared.iter().any(meets));
            }
        }
    }
    let last = axes - 1;
    let mut tests = 0u64;
    for objects in by_world.values() {
        let alive: Vec<usize> = objects.iter().copied().filter(|&i| member[i]).collect();
        for (k, &i) in alive.iter().enumerate() {
            for &j in &alive[k + 1..] {
                tests += u64::from(overlap(&spheres[i], &spheres[j], last));
            }
        }
    }
    let outside = (0..spheres.len())
        .filter(|&i| member[i] && worlds[i] != SHARED)
        .count() as u64;
    tests + outside * shared.len() as u64
}

/// The tests of `min_axis` on a batch: within each world (and among the shared objects), each
/// object's fewest overlaps with the others of its world on one axis (`m`, and the lowest axis
/// with it); a pair is tested when it overlaps on the axis of its owner, the one of smaller
/// `(m, index)`; every object outside the shared ones tests every shared one.
fn min_axis_tests(spheres: &[Sphere], worlds: &[u32]) -> u64 {
    let mut by_world: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, &w) in worlds.iter().enumerate() {
        by_world.entry(w).or_default().push(i);
    }
    let mut tests = 0u64;
    for objects in by_world.values() {
        let choice: Vec<(usize, usize)> = objects
            .iter()
            .map(|&i| {
                let overlaps = |a: usize| {
                    let others = objects.iter().filter(|&&j| j != i);
                    others
                        .filter(|&&j| overlap(&spheres[i], &spheres[j], a))
                        .count()
                };
                (0..3).map(|a| (overlaps(a), a)).min().unwrap()
            })
            .collect();
        for (k, &i) in objects.iter().enumerate() {
            for (l, &j) in objects.iter().enumerate().skip(k + 1) {
                let owner_axis = if (choice[k].0, i) < (choice[l].0, j) {
                    choice[k].1
                } else {
                    choice[l].1
                };
                tests += u64::from(overlap(&spheres[i], &spheres[j], owner_axis));
            }
        }
    }
    let shared = by_world.get(&SHARED).map_or(0, Vec::len) as u64;
    tests + (spheres.len() as u64 - shared) * shared
}

/// The tests each batch's rule makes, counted pair by pair: within each world (and among the
/// shared objects), brute force tests every pair, sap every pair whose boxes overlap on all
/// three axes (the sweep's axis, then the two others), x every pair overlapping on x, origin
/// distance every pair whose keys `D = |c|` differ by at most `2 r_max + 1e-5 D` (the larger
/// key's; `r_max` the batch's largest radius); every object outside the shared ones tests every
/// shared one.
fn oracle_tests(method: Method, spheres: &[Sphere], worlds: &[u32]) -> u64 {
    use sweepfan::geom::sphere::{ORIGIN_KEY_SLACK, origin_key};
    match method {
        Method::Xy => return cascade_tests(2, spheres, worlds),
        Method::Xyz => return cascade_tests(3, spheres, worlds),
        Method::MinAxis => return min_axis_tests(spheres, worlds),
        _ => {}
    }
    let mut tests = 0u64;
    let shared = worlds.iter().filter(|&&w| w == SHARED).count() as u64;
    let limit = 2.0 * spheres.iter().map(|s| s.radius).fold(0.0f32, f32::max);
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            if worlds[i] != worlds[j] {
                continue;
            }
            let (a, b) = (&spheres[i], &spheres[j]);
            let tested = match method {
                Method::BruteForce => true,
                Method::X => overlap(a, b, 0),
                Method::OriginDistance => {
                    let (da, db) = (origin_key(a.center), origin_key(b.center));
                    let (near, far) = (da.min(db), da.max(db));
                    far - near <= limit + ORIGIN_KEY_SLACK * far
                }
                _ => (0..3).all(|axis| overlap(a, b, axis)),
            };
            if tested {
                tests += 1;
            }
        }
    }
    tests + (spheres.len() as u64 - shared) * shared
}

/// Every GPU batch on one batch of worlds: grouped pairs equal the oracle, the test count the
/// rule's, the count-only call the same count, twice on one instance.
fn check(label: &str, spheres: &[Sphere], worlds: &[u32]) {
    let Some(ctx) = ctx() else { return };
    check_on(&ctx, label, spheres, worlds);
}

/// [`check`] on the context `ctx`.
fn check_on(ctx: &Arc<GpuContext>, label: &str, spheres: &[Sphere], worlds: &[u32]) {
    let expected = oracle(spheres, worlds);
    let total: usize = expected.iter().map(|(_, p)| p.len()).sum();
    let shared = worlds.iter().filter(|&&w| w == SHARED).count();
    for mut batch in batches(ctx) {
        let name = batch.name().to_string();
        if name == "grid" && shared > sweepfan::gpu::GPU_GRID_SHARED_MAX {
            continue; // refused, as gpu_worlds_empty_bad_input_and_refusals checks
        }
        let method = if name == "auto" {
            Method::Sap
        } else {
            Method::parse(&name).unwrap()
        };
        // The grid's tests depend on its cells (the batch's cell side, giants): only bounded.
        let tests = (method != Method::Grid).then(|| oracle_tests(method, spheres, worlds));
        for round in 0..2 {
            let mut out = WorldPairs::new();
            let stats = batch
                .find_pairs(spheres, worlds, Some(&mut out))
                .unwrap_or_else(|e| panic!("{label}, {name}: {e}"));
            let got: Vec<(u32, Vec<Pair>)> = out.iter().map(|(w, p)| (w, p.to_vec())).collect();
            if got != expected {
                let diff: Vec<_> = got
                    .iter()
                    .zip(&expected)
                    .filter(|(g, e)| g != e)
                    .take(3)
                    .collect();
                panic!("{label}, {name}, round {round}: groups differ: {diff:?}");
            }
            assert_eq!(stats.pairs, total as u64, "{label}, {name}");
            match tests {
                Some(tests) => assert_eq!(stats.tests, tests, "{label}, {name}: tests"),
                None => assert!(stats.tests >= stats.pairs, "{label}, {name}: tests"),
            }
            let counted = batch.find_pairs(spheres, worlds, None).unwrap();
            assert_eq!(counted.pairs, total as u64, "{label}, {name}: count only");
        }
    }
}

/// Every batch on a device opened at WebGPU's guaranteed limits, as a simulation's own device
/// with default settings: the grid's walk once bound a ninth storage buffer (the ranks), and
/// its pipeline, built with every sphere kernel, failed there.
#[test]
fn gpu_worlds_within_webgpus_default_limits() {
    let Some(ctx) = crate::common::gpu_at_webgpus_default_limits() else {
        return;
    };
    with_shared_objects(&|label: &str, spheres: &[Sphere], worlds: &[u32]| {
        check_on(&ctx, label, spheres, worlds)
    });
}

#[test]
fn gpu_worlds_overlapping_in_space_interleaved_and_in_order() {
    overlapping_in_space(&check);
}

/// Giants reaching past 2^31 cells of their worlds' others, and a shared one.
#[test]
fn gpu_worlds_with_giants_far_larger_than_their_worlds() {
    far_reaching_giants(&check);
}

#[test]
fn gpu_worlds_clustered_unequal_and_near_the_largest_id() {
    clustered_and_unequal(&check);
}

#[test]
fn gpu_worlds_one_huge_beside_many_tiny_and_one_alone() {
    huge_beside_tiny(&check);
}

#[test]
fn gpu_worlds_stacked_with_exact_contacts_and_lines() {
    identical_and_line_worlds(&check);
}

/// A giant in each world, all in one space: the grid's giants' walk meets only its own world
/// (and the shared objects, giants themselves here).
#[test]
fn gpu_worlds_with_a_giant_each() {
    let (mut spheres, mut ids) = generated(SceneKind::Giant, 12, 50, |k| (k * 3) as u32);
    check("giants", &spheres, &ids);
    spheres.insert(5, Sphere::new(Vec3::new(0.0, -1000.0, 0.0), 960.0));
    ids.insert(5, SHARED);
    spheres.push(Sphere::new(Vec3::new(10.0, 10.0, 10.0), 3.0));
    ids.push(SHARED);
    check("giants and shared", &spheres, &ids);
}

#[test]
fn gpu_worlds_shared_objects_meet_every_world() {
    with_shared_objects(&check);
}

/// The cascades' running maximum is each world's own: worlds of about 330 objects (blocks of
/// 256 straddle them), each with one long object whose reach covers the whole of the next
/// world's x range, and small objects apart on x (a few in touching twins), which in that
/// world's order come before its own long one and overlap none of it. A maximum that ran across
/// worlds would keep every small object past x and test tens of thousands of pairs on y; the
/// rule keeps the twins and their neighbours, and the tests are counted exactly. Then the same
/// with a shared object overlapping a few objects of one world, and with more shared objects
/// than the cascade scans.
#[test]
fn gpu_cascades_see_only_their_own_world() {
    if ctx().is_none() {
        return;
    }
    let (mut spheres, mut ids) = (Vec::new(), Vec::new());
    for w in 0..12u32 {
        let x0 = w as f32 * 1000.0;
        // [x0 - 1500, x0 + 1500]: past the next world's small objects, none of its own.
        spheres.push(Sphere::new(Vec3::new(x0, 0.0, 0.0), 1500.0));
        ids.push(w);
        for k in 0..300 {
            let x = x0 - 1510.0 - 3.0 * k as f32;
            let (y, z) = ((k % 5) as f32 * 3.0, (k % 7) as f32);
            spheres.push(Sphere::new(Vec3::new(x, y, z), 1.0));
            ids.push(w);
            if k % 10 == 0 {
                spheres.push(Sphere::new(Vec3::new(x + 1.5, y, z), 1.0));
                ids.push(w);
            }
        }
    }
    shuffled(&mut spheres, &mut ids, 5);
    for axes in [2, 3] {
        let tests = cascade_tests(axes, &spheres, &ids);
        // The survivors of x: the twins and their neighbours, 90 of a world's 331, about 2,200
        // tests a world on y (all 331: over 10,000).
        assert!(tests > 0 && tests < 12 * 3000, "{axes} axes: {tests} tests");
    }
    check("long reaches", &spheres, &ids);
    let mut with_shared = spheres.clone();
    let mut shared_ids = ids.clone();
    with_shared.push(Sphere::new(Vec3::new(4500.0, 2.0, 3.0), 4.0));
    shared_ids.push(SHARED);
    check("long reaches and one shared", &with_shared, &shared_ids);
    for k in 0..sweepfan::gpu::GPU_CASCADE_SHARED_MAX + 1 {
        with_shared.push(Sphere::new(
            Vec3::new(-9000.0 - 3.0 * k as f32, 0.0, 0.0),
            1.0,
        ));
        shared_ids.push(SHARED);
    }
    check(
        "more shared than the cascade scans",
        &with_shared,
        &shared_ids,
    );
}

#[test]
fn gpu_worlds_of_two_by_the_thousand() {
    let Some(ctx) = ctx() else { return };
    let (spheres, ids) = worlds_of_two();
    let mut batch = GpuWorldBatch::auto(ctx).unwrap();
    let mut out = WorldPairs::new();
    let stats = batch.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
    assert_worlds_of_two(&out, "auto");
    // sap tests only the worlds whose boxes overlap: the touching ones.
    assert_eq!(stats.tests, 1 << 15);
}

#[test]
fn gpu_worlds_equal_the_cpu_batch_through_one_trait() {
    let Some(ctx) = ctx() else { return };
    let (spheres, ids) = generated(SceneKind::Clusters, 64, 64, |k| k as u32);
    let mut cpu: Box<dyn WorldBroadPhase> = Box::new(WorldBatch::new(Method::BruteForce));
    let mut gpu: Box<dyn WorldBroadPhase> =
        Box::new(GpuWorldBatch::new(ctx, Method::BruteForce).unwrap());
    let (mut a, mut b) = (WorldPairs::new(), WorldPairs::new());
    let sa = cpu.find_pairs(&spheres, &ids, Some(&mut a)).unwrap();
    let sb = gpu.find_pairs(&spheres, &ids, Some(&mut b)).unwrap();
    assert_eq!(a, b);
    assert_eq!((sa.pairs, sa.tests), (sb.pairs, sb.tests));
    assert_eq!(gpu.backend(), sweepfan::Backend::Gpu);
}

#[test]
fn gpu_worlds_empty_bad_input_and_refusals() {
    let Some(ctx) = ctx() else { return };
    // Several devices: the batch runs on one and says so rather than leave the others idle.
    let first = test_gpu().expect("the test adapter");
    let second = Arc::new(test_gpu().expect("the test adapter again"));
    match GpuWorldBatch::new(Arc::new(first.with_peers(vec![second])), Method::Sap) {
        Err(Error::InvalidArgument {
            argument: "ctx",
            message: m,
        }) => assert!(m.contains("one device") && m.contains("1 more"), "{m}"),
        Err(e) => panic!("expected an invalid ctx, got {e}"),
        Ok(_) => panic!("a batch with peers would leave them idle"),
    }
    // The grid's batch takes at most GPU_GRID_SHARED_MAX shared objects, and says so.
    let mut grid = GpuWorldBatch::new(ctx.clone(), Method::Grid).unwrap();
    let max = sweepfan::gpu::GPU_GRID_SHARED_MAX;
    let many: Vec<Sphere> = (0..max + 3)
        .map(|k| Sphere::new(Vec3::new(k as f32 * 3.0, 0.0, 0.0), 1.0))
        .collect();
    let mut ids = vec![SHARED; max + 1];
    ids.extend([0, 0]);
    match grid.find_pairs(&many, &ids, None) {
        Err(Error::InvalidArgument {
            argument: "worlds",
            message: m,
        }) => assert!(m.contains(&format!("{} shared", max + 1)), "{m}"),
        other => panic!("expected too many shared objects, got {other:?}"),
    }
    ids[0] = 1;
    let mut out = WorldPairs::new();
    grid.find_pairs(&many, &ids, Some(&mut out)).unwrap();
    assert_eq!(out.worlds(), &[0, 1, SHARED]);
    crate::worlds::check_empty_and_bad_input(&mut GpuWorldBatch::new(ctx, Method::Sap).unwrap());
}

#[test]
fn gpu_worlds_pair_limit_counts_over_all_worlds() {
    let Some(ctx) = ctx() else { return };
    crate::worlds::check_pair_limit(&mut GpuWorldBatch::auto(ctx).unwrap());
}

#[test]
fn gpu_worlds_events_per_world() {
    let Some(ctx) = ctx() else { return };
    let mut batch = GpuWorldBatch::auto(ctx).unwrap();
    crate::worlds::check_world_events(&mut batch, 5);
}

/// `world_bucket` of `shaders/frame.wgsl` by hand: the cell and the world's rank hashed into one
/// of `buckets` (a power of two).
fn world_bucket_by_hand(cell: [i32; 3], rank: u32, buckets: u32) -> u32 {
    let lowbias32 = |mut h: u32| {
        h ^= h >> 16;
        h = h.wrapping_mul(0x7feb352d);
        h ^= h >> 15;
        h = h.wrapping_mul(0x846ca68b);
        h ^ (h >> 16)
    };
    let [x, y, z] = cell.map(|c| c as u32);
    let cell_hash = lowbias32(
        x.wrapping_mul(0x8da6b343) ^ y.wrapping_mul(0xd8163841) ^ z.wrapping_mul(0xcb1ab31f),
    );
    lowbias32(cell_hash ^ rank.wrapping_mul(0x9e3779b9)) & (buckets - 1)
}

/// 2^17 worlds of one sphere: 2^17 buckets leave a key 15 bits of rank, so ranks 2^15 apart
/// share them. Two such worlds whose spheres share a cell that hashes into one bucket in both
/// (found by hand) meet in the walk's bucket with equal key bits: only the ranks read by index
/// keep them apart. (Before, the buckets were cut to what the ranks left: 2^15 buckets for
/// 2^17 objects, and 65,536 worlds of 64 spheres in one box took minutes on lavapipe.)
#[test]
fn gpu_grid_worlds_past_the_key_bits_meet_only_their_own() {
    let Some(ctx) = ctx() else { return };
    const N: u32 = 1 << 17;
    let tag = 1u32 << (32 - N.trailing_zeros());
    let (cell, a, b) = (0..64)
        .flat_map(|k| (0..tag).map(move |r| ([k, -5, -5], r)))
        .find_map(|(cell, r)| {
            let ranks: Vec<u32> = (0..N / tag).map(|j| r + j * tag).collect();
            let buckets: Vec<u32> = ranks
                .iter()
                .map(|&q| world_bucket_by_hand(cell, q, N))
                .collect();
            (0..ranks.len()).find_map(|i| {
                (i + 1..ranks.len())
                    .find(|&j| buckets[i] == buckets[j])
                    .map(|j| (cell, ranks[i], ranks[j]))
            })
        })
        .expect("a cell and two ranks 2^15 apart in one bucket");
    // Every world's sphere alone in its cell on a lattice 2 apart, but worlds a and b's, both
    // in `cell` at the same point (a cell side of 1: radius 0.5).
    let mut spheres: Vec<Sphere> = (0..N)
        .map(|w| {
            let at = Vec3::new((w % 64) as f32, ((w / 64) % 64) as f32, (w / 4096) as f32);
            Sphere::new(at * 2.0 + Vec3::splat(0.5), 0.5)
        })
        .collect();
    let point = Vec3::new(cell[0] as f32, cell[1] as f32, cell[2] as f32) + Vec3::splat(0.5);
    spheres[a as usize] = Sphere::new(point, 0.5);
    spheres[b as usize] = Sphere::new(point, 0.5);
    let ids: Vec<u32> = (0..N).collect();
    let mut grid = GpuWorldBatch::new(ctx, Method::Grid).unwrap();
    let mut out = WorldPairs::new();
    let stats = grid.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
    let found: Vec<(u32, Vec<Pair>)> = out
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(w, p)| (w, p.to_vec()))
        .collect();
    assert!(found.is_empty(), "worlds {a} and {b} met: {found:?}");
    assert_eq!((stats.pairs, out.worlds().len()), (0, N as usize));
}

/// A batch's pairs grouped by world past the caller's memory budget are refused as a pair
/// list (counting them needs no list), never an abort: under 1 MiB the device's list itself,
/// under 6 MiB the world order of its 499,500 pairs (8 MB; the list, 4 MB, fits). A count
/// within the budget and a whole batch after it are right.
#[test]
fn gpu_world_pairs_past_the_memory_budget_are_refused() {
    use sweepfan::{Limits, MemoryBudget};
    let Some(ctx) = ctx() else { return };
    let spheres = vec![Sphere::new(Vec3::ONE, 1.0); 1000];
    let worlds = vec![3; 1000];
    let mut batch = GpuWorldBatch::new(ctx, Method::Sap).unwrap();
    let mut out = WorldPairs::new();
    for mib in [1u64, 6] {
        let limits = Limits::new().with_memory(MemoryBudget::Bytes(mib << 20));
        match limits.run(|| batch.find_pairs(&spheres, &worlds, Some(&mut out))) {
            Err(Error::TooLarge { exceeds, message }) => assert!(
                exceeds.is_pair_list() && message.contains("499500"),
                "{mib} MiB: {exceeds:?}: {message}"
            ),
            other => panic!("{mib} MiB: {other:?}"),
        }
        let counted = limits.run(|| batch.find_pairs(&spheres, &worlds, None));
        assert_eq!(counted.unwrap().pairs, 499_500, "{mib} MiB");
    }
    batch.find_pairs(&spheres, &worlds, Some(&mut out)).unwrap();
    assert_eq!(out.worlds(), &[3]);
    assert_eq!(out.of(3).len(), 499_500);
    assert_eq!(out.of(3)[499_499], [998, 999]);
}
