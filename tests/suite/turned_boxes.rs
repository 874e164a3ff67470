//! Touching boxes turned by the 24 rotations of a cube, each given by its nearest f32
//! quaternion (components 0, ±1/2, ±1/√2 rounded, ±1): the normalised quaternion is the exact
//! rotation, so stacks of boxes spaced by their turned extents touch exactly, face to face,
//! edge to edge and corner to corner, and every such contact must be reported (docs/design.md
//! §4.2). The expected pairs come from the lattice, not from the code under test.

use crate::common::test_gpu;
use glam::{DMat3, DQuat, Quat, Vec3};
use sweepfan::cpu::sat::obb_overlaps;
use sweepfan::geom::obb::Obb;
use sweepfan::gpu::GpuBoxPipeline;
use sweepfan::gpu::GpuSat;
use sweepfan::gpu::Proxy;
use sweepfan::{Pair, canonicalize};

/// The 24 rotations of a cube as f32 quaternions, one of each sign pair.
pub fn cube_rotations() -> Vec<Quat> {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let mut out = Vec::new();
    for k in 0..4 {
        let mut v = [0.0f32; 4];
        v[k] = 1.0;
        out.push(v);
    }
    for i in 0..4 {
        for j in i + 1..4 {
            for sign in [1.0, -1.0] {
                let mut v = [0.0f32; 4];
                v[i] = s;
                v[j] = sign * s;
                out.push(v);
            }
        }
    }
    for signs in 0..8 {
        let f = |b: usize| if signs & (1 << b) == 0 { 0.5 } else { -0.5 };
        out.push([f(0), f(1), f(2), 0.5]);
    }
    out.into_iter().map(Quat::from_array).collect()
}

/// The world half-extents of a box with half-extents `h` turned by the cube rotation `q`
/// (computed in f64 from the quaternion and rounded to the signed permutation it is).
fn turned_extents(q: Quat, h: Vec3) -> Vec3 {
    let m = DMat3::from_quat(DQuat::from_array(q.to_array().map(f64::from)).normalize());
    let p = |v: glam::DVec3| v.abs().round().as_vec3();
    let (x, y, z) = (p(m.x_axis), p(m.y_axis), p(m.z_axis));
    x * h.x + y * h.y + z * h.z
}

/// A `g`^3 lattice of boxes with rotations `rotation(cell)`, every box spanning the same world
/// extents `e` and the lattice spaced by `2 e`, moved by `offset` (all sums exact); the expected
/// pairs: cells at most one apart on every axis.
fn stack(
    g: usize,
    e: Vec3,
    offset: Vec3,
    half_and_rotation: impl Fn(usize) -> (Vec3, Quat),
) -> (Vec<Obb>, Vec<Pair>) {
    let cell = |i: usize| [i % g, (i / g) % g, i / (g * g)];
    let boxes: Vec<Obb> = (0..g * g * g)
        .map(|i| {
            let c = cell(i);
            let at = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32) * 2.0 * e + offset;
            let (h, q) = half_and_rotation(i);
            Obb::new(at, h, q)
        })
        .collect();
    let mut expected = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let (a, b) = (cell(i), cell(j));
            if (0..3).all(|d| a[d].abs_diff(b[d]) <= 1) {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    (boxes, expected)
}

/// Every scene: one stack per rotation with a long, flat box (a common turn), and stacks of a
/// cube under every rotation at once (neighbours turned differently).
fn scenes() -> Vec<(String, Vec<Obb>, Vec<Pair>)> {
    let offset = Vec3::new(1024.0, -512.0, 64.0);
    let mut out = Vec::new();
    let h = Vec3::new(1.25, 0.5, 0.75);
    for (k, q) in cube_rotations().into_iter().enumerate() {
        let e = turned_extents(q, h);
        let (boxes, expected) = stack(5, e, offset, |_| (h, q));
        out.push((format!("rotation {k} ({q})"), boxes, expected));
    }
    let all = cube_rotations();
    let cube = Vec3::splat(0.625);
    for shift in 0..3 {
        let (boxes, expected) = stack(6, cube, offset * shift as f32, |i| {
            (cube, all[(i * 7 + shift) % all.len()])
        });
        out.push((format!("mixed rotations {shift}"), boxes, expected));
    }
    out
}

