//! The box pipeline's AABB broad phase alone (src/gpu/boxes/aabb_sap/) against an all-pairs
//! AABB overlap in f64 written here: candidates, wide shapes set apart, walks past lavapipe's
//! loop cap, the proxies compared; then non-finite boxes.

use super::box_pipeline::{assert_same_pairs, lattice, pipeline, random_boxes, sorted};
use crate::common::test_gpu;
use glam::{Quat, Vec2, Vec3};
use std::collections::BTreeSet;
use sweepfan::Pair;
use sweepfan::broadphase::Method;
use sweepfan::cpu::sat::{obb_overlaps, polygon_overlaps};
use sweepfan::geom::obb::{Obb, obb_frames};
use sweepfan::geom::polygon::Polygon;
use sweepfan::geom::polygon::PolygonSet;
use sweepfan::gpu::SweepLayout;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons, needle_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

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
pub(super) fn check_candidates(gpu: &mut GpuBoxPipeline, boxes: &[Obb], what: &str) -> usize {
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

pub(super) fn clustered_boxes(n: usize, seed: u64) -> Vec<Obb> {
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
    assert_same_pairs(&sorted(out), &sorted(cpu), "2D dispatch pipeline");
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
        assert_same_pairs(&sorted(out), &cpu, what);
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

/// A row of `n` cubes of half-side `half` along x (cube `i` at x = i, y = `y(i)`), then (index
/// `n`) one long flat box at y = -5 spanning them all on x.
fn row_over_a_long_box(n: u32, half: f32, y: impl Fn(u32) -> f32) -> Vec<Obb> {
    let mut boxes: Vec<Obb> = (0..n)
        .map(|i| Obb::axis_aligned(Vec3::new(i as f32, y(i), 0.0), Vec3::splat(half)))
        .collect();
    boxes.push(Obb::axis_aligned(
        Vec3::new(n as f32 / 2.0, -5.0, 0.0),
        Vec3::new(n as f32 / 2.0 + 10.0, 1.0, 1.0),
    ));
    boxes
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
    // The long box spans every cube on x (so its walk visits all of them) and only the lowered
    // ones on y.
    let boxes = row_over_a_long_box(n, 0.25, |i| if i % 10_000 == 0 { -5.0 } else { 0.0 });
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
    let boxes = row_over_a_long_box(n, 0.1, |i| match i {
        _ if i % 100_000 == 99_999 => -5.0,
        _ if i % 2 == 1 => 10.0,
        _ => 0.0,
    });
    let expected: Vec<Pair> = (99_999..n).step_by(100_000).map(|i| [i, n]).collect();
    // lavapipe (llvmpipe) cuts such loops short: there the error path must fire.
    let cuts_short = test_gpu().is_some_and(|c| c.info().name.contains("llvmpipe"));
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
    assert_same_pairs(&a, &cpu, "aabb vs cpu");
    assert_same_pairs(&s, &cpu, "sphere vs cpu");
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
    polygons.insert(1_000, Polygon::new(&strip).unwrap());
    polygons.push(Polygon::new(&slanted).unwrap());
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
