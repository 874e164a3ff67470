//! Contacts on the GPU beyond the host-fed box kernel (docs/design.md §4.8): the box and polygon
//! pipeline's one submission from upload to contacts against the CPU pipeline's pairs and the
//! CPU's contacts of them (first frame, which grows the lists, and the next, which fits; exact
//! touching, whose pairs the device leaves unsure and the host settles), and the sphere and
//! polygon kernels against `cpu::contacts`. Depths agree within `REL` of the pair's extent;
//! where the normals differ, the device's is a least axis too (a tie within rounding).

use crate::common::test_gpu;
use crate::gpu_contacts::compare;
use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use sweepfan::Shapes;
use sweepfan::cpu::contacts::{obb_contacts, polygon_contacts, sphere_contacts};
use sweepfan::gpu::GpuContacts;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::{Contact, Obb, Pair, Polygon, Sphere};
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
use sweepfan_scenes::random::vec3_in;
use sweepfan_scenes::{SceneKind, SceneParams};

/// As in `gpu_contacts`: both f32, the device free to fuse and approximate.
const REL: f32 = 1.0 / 16384.0;

/// The CPU's pairs (sorted) and their contacts.
fn cpu_box_contacts(boxes: &[Obb]) -> (Vec<Pair>, Vec<Contact>) {
    let (mut pairs, _) = sweepfan::cpu::sat::obb_overlaps(boxes).unwrap();
    pairs.sort_unstable();
    let mut contacts = Vec::new();
    obb_contacts(boxes, &pairs, &mut contacts).unwrap();
    (pairs, contacts)
}

/// One frame of `boxes` through the pipeline's contacts, checked against the CPU.
fn check_box_frame(pipe: &mut GpuBoxPipeline, boxes: &[Obb], what: &str) -> usize {
    let (mut pairs, mut contacts) = (vec![[7, 7]], vec![Contact::default()]);
    let stats = pipe.obb_contacts(boxes, &mut pairs, &mut contacts).unwrap();
    let (cpu_pairs, cpu_contacts) = cpu_box_contacts(boxes);
    assert_eq!(pairs, cpu_pairs, "{what}: the pairs, sorted, are the CPU's");
    assert_eq!(stats.pairs, pairs.len() as u64, "{what}");
    assert_eq!(contacts.len(), pairs.len(), "{what}");
    compare(boxes, &pairs, &contacts, &cpu_contacts, what);
    pairs.len()
}

#[test]
fn one_submission_gives_the_cpus_pairs_and_contacts() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    for proxy in [Proxy::Aabb, Proxy::Sphere(sweepfan::Method::Grid)] {
        let mut pipe = GpuBoxPipeline::new(ctx.clone(), proxy).unwrap();
        for (kind, n, seed) in [
            (SceneKind::Paper, 12_000, 5),
            (SceneKind::Clusters, 6_000, 6),
        ] {
            let boxes = generate_boxes(kind, &SceneParams::new(n, seed));
            // The first frame grows the SAT list (a second run), the next one fits.
            for frame in 0..2 {
                let what = format!("{proxy:?} {kind:?} frame {frame}");
                let found = check_box_frame(&mut pipe, &boxes, &what);
                assert!(found > n / 4, "{what}: {found}");
            }
        }
        // The candidate list overflowing too (the whole frame runs again).
        pipe.set_candidate_capacity(1).unwrap();
        let boxes = generate_boxes(SceneKind::Paper, &SceneParams::new(3_000, 8));
        check_box_frame(&mut pipe, &boxes, "candidate overflow");
    }
}

