//! The device counters (docs/design.md §9.16): every creation and host write under `src/` goes
//! through the context's counted methods (`gpu/context/creation.rs`), and the counts reach the
//! GPU rows.

use crate::common::rust_files;
use std::path::Path;

/// `.device.create_X(`, `.queue.write_buffer(` or `.begin_compute_pass(` (on any encoder),
/// whitespace (line breaks) allowed around the dots, outside the one file that wraps them.
#[test]
fn no_creation_or_host_write_bypasses_the_counters() {
    // The workspace: the library, the tool and the Python package.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("cli/src"), &mut files);
    rust_files(&root.join("python/src"), &mut files);
    let wrapped = [
        ("device", "create_bind_group"),
        ("device", "create_buffer"),
        ("device", "create_buffer_init"),
        ("device", "create_query_set"),
        ("device", "create_compute_pipeline"),
        ("queue", "write_buffer"),
    ];
    let mut found = Vec::new();
    for file in &files {
        if file.ends_with("gpu/context/creation.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let squeezed: String = text.split_whitespace().collect();
        for (owner, call) in wrapped {
            if squeezed.contains(&format!(".{owner}.{call}(")) {
                found.push(format!("{}: .{owner}.{call}(", file.display()));
            }
        }
        if squeezed.contains(".begin_compute_pass(") {
            found.push(format!("{}: .begin_compute_pass(", file.display()));
        }
    }
    assert!(found.is_empty(), "uncounted: {found:#?}");
}

/// A frame's creations and traffic are counted: a GPU frame reads its pairs back and writes its
/// spheres, and a buffer made through the context counts once.
#[test]
fn the_context_counts_what_it_creates_and_moves() {
    use sweepfan::{BroadPhase, Method};
    use sweepfan_scenes::{Scene, SceneKind, SceneParams};
    let ctx = std::sync::Arc::new(
        sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap(),
    );
    let before = ctx.counts();
    let buffer = sweepfan::gpu::instrument::storage_buffer(&ctx, "counted", 64).unwrap();
    sweepfan::gpu::instrument::write_buffer(&ctx, &buffer, 0, &[1; 16]);
    let after = ctx.counts().since(before);
    assert_eq!((after.buffers, after.bytes_from_host), (1, 16));
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(3000, 1));
    let mut bp = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let mut pairs = Vec::new();
    let before = ctx.counts();
    let stats = bp.find_pairs(&scene.spheres, Some(&mut pairs)).unwrap();
    let frame = ctx.counts().since(before);
    // 16 bytes a sphere up, and at least the pairs (8 bytes each) down.
    assert!(frame.bytes_from_host >= 16 * 3000, "{frame:?}");
    assert!(frame.bytes_to_host >= 8 * stats.pairs, "{frame:?}");
    assert!(frame.dispatches > 0 && frame.host_waits > 0, "{frame:?}");
}

/// Readback by counts (docs/design.md §9.7): each frame copies about the last frame's lists, a
/// list that grew past that is read to its end in a second map, and after warm-up the bytes
/// read stay within twice the results (pairs and events, 8 bytes each) plus 64 KiB — whatever
/// the lists' capacities.
#[test]
fn readback_follows_the_counts_and_lists_that_grow_come_back_whole() {
    use glam::Vec3;
    use sweepfan::{BroadPhase, EventTracker, Method, Sphere, canonicalize};
    let ctx = std::sync::Arc::new(
        sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap(),
    );
    let mut gpu = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    assert!(gpu.track_events(true).unwrap());
    // A line of spheres whose spacing shrinks then grows: pairs jump from 0 to n * k and back,
    // far past the last frame's count with headroom.
    let frame = |spacing: f32| -> Vec<Sphere> {
        (0..20_000)
            .map(|i| Sphere::new(Vec3::new(i as f32 * spacing, 0.0, 0.0), 1.0))
            .collect()
    };
    let spacings = [3.0, 3.0, 3.0, 0.5, 0.5, 0.5, 0.25, 3.0, 0.3, 0.3, 0.3];
    let mut tracker = EventTracker::new();
    let mut cpu = sweepfan::cpu::broad_phase(Method::Grid);
    let (mut previous, mut tails) = (0u64, 0);
    for (f, &spacing) in spacings.iter().enumerate() {
        let spheres = frame(spacing);
        let mut expected = Vec::new();
        cpu.find_pairs(&spheres, Some(&mut expected)).unwrap();
        canonicalize(&mut expected);
        let events = tracker.update(expected.clone());
        let before = ctx.counts();
        let mut got = Vec::new();
        gpu.find_pairs(&spheres, Some(&mut got)).unwrap();
        let counts = ctx.counts().since(before);
        canonicalize(&mut got);
        assert_eq!(got, expected, "frame {f}");
        let mut device_events = gpu.take_events().expect("tracked");
        canonicalize(&mut device_events.found);
        canonicalize(&mut device_events.lost);
        assert_eq!(device_events.found, events.found, "frame {f}");
        assert_eq!(device_events.lost, events.lost, "frame {f}");
        let results = 8 * (expected.len() + events.found.len() + events.lost.len()) as u64;
        // A list past the last frame's count with headroom: its rest in a second map.
        let now = expected.len() as u64;
        if now > previous + previous / 4 + 1024 {
            assert!(counts.host_waits >= 2, "frame {f}: {counts:?}");
            tails += 1;
        }
        previous = now;
        // The same scene as the two frames before (so the same pairs, and no events as in the
        // frame before): planned from those counts, read once.
        if f > 1 && spacing == spacings[f - 1] && spacing == spacings[f - 2] {
            assert!(
                counts.bytes_to_host <= 2 * results + 65_536,
                "frame {f}: {} bytes read for {results} bytes of results",
                counts.bytes_to_host
            );
        }
    }
    assert!(tails >= 3, "{tails} frames read a rest");
}

