//! GPU separating-axis stage against the CPU reference (src/cpu/sat.rs) on lavapipe or a real
//! GPU. Box pairs are exact on both (an error bound, the rest settled exactly: the same pairs);
//! polygon pairs may differ only within a relative 1e-5 of touching (fused multiply-add), any
//! difference checked to be such a pair by testing shrunk and grown copies on the CPU.

use crate::common::test_gpu;
use glam::{Quat, Vec2, Vec3};
use sweepfan::cpu::aabb_sweep;
use sweepfan::cpu::sat::{obb_pairs, polygon_set_pairs};
use sweepfan::geom::obb::{Obb, obb_frames};
use sweepfan::geom::polygon::{Polygon, PolygonSet, polygon_aabbs};
use sweepfan::geom::sat::polygons_overlap;
use sweepfan::gpu::{GpuSat, SatCandidates, SatShapes};
use sweepfan::{Pair, canonicalize};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

const TOUCH_REL: f32 = 1e-5;

/// Every pair in exactly one list must be within the touching band.
fn assert_only_touching_differ(
    cpu: &[Pair],
    gpu: &[Pair],
    overlap_resized: impl Fn(Pair, f32) -> bool,
) -> usize {
    use std::collections::BTreeSet;
    let c: BTreeSet<Pair> = cpu.iter().copied().collect();
    let g: BTreeSet<Pair> = gpu.iter().copied().collect();
    assert_eq!(g.len(), gpu.len(), "GPU emitted a pair twice");
    let mut band = 0;
    for p in c.symmetric_difference(&g) {
        assert!(
            overlap_resized(*p, 1.0) && !overlap_resized(*p, -1.0),
            "pair {p:?} differs (cpu: {}, gpu: {}) and is not within the touching band",
            c.contains(p),
            g.contains(p)
        );
        band += 1;
    }
    band
}

/// `n` random boxes from `seed`, their candidates (AABB sweep) and the CPU's pairs among
/// those, canonical.
fn boxes_with_cpu_pairs(n: usize, seed: u64) -> (Vec<Obb>, Vec<Pair>, Vec<Pair>) {
    let boxes = random_boxes(n, seed);
    let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
    let mut candidates = Vec::new();
    aabb_sweep(&aabbs, &mut candidates);
    let mut cpu = Vec::new();
    obb_pairs(&boxes, &candidates, &mut cpu).unwrap();
    canonicalize(&mut cpu);
    (boxes, candidates, cpu)
}

#[test]
fn gpu_obb_pairs_match_cpu_on_100k_boxes() {
    let Some(ctx) = test_gpu() else { return };
    let (boxes, candidates, cpu) = boxes_with_cpu_pairs(100_000, 11);
    let mut sat = GpuSat::new(&ctx).unwrap();
    let mut gpu = Vec::new();
    let stats = sat
        .obb_pairs(&ctx, &boxes, &candidates, Some(&mut gpu))
        .unwrap();
    canonicalize(&mut gpu);
    eprintln!(
        "{} candidates, cpu {} pairs, gpu {} pairs",
        candidates.len(),
        cpu.len(),
        gpu.len()
    );
    assert!(
        cpu.len() > 20_000 && candidates.len() > 2 * cpu.len(),
        "scene too sparse/dense"
    );
    assert_eq!(stats.tests, candidates.len() as u64);
    assert_eq!(stats.pairs, gpu.len() as u64);
    // Both decide within an error bound and settle the rest exactly: the same pairs.
    assert_eq!(gpu, cpu);

    // Counting only: the same count, no pairs.
    let stats = sat.obb_pairs(&ctx, &boxes, &candidates, None).unwrap();
    assert_eq!(stats.pairs, gpu.len() as u64);
}