fn sorted(mut pairs: Vec<Pair>) -> Vec<Pair> {
    canonicalize(&mut pairs);
    pairs
}

/// The same pair sets, or a short account of how they differ.
fn assert_same(got: Vec<Pair>, expected: &[Pair], what: &str) {
    let got = sorted(got);
    if got != expected {
        let missing: Vec<_> = expected
            .iter()
            .filter(|p| got.binary_search(p).is_err())
            .collect();
        let extra: Vec<_> = got
            .iter()
            .filter(|p| expected.binary_search(p).is_err())
            .collect();
        panic!(
            "{what}: {} pairs missing (first {:?}), {} extra (first {:?})",
            missing.len(),
            &missing[..missing.len().min(5)],
            extra.len(),
            &extra[..extra.len().min(5)]
        );
    }
}

#[test]
fn turned_stacks_keep_every_contact_on_the_cpu() {
    for (name, boxes, expected) in scenes() {
        let (pairs, _) = obb_overlaps(&boxes).unwrap();
        assert_same(pairs, &expected, &format!("{name}: CPU pipeline"));
        let n = boxes.len();
        let all_pairs: Vec<Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| [i as u32, j as u32]))
            .filter(|&[i, j]| boxes[i as usize].overlaps(&boxes[j as usize]))
            .collect();
        assert_eq!(all_pairs, expected, "{name}: all pairs");
    }
}

/// One ulp apart is apart, on every axis and for every rotation; exactly touching is not.
#[test]
fn an_ulp_of_gap_separates_turned_boxes() {
    let h = Vec3::new(1.25, 0.5, 0.75);
    for q in cube_rotations() {
        let e = turned_extents(q, h);
        let a = Obb::new(Vec3::ZERO, h, q);
        for axis in 0..3 {
            let along = |x: f32| {
                let mut c = Vec3::ZERO;
                c[axis] = x;
                Obb::new(c, h, q)
            };
            let touching = 2.0 * e[axis];
            assert!(a.overlaps(&along(touching)), "{q} axis {axis}");
            assert!(!a.overlaps(&along(touching.next_up())), "{q} axis {axis}");
            assert!(!along(-touching.next_up()).overlaps(&a), "{q} axis {axis}");
            let (pairs, _) =
                obb_overlaps(&[a, along(touching.next_up()), along(-touching)]).unwrap();
            assert_eq!(sorted(pairs), [[0, 2]], "{q} axis {axis}");
        }
    }
}

/// The same stacks on the GPU: the pipeline storing pairs, counting only, and with frame events;
/// and the SAT stage fed candidates from the host. Pairs the device cannot decide within its
/// error bound come back flagged and are settled exactly on the host.
#[test]
fn turned_stacks_keep_every_contact_on_the_gpu() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let mut pipeline = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    let mut sat = GpuSat::new(&ctx).unwrap();
    let mut tracked = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    tracked.track_events(true).unwrap();
    for (name, boxes, expected) in scenes() {
        let mut pairs = Vec::new();
        pipeline.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
        assert_same(pairs, &expected, &format!("{name}: GPU pipeline"));
        let stats = pipeline.obb_overlaps(&boxes, None).unwrap();
        assert_eq!(stats.pairs, expected.len() as u64, "{name}: GPU count");

        let n = boxes.len() as u32;
        let candidates: Vec<Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| [i, j]))
            .collect();
        let mut pairs = Vec::new();
        sat.obb_pairs(&ctx, &boxes, &candidates, Some(&mut pairs))
            .unwrap();
        assert_same(
            pairs,
            &expected,
            &format!("{name}: GPU SAT on host candidates"),
        );
        let counted = sat.obb_pairs(&ctx, &boxes, &candidates, None).unwrap();
        assert_eq!(
            counted.pairs,
            expected.len() as u64,
            "{name}: GPU SAT count"
        );

        // Events: from nothing (or the last scene spread apart) to the stack, then spread apart.
        let mut pairs = Vec::new();
        tracked.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
        let events = tracked.take_events().unwrap();
        let mut found = events.found.clone();
        canonicalize(&mut found);
        assert_eq!(found, expected, "{name}: found events");
        assert!(
            events.lost.is_empty(),
            "{name}: lost events of the first frame"
        );
        let step = 100.0 * boxes[0].half_extents.max_element();
        let apart: Vec<Obb> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                Obb::new(
                    b.center + Vec3::X * step * i as f32,
                    b.half_extents,
                    b.rotation,
                )
            })
            .collect();
        tracked.obb_overlaps(&apart, Some(&mut pairs)).unwrap();
        let events = tracked.take_events().unwrap();
        let mut lost = events.lost.clone();
        canonicalize(&mut lost);
        assert_eq!(lost, expected, "{name}: lost events");
        assert!(pairs.is_empty(), "{name}: spread boxes");
    }
}

