//! The GPU radix sort against `slice::sort_by_key` (stable): values carry the original
//! positions, so any instability or lost/duplicated element shows up. Every test runs each
//! variant the device offers: portable, subgroup (its default digit matching) and subgroup with
//! ballot matching (the any-size path, which fixed-size adapters such as lavapipe skip).

use crate::common::test_gpu;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::instrument::{self as plan, plan_for};
use sweepfan::gpu::{RadixSort, SortVariant as Variant};

/// Oracle: Rust's stable sort on the low `key_bits` bits.
fn cpu_sort(keys: &[u32], key_bits: u32) -> (Vec<u32>, Vec<u32>) {
    let mask = if key_bits == 32 {
        u32::MAX
    } else {
        (1u32 << key_bits) - 1
    };
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(0u32..).collect();
    pairs.sort_by_key(|&(k, _)| k & mask);
    pairs.into_iter().unzip()
}

fn check(ctx: &GpuContext, sort: &mut RadixSort, keys: &[u32], key_bits: u32, what: &str) {
    let want = cpu_sort(keys, key_bits);
    check_against(ctx, sort, keys, key_bits, &want, what);
}

fn check_against(
    ctx: &GpuContext,
    sort: &mut RadixSort,
    keys: &[u32],
    key_bits: u32,
    want: &(Vec<u32>, Vec<u32>),
    what: &str,
) {
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let got = sort.sort_pairs_bits(ctx, keys, &values, key_bits).unwrap();
    if got != *want {
        let first = (0..keys.len())
            .find(|&i| got.0[i] != want.0[i] || got.1[i] != want.1[i])
            .unwrap_or(0);
        panic!(
            "{} {what} (n = {}, key_bits = {key_bits}): first difference at {first}: got ({}, {}), \
             want ({}, {})",
            sort.variant().name(),
            keys.len(),
            got.0[first],
            got.1[first],
            want.0[first],
            want.1[first]
        );
    }
}

fn distributions(n: usize, seed: u64) -> Vec<(&'static str, Vec<u32>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let random: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let mut sorted = random.clone();
    sorted.sort_unstable();
    let reversed: Vec<u32> = sorted.iter().rev().copied().collect();
    let few_unique: Vec<u32> = (0..n)
        .map(|_| [7u32, 0x8000_0000, 0xFFFF_FFFF, 0x0100_0000][rng.random_range(0..4)])
        .collect();
    vec![
        ("random", random),
        ("sorted", sorted),
        ("reversed", reversed),
        ("all equal", vec![0xDEAD_BEEF; n]),
        ("few unique", few_unique),
    ]
}

/// Every variant the device runs, with `rounds` x 256 keys per block: (label, sort).
fn sorts(ctx: &GpuContext, rounds: u32) -> Vec<(&'static str, RadixSort)> {
    let mut out = vec![(
        "portable",
        RadixSort::with_variant(ctx, Variant::Portable, rounds).unwrap(),
    )];
    if Variant::best(ctx) == Variant::Subgroup {
        out.push((
            "subgroup",
            RadixSort::with_variant(ctx, Variant::Subgroup, rounds).unwrap(),
        ));
        out.push((
            "subgroup, ballots",
            RadixSort::subgroup_with_ballots(ctx, rounds).unwrap(),
        ));
    } else {
        eprintln!(
            "note: '{}' cannot run the subgroup variant",
            ctx.info().name
        );
    }
    out
}

#[test]
fn new_sorts_with_the_plan_for_each_n() {
    let Some(ctx) = test_gpu() else { return };
    let mut sort = RadixSort::new(&ctx).unwrap();
    // Below and above the size where the subgroup scatter fills a GPU of this adapter's lanes
    // (2^23 keys on lavapipe's 8): one sort object, kernels built per plan, all exact.
    let lanes = ctx.info().subgroup_min_size.max(4);
    let switch = (256 * 2 * plan::FILL_INVOCATIONS / lanes as u64) as usize;
    let mut seen = Vec::new();
    for n in [5_000usize, 300_000, switch] {
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        check(&ctx, &mut sort, &keys, 32, "random");
        let planned = plan_for(&ctx, n as u32);
        assert_eq!((sort.variant(), sort.rounds()), planned, "n = {n}");
        seen.push(planned.0);
    }
    // The tiled sort at every n where the adapter gives a workgroup its memory; else the
    // portable scatter, then the subgroup one where it fills the GPU.
    if sweepfan::gpu::instrument::tiled_sort_unsupported(&ctx).is_none() {
        assert!(seen.iter().all(|&v| v == Variant::Tiles), "{seen:?}");
    } else {
        assert_eq!(seen[0], Variant::Portable);
        if Variant::best(&ctx) == Variant::Subgroup {
            assert_eq!(seen[2], Variant::Subgroup, "n = {switch}");
        }
    }
    assert_eq!(
        RadixSort::portable(&ctx).unwrap().variant(),
        Variant::Portable
    );
    if !ctx.has_subgroups() {
        let Err(e) = RadixSort::with_variant(&ctx, Variant::Subgroup, 16) else {
            panic!("the subgroup variant needs subgroups");
        };
        assert!(e.to_string().contains("subgroup"), "{e}");
    }
}

