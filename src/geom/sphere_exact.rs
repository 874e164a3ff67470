//! The sphere touch decided exactly on the inputs' values (docs/design.md §9.6a):
//! `|a.c - b.c|^2 <= (a.r + b.r)^2` in real arithmetic on the f32 centres and radii, for the
//! pairs the f32 filter of [`crate::Sphere::touches`] cannot decide within its error bound.
//!
//! Every f32 is `m 2^e` with an integer `m < 2^24`. Written out, `|d|^2 - s^2` is a sum of
//! twelve products of two inputs (`a_i^2 - 2 a_i b_i + b_i^2` per axis, `-(r1^2 + 2 r1 r2 +
//! r2^2)`), each an integer times a power of two. Scaled by the pair's lowest power of two,
//! every input is an integer below 2^(24 + 175) and is written as three 16-bit digits from a
//! digit position on; each product of digits (below 2^32) is added, split in two 16-bit
//! halves, to signed 32-bit columns, and one carry pass gives the sign of the whole sum. Only
//! integer operations: the same answer on every device. [`touches_columns`] is the rule as the
//! GPU computes it (`touches_exact` in `shaders/frame.wgsl`, the same steps); the CPU takes a
//! 128-bit shortcut when the pair's values span at most 38 bits above its lowest power of two.

/// Columns of 16 bits the digit products are added to: enough for inputs within
/// [`MAX_SHIFT`] of the pair's lowest power of two.
pub(crate) const COLUMNS: usize = 26;

/// Largest shift of an input's lowest bit above the pair's lowest: 175 (so digit positions
/// reach 10, products 2 * (10 + 2) + 1 = 25). Validated spheres need at most 159 (values from
/// 1e-30, lowest bit 2^-123, to 1e18, lowest bit 2^36); beyond it the f32 verdict stands.
pub(crate) const MAX_SHIFT: i32 = 175;

/// The eight inputs of one pair: centre `a`, radius of `a`, centre `b`, radius of `b`.
pub(crate) type PairInputs = [f32; 8];

/// `(negative, m, e)` with `|v| = m 2^e`, `m < 2^24` (`m = 0` for zeros).
#[inline]
fn split(v: f32) -> (bool, u32, i32) {
    let bits = v.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32;
    let fraction = bits & 0x7f_ffff;
    let (m, e) = if exponent == 0 {
        (fraction, -149)
    } else {
        (fraction | 0x80_0000, exponent - 150)
    };
    (bits >> 31 == 1, m, e)
}

/// The pair's lowest power of two among its non-zero inputs, `None` when every input is zero.
#[inline]
fn lowest_exponent(parts: &[(bool, u32, i32); 8]) -> Option<i32> {
    parts.iter().filter(|p| p.1 != 0).map(|p| p.2).min()
}

/// Whether the spheres `(x, y, z, r)` of `v` touch, exactly. Inputs outside validation's range
/// (non-finite, or spanning more than [`MAX_SHIFT`] bits) keep the f32 verdict.
#[cold]
pub(crate) fn touches_exact(v: PairInputs) -> bool {
    let parts = v.map(split);
    let Some(low) = lowest_exponent(&parts) else {
        return true; // every input zero: coincident points
    };
    let span = parts.iter().map(|p| p.2 - low).max().unwrap_or(0);
    if v.iter().any(|x| !x.is_finite()) || span > MAX_SHIFT {
        return f32_verdict(v);
    }
    if span <= 38 {
        // Inputs below 2^62 as integers: differences below 2^63, squares below 2^126, a sum of
        // three below 2^128.
        let int = |(neg, m, e): (bool, u32, i32)| {
            if m == 0 {
                return 0;
            }
            let x = i64::from(m) << (e - low);
            if neg { -x } else { x }
        };
        let i = parts.map(int);
        let sq = |x: i64| x.unsigned_abs() as u128 * x.unsigned_abs() as u128;
        let dd = sq(i[0] - i[4]) + sq(i[1] - i[5]) + sq(i[2] - i[6]);
        return dd <= sq(i[3] + i[7]);
    }
    touches_columns(v)
}

/// The verdict of the plain f32 arithmetic (for inputs the exact rule does not cover).
fn f32_verdict(v: PairInputs) -> bool {
    let (dx, dy, dz, s) = (v[0] - v[4], v[1] - v[5], v[2] - v[6], v[3] + v[7]);
    (dx * dx + dy * dy) + dz * dz <= s * s
}

