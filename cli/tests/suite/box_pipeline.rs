//! The GPU box / polygon pipeline (src/gpu/boxes/pipeline.rs) against the CPU pipeline
//! (`cpu::sat::obb_overlaps`), an all-pairs SAT and, for lattices, overlaps known by
//! construction. GPU and CPU may differ only on pairs within a relative 1e-5 of touching (checked
//! by testing shrunk and grown copies on the CPU).

use crate::common::{json_rows, succeed, sweepfan, temp_dir};
use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::sync::Arc;
use sweepfan::broadphase::Method;
use sweepfan::cpu::sat::{obb_overlaps, polygon_overlaps};
use sweepfan::geom::obb::{Obb, obb_frames};
use sweepfan::geom::polygon::Polygon;
use sweepfan::geom::polygon::PolygonSet;
use sweepfan::gpu::boxes::aabb_sap::SweepLayout;
use sweepfan::gpu::boxes::pipeline::{GpuBoxPipeline, Proxy};
use sweepfan::gpu::context::test_gpu;
use sweepfan::scenes::boxes::{generate_boxes, generate_polygons, needle_boxes};
use sweepfan::scenes::{SceneKind, SceneParams};
use sweepfan::{Pair, canonicalize};
use sweepfan_cli::run::verify_shapes::Shapes;

fn pipeline(proxy: Proxy) -> Option<GpuBoxPipeline> {
    let ctx = Arc::new(test_gpu()?);
    Some(GpuBoxPipeline::new(ctx, proxy).expect("pipeline"))
}

/// The pipeline with the subgroup appends (where the adapter has them) and the portable ones.
fn both_pipelines(proxy: Proxy) -> Option<[GpuBoxPipeline; 2]> {
    let contexts = crate::common::both_appends()?;
    Some(contexts.map(|ctx| GpuBoxPipeline::new(Arc::new(ctx), proxy).expect("pipeline")))
}

fn sorted(mut pairs: Vec<Pair>) -> Vec<Pair> {
    canonicalize(&mut pairs);
    pairs
}

/// Pairs in one list and not the other must be near touching (the verification rule of
/// `run::verify_shapes`, with its relative band `SAT_TOUCH_REL`), and rare.
fn assert_same_up_to_touching(boxes: &[Obb], a: &[Pair], b: &[Pair], what: &str) {
    let (near, wrong) = Shapes::Boxes(boxes.to_vec()).differences(a, b);
    assert!(
        wrong.is_empty(),
        "{what}: pairs {:?} differ and are not near touching",
        &wrong[..wrong.len().min(10)]
    );
    assert!(
        near.len() * 1000 <= a.len().max(1),
        "{what}: {} near-touching differences",
        near.len()
    );
}

fn all_pairs(boxes: &[Obb]) -> Vec<Pair> {
    let mut out = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

fn random_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut p = SceneParams::new(n, seed);
    p.volume_fraction = 0.05;
    generate_boxes(SceneKind::Density, &p)
}

/// Axis-aligned unit cubes on an integer lattice: cubes touch exactly when their lattice
/// coordinates differ by at most 1 on every axis (faces, edges, corners), exact in f32.
fn lattice(side: u32) -> (Vec<Obb>, Vec<Pair>) {
    let mut boxes = Vec::new();
    let mut cells = Vec::new();
    for x in 0..side {
        for y in 0..side {
            for z in 0..side {
                cells.push([x as i64, y as i64, z as i64]);
                boxes.push(Obb::axis_aligned(
                    Vec3::new(x as f32, y as f32, z as f32) + Vec3::splat(100.0),
                    Vec3::splat(0.5),
                ));
            }
        }
    }
    let mut expected = Vec::new();
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            if (0..3).all(|k| (cells[i][k] - cells[j][k]).abs() <= 1) {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    (boxes, expected)
}

/// Seeds alternate between the subgroup appends and the portable ones (docs/design.md §9.17).
#[test]
fn gpu_equals_cpu_equals_all_pairs_on_random_boxes() {
    let Some(mut both) = both_pipelines(Proxy::Aabb) else {
        return;
    };
    for seed in 0..4 {
        let gpu = &mut both[seed as usize % 2];
        let mut boxes = random_boxes(1_500, seed);
        // One huge box over much of the scene.
        boxes.push(Obb::new(
            boxes[0].center,
            Vec3::new(8.0, 3.0, 5.0),
            Quat::from_rotation_z(0.7),
        ));
        let brute = sorted(all_pairs(&boxes));
        assert!(
            brute.len() > 100,
            "scene has overlaps to find ({})",
            brute.len()
        );
        let (cpu, cpu_stats) = obb_overlaps(&boxes).unwrap();
        let cpu = sorted(cpu);
        assert_eq!(cpu, brute, "CPU pipeline == all-pairs SAT");
        let mut out = Vec::new();
        let stats = gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
        assert_eq!(stats.pairs as usize, out.len());
        assert!(stats.tests >= stats.pairs);
        // Same AABB formula (one more epsilon of margin): at most a few more SAT tests.
        assert!(
            stats.tests >= cpu_stats.tests && stats.tests <= cpu_stats.tests + 2,
            "SAT tests: GPU {} CPU {}",
            stats.tests,
            cpu_stats.tests
        );
        assert!(out.iter().all(|p| p[0] < p[1]));
        let out = sorted(out);
        assert_same_up_to_touching(&boxes, &out, &brute, "GPU vs all pairs");
    }
}

#[test]
fn touching_lattice_with_every_proxy() {
    let (boxes, expected) = lattice(9);
    for proxy in [
        Proxy::Aabb,
        Proxy::Sphere(Method::Grid),
        Proxy::Sphere(Method::Sap),
    ] {
        let Some(mut gpu) = pipeline(proxy) else {
            return;
        };
        let mut out = Vec::new();
        gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
        assert_eq!(sorted(out), expected, "{proxy:?}");
    }
}

#[test]
fn overflowing_lists_grow_and_lose_nothing() {
    let (boxes, expected) = lattice(6);
    for proxy in [Proxy::Aabb, Proxy::Sphere(Method::Grid)] {
        let Some(mut gpu) = pipeline(proxy) else {
            return;
        };
        gpu.set_candidate_capacity(1).unwrap();
        let mut out = Vec::new();
        let stats = gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
        assert_eq!(sorted(out), expected, "{proxy:?}");
        assert_eq!(stats.pairs as usize, expected.len());
        // Counting only, after shrinking again.
        gpu.set_candidate_capacity(3).unwrap();
        let stats = gpu.obb_overlaps(&boxes, None).unwrap();
        assert_eq!(stats.pairs as usize, expected.len());
        // The candidates alone: AABBs of a touching lattice overlap exactly where the cubes do.
        if proxy == Proxy::Aabb {
            gpu.set_candidate_capacity(2).unwrap();
            let mut candidates = Vec::new();
            let count = gpu.obb_candidates(&boxes, &mut candidates).unwrap();
            assert_eq!(count as usize, candidates.len());
            assert_eq!(sorted(candidates), expected);
        }
    }
}

#[test]
fn gpu_equals_cpu_at_100k_boxes() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let boxes = random_boxes(100_000, 42);
    let (cpu, _) = obb_overlaps(&boxes).unwrap();
    let cpu = sorted(cpu);
    let mut out = Vec::new();
    gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
    assert!(cpu.len() > 1_000, "{} overlaps", cpu.len());
    assert_same_up_to_touching(&boxes, &sorted(out), &cpu, "GPU vs CPU, 100k");
}

