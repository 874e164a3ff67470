//! GPU separating-axis stage against the CPU reference (src/cpu/sat.rs) on lavapipe or a real
//! GPU. Box pairs are exact on both (an error bound, the rest settled exactly: the same pairs);
//! polygon pairs may differ only within a relative 1e-5 of touching (fused multiply-add), any
//! difference checked to be such a pair by testing shrunk and grown copies on the CPU.

use crate::common::test_gpu;
use glam::{Vec2, Vec3};
use sweepfan::Shapes;
use sweepfan::cpu::aabb_sweep;
use sweepfan::cpu::sat::{obb_pairs, polygon_pairs};
use sweepfan::geom::obb::{Obb, obb_frames};
use sweepfan::geom::polygon::{Polygon, PolygonSet, polygon_aabbs};
use sweepfan::gpu::instrument::storage_buffer;
use sweepfan::gpu::{GpuSat, SatCandidates, SatShapes};
use sweepfan::{Pair, canonicalize};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

/// `n` random boxes from `seed`, their candidates (AABB sweep) and the CPU's pairs among
/// those, canonical.
fn boxes_with_cpu_pairs(n: usize, seed: u64) -> (Vec<Obb>, Vec<Pair>, Vec<Pair>) {
    let boxes = random_boxes(n, seed);
    let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
    let mut candidates = Vec::new();
    aabb_sweep(&aabbs, &mut candidates).unwrap();
    let mut cpu = Vec::new();
    obb_pairs(&boxes, &candidates, &mut cpu).unwrap();
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
    let frames_buf = storage_buffer(&ctx, "frames", 64 * frames.len() as u64).unwrap();
    ctx.queue()
        .write_buffer(&frames_buf, 0, bytemuck::cast_slice(&frames));
    let mut padded = candidates.clone();
    padded.extend(std::iter::repeat_n([u32::MAX, 7], 1000));
    let pairs_buf = storage_buffer(&ctx, "cand", 8 * padded.len() as u64).unwrap();
    ctx.queue()
        .write_buffer(&pairs_buf, 0, bytemuck::cast_slice(&padded));
    let counters = [0u32, 0, 0, candidates.len() as u32];
    let count_buf = storage_buffer(&ctx, "count", 16).unwrap();
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
    let (found, mut gpu) = second.settle(sweepfan::gpu::Exact::Boxes(&boxes)).unwrap();
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
    aabb_sweep(&polygon_aabbs(&polys), &mut candidates).unwrap();
    let mut cpu = Vec::new();
    polygon_pairs(&polys, &candidates, &mut cpu).unwrap();
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
    // Both exact (docs/design.md §4.6).
    assert_eq!(cpu, gpu);
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
    assert!(e.to_string().contains("[0, 50]"), "{e}");
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
    let (boxes, cells) = crate::common::cube_lattice(k);
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
            Polygon::new(&v).unwrap()
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

/// The box pipeline's pairs past the caller's memory budget are refused, typed as the pair
/// list's (counted alone, they fit), and its candidates as host memory, where their host copies
/// ignored the budget and could abort the process; with the budget lifted, every pair.
#[test]
fn gpu_box_pairs_past_the_memory_budget_are_refused() {
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    use sweepfan::{Error, Limits, MemoryBudget, Method};
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    // 600 boxes around one point, each turned its own way (parallel edges would leave the
    // device's tests unsure, and a count needs those listed): 179,700 pairs, 1.4 MB as a list,
    // past 1 MiB.
    let boxes: Vec<Obb> = (0..600)
        .map(|i| {
            let turned = glam::Quat::from_euler(glam::EulerRot::XYZ, 0.3, 0.01 * i as f32, 0.7);
            Obb::new(Vec3::ONE, Vec3::splat(0.5), turned)
        })
        .collect();
    let limits = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
    let refused = |what: &str, result: sweepfan::Result<u64>| match result {
        Err(Error::TooLarge { exceeds, message }) => assert!(
            exceeds.is_pair_list() && message.contains("179700 touching pairs"),
            "{what}: {exceeds:?}: {message}"
        ),
        other => panic!("{what}: {other:?}"),
    };
    for proxy in [Proxy::Aabb, Proxy::Sphere(Method::Grid)] {
        let name = proxy.name();
        let mut p = GpuBoxPipeline::new(ctx.clone(), proxy).unwrap();
        let mut pairs = Vec::new();
        let overlaps = limits.run(|| p.obb_overlaps(&boxes, Some(&mut pairs)));
        refused(&name, overlaps.map(|s| s.pairs));
        // Candidates, which no count avoids: host memory, in their own words.
        match limits.run(|| p.obb_candidates(&boxes, &mut pairs)) {
            Err(Error::TooLarge { exceeds, message }) => assert!(
                matches!(exceeds, sweepfan::Exceeds::HostMemory { .. })
                    && message.contains("179700 candidate pairs"),
                "{name}: {exceeds:?}: {message}"
            ),
            other => panic!("{name} candidates: {other:?}"),
        }
        let counted = limits.run(|| p.obb_overlaps(&boxes, None)).unwrap();
        assert_eq!(counted.pairs, 179_700, "{name}");
        assert_eq!(
            p.obb_overlaps(&boxes, Some(&mut pairs)).unwrap().pairs,
            179_700
        );
        assert_eq!(pairs.len(), 179_700, "{name}");
    }
}

/// Shapes far below 1 through the sphere proxy: its radius is the half-extents' length, whose
/// squares underflow in f32 below about 2^-75 (a proxy of radius 0 missed every pair of boxes
/// of half-extent 2^-76 to 2^-90 that touch or overlap); each proxy as found by the AABB one.
#[test]
fn sphere_proxies_of_tiny_shapes_find_their_pairs() {
    use sweepfan::Method;
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let mut sphere = GpuBoxPipeline::new(ctx.clone(), Proxy::Sphere(Method::Grid)).unwrap();
    for e in [0, 60, 76, 90, 98] {
        let k = 2f32.powi(-e);
        // Overlapping, a shared face, and a box on the first one's face.
        let boxes = [
            Obb::axis_aligned(Vec3::ZERO, Vec3::splat(k)),
            Obb::axis_aligned(Vec3::new(1.5 * k, 0.0, 0.0), Vec3::splat(k)),
            Obb::axis_aligned(Vec3::new(0.0, 2.0 * k, 0.0), Vec3::new(k, k, k / 2.0)),
        ];
        let mut pairs = Vec::new();
        sphere.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
        assert_eq!(pairs, [[0, 1], [0, 2], [1, 2]], "half-extent 2^-{e}");
    }
    // Polygons as small as they are accepted (MIN_POLYGON_SPAN, 1e-15: their squares do not
    // underflow), the same way.
    let k = 2f32.powi(-49);
    let square = |x: f32| {
        let v = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        Polygon::new(&v.map(|(a, b)| Vec2::new(x + a * k, b * k))).unwrap()
    };
    let mut pairs = Vec::new();
    let squares = [square(0.0), square(k), square(3.0 * k)];
    sphere.polygon_overlaps(&squares, Some(&mut pairs)).unwrap();
    assert_eq!(pairs, [[0, 1]]);
    // A box at the coordinates' limit is valid; its widened proxy is not a valid sphere: the
    // error names the box and the way out.
    let edge = [Obb::axis_aligned(Vec3::ZERO, Vec3::new(1e18, 0.0, 0.0))];
    let e = sphere.obb_overlaps(&edge, None).unwrap_err();
    assert!(
        matches!(e, sweepfan::Error::InvalidObject { index: 0, .. })
            && e.to_string().contains("Proxy::Aabb"),
        "{e}"
    );
    let mut aabb = GpuBoxPipeline::new(ctx, Proxy::Aabb).unwrap();
    assert_eq!(aabb.obb_overlaps(&edge, None).unwrap().pairs, 0);
}

/// A frame refused for a bad shape leaves no pairs of the frame before in the caller's list
/// (the trait's "cleared first"), on the CPU and the GPU, pairs and contacts alike.
#[test]
fn refused_shape_frames_leave_no_earlier_pairs() {
    use sweepfan::ShapeOverlaps;
    use sweepfan::cpu::sat::CpuBoxPipeline;
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    let good = [
        Obb::axis_aligned(Vec3::ZERO, Vec3::ONE),
        Obb::axis_aligned(Vec3::X, Vec3::ONE),
    ];
    let mut bad = good;
    bad[1] = Obb::axis_aligned(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ONE);
    let mut pipelines: Vec<Box<dyn ShapeOverlaps>> = vec![Box::new(CpuBoxPipeline::new())];
    let ctx = test_gpu().map(std::sync::Arc::new);
    if let Some(ctx) = &ctx {
        pipelines.push(Box::new(
            GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap(),
        ));
    }
    for p in &mut pipelines {
        let mut pairs = Vec::new();
        p.obb_overlaps(&good, Some(&mut pairs)).unwrap();
        assert_eq!(pairs, [[0, 1]]);
        assert!(p.obb_overlaps(&bad, Some(&mut pairs)).is_err());
        assert!(pairs.is_empty(), "{pairs:?}");
    }
    let Some(ctx) = ctx else { return };
    let mut gpu = GpuBoxPipeline::new(ctx, Proxy::Aabb).unwrap();
    let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
    gpu.obb_contacts(&good, &mut pairs, &mut contacts).unwrap();
    assert_eq!((pairs.len(), contacts.len()), (1, 1));
    assert!(gpu.obb_contacts(&bad, &mut pairs, &mut contacts).is_err());
    assert!(pairs.is_empty() && contacts.is_empty());
    gpu.obb_candidates(&good, &mut pairs).unwrap();
    assert!(gpu.obb_candidates(&bad, &mut pairs).is_err());
    assert!(pairs.is_empty());
}

/// Polygons one lowest bit from touching (a vertex on a slanted edge, moved either way or not),
/// at three scales: the CPU's test is the exact oracle's, and the GPU's (host-fed and the
/// pipeline's frame, which settle what the device leaves unsure) is the CPU's. Every pair of
/// the scene is compared (the triangles lie around the origin).
#[test]
fn polygons_one_bit_from_touching_are_exact() {
    use crate::common::{hairline_polygons, polygon_oracle};
    let gpu = test_gpu().map(std::sync::Arc::new);
    for scale in [1.0, 2f32.powi(-60), 2f32.powi(30)] {
        let polys = hairline_polygons(100, 3, scale);
        let n = polys.len() as u32;
        let candidates: Vec<Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| [i, j]))
            .collect();
        let want: Vec<Pair> = candidates
            .iter()
            .copied()
            .filter(|&[i, j]| {
                polygon_oracle(polys[i as usize].vertices(), polys[j as usize].vertices())
            })
            .collect();
        // Of the built pairs a third touch exactly, a third overlap by a hair, a third do not.
        let built = (0..n / 2)
            .filter(|k| want.contains(&[2 * k, 2 * k + 1]))
            .count();
        assert!((55..=80).contains(&built), "scale {scale}: {built}");
        let mut cpu = Vec::new();
        polygon_pairs(&polys, &candidates, &mut cpu).unwrap();
        assert_eq!(cpu, want, "scale {scale}: the CPU");
        let Some(ctx) = &gpu else { continue };
        let set = PolygonSet::new(&polys).unwrap();
        let mut got = Vec::new();
        GpuSat::new(ctx)
            .unwrap()
            .polygon_pairs(ctx, &set, &candidates, Some(&mut got))
            .unwrap();
        canonicalize(&mut got);
        assert_eq!(got, want, "scale {scale}: host-fed");
        let mut pipe =
            sweepfan::gpu::GpuBoxPipeline::new(ctx.clone(), sweepfan::gpu::Proxy::Aabb).unwrap();
        pipe.polygon_overlaps(&polys, Some(&mut got)).unwrap();
        canonicalize(&mut got);
        assert_eq!(got, want, "scale {scale}: the pipeline's frame");
        // The frame with its contacts, in one submission: the unsure pairs settled with theirs.
        let mut contacts = Vec::new();
        pipe.polygon_contacts(&polys, &mut got, &mut contacts)
            .unwrap();
        assert_eq!(got, want, "scale {scale}: the contacts frame");
        let touching = contacts.iter().all(|c| c.count > 0 && c.depth >= 0.0);
        assert!(touching, "scale {scale}: every listed pair has a contact");
    }
}

