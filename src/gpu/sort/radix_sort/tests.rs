//! Tests of the radix sort and its plan (mod.rs).

use super::*;

#[test]
fn the_plan_fills_32_and_64_lane_gpus_and_keeps_blocks_large() {
    // (n, subgroup lanes) -> (variant, rounds), from FILL_INVOCATIONS = 2^17 by hand.
    let p = Variant::Portable;
    let s = Variant::Subgroup;
    let table = [
        (1_000, Some(32), (p, 4)),
        (1 << 20, Some(32), (p, 8)),
        ((1 << 21) - 1, Some(32), (p, 8)),
        (1 << 21, Some(32), (s, 2)),
        (1 << 22, Some(32), (s, 4)),
        (1 << 24, Some(32), (s, 16)),
        (1 << 26, Some(32), (s, 16)),
        (1 << 20, Some(64), (s, 2)),
        (1 << 20, Some(8), (p, 8)),
        (1 << 23, Some(8), (s, 2)),
        (1 << 20, None, (p, 8)),
        (1 << 22, None, (p, 16)),
        (1 << 26, None, (p, 16)),
        (3 * (1 << 20), None, (p, 16)),
        (3 * (1 << 20), Some(32), (s, 2)),
    ];
    for (n, lanes, want) in table {
        assert_eq!(plan(n, lanes), want, "n = {n}, lanes {lanes:?}");
    }
    // Every plan keeps its invocations at or above the fill target once n allows it.
    for n in [1u64 << 20, 1 << 22, 1 << 24, 1 << 26] {
        for lanes in [None, Some(32), Some(64)] {
            let (v, r) = plan(n, lanes);
            let per_block = match v {
                Variant::Portable | Variant::Tiles => 256,
                Variant::Subgroup => lanes.unwrap(),
            };
            let in_flight = n / (256 * r as u64) * per_block;
            assert!(
                in_flight >= FILL_INVOCATIONS,
                "n = {n}, {lanes:?}: {in_flight}"
            );
        }
    }
}
use crate::broadphase::keys::{from_ordered_bits, ordered_bits};
use crate::gpu::context::test_gpu;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn special_floats() -> Vec<f32> {
    let mut v = vec![
        f32::NEG_INFINITY,
        f32::MIN,
        -1.0e30,
        -1.5,
        -1.0,
        -f32::MIN_POSITIVE,
        -1.0e-45, // a negative subnormal
        -0.0,
        0.0,
        1.0e-45,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        1.0,
        1.0 + f32::EPSILON,
        1.0e30,
        f32::MAX,
        f32::INFINITY,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    v.extend(
        (0..500)
            .map(|_| f32::from_bits(rng.random()))
            .filter(|f| !f.is_nan()),
    );
    v
}

#[test]
fn ordered_keys_follow_the_float_order() {
    let v = special_floats();
    for &a in &v {
        for &b in &v {
            // Float comparison, not `total_cmp`: -0.0 and +0.0 are one key.
            assert_eq!(
                Some(ordered_bits(a).cmp(&ordered_bits(b))),
                a.partial_cmp(&b),
                "{a:e} vs {b:e}"
            );
        }
    }
}

#[test]
fn wgsl_ordered_keys_match_rust() {
    let Some(ctx) = test_gpu() else { return };
    // Test-only kernel around the shared snippet.
    let source = crate::gpu::shader::compose_text(
        "// #import ordered_float.wgsl
         @group(0) @binding(0) var<storage, read_write> io: array<u32>;
         @compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {
             {
                 let n = arrayLength(&io) / 2u;
                 if (id.x < n) {
                     let key = ordered(bitcast<f32>(io[id.x]));
                     io[id.x] = key;
                     io[n + id.x] = bitcast<u32>(unordered(key));
                 }
             }
         }",
        ctx.math(),
    )
    .unwrap();
    let module = ctx.shader("ordered_float test", &source).unwrap();
    let pipeline = ctx.pipeline(&module, "main", &[]).unwrap();
    let v = special_floats();
    // The floats' bits, then room for the floats given back by their keys.
    let mut bits: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
    bits.extend(bits.clone());
    let buf = ctx.storage_buffer("io", bits.len() as u64 * 4).unwrap();
    ctx.write_buffer(&buf, 0, bytemuck::cast_slice(&bits));
    let bg = ctx.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[exact_binding(0, &buf, bits.len() as u32)],
    });
    ctx.submit_dispatch(&pipeline, &bg, [(bits.len() as u32).div_ceil(64), 1, 1]);
    ctx.wait().unwrap();
    let got: Vec<u32> = ctx.read(&buf, bits.len()).unwrap();
    // Subnormals may be flushed on the device, but the rule reads bits only: exact match.
    for (i, &f) in v.iter().enumerate() {
        assert_eq!(got[i], ordered_bits(f), "{f:e}");
        assert_eq!(
            got[v.len() + i],
            from_ordered_bits(ordered_bits(f)).to_bits(),
            "{f:e}"
        );
    }
}

