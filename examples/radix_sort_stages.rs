//! Per-stage GPU time of both radix sort variants (timestamp queries) next to
//! `sort_unstable_by_key` on one core, best of 5, interleaved so all see the same machine load.
//! `cargo run --release --example radix_sort_stages -- [pairs (default 4Mi)] [rounds (16)]`
//! On lavapipe the GPU numbers are a work-efficiency proxy, not GPU timings.

use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::time::Instant;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::instrument::PassTimer;
use sweepfan::gpu::{RadixSort, SortVariant as Variant};

const RUNS: usize = 5;
/// Bandwidth of the hypothetical GPU for the traffic-model estimate.
const MODEL_BANDWIDTH: f64 = 3.0e12;

/// CPU seconds used by this process so far (all threads; lavapipe runs the shaders in ours), from
/// /proc (Linux): immune to other processes' load, unlike wall time. 10 ms resolution.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Best (minimum) wall seconds per label and best process CPU seconds of one measured thing
/// (minimum: the least disturbed run by other processes sharing caches and cores).
struct Measured {
    best: BTreeMap<&'static str, f64>,
    cpu_seconds: f64,
}

impl Default for Measured {
    fn default() -> Self {
        Self {
            best: BTreeMap::new(),
            cpu_seconds: f64::MAX,
        }
    }
}

impl Measured {
    fn keep_min(&mut self, label: &'static str, secs: f64) {
        let e = self.best.entry(label).or_insert(f64::MAX);
        *e = e.min(secs);
    }
}

/// Runs `f` timed; records its wall time under `label` and its CPU time.
fn timed<T>(m: &mut Measured, label: &'static str, f: impl FnOnce() -> T) -> T {
    let cpu0 = process_cpu_seconds();
    let start = Instant::now();
    let out = f();
    m.keep_min(label, start.elapsed().as_secs_f64());
    if let (Some(a), Some(b)) = (cpu0, process_cpu_seconds()) {
        m.cpu_seconds = m.cpu_seconds.min(b - a);
    }
    out
}

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4 << 20);
    let rounds: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(16);
    let ctx = GpuContext::default_adapter()?;
    let mut variants = vec![Variant::Portable];
    if Variant::best(&ctx) == Variant::Subgroup {
        variants.push(Variant::Subgroup);
    }
    let mut sorts = variants
        .iter()
        .map(|&v| {
            let mut sort = RadixSort::with_variant(&ctx, v, rounds)?;
            // A timed pass per stage (frames record the sort in one pass).
            sort.set_stage_timing(true);
            Ok(sort)
        })
        .collect::<sweepfan::Result<Vec<_>>>()?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let bytes = n as u64 * 4;
    let kb = sweepfan::gpu::instrument::storage_buffer(&ctx, "keys", bytes)?;
    let vb = sweepfan::gpu::instrument::storage_buffer(&ctx, "values", bytes)?;

    let mut cpu = Measured::default();
    let mut gpu: Vec<Measured> = variants.iter().map(|_| Measured::default()).collect();
    for _ in 0..RUNS {
        let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        timed(&mut cpu, "sort", || pairs.sort_unstable_by_key(|p| p.0));
        for (sort, m) in sorts.iter_mut().zip(&mut gpu) {
            ctx.queue()
                .write_buffer(&kb, 0, bytemuck::cast_slice(&keys));
            ctx.queue()
                .write_buffer(&vb, 0, bytemuck::cast_slice(&values));
            ctx.wait()?;
            let mut timer = PassTimer::new(&ctx, 64);
            timed(m, "sort (wall)", || -> sweepfan::Result<()> {
                let mut encoder = ctx.device().create_command_encoder(&Default::default());
                sort.encode(&ctx, &mut encoder, &kb, &vb, n as u32, 32, Some(&mut timer))?;
                timer.resolve(&mut encoder);
                ctx.queue().submit([encoder.finish()]);
                ctx.wait()
            })?;
            // Per stage, summed over the 4 passes by the timer.
            for (label, secs) in timer.read(&ctx)? {
                m.keep_min(label, secs);
            }
            // A fast wrong sort must not report a number.
            let got: Vec<u32> = ctx.read(&kb, n)?;
            assert!(
                got.windows(2).all(|w| w[0] <= w[1]),
                "{} sort is wrong",
                sort.variant().name()
            );
        }
    }

    let cpu_wall = cpu.best["sort"];
    println!(
        "{n} pairs, 32-bit keys, {rounds} x 256 keys per block, on '{}' (subgroups {}..{}), \
         best of {RUNS}:",
        ctx.info().name,
        ctx.info().subgroup_min_size,
        ctx.info().subgroup_max_size
    );
    println!(
        "  cpu sort_unstable_by_key: {:.1} ms wall, {:.0} ms CPU",
        cpu_wall * 1e3,
        cpu.cpu_seconds * 1e3
    );
    print!("  {:<42}", "");
    for v in &variants {
        print!("{:>14}", v.name());
    }
    println!();
    let labels: Vec<&'static str> = gpu
        .iter()
        .flat_map(|m| m.best.keys().copied())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let row = |name: &str, f: &dyn Fn(&Measured, &RadixSort) -> String| {
        print!("  {name:<42}");
        for (m, s) in gpu.iter().zip(&sorts) {
            print!("{:>14}", f(m, s));
        }
        println!();
    };
    for label in labels {
        let name = if label == "sort (wall)" {
            "whole sort, wall (ms)".to_string()
        } else {
            format!("{label}, 4 passes, timestamps (ms)")
        };
        row(&name, &|m, _| {
            m.best
                .get(label)
                .map_or("-".into(), |s| format!("{:.1}", s * 1e3))
        });
    }
    row("whole sort, process CPU (ms)", &|m, _| {
        format!("{:.0}", m.cpu_seconds * 1e3)
    });
    row("gpu / cpu, wall (x)", &|m, _| {
        format!("{:.1}", m.best["sort (wall)"] / cpu_wall)
    });
    if cpu.cpu_seconds > 0.0 && cpu.cpu_seconds < f64::MAX {
        row("gpu / cpu, CPU time (x)", &|m, _| {
            format!("{:.1}", m.cpu_seconds / cpu.cpu_seconds)
        });
    }
    row("keys/s, wall (M)", &|m, _| {
        format!("{:.1}", n as f64 / m.best["sort (wall)"] / 1e6)
    });
    row("traffic model (B/key/pass)", &|_, s| {
        format!("{:.2}", s.bytes_per_key_per_pass())
    });
    for m in [4usize << 20, 16 << 20] {
        row(
            &format!("ESTIMATE at 3 TB/s, {}M keys (us)", m >> 20),
            &|_, s| {
                let secs = m as f64 * 4.0 * s.bytes_per_key_per_pass() / MODEL_BANDWIDTH;
                format!("{:.0}", secs * 1e6)
            },
        );
    }
    println!("  (ESTIMATE: bandwidth model, not a measurement; lavapipe times are no GPU times)");
    Ok(())
}