/// On a software adapter (llvmpipe stops an invocation's loops after 65,535 iterations), a
/// polygon pair whose test could loop longer is refused by name; elsewhere it is tested.
#[test]
fn polygons_past_a_software_adapters_loop_cap_are_refused_there() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let ngon = |k: usize, x: f32| {
        let v: Vec<Vec2> = (0..k)
            .map(|i| {
                let a = i as f32 * std::f32::consts::TAU / k as f32;
                Vec2::new(x + a.cos(), a.sin())
            })
            .collect();
        Polygon::new(&v).unwrap()
    };
    // Three 300-gons: the first two overlap, the third is apart.
    let polys = vec![ngon(300, 0.0), ngon(300, 1.5), ngon(300, 9.0)];
    let software = ctx.info().device_type == wgpu::DeviceType::Cpu;
    let check = |r: sweepfan::error::Result<()>, what: &str| match r {
        Err(e) if software => {
            let e = e.to_string();
            assert!(
                e.contains("300 vertices") && e.contains("software adapter"),
                "{what}: {e}"
            )
        }
        r => assert!(!software && r.is_ok(), "{what}: {r:?}"),
    };
    let mut pairs = Vec::new();
    let mut pipe =
        sweepfan::gpu::GpuBoxPipeline::new(ctx.clone(), sweepfan::gpu::Proxy::Aabb).unwrap();
    check(
        pipe.polygon_overlaps(&polys, Some(&mut pairs)).map(|_| ()),
        "pipeline",
    );
    if !software {
        assert_eq!(pairs, [[0, 1]]);
    }
    let set = PolygonSet::new(&polys).unwrap();
    let r =
        GpuSat::new(&ctx)
            .unwrap()
            .polygon_pairs(&ctx, &set, &[[0, 1], [1, 2]], Some(&mut pairs));
    check(r.map(|_| ()), "host-fed");
    if !software {
        assert_eq!(pairs, [[0, 1]], "host-fed");
    }
    let mut contacts = Vec::new();
    let r = sweepfan::gpu::GpuContacts::new(&ctx).unwrap().contacts(
        &ctx,
        Shapes::Polygons(&polys),
        &[[0, 1]],
        &mut contacts,
    );
    check(r, "contacts");
    if !software {
        assert!(contacts.len() == 1 && contacts[0].count > 0, "{contacts:?}");
    }
    // Small polygons beside them are not refused: 100-gons stay within the cap.
    let small = vec![ngon(100, 0.0), ngon(100, 1.5)];
    pipe.polygon_overlaps(&small, Some(&mut pairs)).unwrap();
    assert_eq!(pairs, [[0, 1]]);
}