#[test]
fn gpu_resident_candidates_with_overflow_and_regrow() {
    let Some(ctx) = test_gpu() else { return };
    let (boxes, candidates, cpu) = boxes_with_cpu_pairs(5_000, 12);
    assert!(cpu.len() > 1000, "{}", cpu.len());

    // As the GPU broad phase would leave them: a pair buffer with spare room (garbage beyond
    // the count) and the count inside a larger counter buffer.
    let frames = obb_frames(&boxes);
    let frames_buf = ctx
        .storage_buffer("frames", 64 * frames.len() as u64)
        .unwrap();
    ctx.queue()
        .write_buffer(&frames_buf, 0, bytemuck::cast_slice(&frames));
    let mut padded = candidates.clone();
    padded.extend(std::iter::repeat_n([u32::MAX, 7], 1000));
    let pairs_buf = ctx.storage_buffer("cand", 8 * padded.len() as u64).unwrap();
    ctx.queue()
        .write_buffer(&pairs_buf, 0, bytemuck::cast_slice(&padded));
    let counters = [0u32, 0, 0, candidates.len() as u32];
    let count_buf = ctx.storage_buffer("count", 16).unwrap();
    ctx.queue()
        .write_buffer(&count_buf, 0, bytemuck::cast_slice(&counters));

    let mut sat = GpuSat::new(&ctx).unwrap();
    sat.reserve_output(&ctx, 100).unwrap(); // far too small on purpose
    let run = |sat: &mut GpuSat| {
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        sat.encode(
            &ctx,
            &mut enc,
            SatShapes::Obbs {
                frames: &frames_buf,
                n: boxes.len() as u32,
            },
            SatCandidates {
                pairs: &pairs_buf,
                capacity: padded.len() as u32,
                count: &count_buf,
                count_index: 3,
            },
            true,
        )
        .unwrap();
        ctx.queue().submit([enc.finish()]);
        ctx.wait().unwrap();
        sat.read_output(&ctx, true).unwrap()
    };
    let first = run(&mut sat);
    assert!(
        first.listed as usize > 100 && !first.fits(),
        "overflow must be reported"
    );
    sat.reserve_output(&ctx, first.listed).unwrap();
    let second = run(&mut sat);
    assert_eq!((second.listed, second.sure), (first.listed, first.sure));
    let (found, mut gpu) = second.settle(&boxes).unwrap();
    canonicalize(&mut gpu);
    assert_eq!(found, gpu.len() as u64);
    assert_eq!(gpu, cpu);

    // The count now covers the garbage pairs: they are reported, not read out of bounds.
    let counters = [0u32, 0, 0, padded.len() as u32];
    ctx.queue()
        .write_buffer(&count_buf, 0, bytemuck::cast_slice(&counters));
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let shapes = SatShapes::Obbs {
        frames: &frames_buf,
        n: boxes.len() as u32,
    };
    let cands = SatCandidates {
        pairs: &pairs_buf,
        capacity: padded.len() as u32,
        count: &count_buf,
        count_index: 3,
    };
    sat.encode(&ctx, &mut enc, shapes, cands, true).unwrap();
    ctx.queue().submit([enc.finish()]);
    ctx.wait().unwrap();
    let e = sat.read_output(&ctx, true).unwrap_err().to_string();
    assert!(e.contains("1000 SAT candidate pairs name objects"), "{e}");
    // A count index beyond the counter buffer is refused before anything runs.
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let bad = SatCandidates {
        count_index: 4,
        ..cands
    };
    assert!(sat.encode(&ctx, &mut enc, shapes, bad, true).is_err());
}

#[test]
fn gpu_polygon_pairs_match_cpu() {
    let Some(ctx) = test_gpu() else { return };
    // Density-scene polygons (both windings, 3 to 8 vertices): about 2.3 overlaps per polygon.
    let polys = generate_polygons(SceneKind::Density, &SceneParams::new(30_000, 13)).unwrap();
    let set = PolygonSet::new(&polys).unwrap();
    let mut candidates = Vec::new();
    aabb_sweep(&polygon_aabbs(&polys), &mut candidates);
    let mut cpu = Vec::new();
    polygon_set_pairs(&set, &candidates, &mut cpu).unwrap();
    let mut sat = GpuSat::new(&ctx).unwrap();
    let mut gpu = Vec::new();
    sat.polygon_pairs(&ctx, &set, &candidates, Some(&mut gpu))
        .unwrap();
    canonicalize(&mut cpu);
    canonicalize(&mut gpu);
    eprintln!(
        "polygons: {} candidates, cpu {} gpu {}",
        candidates.len(),
        cpu.len(),
        gpu.len()
    );
    assert!(cpu.len() > 10_000 && candidates.len() > cpu.len() + 1000);
    let band = assert_only_touching_differ(&cpu, &gpu, |[i, j], sign| {
        // Scale each polygon about its first vertex's neighbourhood centre by 1 +- 1e-5.
        let grow = |p: &Polygon| {
            let v = p.vertices();
            let c = v.iter().copied().sum::<Vec2>() / v.len() as f32;
            v.iter()
                .map(|x| c + (*x - c) * (1.0 + sign * 4.0 * TOUCH_REL))
                .collect::<Vec<_>>()
        };
        polygons_overlap(&grow(&polys[i as usize]), &grow(&polys[j as usize]))
    });
    assert!(band * 10_000 < cpu.len());
    // Same scratch, different input (buffers are reused, and smaller inputs still work).
    let small = &polys[..50];
    let set = PolygonSet::new(small).unwrap();
    let mut gpu = Vec::new();
    sat.polygon_pairs(&ctx, &set, &[[0, 1], [2, 49]], Some(&mut gpu))
        .unwrap();
    let expected: Vec<Pair> = [[0u32, 1], [2, 49]]
        .into_iter()
        .filter(|&[i, j]| small[i as usize].overlaps(&small[j as usize]))
        .collect();
    assert_eq!(gpu, expected);
    let e = sat
        .polygon_pairs(&ctx, &set, &[[0, 50]], Some(&mut gpu))
        .unwrap_err();
    assert!(e.to_string().contains("do not exist"), "{e}");
    // No candidates: nothing found, no error.
    sat.polygon_pairs(&ctx, &set, &[], Some(&mut gpu)).unwrap();
    assert!(gpu.is_empty());
}

