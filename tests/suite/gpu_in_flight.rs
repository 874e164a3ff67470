//! Frames in flight (`GpuBroadPhase::submit_frame` / `finish_frame`, docs/design.md §9.16):
//! each frame's pairs and tests equal the oracles' for that frame's scene while later frames
//! are queued behind it, whatever the order they finish in; a list that overflowed, or grew past
//! what its readback planned while a later frame reused the list, still comes back whole; a
//! frame past the limit of frames in flight runs whole at its finish.

use crate::common::{oracle_pairs, oracle_tests, shared_gpu};
use glam::Vec3;
use sweepfan::gpu::{GpuBroadPhase, MAX_IN_FLIGHT, SubmittedFrame};
use sweepfan::{BroadPhase, Method, Sphere};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn scene(kind: SceneKind, n: usize, seed: u64) -> Vec<Sphere> {
    Scene::generate(kind, &SceneParams::new(n, seed)).spheres
}

/// Finishes `frame` and checks its pairs and tests against the oracles on `spheres`.
fn finish(bp: &mut GpuBroadPhase, frame: SubmittedFrame<'_>, spheres: &[Sphere], what: &str) {
    let m = bp.method();
    let want = oracle_pairs(spheres);
    // The caller's vector, left holding junk and room for the pairs: filled in place, in
    // canonical order as find_pairs gives them (they came unsorted, in a new vector).
    let mut pairs = Vec::with_capacity(want.len() + 16);
    pairs.extend([[9, 9]; 5]);
    let at = pairs.as_ptr();
    let stats = bp
        .finish_frame(frame, Some(&mut pairs))
        .unwrap_or_else(|e| panic!("{m}, {what}: {e}"));
    assert_eq!(
        pairs.as_ptr(),
        at,
        "{m}, {what}: the caller's vector was replaced"
    );
    assert!(
        pairs == want,
        "{m}, {what}: {} pairs, brute force {}",
        pairs.len(),
        want.len()
    );
    assert_eq!(stats.pairs, want.len() as u64, "{m}, {what}");
    assert_eq!(stats.tests, oracle_tests(m, spheres), "{m}, {what}: tests");
}

#[test]
fn frames_in_flight_give_each_frame_its_own_pairs() {
    let Some(ctx) = shared_gpu() else { return };
    let a = scene(SceneKind::Paper, 1500, 71);
    let b = scene(SceneKind::Clusters, 1200, 72);
    let c = scene(SceneKind::MixedRadii, 900, 73);
    for m in Method::ALL {
        let bp = &mut GpuBroadPhase::new(ctx.clone(), m).unwrap();
        let fa = bp.submit_frame(&a, true).unwrap();
        let fb = bp.submit_frame(&b, true).unwrap();
        assert!(fa.in_flight() && fb.in_flight(), "{m}");
        assert_eq!(bp.frames_in_flight(), MAX_IN_FLIGHT, "{m}");
        // Past the limit: queued nowhere, run whole at its finish.
        let fc = bp.submit_frame(&c, true).unwrap();
        assert!(!fc.in_flight(), "{m}");
        // Out of order: the second frame first, the third (run whole) between.
        finish(bp, fb, &b, "second frame, finished first");
        finish(bp, fc, &c, "third frame, run whole");
        finish(bp, fa, &a, "first frame, finished last");
        assert_eq!(bp.frames_in_flight(), 0, "{m}");
        // Count only: the totals alone.
        let fa = bp.submit_frame(&a, false).unwrap();
        let fb = bp.submit_frame(&b, false).unwrap();
        let sb = bp.finish_frame(fb, None).unwrap();
        let sa = bp.finish_frame(fa, None).unwrap();
        assert_eq!(sa.pairs, oracle_pairs(&a).len() as u64, "{m}");
        assert_eq!(sb.pairs, oracle_pairs(&b).len() as u64, "{m}");
    }
}