#[test]
fn polygons_gpu_equals_cpu_and_all_pairs() {
    let Some([mut gpu, mut portable]) = both_pipelines(Proxy::Aabb) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let polygons: Vec<Polygon> = (0..1_000)
        .map(|i| {
            let c = Vec2::new(rng.random_range(0.0..60.0), rng.random_range(0.0..60.0));
            let k = rng.random_range(3..8);
            let mut angles: Vec<f32> = (0..k)
                .map(|_| rng.random_range(0.0..std::f32::consts::TAU))
                .collect();
            angles.sort_by(f32::total_cmp);
            angles.dedup_by(|a, b| (*a - *b).abs() < 0.2);
            if angles.len() < 3 {
                angles = vec![0.0, 2.0, 4.0];
            }
            let r = rng.random_range(0.3..1.5);
            let v: Vec<Vec2> = angles
                .iter()
                .map(|a| c + r * Vec2::new(a.cos(), a.sin()))
                .collect();
            Polygon::new(i, &v).unwrap()
        })
        .collect();
    let mut brute = Vec::new();
    for i in 0..polygons.len() {
        for j in i + 1..polygons.len() {
            if polygons[i].overlaps(&polygons[j]) {
                brute.push([i as u32, j as u32]);
            }
        }
    }
    let (cpu, _) = polygon_overlaps(&polygons).unwrap();
    assert_eq!(sorted(cpu), brute);
    assert!(brute.len() > 50);
    let (_, cpu_stats) = polygon_overlaps(&polygons).unwrap();
    let mut sphere = pipeline(Proxy::Sphere(Method::Grid)).expect("adapter found above");
    for gpu in [&mut gpu, &mut portable, &mut sphere] {
        let mut out = Vec::new();
        let stats = gpu.polygon_overlaps(&polygons, Some(&mut out)).unwrap();
        let out = sorted(out);
        let diff = out
            .iter()
            .collect::<BTreeSet<_>>()
            .symmetric_difference(&brute.iter().collect())
            .count();
        // Random real coordinates: exact touching has probability zero.
        assert_eq!(diff, 0, "GPU polygons vs all pairs [{:?}]", gpu.proxy());
        if gpu.proxy() == Proxy::Aabb {
            // Exactly the CPU's AABBs: exactly its SAT tests.
            assert_eq!(stats.tests, cpu_stats.tests);
        } else {
            assert!(stats.tests > cpu_stats.tests);
        }
    }
}

#[test]
fn empty_and_invalid_input_are_errors() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    assert!(gpu.obb_overlaps(&[], None).is_err());
    let bad = [Obb::axis_aligned(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0))];
    assert!(gpu.obb_overlaps(&bad, None).is_err());
    assert!(gpu.polygon_overlaps(&[], None).is_err());
}

// ---- The AABB broad phase alone (src/gpu/boxes/aabb_sap/) against an all-pairs AABB overlap in
// f64, written here.

/// The exact AABB, in f64, of the box the SAT sees (the f32 frame: unit axes with half-extents):
/// centre ± sum_k |axis_k| h_k. Returned as (centre, extent) per axis.
fn aabb_f64(b: &Obb) -> [(f64, f64); 3] {
    let f = b.frame();
    std::array::from_fn(|a| {
        let c = f.center[a] as f64;
        let e: f64 = (0..3)
            .map(|k| (f.axes[k][a] as f64).abs() * f.axes[k].w as f64)
            .sum();
        (c, e)
    })
}

