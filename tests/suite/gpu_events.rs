//! Frame events computed on the device (src/gpu/events.rs) equal the CPU tracker's on every
//! frame of a moving scene, in the same canonical order, including frames whose pair list
//! overflowed and ran again, and after the list grew (this frame's list longer than the last).

use crate::common::{assert_an_empty_frame_loses_every_pair, cpu_grid_pairs, shared_gpu};
use sweepfan::cpu;
use sweepfan::gpu::GpuEvents;
use sweepfan::gpu::instrument::Readback;
use sweepfan::{EventTracker, GpuBroadPhase, Method};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

#[test]
fn device_events_equal_the_cpu_tracker_on_every_frame() {
    let Some(ctx) = shared_gpu() else { return };
    let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(3_000, 4));
    let n = scene.len() as u32;
    for method in [Method::Grid, Method::Sap] {
        let mut bp = GpuBroadPhase::new(ctx.clone(), method).unwrap();
        // Far fewer slots than pairs: the first frame overflows, grows and runs again.
        bp.set_pair_capacity(64).unwrap();
        let mut events = GpuEvents::new(&ctx).unwrap();
        let mut cpu_grid = cpu::broad_phase(Method::Grid);
        let mut tracker = EventTracker::new();
        let mut rb = Readback::new("test events readback");
        let mut tails = Readback::new("test events readback, the rest");
        let (mut reruns, mut changed) = (0, 0);
        for frame in 0..12 {
            let (totals, got) = loop {
                let mut enc = bp.encode_resident(&scene.spheres).unwrap();
                events
                    .encode(&ctx, &mut enc, &bp.resident_pairs(), n, true)
                    .unwrap();
                rb.clear();
                let bp_plan = bp.plan_resident_readback(&mut rb);
                let ev_plan = events.plan_readback(&mut rb, true);
                rb.record(&ctx, &mut enc).unwrap();
                ctx.queue().submit([enc.finish()]);
                let (totals, got) = rb
                    .map(&ctx, |bytes| {
                        (
                            bp.resident_totals_from(n, bytes, &bp_plan).unwrap(),
                            events.events_from(bytes, &ev_plan),
                        )
                    })
                    .unwrap();
                if totals.pairs <= bp.resident_pairs().capacity as u64 {
                    break (totals, got);
                }
                reruns += 1;
                bp.grow_pair_list(totals.pairs).unwrap();
            };
            let got = pollster::block_on(events.finish(&ctx, &mut tails, got)).unwrap();
            events.commit();
            let mut pairs = Vec::new();
            cpu_grid
                .find_pairs(&scene.spheres, Some(&mut pairs))
                .unwrap();
            let want = tracker.update(pairs);
            assert_eq!(got, want, "{method} frame {frame}");
            assert_eq!(totals.pairs, want.pairs_now());
            if frame > 0 && !want.found.is_empty() && !want.lost.is_empty() {
                changed += 1;
            }
            scene.step();
        }
        assert_eq!(reruns, 1, "{method}: the first frame overflows once");
        // After a reset the previous frame is forgotten: the next frame finds all its pairs.
        events.reset(&ctx);
        let mut enc = bp.encode_resident(&scene.spheres).unwrap();
        events
            .encode(&ctx, &mut enc, &bp.resident_pairs(), n, true)
            .unwrap();
        rb.clear();
        let ev_plan = events.plan_readback(&mut rb, true);
        rb.record(&ctx, &mut enc).unwrap();
        ctx.queue().submit([enc.finish()]);
        let got = rb
            .map(&ctx, |bytes| events.events_from(bytes, &ev_plan))
            .unwrap();
        let got = pollster::block_on(events.finish(&ctx, &mut tails, got)).unwrap();
        let mut pairs = Vec::new();
        cpu_grid
            .find_pairs(&scene.spheres, Some(&mut pairs))
            .unwrap();
        let want = EventTracker::new().update(pairs);
        assert_eq!(got, want, "{method} after reset");
        assert!(changed >= 10, "{method}: contacts must begin and end");
    }
}

