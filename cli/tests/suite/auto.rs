//! `auto` (docs/design.md §2.12): on every scene kind, CPU and GPU, its pairs are brute force's,
//! its tests those of the method it names, and it says what it chose; it chooses again when the
//! scene's size changes, switches after the frame of a new choice while the backend tracks
//! events (each frame's events exact), and the CLI's rows
//! and `verify` carry it.

use crate::common::shared_gpu;
use crate::common::{bench_run, oracle_pairs, oracle_tests, succeed, temp_dir, verify};
use glam::Vec3;
use sweepfan::broadphase::auto::{Auto, choose};
use sweepfan::{Backend, BroadPhase, EventTracker, Method, Pair, Sphere, canonicalize, cpu};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Generated scenes of every kind, small enough for the O(n^2) oracles, plus the adversarial
/// ones: every sphere at one point, and touching spheres on a line.
fn scenes() -> Vec<(String, Vec<Sphere>)> {
    let mut out: Vec<(String, Vec<Sphere>)> = SceneKind::ALL
        .into_iter()
        .map(|k| {
            let s = Scene::generate(k, &SceneParams::new(1_500, 7));
            (k.name().to_string(), s.spheres)
        })
        .collect();
    out.push(("coincident".into(), vec![Sphere::new(Vec3::ONE, 0.25); 300]));
    out.push((
        "touching line".into(),
        (0..400)
            .map(|i| Sphere::new(Vec3::new(i as f32, 0.0, 0.0), 0.5))
            .collect(),
    ));
    out
}

/// One frame of `bp`: canonical pairs and stats.
fn frame(bp: &mut dyn BroadPhase, spheres: &[Sphere]) -> (Vec<Pair>, sweepfan::Stats) {
    let mut pairs = Vec::new();
    let stats = bp.find_pairs(spheres, Some(&mut pairs)).unwrap();
    canonicalize(&mut pairs);
    (pairs, stats)
}

#[test]
fn cpu_auto_finds_brute_forces_pairs_with_its_methods_tests() {
    let mut chosen = std::collections::BTreeSet::new();
    for (name, spheres) in scenes() {
        let mut bp = cpu::auto();
        assert_eq!(bp.name(), "auto");
        let (pairs, stats) = frame(&mut bp, &spheres);
        assert_eq!(pairs, oracle_pairs(&spheres), "{name}");
        let choice = stats.chosen.expect("auto reports its choice");
        assert_eq!(choice, choose(&spheres, Backend::Cpu, false), "{name}");
        assert_eq!(stats.tests, oracle_tests(choice.method, &spheres), "{name}");
        assert!(!choice.reason.is_empty());
        chosen.insert(choice.method);
    }
    // The scenes make it choose more than one method (else the rule is untested here).
    assert!(chosen.len() >= 2, "{chosen:?}");
}

#[test]
fn named_methods_report_no_choice() {
    let spheres = &scenes()[0].1;
    let (_, stats) = frame(cpu::broad_phase(Method::Grid).as_mut(), spheres);
    assert_eq!(stats.chosen, None);
}

#[test]
fn auto_chooses_again_when_the_size_changes_or_after_a_while() {
    let uniform = Scene::generate(SceneKind::Paper, &SceneParams::new(2_000, 3)).spheres;
    let point = vec![Sphere::new(Vec3::ZERO, 1.0); 2_000];
    let smaller_point = vec![Sphere::new(Vec3::ZERO, 1.0); 1_998];
    // Priced as a software adapter (where every pair touching makes brute force cheapest),
    // running the CPU's methods: the rule, not the backend, is under test here.
    assert_eq!(choose(&uniform, Backend::Gpu, true).method, Method::Grid);
    let other = choose(&point, Backend::Gpu, true).method;
    assert_ne!(other, Method::Grid);
    let mut bp = Auto::new(Backend::Gpu, true, Box::new(|m| Ok(cpu::broad_phase(m))));
    let method = |bp: &mut Auto, s: &[Sphere]| frame(bp, s).1.chosen.unwrap().method;
    assert_eq!(method(&mut bp, &uniform), Method::Grid);
    // Same size: the choice stands (pairs still exact) for a frame whose tests stay near the
    // survey's estimate, until RECHOOSE_EVERY frames have run.
    let moved: Vec<Sphere> = uniform
        .iter()
        .map(|s| Sphere::new(s.center * 1.01, s.radius))
        .collect();
    for _ in 1..sweepfan::broadphase::auto::RECHOOSE_EVERY {
        assert_eq!(method(&mut bp, &moved), Method::Grid);
    }
    // A frame whose tests outgrow the estimate (every pair tested by the grid at one point):
    // the next frame chooses again, at once.
    assert_eq!(method(&mut bp, &uniform), Method::Grid);
    let (pairs, stats) = frame(&mut bp, &point);
    assert_eq!(stats.chosen.unwrap().method, Method::Grid);
    assert_eq!(pairs.len(), 2_000 * 1_999 / 2);
    assert_eq!(method(&mut bp, &point), other);
    // Another size: at once.
    assert_eq!(method(&mut bp, &uniform[..1_999]), Method::Grid);
    assert_eq!(method(&mut bp, &smaller_point), other);
}

