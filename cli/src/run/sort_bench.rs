//! `sweepfan sort-bench`: the GPU radix sort of (u32 key, u32 value) pairs timed per size, for
//! the plan [`RadixSort::new`] picks and for each fixed variant, each size's last repetition checked (sorted,
//! stable, a permutation). The numbers set beside CUB's (`torch.sort`) on the same GPU
//! (`scripts/gpu-figures.sh`).

use crate::run::bench::median;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::time::Instant;
use sweepfan::error::{Error, Result};
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::instrument as readback;
use sweepfan::gpu::instrument::PassTimer;
use sweepfan::gpu::instrument::plan_for;
use sweepfan::gpu::instrument::{self, Readback};
use sweepfan::gpu::{RadixSort, SortVariant as Variant};

/// One configuration at one size.
#[derive(Clone, Debug, Serialize)]
pub struct SortRow {
    pub n: usize,
    /// `plan` (what `RadixSort::new` chose) or a fixed variant at 16 rounds.
    pub config: String,
    pub variant: String,
    pub rounds: u32,
    /// Median over the timed repetitions: the sort's passes from timestamp queries when the
    /// adapter has them (`clock` = "gpu timestamps"), else wall time around submit and wait.
    pub ms: f64,
    pub gpairs_per_s: f64,
    pub clock: &'static str,
    /// Sorted by key, stable, and a permutation of the input (checked on the last repetition).
    pub verified: bool,
    pub device: String,
    /// Digit passes the sort ran (the tiled sort skips those where every key has the same
    /// digit; the others run every pass of the key bits).
    pub passes_run: u32,
    /// Dispatches one sort recorded.
    pub dispatches: u64,
    /// The sort's own model (docs/design.md §9.8): device bytes a pair, for the passes run.
    pub model_bytes_per_pair: f64,
    /// The time those bytes take at `--bandwidth` (GB/s), when known.
    pub model_ms: Option<f64>,
    /// 32-byte sectors a 32-lane store of keys touches, per key, in a digit pass over these
    /// keys (`radix_tiles::write_sectors_per_key`, on the first 65,536).
    pub write_sectors_per_key: f64,
    /// Per sort (keys written, sorted, timestamps read): objects created and bytes moved, the
    /// median over the timed runs after the first two (docs/design.md §9.16).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::run::row::SteadyCounts>,
}

/// Host bytes per key of one size, at most: keys and values (8), their read-back copies (8),
/// the mapped staging buffer (8) and the permutation check's flags (1), rounded up.
const HOST_BYTES_PER_KEY: u64 = 32;

/// Sizes, repetitions, seed; the keys' width (random below 2^key_bits, sorted on all 32 bits)
/// and the bandwidth the model's times assume (GB/s; `None`: the adapter's where known).
#[derive(Clone, Debug)]
pub struct SortBenchConfig {
    pub sizes: Vec<usize>,
    pub reps: usize,
    pub seed: u64,
    pub key_bits: u32,
    pub bandwidth: Option<f64>,
    /// Configurations to time (`plan`, `portable`, `subgroup`); empty: every one the adapter
    /// runs. One a process avoids one configuration's caches and clocks colouring the next.
    pub configs: Vec<String>,
}

/// Device-memory bandwidth (GB/s) of the GPUs measured so far, by adapter name: the model's
/// default.
pub fn known_bandwidth(name: &str) -> Option<f64> {
    if name.contains("H200") {
        Some(4800.0)
    } else if name.contains("H100 PCIe") {
        Some(2000.0)
    } else if name.contains("H100") {
        Some(3350.0)
    } else {
        None
    }
}