/// Closed overlap of the f64 AABBs, each grown by `grow * (extent + |centre|)` per axis.
fn aabbs_overlap(p: &[(f64, f64); 3], q: &[(f64, f64); 3], grow: f64) -> bool {
    (0..3).all(|a| {
        let (pe, qe) = (
            p[a].1 + grow * (p[a].1 + p[a].0.abs()),
            q[a].1 + grow * (q[a].1 + q[a].0.abs()),
        );
        (p[a].0 - pe) <= (q[a].0 + qe) && (q[a].0 - qe) <= (p[a].0 + pe)
    })
}

/// GPU candidates vs the all-pairs f64 AABB overlap: every exact overlap must be a candidate
/// (the GPU bounds are widened, never narrowed); extra candidates only within a relative 1e-5
/// of touching. Returns the number of such near-touching extras.
fn check_candidates(gpu: &mut GpuBoxPipeline, boxes: &[Obb], what: &str) -> usize {
    let mut got = Vec::new();
    let count = gpu.obb_candidates(boxes, &mut got).unwrap();
    assert_eq!(count as usize, got.len(), "{what}: count vs list");
    assert!(got.iter().all(|p| p[0] < p[1]), "{what}: canonical");
    let got = sorted(got);
    assert!(got.windows(2).all(|w| w[0] != w[1]), "{what}: duplicates");
    let bounds: Vec<_> = boxes.iter().map(aabb_f64).collect();
    let mut exact = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if aabbs_overlap(&bounds[i], &bounds[j], 0.0) {
                exact.push([i as u32, j as u32]);
            }
        }
    }
    let got_set: BTreeSet<Pair> = got.iter().copied().collect();
    let missed: Vec<&Pair> = exact.iter().filter(|p| !got_set.contains(*p)).collect();
    assert!(missed.is_empty(), "{what}: candidates missed {missed:?}");
    let exact_set: BTreeSet<Pair> = exact.iter().copied().collect();
    let extra: Vec<Pair> = got
        .iter()
        .filter(|p| !exact_set.contains(*p))
        .copied()
        .collect();
    for &[i, j] in &extra {
        assert!(
            aabbs_overlap(&bounds[i as usize], &bounds[j as usize], 1e-5),
            "{what}: ({i}, {j}) is a candidate but its AABBs are apart"
        );
    }
    if !extra.is_empty() {
        eprintln!("{what}: near-touching extra candidates {extra:?}");
    }
    assert!(
        exact.len() > 20,
        "{what}: scene has overlaps ({})",
        exact.len()
    );
    extra.len()
}

fn clustered_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut p = SceneParams::new(n, seed);
    p.volume_fraction = 0.02;
    generate_boxes(SceneKind::Clusters, &p)
}

#[test]
fn aabb_candidates_equal_all_pairs_aabb_overlap() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let mut one_huge = random_boxes(1_500, 7);
    one_huge.push(Obb::new(
        one_huge[10].center,
        Vec3::new(30.0, 0.5, 9.0),
        Quat::from_rotation_y(0.4),
    ));
    let scenes: Vec<(&str, Vec<Obb>)> = vec![
        ("random", random_boxes(2_000, 3)),
        ("clustered", clustered_boxes(2_000, 4)),
        ("lattice", lattice(8).0),
        ("needles", needle_boxes(2_000, 5)),
        ("one huge box", one_huge),
        // Centres at negative and positive coordinates, crossing zero.
        (
            "around the origin",
            random_boxes(1_000, 6)
                .iter()
                .map(|b| Obb::new(b.center - Vec3::splat(20.0), b.half_extents, b.rotation))
                .collect(),
        ),
    ];
    // Columns across (y, z) and the plain sweep must give the same candidates.
    for columns in [true, false] {
        gpu.set_sweep_columns(columns);
        let mut extras = 0;
        for (what, boxes) in &scenes {
            extras += check_candidates(&mut gpu, boxes, &format!("{what}, columns {columns}"));
        }
        assert!(extras <= 3, "{extras} near-touching extras over all scenes");
    }
}

#[test]
fn aabb_candidates_through_2d_dispatch() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    // 3,000 boxes are 47 groups of 64: with at most 4 per dimension the grid is 4 x 12, and the
    // last row is partly past n (the kernels' bounds guards).
    gpu.set_max_groups_per_dim(4);
    check_candidates(&mut gpu, &random_boxes(3_000, 11), "2D dispatch");
    let mut out = Vec::new();
    let boxes = random_boxes(3_000, 12);
    gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
    let (cpu, _) = obb_overlaps(&boxes).unwrap();
    assert_same_up_to_touching(&boxes, &sorted(out), &sorted(cpu), "2D dispatch pipeline");
}