/// Once sizes are stable nothing is created per frame (docs/design.md §9.16): every GPU row of
/// `bench` (every sphere method with events, boxes, polygons, rotating boxes) and of
/// `sort-bench` says zero bind groups, buffers, query sets and pipelines.
#[test]
fn gpu_rows_create_nothing_per_frame_once_sizes_are_stable() {
    let dir = crate::common::temp_dir("counters", "rows");
    let runs: [&[&str]; 5] = [
        &["bench", "--methods", "all", "--events", "--n", "3000"],
        &["bench", "--shape", "obb", "--n", "3000"],
        &["bench", "--shape", "polygon", "--n", "3000"],
        &[
            "bench", "--scene", "rotating", "--n", "3000", "--boxes", "50",
        ],
        &["sort-bench", "--sizes", "4096,65536", "--reps", "5"],
    ];
    for (k, args) in runs.iter().enumerate() {
        let json = dir.join(format!("rows-{k}.json"));
        let mut cmd = crate::common::sweepfan();
        cmd.args(*args);
        if args[0] == "bench" {
            cmd.args(["--backend", "gpu", "--frames", "5"]);
        }
        crate::common::succeed(cmd.arg("--json").arg(&json).output());
        let rows = crate::common::json_rows(&json);
        assert!(!rows.is_empty(), "{args:?}");
        for row in rows {
            let created = &row["created_per_frame"];
            for kind in ["bind_groups", "buffers", "query_sets", "pipelines"] {
                assert_eq!(created[kind], 0.0, "{args:?}: {kind} in {row}");
            }
            assert!(
                row["bytes_from_host_per_frame"].as_f64().unwrap() > 0.0,
                "{row}"
            );
            // Sphere frames time their host side by every step the report prints
            // (docs/design.md §9.16); the wait for the device is part of the frame, never more
            // than it.
            if k == 0 {
                let host = &row["host_ms"];
                for step in sweepfan_cli::report::bench::HOST_STEPS {
                    assert!(
                        host[step].as_f64().is_some_and(|v| v >= 0.0),
                        "{step}: {row}"
                    );
                }
                let frame = row["ms_per_frame"].as_f64().unwrap();
                assert!(host["wait"].as_f64().unwrap() <= frame, "{row}");
            }
        }
    }
}

/// Kept bind groups hold their buffers: after the lists grow, those of the old buffers are
/// dropped within two frames, so the number kept does not grow with the frames.
#[test]
fn kept_bind_groups_follow_the_buffers_in_use() {
    use glam::Vec3;
    use sweepfan::{BroadPhase, Method, Sphere};
    let ctx = std::sync::Arc::new(
        sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap(),
    );
    let mut gpu = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), Method::Sap).unwrap();
    let mut most = 0;
    let mut steady = 0;
    for f in 0..24 {
        // Sizes that double every 4 frames: every list regrows, every bind group changes.
        let n = 1000usize << (f / 4).min(5);
        let spheres: Vec<Sphere> = (0..n)
            .map(|i| Sphere::new(Vec3::new(i as f32 * 0.5, 0.0, 0.0), 1.0))
            .collect();
        gpu.find_pairs(&spheres, None).unwrap();
        let kept = ctx.kept_bind_groups();
        if f == 3 {
            steady = kept;
        }
        most = most.max(kept);
    }
    assert!(steady > 0);
    // The groups of at most three frames' buffers (this one and the two before; a frame of
    // twice the spheres may use a few more groups: one more scan level).
    assert!(most <= 4 * steady, "{most} kept against {steady} a frame");
    // One-shot work outside frames keeps nothing: a sort of the caller's own keys.
    let fresh = sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap();
    let mut sort = sweepfan::gpu::RadixSort::new(&fresh).unwrap();
    let keys: Vec<u32> = (0..5000u32).rev().collect();
    let values: Vec<u32> = (0..5000).collect();
    let (sorted, _) = sort.sort_pairs(&fresh, &keys, &values).unwrap();
    assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(fresh.kept_bind_groups(), 0);
}

