//! CPU separating-axis throughput: pair tests per second for boxes and polygons, and the whole
//! CPU pipeline (AABB sweep and prune + SAT). `cargo bench --bench sat`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use sweepfan::Pair;
use sweepfan::cpu::aabb_sweep;
use sweepfan::cpu::sat::{
    obb_frame_pairs_unordered, obb_overlaps, obb_pairs_unordered, polygon_set_pairs_unordered,
};
use sweepfan::geom::obb::obb_frames;
use sweepfan::geom::polygon::{PolygonSet, polygon_aabbs};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

#[path = "../examples/common/sweep_boxes.rs"]
mod sweep_boxes;

fn bench_sat(c: &mut Criterion) {
    let n = 400_000;
    let boxes = sweep_boxes::in_sweep_order(&random_boxes(n, 1));
    let frames = obb_frames(&boxes);
    let sweep_candidates = sweep_boxes::sweep_candidates(&boxes);
    // The same candidates in random order: every test reads two random cache lines (the case
    // of candidates from elsewhere on shapes stored in arbitrary order).
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut shuffled = sweep_candidates.clone();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.random_range(0..=i));
    }
    let mut out: Vec<Pair> = Vec::new();

    let mut g = c.benchmark_group("obb_sat");
    g.sample_size(10);
    g.throughput(Throughput::Elements(sweep_candidates.len() as u64));
    g.bench_function("frames_sweep_order", |b| {
        b.iter(|| {
            obb_frame_pairs_unordered(
                &frames,
                |i| &boxes[i],
                black_box(&sweep_candidates),
                &mut out,
            )
            .unwrap()
        })
    });
    g.bench_function("frames_shuffled", |b| {
        b.iter(|| {
            obb_frame_pairs_unordered(&frames, |i| &boxes[i], black_box(&shuffled), &mut out)
                .unwrap()
        })
    });
    g.bench_function("with_frame_setup", |b| {
        b.iter(|| obb_pairs_unordered(black_box(&boxes), &sweep_candidates, &mut out).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("obb_pipeline");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("obb_overlaps_400k", |b| {
        b.iter(|| obb_overlaps(black_box(&boxes)).unwrap())
    });
    g.finish();

    let polys = generate_polygons(SceneKind::Density, &SceneParams::new(200_000, 3)).unwrap();
    let set = PolygonSet::new(&polys).unwrap();
    let mut candidates = Vec::new();
    aabb_sweep(&polygon_aabbs(&polys), &mut candidates).unwrap();
    let mut g = c.benchmark_group("polygon_sat");
    g.sample_size(10);
    g.throughput(Throughput::Elements(candidates.len() as u64));
    g.bench_function("set_sweep_order", |b| {
        b.iter(|| polygon_set_pairs_unordered(&set, black_box(&candidates), &mut out).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_sat);
criterion_main!(benches);
