//! The sloppy math (`shaders/math_sloppy.wgsl`, docs/design.md §9.11) on the device, against the
//! exact math on the same device (lavapipe in CI, where it is correctly rounded): how far each
//! function moves, how often, what it never moves, and that it depends on the operands only.

use super::{MathMode, compose_text};
use crate::gpu::context::{GpuContext, test_gpu};
use rand::{Rng, SeedableRng};

/// A kernel `entry` with one thread per case: `body` runs with the case as `v` (binding 3) and
/// writes its results (binding 4).
fn case_kernel(entry: &str, body: &str) -> String {
    format!(
        "const WG: u32 = 256u;
// #import dispatch.wgsl
// #import math.wgsl
@group(0) @binding(3) var<storage, read> cases: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> results: array<vec4<f32>>;
@compute @workgroup_size(256)
fn {entry}(inv: Invocation) {{
    let t = flat_id(inv);
    if t < arrayLength(&cases) {{
        let v = cases[t];
{body}
    }}
}}"
    )
}

/// Per case (x, y, z, -), two results: m_sqrt(x), m_inverse_sqrt(x), m_div(x, y), m_rem(x, y);
/// then m_length2(x, y), m_length3(x, y, z), m_dot3 of (x, y, z) with itself (`ops`).
const OPS: &str =
    "        results[2u * t] = vec4<f32>(m_sqrt(v.x), m_inverse_sqrt(v.x), m_div(v.x, v.y),
            m_rem(v.x, v.y));
        results[2u * t + 1u] = vec4<f32>(m_length2(v.xy), m_length3(v.xyz), m_dot3(v.xyz, v.xyz),
            0.0);";

/// Per case (x, y, z, -): sloppy_fma(x, y, z) and x * y + z (sloppy math only; `fused`).
const FMA: &str =
    "        results[t] = vec4<f32>(sloppy_fma(v.x, v.y, v.z), v.x * v.y + v.z, 0.0, 0.0);";

