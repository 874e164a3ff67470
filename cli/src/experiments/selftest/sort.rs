//! Radix sort checks: every variant the device runs, against a stable sort on the CPU.

use super::{Checks, Level, SelftestConfig, Stage};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::Arc;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::{RadixSort, SortVariant as Variant};

/// Keys per block of the default sort (256 x 16 rounds): sizes around it cross block edges.
const BLOCK: usize = 4096;

#[derive(Clone, Copy)]
enum Pattern {
    Random,
    Sorted,
    Reversed,
    AllEqual,
    FewUnique,
}

impl Pattern {
    const ALL: [Pattern; 5] = [
        Pattern::Random,
        Pattern::Sorted,
        Pattern::Reversed,
        Pattern::AllEqual,
        Pattern::FewUnique,
    ];

    fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Sorted => "sorted",
            Pattern::Reversed => "reversed",
            Pattern::AllEqual => "all-equal",
            Pattern::FewUnique => "few-unique",
        }
    }

    fn keys(self, n: usize, seed: u64) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        match self {
            Pattern::Random => (0..n).map(|_| rng.random()).collect(),
            Pattern::Sorted => (0..n as u32).map(|i| i.wrapping_mul(3)).collect(),
            Pattern::Reversed => (0..n as u32).rev().map(|i| i.wrapping_mul(3)).collect(),
            Pattern::AllEqual => vec![0xA5A5_5A5A; n],
            // Digits of few values in every byte: one shared counter per digit in the
            // histograms, long runs of one digit in the scatter.
            Pattern::FewUnique => {
                let values = [0u32, 0x0100_0001, 0xFF00_FF00, 0x1234_5678, u32::MAX];
                (0..n).map(|_| values[rng.random_range(0..5)]).collect()
            }
        }
    }
}

/// The variants this device runs: (name, sort).
fn variants(ctx: &GpuContext) -> Vec<(&'static str, sweepfan::error::Result<RadixSort>)> {
    let mut v = vec![("portable", RadixSort::portable(ctx))];
    if Variant::best(ctx) == Variant::Subgroup {
        v.push((
            "subgroup",
            RadixSort::with_variant(ctx, Variant::Subgroup, 16),
        ));
        // The any-size ballot matching, where the device would pick broadcasts.
        v.push((
            "subgroup-ballots",
            RadixSort::subgroup_with_ballots(ctx, 16),
        ));
    }
    v
}

/// Stable ascending sort by key of (key, index): what the GPU must return.
fn reference(keys: &[u32], bits: u32) -> (Vec<u32>, Vec<u32>) {
    let mask = if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    idx.par_sort_by_key(|&i| keys[i as usize] & mask);
    (idx.iter().map(|&i| keys[i as usize]).collect(), idx)
}

fn compare(
    want: (Vec<u32>, Vec<u32>),
    got: (Vec<u32>, Vec<u32>),
) -> std::result::Result<String, String> {
    let first_bad = (0..want.0.len()).find(|&i| want.0[i] != got.0[i] || want.1[i] != got.1[i]);
    match first_bad {
        None if want.0.len() == got.0.len() => Ok("keys and values equal a stable CPU sort".into()),
        None => Err(format!("{} keys back, {} sent", got.0.len(), want.0.len())),
        Some(i) => Err(format!(
            "position {i}: (key {:#x}, value {}) where a stable sort has ({:#x}, {})",
            got.0[i], got.1[i], want.0[i], want.1[i]
        )),
    }
}

fn one(
    checks: &mut Checks<'_>,
    ctx: &GpuContext,
    sort: &mut RadixSort,
    name: String,
    keys: &[u32],
    bits: u32,
) {
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let fault = checks.faulty(Stage::Sort);
    checks.run(
        name,
        keys.len() as u64,
        || sort.sort_pairs_bits(ctx, keys, &values, bits),
        |mut got| {
            if fault && let Some(v) = got.1.get_mut(keys.len() / 2) {
                *v ^= 1;
            }
            Ok(compare(reference(keys, bits), got))
        },
    );
}

pub(super) fn checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    let max_keys = (ctx.max_binding_bytes() / 4) as usize;
    let mut sizes = vec![1, 257, 3 * BLOCK + 5, 100_003];
    if cfg.level == Level::Full {
        // Past 65,535 blocks (a 2D grid of workgroups) where one binding holds that many keys.
        sizes.extend([1 << 20, (1 << 24) + 3, 65_535 * BLOCK + BLOCK + 1]);
    }
    sizes.retain(|&n| n <= max_keys);
    for (variant, sort) in variants(ctx) {
        let mut sort = match sort {
            Ok(s) => s,
            Err(e) => {
                checks.run(
                    format!("sort/{variant}"),
                    0,
                    || Err::<(), _>(e),
                    |_| Ok(Ok(String::new())),
                );
                continue;
            }
        };
        for (s, &n) in sizes.iter().enumerate() {
            let large = n > 1 << 20;
            for pattern in Pattern::ALL {
                // The largest sizes: the two patterns that stress different paths.
                if large && !matches!(pattern, Pattern::Random | Pattern::FewUnique) {
                    continue;
                }
                let keys = pattern.keys(n, cfg.seed + s as u64);
                let name = format!("sort/{variant}/{}", pattern.name());
                one(checks, ctx, &mut sort, name, &keys, 32);
            }
        }
        // Fewer key bits (fewer passes, an odd count copies back), then a 2D grid of
        // workgroups with overshoot groups (3 per dimension), at small n.
        let keys = Pattern::Random.keys(50_001, cfg.seed + 99);
        one(
            checks,
            ctx,
            &mut sort,
            format!("sort/{variant}/13-bit"),
            &keys,
            13,
        );
        sort.set_max_groups_per_dim(3);
        let keys = Pattern::Random.keys(10 * BLOCK + 1, cfg.seed + 98);
        let name = format!("sort/{variant}/2d-grid");
        one(checks, ctx, &mut sort, name, &keys, 32);
    }
}