/// Times every configuration at every size; sizes past the adapter's binding limit end the run
/// with the sizes done (the caller says so) unless none fits.
pub fn run_sort_bench(ctx: &GpuContext, cfg: &SortBenchConfig) -> Result<(Vec<SortRow>, String)> {
    if cfg.sizes.is_empty() || cfg.reps == 0 {
        return Err(Error::Config(
            "sort-bench: needs at least one size and one repetition".into(),
        ));
    }
    // Sizes and repetitions from flags are checked before anything is allocated for them
    // (docs/design.md §9.14): the repetitions here, each size before its keys are made.
    super::check_count_fits(&format!("--reps {}", cfg.reps), cfg.reps, 8, |fit| {
        format!("use fewer --reps (about {fit} fit)")
    })?;
    let wanted = |name: &str| cfg.configs.is_empty() || cfg.configs.iter().any(|c| c == name);
    for c in &cfg.configs {
        if !["plan", "portable", "subgroup"].contains(&c.as_str()) {
            return Err(Error::Config(format!(
                "sort-bench: '{}' is not a configuration (plan, portable, subgroup)",
                sweepfan::error::shown(c)
            )));
        }
    }
    let mut configs: Vec<(String, RadixSort)> = Vec::new();
    if wanted("plan") {
        configs.push(("plan".into(), RadixSort::new(ctx)?));
    }
    if wanted("portable") {
        configs.push(("portable".into(), RadixSort::portable(ctx)?));
    }
    if wanted("subgroup") && Variant::best(ctx) == Variant::Subgroup {
        configs.push((
            "subgroup".into(),
            RadixSort::with_variant(ctx, Variant::Subgroup, 16)?,
        ));
    }
    if configs.is_empty() {
        return Ok((
            Vec::new(),
            "this adapter cannot run the subgroup configuration: nothing timed".into(),
        ));
    }
    let device = crate::run::gpu::device_label(ctx);
    let mut rows = Vec::new();
    let note = String::new();
    let mut timer = PassTimer::new(ctx, 64);
    let mut rb = Readback::new("sort-bench readback");
    // Every size is checked before the first runs: a size past the host's memory or a binding
    // is refused with its reason, not dropped from the table after the smaller ones ran (a
    // job asking for 1K,64K got 1K and a note, with exit status 0).
    for &n in &cfg.sizes {
        super::count_u32("keys", n)?;
        super::check_count_fits(
            &format!("sort-bench n = {n}"),
            n,
            HOST_BYTES_PER_KEY,
            |fit| format!("use smaller --sizes (about {fit} keys fit)"),
        )?;
        ctx.check_binding(&format!("sort keys of --sizes {n}"), n as u64 * 4)?;
    }
    for &n in &cfg.sizes {
        let n32 = super::count_u32("keys", n)?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed ^ n as u64);
        let keys: Vec<u32> = (0..n)
            .map(|_| match cfg.key_bits {
                32 => rng.random(),
                bits => rng.random_range(0..1u32 << bits),
            })
            .collect();
        let values: Vec<u32> = (0..n32).collect();
        let kb = instrument::storage_buffer(ctx, "sort-bench keys", n as u64 * 4)?;
        let vb = instrument::storage_buffer(ctx, "sort-bench values", n as u64 * 4)?;
        for (name, sort) in &mut configs {
            let mut times = Vec::with_capacity(cfg.reps);
            let mut counts = crate::run::bench::Measurement::default();
            let mut verified = false;
            let (mut passes_run, mut dispatches) = (32u32.div_ceil(8), 0);
            // One warm-up run (pipelines, scratch buffers), then the timed ones.
            for rep in 0..=cfg.reps {
                let before = ctx.counts();
                let _frame = ctx.frame();
                instrument::write_buffer(ctx, &kb, 0, bytemuck::cast_slice(&keys));
                instrument::write_buffer(ctx, &vb, 0, bytemuck::cast_slice(&values));
                ctx.wait()?;
                timer.reset();
                let last = rep == cfg.reps;
                let t = Instant::now();
                let mut enc = ctx.device().create_command_encoder(&Default::default());
                sort.encode(ctx, &mut enc, &kb, &vb, n32, 32, Some(&mut timer))?;
                timer.resolve(&mut enc);
                rb.clear();
                let times_at = rb.add_timer(&timer);
                let (ka, va) = if last {
                    (rb.add(&kb, 0, n as u64 * 4), rb.add(&vb, 0, n as u64 * 4))
                } else {
                    (0..0, 0..0)
                };
                let passes_at = sort.passes_run_at().map(|(buf, at)| rb.add(buf, at, 4));
                rb.record(ctx, &mut enc)?;
                ctx.queue().submit([enc.finish()]);
                let (gpu_s, ok, passes) = rb.map(ctx, |bytes| {
                    let s: f64 = timer
                        .times_from(ctx, &bytes[times_at.clone()])
                        .iter()
                        .map(|(_, s)| s)
                        .sum();
                    let ok = last
                        && sorted_stable_permutation(
                            &keys,
                            &readback::words(&bytes[ka.clone()]),
                            &readback::words(&bytes[va.clone()]),
                        );
                    let passes = passes_at
                        .as_ref()
                        .map(|r| readback::words(&bytes[r.clone()])[0]);
                    (s, ok, passes)
                })?;
                if let Some(p) = passes {
                    passes_run = p;
                }
                dispatches = ctx.counts().since(before).dispatches;
                let wall = t.elapsed().as_secs_f64();
                if rep > 0 {
                    times.push(if ctx.has_timestamps() { gpu_s } else { wall });
                    counts.device.push(ctx.counts().since(before));
                }
                verified = ok;
            }
            let ms = 1e3 * median(&times);
            let tile = match sort.variant() {
                Variant::Tiles => sweepfan::gpu::instrument::sort_tile_keys(ctx),
                _ => None,
            };
            let model_bytes_per_pair = match tile {
                Some(tile) => {
                    sweepfan::gpu::instrument::sort_bytes_per_pair(passes_run, tile, n as u64)
                }
                None => passes_run as f64 * sort.bytes_per_key_per_pass(),
            };
            let bandwidth = cfg.bandwidth.or_else(|| known_bandwidth(&ctx.info().name));
            let sample = &keys[..n.min(1 << 16)];
            rows.push(SortRow {
                n,
                config: name.clone(),
                variant: sort.variant().name().into(),
                rounds: sort.rounds(),
                ms,
                gpairs_per_s: n as f64 / (ms * 1e-3) / 1e9,
                clock: if ctx.has_timestamps() {
                    "gpu timestamps"
                } else {
                    "wall"
                },
                verified,
                device: device.clone(),
                passes_run,
                dispatches,
                model_bytes_per_pair,
                model_ms: bandwidth
                    .map(|gbps| n as f64 * model_bytes_per_pair / (gbps * 1e9) * 1e3),
                write_sectors_per_key: sweepfan::gpu::instrument::write_sectors_per_key(
                    sample, tile,
                ),
                steady: counts.steady_counts(),
            });
            debug_assert!(name != "plan" || (sort.variant(), sort.rounds()) == plan_for(ctx, n32));
        }
    }
    Ok((rows, note))
}

