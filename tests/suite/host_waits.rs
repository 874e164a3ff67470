//! One host wait per frame for every GPU pipeline (docs/design.md §9.7): the box and polygon
//! pipeline with both proxies, its candidate list, and the rotating scene; a second wait only
//! when a list overflowed and the frame (or its SAT stage) runs again. Each test opens a device
//! of its own: the counts are per device, and other tests share theirs.
//! (The sphere broad phase's test is `gpu_vs_cpu::a_frame_waits_on_the_host_once`.)

use crate::common::shared_gpu;
use crate::common::test_gpu;
use glam::Vec3;
use sweepfan::broadphase::{DeviceCounts, Method};
use sweepfan::cpu::rotating_frame_cpu;
use sweepfan::cpu::sat::obb_overlaps;
use sweepfan::geom::obb::Obb;
use sweepfan::geom::sector::Proxy as RotatingProxy;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::RotatingGpu;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::{Pair, canonicalize};
use sweepfan_scenes::boxes::generate_boxes;
use sweepfan_scenes::rotating::{RotatingParams, RotatingScene};
use sweepfan_scenes::{SceneKind, SceneParams};

fn sorted(mut pairs: Vec<Pair>) -> Vec<Pair> {
    canonicalize(&mut pairs);
    pairs
}

/// What `f` cost in host waits and dispatches on `ctx`.
fn used<T>(ctx: &GpuContext, f: impl FnOnce() -> T) -> (T, DeviceCounts) {
    let before = ctx.counts();
    let out = f();
    (out, ctx.counts().since(before))
}

#[test]
fn a_box_frame_waits_on_the_host_once() {
    let Some(ctx) = shared_gpu() else { return };
    let mut p = SceneParams::new(2_000, 8);
    p.volume_fraction = 0.05;
    let boxes: Vec<Obb> = generate_boxes(SceneKind::Density, &p);
    let expected = sorted(obb_overlaps(&boxes).unwrap().0);
    assert!(expected.len() > 100, "{} pairs", expected.len());
    for proxy in [Proxy::Aabb, Proxy::Sphere(Method::Grid)] {
        let mut gpu = GpuBoxPipeline::new(ctx.clone(), proxy).unwrap();
        let mut out = Vec::new();
        // Warm-up: the lists grow to the scene.
        gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
        let (stats, counts) = used(&ctx, || gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap());
        assert_eq!(sorted(out.clone()), expected, "{proxy:?}");
        assert_eq!(stats.pairs as usize, expected.len());
        assert_eq!(counts.host_waits, 1, "{proxy:?} pairs: {counts:?}");
        let (stats, counts) = used(&ctx, || gpu.obb_overlaps(&boxes, None).unwrap());
        assert_eq!(stats.pairs as usize, expected.len());
        assert_eq!(counts.host_waits, 1, "{proxy:?} count only: {counts:?}");
        // A candidate list too small: the frame runs again, once.
        gpu.set_candidate_capacity(1).unwrap();
        let (_, counts) = used(&ctx, || gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap());
        assert_eq!(sorted(out.clone()), expected, "{proxy:?} after growth");
        assert_eq!(
            counts.host_waits, 2,
            "{proxy:?} candidates overflow: {counts:?}"
        );
        if proxy == Proxy::Aabb {
            let mut candidates = Vec::new();
            let (count, counts) = used(&ctx, || {
                gpu.obb_candidates(&boxes, &mut candidates).unwrap()
            });
            assert_eq!(count as usize, candidates.len());
            assert!(candidates.len() >= expected.len());
            assert_eq!(counts.host_waits, 1, "candidates: {counts:?}");
        }
    }
}

#[test]
fn a_sat_output_overflow_costs_one_more_wait_and_loses_nothing() {
    let Some(ctx) = shared_gpu() else { return };
    // A lattice of touching unit cubes: many more overlaps than the SAT output's first size.
    let cell = |i: u32| [i % 8, (i / 8) % 8, i / 64];
    let boxes: Vec<Obb> = (0..512u32)
        .map(|i| {
            let [x, y, z] = cell(i);
            Obb::axis_aligned(
                Vec3::new(x as f32, y as f32, z as f32) + Vec3::splat(50.0),
                Vec3::splat(0.5),
            )
        })
        .collect();
    // Cubes touch exactly when their cells differ by at most 1 on every axis (exact in f32).
    let mut expected = Vec::new();
    for i in 0..512u32 {
        for j in i + 1..512 {
            if (0..3).all(|k| cell(i)[k].abs_diff(cell(j)[k]) <= 1) {
                expected.push([i, j]);
            }
        }
    }
    let mut gpu = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    let mut out = Vec::new();
    let (_, counts) = used(&ctx, || gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap());
    assert_eq!(sorted(out), expected);
    // First frame: the candidate list and the SAT output both grow, each one re-run.
    assert!(
        (2..=3).contains(&counts.host_waits),
        "first frame: {counts:?}"
    );
}

