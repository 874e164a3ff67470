//! Scene `rotating` (docs/design.md §5.7): GPU == CPU == brute force for both proxies, chunked GPU runs,
//! candidates cover every exact hit, deterministic generation, clear errors.

use crate::common::test_gpu;
use glam::Vec3;
use sweepfan::broadphase::ProxyFrame;
use sweepfan::cpu::{rotating_brute_force, rotating_frame_cpu};
use sweepfan::geom::sector::RotatingBox;
use sweepfan::geom::sector::body::RotatingBody;
use sweepfan::geom::sector::{Proxy, Swept, proxy_aabb, proxy_overlaps_sphere};
use sweepfan::gpu::RotatingGpu;
use sweepfan::{Error, Sphere};
use sweepfan_scenes::free_bodies::BodyKind;
use sweepfan_scenes::rotating::{RotatingParams, RotatingScene};

fn scene(boxes: usize, spheres: usize, seed: u64) -> RotatingScene {
    RotatingScene::generate(&RotatingParams::new(boxes, spheres, seed)).unwrap()
}

/// GPU hits may differ from the CPU's only on rounding-level ties of the exact test.
fn assert_same_hits<B: Swept>(
    s: &RotatingScene<B>,
    want: &[[u32; 2]],
    got: &ProxyFrame,
    what: &str,
) {
    let got = got.hit_pairs.as_ref().unwrap();
    let (a, b): (Vec<_>, Vec<_>) = (
        want.iter()
            .filter(|p| got.binary_search(p).is_err())
            .collect(),
        got.iter()
            .filter(|p| want.binary_search(p).is_err())
            .collect(),
    );
    for p in a.iter().chain(&b) {
        let sector = s.boxes[p[0] as usize].conservative_sector();
        let sp = &s.spheres[p[1] as usize];
        let gap = (sector.signed_distance(sp.center) - sp.radius).abs();
        assert!(gap < 1e-4, "{what}: pair {p:?} differs, gap {gap}");
    }
    assert!(
        a.len() + b.len() <= 2,
        "{what}: {} + {} ties",
        a.len(),
        b.len()
    );
}

/// The brute force's candidate count and hits for `proxy`, checked to be more than `min_hits`
/// hits and to equal the CPU frame's `cpu` (run with hits).
fn brute_force_equals_cpu<B: Swept>(
    s: &RotatingScene<B>,
    proxy: Proxy,
    cpu: &ProxyFrame,
    min_hits: usize,
    what: &str,
) -> (u64, Vec<[u32; 2]>) {
    let (cand, hits) = rotating_brute_force(&s.boxes, &s.spheres, proxy).unwrap();
    assert!(hits.len() > min_hits, "{what}: {}", hits.len());
    assert_eq!(cpu.candidates, cand, "{what}");
    assert_eq!(cpu.hit_pairs.as_ref().unwrap(), &hits, "{what}");
    (cand, hits)
}

/// Frames alternate between the subgroup appends and the portable ones (docs/design.md §9.17).
#[test]
fn gpu_equals_cpu_equals_brute_force_for_both_proxies() {
    let Some(contexts) = crate::common::both_appends() else {
        return;
    };
    let mut gpus = contexts.map(|ctx| {
        let gpu = RotatingGpu::new(&ctx).unwrap();
        (ctx, gpu)
    });
    let mut s = scene(400, 6_000, 5);
    for frame in 0..4 {
        let (ctx, gpu) = &mut gpus[frame % 2];
        let cpu = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true).unwrap();
        let got = gpu
            .frame(ctx, &s.boxes, &s.spheres, &Proxy::ALL, true)
            .unwrap();
        for (i, proxy) in Proxy::ALL.iter().enumerate() {
            let what = format!("frame {frame} {proxy:?}");
            let (cand, hits) = brute_force_equals_cpu(&s, *proxy, &cpu[i], 50, &what);
            assert_eq!(got[i].candidates, cand, "{what}");
            assert_eq!(got[i].hits, got[i].hit_pairs.as_ref().unwrap().len() as u64);
            assert_same_hits(&s, &hits, &got[i], &what);
        }
        s.step();
    }
}