/// Whether (`keys_out`, `values_out`) is `keys` sorted stably: keys non-decreasing, every value
/// an input index used once, carrying its key, and equal keys in input order.
pub fn sorted_stable_permutation(keys: &[u32], keys_out: &[u32], values_out: &[u32]) -> bool {
    if keys_out.len() != keys.len() || values_out.len() != keys.len() {
        return false;
    }
    let mut seen = vec![false; keys.len()];
    for i in 0..keys.len() {
        let v = values_out[i] as usize;
        if v >= keys.len() || seen[v] || keys[v] != keys_out[i] {
            return false;
        }
        seen[v] = true;
        if i > 0
            && (keys_out[i - 1] > keys_out[i]
                || (keys_out[i - 1] == keys_out[i] && values_out[i - 1] > values_out[i]))
        {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_rejects_unsorted_unstable_and_lost_elements() {
        let keys = [5, 1, 5, 0];
        // (sorted keys, permutation, whether the check accepts them, what is wrong).
        let cases: [([u32; 4], [u32; 4], bool, &str); 5] = [
            ([0, 1, 5, 5], [3, 1, 0, 2], true, "sorted, stable"),
            (
                [0, 1, 5, 5],
                [3, 1, 2, 0],
                false,
                "unstable: equal keys out of input order",
            ),
            ([1, 0, 5, 5], [1, 3, 0, 2], false, "unsorted"),
            (
                [0, 1, 5, 5],
                [3, 1, 0, 0],
                false,
                "an element lost, another twice",
            ),
            (
                [0, 1, 5, 5],
                [1, 3, 0, 2],
                false,
                "a value carrying the wrong key",
            ),
        ];
        for (sorted, values, ok, what) in cases {
            assert_eq!(
                sorted_stable_permutation(&keys, &sorted, &values),
                ok,
                "{what}"
            );
        }
    }

    #[test]
    fn every_configuration_sorts_and_is_timed() {
        let Some(ctx) = crate::run::gpu::test_gpu() else {
            return;
        };
        let cfg = SortBenchConfig {
            sizes: vec![1_000, 70_000],
            reps: 2,
            seed: 3,
            key_bits: 32,
            bandwidth: Some(1000.0),
            configs: Vec::new(),
        };
        let (rows, note) = run_sort_bench(&ctx, &cfg).unwrap();
        assert!(note.is_empty());
        let per_size = if Variant::best(&ctx) == Variant::Subgroup {
            3
        } else {
            2
        };
        assert_eq!(rows.len(), 2 * per_size);
        for r in &rows {
            assert!(r.verified, "{r:?}");
            assert!(r.ms > 0.0 && r.gpairs_per_s > 0.0, "{r:?}");
        }
        let plan = rows
            .iter()
            .find(|r| r.config == "plan" && r.n == 70_000)
            .unwrap();
        let (v, rounds) = plan_for(&ctx, 70_000);
        assert_eq!((plan.variant.as_str(), plan.rounds), (v.name(), rounds));
    }
}