/// A needle 1.8e18 long, turned so that one of its axis components is nearly zero: the f32
/// axis's rounding, times its length, moves its far end further than a margin of its extent and
/// centre alone covers. A box just past the f32 axis's reach, within the exact one, overlaps it;
/// the GPU's AABB stage (whose margin lacked the half-extents' term the CPU's has) dropped it.
#[test]
fn a_long_needle_keeps_its_pair_on_the_gpu() {
    let Some(ctx) = test_gpu() else { return };
    // The f32 values by their bits: half-extent 9.000000202e17; quaternion (x, y, z, w)
    // (4.521687e-4, 0.38882464, 0.59060597, 0.70710665); the second box at (499570,
    // 7.5203503e17, -4.9441217e17), half-extents (50, 1.00000003e16, 1.00000003e16).
    let f = f32::from_bits;
    let boxes = [
        Obb::new(
            Vec3::ZERO,
            Vec3::new(f(0x5d47_d714), 1.0, 1.0),
            Quat::from_xyzw(
                f(0x39ed_110e),
                f(0x3ec7_1406),
                f(0x3f17_31f4),
                f(0x3f35_04f1),
            ),
        ),
        Obb::new(
            Vec3::new(499_570.0, f(0x5d26_fc3e), f(0xdcdb_9028)),
            Vec3::new(50.0, f(0x5a0e_1bca), f(0x5a0e_1bca)),
            Quat::IDENTITY,
        ),
    ];
    let (on_cpu, _) = obb_overlaps(&boxes).unwrap();
    assert_eq!(on_cpu, vec![[0, 1]], "the boxes overlap");
    let ctx = std::sync::Arc::new(ctx);
    let mut pipeline = GpuBoxPipeline::new(ctx, Proxy::Aabb).unwrap();
    let mut pairs = Vec::new();
    pipeline.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
    assert_eq!(pairs, vec![[0, 1]]);
}