#[test]
fn bodies_in_any_pose_gpu_equals_cpu_equals_brute_force() {
    let ctx = test_gpu();
    let mut gpu = ctx.as_ref().map(|c| RotatingGpu::new(c).unwrap());
    for kind in BodyKind::ALL {
        let params = RotatingParams::new(300, 5_000, 21);
        let mut s: RotatingScene<RotatingBody> =
            RotatingScene::generate_bodies(&params, kind).unwrap();
        for frame in 0..2 {
            let cpu = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true).unwrap();
            for (i, proxy) in Proxy::ALL.iter().enumerate() {
                let what = format!("{kind:?} frame {frame} {proxy:?}");
                let (cand, hits) = brute_force_equals_cpu(&s, *proxy, &cpu[i], 20, &what);
                if let (Some(c), Some(g)) = (&ctx, gpu.as_mut()) {
                    let got = g.frame(c, &s.boxes, &s.spheres, &[*proxy], true).unwrap();
                    assert_eq!(got[0].candidates, cand, "{what}");
                    assert_same_hits(&s, &hits, &got[0], &what);
                }
            }
            // Every body's sweep holds its start and end poses' centres: the scene turns them.
            for b in &s.boxes {
                let sector = b.conservative_sector();
                assert!(sector.contains_point(b.body.center()));
                assert!(sector.contains_point(b.pose(1.0).center()));
            }
            s.step();
        }
    }
    // A bad body is named by index.
    let mut s =
        RotatingScene::generate_bodies(&RotatingParams::new(5, 10, 1), BodyKind::Capsule).unwrap();
    s.boxes[3].angle = f32::NAN;
    assert!(matches!(
        rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, false),
        Err(Error::InvalidObject { index: 3, .. })
    ));
}

/// A box with more than 2^16 candidates: its count's high 16-bit half reaches the 64-bit total
/// through the group sums (docs/design.md §9.17), subgroup and portable. Where the device cuts
/// long walks short (lavapipe), a clear error instead.
#[test]
fn a_box_with_over_65536_candidates_is_counted_whole() {
    use rand::{Rng, SeedableRng};
    let Some(contexts) = crate::common::both_appends() else {
        return;
    };
    let mut s = scene(3, 70_000, 4);
    let proxy = Proxy::ALL[0];
    let a = proxy_aabb(&s.boxes[0], proxy);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for sp in &mut s.spheres {
        let t = Vec3::new(rng.random(), rng.random(), rng.random());
        sp.center = a.min + (a.max - a.min) * t;
        sp.radius = 0.01;
    }
    let (candidates, _) = rotating_brute_force(&s.boxes, &s.spheres, proxy).unwrap();
    assert!(candidates >= 70_000, "{candidates}");
    for ctx in &contexts {
        let mut gpu = RotatingGpu::new(ctx).unwrap();
        match gpu.frame(ctx, &s.boxes, &s.spheres, &[proxy], false) {
            Ok(got) => assert_eq!(got[0].candidates, candidates, "{}", ctx.has_subgroups()),
            // Lavapipe stops an invocation after 65,535 loop iterations: there the walk is cut
            // short, a clear error (the counts are checked under SwiftShader and real GPUs).
            Err(e) => {
                assert!(ctx.info().name.contains("llvmpipe"), "{e}");
                assert!(e.to_string().contains("short"), "{e}");
            }
        }
    }
}