/// Unit cubes whose faces touch exactly (a margin of 0, within the device's error bound: every
/// touching pair comes back unsure, listed reversed) beside cubes a hair apart (unsure too,
/// then dropped by the host with their contacts), turned about z so the axes are not exact.
#[test]
fn pairs_the_device_leaves_unsure_keep_their_contacts_in_order() {
    let Some(ctx) = test_gpu() else { return };
    let mut pipe = GpuBoxPipeline::new(Arc::new(ctx), Proxy::Aabb).unwrap();
    let mut boxes = Vec::new();
    for row in 0..40 {
        // Every position exact in f32: integers and multiples of 2^-18 below 32.
        let mut x = 0.0f32;
        for k in 0..30 {
            boxes.push(Obb::axis_aligned(
                Vec3::new(x, row as f32 * 3.0, 0.0),
                Vec3::splat(0.5),
            ));
            let gap = if (row + k) % 3 == 0 {
                1.0 / 262_144.0
            } else {
                0.0
            };
            x += 1.0 + gap;
        }
    }
    let turn = Quat::from_rotation_z(0.3);
    let turned: Vec<Obb> = boxes
        .iter()
        .map(|b| Obb::new(turn * b.center, b.half_extents, turn))
        .collect();
    for (scene, what) in [(&boxes, "axis-aligned"), (&turned, "turned")] {
        let found = check_box_frame(&mut pipe, scene, what);
        assert!(found > 250, "{what}: {found}");
    }
    // The normal of an exactly touching pair points from its first cube to its second (+x):
    // a reversed pair's contact would point back.
    let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
    pipe.obb_contacts(&boxes, &mut pairs, &mut contacts)
        .unwrap();
    let at = pairs
        .iter()
        .position(|p| *p == [1, 2])
        .expect("cubes 1 and 2 touch");
    let c = contacts[at];
    assert!(c.normal.dot(Vec3::X) > 1.0 - 1e-6, "{c:?}");
    assert!(c.depth.abs() < 1e-6 && c.count == 4, "{c:?}");
}

/// The device's planar contacts against the CPU's: depths within REL of the extent, one or two
/// points on a touching pair, the same points up to order where the normals agree, and where
/// they differ the device's normal a least axis too (its overlap, in f64, the CPU's depth).
fn compare_planar(
    polygons: &[Polygon],
    pairs: &[Pair],
    gpu: &[Contact],
    cpu: &[Contact],
    what: &str,
) {
    assert_eq!(gpu.len(), cpu.len(), "{what}");
    for ((p, g), c) in pairs.iter().zip(gpu).zip(cpu) {
        let (a, b) = (&polygons[p[0] as usize], &polygons[p[1] as usize]);
        let extent: f32 = [a, b]
            .iter()
            .flat_map(|q| q.vertices())
            .map(|v| v.abs().element_sum())
            .fold(0.0, f32::max)
            * 4.0;
        let tol = REL * extent;
        let at = format!("{what}, pair {p:?}: gpu {g:?}, cpu {c:?}");
        assert!((g.depth - c.depth).abs() <= tol, "{at}");
        assert!(
            g.normal.z == 0.0 && (g.normal.length() - 1.0).abs() < 1e-4,
            "{at}"
        );
        if c.count > 0 {
            assert!((1..=2).contains(&g.count), "{at}");
        }
        if g.normal.dot(c.normal) > 1.0 - 1e-4 {
            let same = g.count == c.count
                && c.points()
                    .iter()
                    .all(|q| g.points().iter().any(|r| r.distance(*q) <= 4.0 * tol));
            assert!(same, "{at}");
        } else {
            let n = g.normal.truncate().as_dvec2();
            let reach = |q: &Polygon, f: fn(f64, f64) -> f64, from: f64| {
                q.vertices()
                    .iter()
                    .map(|v| v.as_dvec2().dot(n))
                    .fold(from, f)
            };
            let overlap = reach(a, f64::max, f64::MIN) - reach(b, f64::min, f64::MAX);
            assert!(
                (overlap - c.depth as f64).abs() <= tol as f64,
                "{at}: {overlap}"
            );
        }
    }
}

