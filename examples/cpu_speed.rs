//! Per-frame wall time of the CPU methods (and the peers with `--features peers`):
//! `cargo run --release --example cpu_speed [--features peers] -- [paper|density|one-point] [n...]`.

use std::time::Instant;
use sweepfan::cpu::broad_phase;
use sweepfan::{BroadPhase, Method};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// CPU time of this process (all threads) in seconds, from /proc (0 where unavailable): a
/// measure of work that other processes on a shared machine disturb less than wall time.
fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 =
        fields[11].parse::<f64>().unwrap_or(0.0) + fields[12].parse::<f64>().unwrap_or(0.0);
    ticks / 100.0
}

fn time_frames(
    bp: &mut dyn BroadPhase,
    scene: &Scene,
    frames: usize,
) -> (f64, f64, u64, u64, String) {
    let mut scene = scene.clone();
    // One warm-up call grows the scratch buffers.
    bp.find_pairs(&scene.spheres, None).unwrap();
    let mut best = f64::INFINITY;
    let (mut tests, mut pairs, mut stages) = (0, 0, String::new());
    let mut cpu = 0.0;
    for _ in 0..frames {
        let cpu_start = process_cpu_seconds();
        let start = Instant::now();
        let stats = bp.find_pairs(&scene.spheres, None).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
        cpu += process_cpu_seconds() - cpu_start;
        (tests, pairs) = (stats.tests, stats.pairs);
        stages = stats
            .stages
            .iter()
            .map(|s| format!("{} {:.3}", s.stage, s.seconds * 1e3))
            .collect::<Vec<_>>()
            .join(", ");
        scene.step();
    }
    (best * 1e3, cpu * 1e3 / frames as f64, tests, pairs, stages)
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
        Some("one-point") => SceneKind::OnePoint,
        _ => SceneKind::Paper,
    };
    let sizes: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![5000] } else { sizes };
    for n in sizes {
        let scene = Scene::generate(kind, &SceneParams::new(n, 1));
        let frames: usize = std::env::var("SWEEPFAN_FRAMES")
            .ok()
            .and_then(|f| f.parse().ok())
            .unwrap_or(if n >= 500_000 { 5 } else { 10 });
        // SWEEPFAN_ONLY=grid,sap restricts the methods measured.
        let only = std::env::var("SWEEPFAN_ONLY").ok();
        // SWEEPFAN_CHECK=1: also compare every method's canonical pair list with the first's.
        let check = std::env::var("SWEEPFAN_CHECK").is_ok_and(|v| v == "1");
        let mut reference: Option<(String, Vec<sweepfan::Pair>)> = None;
        for mut bp in candidates(kind, n) {
            if only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|m| m == bp.name()))
            {
                continue;
            }
            if check {
                let mut list = Vec::new();
                bp.find_pairs(&scene.spheres, Some(&mut list)).unwrap();
                sweepfan::canonicalize(&mut list);
                match &reference {
                    None => reference = Some((bp.name().to_string(), list)),
                    Some((first, expected)) => println!(
                        "same pairs as {first}: {} ({} pairs)",
                        *expected == list,
                        list.len()
                    ),
                }
            }
            let (ms, cpu_ms, tests, pairs, stages) = time_frames(bp.as_mut(), &scene, frames);
            println!(
                "{:>8} n={n:<8} {:<16} {ms:>10.3} ms/frame (cpu {cpu_ms:>9.1} ms)  tests {tests:>12} pairs {pairs:>10}  [{stages}]",
                kind.name(),
                bp.name()
            );
        }
    }
}
