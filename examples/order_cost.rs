//! The price of canonical order (docs/design.md §2.14), on a density scene of `n` spheres at a
//! volume fraction (10.05: 2.4 centres a unit volume, about 44 pairs an object), one CPU
//! method (default grid): best of 5 of `find_pairs` counting only, `find_pairs_unordered`,
//! `find_pairs` into a reused list and into a new one.
//! `cargo run --release --example order_cost -- [n] [fraction] [method]`.
use std::time::Instant;
use sweepfan::Method;
use sweepfan::cpu::broad_phase;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn best<F: FnMut()>(mut f: F) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64() * 1e3);
    }
    b
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .first()
        .map_or(132_000, |s| s.parse().expect("n: a whole number"));
    let fraction: f32 = args
        .get(1)
        .map_or(10.05, |s| s.parse().expect("fraction: a number"));
    let method = Method::parse(args.get(2).map_or("grid", |s| s.as_str())).expect("a CPU method");
    let mut p = SceneParams::new(n, 1);
    p.volume_fraction = fraction;
    let scene = Scene::generate(SceneKind::Density, &p);
    let mut bp = broad_phase(method);
    let mut out = Vec::new();
    bp.find_pairs(&scene.spheres, Some(&mut out)).unwrap();
    let count = best(|| {
        bp.find_pairs(&scene.spheres, None).unwrap();
    });
    let unordered = best(|| {
        bp.find_pairs_unordered(&scene.spheres, Some(&mut out))
            .unwrap();
    });
    let ordered = best(|| {
        bp.find_pairs(&scene.spheres, Some(&mut out)).unwrap();
    });
    let fresh = best(|| {
        let mut v = Vec::new();
        bp.find_pairs(&scene.spheres, Some(&mut v)).unwrap();
    });
    println!(
        "n {n} pairs {} ({:.1}/object): count {count:.1} ms, unordered {unordered:.1}, ordered {ordered:.1}, ordered into a new Vec {fresh:.1}",
        out.len(),
        out.len() as f64 / n as f64
    );
}