#[test]
fn polygon_contacts_on_the_gpu_match_the_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let polygons = generate_polygons(SceneKind::Paper, &SceneParams::new(8_000, 4)).unwrap();
    let (mut cpu_pairs, _) = sweepfan::cpu::sat::polygon_overlaps(&polygons).unwrap();
    cpu_pairs.sort_unstable();
    let mut cpu = Vec::new();
    polygon_contacts(&polygons, &cpu_pairs, &mut cpu).unwrap();
    assert!(cpu_pairs.len() > 2_000, "{}", cpu_pairs.len());
    // In the pipeline's one submission, twice (the first frame grows the lists).
    let mut pipe = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    for frame in 0..2 {
        let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
        pipe.polygon_contacts(&polygons, &mut pairs, &mut contacts)
            .unwrap();
        assert_eq!(pairs, cpu_pairs, "frame {frame}");
        compare_planar(&polygons, &pairs, &contacts, &cpu, "pipeline");
    }
    // From the host's pairs, reversed ones included (the normal then points the other way).
    let mut kernel = GpuContacts::new(&ctx).unwrap();
    let reversed: Vec<Pair> = cpu_pairs.iter().map(|&[i, j]| [j, i]).collect();
    let (mut gpu, mut cpu_rev) = (Vec::new(), Vec::new());
    kernel
        .contacts(&ctx, Shapes::Polygons(&polygons), &reversed, &mut gpu)
        .unwrap();
    polygon_contacts(&polygons, &reversed, &mut cpu_rev).unwrap();
    compare_planar(&polygons, &reversed, &gpu, &cpu_rev, "host pairs, reversed");
    // Squares touching exactly, and a pair apart (no points, minus the gap).
    let square = |x: f32, y: f32| {
        let v =
            [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map(|(a, b)| Vec2::new(x + a, y + b));
        Polygon::new(&v).unwrap()
    };
    let squares = [square(0.0, 0.0), square(1.0, 0.25), square(3.0, 0.0)];
    let pairs = [[0, 1], [1, 2]];
    kernel
        .contacts(&ctx, Shapes::Polygons(&squares), &pairs, &mut gpu)
        .unwrap();
    assert!(gpu[0].normal.dot(Vec3::X) > 1.0 - 1e-6, "{:?}", gpu[0]);
    assert!(
        gpu[0].depth.abs() < 1e-6 && gpu[0].count == 2,
        "{:?}",
        gpu[0]
    );
    assert!(
        (gpu[1].depth + 1.0).abs() < 1e-6 && gpu[1].count == 0,
        "{:?}",
        gpu[1]
    );
    // Far from the origin, the points worked out by hand (the CPU's test, on the device).
    crate::polygon_contacts_far::check_far_polygon_pairs(|pair| {
        kernel
            .contacts(&ctx, Shapes::Polygons(pair), &[[0, 1]], &mut gpu)
            .unwrap();
        gpu[0]
    });
}

#[test]
fn sphere_contacts_on_the_gpu_match_the_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let mut kernel = GpuContacts::new(&ctx).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    // Powers of two: the touching pairs below stay exact. At 2^-70 and 2^-83 (about 1e-25)
    // the squares of the centres' differences underflow f32.
    for scale in [
        1.0f32,
        1.0 / 1_048_576.0,
        1_048_576.0,
        2f32.powi(-70),
        2f32.powi(-83),
    ] {
        let mut spheres: Vec<Sphere> = (0..600)
            .map(|_| {
                let c = vec3_in(&mut rng, -4.0..4.0);
                Sphere::new(c * scale, rng.random_range(0.2..1.2) * scale)
            })
            .collect();
        // Exactly touching, coincident centres, one inside another.
        spheres.extend([
            Sphere::new(Vec3::new(20.0, 0.0, 0.0) * scale, scale),
            Sphere::new(Vec3::new(22.0, 0.0, 0.0) * scale, scale),
            Sphere::new(Vec3::new(30.0, 0.0, 0.0) * scale, scale),
            Sphere::new(Vec3::new(30.0, 0.0, 0.0) * scale, 0.5 * scale),
        ]);
        let n = spheres.len() as u32;
        let mut pairs: Vec<Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| [i, j]))
            .filter(|&[i, j]| spheres[i as usize].touches(&spheres[j as usize]))
            .collect();
        assert!(pairs.contains(&[n - 4, n - 3]) && pairs.contains(&[n - 2, n - 1]));
        // A pair apart too.
        pairs.push([n - 3, n - 2]);
        let (mut gpu, mut cpu) = (Vec::new(), Vec::new());
        kernel
            .contacts(&ctx, Shapes::Spheres(&spheres), &pairs, &mut gpu)
            .unwrap();
        sphere_contacts(&spheres, &pairs, &mut cpu).unwrap();
        assert_eq!(gpu.len(), pairs.len());
        for ((p, g), c) in pairs.iter().zip(&gpu).zip(&cpu) {
            let (a, b) = (spheres[p[0] as usize], spheres[p[1] as usize]);
            let extent =
                a.center.abs().element_sum() + b.center.abs().element_sum() + a.radius + b.radius;
            let tol = REL * extent;
            let at = format!("scale {scale}, pair {p:?}: gpu {g:?}, cpu {c:?}");
            assert!((g.depth - c.depth).abs() <= tol, "{at}");
            assert!(g.normal.dot(c.normal) > 1.0 - 1e-5, "{at}");
            if c.depth.abs() > tol {
                assert_eq!(g.count, c.count, "{at}");
            }
            if g.count == 1 && c.count == 1 {
                assert!(g.points[0].distance(c.points[0]) <= tol, "{at}");
            }
        }
        let touching = &gpu[pairs.len() - 3];
        assert!(touching.normal.dot(Vec3::X) > 1.0 - 1e-6, "{touching:?}");
        assert!(
            touching.depth.abs() <= 1e-6 * scale && touching.count == 1,
            "{touching:?}"
        );
        assert_eq!(gpu.last().unwrap().count, 0);
    }
    // Bad input: the pair functions' errors.
    let two = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
    let mut out = Vec::new();
    let e = kernel
        .contacts(&ctx, Shapes::Spheres(&two), &[[0, 2]], &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("[0, 2]"), "{e}");
    let nan = [two[0], Sphere::new(Vec3::new(f32::NAN, 0.0, 0.0), 1.0)];
    assert!(
        kernel
            .contacts(&ctx, Shapes::Spheres(&nan), &[[0, 1]], &mut out)
            .is_err()
    );
    kernel
        .contacts(&ctx, Shapes::Spheres(&two), &[], &mut out)
        .unwrap();
    assert!(out.is_empty());
}

