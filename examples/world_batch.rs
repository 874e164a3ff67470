//! A CPU batch of worlds timed alone, no loop beside it (for profiling; `bench --worlds` times
//! it beside the loop): `cargo run --release --example world_batch -- [worlds] [n] [frames]
//! [method|auto] [loop]`, paper scenes seeded 1.., each world's frames back to back. With
//! `loop`, the method's call once per world instead, to profile against the batch.

use std::time::Instant;
use sweepfan::cpu::WorldBatch;
use sweepfan::{Method, WorldPairs};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: usize| args.get(i).map_or(default, |s| s.parse().unwrap());
    let (worlds, n, frames) = (arg(1, 4096), arg(2, 64), arg(3, 100).max(1));
    let method = args.get(4).map_or("sap", String::as_str);
    let (mut spheres, mut ids) = (Vec::new(), Vec::new());
    for k in 0..worlds {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 1 + k as u64));
        ids.extend(std::iter::repeat_n(k as u32, scene.spheres.len()));
        spheres.extend(scene.spheres);
    }
    let mut batch = match method {
        "auto" => WorldBatch::auto(),
        m => WorldBatch::new(Method::parse(m).expect("a method's name or auto")),
    };
    if args.get(5).is_some_and(|a| a == "loop") {
        let m = Method::parse(method).expect("a method's name");
        let mut single = sweepfan::cpu::broad_phase(m);
        let mut pairs = Vec::new();
        let mut times = Vec::new();
        for _ in 0..frames {
            let start = Instant::now();
            let mut found = 0;
            for w in spheres.chunks(n) {
                found += single.find_pairs(w, Some(&mut pairs)).unwrap().pairs;
            }
            times.push(start.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(found);
        }
        times.sort_by(f64::total_cmp);
        println!("loop: median {:.3} ms", times[frames / 2]);
        return;
    }
    let mut out = WorldPairs::new();
    let mut times = Vec::new();
    let mut tests = 0;
    let mut stages: Vec<Vec<f64>> = Vec::new();
    let mut names = Vec::new();
    for _ in 0..frames {
        let start = Instant::now();
        let stats = batch.find_pairs(&spheres, &ids, Some(&mut out)).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1e3);
        tests = stats.tests;
        stages.resize(stats.stages.len(), Vec::new());
        names = stats.stages.iter().map(|s| s.stage).collect();
        for (v, s) in stages.iter_mut().zip(&stats.stages) {
            v.push(s.seconds * 1e3);
        }
    }
    for (name, mut v) in names.into_iter().zip(stages) {
        v.sort_by(f64::total_cmp);
        println!("  stage {name}: median {:.3} ms", v[v.len() / 2]);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{worlds} worlds of {n}, {method}: median {:.3} ms, fastest {:.3} ms, {} pairs, {tests} tests",
        times[frames / 2],
        times[0],
        out.pairs().len()
    );
}
