// The functions of math_exact.wgsl (same names, same types) computed as a real GPU is allowed
// to compute them (docs/design.md §9.11): sqrt, inverseSqrt, length, division and the f32
// remainder off by up to 2 ULP either way, the touch test's dot product fused. The composer
// (src/gpu/shader.rs) puts this file in place of `math.wgsl` when SWEEPFAN_SLOPPY_MATH=1. Meant
// for lavapipe, whose math is exact, so that its runs show what a real device's rounding does to
// the results; on a real GPU it adds to the device's own error.
//
// Each error is a function of the operands' bits (a hash): a run is repeatable, and two kernels
// given the same operands get the same result, as on one real device. 0, infinities, NaN and
// values within 2 ULP of 0 or of the largest f32 are never moved, so no sign, zero, infinity or
// NaN changes.

// #import hash.wgsl

// One salt per operation, so that sqrt(x) and inverseSqrt(x) err independently.
const SLOPPY_SQRT: u32 = 0x9e3779b9u;
const SLOPPY_INVERSE_SQRT: u32 = 0x85ebca6bu;
const SLOPPY_LENGTH: u32 = 0xc2b2ae35u;
const SLOPPY_DIV: u32 = 0x27d4eb2fu;
const SLOPPY_DOT: u32 = 0x165667b1u;

// The errors' mixer: lowbias32 (hash.wgsl).
fn sloppy_mix(x: u32) -> u32 {
    return lowbias32(x);
}

// The hash of `seed` and then a's bits (chained, so that equal operands do not cancel).
fn sloppy_hash1(seed: u32, a: f32) -> u32 {
    return sloppy_mix(seed ^ bitcast<u32>(a));
}

fn sloppy_hash2(seed: u32, v: vec2<f32>) -> u32 {
    return sloppy_hash1(sloppy_hash1(seed, v.x), v.y);
}

fn sloppy_hash3(seed: u32, v: vec3<f32>) -> u32 {
    return sloppy_hash1(sloppy_hash1(sloppy_hash1(seed, v.x), v.y), v.z);
}

// x moved by k ULP, k in -2..2 chosen by h (k = 0 one time in five). Moving the bit pattern by
// k moves the magnitude by k ULP with the sign kept; values too close to 0 or to infinity for
// that, and infinities and NaN, are returned unchanged.
fn sloppy_nudge(x: f32, h: u32) -> f32 {
    let bits = bitcast<u32>(x);
    let magnitude = bits & 0x7fffffffu;
    if magnitude <= 2u || magnitude >= 0x7f7ffffeu {
        return x;
    }
    return bitcast<f32>(bits + (h % 5u) - 2u);
}

fn m_sqrt(x: f32) -> f32 {
    return sloppy_nudge(sqrt(x), sloppy_hash1(SLOPPY_SQRT, x));
}

fn m_inverse_sqrt(x: f32) -> f32 {
    return sloppy_nudge(inverseSqrt(x), sloppy_hash1(SLOPPY_INVERSE_SQRT, x));
}

fn m_length2(v: vec2<f32>) -> f32 {
    return sloppy_nudge(length(v), sloppy_hash2(SLOPPY_LENGTH, v));
}

fn m_length3(v: vec3<f32>) -> f32 {
    return sloppy_nudge(length(v), sloppy_hash3(SLOPPY_LENGTH, v));
}

fn m_div(a: f32, b: f32) -> f32 {
    return sloppy_nudge(a / b, sloppy_hash2(SLOPPY_DIV, vec2<f32>(a, b)));
}

// What a device computes for `%`: a - b * trunc(a / b) with its own division (a quotient moved
// across an integer moves the result by b).
fn m_rem(a: f32, b: f32) -> f32 {
    return a - b * trunc(m_div(a, b));
}

// x with the low 12 bits of its stored significand cleared: at most 12 significant bits, so the
// product of two such halves is exact, and x - sloppy_high(x) (at most 12 bits) is exact too.
// Bit masks, not Veltkamp's split by 4097 x: a compiler's float algebra cannot undo them (Mesa's
// NIR may rewrite c - (c - a) to a, since naga marks no operation NoContraction).
fn sloppy_high(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
}

// a * b + c rounded about as one fused operation rounds it: the error of the rounded product
// (Dekker's product on 12-bit halves) is added back after the sum. Within an ULP of a hardware
// fma. WGSL's own `fma` would not do: lavapipe lowers it to a multiply and an add. A product
// that is infinite or NaN has no error to add (it would make inf - inf).
fn sloppy_fma(a: f32, b: f32, c: f32) -> f32 {
    let p = a * b;
    if (bitcast<u32>(p) & 0x7f800000u) == 0x7f800000u {
        return p + c;
    }
    let ah = sloppy_high(a);
    let al = a - ah;
    let bh = sloppy_high(b);
    let bl = b - bh;
    let e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
    return (p + c) + e;
}

// A dot product as a driver may contract it, chosen by the operands: unfused, or fused in
// one of the orders hardware uses (x first, z first, or the first two terms only).
fn m_dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    let form = sloppy_hash3(sloppy_hash3(SLOPPY_DOT, a), b) % 4u;
    if form == 0u {
        return a.x * b.x + a.y * b.y + a.z * b.z;
    }
    if form == 1u {
        return sloppy_fma(a.z, b.z, sloppy_fma(a.y, b.y, a.x * b.x));
    }
    if form == 2u {
        return sloppy_fma(a.x, b.x, sloppy_fma(a.y, b.y, a.z * b.z));
    }
    return sloppy_fma(a.y, b.y, a.x * b.x) + a.z * b.z;
}