/// The spheres' upload goes through a staging buffer kept across frames (docs/design.md §9.16):
/// after the first two frames no buffer is made, yet every frame's spheres arrive (its pairs are
/// the CPU's on a scene that moves).
#[test]
fn uploads_reuse_one_staging_buffer_and_every_frame_arrives() {
    use sweepfan::{BroadPhase, Method, canonicalize};
    use sweepfan_scenes::{Scene, SceneKind, SceneParams};
    let ctx = std::sync::Arc::new(
        sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap(),
    );
    let mut gpu = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let mut cpu = sweepfan::cpu::broad_phase(Method::Grid);
    let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(4000, 3));
    for f in 0..8 {
        let before = ctx.counts();
        let mut got = Vec::new();
        gpu.find_pairs(&scene.spheres, Some(&mut got)).unwrap();
        let counts = ctx.counts().since(before);
        let mut expected = Vec::new();
        cpu.find_pairs(&scene.spheres, Some(&mut expected)).unwrap();
        canonicalize(&mut got);
        canonicalize(&mut expected);
        assert_eq!(got, expected, "frame {f}");
        // The first two frames size the lists (the second plans its readback from the first).
        if f > 1 {
            assert_eq!(counts.buffers, 0, "frame {f}: {counts:?}");
            assert!(counts.bytes_from_host >= 16 * 4000, "frame {f}: {counts:?}");
        }
        scene.step();
    }
    // Every frame through the kept buffer (the first made it, mapped at creation).
    assert_eq!(gpu.upload_counts(), (8, 0));
}

/// A context of its own (these tests count what it creates) and a scene's parameters at 10%
/// volume.
fn fresh_context_dense_scene(
    n: usize,
    seed: u64,
) -> (
    std::sync::Arc<sweepfan::gpu::GpuContext>,
    sweepfan_scenes::SceneParams,
) {
    let ctx = sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap();
    let mut p = sweepfan_scenes::SceneParams::new(n, seed);
    p.volume_fraction = 0.1;
    (std::sync::Arc::new(ctx), p)
}

/// A box frame whose broad phase is the sphere pipeline (a frame nested in the box frame) with
/// frame events (whose two lists alternate between frames, so their bind groups are used every
/// other frame) creates nothing once sizes are stable.
#[test]
fn nested_frames_and_alternating_lists_keep_their_bind_groups() {
    use sweepfan::Method;
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    use sweepfan_scenes::SceneKind;
    use sweepfan_scenes::boxes::generate_boxes;
    let (ctx, p) = fresh_context_dense_scene(1_500, 3);
    let boxes = generate_boxes(SceneKind::Density, &p);
    for proxy in [Proxy::Aabb, Proxy::Sphere(Method::Grid)] {
        let mut gpu = GpuBoxPipeline::new(ctx.clone(), proxy).unwrap();
        gpu.track_events(true).unwrap();
        for frame in 0..7 {
            let before = ctx.counts();
            let mut out = Vec::new();
            gpu.obb_overlaps(&boxes, Some(&mut out)).unwrap();
            let counts = ctx.counts().since(before);
            if frame > 2 {
                assert_eq!(counts.bind_groups, 0, "{proxy:?} frame {frame}: {counts:?}");
                assert_eq!(counts.buffers, 0, "{proxy:?} frame {frame}: {counts:?}");
            }
        }
    }
}

