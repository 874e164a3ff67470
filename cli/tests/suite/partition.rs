//! Frames in parts on the GPU (docs/design.md §2.10): with the binding limit lowered to 64 KiB
//! every method gives exactly the unpartitioned CPU pairs on scenes that stress the partition
//! rule, events stay exact across frames (also where a broad phase starts splitting), two
//! devices give one device's pairs, and the CLI says how a frame was split.

use crate::common::test_gpu;
use crate::common::{cpu_grid_pairs, exits_2, exits_2_naming, sweepfan as bin};
use std::sync::Arc;
use sweepfan::gpu::{GpuBroadPhase, GpuContext};
use sweepfan::{BroadPhase, EventTracker, Method, Pair, Sphere, canonicalize};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// The binding limit of the check: 64 KiB, 4,096 spheres per binding.
const BINDING: u64 = 1 << 16;

fn capped_gpu() -> Option<Arc<GpuContext>> {
    let mut ctx = test_gpu()?;
    ctx.lower_limits(|l| l.max_storage_buffer_binding_size = BINDING)
        .unwrap();
    Some(Arc::new(ctx))
}

fn scene(kind: SceneKind, n: usize, seed: u64) -> Vec<Sphere> {
    Scene::generate(kind, &SceneParams::new(n, seed)).spheres
}

/// The GPU's pairs in parts, canonical, checked to hold no pair twice; with the split.
fn gpu_pairs(bp: &mut GpuBroadPhase, spheres: &[Sphere]) -> (Vec<Pair>, u64) {
    let mut out = Vec::new();
    let stats = bp.find_pairs(spheres, Some(&mut out)).unwrap();
    let n = out.len();
    canonicalize(&mut out);
    out.dedup();
    assert_eq!(out.len(), n, "a pair found twice");
    assert_eq!(stats.pairs, n as u64);
    let parts = bp
        .diagnostics()
        .and_then(|d| d.parts())
        .expect("a frame past the binding runs in parts");
    (out, parts.parts)
}

#[test]
#[ignore = "slow (1-4 min on 2 cores): scripts/test.sh --slow runs it, and CI"]
fn every_method_in_parts_equals_the_cpu() {
    let Some(ctx) = capped_gpu() else { return };
    let scenes = [
        ("clusters", scene(SceneKind::Clusters, 100_000, 1)),
        ("mixed radii", scene(SceneKind::MixedRadii, 100_000, 2)),
        ("giant", scene(SceneKind::Giant, 50_000, 3)),
        ("wide", scene(SceneKind::Wide, 100_000, 4)),
        ("one point", scene(SceneKind::OnePoint, 600, 5)),
    ];
    for (name, spheres) in &scenes {
        let expected = cpu_grid_pairs(spheres);
        assert!(!expected.is_empty(), "{name}");
        for m in Method::ALL {
            let mut bp = GpuBroadPhase::new(ctx.clone(), m).unwrap();
            let (got, parts) = gpu_pairs(&mut bp, spheres);
            assert!(
                got == expected,
                "{name}, {m}: {} pairs, cpu {}",
                got.len(),
                expected.len()
            );
            if spheres.len() >= 100_000 {
                assert!(parts >= 8, "{name}, {m}: {parts} parts");
            }
        }
    }
}

/// Events per frame equal the CPU's: a broad phase that starts whole (events on the device)
/// and splits from the third frame on (events on the host, from the device's last list).
#[test]
fn events_stay_exact_across_parts() {
    let Some(ctx) = capped_gpu() else { return };
    let mut bp = GpuBroadPhase::new(ctx, Method::Grid).unwrap();
    assert!(bp.track_events(true).unwrap());
    let mut tracker = EventTracker::new();
    let mut spheres = scene(SceneKind::Paper, 6_000, 6);
    for frame in 0..6 {
        // Frames 0 and 1: 2,000 spheres fit one binding; then all 6,000 do not.
        let now = if frame < 2 {
            &spheres[..2000]
        } else {
            &spheres[..]
        };
        let mut pairs = Vec::new();
        bp.find_pairs(now, Some(&mut pairs)).unwrap();
        let events = bp.take_events().expect("events tracked");
        let expected = tracker.update(cpu_grid_pairs(now));
        assert_eq!(events, expected, "frame {frame}");
        assert_eq!(
            bp.diagnostics().and_then(|d| d.parts()).is_some(),
            frame >= 2,
            "frame {frame}"
        );
        for (k, s) in spheres.iter_mut().enumerate() {
            let step = ((k * 7919 + frame * 31) % 200) as f32 / 100.0 - 1.0;
            s.center.x += step;
        }
    }
}