/// `n` spheres on a line along the diagonal (no pairs, none overlapping on x) and the same on
/// the plane x = 0 (every pair overlapping on x): two scenes of one size, unlike for `auto`.
fn line_and_plane(n: usize) -> (Vec<Sphere>, Vec<Sphere>) {
    let line = (0..n)
        .map(|i| Sphere::new(Vec3::splat(i as f32), 0.4))
        .collect();
    let plane = (0..n)
        .map(|i| Sphere::new(Vec3::new(0.0, (i % 60) as f32, (i / 60) as f32), 0.4))
        .collect();
    (line, plane)
}

/// A choice made because a frame outgrew the one before stands its RECHOOSE_EVERY frames,
/// whatever its tests: a line along the diagonal, then the same spheres on a plane across x,
/// where x tests nearly every pair (1.0-1.6 s a frame for 31 frames at 30,000, against 4 ms
/// for the grid, before frames that outgrew their estimate were surveyed again).
#[test]
fn auto_chooses_again_after_a_frame_outgrows_its_choice() {
    let n = 3_000;
    let (line, plane) = line_and_plane(n);
    let mut bp = cpu::auto();
    let ran = |bp: &mut Auto, s: &[Sphere]| {
        let (pairs, stats) = frame(bp, s);
        assert_eq!(pairs, oracle_pairs(s));
        (stats.chosen.unwrap().method, stats.tests)
    };
    let on_line = ran(&mut bp, &line).0;
    assert_eq!(on_line, choose(&line, Backend::Cpu, false).method);
    let on_plane = choose(&plane, Backend::Cpu, false).method;
    assert_ne!(on_line, on_plane, "the test needs two choices");
    let (first, tests) = ran(&mut bp, &plane);
    assert_eq!(first, on_line);
    assert!(tests > 4 * 8 * n as u64, "{tests}");
    assert_eq!(ran(&mut bp, &plane).0, on_plane);
}

/// CPU `auto` leaves events to the caller's tracker; its pairs stay exact over a moving scene.
#[test]
fn cpu_auto_over_moving_frames() {
    let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(2_000, 5));
    let mut bp = cpu::auto();
    assert!(!bp.track_events(true).unwrap());
    let mut tracker = EventTracker::new();
    let mut reference = EventTracker::new();
    for _ in 0..5 {
        let (pairs, _) = frame(&mut bp, &scene.spheres);
        let expected = oracle_pairs(&scene.spheres);
        assert_eq!(pairs, expected);
        assert_eq!(tracker.update(pairs), reference.update(expected));
        scene.step();
    }
}

