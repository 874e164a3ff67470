//! Runs the sector accuracy experiment (thesis 3.1) and prints the table and timings.
//! `cargo run --release --example sector_accuracy -- [rotations] [cpu|gpu|both] [seed] [json]`

use std::time::Instant;
use sweepfan::cpu::sector_accuracy::{self, DEFAULT_SEED};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rotations: usize = args.first().map_or(Ok(1_000), |s| s.parse())?;
    let backend = args.get(1).map_or("cpu", String::as_str);
    let seed: u64 = args.get(2).map_or(Ok(DEFAULT_SEED), |s| s.parse())?;
    let list = sector_accuracy::random_rotations(rotations, seed);
    let mut cpu_hists = None;
    if backend != "gpu" {
        let t = Instant::now();
        let h = sector_accuracy::cpu_histograms(&list, None);
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
        let mut exp = sweepfan::gpu::sector::SectorExperimentGpu::new(&ctx)?;
        let t = Instant::now();
        let h = exp.histograms(&ctx, &list, None)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "GPU '{}' ({:?}): {rotations} rotations in {s:.2} s (wall, incl. upload/readback)",
            ctx.info.name, ctx.info.device_type
        );
        let report = sector_accuracy::build_report(&list, &h, seed)?;
        print!("{}", report.table());
        if let Some(c) = cpu_hists {
            let diff: u64 = c
                .iter()
                .zip(&h)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.abs_diff(*y) as u64).sum::<u64>() / 2)
                .sum();
            println!(
                "GPU vs CPU: {diff} of {} classified points differ",
                rotations as u64 * sector_accuracy::GRID_POINTS as u64
            );
        }
    }
    Ok(())
}
