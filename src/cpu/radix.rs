//! Stable least-significant-digit radix sort of u64 keys on a range of their bits. Sorting only
//! the bits that vary (the grid's cell bits, not the index below them) keeps it to a few passes;
//! stability keeps equal digits in their input order.

/// Widest digit: 2^11 counters stay in L1.
const MAX_DIGIT_BITS: u32 = 11;

/// Sorts `keys` by bits `[low, high)` (stable; other bits ride along). `scratch` is reused.
pub fn radix_sort_bits(keys: &mut Vec<u64>, scratch: &mut Vec<u64>, low: u32, high: u32) {
    debug_assert!(low <= high && high <= 64);
    let width = high - low;
    if width == 0 || keys.len() < 2 {
        return;
    }
    let passes = width.div_ceil(MAX_DIGIT_BITS);
    let digit_bits = width.div_ceil(passes);
    let buckets = 1usize << digit_bits;
    let mask = (buckets - 1) as u64;
    let mut counts = vec![0usize; buckets];
    scratch.clear();
    scratch.resize(keys.len(), 0);
    for pass in 0..passes {
        let shift = low + pass * digit_bits;
        counts.fill(0);
        for &k in keys.iter() {
            counts[((k >> shift) & mask) as usize] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for &k in keys.iter() {
            let slot = &mut counts[((k >> shift) & mask) as usize];
            scratch[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(keys, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn sorts_like_a_stable_sort_on_the_bit_range() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for (low, high, n) in [
            (0, 64, 5000),
            (20, 47, 3000),
            (5, 6, 100),
            (8, 8, 10),
            (0, 1, 1),
        ] {
            let keys: Vec<u64> = (0..n).map(|_| rng.random()).collect();
            let mask = if high - low == 64 {
                u64::MAX
            } else {
                ((1u64 << (high - low)) - 1) << low
            };
            let mut expected = keys.clone();
            expected.sort_by_key(|&k| k & mask);
            let mut sorted = keys.clone();
            radix_sort_bits(&mut sorted, &mut Vec::new(), low, high);
            assert_eq!(sorted, expected, "bits {low}..{high}");
        }
    }
}
