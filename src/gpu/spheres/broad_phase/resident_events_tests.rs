//! Resident frames' events (docs/design.md §10) against the pairs of each frame counted here
//! by brute force: after a frame whose pair list was cut short, and after frames in parts
//! (whose events live on the host).

use super::GpuBroadPhase;
use crate::broadphase::{BroadPhase, Method, Pair};
use crate::events::EventTracker;
use crate::geom::sphere::Sphere;
use crate::gpu::context::{GpuContext, GpuOptions, test_gpu};
use std::sync::Arc;

/// `n` spheres of radius `r` in a cube of side `side` (a fixed walk of `seed`).
fn spheres(seed: u64, n: usize, side: f32, r: f32) -> Vec<Sphere> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 * side
    };
    (0..n)
        .map(|_| Sphere::new([next(), next(), next()].into(), r))
        .collect()
}

/// The touching pairs, canonical, by testing every pair.
fn brute_force(spheres: &[Sphere]) -> Vec<Pair> {
    let mut out = Vec::new();
    crate::partition::tests::brute(spheres, &mut out);
    out
}

/// A context whose bindings hold 64 KiB (6,000 spheres run in parts), where a GPU is.
fn small_binding_gpu() -> Option<Arc<GpuContext>> {
    test_gpu()?;
    let options = GpuOptions {
        max_binding_bytes: Some(1 << 16),
        ..Default::default()
    };
    Some(Arc::new(GpuContext::new(&options).unwrap()))
}

/// `scene` in a buffer of the caller's.
fn upload(ctx: &GpuContext, scene: &[Sphere]) -> wgpu::Buffer {
    // The caller's own buffer, made outside the context (which does not count it).
    let buffer = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("caller's spheres"),
        size: scene.len() as u64 * 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    buffer
        .slice(..)
        .get_mapped_range_mut()
        .unwrap()
        .copy_from_slice(bytemuck::cast_slice(scene));
    buffer.unmap();
    buffer
}

/// A resident frame of `scene` through a buffer of the caller's: Ok(found, lost) read from the
/// device, or the error of the frame or of its check.
fn resident_frame(
    ctx: &GpuContext,
    bp: &mut GpuBroadPhase,
    scene: &[Sphere],
) -> crate::Result<(Vec<Pair>, Vec<Pair>)> {
    let buffer = upload(ctx, scene);
    let enc = bp.encode_from_buffer(&buffer, scene.len() as u32)?;
    ctx.queue.submit([enc.finish()]);
    bp.check_resident()?;
    let (found, lost, found_count, lost_count) = bp.resident_events().unwrap().buffers();
    let read = |list: Option<&wgpu::Buffer>, count: &wgpu::Buffer| {
        let k = ctx.read::<u32>(count, 1).unwrap()[0] as usize;
        match (k, list) {
            (0, _) => Vec::new(),
            (k, Some(list)) => ctx.read::<Pair>(list, k).unwrap(),
            (_, None) => panic!("a count without a list"),
        }
    };
    Ok((read(found, found_count), read(lost, lost_count)))
}

