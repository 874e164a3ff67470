//! Scene `rotating` at scale (docs/design.md §5.7): candidates and hits per frame for both
//! proxies, CPU and GPU. Usage: `cargo run --release --example rotating -- [SPHERES] [BOXES]
//! [FRAMES] [cpu|gpu|both] [JSON]`. The CLI runs the same measurement as
//! `sweepfan bench --scene rotating --n SPHERES --boxes BOXES --frames FRAMES`.

use sweepfan::broadphase::Backend;
use sweepfan::gpu::GpuContext;
use sweepfan_cli::experiments::sector::rotating::bench_rotating;
use sweepfan_scenes::rotating::RotatingParams;

fn main() -> sweepfan::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: usize| -> usize {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let (spheres, boxes, frames) = (num(0, 1_000_000), num(1, 100_000), num(2, 3));
    let backends: Vec<Backend> = match args.get(3).map(String::as_str).unwrap_or("both") {
        "cpu" => vec![Backend::Cpu],
        "gpu" => vec![Backend::Gpu],
        _ => vec![Backend::Cpu, Backend::Gpu],
    };
    let ctx = if backends.contains(&Backend::Gpu) {
        Some(GpuContext::default_adapter()?)
    } else {
        None
    };
    let rows = bench_rotating(
        &RotatingParams::new(boxes, spheres, 1),
        frames,
        &backends,
        ctx.as_ref(),
    )?;
    println!("rotating: {spheres} spheres, {boxes} boxes, {frames} frames");
    for r in &rows {
        println!(
            "{:<30} {:<4} candidates/frame {:>14.1}  hits/frame {:>12.1}  ms/frame {:>10.1}  \
             verified {:?} (ties {:?})",
            r.method,
            r.backend.as_str(),
            r.tests_per_frame,
            r.pairs_per_frame,
            r.ms_per_frame,
            r.verified,
            r.near_touching_differences
        );
        for (stage, ms) in &r.stage_ms {
            println!("    {stage:<40} {ms:>10.2} ms");
        }
    }
    if let Some(path) = args.get(4) {
        sweepfan_cli::report::rows::write_json(std::path::Path::new(path), &rows)?;
    }
    Ok(())
}
