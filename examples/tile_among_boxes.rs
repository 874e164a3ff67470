//! One flat terrain tile spanning the scene among 1,000,000 random boxes: the wide-shape pass of
//! the GPU AABB sweep against the plain sweep the tile used to force, and the CPU pipeline, with
//! the pairs checked equal. `cargo run --release --example tile_among_boxes [n]`.
//! On lavapipe the times are a work proxy, not GPU times.

mod common;

use std::time::Instant;
use sweepfan::broadphase::{Pair, Stats, canonicalize};
use sweepfan::cpu::sat::obb_overlaps;
use sweepfan::geom::obb::obb_frames;
use sweepfan::gpu::SweepLayout;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan_scenes::boxes::tile_among_boxes;

fn describe(what: &str, stats: &Stats) {
    let stages: Vec<String> = stats
        .stages
        .iter()
        .map(|s| format!("{} {:.1} ms", s.stage, s.seconds * 1e3))
        .collect();
    println!(
        "{what}: {} candidates, {} pairs; {}",
        stats.tests,
        stats.pairs,
        stages.join(", ")
    );
}

fn main() -> sweepfan::Result<()> {
    let n = common::count_arg(1_000_000)?;
    let ctx = common::open_gpu()?;
    let boxes = tile_among_boxes(n, 1);
    let layout = SweepLayout::for_frames(&obb_frames(&boxes));
    println!(
        "wide shapes {:?}, columns {:?}",
        layout.wide, layout.columns
    );
    let mut gpu = GpuBoxPipeline::new(ctx, Proxy::Aabb)?;
    let mut with_wide: Vec<Pair> = Vec::new();
    for frame in 0..2 {
        let stats = gpu.obb_overlaps(&boxes, Some(&mut with_wide))?;
        describe(&format!("gpu, wide pass, frame {frame}"), &stats);
    }
    canonicalize(&mut with_wide);
    // Without columns (and so without the wide pass): the plain sweep the tile's width forced
    // before; lavapipe may cut its walks short, which is a clear error.
    gpu.set_sweep_columns(false);
    let mut plain = Vec::new();
    match gpu.obb_overlaps(&boxes, Some(&mut plain)) {
        Ok(stats) => {
            describe("gpu, plain sweep", &stats);
            canonicalize(&mut plain);
            println!("plain sweep pairs equal: {}", plain == with_wide);
        }
        Err(e) => println!("gpu, plain sweep: {e}"),
    }
    let start = Instant::now();
    let (mut cpu, stats) = obb_overlaps(&boxes)?;
    println!(
        "cpu: {} candidates, {} pairs in {:.0} ms",
        stats.tests,
        cpu.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    canonicalize(&mut cpu);
    // Exact equality is expected here; only pairs within 1e-5 of touching could differ.
    println!("gpu pairs == cpu pairs: {}", cpu == with_wide);
    Ok(())
}