#[test]
fn gpu_chunks_never_lose_a_candidate() {
    let Some(ctx) = test_gpu() else { return };
    let s = scene(300, 4_000, 9);
    let mut gpu = RotatingGpu::new(&ctx).unwrap();
    let whole = gpu
        .frame(&ctx, &s.boxes, &s.spheres, &Proxy::ALL, true)
        .unwrap();
    // Room for the busiest box, and about 1/20 of all candidates: dozens of chunks.
    let spheres = &s.spheres;
    let busiest = Proxy::ALL
        .iter()
        .flat_map(|&p| {
            s.boxes.iter().map(move |b| {
                let a = proxy_aabb(b, p);
                spheres
                    .iter()
                    .filter(|sp| proxy_overlaps_sphere(&a, sp))
                    .count() as u64
            })
        })
        .max()
        .unwrap();
    let capacity = busiest.max(whole[0].candidates / 20);
    gpu.set_candidate_capacity(Some(capacity as u32));
    let chunked = gpu
        .frame(&ctx, &s.boxes, &s.spheres, &Proxy::ALL, true)
        .unwrap();
    for (w, c) in whole.iter().zip(&chunked) {
        assert!(
            w.candidates > 10 * capacity,
            "{} vs {capacity}",
            w.candidates
        );
        assert_eq!(w.candidates, c.candidates);
        assert_eq!(w.hit_pairs, c.hit_pairs);
        assert_eq!(w.hits, c.hits);
    }
    // Every kernel on a 2D grid (at most 3 groups per dimension), still the same.
    gpu.set_max_groups_per_dim(3);
    let grid_2d = gpu
        .frame(&ctx, &s.boxes, &s.spheres, &Proxy::ALL, true)
        .unwrap();
    for (w, g) in whole.iter().zip(&grid_2d) {
        assert_eq!(w.candidates, g.candidates);
        assert_eq!(w.hit_pairs, g.hit_pairs);
    }
    // A box with more candidates than one chunk holds is a clear error, not a lost candidate.
    gpu.set_candidate_capacity(Some(1));
    let e = gpu
        .frame(&ctx, &s.boxes, &s.spheres, &Proxy::ALL, false)
        .expect_err("must fail");
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");
}

#[test]
fn conservative_proxy_candidates_cover_every_exact_hit() {
    // Over all pairs (no broad phase), every sphere touching a conservative sector must be a
    // candidate of the conservative-sector proxy; the speculative proxy may miss some.
    let s = scene(300, 5_000, 13);
    let frames = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true).unwrap();
    let (mut all_hits, mut spec_missed) = (0, 0);
    let spec = frames[1].hit_pairs.as_ref().unwrap();
    let cons = frames[0].hit_pairs.as_ref().unwrap();
    for (b, rb) in s.boxes.iter().enumerate() {
        let sector = rb.conservative_sector();
        let a = proxy_aabb(rb, Proxy::ConservativeSector);
        for (i, sp) in s.spheres.iter().enumerate() {
            if sector.overlaps_sphere_exact(sp) {
                all_hits += 1;
                let pair = [b as u32, i as u32];
                // A sphere centre within radius of the sector lies within radius of its AABB.
                let near = sp.center.clamp(a.min, a.max).distance(sp.center);
                assert!(near <= sp.radius * (1.0 + 1e-5) + 1e-4, "{pair:?}");
                assert!(
                    cons.binary_search(&pair).is_ok(),
                    "{pair:?} not a candidate"
                );
                spec_missed += spec.binary_search(&pair).is_err() as usize;
            }
        }
    }
    assert_eq!(all_hits, cons.len());
    assert!(all_hits > 100);
    eprintln!("exact hits {all_hits}; speculative proxy misses {spec_missed}");
    // Candidates: a tighter proxy means fewer.
    assert!(frames[0].candidates < frames[1].candidates);
    assert!(frames[0].hits >= frames[1].hits);
}

#[test]
fn generation_is_deterministic() {
    let a = scene(50, 500, 21);
    let b = scene(50, 500, 21);
    assert_eq!(a.boxes, b.boxes);
    assert_eq!(a.spheres, b.spheres);
    let fa = rotating_frame_cpu(&a.boxes, &a.spheres, &Proxy::ALL, true).unwrap();
    let fb = rotating_frame_cpu(&b.boxes, &b.spheres, &Proxy::ALL, true).unwrap();
    for (x, y) in fa.iter().zip(&fb) {
        assert_eq!(x.candidates, y.candidates);
        assert_eq!(x.hit_pairs, y.hit_pairs);
    }
}

