//! Broad-phase benchmarks on the CPU: `cargo bench --bench broadphase [--features peers]`.
//!
//! * paper box, n = 5000: every method (brute force included, the paper's baseline);
//! * density scene (volume fraction 0.01, radius 1), n = 100k and 1M: sap (100k only: its
//!   1D sweep visits ~n^(2/3) candidates per object at fixed density, seconds per frame at 1M),
//!   grid, and the peer crates with the `peers` feature;
//! * the grid's former cliffs (docs/design.md §2.7): the wide scene at 50,000 and the giant
//!   scene at 20,000, grid and sap.
//!
//! Every call stores its pairs (the peers do too), so all pay for the output alike. Sample
//! sizes are small so the whole run takes a few minutes.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use sweepfan::cpu::broad_phase;
use sweepfan::{BroadPhase, Method, Pair};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn bench_one(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    mut bp: Box<dyn BroadPhase + Send>,
    scene: &Scene,
) {
    let mut pairs: Vec<Pair> = Vec::new();
    let name = bp.name().to_string();
    c.bench_function(BenchmarkId::from_parameter(name), |b| {
        b.iter(|| {
            let stats = bp
                .find_pairs(black_box(&scene.spheres), Some(&mut pairs))
                .unwrap();
            black_box(stats.pairs)
        })
    });
}

fn peers() -> Vec<Box<dyn BroadPhase + Send>> {
    #[cfg(feature = "peers")]
    {
        sweepfan::cpu::peers::PEER_NAMES
            .iter()
            .filter_map(|name| sweepfan::cpu::peers::peer(name))
            .collect()
    }
    #[cfg(not(feature = "peers"))]
    {
        Vec::new()
    }
}

fn paper(c: &mut Criterion) {
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(5000, 1));
    let mut group = c.benchmark_group("paper_5000");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for method in Method::ALL {
        bench_one(&mut group, broad_phase(method), &scene);
    }
    for peer in peers() {
        bench_one(&mut group, peer, &scene);
    }
    group.finish();
}

fn density(c: &mut Criterion) {
    for n in [100_000usize, 1_000_000] {
        let scene = Scene::generate(SceneKind::Density, &SceneParams::new(n, 1));
        let mut group = c.benchmark_group(format!("density_{n}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(if n > 100_000 { 8 } else { 3 }));
        if n <= 100_000 {
            bench_one(&mut group, broad_phase(Method::Sap), &scene);
        }
        bench_one(&mut group, broad_phase(Method::Grid), &scene);
        for peer in peers() {
            bench_one(&mut group, peer, &scene);
        }
        group.finish();
    }
}

fn cliffs(c: &mut Criterion) {
    for (kind, n) in [(SceneKind::Wide, 50_000usize), (SceneKind::Giant, 20_000)] {
        let scene = Scene::generate(kind, &SceneParams::new(n, 1));
        let mut group = c.benchmark_group(format!("{}_{n}", kind.name()));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        for method in [Method::Grid, Method::Sap] {
            bench_one(&mut group, broad_phase(method), &scene);
        }
        group.finish();
    }
}

criterion_group!(benches, paper, density, cliffs);
criterion_main!(benches);