/// Scenes with shapes far wider than the rest on y or z (set apart from the columns and tested
/// against every shape): candidates against the f64 all-pairs AABB overlap, overlaps against the
/// CPU pipeline. Giants overlapping each other; giants whose faces touch a lattice exactly.
#[test]
fn wide_shapes_candidates_equal_all_pairs_aabb_overlap() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let mut giants = random_boxes(2_000, 13);
    // The scene's centre.
    let at = giants.iter().map(|b| b.center).sum::<Vec3>() / giants.len() as f32;
    for (offset, half, turn) in [
        (Vec3::ZERO, Vec3::new(20.0, 2.0, 12.0), 0.3),
        // Crossing the first.
        (Vec3::new(3.0, 2.0, 0.0), Vec3::new(3.0, 15.0, 3.0), -0.8),
        (Vec3::new(-4.0, 0.0, 5.0), Vec3::new(3.0, 3.0, 12.0), 1.1),
    ] {
        giants.insert(
            giants.len() / 2,
            Obb::new(at + offset, half, Quat::from_rotation_x(turn)),
        );
    }
    // Far from the others, alone among small boxes.
    giants.push(Obb::new(
        giants[7].center,
        Vec3::new(0.3, 25.0, 0.3),
        Quat::from_rotation_z(0.2),
    ));
    // Lattice cubes span [99.5, 107.5] on each axis; slabs touch its x = 107.5 and z = 99.5
    // faces exactly, and cross each other.
    let (mut touching, _) = lattice(8);
    touching.insert(
        200,
        Obb::axis_aligned(Vec3::new(112.5, 103.5, 103.5), Vec3::new(5.0, 30.0, 30.0)),
    );
    touching.push(Obb::axis_aligned(
        Vec3::new(103.5, 103.5, 94.5),
        Vec3::new(30.0, 30.0, 5.0),
    ));
    let scenes = [("giants", giants), ("giants touching a lattice", touching)];
    let mut extras = 0;
    for (what, boxes) in &scenes {
        let layout = SweepLayout::for_frames(&obb_frames(boxes));
        assert!(layout.wide.len() >= 2, "{what}: {:?}", layout.wide);
        extras += check_candidates(&mut gpu, boxes, what);
        let mut out = Vec::new();
        gpu.obb_overlaps(boxes, Some(&mut out)).unwrap();
        let (cpu, _) = obb_overlaps(boxes).unwrap();
        let cpu = sorted(cpu);
        let wide_pairs = cpu
            .iter()
            .filter(|p| p.iter().any(|i| layout.wide.contains(i)))
            .count();
        eprintln!(
            "{what}: wide {:?}, {wide_pairs} pairs with them",
            layout.wide
        );
        assert!(
            wide_pairs > 50,
            "{what}: {wide_pairs} pairs with wide shapes"
        );
        assert!(
            cpu.iter()
                .any(|p| p.iter().all(|i| layout.wide.contains(i))),
            "{what}: wide shapes overlap each other"
        );
        assert_same_up_to_touching(boxes, &sorted(out), &cpu, what);
    }
    let (lattice_boxes, _) = lattice(8);
    let lattice_len = lattice_boxes.len() as u32;
    // The touching scene: the exact pairs by construction, all found.
    let mut out = Vec::new();
    gpu.obb_overlaps(&scenes[1].1, Some(&mut out)).unwrap();
    let out: BTreeSet<Pair> = out.into_iter().collect();
    let (x_slab, z_slab) = (200u32, lattice_len + 1);
    let face = |axis: usize, layer: u32| -> Vec<u32> {
        // Lattice index x * 64 + y * 8 + z, shifted past the slab inserted at 200.
        (0..lattice_len)
            .filter(|&i| [i / 64, i / 8 % 8, i % 8][axis] == layer)
            .map(|i| if i >= 200 { i + 1 } else { i })
            .collect()
    };
    for i in face(0, 7) {
        assert!(
            out.contains(&[x_slab.min(i), x_slab.max(i)]),
            "x slab and {i}"
        );
    }
    for i in face(2, 0) {
        assert!(out.contains(&[i, z_slab]), "z slab and {i}");
    }
    assert!(out.contains(&[x_slab, z_slab]));
    assert!(extras <= 3, "{extras} near-touching extras");
}

/// One giant box among 1,100,000 small ones: spanning them all on x and y, it would collapse
/// the columns into one and walk past lavapipe's cap (1,048,560 steps). Set apart, the frame
/// runs. Scene: 0.2-wide cubes on a 1,100 x 1,000 grid (spacing 1) at z = 0, every 9,973rd
/// lowered to z = -5 into the giant slab below (z in [-6, -4]): the pairs by construction, and
/// the CPU pipeline's.
#[test]
fn one_giant_among_1_100_000_boxes() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let (nx, ny) = (1_100u32, 1_000u32);
    let n = nx * ny;
    let mut boxes: Vec<Obb> = (0..n)
        .map(|i| {
            let z = if i % 9_973 == 0 { -5.0 } else { 0.0 };
            let (x, y) = ((i / ny) as f32, (i % ny) as f32);
            Obb::axis_aligned(Vec3::new(x, y, z), Vec3::splat(0.1))
        })
        .collect();
    boxes.push(Obb::axis_aligned(
        Vec3::new(nx as f32 / 2.0, ny as f32 / 2.0, -5.0),
        Vec3::new(nx as f32 / 2.0 + 5.0, ny as f32 / 2.0 + 5.0, 1.0),
    ));
    let layout = SweepLayout::for_frames(&obb_frames(&boxes));
    assert_eq!(layout.wide, vec![n]);
    let expected: Vec<Pair> = (0..n).step_by(9_973).map(|i| [i, n]).collect();
    let mut pairs = Vec::new();
    let stats = gpu.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
    assert_eq!(stats.tests, expected.len() as u64);
    assert_eq!(sorted(pairs), expected);
    let (cpu, _) = obb_overlaps(&boxes).unwrap();
    assert_eq!(sorted(cpu), expected);
}