#[test]
fn two_devices_give_one_devices_pairs() {
    let (Some(a), Some(b)) = (test_gpu(), test_gpu()) else {
        return;
    };
    let spheres = scene(SceneKind::Density, 1 << 20, 7);
    // The CPU reference's pairs (a one-device GPU run would share a kernel's fault).
    let expected = cpu_grid_pairs(&spheres);
    let two = Arc::new(a.with_peers(vec![Arc::new(b)]));
    let mut bp = GpuBroadPhase::new(two, Method::Grid).unwrap();
    let (got, parts) = gpu_pairs(&mut bp, &spheres);
    assert!(
        got == expected,
        "{} pairs, the CPU's {}",
        got.len(),
        expected.len()
    );
    assert_eq!(bp.diagnostics().and_then(|d| d.parts()).unwrap().devices, 2);
    assert!(parts >= 8, "{parts} parts");
    // The merged list meets the caller's pair limit (every part alone was under it, and the
    // merge was not checked), and the caller's list is left empty.
    bp.set_pair_limit(expected.len() as u64 - 1);
    let mut left = vec![[1, 2]];
    let e = bp.find_pairs(&spheres, Some(&mut left)).unwrap_err();
    assert!(
        matches!(
            e,
            sweepfan::Error::TooLarge {
                exceeds: sweepfan::Exceeds::PairList { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(left.is_empty());
}

#[test]
fn cli_verify_in_parts_on_two_devices() {
    let dir = std::env::temp_dir().join(format!("sweepfan-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("clusters.csv");
    Scene::generate(SceneKind::Clusters, &SceneParams::new(30_000, 8))
        .write_csv(&file)
        .unwrap();
    let out = dir.join("pairs.csv");
    let run = bin()
        .args([
            "--max-binding-bytes",
            "65536",
            "--adapters",
            "0,0",
            "verify",
        ])
        .args(["--backend", "gpu", "--method", "sap", "--scene-file"])
        .arg(&file)
        .arg("--pairs-out")
        .arg(&out)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{text}");
    assert!(
        text.contains("on 2 devices") && text.contains(" parts ("),
        "{text}"
    );
    assert!(text.contains("verified: same pairs"), "{text}");
    // Refused: a limit below the kernels' tables, and --adapter beside --adapters.
    exits_2_naming(
        bin().args(["--max-binding-bytes", "4096", "info"]),
        "at least 65536",
    );
    exits_2(bin().args(["--adapter", "0", "--adapters", "0,0", "info"]));
    std::fs::remove_dir_all(&dir).ok();
}

/// Turning events off and on again in parts starts them afresh, as on the device: the next
/// frame's pairs are all found.
#[test]
fn events_restart_after_being_turned_off_in_parts() {
    let Some(ctx) = capped_gpu() else { return };
    let mut bp = GpuBroadPhase::new(ctx, Method::Sap).unwrap();
    let spheres = scene(SceneKind::Paper, 6_000, 9);
    let mut pairs = Vec::new();
    bp.track_events(true).unwrap();
    bp.find_pairs(&spheres, Some(&mut pairs)).unwrap();
    assert!(bp.diagnostics().and_then(|d| d.parts()).is_some());
    bp.track_events(false).unwrap();
    bp.find_pairs(&spheres[..5000], Some(&mut pairs)).unwrap();
    bp.track_events(true).unwrap();
    bp.find_pairs(&spheres, Some(&mut pairs)).unwrap();
    let events = bp.take_events().expect("events on");
    assert_eq!(events.found, cpu_grid_pairs(&spheres));
    assert!(events.lost.is_empty());
}