#[test]
fn gpu_auto_matches_the_cpu_and_switches_with_device_events_exact() {
    let Some(ctx) = shared_gpu() else { return };
    for (name, spheres) in scenes() {
        let mut bp = sweepfan::gpu::auto(ctx.clone());
        assert_eq!(bp.backend(), Backend::Gpu);
        let (pairs, stats) = frame(&mut bp, &spheres);
        assert_eq!(pairs, oracle_pairs(&spheres), "{name}");
        let choice = stats.chosen.unwrap();
        assert_eq!(
            choice,
            choose(&spheres, Backend::Gpu, ctx.is_software()),
            "{name}"
        );
        assert_eq!(stats.tests, oracle_tests(choice.method, &spheres), "{name}");
    }
    // Events on the device: a new choice takes over after the frame it was made on (that frame
    // ran by the method before it), and every frame's events stay exact across the switches.
    let mut scene = Scene::generate(SceneKind::Paper, &SceneParams::new(1_000, 9));
    let mut bp = sweepfan::gpu::auto(ctx.clone());
    assert!(bp.track_events(true).unwrap());
    let mut tracker = EventTracker::new();
    let few = scene.spheres[..10].to_vec();
    let point = vec![Sphere::new(Vec3::ZERO, 1.0); 1_000];
    let mut ran = Vec::new();
    let mut frames = Vec::new();
    for step in 0..sweepfan::broadphase::auto::RECHOOSE_EVERY + 4 {
        let spheres = match step {
            0 => few.clone(),
            s if s % 2 == 1 => scene.spheres.clone(),
            _ => point.clone(),
        };
        scene.step();
        let (pairs, stats) = frame(&mut bp, &spheres);
        let expected = oracle_pairs(&spheres);
        assert_eq!(pairs, expected, "step {step}");
        assert_eq!(
            bp.take_events().unwrap(),
            tracker.update(expected),
            "step {step}"
        );
        ran.push(stats.chosen.unwrap().method);
        frames.push(spheres);
    }
    let software = ctx.is_software();
    let chosen = |k: usize| choose(&frames[k], Backend::Gpu, software).method;
    assert_ne!(chosen(0), chosen(1), "the test needs two choices");
    assert_eq!(ran[..2], [chosen(0), chosen(0)]);
    assert_eq!(ran[2], chosen(1));
}

#[test]
fn bench_rows_say_what_auto_chose() {
    let (out, rows) = bench_run(&[
        "--scene",
        "paper",
        "--n",
        "3000",
        "--frames",
        "2",
        "--methods",
        "auto,grid",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("auto [cpu]: grid (uniform radii, "),
        "{stdout}"
    );
    assert_eq!(rows[0]["method"], "auto");
    assert_eq!(rows[0]["chosen"]["method"], "grid");
    assert!(
        rows[0]["chosen"]["reason"]
            .as_str()
            .unwrap()
            .contains("a cell")
    );
    assert!(rows[1].get("chosen").is_none());
    assert_eq!(rows[0]["verified"], true);
    assert_eq!(rows[0]["tests_per_frame"], rows[1]["tests_per_frame"]);
}

#[test]
fn verify_defaults_to_auto() {
    let dir = temp_dir("auto", "verify");
    let (scene, pairs) = (dir.join("scene.csv"), dir.join("pairs.csv"));
    std::fs::write(&scene, "x,y,z,r\n0,0,0,1\n1.5,0,0,1\n10,0,0,1\n").unwrap();
    let out = succeed(verify(&scene, &pairs).output());
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("auto [cpu] chose "), "{text}");
    assert_eq!(
        std::fs::read_to_string(&pairs)
            .unwrap()
            .trim()
            .lines()
            .last(),
        Some("0,1")
    );
}

/// A world batch under `auto` runs each world by its own choice, call after call: eight worlds
/// of one size, a line along the diagonal and a plane across x in turn, each world's tests
/// those of the method chosen for it alone (each thread's `auto` once gave a world of the size
/// it had chosen for the choice of another: the planes ran x, 36M tests against the grid's
/// 161k, 10-14x its time).
#[test]
fn world_batches_under_auto_choose_for_each_world() {
    let n = 3_000;
    let (line, plane) = line_and_plane(n);
    let world = |w: u32| if w.is_multiple_of(2) { &line } else { &plane };
    let (mut spheres, mut worlds) = (Vec::new(), Vec::new());
    let mut want = 0;
    for w in 0..8u32 {
        spheres.extend_from_slice(world(w));
        worlds.extend(std::iter::repeat_n(w, n));
        want += oracle_tests(choose(world(w), Backend::Cpu, false).method, world(w));
    }
    let mut batch = sweepfan::cpu::WorldBatch::auto();
    for call in 0..3 {
        let stats = batch.find_pairs(&spheres, &worlds, None).unwrap();
        assert_eq!(stats.tests, want, "call {call}");
    }
}
