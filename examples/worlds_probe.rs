use std::time::Instant;
use sweepfan::{Method, Scene, SceneKind, SceneParams, WorldPairs, cpu};
fn main() {
    let w: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let scenes: Vec<Scene> = (0..w)
        .map(|k| Scene::generate(SceneKind::Paper, &SceneParams::new(n, k as u64)))
        .collect();
    let spheres: Vec<_> = scenes
        .iter()
        .flat_map(|s| s.spheres.iter().copied())
        .collect();
    let worlds: Vec<u32> = (0..w)
        .flat_map(|k| std::iter::repeat_n(k as u32, n))
        .collect();
    for name in std::env::args().nth(3).unwrap().split(",") {
        let (mut bp, mut batch) = if name == "auto" {
            (
                Box::new(cpu::auto()) as Box<dyn sweepfan::BroadPhase>,
                cpu::WorldBatch::auto(),
            )
        } else {
            let m = Method::parse(name).unwrap();
            (
                cpu::broad_phase(m) as Box<dyn sweepfan::BroadPhase>,
                cpu::WorldBatch::new(m),
            )
        };
        let mut pairs = Vec::new();
        let mut best_loop = f64::MAX;
        let mut best_batch = f64::MAX;
        let mut out = WorldPairs::new();
        let mut total = 0;
        for _ in 0..5 {
            let t = Instant::now();
            total = 0;
            for s in &scenes {
                total += bp.find_pairs(&s.spheres, Some(&mut pairs)).unwrap().pairs;
            }
            best_loop = best_loop.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            batch.find_pairs(&spheres, &worlds, Some(&mut out)).unwrap();
            best_batch = best_batch.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name}: loop {:.2} ms batch {:.2} ms ratio {:.2} ({:.0} ns/world) pairs {total} {}",
            best_loop * 1e3,
            best_batch * 1e3,
            best_loop / best_batch,
            best_batch * 1e9 / w as f64,
            out.len()
        );
    }
}
