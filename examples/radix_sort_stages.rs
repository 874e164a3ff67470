//! Per-stage GPU time of the radix sort (timestamp queries) next to `sort_unstable_by_key` on one
//! core, best of 5, interleaved so both see the same machine load.
//! `cargo run --release --example radix_sort_stages -- [pairs (default 4Mi)] [rounds (16)]`
//! On lavapipe the GPU numbers are a work-efficiency proxy, not GPU timings.

use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::time::Instant;
use sweepfan::gpu::radix_sort::RadixSort;
use sweepfan::gpu::{GpuContext, PassTimer};

/// CPU seconds used by this process so far (all threads; lavapipe runs the shaders in ours), from
/// /proc (Linux): immune to other processes' load, unlike wall time. 10 ms resolution.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4 << 20);
    let rounds: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let ctx = GpuContext::default_adapter()?;
    let mut sort = RadixSort::with_rounds(&ctx, rounds)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let bytes = n as u64 * 4;
    let kb = ctx.storage_buffer("keys", bytes, wgpu::BufferUsages::empty())?;
    let vb = ctx.storage_buffer("values", bytes, wgpu::BufferUsages::empty())?;
    let mut best = BTreeMap::<&str, f64>::new();
    let mut keep_min = |label: &'static str, secs: f64| {
        let e = best.entry(label).or_insert(f64::MAX);
        *e = e.min(secs);
    };
    let (mut cpu_sort_cpu_time, mut gpu_sort_cpu_time) = (0.0, 0.0);
    for _ in 0..5 {
        let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        let cpu0 = process_cpu_seconds();
        let start = Instant::now();
        pairs.sort_unstable_by_key(|p| p.0);
        keep_min("cpu sort_unstable_by_key", start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu0, process_cpu_seconds()) {
            cpu_sort_cpu_time += (b - a) / 5.0;
        }

        ctx.queue.write_buffer(&kb, 0, bytemuck::cast_slice(&keys));
        ctx.queue
            .write_buffer(&vb, 0, bytemuck::cast_slice(&values));
        ctx.wait()?;
        let mut timer = PassTimer::new(&ctx, 64);
        let cpu0 = process_cpu_seconds();
        let start = Instant::now();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        sort.encode(&ctx, &mut encoder, &kb, &vb, n as u32, 32, Some(&mut timer))?;
        timer.resolve(&mut encoder);
        ctx.queue.submit([encoder.finish()]);
        ctx.wait()?;
        keep_min("gpu sort (wall)", start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu0, process_cpu_seconds()) {
            gpu_sort_cpu_time += (b - a) / 5.0;
        }
        for (label, secs) in timer.read(&ctx)? {
            keep_min(label, secs);
        }
    }
    println!("{n} pairs on '{}', best of 5:", ctx.info.name);
    for (label, secs) in &best {
        println!("  {label:<26} {:>9.1} ms", secs * 1e3);
    }
    let ratio = best["gpu sort (wall)"] / best["cpu sort_unstable_by_key"];
    println!("  gpu / cpu (best wall)      {ratio:>9.1} x");
    if cpu_sort_cpu_time > 0.0 {
        println!(
            "  CPU time per sort: cpu {:.0} ms, gpu (lavapipe) {:.0} ms, ratio {:.1} x",
            cpu_sort_cpu_time * 1e3,
            gpu_sort_cpu_time * 1e3,
            gpu_sort_cpu_time / cpu_sort_cpu_time
        );
    }
    println!(
        "  traffic model: {:.2} bytes per key per pass",
        sort.bytes_per_key_per_pass()
    );
    Ok(())
}