#[test]
fn sphere_frames_give_the_cpus_pairs_and_contacts_in_one_submission() {
    use sweepfan::cpu::contacts::compare_contacts;
    use sweepfan::{GpuBroadPhase, Method};
    use sweepfan_scenes::Scene;
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let mut kernels = GpuContacts::new(&ctx).unwrap();
    for method in [Method::Grid, Method::Sap] {
        let mut broad = GpuBroadPhase::new(ctx.clone(), method).unwrap();
        for (kind, seed) in [(SceneKind::Paper, 3), (SceneKind::MixedRadii, 4)] {
            let spheres = Scene::generate(kind, &SceneParams::new(20_000, seed)).spheres;
            let mut cpu_pairs = Vec::new();
            sweepfan::cpu::broad_phase(Method::Grid)
                .find_pairs(&spheres, Some(&mut cpu_pairs))
                .unwrap();
            sweepfan::canonicalize(&mut cpu_pairs);
            let mut cpu = Vec::new();
            sphere_contacts(&spheres, &cpu_pairs, &mut cpu).unwrap();
            // The first frame grows the list, the next fits.
            for frame in 0..2 {
                let what = format!("{method:?} {kind:?} frame {frame}");
                let (mut pairs, mut contacts) = (vec![[9, 9]], Vec::new());
                let stats = kernels
                    .sphere_frame(&mut broad, &spheres, &mut pairs, &mut contacts)
                    .unwrap();
                assert_eq!(pairs, cpu_pairs, "{what}");
                assert_eq!(stats.pairs, pairs.len() as u64, "{what}");
                let check = compare_contacts(&spheres, &pairs, &contacts, &cpu);
                assert_eq!(check.wrong, 0, "{what}: {:?}", check.first_wrong);
                assert_eq!(check.ties, 0, "{what}");
                assert!(contacts.iter().all(|c| c.count == 1), "{what}");
            }
        }
        // An empty scene: no pairs; bad spheres: the pair functions' error.
        let (mut pairs, mut contacts) = (vec![[1, 2]], vec![Contact::default()]);
        kernels
            .sphere_frame(&mut broad, &[], &mut pairs, &mut contacts)
            .unwrap();
        assert!(pairs.is_empty() && contacts.is_empty());
        let bad = [Sphere::new(Vec3::ZERO, -1.0), Sphere::new(Vec3::X, 1.0)];
        assert!(
            kernels
                .sphere_frame(&mut broad, &bad, &mut pairs, &mut contacts)
                .is_err()
        );
    }
}

/// The device's sphere contacts of the caller's pairs have points exactly when the pair touches
/// in real arithmetic (the host settles those the f32 kernel cannot tell), as the CPU's.
#[test]
fn gpu_sphere_contacts_touch_exactly_when_the_spheres_do() {
    let Some(ctx) = test_gpu() else { return };
    let mut kernel = GpuContacts::new(&ctx).unwrap();
    let mut apart = 0;
    for (scale, s, pairs) in crate::contacts::hairline_sphere_pairs() {
        let mut gpu = Vec::new();
        kernel
            .contacts(&ctx, Shapes::Spheres(&s), &pairs, &mut gpu)
            .unwrap();
        let what = format!("scale {scale}, gpu");
        // Depths within a hair of 0 on both sides: the CPU's within the tolerance too.
        apart += crate::contacts::assert_touch_exactly(&what, &s, &pairs, &gpu);
    }
    assert!(apart > 20, "the scenes hold pairs just apart ({apart})");
}