/// A frame whose list is cut short is reported; its list stops being the previous frame's: the
/// same frame recorded again after the list grew, or the next one, compares with the frame
/// before it (the cut list was the previous one: 2,950 pairs found again, a pair that touched
/// before among them).
#[test]
fn a_frame_cut_short_leaves_the_events_with_the_whole_frame_before_it() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let sparse = spheres(1, 100, 20.0, 0.5);
    let one_point = vec![Sphere::new([1.0, 1.0, 1.0].into(), 1.0); 100];
    let next = spheres(2, 100, 2.0, 0.5);
    // Recorded again after the list grew, the list grown before the check, or the next frame.
    for (again, grow_first) in [(true, false), (true, true), (false, false)] {
        let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Sap).unwrap();
        bp.track_events(true).unwrap();
        bp.set_pair_capacity(2_000).unwrap();
        let mut tracker = EventTracker::new();
        let want = tracker.update(brute_force(&sparse));
        let got = resident_frame(&ctx, &mut bp, &sparse).unwrap();
        assert_eq!(got, (want.found, want.lost));
        let cut = if grow_first {
            let buffer = upload(&ctx, &one_point);
            let enc = bp.encode_from_buffer(&buffer, 100).unwrap();
            ctx.queue.submit([enc.finish()]);
            bp.grow_pair_list(4_950).unwrap();
            bp.check_resident().unwrap_err()
        } else {
            resident_frame(&ctx, &mut bp, &one_point).unwrap_err()
        };
        assert!(cut.to_string().contains("frame before it"), "{cut}");
        let then = if again {
            if !grow_first {
                bp.grow_pair_list(4_950).unwrap();
            }
            &one_point
        } else {
            &next
        };
        let want = tracker.update(brute_force(then));
        let got = resident_frame(&ctx, &mut bp, then).unwrap();
        assert_eq!(
            got,
            (want.found, want.lost),
            "again: {again}, grown first: {grow_first}"
        );
    }
}

/// Frames in parts keep their events on the host; a resident frame between them continues
/// from the host's last list, and the frame in parts after it from the resident one's (each
/// compared with the frame before it, 1,045 found against 360 before).
#[test]
fn resident_frames_between_frames_in_parts_compare_with_the_frame_before() {
    let Some(ctx) = small_binding_gpu() else {
        return;
    };
    let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    bp.track_events(true).unwrap();
    bp.set_pair_capacity(5_000).unwrap();
    let mut tracker = EventTracker::new();
    // 6,000 spheres pass the 64 KiB binding: from then on the host frames run in parts.
    // An empty frame in parts after a resident one loses the resident frame's pairs.
    let frames: [(u64, usize, bool); 9] = [
        (1, 100, true),
        (2, 6_000, true),
        (3, 100, true),
        (4, 100, false),
        (5, 100, false),
        (6, 100, true),
        (7, 100, false),
        (8, 0, true),
        (9, 100, true),
    ];
    for (seed, n, host) in frames {
        let side = if n > 100 { 40.0 } else { 2.0 };
        let scene = spheres(seed, n, side, 0.5);
        let want = tracker.update(brute_force(&scene));
        let got = if host {
            let mut pairs = Vec::new();
            bp.find_pairs(&scene, Some(&mut pairs)).unwrap();
            let events = bp.take_events().unwrap();
            (events.found, events.lost)
        } else {
            resident_frame(&ctx, &mut bp, &scene).unwrap()
        };
        assert_eq!(got, (want.found, want.lost), "frame {seed} (host: {host})");
    }
    assert!(bp.in_parts(), "the frames did not run in parts");
}

/// A resident frame of `scene` cut short (a list of 4 slots), submitted and not checked.
fn cut_short_resident_frame(ctx: &GpuContext, bp: &mut GpuBroadPhase, scene: &[Sphere]) {
    bp.set_pair_capacity(4).unwrap();
    let buffer = upload(ctx, scene);
    let enc = bp.encode_from_buffer(&buffer, scene.len() as u32).unwrap();
    ctx.queue.submit([enc.finish()]);
}