/// A walk far longer than 65,535 steps (lavapipe's cap on one invocation's loop iterations):
/// one long flat box below a row of 200,000 small cubes spaced apart along x, every 10,000th
/// cube lowered to meet it. Candidates by construction: exactly those.
#[test]
fn walks_longer_than_65535_candidates() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let n = 200_000u32;
    let mut boxes: Vec<Obb> = (0..n)
        .map(|i| {
            let y = if i % 10_000 == 0 { -5.0 } else { 0.0 };
            Obb::axis_aligned(Vec3::new(i as f32, y, 0.0), Vec3::splat(0.25))
        })
        .collect();
    // Spans every cube on x (so its walk visits all of them) and only the lowered ones on y.
    boxes.push(Obb::axis_aligned(
        Vec3::new(n as f32 / 2.0, -5.0, 0.0),
        Vec3::new(n as f32 / 2.0 + 10.0, 1.0, 1.0),
    ));
    let long = n;
    let expected: Vec<Pair> = (0..n).step_by(10_000).map(|i| [i, long]).collect();
    let mut got = Vec::new();
    gpu.obb_candidates(&boxes, &mut got).unwrap();
    assert_eq!(sorted(got), expected);
    let mut pairs = Vec::new();
    let stats = gpu.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
    assert_eq!(stats.tests, expected.len() as u64);
    assert_eq!(sorted(pairs), expected);
}

/// A plain sweep whose walk takes 1,100,000 steps: past what lavapipe lets one invocation run
/// even with 16 steps per iteration. The result is either exact (real GPUs) or a clear error,
/// never a short list. (With columns the long box is set apart as wide: see
/// `one_giant_among_1_100_000_boxes`.) Scene: 0.2-wide cubes 1 apart along x (at x up to 1.1e6
/// the AABB margins, 6e-7 of the coordinate, make neighbours overlap on x, so odd ones sit at
/// y = 10), every 100,000th at y = -5, inside a long flat box under the row.
#[test]
fn a_walk_the_device_cuts_short_is_an_error_not_a_short_list() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let n = 1_100_000u32;
    let mut boxes: Vec<Obb> = (0..n)
        .map(|i| {
            let y = match i {
                _ if i % 100_000 == 99_999 => -5.0,
                _ if i % 2 == 1 => 10.0,
                _ => 0.0,
            };
            Obb::axis_aligned(Vec3::new(i as f32, y, 0.0), Vec3::splat(0.1))
        })
        .collect();
    boxes.push(Obb::axis_aligned(
        Vec3::new(n as f32 / 2.0, -5.0, 0.0),
        Vec3::new(n as f32 / 2.0 + 10.0, 1.0, 1.0),
    ));
    let expected: Vec<Pair> = (99_999..n).step_by(100_000).map(|i| [i, n]).collect();
    // lavapipe (llvmpipe) cuts such loops short: there the error path must fire.
    let cuts_short = test_gpu().is_some_and(|c| c.info.name.contains("llvmpipe"));
    gpu.set_sweep_columns(false);
    let mut got = Vec::new();
    match gpu.obb_candidates(&boxes, &mut got) {
        Ok(_) => {
            assert!(!cuts_short, "llvmpipe ran a 1,100,000-step walk in full");
            assert_eq!(sorted(got), expected);
        }
        Err(e) => assert!(e.to_string().contains("cut"), "{e}"),
    }
}

/// Needles: their AABBs are much tighter than their bounding spheres, so the AABB broad phase
/// makes fewer SAT tests for the same pairs.
#[test]
fn aabb_proxy_tests_fewer_candidates_than_spheres_on_needles() {
    let (Some(mut aabb), Some(mut sphere)) =
        (pipeline(Proxy::Aabb), pipeline(Proxy::Sphere(Method::Grid)))
    else {
        return;
    };
    let boxes = needle_boxes(20_000, 8);
    let (mut a, mut s) = (Vec::new(), Vec::new());
    let sa = aabb.obb_overlaps(&boxes, Some(&mut a)).unwrap();
    let ss = sphere.obb_overlaps(&boxes, Some(&mut s)).unwrap();
    let (cpu, cs) = obb_overlaps(&boxes).unwrap();
    eprintln!(
        "needles n = 20000: SAT tests aabb {} sphere {} cpu {}; pairs {}",
        sa.tests, ss.tests, cs.tests, sa.pairs
    );
    let (a, s, cpu) = (sorted(a), sorted(s), sorted(cpu));
    assert_same_up_to_touching(&boxes, &a, &cpu, "aabb vs cpu");
    assert_same_up_to_touching(&boxes, &s, &cpu, "sphere vs cpu");
    assert!(cpu.len() > 500, "{} overlaps", cpu.len());
    assert!(
        sa.tests * 2 < ss.tests,
        "aabb {} sphere {}",
        sa.tests,
        ss.tests
    );
}