/// Spheres read from a caller's buffer: invalid ones and a list too small for a frame are
/// errors at `check_resident`, never silent; a valid run checks clean and its pairs are the
/// CPU's.
#[test]
fn resident_frames_report_bad_spheres_and_overflow() {
    use wgpu::util::DeviceExt;
    let Some(ctx) = shared_gpu() else { return };
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(2_000, 9));
    let upload = |spheres: &[sweepfan::Sphere]| {
        ctx.device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("caller spheres"),
                contents: bytemuck::cast_slice(spheres),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
    };
    let n = scene.len() as u32;
    let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    sweepfan::BroadPhase::track_events(&mut bp, true).unwrap();
    bp.set_pair_capacity(100_000).unwrap();
    // Valid: clean, and the resident list holds the CPU's pairs.
    let good = upload(&scene.spheres);
    for _ in 0..2 {
        let enc = bp.encode_from_buffer(&good, n).unwrap();
        ctx.queue().submit([enc.finish()]);
    }
    bp.check_resident().unwrap();
    let want = cpu_grid_pairs(&scene.spheres);
    let list = bp.resident_pairs();
    let count = ctx.read::<u32>(list.counters, 5).unwrap()[4] as usize;
    let mut got: Vec<[u32; 2]> = ctx.read(list.pairs, count).unwrap();
    sweepfan::canonicalize(&mut got);
    assert_eq!(got, want);
    // A NaN, a negative radius and a value past 1e18, in one frame among good ones.
    let mut bad = scene.spheres.clone();
    bad[5].center.x = f32::NAN;
    bad[6].radius = -1.0;
    bad[7].center.z = 2e18;
    let bad = upload(&bad);
    for buffer in [&good, &bad, &good] {
        let enc = bp.encode_from_buffer(buffer, n).unwrap();
        ctx.queue().submit([enc.finish()]);
    }
    let e = bp.check_resident().unwrap_err().to_string();
    assert!(e.contains("3 spheres") && e.contains("not valid"), "{e}");
    bp.check_resident().unwrap(); // checked and cleared
    // A frame from the host between the bad frame and the check hides nothing.
    let enc = bp.encode_from_buffer(&bad, n).unwrap();
    ctx.queue().submit([enc.finish()]);
    sweepfan::BroadPhase::find_pairs(&mut bp, &scene.spheres, None).unwrap();
    let e = bp.check_resident().unwrap_err().to_string();
    assert!(e.contains("3 spheres"), "after a host frame: {e}");
    // A list too small for the middle frame (counted by the events), then a frame that fits.
    bp.set_pair_capacity(10).unwrap();
    let enc = bp.encode_from_buffer(&good, n).unwrap();
    ctx.queue().submit([enc.finish()]);
    let e = bp.check_resident().unwrap_err();
    assert!(matches!(e, sweepfan::Error::TooLarge { .. }), "{e}");
    // Too few bytes for n, or a buffer the frame cannot copy from: clear errors before any work.
    let short = upload(&scene.spheres[..10]);
    let e = bp.encode_from_buffer(&short, n).unwrap_err().to_string();
    assert!(e.contains("bytes"), "{e}");
    let no_copy = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: n as u64 * 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let e = bp.encode_from_buffer(&no_copy, n).unwrap_err().to_string();
    assert!(e.contains("COPY_SRC"), "{e}");
}

