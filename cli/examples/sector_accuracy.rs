//! Runs the sector accuracy experiment (thesis 3.1) and prints the table and timings.
//! `cargo run --release --example sector_accuracy -- [rotations] [cpu|gpu|both] [seed] [json]`
//! (the GPU report goes to `<json stem>.gpu.json`)
//! `cargo run --release --example sector_accuracy -- [pairs] spheres`: batched sector-sphere
//! throughput, GPU against the CPU function.

use std::time::Instant;
use sweepfan_cli::experiments::sector::accuracy::{self as sector_accuracy, DEFAULT_SEED};
use sweepfan_scenes::random::vec3_in;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rotations: usize = args.first().map_or(Ok(1_000), |s| s.parse())?;
    let backend = args.get(1).map_or("cpu", String::as_str);
    let seed: u64 = args.get(2).map_or(Ok(DEFAULT_SEED), |s| s.parse())?;
    if backend == "spheres" {
        return sphere_throughput(rotations);
    }
    let list = sector_accuracy::random_rotations(rotations, seed);
    let mut cpu_hists = None;
    if backend != "gpu" {
        let t = Instant::now();
        let h = sector_accuracy::cpu_histograms(&list, None)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "CPU ({} threads): {rotations} rotations in {s:.2} s = {:.2} s per 1,000; 100,000 \
             rotations would take {:.1} min",
            rayon::current_num_threads(),
            1000.0 * s / rotations as f64,
            100_000.0 * s / rotations as f64 / 60.0
        );
        let report = sector_accuracy::build_report(&list, &h, seed)?;
        print!("{}", report.table());
        if let Some(path) = args.get(3) {
            std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        }
        cpu_hists = Some(h);
    }
    if backend != "cpu" {
        let ctx = sweepfan::gpu::GpuContext::default_adapter()?;
        let mut exp = sweepfan::gpu::SectorExperimentGpu::new(&ctx)?;
        let t = Instant::now();
        let h = exp.box_histograms(&ctx, &list, None)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "GPU '{}' ({:?}): {rotations} rotations in {s:.2} s wall (incl. upload/readback), \
             classify passes {}",
            ctx.info().name,
            ctx.info().device_type,
            exp.last_gpu_seconds
                .map_or("not timed".to_string(), |g| format!("{g:.2} s"))
        );
        let report = sector_accuracy::build_report(&list, &h, seed)?;
        print!("{}", report.table());
        if let Some(path) = args.get(3) {
            let path = format!("{}.gpu.json", path.trim_end_matches(".json"));
            std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        }
        if let Some(c) = cpu_hists {
            let diff = sector_accuracy::differing_points(&c, &h);
            println!(
                "GPU vs CPU: {diff} of {} classified points differ",
                rotations as u64 * sector_accuracy::GRID_POINTS as u64
            );
        }
    }
    Ok(())
}

/// Sectors of the experiment's rotating boxes against random spheres in the same volume.
fn sphere_throughput(pairs: usize) -> anyhow::Result<()> {
    use rand::{Rng, SeedableRng};
    use sweepfan::Sphere;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let sectors: Vec<_> = sector_accuracy::random_rotations(10_000, 1)
        .iter()
        .map(|b| b.conservative_sector())
        .collect();
    let spheres: Vec<Sphere> = (0..100_000)
        .map(|_| {
            let c = vec3_in(&mut rng, -40.0..40.0);
            Sphere::new(c, rng.random_range(0.1..3.0))
        })
        .collect();
    let list: Vec<[u32; 2]> = (0..pairs)
        .map(|_| [rng.random_range(0..10_000), rng.random_range(0..100_000)])
        .collect();
    let t = Instant::now();
    let cpu: Vec<u32> = list
        .iter()
        .map(|p| {
            let s = &spheres[p[1] as usize];
            sectors[p[0] as usize].overlaps_sphere_exact(s) as u32
        })
        .collect();
    let cpu_s = t.elapsed().as_secs_f64();
    let ctx = sweepfan::gpu::GpuContext::default_adapter()?;
    let mut gpu = sweepfan::gpu::SectorSphereGpu::new(&ctx)?;
    gpu.test_pairs(&ctx, &sectors, &spheres, &list[..1024.min(pairs)])?; // warm-up
    let t = Instant::now();
    let got = gpu.test_pairs(&ctx, &sectors, &spheres, &list)?;
    let gpu_s = t.elapsed().as_secs_f64();
    let differ = cpu.iter().zip(&got).filter(|(a, b)| a != b).count();
    let hits = cpu.iter().filter(|&&h| h == 1).count();
    println!(
        "{pairs} sector-sphere pairs, {hits} hits; CPU 1 thread: {:.1} M pairs/s; '{}' ({:?}): \
         {:.1} M pairs/s wall incl. upload and readback; {differ} flags differ",
        pairs as f64 / cpu_s / 1e6,
        ctx.info().name,
        ctx.info().device_type,
        pairs as f64 / gpu_s / 1e6
    );
    Ok(())
}
