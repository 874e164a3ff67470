//! Box contacts on the GPU (docs/design.md §4.8) against the CPU's, the oracle: on the paper
//! scene's touching pairs and on random, shallow, tiny and huge pairs, the depth agrees within
//! `REL` of the pair's extent; where one axis clearly holds the least overlap the normals agree
//! and the points are the same up to order (within the same tolerance) on all but one pair in
//! 200 (reductions among near-equal areas); elsewhere (axes tied
//! within rounding, where the two may pick different ones) the GPU's points lie on both
//! surfaces within their half depth.

use crate::common::test_gpu;
use crate::contacts::{extent, least_axis_is_clear, random_touching_pairs, signed_distance};
use glam::Quat;
use sweepfan::Shapes;
use sweepfan::cpu::contacts::obb_contacts;
use sweepfan::gpu::GpuContacts;
use sweepfan::{Contact, Obb, Pair};
use sweepfan_scenes::boxes::generate_boxes;
use sweepfan_scenes::{SceneKind, SceneParams};

/// Relative tolerance (times the pair's extent) between the GPU's contacts and the CPU's: both
/// f32 on the same axes; the GPU may fuse, reorder and approximate its quotients (sloppy math).
const REL: f32 = 1.0 / 16384.0;

/// Compares the GPU's contacts of `pairs` with the CPU's; returns how many pairs had their
/// normals and points compared (one axis clearly least).
pub(crate) fn compare(
    boxes: &[Obb],
    pairs: &[Pair],
    gpu: &[Contact],
    cpu: &[Contact],
    what: &str,
) -> usize {
    assert_eq!(gpu.len(), pairs.len(), "{what}");
    let (mut compared, mut differ) = (0, Vec::new());
    for ((p, g), c) in pairs.iter().zip(gpu).zip(cpu) {
        let (a, b) = (&boxes[p[0] as usize], &boxes[p[1] as usize]);
        let tol = REL * extent(a, b);
        let at = format!("{what}, pair {p:?}: gpu {g:?}, cpu {c:?}");
        assert!((g.depth - c.depth).abs() <= tol, "{at}");
        assert!(g.count >= 1 && g.count <= 4, "{at}");
        assert!((g.normal.length() - 1.0).abs() < 1e-4, "{at}");
        if least_axis_is_clear(a, b, 64.0 * tol) {
            assert!(g.normal.dot(c.normal) > 1.0 - 1e-4, "{at}");
            let same = g.count == c.count
                && c.points()
                    .iter()
                    .all(|q| g.points().iter().any(|r| r.distance(*q) <= 4.0 * tol));
            compared += 1;
            if !same {
                differ.push(at.clone());
            }
        }
        for (q, d) in g.points().iter().zip(g.depths()) {
            for shape in [a, b] {
                let s = signed_distance(shape, *q);
                assert!(s.abs() <= (*d as f64) / 2.0 + 4.0 * tol as f64, "{at}: {s}");
            }
        }
    }
    // Reducing more than four clipped points picks among near-equal areas, and a clipped
    // point's side of the tolerance can turn with the last bit: with sloppy math the picks
    // differ on a few pairs (one in 20,000 paper pairs), never the normal or the depth.
    assert!(
        differ.len() * 200 <= compared.max(1),
        "{what}: {} of {compared} pairs have other points, first {}",
        differ.len(),
        differ.first().map_or("", String::as_str)
    );
    compared
}

#[test]
fn gpu_box_contacts_match_the_cpu() {
    let Some(ctx) = test_gpu() else { return };
    let mut gpu = GpuContacts::new(&ctx).unwrap();
    let (mut from_gpu, mut from_cpu) = (Vec::new(), Vec::new());
    // The paper scene's boxes and their touching pairs (with the CPU pipeline).
    let boxes = generate_boxes(SceneKind::Paper, &SceneParams::new(20_000, 3));
    let (pairs, _) = sweepfan::cpu::sat::obb_overlaps(&boxes).unwrap();
    assert!(pairs.len() > 10_000, "{}", pairs.len());
    gpu.contacts(&ctx, Shapes::Obbs(&boxes), &pairs, &mut from_gpu)
        .unwrap();
    obb_contacts(&boxes, &pairs, &mut from_cpu).unwrap();
    let compared = compare(&boxes, &pairs, &from_gpu, &from_cpu, "paper");
    assert!(compared > pairs.len() / 2, "{compared} of {}", pairs.len());
    // Random pairs at four scales, anywhere in reach and just touching.
    for (seed, scale) in [(11, 1.0f32), (12, 1e-6), (13, 1e6), (14, 0.37)] {
        for shallow in [false, true] {
            let list = random_touching_pairs(seed, 600, scale, shallow);
            let boxes: Vec<Obb> = list.iter().flat_map(|(a, b)| [*a, *b]).collect();
            let pairs: Vec<Pair> = (0..list.len() as u32).map(|k| [2 * k, 2 * k + 1]).collect();
            gpu.contacts(&ctx, Shapes::Obbs(&boxes), &pairs, &mut from_gpu)
                .unwrap();
            obb_contacts(&boxes, &pairs, &mut from_cpu).unwrap();
            compare(
                &boxes,
                &pairs,
                &from_gpu,
                &from_cpu,
                &format!("scale {scale}, shallow {shallow}"),
            );
        }
    }
}