/// Box frames and polygon vertices and offsets go through staging buffers kept across frames,
/// as the spheres do: every frame's shapes arrive (the pairs are the CPU's on shapes that move)
/// and none goes through `queue.write_buffer`.
#[test]
fn box_and_polygon_uploads_reuse_kept_staging_buffers() {
    use glam::{Vec2, Vec3};
    use sweepfan::gpu::{GpuBoxPipeline, Proxy};
    use sweepfan::{Method, Pair, canonicalize};
    use sweepfan_scenes::SceneKind;
    use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
    let (ctx, p) = fresh_context_dense_scene(1_200, 5);
    let mut boxes = generate_boxes(SceneKind::Density, &p);
    let mut polygons = generate_polygons(SceneKind::Density, &p).unwrap();
    for proxy in [Proxy::Aabb, Proxy::Sphere(Method::Grid)] {
        let mut gpu = GpuBoxPipeline::new(ctx.clone(), proxy).unwrap();
        // The device's pairs equal the CPU's (both canonical); the CPU's.
        let same = |mut got: Vec<Pair>, mut want: Vec<Pair>, what: &str, frame: usize| {
            canonicalize(&mut got);
            canonicalize(&mut want);
            assert_eq!(got, want, "{proxy:?} {what}, frame {frame}");
            want
        };
        for frame in 0..6 {
            let mut got = Vec::new();
            gpu.obb_overlaps(&boxes, Some(&mut got)).unwrap();
            let (want, _) = sweepfan::cpu::sat::obb_overlaps(&boxes).unwrap();
            same(got, want, "boxes", frame);
            let mut got = Vec::new();
            gpu.polygon_overlaps(&polygons, Some(&mut got)).unwrap();
            let (want, _) = sweepfan::cpu::sat::polygon_overlaps(&polygons).unwrap();
            assert!(!same(got, want, "polygons", frame).is_empty());
            // Move every shape: a frame that kept the last one's bytes would differ.
            for (i, b) in boxes.iter_mut().enumerate() {
                b.center += Vec3::new(0.05, -0.03, 0.02) * ((i % 5) as f32 - 2.0);
            }
            for (i, poly) in polygons.iter_mut().enumerate() {
                let shift = Vec2::new(0.04, -0.02) * ((i % 3) as f32 - 1.0);
                let moved: Vec<Vec2> = poly.vertices().iter().map(|v| *v + shift).collect();
                *poly = sweepfan::geom::polygon::Polygon::new(&moved).unwrap();
            }
        }
        // Frames, then vertices and offsets, six frames each, all through the kept buffers.
        assert_eq!(gpu.upload_counts(), (18, 0), "{proxy:?}");
    }
}

/// The SAT of host candidates (`GpuSat` alone) uploads shapes, candidates and their count
/// through staging buffers kept across calls: every call's bytes arrive (the pairs are the
/// CPU's on shapes that move) and none goes through `queue.write_buffer`.
#[test]
fn host_fed_sat_uploads_reuse_kept_staging_buffers() {
    use glam::{Vec2, Vec3};
    use sweepfan::canonicalize;
    use sweepfan::cpu::aabb_sweep;
    use sweepfan::geom::obb::Obb;
    use sweepfan::geom::polygon::{PolygonSet, polygon_aabbs};
    use sweepfan::gpu::GpuSat;
    use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
    use sweepfan_scenes::{SceneKind, SceneParams};
    let ctx = sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap();
    let mut p = SceneParams::new(1_200, 7);
    p.volume_fraction = 0.1;
    let mut boxes = generate_boxes(SceneKind::Density, &p);
    let mut polygons = generate_polygons(SceneKind::Density, &p).unwrap();
    let mut sat = GpuSat::new(&ctx).unwrap();
    let same = |mut want: Vec<sweepfan::Pair>, mut got: Vec<sweepfan::Pair>, what: &str| {
        canonicalize(&mut want);
        canonicalize(&mut got);
        assert!(!want.is_empty());
        assert_eq!(got, want, "{what}");
    };
    for call in 0..5 {
        let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
        let mut candidates = Vec::new();
        aabb_sweep(&aabbs, &mut candidates).unwrap();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        sweepfan::cpu::sat::obb_pairs(&boxes, &candidates, &mut want).unwrap();
        sat.obb_pairs(&ctx, &boxes, &candidates, Some(&mut got))
            .unwrap();
        same(want, got, &format!("boxes, call {call}"));
        let set = PolygonSet::new(&polygons).unwrap();
        let mut candidates = Vec::new();
        aabb_sweep(&polygon_aabbs(&polygons), &mut candidates).unwrap();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        sweepfan::cpu::sat::polygon_pairs(&polygons, &candidates, &mut want).unwrap();
        sat.polygon_pairs(&ctx, &set, &candidates, Some(&mut got))
            .unwrap();
        same(want, got, &format!("polygons, call {call}"));
        for (i, b) in boxes.iter_mut().enumerate() {
            b.center += Vec3::new(0.05, -0.03, 0.02) * ((i % 5) as f32 - 2.0);
        }
        for (i, poly) in polygons.iter_mut().enumerate() {
            let shift = Vec2::new(0.04, -0.02) * ((i % 3) as f32 - 1.0);
            let moved: Vec<Vec2> = poly.vertices().iter().map(|v| *v + shift).collect();
            *poly = sweepfan::geom::polygon::Polygon::new(&moved).unwrap();
        }
    }
    // Per call of 5: boxes (frames, candidates, count) and polygons (vertices, offsets,
    // candidates, count).
    assert_eq!(sat.upload_counts(), (5 * 7, 0));
}