#[test]
fn bad_input_is_a_clear_error_and_empty_input_finds_nothing() {
    let mut s = scene(5, 50, 1);
    let empty = rotating_frame_cpu(&s.boxes, &[], &Proxy::ALL, false).unwrap();
    assert!(empty.iter().all(|f| f.candidates == 0 && f.hits == 0));
    s.spheres[3].center = Vec3::new(f32::NAN, 0.0, 0.0);
    let e = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, false).unwrap_err();
    assert!(matches!(e, Error::InvalidObject { index: 3, .. }), "{e}");
    let mut s = scene(5, 50, 1);
    s.boxes[4].angle = -1.0;
    let e = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, false).unwrap_err();
    assert!(matches!(e, Error::InvalidObject { index: 4, .. }), "{e}");
    if let Some(ctx) = test_gpu() {
        let mut gpu = RotatingGpu::new(&ctx).unwrap();
        assert!(
            gpu.frame(&ctx, &s.boxes, &s.spheres, &Proxy::ALL, false)
                .is_err()
        );
        let none = gpu
            .frame(
                &ctx,
                &[] as &[sweepfan::geom::sector::RotatingBox],
                &s.spheres,
                &Proxy::ALL,
                true,
            )
            .unwrap();
        assert!(none.iter().all(|f| f.candidates == 0));
    }
}

/// The CPU frame over every proxy equals brute force, two frames of 150 boxes among 3,000
/// spheres (moved from the library's unit tests with the scenes).
#[test]
fn cpu_frame_matches_brute_force() {
    let mut scene = scene(150, 3_000, 11);
    for _ in 0..2 {
        let got = rotating_frame_cpu(&scene.boxes, &scene.spheres, &Proxy::ALL, true).unwrap();
        for (proxy, frame) in Proxy::ALL.iter().zip(&got) {
            let (cand, hits) = rotating_brute_force(&scene.boxes, &scene.spheres, *proxy).unwrap();
            assert_eq!(frame.candidates, cand, "{proxy:?}");
            assert_eq!(frame.hits, hits.len() as u64);
            assert_eq!(frame.hit_pairs.as_ref().unwrap(), &hits);
            assert!(cand > 0 && !hits.is_empty(), "{proxy:?}: {cand}");
        }
        scene.step();
    }
}

/// The CPU pipeline and its brute force stop at the caller's token and refuse hits past the
/// caller's memory budget (TooLarge, naming them), never an abort: a frame of millions of boxes
/// takes seconds, and its hit lists grow with the scene.
#[test]
fn cpu_rotating_frames_stop_when_cancelled_and_keep_to_the_budget() {
    use sweepfan::{CancelToken, Limits, MemoryBudget};
    let s = scene(200, 20_000, 5);
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let stopped = Limits::new().with_cancel(cancelled);
    let r = stopped.run(|| rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true));
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    let r = stopped.run(|| rotating_brute_force(&s.boxes, &s.spheres, Proxy::ConservativeSector));
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    // The hits are many more than a budget of 256 bytes holds.
    let hits = rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true).unwrap()[0].hits;
    assert!(hits > 100, "{hits}");
    let tight = Limits::new().with_memory(MemoryBudget::Bytes(256));
    let r = tight.run(|| rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, true));
    assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
    let r = tight.run(|| rotating_brute_force(&s.boxes, &s.spheres, Proxy::ConservativeSector));
    assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
    // Without hits, nothing grows: the budget does not stop the counts.
    assert!(
        tight
            .run(|| rotating_frame_cpu(&s.boxes, &s.spheres, &Proxy::ALL, false))
            .is_ok()
    );
}