/// The pair list is shared by the frames in flight: one whose list overflowed, or outgrew the
/// pairs its readback copied before a later frame overwrote the list, runs again at its finish.
#[test]
fn a_list_that_outgrew_its_readback_runs_again() {
    let Some(ctx) = shared_gpu() else { return };
    let few = scene(SceneKind::Paper, 800, 81);
    // 120 spheres at one point: 7,140 pairs, past what a frame after `few` plans to copy
    // (its count, a quarter more and 1,024).
    let many = vec![Sphere::new(Vec3::new(1.0, 2.0, 3.0), 0.5); 120];
    assert!(oracle_pairs(&many).len() > oracle_pairs(&few).len() * 5 / 4 + 1024);
    for m in [Method::Grid, Method::Sap, Method::BruteForce] {
        let bp = &mut GpuBroadPhase::new(ctx.clone(), m).unwrap();
        let mut pairs = Vec::new();
        bp.find_pairs(&few, Some(&mut pairs)).unwrap();
        let fm = bp.submit_frame(&many, true).unwrap();
        let ff = bp.submit_frame(&few, true).unwrap();
        assert!(fm.in_flight() && ff.in_flight(), "{m}");
        finish(bp, fm, &many, "many pairs, then a frame reusing the list");
        finish(bp, ff, &few, "the frame after");
        // Both frames overflow a list of one pair.
        bp.set_pair_capacity(1).unwrap();
        let ff = bp.submit_frame(&few, true).unwrap();
        let fm = bp.submit_frame(&many, true).unwrap();
        finish(bp, ff, &few, "overflowed, first");
        finish(bp, fm, &many, "overflowed, second");
        assert!(
            bp.pair_capacity() >= oracle_pairs(&many).len() as u64,
            "{m}"
        );
    }
}

/// A frame in flight whose pairs outgrow what one binding holds runs in parts at its finish,
/// as `find_pairs` runs it (it refused the frame as too large: `bench --in-flight` failed
/// where the same frame without it ran in 6 parts). At the smallest binding cap, 200 spheres at
/// one point touch in 19,900 pairs, past the list's 8,192.
#[test]
fn a_frame_in_flight_past_a_binding_of_pairs_runs_in_parts() {
    use sweepfan::gpu::MIN_BINDING_CAP;
    let Some(ctx) = crate::common::gpu_at_the_smallest_binding_cap() else {
        return;
    };
    let one_point = vec![Sphere::new(Vec3::new(1.0, 2.0, 3.0), 0.5); 200];
    let few = scene(SceneKind::Paper, 300, 82);
    assert!(oracle_pairs(&one_point).len() as u64 > MIN_BINDING_CAP / 8);
    for m in [Method::Grid, Method::Sap] {
        let bp = &mut GpuBroadPhase::new(ctx.clone(), m).unwrap();
        let ff = bp.submit_frame(&few, true).unwrap();
        let fm = bp.submit_frame(&one_point, true).unwrap();
        let after = bp.submit_frame(&few, true).unwrap();
        finish(bp, ff, &few, "before the frame past a binding");
        // Its tests are the parts' (a part's ghosts with ghosts too), and the frame after it
        // runs in parts of the size it learned: their pairs are checked.
        for (frame, spheres) in [(fm, &one_point), (after, &few)] {
            let want = oracle_pairs(spheres);
            let mut pairs = Vec::with_capacity(want.len());
            let at = pairs.as_ptr();
            let stats = bp.finish_frame(frame, Some(&mut pairs)).unwrap();
            assert!(
                pairs == want,
                "{m}: {} pairs, brute force {}",
                pairs.len(),
                want.len()
            );
            assert_eq!(
                (stats.pairs, pairs.as_ptr()),
                (want.len() as u64, at),
                "{m}"
            );
        }
    }
}