/// Oracle: stable sort by the low `bits` bits.
fn cpu_sort(keys: &[u32], values: &[u32], bits: u32) -> (Vec<u32>, Vec<u32>) {
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    let mut p: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    p.sort_by_key(|&(k, _)| k & mask);
    p.into_iter().unzip()
}

#[test]
fn forced_2d_grid_with_overshoot_groups() {
    let Some(ctx) = test_gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let keys: Vec<u32> = (0..79 * 256 - 17).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    let mut variants = vec![Variant::Portable];
    if Variant::best(&ctx) == Variant::Subgroup {
        variants.push(Variant::Subgroup);
    }
    for variant in variants {
        let mut sort = RadixSort::with_variant(&ctx, variant, 1).unwrap();
        // 3 groups per row: 79 blocks -> a 3 x 27 histogram grid with 2 idle groups; the
        // subgroup scatter's fewer groups (several blocks each) get a 3-wide grid too.
        sort.set_max_groups_per_dim(3);
        assert_eq!(
            sort.sort_pairs(&ctx, &keys, &values).unwrap(),
            cpu_sort(&keys, &values, 32),
            "{}",
            variant.name()
        );
    }
}

#[test]
fn two_sorts_in_one_encoder_one_pass_each_leave_elements_past_n_alone() {
    let Some(ctx) = test_gpu() else { return };
    // Different n and key_bits in one submission: nothing per call lives in shared uniforms.
    let mut sort = RadixSort::new(&ctx).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let len = 9000usize;
    let keys: Vec<u32> = (0..len).map(|_| rng.random_range(0..1000)).collect();
    let values: Vec<u32> = (0..len as u32).collect();
    let make = |data: &[u32]| {
        let b = ctx.storage_buffer("b", len as u64 * 4).unwrap();
        ctx.write_buffer(&b, 0, bytemuck::cast_slice(data));
        b
    };
    let (k1, v1, k2, v2) = (make(&keys), make(&values), make(&keys), make(&values));
    let before = ctx.counts();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    sort.encode(&ctx, &mut enc, &k1, &v1, 8000, 32, None)
        .unwrap();
    sort.encode(&ctx, &mut enc, &k2, &v2, 5000, 6, None)
        .unwrap();
    ctx.submit(enc);
    // Each sort is one compute pass, whatever its digit passes and scan levels.
    let counted = ctx.counts().since(before);
    assert_eq!(counted.compute_passes, 2);
    assert!(counted.dispatches >= 4 * 3 + 3, "{counted:?}");
    ctx.wait().unwrap();
    for (kb, vb, n, bits) in [(&k1, &v1, 8000, 32), (&k2, &v2, 5000, 6)] {
        let (mut wk, mut wv) = cpu_sort(&keys[..n], &values[..n], bits);
        wk.extend_from_slice(&keys[n..]);
        wv.extend_from_slice(&values[n..]);
        assert_eq!(ctx.read::<u32>(kb, len).unwrap(), wk, "keys, n = {n}");
        assert_eq!(ctx.read::<u32>(vb, len).unwrap(), wv, "values, n = {n}");
    }
}

/// With stage timing, each stage is a timed pass of its own (the per-stage diagnostics) and the
/// sort is the same.
#[test]
fn stage_timing_opens_a_pass_per_stage_and_sorts_the_same() {
    let Some(ctx) = test_gpu() else { return };
    let mut sort = RadixSort::new(&ctx).unwrap();
    sort.set_stage_timing(true);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let n = 7000usize;
    let keys: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    // The tiled sort: clear, count and plan, three a digit pass but two the first, the copy
    // back; the others: three a digit pass, and the copy back after an odd number.
    let stages = if crate::gpu::sort::radix_tiles::unsupported(&ctx).is_none() {
        [15u64, 12]
    } else {
        [12, 10]
    };
    for (bits, passes) in [(32u32, stages[0]), (20, stages[1])] {
        let kb = ctx.storage_buffer("keys", n as u64 * 4).unwrap();
        let vb = ctx.storage_buffer("values", n as u64 * 4).unwrap();
        ctx.write_buffer(&kb, 0, bytemuck::cast_slice(&keys));
        ctx.write_buffer(&vb, 0, bytemuck::cast_slice(&values));
        let mut timer = crate::gpu::timer::PassTimer::new(&ctx, 64);
        let before = ctx.counts();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sort.encode(&ctx, &mut enc, &kb, &vb, n as u32, bits, Some(&mut timer))
            .unwrap();
        ctx.submit(enc);
        assert_eq!(
            ctx.counts().since(before).compute_passes,
            passes,
            "{bits} bits"
        );
        let (wk, wv) = cpu_sort(&keys, &values, bits);
        assert_eq!(ctx.read::<u32>(&kb, n).unwrap(), wk, "{bits} bits");
        assert_eq!(ctx.read::<u32>(&vb, n).unwrap(), wv, "{bits} bits");
    }
}