/// The box and polygon pipeline's events on the device equal a tracker fed the pipeline's own
/// pairs, frame after frame of moving shapes, including the first frame, whose SAT output
/// overflows its first size and runs again; and the boxes' pairs are the CPU pipeline's.
#[test]
fn box_and_polygon_pipeline_events_on_the_device() {
    use glam::{Vec2, Vec3};
    use sweepfan::geom::polygon::Polygon;
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
    let Some(ctx) = shared_gpu() else { return };
    let mut p = SceneParams::new(1_500, 3);
    p.volume_fraction = 0.1;
    let mut boxes = generate_boxes(SceneKind::Density, &p);
    let mut polygons = generate_polygons(SceneKind::Density, &p).unwrap();
    // One pipeline per stream of frames: a tracker compares each frame with the one before.
    let mut gpu = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    gpu.track_events(true).unwrap();
    let mut gpu_polygons = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    gpu_polygons.track_events(true).unwrap();
    let same = |a: &sweepfan::FrameEvents, b: &sweepfan::FrameEvents| {
        a == b || {
            eprintln!(
                "found {} vs {}, lost {} vs {}, persisting {} vs {}",
                a.found.len(),
                b.found.len(),
                a.lost.len(),
                b.lost.len(),
                a.persisting,
                b.persisting
            );
            false
        }
    };
    let (mut box_tracker, mut polygon_tracker) = (EventTracker::new(), EventTracker::new());
    let mut changed = 0;
    for frame in 0..6 {
        let mut out = Vec::new();
        gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
        let got = gpu.take_events().expect("tracked");
        let mut cpu_pairs = sweepfan::cpu::sat::obb_overlaps(&boxes).unwrap().0;
        sweepfan::canonicalize(&mut cpu_pairs);
        let want = box_tracker.update(out);
        assert_eq!(
            box_tracker.pairs(),
            cpu_pairs.as_slice(),
            "boxes, frame {frame}"
        );
        assert!(same(&got, &want), "boxes, frame {frame}");
        if frame > 0 && !want.found.is_empty() && !want.lost.is_empty() {
            changed += 1;
        }
        let mut out = Vec::new();
        gpu_polygons
            .polygon_overlaps(&polygons, Some(&mut out))
            .unwrap();
        let got = gpu_polygons.take_events().expect("tracked");
        assert!(
            same(&got, &polygon_tracker.update(out)),
            "polygons, frame {frame}"
        );
        // Move: each shape along its own direction, 0.3 per frame.
        for (i, b) in boxes.iter_mut().enumerate() {
            let a = i as f32 * 2.399;
            b.center += Vec3::new(a.cos(), a.sin(), (a * 0.7).sin()) * 0.3;
        }
        polygons = polygons
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let a = i as f32 * 2.399;
                let d = Vec2::new(a.cos(), a.sin()) * 0.3;
                let v: Vec<Vec2> = q.vertices().iter().map(|&v| v + d).collect();
                Polygon::new(&v).unwrap()
            })
            .collect();
    }
    assert!(changed >= 4, "contacts must begin and end");
}

/// `set_canonical(true)`: the GPU's pairs arrive in canonical order, with no sort on the host:
/// the very bytes of the CPU's canonicalised list, run after run, for every method (alone and
/// with frame events tracked, which share the sort).
#[test]
fn canonical_pair_order_from_the_device() {
    let Some(ctx) = shared_gpu() else { return };
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(2_500, 12));
    let want = cpu_grid_pairs(&scene.spheres);
    for method in Method::ALL {
        for with_events in [false, true] {
            let mut bp = GpuBroadPhase::new(ctx.clone(), method).unwrap();
            bp.set_canonical(true).unwrap();
            sweepfan::BroadPhase::track_events(&mut bp, with_events).unwrap();
            for run in 0..2 {
                let mut got = Vec::new();
                sweepfan::BroadPhase::find_pairs(&mut bp, &scene.spheres, Some(&mut got)).unwrap();
                assert!(got == want, "{method} (events {with_events}) run {run}");
            }
        }
    }
}

/// Polygon frames whose pairs the device leaves unsure (a vertex on, or one lowest bit off, a
/// slanted edge: `hairline_polygons`), each frame a new draw of the nudges: the device's events
/// (recomputed from the host's settled list) are the exact frames' differences.
#[test]
fn polygon_events_of_unsure_pairs_are_the_exact_frames_differences() {
    use crate::common::{hairline_polygons, polygon_oracle};
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    let Some(ctx) = shared_gpu() else { return };
    let mut gpu = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb).unwrap();
    gpu.track_events(true).unwrap();
    let mut tracker = EventTracker::new();
    for frame in 0..4u64 {
        let polys = hairline_polygons(60, 10 + frame, 1.0);
        let n = polys.len() as u32;
        let want_pairs: Vec<sweepfan::Pair> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| [i, j]))
            .filter(|&[i, j]| {
                polygon_oracle(polys[i as usize].vertices(), polys[j as usize].vertices())
            })
            .collect();
        let want = tracker.update(want_pairs.clone());
        let mut out = Vec::new();
        gpu.polygon_overlaps(&polys, Some(&mut out)).unwrap();
        sweepfan::canonicalize(&mut out);
        assert_eq!(out, want_pairs, "frame {frame}");
        let got = gpu.take_events().expect("tracked");
        assert_eq!(got, want, "frame {frame}");
        if frame > 0 {
            assert!(
                !want.found.is_empty() && !want.lost.is_empty(),
                "frame {frame}"
            );
        }
    }
}