/// Pairs within a few ulps of touching at every size and rotation (not only quarter turns):
/// the GPU, fed the pairs as candidates and through its own broad phase, gives the exact
/// answers, the same as the CPU's; counting only gives the same count.
#[test]
fn near_touching_pairs_are_exact_on_the_gpu() {
    use sweepfan::geom::obbs_overlap_exactly;
    use sweepfan_scenes::boxes::near_touching_pairs;
    let Some(ctx) = test_gpu() else { return };
    let ctx = std::sync::Arc::new(ctx);
    let boxes = near_touching_pairs(3000, 11);
    let candidates: Vec<Pair> = (0..boxes.len() as u32 / 2)
        .map(|k| [2 * k, 2 * k + 1])
        .collect();
    let expected: Vec<Pair> = candidates
        .iter()
        .copied()
        .filter(|&[i, j]| obbs_overlap_exactly(&boxes[i as usize], &boxes[j as usize]))
        .collect();
    // Both answers occur often, or the scene tests nothing.
    assert!(
        expected.len() > 900 && expected.len() < 2100,
        "{}",
        expected.len()
    );
    let (cpu, _) = obb_overlaps(&boxes).unwrap();
    assert_same(cpu, &expected, "CPU pipeline");
    let mut sat = GpuSat::new(&ctx).unwrap();
    let mut pairs = Vec::new();
    sat.obb_pairs(&ctx, &boxes, &candidates, Some(&mut pairs))
        .unwrap();
    assert_same(pairs, &expected, "GPU SAT on host candidates");
    let reversed: Vec<Pair> = candidates.iter().map(|&[i, j]| [j, i]).collect();
    let counted = sat.obb_pairs(&ctx, &boxes, &reversed, None).unwrap();
    assert_eq!(counted.pairs, expected.len() as u64, "GPU SAT count");
    let mut pipeline = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    let mut pairs = Vec::new();
    pipeline.obb_overlaps(&boxes, Some(&mut pairs)).unwrap();
    assert_same(pairs, &expected, "GPU pipeline");
    let stats = pipeline.obb_overlaps(&boxes, None).unwrap();
    assert_eq!(stats.pairs, expected.len() as u64, "GPU pipeline count");
}

/// The filtered test's error bound, on pairs within a few ulps of touching at every size and
/// rotation: wherever its verdict is sure, the exact test agrees; settling its unsure axes
/// gives the exact answer; and pairs 0.1% of their distance from touching are (almost all)
/// sure. Checked to fail with the bound at 1/512 of its value (0.25 units of rounding times the
/// pair's scale: a wrong sure answer); at 0.5 units no wrong answer was seen.
#[test]
fn the_filter_is_never_sure_of_a_wrong_answer() {
    use sweepfan::geom::obbs_overlap_exactly;
    use sweepfan::geom::sat::{SatVerdict, obb_frames_verdict};
    use sweepfan_scenes::boxes::near_touching_pairs;
    let boxes = near_touching_pairs(1500, 7);
    let (mut unsure, mut far_unsure) = (0, 0);
    for (k, pair) in boxes.chunks(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        let d = b.center - a.center;
        let moved = |f: f32| Obb::new(a.center + d * f, b.half_extents, b.rotation);
        for (b, far) in [(b, false), (moved(0.999), true), (moved(1.001), true)] {
            let exact = obbs_overlap_exactly(&a, &b);
            match obb_frames_verdict(&a.frame(), &b.frame()) {
                SatVerdict::Apart => assert!(!exact, "pair {k}: apart, but the boxes touch"),
                SatVerdict::Overlap => assert!(exact, "pair {k}: overlapping, but apart"),
                SatVerdict::Unsure(_) => {
                    // `overlaps` settles the unsure axes exactly: checked below.
                    unsure += 1;
                    far_unsure += far as usize;
                }
            }
            assert_eq!(a.overlaps(&b), exact, "pair {k}");
            assert_eq!(b.overlaps(&a), exact, "pair {k} swapped");
        }
    }
    eprintln!("{unsure} of 4500 unsure, {far_unsure} of them 0.1% from touching");
    assert!(
        unsure > 300,
        "too few pairs reached the exact test: {unsure}"
    );
    assert!(
        far_unsure * 20 < 3000,
        "{far_unsure} pairs 0.1% from touching unsure"
    );
}