/// `rows` vec4 results per case of `entry` in `source`.
fn run(
    ctx: &GpuContext,
    source: &str,
    entry: &str,
    cases: &[[f32; 4]],
    rows: usize,
) -> Vec<[f32; 4]> {
    let words: Vec<f32> = run_kernel(ctx, source, entry, None, cases, cases.len() * rows * 4);
    words
        .chunks_exact(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .collect()
}

/// Runs `entry` of `source` with one thread per case: the cases at binding 3, `out_words` f32
/// results read back from binding 4, and `uniform` (bytes) at binding 0 where the kernel has one
/// (`frame.wgsl`'s `params`). For the shader tests of this folder.
pub(super) fn run_kernel(
    ctx: &GpuContext,
    source: &str,
    entry: &str,
    uniform: Option<&[u8]>,
    cases: &[[f32; 4]],
    out_words: usize,
) -> Vec<f32> {
    let module = ctx.shader(entry, source).unwrap();
    let pipeline = ctx.pipeline(&module, entry, &[]).unwrap();
    let init = |label, contents, usage| {
        ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let input = init(
        "kernel cases",
        bytemuck::cast_slice(cases),
        wgpu::BufferUsages::STORAGE,
    );
    let params = uniform.map(|bytes| init("kernel params", bytes, wgpu::BufferUsages::UNIFORM));
    let output = ctx
        .storage_buffer("kernel results", (out_words * 4) as u64)
        .unwrap();
    let mut entries = vec![
        (3, input.as_entire_binding()),
        (4, output.as_entire_binding()),
    ];
    if let Some(p) = &params {
        entries.push((0, p.as_entire_binding()));
    }
    let group = crate::gpu::frame::bind(ctx, &pipeline, &entries);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = ctx.compute_pass(&mut encoder, &Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        crate::gpu::frame::dispatch(ctx, &mut pass, cases.len() as u64);
    }
    ctx.submit(encoder);
    ctx.read(&output, out_words).unwrap()
}

/// Distance in representable f32 values (0 between equal values, and between -0 and +0).
fn ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = i64::from(x.to_bits());
        if bits & 0x8000_0000 != 0 {
            -(bits & 0x7fff_ffff)
        } else {
            bits
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// The spacing of f32 values at |x| (finite x).
fn ulp(x: f32) -> f32 {
    let x = x.abs();
    f32::from_bits(x.to_bits() + 1) - x
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `n` cases (x, y, z, 0), magnitudes log-uniform in [1e-3, 1e3], x positive, y and z of
/// either sign.
fn random_cases(seed: u64, n: usize) -> Vec<[f32; 4]> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut value = |signed: bool| {
        let v = 10f32.powf(rng.random_range(-3.0..3.0));
        if signed && rng.random_bool(0.5) {
            -v
        } else {
            v
        }
    };
    (0..n)
        .map(|_| [value(false), value(true), value(true), 0.0])
        .collect()
}

#[test]
fn sloppy_math_moves_results_by_at_most_two_ulp_and_repeatably() {
    let Some(ctx) = test_gpu() else { return };
    let random = 4096;
    let mut cases = random_cases(2311, random);
    cases.extend([
        [0.0, 1.0, 1.0, 0.0],
        [f32::INFINITY, 1.0, 1.0, 0.0],
        [f32::NAN, 1.0, 1.0, 0.0],
        [f32::MAX, 1.0, 1.0, 0.0],
    ]);
    let source = |math| compose_text(&case_kernel("ops", OPS), math).unwrap();
    let exact = run(&ctx, &source(MathMode::Exact), "ops", &cases, 2);
    let sloppy = run(&ctx, &source(MathMode::Sloppy), "ops", &cases, 2);
    let names = [
        "sqrt",
        "inverseSqrt",
        "div",
        "rem",
        "length2",
        "length3",
        "dot3",
    ];
    let mut moved = [0usize; 7];
    for (t, c) in cases[..random].iter().enumerate() {
        let e = [exact[2 * t], exact[2 * t + 1]].concat();
        let g = [sloppy[2 * t], sloppy[2 * t + 1]].concat();
        for (k, name) in names.iter().enumerate() {
            let (got, want) = (g[k], e[k]);
            if *name == "rem" {
                // a - b trunc(a / b): the product's rounding, or b when the quotient crossed
                // an integer.
                let tol = 4.0 * ulp(c[0].abs().max(c[1].abs()));
                let d = (got - want).abs();
                assert!(
                    d <= tol || (d - c[1].abs()).abs() <= tol,
                    "rem({}, {}): sloppy {got}, exact {want}",
                    c[0],
                    c[1]
                );
            } else {
                // A fused sum of three squares is within 2 ULP of the unfused one, about.
                let limit = if *name == "dot3" { 3 } else { 2 };
                assert!(
                    ulps(got, want) <= limit,
                    "{name}({c:?}): sloppy {got}, exact {want}"
                );
            }
            moved[k] += usize::from(got.to_bits() != want.to_bits());
        }
    }
    eprintln!("moved of {random}: {names:?} {moved:?}");
    // Each is moved by k in -2..2 ULP, k = 0 one time in five.
    for k in [0, 1, 2, 4, 5] {
        assert!(moved[k] > random * 6 / 10, "{}: {moved:?}", names[k]);
    }
    // Fusing changes a sum of squares now and then (about 4% of these).
    assert!(moved[6] > random / 100, "dot3: {moved:?}");
    // 0, infinity and NaN are never moved (sqrt, inverseSqrt, division), nor the largest f32.
    for t in random..random + 3 {
        for (k, name) in names.iter().enumerate().take(3) {
            let (got, want) = (sloppy[2 * t][k], exact[2 * t][k]);
            assert!(
                same(got, want),
                "{:?}: {name}: sloppy {got}, exact {want}",
                cases[t]
            );
        }
    }
    assert_eq!(sloppy[2 * (random + 3)][2], f32::MAX);
    // The error depends on the operands only: the same cases in another order, another thread
    // each, get the same results.
    let reversed: Vec<[f32; 4]> = cases.iter().rev().copied().collect();
    let again = run(&ctx, &source(MathMode::Sloppy), "ops", &reversed, 2);
    let n = cases.len();
    for t in 0..n {
        let r = n - 1 - t;
        for row in 0..2 {
            for k in 0..4 {
                assert!(
                    same(again[2 * r + row][k], sloppy[2 * t + row][k]),
                    "case {t}: {:?}",
                    cases[t]
                );
            }
        }
    }
}

/// `sloppy_fma` is within an ULP of the correctly rounded a * b + c (f64 here: the product is
/// exact there), equal to it in most cases, and differs from the unfused x * y + z in some.
#[test]
fn sloppy_fma_rounds_about_as_a_fused_operation() {
    let Some(ctx) = test_gpu() else { return };
    let cases = random_cases(2312, 4096);
    let source = compose_text(&case_kernel("fused", FMA), MathMode::Sloppy).unwrap();
    let got = run(&ctx, &source, "fused", &cases, 1);
    // Premise: the device itself fuses nothing (lavapipe, what the sloppy math is for, §9.11).
    // A driver that fuses `p + c` inside the emulation adds the product's error twice; it shows
    // here as its own `x * y + z` differing from the unfused one.
    let fusing = cases
        .iter()
        .zip(&got)
        .filter(|(c, g)| g[1].to_bits() != (c[0] * c[1] + c[2]).to_bits())
        .count();
    if fusing > 0 {
        // The emulation is for devices that do not fuse; on one that does, its `p + c` fused
        // adds the product's rounding error once more: within two ULPs of the fused result
        // plus one ULP of the product (unbounded in ULPs of a result that nearly cancels).
        eprintln!(
            "{} fuses x * y + z ({fusing} of {} cases): checked within 2 ULPs plus the product's",
            ctx.info.name,
            cases.len()
        );
        let ulp = |x: f32| x.abs().next_up() - x.abs();
        for (c, g) in cases.iter().zip(&got) {
            let fused = (f64::from(c[0]) * f64::from(c[1]) + f64::from(c[2])) as f32;
            let bound = 2.0 * f64::from(ulp(fused)) + f64::from(ulp(c[0] * c[1]));
            assert!(
                (f64::from(g[0]) - f64::from(fused)).abs() <= bound,
                "{c:?}: {} vs fused {fused}",
                g[0]
            );
        }
        return;
    }
    let (mut equal, mut unlike_unfused) = (0usize, 0usize);
    for (c, g) in cases.iter().zip(&got) {
        let fused = (f64::from(c[0]) * f64::from(c[1]) + f64::from(c[2])) as f32;
        assert!(ulps(g[0], fused) <= 1, "{c:?}: {} vs fused {fused}", g[0]);
        equal += usize::from(g[0] == fused);
        unlike_unfused += usize::from(g[0] != g[1]);
    }
    eprintln!(
        "of {}: {equal} equal to fma, {unlike_unfused} unlike a * b + c",
        cases.len()
    );
    assert!(equal > cases.len() * 8 / 10, "{equal}");
    assert!(unlike_unfused > cases.len() / 100, "{unlike_unfused}");
}
