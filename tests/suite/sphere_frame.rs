//! `BroadPhase::update_into` and `SphereFrame` (src/broadphase/frame.rs): a frame loop's pairs
//! and events in the caller's vectors, on every CPU method, `auto` and the GPU, against an
//! oracle of all-pairs tests and set differences; the vectors' memory reused; a failed frame
//! leaving the last good one; an empty frame losing every pair.

use crate::common::{oracle_pairs, shared_gpu};
use glam::Vec3;
use std::collections::BTreeSet;
use sweepfan::{BroadPhase, Error, GpuBroadPhase, Method, Pair, Sphere, SphereFrame, cpu};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Twelve frames of a moving paper scene: each frame's pairs equal the oracle's, and its events
/// the differences of the oracle's sets.
fn frames_agree_with_the_oracle(broad: &mut dyn BroadPhase, what: &str) {
    let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(400, 9));
    let mut frame = SphereFrame::new();
    let mut before: BTreeSet<Pair> = BTreeSet::new();
    for step in 0..12 {
        broad.update_into(&scene.spheres, &mut frame).unwrap();
        let expected = oracle_pairs(&scene.spheres);
        assert_eq!(frame.pairs, expected, "{what}, frame {step}");
        let now: BTreeSet<Pair> = expected.into_iter().collect();
        let found: Vec<Pair> = now.difference(&before).copied().collect();
        let lost: Vec<Pair> = before.difference(&now).copied().collect();
        assert_eq!(frame.found, found, "{what}, frame {step}");
        assert_eq!(frame.lost, lost, "{what}, frame {step}");
        assert_eq!(
            frame.persisting as usize,
            now.intersection(&before).count(),
            "{what}, frame {step}"
        );
        assert_eq!(frame.frames(), step + 1);
        assert_eq!(
            frame.stats.pairs as usize,
            now.len(),
            "{what}, frame {step}"
        );
        before = now;
        scene.step();
    }
}

#[test]
fn every_method_fills_the_callers_frame_as_the_oracle_says() {
    for method in std::iter::once(Method::Auto).chain(Method::ALL) {
        frames_agree_with_the_oracle(&mut *cpu::broad_phase(method), method.name());
    }
    let Some(ctx) = shared_gpu() else { return };
    for method in [Method::Grid, Method::Sap] {
        let mut gpu = GpuBroadPhase::new(ctx.clone(), method).unwrap();
        frames_agree_with_the_oracle(&mut gpu, &format!("gpu {}", method.name()));
    }
}

/// Frame after frame of the same scene, the lists stay in their allocations: `pairs` and the
/// list kept aside alternate between the same two buffers, `found` and `lost` keep theirs.
#[test]
fn a_frame_loop_reuses_the_frames_vectors() {
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(2_000, 3));
    let mut broad = cpu::broad_phase(Method::Grid);
    let mut frame = SphereFrame::new();
    frame.lost.reserve(1);
    let lost = frame.lost.as_ptr();
    let (mut lists, mut founds) = (Vec::new(), Vec::new());
    for _ in 0..6 {
        broad.update_into(&scene.spheres, &mut frame).unwrap();
        lists.push(frame.pairs.as_ptr());
        founds.push(frame.found.as_ptr());
    }
    assert!(frame.pairs.len() > 100, "{} pairs", frame.pairs.len());
    // The first frame's pairs are all found (`found` grew once); later frames find none and
    // keep that allocation, and `lost`, never growing, keeps the caller's.
    assert!(frame.found.is_empty() && frame.lost.is_empty());
    assert!(founds.iter().all(|&f| f == founds[0]), "{founds:?}");
    assert_eq!(frame.lost.as_ptr(), lost);
    // Two buffers, alternating, once both have grown (frames 1 and 2).
    assert_eq!(lists[3], lists[1], "{lists:?}");
    assert_eq!(lists[4], lists[2], "{lists:?}");
    assert_eq!(lists[5], lists[3], "{lists:?}");
    assert_ne!(lists[4], lists[5]);
}

/// A frame that fails keeps the last good frame's pairs and reports no events; the next good
/// frame's events are against the last good one. An empty scene loses every pair.
#[test]
fn a_failed_frame_keeps_the_last_good_one_and_an_empty_one_loses_all() {
    let touching = |x: f32| Sphere::new(Vec3::new(x, 0.0, 0.0), 1.0);
    let first = vec![touching(0.0), touching(1.5), touching(10.0)];
    let mut broad = cpu::broad_phase(Method::Sap);
    let mut frame = SphereFrame::new();
    broad.update_into(&first, &mut frame).unwrap();
    assert_eq!(frame.pairs, [[0, 1]]);

    let mut bad = first.clone();
    bad[2].center.y = f32::NAN;
    let e = broad.update_into(&bad, &mut frame).unwrap_err();
    assert!(matches!(e, Error::InvalidObject { index: 2, .. }), "{e}");
    assert_eq!(frame.pairs, [[0, 1]]);
    assert!(frame.found.is_empty() && frame.lost.is_empty() && frame.persisting == 0);
    assert_eq!(frame.frames(), 1);

    let second = vec![touching(0.0), touching(5.0), touching(6.5)];
    broad.update_into(&second, &mut frame).unwrap();
    assert_eq!(
        (frame.found.as_slice(), frame.lost.as_slice()),
        (&[[1, 2]][..], &[[0, 1]][..])
    );

    broad.update_into(&[], &mut frame).unwrap();
    assert!(frame.pairs.is_empty() && frame.found.is_empty());
    assert_eq!(frame.lost, [[1, 2]]);

    frame.reset();
    broad.update_into(&second, &mut frame).unwrap();
    assert_eq!((frame.found.as_slice(), frame.frames()), (&[[1, 2]][..], 1));
}
