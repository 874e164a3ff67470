//! The origin keys of `shaders/frame.wgsl` (`origin_key`: an unfused squared norm, a square root
//! corrected to the nearest float) against the CPU's `geom::sphere::origin_key`, bit for bit, in
//! both maths: with `SWEEPFAN_SLOPPY_MATH`'s square root (up to 2 ULP off) the correction must
//! still land on the CPU's bits (docs/design.md §9.13).

use super::math_tests::run_kernel;
use super::{MathMode, compose_text};
use crate::geom::sphere::origin_key;
use crate::gpu::context::{GpuContext, test_gpu};
use crate::gpu::frame::Params;
use encase::{ShaderType, UniformBuffer};
use glam::Vec3;
use rand::{Rng, SeedableRng};

const KEYS: &str = "// #import frame.wgsl
@group(0) @binding(3) var<storage, read> centres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<f32>;
@compute @workgroup_size(256)
fn keys(inv: Invocation) {
    let t = flat_id(inv);
    if t < arrayLength(&centres) {
        keys_out[t] = origin_key(centres[t].xyz);
    }
}";

fn device_keys(ctx: &GpuContext, math: MathMode, centres: &[[f32; 4]]) -> Vec<f32> {
    let source = compose_text(KEYS, math).unwrap();
    let mut params = UniformBuffer::new(Vec::<u8>::new());
    params.write(&Params::n(centres.len() as u32)).unwrap();
    let mut bytes = params.into_inner();
    bytes.resize(Params::min_size().get().next_multiple_of(16) as usize, 0);
    run_kernel(ctx, &source, "keys", Some(&bytes), centres, centres.len())
}

/// Centres over 2^-60..2^60 (both key paths: the rescaled one below 2^-50), with zero,
/// equal, integer and one-axis components mixed in.
fn centres(seed: u64, n: usize) -> Vec<[f32; 4]> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let component = |rng: &mut rand_chacha::ChaCha8Rng| -> f32 {
        let sign = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
        match rng.random_range(0..10) {
            0 => 0.0,
            1 => sign * rng.random_range(0..1000) as f32,
            _ => sign * rng.random_range(1.0f32..2.0) * 2f32.powi(rng.random_range(-60..60)),
        }
    };
    (0..n)
        .map(|i| {
            let x = component(&mut rng);
            let (y, z) = match i % 7 {
                0 => (x, x),
                1 => (0.0, 0.0),
                _ => (component(&mut rng), component(&mut rng)),
            };
            // Components far below the largest are irrelevant to the key; keep the scene's
            // own rule (no centre coordinate nonzero below 1e-30, docs/design.md §9.6).
            let keep = |c: f32| if c.abs() < 1e-30 { 0.0 } else { c };
            [keep(x), keep(y), keep(z), 0.0]
        })
        .collect()
}

#[test]
fn device_origin_keys_are_the_cpus_bits_in_both_maths() {
    let Some(ctx) = test_gpu() else { return };
    let cases = centres(11, 200_000);
    for math in [MathMode::Exact, MathMode::Sloppy] {
        let got = device_keys(&ctx, math, &cases);
        let mut wrong = Vec::new();
        for (c, &g) in cases.iter().zip(&got) {
            let want = origin_key(Vec3::new(c[0], c[1], c[2]));
            if g.to_bits() != want.to_bits() {
                wrong.push((c, g, want));
            }
        }
        assert!(
            wrong.is_empty(),
            "{math:?}: {} of {} keys differ from the CPU's, e.g. {:?}",
            wrong.len(),
            cases.len(),
            &wrong[..wrong.len().min(5)]
        );
    }
}