/// Pairs whose vertex bounds overlap (closed), in f64: the polygons' exact AABB candidates.
fn vertex_bounds_pairs(polygons: &[Polygon]) -> Vec<Pair> {
    let bounds: Vec<[f64; 4]> = polygons
        .iter()
        .map(|q| {
            let v = q.vertices();
            let f = |sel: fn(&Vec2) -> f32, pick: fn(f64, f64) -> f64, init: f64| {
                v.iter().map(|x| sel(x) as f64).fold(init, pick)
            };
            [
                f(|x| x.x, f64::min, f64::INFINITY),
                f(|x| x.x, f64::max, f64::NEG_INFINITY),
                f(|x| x.y, f64::min, f64::INFINITY),
                f(|x| x.y, f64::max, f64::NEG_INFINITY),
            ]
        })
        .collect();
    let mut expected = Vec::new();
    for i in 0..bounds.len() {
        for j in i + 1..bounds.len() {
            let (a, b) = (bounds[i], bounds[j]);
            if a[0] <= b[1] && b[0] <= a[1] && a[2] <= b[3] && b[2] <= a[3] {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    expected
}

fn density_polygons(n: usize, seed: u64) -> Vec<Polygon> {
    let mut p = SceneParams::new(n, seed);
    p.volume_fraction = 0.01;
    generate_polygons(SceneKind::Density, &p).unwrap()
}

#[test]
fn polygon_candidates_equal_all_pairs_vertex_bounds() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let polygons = density_polygons(3_000, 21);
    let expected = vertex_bounds_pairs(&polygons);
    assert!(expected.len() > 1_000, "{}", expected.len());
    for columns in [true, false] {
        gpu.set_sweep_columns(columns);
        let mut got = Vec::new();
        gpu.polygon_candidates(&polygons, &mut got).unwrap();
        // Vertex min / max is exact: the same set, no tolerance.
        assert_eq!(sorted(got), expected, "columns {columns}");
    }
}

/// Two giant polygons among small ones, each spanning the scene on y (so the columns would
/// collapse into one), crossing each other: set apart as wide; the candidates are still exactly
/// the vertex-bounds pairs, and the overlaps the CPU's.
#[test]
fn giant_polygons_among_polygons() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let mut polygons = density_polygons(3_000, 22);
    let (lo, hi) = polygons.iter().flat_map(|q| q.vertices()).fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(a, b), &v| (a.min(v), b.max(v)),
    );
    let mid = (lo.x + hi.x) / 2.0;
    let strip = [
        Vec2::new(mid - 3.0, lo.y),
        Vec2::new(mid + 3.0, lo.y),
        Vec2::new(mid + 3.0, hi.y),
        Vec2::new(mid - 3.0, hi.y),
    ];
    let slanted = [
        Vec2::new(mid - 20.0, lo.y),
        Vec2::new(mid + 25.0, hi.y),
        Vec2::new(mid + 20.0, hi.y),
    ];
    polygons.insert(1_000, Polygon::new(1_000, &strip).unwrap());
    polygons.push(Polygon::new(polygons.len(), &slanted).unwrap());
    let layout = SweepLayout::for_polygons(&PolygonSet::new(&polygons).unwrap());
    assert_eq!(layout.wide, vec![1_000, polygons.len() as u32 - 1]);
    let expected = vertex_bounds_pairs(&polygons);
    assert!(expected.contains(&[1_000, polygons.len() as u32 - 1]));
    let giant_pairs = expected
        .iter()
        .filter(|p| layout.wide.contains(&p[0]) || layout.wide.contains(&p[1]))
        .count();
    assert!(giant_pairs > 50, "{giant_pairs}");
    let mut got = Vec::new();
    gpu.polygon_candidates(&polygons, &mut got).unwrap();
    assert_eq!(sorted(got), expected);
    let (cpu, _) = polygon_overlaps(&polygons).unwrap();
    let mut out = Vec::new();
    gpu.polygon_overlaps(&polygons, Some(&mut out)).unwrap();
    assert_eq!(sorted(out), sorted(cpu));
}

#[test]
fn non_finite_boxes_are_clear_errors() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let mut boxes = random_boxes(100, 1);
    for (k, bad) in [
        Obb::axis_aligned(Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::ONE),
        Obb::axis_aligned(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0)),
        Obb::new(
            Vec3::ZERO,
            Vec3::ONE,
            Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        ),
        Obb::axis_aligned(Vec3::splat(3.0e38), Vec3::splat(3.0e38)),
    ]
    .into_iter()
    .enumerate()
    {
        boxes[50] = bad;
        let e = gpu.obb_overlaps(&boxes, None).unwrap_err();
        assert!(e.to_string().contains("50"), "case {k}: {e}");
        let mut out = Vec::new();
        assert!(gpu.obb_candidates(&boxes, &mut out).is_err(), "case {k}");
    }
    // The pipeline still works afterwards.
    let (lattice_boxes, expected) = lattice(4);
    let mut out = Vec::new();
    gpu.obb_overlaps(&lattice_boxes, Some(&mut out)).unwrap();
    assert_eq!(sorted(out), expected);
}

// ---- CLI: `sweepfan verify --shape obb|polygon`, against overlaps known by construction.

const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;

fn run_verify(args: &[&str]) -> std::process::Output {
    sweepfan().arg("verify").args(args).output().unwrap()
}

fn read_pairs(path: &std::path::Path) -> Vec<Pair> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("i,j"));
    lines
        .map(|l| {
            let (i, j) = l.split_once(',').unwrap();
            [i.parse().unwrap(), j.parse().unwrap()]
        })
        .collect()
}

/// The 5^3 lattice plus, far away, an axis-aligned unit cube with cubes rotated 45 degrees about
/// z beside it: those reach 0.5 + sqrt(1/2) ~ 1.207 along x, so centres 1.15 apart overlap and
/// 1.26 apart do not (the two rotated cubes, 2.41 apart, do not).
fn obb_cli_scene() -> (String, Vec<Pair>) {
    let (mut boxes, mut expected) = lattice(5);
    let base = boxes.len() as u32;
    let far = Vec3::splat(1000.0);
    let turned = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    boxes.push(Obb::axis_aligned(far, Vec3::splat(0.5)));
    boxes.push(Obb::new(
        far + Vec3::new(1.15, 0.0, 0.0),
        Vec3::splat(0.5),
        turned,
    ));
    boxes.push(Obb::new(
        far - Vec3::new(1.26, 0.0, 0.0),
        Vec3::splat(0.5),
        turned,
    ));
    expected.push([base, base + 1]);
    const { assert!(1.15 < 0.5 + SQRT_HALF && 1.26 > 0.5 + SQRT_HALF) };
    let mut csv = String::from("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n");
    for b in &boxes {
        let (c, h, q) = (b.center, b.half_extents, b.rotation);
        csv += &format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            c.x, c.y, c.z, h.x, h.y, h.z, q.w, q.x, q.y, q.z
        );
    }
    (csv, expected)
}

