//! The order-preserving map from `f32` to `u32` behind every sort key of a float, on the CPU
//! and on the GPU (`ordered` and `unordered` in `shaders/ordered_float.wgsl`, the same rule
//! word for word; a test runs both over every class of float): one rule, one place.
//!
//! `-0.0` is folded into `+0.0` first, by its bits (a float comparison would also fold the
//! subnormals on a GPU that flushes them): the two are equal floats, so their tie is broken
//! like any other, by index. Then a negative float has every bit flipped and any other gets
//! the sign bit set. For every non-NaN `a` and `b`, `ordered_bits(a).cmp(&ordered_bits(b))`
//! is `a.partial_cmp(&b)`: subnormals and infinities in their place, equal keys exactly for
//! equal floats. (NaN never reaches a key: inputs are validated first.)

/// The key of `x`: unsigned order is float order, `-0.0` and `+0.0` one key.
#[inline(always)]
pub fn ordered_bits(x: f32) -> u32 {
    let bits = x.to_bits();
    let bits = if bits & 0x7fff_ffff == 0 { 0 } else { bits };
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The float of a key made by [`ordered_bits`] (`+0.0` for either zero).
#[inline(always)]
pub fn from_ordered_bits(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 {
        key & 0x7fff_ffff
    } else {
        !key
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class of float: infinities, the extremes, normals, the smallest normals, the
    /// subnormals, both zeros; then random bit patterns.
    pub fn every_class() -> Vec<f32> {
        let mut v = vec![
            f32::NEG_INFINITY,
            f32::MIN,
            -1.5,
            -f32::MIN_POSITIVE,
            -f32::from_bits(0x007f_ffff), // the largest subnormal
            -f32::from_bits(1),           // the smallest subnormal
            -0.0,
            0.0,
            f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        let mut state = 0x9e37_79b9_u32;
        v.extend((0..2000).filter_map(|_| {
            // xorshift32: any bit pattern, NaNs dropped.
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            Some(f32::from_bits(state)).filter(|f| !f.is_nan())
        }));
        v
    }

    #[test]
    fn keys_order_as_the_floats_compare() {
        let v = every_class();
        for &a in &v {
            for &b in &v[..64] {
                assert_eq!(
                    Some(ordered_bits(a).cmp(&ordered_bits(b))),
                    a.partial_cmp(&b),
                    "{a:e} ({:#x}) vs {b:e} ({:#x})",
                    a.to_bits(),
                    b.to_bits()
                );
            }
        }
        assert_eq!(ordered_bits(-0.0), ordered_bits(0.0));
        assert_eq!(ordered_bits(0.0), 0x8000_0000);
    }

    #[test]
    fn keys_give_their_floats_back() {
        for x in every_class() {
            let back = from_ordered_bits(ordered_bits(x));
            let want = if x == 0.0 { 0.0f32 } else { x };
            assert_eq!(back.to_bits(), want.to_bits(), "{x:e}");
        }
    }
}
