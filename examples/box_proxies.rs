//! SAT tests (broad-phase candidates) per frame of the GPU box / polygon pipeline with AABB
//! proxies against bounding-sphere proxies, beside the CPU pipeline's, with the pair counts
//! checked equal. `cargo run --release --example box_proxies [n]` (default 100,000): density
//! boxes, needle boxes and density polygons.

mod common;

use sweepfan::broadphase::Method;
use sweepfan::cpu::sat::{obb_overlaps, polygon_overlaps};
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons, needle_boxes};
use sweepfan_scenes::{SceneKind, SceneParams};

fn main() -> sweepfan::Result<()> {
    let n = common::count_arg(100_000)?;
    let ctx = common::open_gpu()?;
    let proxies = [Proxy::Aabb, Proxy::Sphere(Method::Grid)];
    let mut pipelines = proxies
        .iter()
        .map(|&p| GpuBoxPipeline::new(ctx.clone(), p))
        .collect::<sweepfan::Result<Vec<_>>>()?;
    let p = SceneParams::new(n, 1);
    let box_scenes = [
        ("density boxes", generate_boxes(SceneKind::Density, &p)),
        ("needle boxes", needle_boxes(n, 1)),
    ];
    println!("scene,n,cpu_tests,cpu_pairs,proxy,gpu_tests,gpu_pairs");
    for (name, boxes) in &box_scenes {
        let (cpu, cs) = obb_overlaps(boxes)?;
        for gpu in &mut pipelines {
            let s = gpu.obb_overlaps(boxes, None)?;
            let row = (
                name,
                n,
                cs.tests,
                cpu.len(),
                gpu.proxy().name(),
                s.tests,
                s.pairs,
            );
            println!(
                "{},{},{},{},{},{},{}",
                row.0, row.1, row.2, row.3, row.4, row.5, row.6
            );
            assert_eq!(s.pairs, cpu.len() as u64, "{name}: pair counts differ");
        }
    }
    let polygons = generate_polygons(SceneKind::Density, &p).unwrap();
    let (cpu, cs) = polygon_overlaps(&polygons)?;
    for gpu in &mut pipelines {
        let s = gpu.polygon_overlaps(&polygons, None)?;
        println!(
            "density polygons,{n},{},{},{},{},{}",
            cs.tests,
            cpu.len(),
            gpu.proxy().name(),
            s.tests,
            s.pairs
        );
        assert_eq!(s.pairs, cpu.len() as u64, "polygons: pair counts differ");
    }
    Ok(())
}
