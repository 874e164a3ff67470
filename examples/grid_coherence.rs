//! Temporal coherence in the CPU grid (docs/design.md §2.7): the same frames through a grid that
//! starts each sort from the last frame's order and one that sorts from scratch, interleaved
//! frame by frame so both see the same machine load; medians of the sort stage and the whole
//! call, and a check that both give the same tests and pairs on every frame.
//! `cargo run --release --example grid_coherence -- [paper|density] [N] [FRAMES] [SPEED]`
//! (SPEED scales the scene's velocities, default 1).

use sweepfan::BroadPhase;
use sweepfan::cpu::Grid;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let kind = match args.next().as_deref() {
        Some("density") => SceneKind::Density,
        _ => SceneKind::Paper,
    };
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5_000);
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let speed: f32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let mut scene = Scene::generate(kind, &SceneParams::new(n, 1));
    for v in &mut scene.velocities {
        *v *= speed;
    }
    let mut coherent = Grid::new();
    coherent.set_coherent(true);
    let mut scratch = Grid::new();
    scratch.set_coherent(false);
    let (mut sort, mut total) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for frame in 0..frames {
        let mut counts = [(0, 0); 2];
        // Alternate which runs first: the first after a step finds colder caches.
        let mut order = [(0, &mut coherent), (1, &mut scratch)];
        if frame % 2 == 1 {
            order.reverse();
        }
        for (k, grid) in order {
            let stats = grid.find_pairs(&scene.spheres, None)?;
            let seconds = |name: &str| {
                stats
                    .stages
                    .iter()
                    .filter(|s| s.stage == name)
                    .map(|s| s.seconds)
                    .sum::<f64>()
            };
            if frame > 0 {
                sort[k].push(seconds("sort") * 1e3);
                total[k].push((seconds("sort") + seconds("pairs")) * 1e3);
            }
            counts[k] = (stats.tests, stats.pairs);
        }
        assert_eq!(
            counts[0], counts[1],
            "frame {frame}: coherent and scratch differ"
        );
        scene.step();
    }
    println!(
        "{} n = {n}, {frames} frames, speed x {speed} (medians after the first, {} threads):",
        scene.name,
        rayon::current_num_threads()
    );
    for (k, name) in ["coherent (last order + insertion)", "from scratch (radix)"]
        .iter()
        .enumerate()
    {
        println!(
            "  {name:<36} sort {:>8.3} ms   sort + pairs {:>8.3} ms",
            median(sort[k].clone()),
            median(total[k].clone())
        );
    }
    println!("  same tests and pairs on every frame");
    Ok(())
}