/// The hits of `boxes` among `spheres` through the conservative sector's proxy, the same on the
/// brute force, the CPU frame and the GPU frame (none of these scenes has a tie), every other
/// proxy's hits among them (a hit is a candidate the exact test keeps).
fn hits_everywhere(boxes: &[RotatingBox], spheres: &[Sphere], what: &str) -> Vec<[u32; 2]> {
    let cpu = rotating_frame_cpu(boxes, spheres, &Proxy::ALL, true).unwrap();
    let ctx = test_gpu();
    let gpu = ctx.as_ref().map(|ctx| {
        let mut gpu = RotatingGpu::new(ctx).unwrap();
        gpu.frame(ctx, boxes, spheres, &Proxy::ALL, true).unwrap()
    });
    let (_, hits) = rotating_brute_force(boxes, spheres, Proxy::ConservativeSector).unwrap();
    for (k, &proxy) in Proxy::ALL.iter().enumerate() {
        let (_, brute) = rotating_brute_force(boxes, spheres, proxy).unwrap();
        assert!(brute.iter().all(|h| hits.contains(h)), "{what}: {proxy:?}");
        let hits = &brute;
        assert_eq!(
            cpu[k].hit_pairs.as_ref(),
            Some(hits),
            "{what}: CPU {proxy:?}"
        );
        if let Some(gpu) = &gpu {
            assert_eq!(
                gpu[k].hit_pairs.as_ref(),
                Some(hits),
                "{what}: GPU {proxy:?}"
            );
        }
    }
    hits
}

/// The spheres `hits_everywhere` reports hit, as one flag a sphere (one box).
fn hit_flags(hits: &[[u32; 2]], spheres: usize) -> Vec<bool> {
    (0..spheres as u32)
        .map(|i| hits.iter().any(|h| h[1] == i))
        .collect()
}

/// Boxes whose hits once depended on their place and size, each worked out by hand:
/// - turning 1e-4 at 10,000 from its axis (its sector's half-angle about 1e-4, whose cosine
///   rounds to 1): the box's start pose spans x in [-0.5, 0.5] at y = 10,000 and it moves by
///   1 towards -x; a sphere 0.5 and one 0.9 beyond its trailing face were hits;
/// - 3e6 from its axis, not turning: a sphere 0.1 into its side face is a hit, one 19.5 off it
///   is not (the wedge's cosine rounds to 1 there too; the sector's rounding margin there is
///   2e-6 of 3e6, 6);
/// - the documentation's example scaled down to 1e-24 (lengths squared below f32's range):
///   the same hits as at scale 1;
/// - a flat box (no thickness) of size 1e-20 and a sphere of radius 5.2e-23 whose centre lies
///   5e-23 off its plane, over its middle: a hit (the distance's square underflowed), and one
///   5.3e-23 off it: none.
#[test]
fn rotating_boxes_keep_their_hits_at_any_size_and_place() {
    let turning = |distance: f32, widths: Vec3, angle: f32| RotatingBox {
        origin: Vec3::ZERO,
        axis: Vec3::Z,
        arm: Vec3::Y,
        distance,
        widths,
        angle,
    };
    let slow = turning(1e4, Vec3::new(1.0, 2.0, 1.5), 1e-4);
    let at = |x: f32, r: f32| Sphere::new(Vec3::new(x, 1e4, 0.0), r);
    let spheres = [at(-1.4, 0.01), at(0.0, 0.01), at(1.0, 0.01), at(1.4, 0.01)];
    let hits = hits_everywhere(&[slow], &spheres, "turning 1e-4 at 1e4");
    assert_eq!(hit_flags(&hits, 4), [true, true, false, false]);

    let far = turning(3e6, Vec3::new(1.0, 2.0, 1.5), 0.0);
    let side = |x: f32, r: f32| Sphere::new(Vec3::new(x, 3e6, 0.0), r);
    let spheres = [
        side(0.7, 0.3),
        side(-0.7, 0.3),
        side(20.0, 1.0),
        side(-20.0, 1.0),
    ];
    let hits = hits_everywhere(&[far], &spheres, "3e6 from its axis");
    assert_eq!(hit_flags(&hits, 4), [true, true, false, false]);

    // The example of `RotatingBox::conservative_sector`, and a sphere 0.42 beyond its reach
    // hypot(6, 1) = 6.08 of radius 0.5 (a hit) and one 0.62 beyond it (none).
    for scale in [1.0, 1e-10, 1e-20, 1e-22, 1e-24] {
        let doc = turning(
            5.0 * scale,
            Vec3::splat(2.0 * scale),
            std::f32::consts::FRAC_PI_2,
        );
        let s = |x: f32, y: f32, r: f32| Sphere::new(Vec3::new(x, y, 0.0) * scale, r * scale);
        let spheres = [
            s(-3.5, 3.5, 0.1),
            s(-5.0, 0.0, 0.1),
            s(3.0, 3.0, 0.1),
            s(0.0, 8.0, 0.5),
            s(0.0, 6.5, 0.5),
            s(0.0, 6.7, 0.5),
        ];
        let hits = hits_everywhere(&[doc], &spheres, &format!("scaled by {scale:e}"));
        assert_eq!(
            hit_flags(&hits, 6),
            [true, true, false, false, true, false],
            "{scale:e}"
        );
    }

    // At 1e-20 the sector's rounding margin (2e-6 of R' + h, about 1.2e-25) lies well inside
    // the spheres' offsets, so the distance off the plane decides: 5e-23 (radius 5.2e-23,
    // a hit) and 5.3e-23 (none); squared, 5e-23 became 5.3e-23.
    let flat = turning(5e-20, Vec3::new(2e-20, 2e-20, 0.0), 1.0);
    let tiny = [
        Sphere::new(Vec3::new(0.0, 5e-20, 5e-23), 5.2e-23),
        Sphere::new(Vec3::new(0.0, 5e-20, 5.3e-23), 5.2e-23),
    ];
    let hits = hits_everywhere(&[flat], &tiny, "a flat box and tiny spheres");
    assert_eq!(hits, [[0, 0]]);
}