/// Unit squares on a 6x6 lattice (touching iff lattice coordinates differ by at most 1), plus
/// far away a unit square with diamonds of half-diagonal 0.75 beside it: overlap iff centres are
/// at most 1.25 apart along x (1.2: yes; 1.3: no).
fn polygon_cli_scene() -> (String, Vec<Pair>) {
    let mut polys: Vec<Vec<Vec2>> = Vec::new();
    let mut cells = Vec::new();
    let square = |c: Vec2| {
        vec![
            c + Vec2::new(-0.5, -0.5),
            c + Vec2::new(0.5, -0.5),
            c + Vec2::new(0.5, 0.5),
            c + Vec2::new(-0.5, 0.5),
        ]
    };
    for x in 0..6i32 {
        for y in 0..6 {
            cells.push([x, y]);
            polys.push(square(Vec2::new(x as f32, y as f32)));
        }
    }
    let mut expected = Vec::new();
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            let [a, b] = [cells[i], cells[j]];
            if (a[0] - b[0]).abs() <= 1 && (a[1] - b[1]).abs() <= 1 {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    let base = polys.len() as u32;
    let far = Vec2::splat(500.0);
    let diamond = |c: Vec2| {
        vec![
            c + Vec2::new(0.75, 0.0),
            c + Vec2::new(0.0, 0.75),
            c + Vec2::new(-0.75, 0.0),
            c + Vec2::new(0.0, -0.75),
        ]
    };
    polys.push(square(far));
    polys.push(diamond(far + Vec2::new(1.2, 0.0)));
    polys.push(diamond(far - Vec2::new(1.3, 0.0)));
    expected.push([base, base + 1]);
    let mut csv = String::from("polygon,x,y\n");
    for (k, p) in polys.iter().enumerate() {
        for v in p {
            csv += &format!("{k},{},{}\n", v.x, v.y);
        }
    }
    (csv, expected)
}

#[test]
fn cli_verify_obb_and_polygon_files() {
    let dir = temp_dir("box_cli", "ok");
    let gpu = test_gpu().is_some();
    let mut backends = vec!["cpu"];
    if gpu {
        backends.push("gpu");
    }
    for (shape, (csv, expected)) in [("obb", obb_cli_scene()), ("polygon", polygon_cli_scene())] {
        let scene = dir.join(format!("{shape}.csv"));
        std::fs::write(&scene, csv).unwrap();
        for backend in &backends {
            let pairs = dir.join(format!("{shape}_{backend}_pairs.csv"));
            let out = run_verify(&[
                "--shape",
                shape,
                "--scene-file",
                scene.to_str().unwrap(),
                "--pairs-out",
                pairs.to_str().unwrap(),
                "--backend",
                backend,
            ]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{shape} {backend}: {stdout} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(stdout.contains("verified"), "{stdout}");
            assert_eq!(read_pairs(&pairs), expected, "{shape} [{backend}]");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_verify_names_the_bad_line() {
    let dir = temp_dir("box_cli", "bad");
    let cases = [
        (
            "obb",
            "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n0,0,0,1,x,1,1,0,0,0\n",
            "line 3",
        ),
        (
            "obb",
            "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n0,0,0,1,1,1,5,0,0,0\n",
            "line 3",
        ),
        (
            "polygon",
            "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,5,5\n1,zz,6\n",
            "line 6",
        ),
    ];
    for (k, (shape, text, line)) in cases.iter().enumerate() {
        let scene = dir.join(format!("bad{k}.csv"));
        std::fs::write(&scene, text).unwrap();
        let out = run_verify(&[
            "--shape",
            shape,
            "--scene-file",
            scene.to_str().unwrap(),
            "--pairs-out",
            dir.join("p.csv").to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {k}: {stderr}");
        assert!(stderr.contains(line), "case {k}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_bench_obb_writes_verified_rows() {
    let dir = temp_dir("box_cli", "bench");
    let json = dir.join("rows.json");
    let backend = if test_gpu().is_some() { "both" } else { "cpu" };
    succeed(
        sweepfan()
            .args([
                "bench", "--shape", "obb", "--scene", "density", "--n", "3000",
            ])
            .args(["--frames", "2", "--backend", backend, "--json"])
            .arg(&json)
            .output(),
    );
    let rows = json_rows(&json);
    assert_eq!(rows.len(), if backend == "both" { 2 } else { 1 });
    // The CPU pipeline on the same seeded boxes, counted here.
    let mut p = SceneParams::new(3000, 1);
    p.volume_fraction = 0.01;
    let (cpu, _) = obb_overlaps(&generate_boxes(SceneKind::Density, &p)).unwrap();
    for r in &rows {
        assert_eq!(r["shape"], "obb");
        assert_eq!(r["n"], 3000);
        assert_eq!(r["verified"], true);
        assert_eq!(r["pairs_per_frame"].as_f64().unwrap(), cpu.len() as f64);
        assert!(r["tests_per_frame"].as_f64().unwrap() >= cpu.len() as f64);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `bench --shape aabb`: the box broad phase alone, on the boxes' AABBs, on both backends; each
/// row's pairs equal brute force's count, computed here with its own interval test.
#[test]
fn cli_bench_aabb_rows_count_brute_forces_pairs() {
    let dir = temp_dir("box_cli", "bench_aabb");
    let json = dir.join("rows.json");
    let backend = if test_gpu().is_some() { "both" } else { "cpu" };
    succeed(
        sweepfan()
            .args([
                "bench", "--shape", "aabb", "--scene", "clusters", "--n", "2000",
            ])
            .args(["--frames", "2", "--backend", backend, "--json"])
            .arg(&json)
            .output(),
    );
    let rows = json_rows(&json);
    assert_eq!(rows.len(), if backend == "both" { 2 } else { 1 });
    let mut p = SceneParams::new(2000, 1);
    p.volume_fraction = 0.01;
    let boxes: Vec<_> = generate_boxes(SceneKind::Clusters, &p)
        .iter()
        .map(|b| b.aabb())
        .collect();
    let mut brute = 0u64;
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            brute += (0..3).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k]) as u64;
        }
    }
    assert!(brute > 100, "too few pairs to mean much: {brute}");
    for r in &rows {
        assert_eq!(r["shape"], "aabb");
        assert_eq!(r["verified"], true);
        assert_eq!(r["pairs_per_frame"].as_f64().unwrap(), brute as f64);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Boxes shrunk by 2^-90 and polygons by 2^-45 decide as the scenes themselves do, on the CPU
/// and the GPU pipelines (docs/design.md §9.6); polygons shrunk by 2^-70, where SAT's products
/// of two lengths underflow, are rejected naming the limit.
#[test]
fn tiny_shapes_decide_as_their_enlarged_copies_or_are_rejected() {
    let p = SceneParams::new(1500, 3);
    let boxes = generate_boxes(SceneKind::Paper, &p);
    let polys = generate_polygons(SceneKind::Paper, &p).unwrap();
    let (mut want_b, _) = obb_overlaps(&boxes).unwrap();
    let (mut want_p, _) = polygon_overlaps(&polys).unwrap();
    canonicalize(&mut want_b);
    canonicalize(&mut want_p);
    let shrink_boxes = |k: f32| -> Vec<Obb> {
        boxes
            .iter()
            .map(|o| Obb::new(o.center * k, o.half_extents * k, o.rotation))
            .collect()
    };
    let shrink_polys = |k: f32| -> sweepfan::Result<Vec<Polygon>> {
        polys
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let v: Vec<Vec2> = o.vertices().iter().map(|v| *v * k).collect();
                Polygon::new(i, &v)
            })
            .collect()
    };
    let small_b = shrink_boxes(2f32.powi(-90));
    let small_p = shrink_polys(2f32.powi(-45)).unwrap();
    let (mut got_b, _) = obb_overlaps(&small_b).unwrap();
    let (mut got_p, _) = polygon_overlaps(&small_p).unwrap();
    canonicalize(&mut got_b);
    canonicalize(&mut got_p);
    assert_eq!(got_b, want_b);
    assert_eq!(got_p, want_p);
    if let Some(mut gpu) = pipeline(Proxy::Aabb) {
        let mut g = Vec::new();
        gpu.obb_overlaps(&small_b, Some(&mut g)).unwrap();
        canonicalize(&mut g);
        assert_eq!(g, want_b, "GPU boxes");
        let mut g = Vec::new();
        gpu.polygon_overlaps(&small_p, Some(&mut g)).unwrap();
        canonicalize(&mut g);
        assert_eq!(g, want_p, "GPU polygons");
    }
    let e = shrink_polys(2f32.powi(-70)).unwrap_err().to_string();
    assert!(e.contains("below 1e-15"), "{e}");
}

/// One CPU pipeline kept across frames of different sizes and shapes (its buffers hold the last
/// frame's data) finds exactly the all-pairs answer every time.
#[test]
fn a_cpu_pipeline_kept_between_frames_matches_all_pairs_each_frame() {
    use sweepfan::cpu::sat::CpuBoxPipeline;
    let mut pipeline = CpuBoxPipeline::new();
    for (round, n) in [2500usize, 40, 1, 1800, 700, 2].into_iter().enumerate() {
        let boxes = random_boxes(n, 40 + round as u64);
        let (got, _) = pipeline.obb_overlaps(&boxes).unwrap();
        assert_eq!(sorted(got), sorted(all_pairs(&boxes)), "boxes, n = {n}");
        if round % 2 == 0 {
            let mut p = SceneParams::new(n.min(900), 70 + round as u64);
            p.volume_fraction = 0.05;
            let polygons = generate_polygons(SceneKind::Density, &p).unwrap();
            let (got, _) = pipeline.polygon_overlaps(&polygons).unwrap();
            let mut want = Vec::new();
            for i in 0..polygons.len() {
                for j in i + 1..polygons.len() {
                    if polygons[i].overlaps(&polygons[j]) {
                        want.push([i as u32, j as u32]);
                    }
                }
            }
            assert_eq!(sorted(got), want, "polygons, n = {}", polygons.len());
        }
    }
}

/// Candidate lists come back by counts (docs/design.md §9.7): a list longer than the last
/// frame's count with headroom is read to its end by one more map, never cut short.
#[test]
fn candidate_lists_longer_than_planned_come_back_whole() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    let small = clustered_boxes(300, 41);
    let big = clustered_boxes(4_000, 42);
    let mut counts = Vec::new();
    for (boxes, what) in [
        (&small, "small"),
        (&big, "big after small"),
        (&big, "big again"),
        (&small, "small again"),
    ] {
        check_candidates(&mut gpu, boxes, what);
        let mut got = Vec::new();
        counts.push(gpu.obb_candidates(boxes, &mut got).unwrap());
    }
    // The big list outgrows what the small one planned (its count + a quarter + 1024).
    assert!(counts[1] > counts[0] + counts[0] / 4 + 1024, "{counts:?}");
}