/// A host frame after a resident frame cut short and not yet checked checks it first, as
/// `check_resident` would: its events compare with the whole frame before the cut one, and the
/// next `check_resident` reports the cut frame. The host frame's own growth of its list
/// cleared the count of lists cut short: the check then said Ok, and the host frame compared
/// with the 4 pairs kept (found 2,699 and lost 3 where 2,655 and 99 were new and gone).
#[test]
fn a_host_frame_after_a_resident_frame_cut_short_compares_with_a_whole_frame() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let sparse = spheres(11, 100, 5.0, 0.5);
    let dense = spheres(12, 100, 2.0, 0.5);
    let denser = spheres(13, 400, 3.0, 0.5);
    let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    bp.track_events(true).unwrap();
    let mut tracker = EventTracker::new();
    let want = tracker.update(brute_force(&sparse));
    assert_eq!(
        resident_frame(&ctx, &mut bp, &sparse).unwrap(),
        (want.found, want.lost)
    );
    cut_short_resident_frame(&ctx, &mut bp, &dense);
    let want = tracker.update(brute_force(&denser));
    assert!(
        want.lost.len() > 10,
        "the frame before the cut one had pairs"
    );
    let mut pairs = Vec::new();
    bp.find_pairs(&denser, Some(&mut pairs)).unwrap();
    assert_eq!(pairs, brute_force(&denser));
    let events = bp.take_events().unwrap();
    assert_eq!((events.found, events.lost), (want.found, want.lost));
    // A second frame cut short and a host frame after it: each refusal reported once, in
    // order (the second was dropped while the first waited).
    cut_short_resident_frame(&ctx, &mut bp, &dense);
    bp.find_pairs(&sparse, Some(&mut pairs)).unwrap();
    for k in 0..2 {
        let cut = bp.check_resident().unwrap_err();
        assert!(cut.to_string().contains("slots"), "refusal {k}: {cut}");
    }
    bp.check_resident().unwrap();
}

/// Without events, a frame in flight or one from `encode_resident` after a resident frame cut
/// short checks it first too (each clears the count the check reads): the next
/// `check_resident` reports the cut frame, not Ok.
#[test]
fn frames_in_flight_and_encoded_after_a_resident_frame_cut_short_leave_it_reported() {
    let Some(gpu) = test_gpu() else { return };
    let ctx = Arc::new(gpu);
    for encoded in [false, true] {
        let (dense, denser) = (spheres(12, 100, 2.0, 0.5), spheres(13, 400, 3.0, 0.5));
        let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
        cut_short_resident_frame(&ctx, &mut bp, &dense);
        bp.set_pair_capacity(1 << 16).unwrap();
        if encoded {
            let enc = bp.encode_resident(&denser).unwrap();
            ctx.queue.submit([enc.finish()]);
        } else {
            let frame = bp.submit_frame(&denser, true).unwrap();
            assert!(frame.in_flight());
            let mut pairs = Vec::new();
            bp.finish_frame(frame, Some(&mut pairs)).unwrap();
            assert_eq!(pairs, brute_force(&denser));
        }
        let cut = bp.check_resident().unwrap_err();
        assert!(
            cut.to_string().contains("slots"),
            "encoded: {encoded}: {cut}"
        );
        bp.check_resident().unwrap();
    }
}

/// Frames in parts (a 64 KiB binding) under a pair limit: a count alone is never limited, and a
/// stored frame past the limit fails with `TooLarge` naming the frame's exact count (each part
/// met the limit itself: the count was refused, and the error named one part's pairs inside a
/// context).
#[test]
fn frames_in_parts_count_past_the_pair_limit_and_name_the_whole_count() {
    let Some(ctx) = small_binding_gpu() else {
        return;
    };
    let scene = spheres(21, 6_000, 40.0, 0.6);
    let total = brute_force(&scene).len() as u64;
    assert!(total > 1_000, "{total}");
    let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    bp.set_pair_limit(100);
    assert_eq!(bp.find_pairs(&scene, None).unwrap().pairs, total);
    assert!(bp.in_parts(), "the frames did not run in parts");
    let frame = bp.submit_frame(&scene, false).unwrap();
    assert_eq!(bp.finish_frame(frame, None).unwrap().pairs, total);
    let mut pairs = vec![[0, 1]];
    match bp.find_pairs(&scene, Some(&mut pairs)) {
        Err(crate::Error::TooLarge { message, .. }) => {
            assert!(
                message.starts_with(&format!("{total} touching pairs")),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(pairs.is_empty());
    bp.set_pair_limit(total);
    bp.find_pairs(&scene, Some(&mut pairs)).unwrap();
    assert_eq!(pairs, brute_force(&scene));
}