/// Boxes and bodies whose sizes f32 cannot square are refused, naming them, as spheres are:
/// widths of 3e38 made a sector of NaN bounds, which missed the spheres inside the box; a
/// capsule from y = -3e38 to 3e38 had no candidate; widths of 1e-40 are below the smallest
/// magnitude accepted.
#[test]
fn rotating_shapes_past_f32s_range_are_refused() {
    use sweepfan::geom::sector::body::ConvexBody;
    let spheres = [Sphere::new(Vec3::new(0.0, 3.0, 0.0), 0.5)];
    let boxed = |widths: Vec3| RotatingBox {
        origin: Vec3::ZERO,
        axis: Vec3::Z,
        arm: Vec3::Y,
        distance: 3.0,
        widths,
        angle: 1.0,
    };
    for (widths, named) in [
        (Vec3::splat(3e38), "exceeds 1e18"),
        (Vec3::splat(1e-40), "width x"),
    ] {
        let e = rotating_frame_cpu(&[boxed(widths)], &spheres, &Proxy::ALL, true).unwrap_err();
        assert!(
            matches!(e, Error::InvalidObject { index: 0, .. }) && e.to_string().contains(named),
            "{e}"
        );
        assert!(rotating_brute_force(&[boxed(widths)], &spheres, Proxy::ALL[0]).is_err());
    }
    let capsule = RotatingBody {
        body: ConvexBody::Capsule {
            a: Vec3::new(0.0, 3e38, 0.0),
            b: Vec3::new(0.0, -3e38, 0.0),
            radius: 1.0,
        },
        origin: Vec3::ZERO,
        axis: Vec3::Z,
        angle: 1.0,
    };
    let e = rotating_frame_cpu(std::slice::from_ref(&capsule), &spheres, &Proxy::ALL, true)
        .unwrap_err();
    assert!(e.to_string().contains("exceeds 1e18"), "{e}");
    if let Some(ctx) = test_gpu() {
        let mut gpu = RotatingGpu::new(&ctx).unwrap();
        let e = gpu
            .frame(&ctx, &[capsule], &spheres, &Proxy::ALL, true)
            .unwrap_err();
        assert!(e.to_string().contains("exceeds 1e18"), "{e}");
    }
}