#[test]
fn a_rotating_frame_waits_on_the_host_once() {
    let Some(ctx) = test_gpu() else { return };
    let mut gpu = RotatingGpu::new(&ctx).unwrap();
    let s = RotatingScene::generate(&RotatingParams::new(300, 5_000, 3)).unwrap();
    let cpu = rotating_frame_cpu(&s.boxes, &s.spheres, &RotatingProxy::ALL, false).unwrap();
    for want_hits in [false, true] {
        // Warm-up: the candidate list grows to the scene.
        gpu.frame(&ctx, &s.boxes, &s.spheres, &RotatingProxy::ALL, want_hits)
            .unwrap();
        let (got, counts) = used(&ctx, || {
            gpu.frame(&ctx, &s.boxes, &s.spheres, &RotatingProxy::ALL, want_hits)
                .unwrap()
        });
        for (c, g) in cpu.iter().zip(&got) {
            assert_eq!(c.candidates, g.candidates);
            assert!(c.hits.abs_diff(g.hits) <= 2, "{} vs {}", c.hits, g.hits);
            assert_eq!(g.hit_pairs.is_some(), want_hits);
        }
        assert_eq!(counts.host_waits, 1, "hits {want_hits}: {counts:?}");
        for proxy in RotatingProxy::ALL {
            let (_, counts) = used(&ctx, || {
                gpu.frame(&ctx, &s.boxes, &s.spheres, &[proxy], want_hits)
                    .unwrap()
            });
            assert_eq!(counts.host_waits, 1, "{proxy:?}: {counts:?}");
        }
    }
}

#[test]
fn rotating_lists_outgrown_run_again_and_lose_nothing() {
    let Some(ctx) = test_gpu() else { return };
    let s = RotatingScene::generate(&RotatingParams::new(2_000, 20_000, 4)).unwrap();
    let cpu = rotating_frame_cpu(&s.boxes, &s.spheres, &RotatingProxy::ALL, true).unwrap();
    // More hits than a fresh pipeline's first hit list (1,024) and more candidates than its
    // first candidate list (16 per box): the first frame runs its proxies again.
    let most = cpu.iter().map(|f| f.hits).max().unwrap();
    assert!(most > 1_024, "{most} hits");
    let mut gpu = RotatingGpu::new(&ctx).unwrap();
    for round in 0..2 {
        let (got, counts) = used(&ctx, || {
            gpu.frame(&ctx, &s.boxes, &s.spheres, &RotatingProxy::ALL, true)
                .unwrap()
        });
        for (c, g) in cpu.iter().zip(&got) {
            assert_eq!(c.candidates, g.candidates, "round {round}");
            let (want, have) = (c.hit_pairs.as_ref().unwrap(), g.hit_pairs.as_ref().unwrap());
            assert_eq!(g.hits, have.len() as u64, "round {round}");
            let missing = want
                .iter()
                .filter(|p| have.binary_search(p).is_err())
                .count();
            let extra = have
                .iter()
                .filter(|p| want.binary_search(p).is_err())
                .count();
            assert!(
                missing + extra <= 2,
                "round {round}: {missing} + {extra} ties"
            );
        }
        // The re-run of a proxy is the chunked path: a few waits of its own.
        let expected = if round == 0 { 2..=12 } else { 1..=1 };
        assert!(
            expected.contains(&counts.host_waits),
            "round {round}: {counts:?}"
        );
    }
}

/// After a wait abandoned under a cancelled token (Ctrl-C, docs/design.md §9.18), the next
/// call cancelled in turn stops within a second, though the abandoned work still runs: on
/// lavapipe the submission itself blocked while the queue was busy, where no token is looked
/// at, and the next call ignored its cancellation until the work before it ended (28 s after a
/// 60,000-sphere brute force). A call without a token then waits for it and is exact.
#[test]
fn a_call_after_an_abandoned_wait_stops_at_its_own_cancellation() {
    use std::time::{Duration, Instant};
    use sweepfan::{BroadPhase, CancelToken, Error, Limits};
    if shared_gpu().is_none() {
        return;
    }
    let ctx = std::sync::Arc::new(test_gpu().expect("a device"));
    let software = ctx.info().device_type == wgpu::DeviceType::Cpu;
    let big = sweepfan_scenes::Scene::generate(SceneKind::Density, &SceneParams::new(30_000, 4));
    let small = sweepfan_scenes::Scene::generate(SceneKind::Paper, &SceneParams::new(500, 4));
    let mut bp = sweepfan::gpu::GpuBroadPhase::new(ctx, Method::BruteForce).unwrap();
    // Cancelled after `after`; how long the call took and what it returned.
    let cancelled_after = |bp: &mut sweepfan::gpu::GpuBroadPhase, s: &[sweepfan::Sphere]| {
        let token = CancelToken::new();
        let canceller = token.clone();
        let timer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            canceller.cancel();
        });
        let start = Instant::now();
        let got = Limits::new()
            .with_cancel(token)
            .run(|| bp.find_pairs(s, None));
        timer.join().unwrap();
        (start.elapsed(), got)
    };
    let (_, first) = cancelled_after(&mut bp, &big.spheres);
    let (took, second) = cancelled_after(&mut bp, &small.spheres);
    // A software adapter takes seconds over 30,000 spheres: the premise holds there (a
    // hardware GPU may finish the first call before its token, leaving nothing abandoned).
    assert!(
        !software || matches!(first, Err(Error::Interrupted)),
        "the first call was not stopped: {first:?}"
    );
    if matches!(first, Err(Error::Interrupted)) {
        assert!(
            took < Duration::from_millis(1500),
            "the call after an abandoned wait took {took:?} ({second:?})"
        );
    }
    let mut pairs = Vec::new();
    bp.find_pairs(&small.spheres, Some(&mut pairs)).unwrap();
    assert!(pairs == crate::common::oracle_pairs(&small.spheres));
}
