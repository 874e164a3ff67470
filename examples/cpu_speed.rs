//! Per-frame wall time of the CPU methods (and the peers with `--features peers`):
//! `cargo run --release --example cpu_speed [--features peers] -- [paper|density] [n...]`.

use std::time::Instant;
use sweepfan::cpu::broad_phase;
use sweepfan::{BroadPhase, Method, Scene, SceneKind, SceneParams};

fn time_frames(bp: &mut dyn BroadPhase, scene: &Scene, frames: usize) -> (f64, u64, u64, String) {
    let mut scene = scene.clone();
    // One warm-up call grows the scratch buffers.
    bp.find_pairs(&scene.spheres, None).unwrap();
    let mut best = f64::INFINITY;
    let (mut tests, mut pairs, mut stages) = (0, 0, String::new());
    for _ in 0..frames {
        let start = Instant::now();
        let stats = bp.find_pairs(&scene.spheres, None).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        (tests, pairs) = (stats.tests, stats.pairs);
        stages = stats
            .stages
            .iter()
            .map(|s| format!("{} {:.3}", s.stage, s.seconds * 1e3))
            .collect::<Vec<_>>()
            .join(", ");
        scene.step();
    }
    (best * 1e3, tests, pairs, stages)
}

fn candidates(kind: SceneKind, n: usize) -> Vec<Box<dyn BroadPhase + Send>> {
    let mut list: Vec<Box<dyn BroadPhase + Send>> = Vec::new();
    let methods: Vec<Method> = match kind {
        SceneKind::Paper if n <= 20_000 => Method::ALL.to_vec(),
        _ => vec![Method::Sap, Method::Grid],
    };
    list.extend(methods.into_iter().map(broad_phase));
    #[cfg(feature = "peers")]
    for name in ["peer-parry", "peer-rstar", "peer-broccoli"] {
        list.extend(sweepfan::cpu::peers::peer(name));
    }
    list
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = match args.first().map(String::as_str) {
        Some("density") => SceneKind::Density,
        _ => SceneKind::Paper,
    };
    let sizes: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![5000] } else { sizes };
    for n in sizes {
        let scene = Scene::generate(kind, &SceneParams::new(n, 1));
        let frames = if n >= 500_000 { 3 } else { 10 };
        // SWEEPFAN_ONLY=grid,sap restricts the methods measured.
        let only = std::env::var("SWEEPFAN_ONLY").ok();
        for mut bp in candidates(kind, n) {
            if only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|m| m == bp.name()))
            {
                continue;
            }
            let (ms, tests, pairs, stages) = time_frames(bp.as_mut(), &scene, frames);
            println!(
                "{:>8} n={n:<8} {:<16} {ms:>10.3} ms/frame  tests {tests:>12} pairs {pairs:>10}  [{stages}]",
                kind.name(),
                bp.name()
            );
        }
    }
}