#[test]
fn bad_arguments_are_errors() {
    let Some(ctx) = test_gpu() else { return };
    let mut sort = RadixSort::new(&ctx).unwrap();
    let e = sort.sort_pairs(&ctx, &[1, 2], &[1]).unwrap_err();
    assert!(e.to_string().contains("2 keys but 1 values"), "{e}");
    for bits in [0, 33] {
        let e = sort.sort_pairs_bits(&ctx, &[1], &[1], bits).unwrap_err();
        assert!(e.to_string().contains("key_bits"), "{e}");
    }
    let small = ctx.storage_buffer("s", 16).unwrap();
    let big = ctx.storage_buffer("b", 64).unwrap();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let e = sort
        .encode(&ctx, &mut enc, &big, &small, 10, 32, None)
        .unwrap_err();
    assert!(e.to_string().contains("10 values need 40 bytes"), "{e}");
    let e = sort
        .encode(&ctx, &mut enc, &big, &big, 10, 32, None)
        .unwrap_err();
    assert!(e.to_string().contains("distinct"), "{e}");
    assert!(RadixSort::with_rounds(&ctx, 0).is_err());
}

/// The tiled sort against the CPU's stable sort: n around the tile (4,096 on lavapipe) and its
/// multiples, shares of several tiles,
/// keys all equal (every pass skipped), only the top byte varying (three skipped), two values,
/// sorted, reversed, random, at several key widths; values are the indices, so stability shows.
#[test]
fn tiled_sort_is_stable_on_every_shape_of_keys() {
    use crate::gpu::sort::radix_tiles::{tile_keys, unsupported};
    let Some(ctx) = test_gpu() else { return };
    if let Some(why) = unsupported(&ctx) {
        eprintln!("the tiled sort cannot run here: {why}");
        let need = crate::gpu::sort::radix_tiles::workgroup_bytes(8);
        assert!(
            ctx.limits.max_compute_workgroup_storage_size < need,
            "{why}"
        );
        return;
    }
    let mut sort = RadixSort::with_variant(&ctx, Variant::Tiles, 1).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(40);
    let tile = tile_keys(&ctx).unwrap() as usize;
    for n in [
        0,
        1,
        2,
        3,
        255,
        257,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 77,
        50_000,
    ] {
        let shapes: [(&str, Vec<u32>); 7] = [
            ("random", (0..n).map(|_| rng.random()).collect()),
            ("equal", vec![0xdead_beef; n]),
            (
                "top byte",
                (0..n).map(|_| rng.random_range(0..256u32) << 24).collect(),
            ),
            (
                "two values",
                (0..n)
                    .map(|_| [7, 1 << 20][rng.random_range(0..2)])
                    .collect(),
            ),
            ("sorted", (0..n as u32).map(|i| i * 3).collect()),
            ("reversed", (0..n as u32).rev().collect()),
            ("small", (0..n).map(|_| rng.random_range(0..100)).collect()),
        ];
        let values: Vec<u32> = (0..n as u32).collect();
        for (what, keys) in &shapes {
            for bits in [32, 24, 13, 8, 1] {
                let got = sort.sort_pairs_bits(&ctx, keys, &values, bits).unwrap();
                assert_eq!(
                    got,
                    cpu_sort(keys, &values, bits),
                    "{what}, n = {n}, {bits} bits"
                );
                assert_eq!(sort.variant(), Variant::Tiles);
            }
        }
    }
    // Past 32 shares the shares' counts are scanned a workgroup a digit (scan_shares).
    for n in [33 * tile, 120 * tile + 3] {
        let values: Vec<u32> = (0..n as u32).collect();
        let random: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let few: Vec<u32> = (0..n).map(|_| rng.random_range(0..3u32) << 9).collect();
        for keys in [random, few] {
            for bits in [32, 12] {
                let got = sort.sort_pairs_bits(&ctx, &keys, &values, bits).unwrap();
                assert_eq!(got, cpu_sort(&keys, &values, bits), "n = {n}, {bits} bits");
            }
        }
    }
    // Shares of several tiles (at most 3, 4 and 32 shares): each workgroup carries its digits'
    // places from tile to tile; the last share shorter, its last tile part full.
    for (most, n) in [(3, 10 * tile + 9), (4, 8 * tile), (32, 70 * tile + 1)] {
        sort.tiles = Some(Box::new(TileSort::with_max_shares(&ctx, most).unwrap()));
        let values: Vec<u32> = (0..n as u32).collect();
        let random: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let few: Vec<u32> = (0..n).map(|_| rng.random_range(0..3u32) << 9).collect();
        let sorted: Vec<u32> = (0..n as u32).collect();
        for keys in [random, few, sorted] {
            for bits in [32, 12] {
                let got = sort.sort_pairs_bits(&ctx, &keys, &values, bits).unwrap();
                assert_eq!(
                    got,
                    cpu_sort(&keys, &values, bits),
                    "{most} shares, n = {n}"
                );
            }
        }
    }
    sort.tiles = Some(Box::new(
        TileSort::with_max_shares(&ctx, crate::gpu::sort::radix_tiles::MAX_SHARES).unwrap(),
    ));
    // A 2D grid whose last row has idle groups.
    sort.set_max_groups_per_dim(3);
    let keys: Vec<u32> = (0..11 * tile + 5).map(|_| rng.random()).collect();
    let values: Vec<u32> = (0..keys.len() as u32).collect();
    assert_eq!(
        sort.sort_pairs(&ctx, &keys, &values).unwrap(),
        cpu_sort(&keys, &values, 32)
    );
}