/// A frame past the pair limit fails before its events are kept: no events for it, the
/// caller's list empty, and the next frame's events compare with the last frame that
/// succeeded (with a list long enough that the device stored the failed frame whole).
#[test]
fn a_frame_past_the_pair_limit_keeps_no_events() {
    use glam::Vec3;
    use sweepfan::{BroadPhase, Error, Sphere};
    let Some(ctx) = shared_gpu() else { return };
    // Spheres on a line, 1.5 apart: each touches its neighbours (n - 1 pairs) ...
    let line = |n: usize| -> Vec<Sphere> {
        (0..n)
            .map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0))
            .collect()
    };
    // ... and, bunched 0.5 apart, each its next four (4n - 10 pairs).
    let bunched: Vec<Sphere> = (0..400)
        .map(|i| Sphere::new(Vec3::new(i as f32 * 0.5, 0.0, 0.0), 1.0))
        .collect();
    for method in [Method::Grid, Method::Sap] {
        let mut bp = GpuBroadPhase::new(ctx.clone(), method).unwrap();
        bp.set_pair_capacity(4096).unwrap();
        bp.set_pair_limit(1000);
        assert!(bp.track_events(true).unwrap());
        let mut pairs = Vec::new();
        bp.find_pairs(&line(400), Some(&mut pairs)).unwrap();
        assert_eq!(bp.take_events().unwrap().found.len(), 399, "{method}");
        let e = bp.find_pairs(&bunched, Some(&mut pairs)).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{method}: {e}");
        assert!(
            pairs.is_empty(),
            "{method}: the failed frame's list was left"
        );
        assert!(
            bp.take_events().is_none(),
            "{method}: events of a failed frame"
        );
        // Against the line (the last good frame): its first 200 pairs persist, the rest go.
        bp.find_pairs(&line(201), Some(&mut pairs)).unwrap();
        let ev = bp.take_events().unwrap();
        assert_eq!(
            (ev.found.len(), ev.lost.len(), ev.persisting),
            (0, 199, 200),
            "{method}"
        );
    }
}

/// `auto` turned to device events after it built two methods: a later switch to the other
/// one still gives every frame's events.
#[test]
fn auto_tracks_events_on_every_method_it_built() {
    use sweepfan::BroadPhase;
    let Some(ctx) = shared_gpu() else { return };
    let (dense, sparse) = scenes_auto_runs_apart();
    let mut auto = sweepfan::gpu::auto(ctx);
    let first = auto
        .find_pairs(&dense, None)
        .unwrap()
        .chosen
        .map(|c| c.method);
    let second = auto
        .find_pairs(&sparse, None)
        .unwrap()
        .chosen
        .map(|c| c.method);
    assert_ne!(first, second, "the scenes must choose two methods");
    assert!(auto.track_events(true).unwrap());
    let mut tracker = EventTracker::new();
    let mut pairs = Vec::new();
    for (k, s) in [&dense, &sparse, &dense, &sparse, &dense]
        .into_iter()
        .enumerate()
    {
        auto.find_pairs(s, Some(&mut pairs)).unwrap();
        let want = tracker.update(pairs.clone());
        let got = auto.take_events();
        assert_eq!(
            got.as_ref(),
            Some(&want),
            "frame {k} (first choice {first:?})"
        );
    }
}

