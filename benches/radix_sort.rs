//! GPU radix sort throughput (every variant the device runs) vs `sort_unstable_by_key` on one
//! core, plus a memory-traffic model.
//! `cargo bench --bench radix_sort` (SWEEPFAN_SORT_N overrides the default 4M pairs).
//! On lavapipe (software Vulkan) the GPU number is a work-efficiency proxy, not a GPU timing.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::{RadixSort, SortVariant as Variant};

/// Bandwidth of the hypothetical GPU for the traffic-model estimate.
const MODEL_BANDWIDTH: f64 = 3.0e12;

fn pair_count() -> usize {
    std::env::var("SWEEPFAN_SORT_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 << 20)
}

fn bench_sort(c: &mut Criterion) {
    let n = pair_count();
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..n as u32).collect();

    let mut group = c.benchmark_group("radix_sort");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(n as u64));

    group.bench_function(format!("cpu_sort_unstable_by_key/{n}"), |b| {
        let pairs: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        b.iter_batched_ref(
            || pairs.clone(),
            |p| p.sort_unstable_by_key(|&(k, _)| k),
            BatchSize::LargeInput,
        );
    });

    let ctx = match GpuContext::default_adapter() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("no GPU benchmark: {e}");
            return;
        }
    };
    let bytes = n as u64 * 4;
    let pristine_k =
        sweepfan::gpu::instrument::storage_buffer(&ctx, "pristine keys", bytes).unwrap();
    let pristine_v =
        sweepfan::gpu::instrument::storage_buffer(&ctx, "pristine values", bytes).unwrap();
    let kb = sweepfan::gpu::instrument::storage_buffer(&ctx, "keys", bytes).unwrap();
    let vb = sweepfan::gpu::instrument::storage_buffer(&ctx, "values", bytes).unwrap();
    ctx.queue()
        .write_buffer(&pristine_k, 0, bytemuck::cast_slice(&keys));
    ctx.queue()
        .write_buffer(&pristine_v, 0, bytemuck::cast_slice(&values));

    let mut variants = vec![Variant::Portable];
    if Variant::best(&ctx) == Variant::Subgroup {
        variants.push(Variant::Subgroup);
    }
    let mut models = Vec::new();
    for variant in variants {
        let mut sort = RadixSort::with_variant(&ctx, variant, 16).expect("radix sort");
        // Correctness once, so a fast wrong sort cannot report a number.
        let (sk, _) = sort.sort_pairs(&ctx, &keys, &values).unwrap();
        assert!(
            sk.windows(2).all(|w| w[0] <= w[1]),
            "GPU sort ({}) is wrong",
            variant.name()
        );
        let label = format!(
            "gpu_radix_sort_32bit/{}/{}/{n}",
            variant.name(),
            ctx.info().name
        );
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Restore the unsorted input outside the timed submission.
                    let mut enc = ctx.device().create_command_encoder(&Default::default());
                    enc.copy_buffer_to_buffer(&pristine_k, 0, &kb, 0, bytes);
                    enc.copy_buffer_to_buffer(&pristine_v, 0, &vb, 0, bytes);
                    ctx.queue().submit([enc.finish()]);
                    ctx.wait().unwrap();
                    let start = Instant::now();
                    let mut enc = ctx.device().create_command_encoder(&Default::default());
                    sort.encode(&ctx, &mut enc, &kb, &vb, n as u32, 32, None)
                        .unwrap();
                    ctx.queue().submit([enc.finish()]);
                    ctx.wait().unwrap();
                    total += start.elapsed();
                }
                total
            });
        });
        models.push((variant, sort.bytes_per_key_per_pass()));
    }
    group.finish();

    for (variant, per_pass) in models {
        println!(
            "traffic model ({}): {per_pass:.2} bytes per key per 8-bit pass, {:.1} per 32-bit sort",
            variant.name(),
            4.0 * per_pass
        );
        for m in [4usize << 20, 16 << 20] {
            let secs = m as f64 * 4.0 * per_pass / MODEL_BANDWIDTH;
            println!(
                "ESTIMATE (bandwidth model, not measured), {}: {m} keys, 32-bit, at 3 TB/s: \
                 {:.0} us",
                variant.name(),
                secs * 1e6
            );
        }
    }
}

criterion_group!(benches, bench_sort);
criterion_main!(benches);