/// Rotations with rational matrices that f64 cannot hold: a turn about a coordinate axis by the
/// quaternion `(p t, q t) / 2^k` (a Pythagorean triple `p² + q² = r²`, `r t` within 0.1% of
/// `2^k`, so the quaternion is accepted and every component exact in f32) has cosine
/// `(p² - q²) / r²` and sine `2 p q / r²`, e.g. 7/25 and 24/25. A box with half-extents `r²`
/// across the axis then reaches exactly `|p² - q²| + 2 p q` on both axes across it, so placed
/// there it touches a slab of half-thickness 1 at an edge, exactly: the f32 margins straddle
/// zero, and only the settled test keeps every contact and drops every gap of an ulp.
#[test]
fn pythagorean_turns_touch_exactly() {
    let mut checked = 0;
    for (p, q, r, t, k) in [
        (4.0f32, 3.0f32, 5.0f32, 205.0f32, 10),
        (3.0, 4.0, 5.0, 819.0, 12),
        (12.0, 5.0, 13.0, 315.0, 12),
        (5.0, 12.0, 13.0, 315.0, 12),
        (15.0, 8.0, 17.0, 241.0, 12),
        (8.0, 15.0, 17.0, 241.0, 12),
    ] {
        let (w, s) = (p * t / 2f32.powi(k), q * t / 2f32.powi(k));
        let reach = (p * p - q * q).abs() + 2.0 * p * q;
        for about in 0..3 {
            for turn in [s, -s] {
                let mut v = [0.0, 0.0, 0.0, w];
                v[about] = turn;
                let rotation = Quat::from_array(v);
                let mut h = Vec3::splat(r * r);
                h[about] = 1.0;
                for axis in (0..3).filter(|&x| x != about) {
                    // Wide across the contact axis: B's nearest edge lies within A's face.
                    let mut ha = Vec3::splat(1024.0);
                    ha[axis] = 1.0;
                    let a = Obb::axis_aligned(Vec3::ZERO, ha);
                    for sign in [1.0f32, -1.0] {
                        let at = |x: f32| {
                            let mut c = Vec3::ZERO;
                            c[axis] = sign * x;
                            Obb::new(c, h, rotation)
                        };
                        let case = format!("{rotation} on axis {axis}, side {sign}");
                        let touching = 1.0 + reach;
                        assert!(a.overlaps(&at(touching)), "{case}: touching");
                        assert!(at(touching).overlaps(&a), "{case}: touching, swapped");
                        assert!(!a.overlaps(&at(touching.next_up())), "{case}: an ulp apart");
                        let boxes = [a, at(touching), at(-3.0 * touching)];
                        let (pairs, _) = obb_overlaps(&boxes).unwrap();
                        assert_eq!(sorted(pairs), [[0, 1]], "{case}: CPU pipeline");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 144);
}

/// The same turns about x, now with a face of the turned box against a corner of a slab
/// (half-extents 1, r², 3 r²), the pair offset by `4 (p² - q², 2 p q)` across x: the margin on
/// the turned box's face normal is exactly zero (a face-to-corner contact, decided on one of
/// B's axes rather than A's).
#[test]
fn a_turned_face_touches_a_corner_exactly() {
    for (p, q, r, t, k) in [
        (4.0f32, 3.0f32, 5.0f32, 205.0f32, 10),
        (12.0, 5.0, 13.0, 315.0, 12),
        (15.0, 8.0, 17.0, 241.0, 12),
    ] {
        let (w, s) = (p * t / 2f32.powi(k), q * t / 2f32.powi(k));
        let rotation = Quat::from_xyzw(s, 0.0, 0.0, w);
        let (c, sn) = ((p * p - q * q).abs(), 2.0 * p * q);
        let rr = r * r;
        let a = Obb::axis_aligned(Vec3::ZERO, Vec3::new(1.0, rr, 3.0 * rr));
        // |d . b_y| = 4 r²; A reaches c + 3 sn along b_y; B's own half-extent is the rest.
        let hy = 4.0 * rr - (c + 3.0 * sn);
        let b = |shift: f32| {
            Obb::new(
                Vec3::new(0.0, 4.0 * c, 4.0 * sn) * shift,
                Vec3::new(1.0, hy, 8.0 * rr),
                rotation,
            )
        };
        assert!(a.overlaps(&b(1.0)), "{rotation}: touching");
        assert!(b(1.0).overlaps(&a), "{rotation}: touching, swapped");
        assert!(
            !a.overlaps(&b(1.0f32.next_up())),
            "{rotation}: an ulp apart"
        );
        let (pairs, _) = obb_overlaps(&[a, b(1.0), b(1.0f32.next_up())]).unwrap();
        assert_eq!(sorted(pairs), [[0, 1], [1, 2]], "{rotation}: CPU pipeline");
    }
}