#[test]
fn gpu_box_contacts_refuse_bad_input_and_take_none() {
    let Some(ctx) = test_gpu() else { return };
    let mut gpu = GpuContacts::new(&ctx).unwrap();
    let boxes = [
        Obb::axis_aligned(glam::Vec3::ZERO, glam::Vec3::ONE),
        Obb::axis_aligned(glam::Vec3::new(1.5, 0.0, 0.0), glam::Vec3::ONE),
    ];
    let mut out = vec![Contact::default()];
    gpu.contacts(&ctx, Shapes::Obbs(&boxes), &[], &mut out)
        .unwrap();
    assert!(out.is_empty());
    let e = gpu
        .contacts(&ctx, Shapes::Obbs(&boxes), &[[0, 2]], &mut out)
        .unwrap_err();
    assert!(e.to_string().contains("[0, 2]"), "{e}");
    let mut bad = boxes;
    bad[1].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 3.0);
    assert!(
        gpu.contacts(&ctx, Shapes::Obbs(&bad), &[[0, 1]], &mut out)
            .is_err()
    );
    // A pair apart: no points and minus its gap, as on the CPU.
    let apart = [
        boxes[0],
        Obb::axis_aligned(glam::Vec3::new(2.5, 0.0, 0.0), glam::Vec3::ONE),
    ];
    gpu.contacts(&ctx, Shapes::Obbs(&apart), &[[0, 1]], &mut out)
        .unwrap();
    assert_eq!((out[0].count, out[0].depth), (0, -0.5));
}

/// The caller's pairs just apart (within the device's f32 tolerance of touching) get no points
/// and a negative depth on the GPU too, as on the CPU; touching pairs keep theirs.
#[test]
fn gpu_pairs_apart_within_the_tolerance_get_no_points() {
    use glam::{Vec2, Vec3};
    use sweepfan::Polygon;
    let Some(ctx) = test_gpu() else { return };
    let mut gpu = GpuContacts::new(&ctx).unwrap();
    let up = |x: f32| f32::from_bits(x.to_bits() + 1);
    let unit = |x: f32| Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::ONE, Quat::IDENTITY);
    let boxes = [unit(0.0), unit(2.0 + 3e-5), unit(up(2.0)), unit(2.0)];
    let pairs: Vec<Pair> = vec![[0, 1], [0, 2], [0, 3]];
    let square = |x: f32| {
        let v = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map(|(a, b)| Vec2::new(a + x, b));
        Polygon::new(&v).unwrap()
    };
    let polygons = [
        square(0.0),
        square(1.0 + 1e-5),
        square(up(1.0)),
        square(1.0),
    ];
    let mut out = Vec::new();
    for shapes in [Shapes::Obbs(&boxes), Shapes::Polygons(&polygons)] {
        gpu.contacts(&ctx, shapes, &pairs, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        for (c, apart) in out.iter().zip([true, true, false]) {
            assert_eq!(c.count == 0, apart, "{}: {c:?}", shapes.kind());
            assert_eq!(c.depth.is_sign_negative(), apart, "{c:?}");
        }
    }
}

/// A polygon pair's contact on the GPU keeps the least axis wherever the pair sits, as the
/// CPU's does: the tie-break between the two polygons' axes allows the rounding of the pair's
/// size, not of its distance from the origin.
#[test]
fn gpu_polygon_contacts_do_not_move_with_the_pair() {
    use glam::Vec2;
    use sweepfan::Polygon;
    let Some(ctx) = test_gpu() else { return };
    let mut gpu = GpuContacts::new(&ctx).unwrap();
    let at = |dx: f32, pts: &[(f32, f32)]| {
        let v: Vec<Vec2> = pts
            .iter()
            .map(|&(x, y)| Vec2::new(x + dx, y + dx))
            .collect();
        Polygon::new(&v).unwrap()
    };
    let square = [(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)];
    let triangle = [(-1.0, 4.25), (5.0, -1.75), (5.0, 10.0)];
    let offsets = [0.0, 65_536.0, 1_048_576.0];
    let polygons: Vec<Polygon> = offsets
        .iter()
        .flat_map(|&dx| [at(dx, &square), at(dx, &triangle)])
        .collect();
    let pairs: Vec<Pair> = vec![[0, 1], [2, 3], [4, 5]];
    let mut out = Vec::new();
    gpu.contacts(&ctx, Shapes::Polygons(&polygons), &pairs, &mut out)
        .unwrap();
    let least = 4.75 / std::f32::consts::SQRT_2;
    assert_eq!(out.len(), pairs.len());
    for (c, dx) in out.iter().zip(offsets) {
        assert!((c.depth - least).abs() < 1e-2, "{dx}: {c:?}");
        let normal = glam::Vec3::new(1.0, 1.0, 0.0).normalize();
        assert!(c.normal.dot(normal) > 1.0 - 1e-4, "{dx}: {c:?}");
    }
}