/// An empty frame loses every pair of the frame before and the next frame finds them again, on
/// the box and polygon pipeline (whose empty frame runs nothing on the device) and on a sphere
/// broad phase whose frames run in parts (its events on the host): before, the pipeline's
/// empty frame kept no events (the next frame's pairs came back as persisting) and the parts'
/// empty frame compared the device's stale lists.
#[test]
fn an_empty_frame_loses_every_pair_in_parts_and_on_the_box_pipeline() {
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    use sweepfan_scenes::boxes::generate_boxes;
    let Some(ctx) = shared_gpu() else { return };
    let mut p = SceneParams::new(1_500, 3);
    p.volume_fraction = 0.1;
    let boxes = generate_boxes(SceneKind::Density, &p);
    let mut want = sweepfan::cpu::sat::obb_overlaps(&boxes).unwrap().0;
    sweepfan::canonicalize(&mut want);
    assert!(want.len() > 100);
    let mut gpu = GpuBoxPipeline::new(ctx, Proxy::Aabb).unwrap();
    gpu.track_events(true).unwrap();
    let mut out = Vec::new();
    assert_an_empty_frame_loses_every_pair(&boxes, &want, "boxes", |b| {
        let stats = gpu.obb_overlaps(b, Some(&mut out)).unwrap();
        (stats, gpu.take_events().expect("events"))
    });

    let Some(small) = crate::common::gpu_at_the_smallest_binding_cap() else {
        return;
    };
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(20_000, 4)).spheres;
    let want = cpu_grid_pairs(&scene);
    let mut bp = GpuBroadPhase::new(small, Method::Grid).unwrap();
    assert!(sweepfan::BroadPhase::track_events(&mut bp, true).unwrap());
    let mut pairs = Vec::new();
    assert_an_empty_frame_loses_every_pair(&scene, &want, "in parts", |s| {
        let stats = sweepfan::BroadPhase::find_pairs(&mut bp, s, Some(&mut pairs)).unwrap();
        if !s.is_empty() {
            assert_eq!(pairs, want, "in parts");
        }
        (
            stats,
            sweepfan::BroadPhase::take_events(&mut bp).expect("events"),
        )
    });
}

/// A switch of method decided on a frame that only counts waits for the next frame that stores
/// its pairs: that frame's events compare with the last stored frame (the one the caller was
/// given), not with the counted one, and the scene is surveyed once for it.
#[test]
fn auto_switches_on_a_stored_frame_after_a_counted_one() {
    use sweepfan::BroadPhase;
    let Some(ctx) = shared_gpu() else { return };
    let (dense, sparse) = scenes_auto_runs_apart();
    let mut auto = sweepfan::gpu::auto(ctx);
    assert!(auto.track_events(true).unwrap());
    let mut pairs = Vec::new();
    let mut tracker = EventTracker::new();
    let first = auto.find_pairs(&dense, Some(&mut pairs)).unwrap().chosen;
    tracker.update(pairs.clone());
    auto.take_events();
    // The counted frame of another scene chooses another method, which waits.
    let counted = auto.find_pairs(&sparse, None).unwrap().chosen;
    assert_eq!(
        counted.as_ref().map(|c| c.method),
        first.as_ref().map(|c| c.method),
        "the counted frame runs the method before"
    );
    for k in 0..3 {
        let stats = auto.find_pairs(&sparse, Some(&mut pairs)).unwrap();
        let want = tracker.update(pairs.clone());
        assert_eq!(
            auto.take_events().as_ref(),
            Some(&want),
            "stored frame {k} after the counted one"
        );
        if k == 1 {
            assert_ne!(
                stats.chosen.map(|c| c.method),
                first.as_ref().map(|c| c.method),
                "the new method took over after the first stored frame"
            );
        }
    }
}

/// A dense and a sparse scene, on which `auto` chooses two methods (the tests assert it).
fn scenes_auto_runs_apart() -> (Vec<sweepfan::Sphere>, Vec<sweepfan::Sphere>) {
    (
        Scene::generate(SceneKind::Paper, &SceneParams::new(3_000, 5)).spheres,
        Scene::generate(SceneKind::Clusters, &SceneParams::new(400, 6)).spheres,
    )
}
