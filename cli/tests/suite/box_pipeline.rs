//! The GPU box / polygon pipeline (src/gpu/boxes/pipeline.rs) against the CPU pipeline
//! (`cpu::sat::obb_overlaps`), an all-pairs SAT and, for lattices, overlaps known by
//! construction. GPU and CPU may differ only on pairs within a relative 1e-5 of touching (checked
//! by testing shrunk and grown copies on the CPU).

use super::box_aabb_sweep::{check_candidates, clustered_boxes};
use crate::common::test_gpu;
use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::sync::Arc;
use sweepfan::broadphase::Method;
use sweepfan::cpu::sat::{obb_overlaps, polygon_overlaps};
use sweepfan::geom::obb::Obb;
use sweepfan::geom::polygon::Polygon;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::{Pair, canonicalize};
use sweepfan_cli::run::verify_shapes::Shapes;
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
use sweepfan_scenes::{SceneKind, SceneParams};

pub(super) fn pipeline(proxy: Proxy) -> Option<GpuBoxPipeline> {
    let ctx = Arc::new(test_gpu()?);
    Some(GpuBoxPipeline::new(ctx, proxy).expect("pipeline"))
}

/// The pipeline with the subgroup appends (where the adapter has them) and the portable ones.
pub(super) fn both_pipelines(proxy: Proxy) -> Option<[GpuBoxPipeline; 2]> {
    let contexts = crate::common::both_appends()?;
    Some(contexts.map(|ctx| GpuBoxPipeline::new(Arc::new(ctx), proxy).expect("pipeline")))
}

pub(super) fn sorted(mut pairs: Vec<Pair>) -> Vec<Pair> {
    canonicalize(&mut pairs);
    pairs
}

/// No pair in one list and not the other (the verification rule of `run::verify_shapes`).
pub(super) fn assert_same_pairs(a: &[Pair], b: &[Pair], what: &str) {
    let wrong = Shapes::differences(a, b);
    assert!(
        wrong.is_empty(),
        "{what}: pairs {:?} differ",
        &wrong[..wrong.len().min(10)]
    );
}

pub(super) fn all_pairs(boxes: &[Obb]) -> Vec<Pair> {
    crate::common::brute_pairs(boxes, Obb::overlaps)
}

pub(super) fn random_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let mut p = SceneParams::new(n, seed);
    p.volume_fraction = 0.05;
    generate_boxes(SceneKind::Density, &p)
}

/// Axis-aligned unit cubes on an integer lattice: cubes touch exactly when their lattice
/// coordinates differ by at most 1 on every axis (faces, edges, corners), exact in f32.
pub(super) fn lattice(side: u32) -> (Vec<Obb>, Vec<Pair>) {
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
        assert_same_pairs(&out, &brute, "GPU vs all pairs");
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
    assert_same_pairs(&sorted(out), &cpu, "GPU vs CPU, 100k");
}

#[test]
fn polygons_gpu_equals_cpu_and_all_pairs() {
    let Some([mut gpu, mut portable]) = both_pipelines(Proxy::Aabb) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let polygons: Vec<Polygon> = (0..1_000)
        .map(|_| {
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
            Polygon::new(&v).unwrap()
        })
        .collect();
    let brute = crate::common::brute_pairs(&polygons, Polygon::overlaps);
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
fn empty_input_has_no_pairs_and_invalid_input_is_an_error() {
    let Some(mut gpu) = pipeline(Proxy::Aabb) else {
        return;
    };
    // No shapes: no pairs, as every broad phase's empty frame.
    assert_eq!(gpu.obb_overlaps(&[], None).unwrap().pairs, 0);
    let bad = [Obb::axis_aligned(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0))];
    assert!(gpu.obb_overlaps(&bad, None).is_err());
    assert_eq!(gpu.polygon_overlaps(&[], None).unwrap().pairs, 0);
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
                Polygon::new(&v).map_err(|f| f.at(i))
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
    use sweepfan::ShapeOverlaps;
    use sweepfan::cpu::sat::CpuBoxPipeline;
    let mut pipeline = CpuBoxPipeline::new();
    for (round, n) in [2500usize, 40, 1, 1800, 700, 2].into_iter().enumerate() {
        let boxes = random_boxes(n, 40 + round as u64);
        let mut got = Vec::new();
        pipeline.obb_overlaps(&boxes, Some(&mut got)).unwrap();
        assert_eq!(sorted(got), sorted(all_pairs(&boxes)), "boxes, n = {n}");
        if round % 2 == 0 {
            let mut p = SceneParams::new(n.min(900), 70 + round as u64);
            p.volume_fraction = 0.05;
            let polygons = generate_polygons(SceneKind::Density, &p).unwrap();
            let mut got = Vec::new();
            pipeline
                .polygon_overlaps(&polygons, Some(&mut got))
                .unwrap();
            let want = crate::common::brute_pairs(&polygons, Polygon::overlaps);
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