/// The input `(negative, m, e)` scaled by `2^-low`: its first digit position and three
/// 16-bit digits.
#[inline]
fn digits((_, m, e): (bool, u32, i32), low: i32) -> (usize, [u32; 3]) {
    let t = (e - low) as u32;
    let (q, r) = (t / 16, t % 16);
    let d0 = (m << r) & 0xffff;
    let d1 = (m >> (16 - r)) & 0xffff;
    let d2 = (m >> 16) >> (16 - r);
    (q as usize, [d0, d1, d2])
}

/// The exact rule in 16-bit columns, as the GPU computes it (no shortcut). Inputs are finite
/// and span at most [`MAX_SHIFT`] bits (checked by the callers).
pub(crate) fn touches_columns(v: PairInputs) -> bool {
    let parts = v.map(split);
    let Some(low) = lowest_exponent(&parts) else {
        return true;
    };
    let mut columns = [0i32; COLUMNS];
    // `weight * x * y` added to the columns (x, y are inputs 0..8).
    let mut add = |x: usize, y: usize, weight: i32| {
        let (px, py) = (parts[x], parts[y]);
        if px.1 == 0 || py.1 == 0 {
            return;
        }
        let w = if px.0 != py.0 { -weight } else { weight };
        let ((qx, dx), (qy, dy)) = (digits(px, low), digits(py, low));
        for (i, &xi) in dx.iter().enumerate() {
            for (j, &yj) in dy.iter().enumerate() {
                let p = xi * yj;
                let c = qx + qy + i + j;
                columns[c] += w * (p & 0xffff) as i32;
                columns[c + 1] += w * (p >> 16) as i32;
            }
        }
    };
    for axis in 0..3 {
        add(axis, axis, 1);
        add(axis + 4, axis + 4, 1);
        add(axis, axis + 4, -2);
    }
    add(3, 3, -1);
    add(7, 7, -1);
    add(3, 7, -2);
    // One carry pass: the sum is `carry 2^(16 COLUMNS) + sum digit_k 2^(16 k)`, digits in
    // [0, 2^16).
    let (mut carry, mut any_digit) = (0i32, false);
    for c in columns {
        let t = c + carry;
        any_digit |= t & 0xffff != 0;
        carry = t >> 16;
    }
    carry < 0 || (carry == 0 && !any_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use rand::{Rng, SeedableRng};

    /// The oracle: the inputs as exact rationals over 2^149, in big integers.
    fn oracle(v: PairInputs) -> bool {
        let int = |x: f32| -> BigInt {
            let (neg, m, e) = split(x);
            let b = BigInt::from(m) << ((e + 149) as usize);
            if neg { -b } else { b }
        };
        let i = v.map(int);
        let d: Vec<BigInt> = (0..3).map(|k| &i[k] - &i[k + 4]).collect();
        let s = &i[3] + &i[7];
        let dd: BigInt = d.iter().map(|x| x * x).sum();
        dd <= &s * &s
    }

    /// Pairs exactly at contact on 3-4-5 triangles (and one lowest bit either side), at
    /// scales where the f32 squares round, plus random near-contact pairs across the accepted
    /// range: both exact paths agree with the oracle, and the f32 arithmetic does not.
    #[test]
    fn both_paths_decide_as_big_integers() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(61);
        let (mut f32_wrong, mut columns_run, mut contact) = (0, 0, 0);
        for round in 0..20_000 {
            let v = if round % 2 == 0 {
                let k = rng.random_range(1u32 << 12..1 << 20) | 1;
                let scale = 2f32.powi(rng.random_range(-90..40));
                let (a, b, c) = (3.0 * k as f32, 4.0 * k as f32, 5.0 * k as f32);
                let r1 = rng.random_range(1..5 * k) as f32;
                let base = [
                    rng.random_range(-1000..1000) as f32,
                    rng.random_range(-1000..1000) as f32,
                    0.0,
                ];
                let mut v = [
                    base[0] * scale,
                    base[1] * scale,
                    0.0,
                    r1 * scale,
                    (base[0] + a) * scale,
                    (base[1] + b) * scale,
                    0.0,
                    (c - r1) * scale,
                ];
                // One lowest bit either side, sometimes.
                match round % 6 {
                    2 => v[4] = f32::from_bits(v[4].to_bits() + 1),
                    4 => v[3] = f32::from_bits(v[3].to_bits() - 1),
                    _ => contact += 1,
                }
                v
            } else {
                // Values of very different magnitudes near contact along x.
                let r1 = 2f32.powi(rng.random_range(-100..55)) * rng.random_range(1.0..2.0);
                let r2 = 2f32.powi(rng.random_range(-100..55)) * rng.random_range(1.0..2.0);
                let y = 2f32.powi(rng.random_range(-100..30)) * rng.random_range(-1.0..1.0);
                let x = r1 + r2;
                let x = f32::from_bits((x.to_bits() as i64 + rng.random_range(-2..3)) as u32);
                [0.0, 0.0, 0.0, r1, x, y, 0.0, r2]
            };
            let want = oracle(v);
            assert_eq!(touches_exact(v), want, "{v:?}");
            let span = {
                let parts = v.map(split);
                let low = lowest_exponent(&parts).unwrap();
                parts.iter().map(|p| p.2 - low).max().unwrap()
            };
            if span <= MAX_SHIFT {
                assert_eq!(touches_columns(v), want, "columns {v:?}");
                columns_run += 1;
            }
            f32_wrong += usize::from(f32_verdict(v) != want);
        }
        assert!(columns_run > 19_000, "{columns_run}");
        assert!(contact > 3000, "{contact}");
        // The test can tell: rounded squares decide hundreds of these wrongly.
        assert!(f32_wrong > 100, "{f32_wrong}");
    }

    /// The filter with its bound, then the exact rule, as `Sphere::touches` decides a pair.
    fn decide(v: PairInputs, bound: f32) -> bool {
        let (dx, dy, dz, s) = (v[0] - v[4], v[1] - v[5], v[2] - v[6], v[3] + v[7]);
        let (dd, ss) = ((dx * dx + dy * dy) + dz * dz, s * s);
        crate::geom::sphere::filtered_with(dd, ss, bound).unwrap_or_else(|| touches_exact(v))
    }

    /// The filter's bound is needed: contacts on 3-4-5 triangles scaled by odd factors (f32
    /// squares round) decide as the oracle with `TOUCH_FILTER`, wrongly with a bound of zero
    /// (the f32 margin alone) or of a hundredth of it; `Sphere::touches` is the first.
    #[test]
    fn the_error_bound_is_what_makes_touches_exact() {
        use crate::geom::sphere::TOUCH_FILTER;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut wrong = [0usize; 3];
        for round in 0..20_000 {
            let k = (rng.random_range(1u32 << 10..1 << 19) | 1) as f32;
            let scale = 2f32.powi(rng.random_range(-60..30));
            let r1 = rng.random_range(1..5 * k as u32) as f32;
            let mut v = [0.0, 0.0, 0.0, r1, 3.0 * k, 4.0 * k, 0.0, 5.0 * k - r1].map(|x| x * scale);
            if round % 3 == 1 {
                v[4] = f32::from_bits(v[4].to_bits() + 1);
            }
            let want = oracle(v);
            let (a, b) = (
                crate::Sphere::new(glam::Vec3::new(v[0], v[1], v[2]), v[3]),
                crate::Sphere::new(glam::Vec3::new(v[4], v[5], v[6]), v[7]),
            );
            assert_eq!(a.touches(&b), want, "{v:?}");
            for (w, bound) in wrong
                .iter_mut()
                .zip([TOUCH_FILTER, 0.0, TOUCH_FILTER / 100.0])
            {
                *w += usize::from(decide(v, bound) != want);
            }
        }
        assert_eq!(wrong[0], 0);
        assert!(wrong[1] > 100 && wrong[2] > 10, "{wrong:?}");
    }

    #[test]
    fn zeros_points_and_signs() {
        assert!(touches_exact([0.0; 8]));
        assert!(touches_columns([0.0; 8]));
        assert!(touches_exact([-0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.0]));
        // A point on a sphere's surface, negative coordinates.
        let v = [-3.0, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0];
        assert!(touches_exact(v) && touches_columns(v));
        let v = [-3.0, -4.000001, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0];
        assert!(!touches_exact(v) && !touches_columns(v));
        // The widest validated span: 1e18 against 1e-30.
        let v = [1e18, 0.0, 0.0, 1e-30, 1e18, 1e-30, 0.0, 0.0];
        assert_eq!(touches_exact(v), oracle(v));
        assert_eq!(touches_columns(v), oracle(v));
        let v = [0.0, 0.0, 0.0, 1e18, 1e18, 1e-30, 0.0, 0.0];
        assert!(!touches_exact(v) && !oracle(v));
    }
}