/// A submission waits for nothing, a finish once (the first frames of a stream too); the
/// spheres go up once (16 bytes each).
#[test]
fn a_frame_in_flight_waits_once_and_uploads_once() {
    // A context of its own (`shared_gpu` makes one a call): the counts are per device.
    let Some(own) = shared_gpu() else { return };
    let a = scene(SceneKind::Paper, 2000, 91);
    let b = scene(SceneKind::Paper, 2000, 92);
    let bp = &mut GpuBroadPhase::new(own.clone(), Method::Grid).unwrap();
    // A stream's first two frames, submitted before any count is known, read their lists
    // whole: 7,140 pairs each, past a plan by counts (1,024), and no frame runs again.
    let dense = vec![Sphere::new(Vec3::new(1.0, 2.0, 3.0), 0.5); 120];
    let before = own.counts();
    let (f1, f2) = (
        bp.submit_frame(&dense, true).unwrap(),
        bp.submit_frame(&dense, true).unwrap(),
    );
    finish(bp, f1, &dense, "first of a stream");
    finish(bp, f2, &dense, "second of a stream");
    assert_eq!(
        own.counts().since(before).host_waits,
        2,
        "a frame ran again"
    );
    // Warm-up: buffers and lists sized.
    for _ in 0..2 {
        let (fa, fb) = (
            bp.submit_frame(&a, true).unwrap(),
            bp.submit_frame(&b, true).unwrap(),
        );
        finish(bp, fa, &a, "warm-up");
        finish(bp, fb, &b, "warm-up");
    }
    let before = own.counts();
    let fa = bp.submit_frame(&a, true).unwrap();
    let fb = bp.submit_frame(&b, true).unwrap();
    let submitted = own.counts().since(before);
    assert_eq!(submitted.host_waits, 0, "a submission waits for nothing");
    // The spheres, and the frames' parameters (under 4 KiB a frame, as `host_copies` allows).
    let scene_bytes = 16 * 4000;
    assert!(
        (scene_bytes..=scene_bytes + 2 * 4096).contains(&submitted.bytes_from_host),
        "each sphere up once: {submitted:?}"
    );
    finish(bp, fa, &a, "first");
    finish(bp, fb, &b, "second");
    assert_eq!(own.counts().since(before).host_waits, 2);
}

/// Bad input is the submission's error; a frame finished twice, or on another broad phase,
/// is an error, not another frame's pairs.
#[test]
fn frames_in_flight_refuse_bad_input_and_foreign_frames() {
    let Some(ctx) = shared_gpu() else { return };
    let mut bp = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let mut other = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    // An empty frame has no pairs, as in find_pairs; the caller's list is emptied.
    let empty = bp.submit_frame(&[], true).unwrap();
    let mut left = vec![[1, 2]];
    let stats = bp.finish_frame(empty, Some(&mut left)).unwrap();
    assert_eq!((stats.pairs, left.len()), (0, 0));
    let bad = [Sphere::new(Vec3::new(f32::NAN, 0.0, 0.0), 1.0)];
    assert!(bp.submit_frame(&bad, true).is_err());
    let a = scene(SceneKind::Paper, 500, 95);
    let fa = bp.submit_frame(&a, true).unwrap();
    let err = other.finish_frame(fa, None).unwrap_err();
    assert!(err.to_string().contains("another broad phase"), "{err}");
    assert_eq!(bp.frames_in_flight(), 1);
    // That frame is still queued on `bp`: its later frames are unaffected.
    let fb = bp.submit_frame(&a, true).unwrap();
    finish(&mut bp, fb, &a, "after a foreign finish");
    // A capacity past any binding is the binding's error (it overflowed the byte count).
    assert!(bp.set_pair_capacity(u64::MAX).is_err());
    // A frame submitted to count only leaves the caller's list empty, not last frame's.
    let fc = bp.submit_frame(&a, false).unwrap();
    let mut last = vec![[1, 2]];
    bp.finish_frame(fc, Some(&mut last)).unwrap();
    assert!(last.is_empty());
    // A frame that runs whole at its finish (events tracked) is refused on another broad phase
    // too (it ran there, as that one's frame), and finishes on its own.
    bp.track_events(true).unwrap();
    let fw = bp.submit_frame(&a, true).unwrap();
    assert!(!fw.in_flight());
    let mut pairs = vec![[1, 2]];
    let err = other.finish_frame(fw, Some(&mut pairs)).unwrap_err();
    assert!(err.to_string().contains("another broad phase"), "{err}");
    assert!(pairs.is_empty());
    let fw = bp.submit_frame(&a, true).unwrap();
    finish(&mut bp, fw, &a, "whole at its finish");
}

/// Frames the caller drops unfinished (a `?` between submit and finish) give their slots back
/// at the next submission: later frames still fly.
#[test]
fn dropped_frames_do_not_keep_later_ones_from_flight() {
    let Some(ctx) = shared_gpu() else { return };
    let mut bp = GpuBroadPhase::new(ctx, Method::Grid).unwrap();
    let a = scene(SceneKind::Paper, 500, 96);
    for _ in 0..MAX_IN_FLIGHT {
        let dropped = bp.submit_frame(&a, true).unwrap();
        assert!(dropped.in_flight());
        drop(dropped);
    }
    let fa = bp.submit_frame(&a, true).unwrap();
    assert!(fa.in_flight(), "dropped frames held every slot");
    assert_eq!(bp.frames_in_flight(), 1);
    finish(&mut bp, fa, &a, "after dropped frames");
}