/// 1M keys on a 32-lane GPU: 256-invocation blocks of 2,048 keys (8 rounds) fill it, subgroup
/// chunks would not; at 2^24 keys the subgroup scatter's chunks of 16 rounds do.
#[test]
fn plan_fills_the_device() {
    assert_eq!(plan(1 << 20, Some(32)), (Variant::Portable, 8));
    assert_eq!(plan(1 << 24, Some(32)), (Variant::Subgroup, 16));
    assert_eq!(plan(1 << 24, None).0, Variant::Portable);
}

/// An adapter whose workgroups hold less than the tiled sort's 16 KB: asking for the tiled sort
/// is an [`crate::error::Error::AdapterLacks`] naming workgroup memory; the plan then takes another
/// variant and still sorts.
#[test]
fn the_tiled_sort_on_too_little_workgroup_memory_is_an_adapter_error() {
    let Some(mut ctx) = test_gpu() else { return };
    ctx.lower_limits(|l| l.max_compute_workgroup_storage_size = 12 * 1024)
        .unwrap();
    match RadixSort::with_variant(&ctx, Variant::Tiles, 1) {
        Err(crate::error::Error::AdapterLacks {
            need: "workgroup memory",
            message,
        }) => assert!(message.contains("12288"), "{message}"),
        Err(e) => panic!("expected the adapter's lack, got {e}"),
        Ok(_) => panic!("the tiled sort cannot run in 12 KB"),
    }
    let mut sort = RadixSort::new(&ctx).unwrap();
    let keys: Vec<u32> = (0..5000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let values: Vec<u32> = (0..5000).collect();
    assert_eq!(
        sort.sort_pairs(&ctx, &keys, &values).unwrap(),
        cpu_sort(&keys, &values, 32)
    );
    assert_ne!(sort.variant(), Variant::Tiles);
}

/// n at the binding limit (lowered to 1 MiB so that the test stays small): keys that fill a
/// binding exactly sort, stably; one key more is [`crate::error::Error::TooLarge`] naming the binding,
/// before anything runs.
#[test]
fn tiled_sort_at_the_binding_limit() {
    let Some(mut ctx) = test_gpu() else { return };
    ctx.lower_limits(|l| l.max_storage_buffer_binding_size = 1 << 20)
        .unwrap();
    let mut sort = RadixSort::with_variant(&ctx, Variant::Tiles, 1).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(44);
    let n = (1usize << 20) / 4;
    let keys: Vec<u32> = (0..n).map(|_| rng.random_range(0..1u32 << 20)).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    assert_eq!(
        sort.sort_pairs(&ctx, &keys, &values).unwrap(),
        cpu_sort(&keys, &values, 32)
    );
    let more: Vec<u32> = (0..n as u32 + 1).collect();
    match sort.sort_pairs(&ctx, &more, &more) {
        Err(crate::error::Error::TooLarge {
            exceeds: crate::error::Exceeds::Binding { needed, allowed },
            ..
        }) => assert_eq!((needed, allowed), (4 * n as u64 + 4, 4 * n as u64)),
        other => panic!("expected the binding limit, got {other:?}"),
    }
}