#[test]
fn every_block_size_the_plan_uses() {
    let Some(ctx) = test_gpu() else { return };
    for rounds in [2, 4, 8] {
        for (_, mut sort) in sorts(&ctx, rounds) {
            for n in [257usize, 256 * rounds as usize + 1, 40_000] {
                for (what, keys) in distributions(n, n as u64 + rounds as u64) {
                    check(&ctx, &mut sort, &keys, 32, what);
                }
            }
        }
    }
}

#[test]
fn every_distribution_at_small_sizes() {
    let Some(ctx) = test_gpu() else { return };
    for (_, mut sort) in sorts(&ctx, 16) {
        // Around one subgroup's round, the 256-key round and the 4,096-key block.
        for n in [0usize, 1, 2, 7, 9, 255, 256, 257, 4095, 4096, 4097, 10_000] {
            for (what, keys) in distributions(n, n as u64) {
                check(&ctx, &mut sort, &keys, 32, what);
            }
        }
    }
}

#[test]
fn every_distribution_with_one_round_blocks() {
    let Some(ctx) = test_gpu() else { return };
    // 256-key blocks: many blocks per digit, the scan spans several levels.
    for (_, mut sort) in sorts(&ctx, 1) {
        for n in [255usize, 256, 257, 70_001] {
            for (what, keys) in distributions(n, 100 + n as u64) {
                check(&ctx, &mut sort, &keys, 32, what);
            }
        }
    }
}

#[test]
fn other_block_sizes() {
    let Some(ctx) = test_gpu() else { return };
    // Odd and largest rounds (the subgroup variant keeps that many keys per invocation).
    for rounds in [3, 64] {
        for (_, mut sort) in sorts(&ctx, rounds) {
            for n in [rounds as usize * 256 - 1, 50_000] {
                for (what, keys) in distributions(n, 7 + n as u64) {
                    check(&ctx, &mut sort, &keys, 32, what);
                }
            }
        }
    }
}

#[test]
fn a_million_keys() {
    let Some(ctx) = test_gpu() else { return };
    let n = (1 << 20) + 3;
    let cases: Vec<_> = distributions(n, 1)
        .into_iter()
        .filter(|(what, _)| ["random", "few unique"].contains(what))
        .map(|(what, keys)| {
            let want = cpu_sort(&keys, 32);
            (what, keys, want)
        })
        .collect();
    for (_, mut sort) in sorts(&ctx, 16) {
        for (what, keys, want) in &cases {
            check_against(&ctx, &mut sort, keys, 32, want, what);
        }
    }
}

#[test]
fn partial_key_bits_ignore_the_high_bits() {
    let Some(ctx) = test_gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let keys: Vec<u32> = (0..20_000).map(|_| rng.random()).collect();
    for (_, mut sort) in sorts(&ctx, 16) {
        // Odd and even pass counts, widths that end mid-digit; high bits must not affect the order.
        for bits in [1, 3, 8, 9, 12, 16, 17, 24, 25, 31, 32] {
            check(&ctx, &mut sort, &keys, bits, "random");
        }
    }
}

#[test]
fn more_than_65535_workgroups() {
    let Some(ctx) = test_gpu() else { return };
    // One-round blocks of 256 keys: one block past the per-dimension limit stays at 64 MiB.
    // One pass (8 bits, result copied back from the scratch buffers) keeps it fast; the high
    // 24 bits of the keys ride along untouched. The subgroup scatter takes several blocks per
    // workgroup, so only its histogram passes the limit here; the forced-2D unit test in
    // src/gpu/sort/radix_sort/tests.rs covers its 2D grid.
    let n = ctx.limits().max_compute_workgroups_per_dimension as usize * 256 + 1;
    let mut rng = ChaCha8Rng::seed_from_u64(65_536);
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let want = cpu_sort(&keys, 8);
    for (_, mut sort) in sorts(&ctx, 1) {
        check_against(&ctx, &mut sort, &keys, 8, &want, "random");
    }
}