/// Exactly touching shapes (faces, edges, corners on a lattice; every value exact in f32): the
/// GPU must report every touching pair, since touching counts as overlapping.
#[test]
fn gpu_reports_exact_touching_on_a_lattice() {
    let Some(ctx) = test_gpu() else { return };
    let k = 12i32;
    let cells: Vec<[i32; 3]> = (0..k * k * k)
        .map(|i| [i % k, (i / k) % k, i / (k * k)])
        .collect();
    // Unit cubes at integer centres, some turned 180 degrees about z (axes exactly -x, -y, z).
    let boxes: Vec<Obb> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let q = if i % 3 == 0 {
                Quat::from_xyzw(0.0, 0.0, 1.0, 0.0)
            } else {
                Quat::IDENTITY
            };
            Obb::new(
                Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32),
                Vec3::splat(0.5),
                q,
            )
        })
        .collect();
    let neighbours =
        |a: [i32; 3], b: [i32; 3], dims: usize| (0..dims).all(|d| (a[d] - b[d]).abs() <= 1);
    let mut expected: Vec<Pair> = Vec::new();
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            if neighbours(cells[i], cells[j], 3) {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    // All pairs within two cells as candidates: the touching ones and separated ones.
    let candidates: Vec<Pair> = (0..cells.len())
        .flat_map(|i| (i + 1..cells.len()).map(move |j| [i as u32, j as u32]))
        .filter(|&[i, j]| (0..3).all(|d| (cells[i as usize][d] - cells[j as usize][d]).abs() <= 2))
        .collect();
    let mut sat = GpuSat::new(&ctx).unwrap();
    let mut gpu = Vec::new();
    sat.obb_pairs(&ctx, &boxes, &candidates, Some(&mut gpu))
        .unwrap();
    canonicalize(&mut gpu);
    assert_eq!(gpu, expected);

    // Unit squares on a 2D lattice (every other one given clockwise).
    let squares: Vec<Polygon> = (0..k * k)
        .map(|i| {
            let (x, y) = ((i % k) as f32, (i / k) as f32);
            let mut v = vec![
                Vec2::new(x, y),
                Vec2::new(x + 1.0, y),
                Vec2::new(x + 1.0, y + 1.0),
                Vec2::new(x, y + 1.0),
            ];
            if i % 2 == 1 {
                v.reverse();
            }
            Polygon::new(i as usize, &v).unwrap()
        })
        .collect();
    let cell2 = |i: u32| [i as i32 % k, i as i32 / k, 0];
    let n2 = squares.len() as u32;
    let candidates: Vec<Pair> = (0..n2)
        .flat_map(|i| (i + 1..n2).map(move |j| [i, j]))
        .filter(|&[i, j]| (0..2).all(|d| (cell2(i)[d] - cell2(j)[d]).abs() <= 2))
        .collect();
    let expected: Vec<Pair> = candidates
        .iter()
        .copied()
        .filter(|&[i, j]| neighbours(cell2(i), cell2(j), 2))
        .collect();
    let set = PolygonSet::new(&squares).unwrap();
    sat.polygon_pairs(&ctx, &set, &candidates, Some(&mut gpu))
        .unwrap();
    canonicalize(&mut gpu);
    assert_eq!(gpu, expected);
}

/// More candidates than 65,535 workgroups of 64 threads: the indirect dispatch must split into
/// 2D and still test every candidate exactly once (exact count, count-only mode).
#[test]
fn gpu_dispatch_beyond_65535_groups_tests_every_candidate() {
    let Some(ctx) = test_gpu() else { return };
    let boxes = [
        Obb::axis_aligned(Vec3::ZERO, Vec3::ONE),
        Obb::axis_aligned(Vec3::new(1.5, 0.0, 0.0), Vec3::ONE),
        Obb::axis_aligned(Vec3::new(5.0, 0.0, 0.0), Vec3::ONE),
    ];
    let n: u32 = 65_535 * 64 + 1_001;
    // Every third candidate overlaps.
    let candidates: Vec<Pair> = (0..n)
        .map(|k| if k % 3 == 0 { [0, 1] } else { [0, 2] })
        .collect();
    let mut sat = GpuSat::new(&ctx).unwrap();
    let stats = sat.obb_pairs(&ctx, &boxes, &candidates, None).unwrap();
    assert_eq!(stats.pairs, n.div_ceil(3) as u64);
}

/// No shapes: no pairs and no contacts, every output cleared, as the sphere broad phases' empty
/// frames (it was `Error::EmptyScene`).
#[test]
fn gpu_box_frames_of_no_shapes_have_no_pairs() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let mut p = sweepfan::GpuBoxPipeline::new(ctx, sweepfan::gpu::Proxy::Aabb).unwrap();
    let mut pairs = vec![[1, 2]];
    assert_eq!(p.obb_overlaps(&[], Some(&mut pairs)).unwrap().pairs, 0);
    assert!(pairs.is_empty());
    pairs.push([3, 4]);
    assert_eq!(p.polygon_overlaps(&[], Some(&mut pairs)).unwrap().pairs, 0);
    assert!(pairs.is_empty());
    pairs.push([3, 4]);
    let mut contacts = vec![sweepfan::Contact::default()];
    p.obb_contacts(&[], &mut pairs, &mut contacts).unwrap();
    assert!(pairs.is_empty() && contacts.is_empty());
}