/// A polygon with an edge so short that its square underflows f32 (a corner cut at 1e-23 of an
/// ordinary square) still has finite unit normals: an overlapping pair gets its contact, on the
/// CPU and the GPU (it once got depth -inf and no point).
#[test]
fn polygons_with_a_tiny_edge_have_contacts() {
    let gpu = test_gpu();
    for cut in [1e-23f32, 1e-29, 1e-20] {
        let pentagon = [(cut, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, cut)];
        let a: Vec<Vec2> = pentagon.iter().map(|&(x, y)| Vec2::new(x, y)).collect();
        let b = [
            Vec2::new(-1.0, -1.0),
            Vec2::new(2.0, -1.0),
            Vec2::new(-1.0, 2.0),
        ];
        let polys = vec![Polygon::new(&a).unwrap(), Polygon::new(&b).unwrap()];
        let mut out = vec![polygon_contacts_on_cpu(&polys)];
        if let Some(ctx) = &gpu {
            let mut on_gpu = Vec::new();
            GpuContacts::new(ctx)
                .unwrap()
                .contacts(ctx, Shapes::Polygons(&polys), &[[0, 1]], &mut on_gpu)
                .unwrap();
            out.push(on_gpu[0]);
        }
        for c in out {
            assert!(
                c.count > 0 && c.depth.is_finite() && c.depth >= 0.0,
                "cut {cut}: {c:?}"
            );
            assert!((c.normal.length() - 1.0).abs() < 1e-5, "cut {cut}: {c:?}");
        }
    }
}

fn polygon_contacts_on_cpu(polys: &[Polygon]) -> Contact {
    let mut out = Vec::new();
    polygon_contacts(polys, &[[0, 1]], &mut out).unwrap();
    out[0]
}

/// Contacts read back past the caller's memory budget are refused, never an abort: the pair
/// list as the pair list's kind, the contacts (about 84 bytes a pair on the host) as host
/// memory, each naming what it holds; the next frame within the budget is whole.
#[test]
fn contact_lists_past_the_memory_budget_are_refused() {
    use sweepfan::{Error, Exceeds, GpuBroadPhase, Limits, MemoryBudget, Method};
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let refused = |what: &str, result: sweepfan::Result<sweepfan::Stats>, pairs: bool, n: &str| {
        match result {
            Err(Error::TooLarge { exceeds, message }) => assert!(
                exceeds.is_pair_list() == pairs
                    && (pairs || matches!(exceeds, Exceeds::HostMemory { .. }))
                    && message.contains(n),
                "{what}: {exceeds:?}: {message}"
            ),
            other => panic!("{what}: {other:?}"),
        }
    };
    // 1,000 spheres at one point: 499,500 pairs, 4 MB as a list and 42 MB of contacts.
    let spheres = vec![Sphere::new(Vec3::ONE, 1.0); 1000];
    let mut kernels = GpuContacts::new(&ctx).unwrap();
    let mut broad = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
    for (mib, is_pair_list, named) in [
        (1, true, "499500 touching pairs"),
        (16, false, "contacts of 499500 touching pairs"),
    ] {
        let limits = Limits::new().with_memory(MemoryBudget::Bytes(mib << 20));
        let frame =
            limits.run(|| kernels.sphere_frame(&mut broad, &spheres, &mut pairs, &mut contacts));
        refused(&format!("spheres in {mib} MiB"), frame, is_pair_list, named);
    }
    let whole = kernels.sphere_frame(&mut broad, &spheres, &mut pairs, &mut contacts);
    assert_eq!(whole.unwrap().pairs, 499_500);
    assert_eq!((pairs.len(), contacts.len()), (499_500, 499_500));
    assert!(pairs.is_sorted() && pairs[0] == [0, 1]);
    // 600 boxes about one point, each turned its own way: 179,700 pairs, 15 MB of contacts.
    let boxes: Vec<Obb> = (0..600)
        .map(|i| {
            let turned = Quat::from_euler(glam::EulerRot::XYZ, 0.3, 0.01 * i as f32, 0.7);
            Obb::new(Vec3::ONE, Vec3::splat(0.5), turned)
        })
        .collect();
    let mut pipe = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    let limits = Limits::new().with_memory(MemoryBudget::Bytes(4 << 20));
    let frame = limits.run(|| pipe.obb_contacts(&boxes, &mut pairs, &mut contacts));
    refused(
        "boxes in 4 MiB",
        frame,
        false,
        "contacts of 179700 touching pairs",
    );
    assert!(
        pairs.is_empty() && contacts.is_empty(),
        "a refused frame leaves no lists"
    );
    assert_eq!(
        check_box_frame(&mut pipe, &boxes, "boxes after a refusal"),
        179_700
    );
}
