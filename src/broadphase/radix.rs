//! Stable least-significant-digit radix sort of u64 keys on a range of their bits. Sorting only
//! the bits that vary (the grid's cell bits, not the index below them) keeps it to a few passes;
//! stability keeps equal digits in their input order.

use rayon::prelude::*;

/// Widest digit: 2^11 counters stay in L1. (Tried: 14-bit digits, two passes instead of three
/// for the grid's 27 cell bits at density 1M: its sort stage took 17-18.5 ms against 14.5-16.)
const MAX_DIGIT_BITS: u32 = 11;
/// From this many keys each pass counts and scatters in parallel, in [`CHUNKS_PER_THREAD`]
/// chunks per thread.
const PARALLEL_MIN: usize = 1 << 16;
/// Chunks per thread of a parallel pass, so a thread slowed by the machine's other work leaves
/// chunks for the others to take. (One per thread: the grid's sort stage at density 1M on 2
/// shared cores took 10.3-13.1 ms against 10.0-11.6 with 4, alternating, in a busy period; no
/// difference on one thread.)
const CHUNKS_PER_THREAD: usize = 4;

/// [`radix_sort_slice`] carrying one item per key: on return `items[p] = item_of(i, k)` where
/// `k = keys[p]` was at position `i` of the input. Pass 0 calls `item_of` in input order, later
/// passes move the items with their keys: where the input order follows the items in memory
/// (the grid's keys are made in index order) that reads them sequentially, instead of
/// gathering them at random after the sort. `item_scratch` is reused.
///
/// Looks at the calling thread's token ([`crate::Limits`]) between passes (a pass over 30M keys
/// and their items takes about a second on 2 cores): false where it stopped there, the keys and
/// items then a whole permutation of the input, in step, but not sorted; the caller fails with
/// [`crate::Error::Interrupted`] and keeps no order made from them.
#[must_use = "false: stopped by the caller's token before the keys were sorted"]
pub fn radix_sort_carrying<T: Copy + Default + Send + Sync>(
    keys: &mut Vec<u64>,
    scratch: &mut Vec<u64>,
    items: &mut Vec<T>,
    item_scratch: &mut Vec<T>,
    item_of: impl Fn(usize, u64) -> T + Sync,
    low: u32,
    high: u32,
) -> bool {
    let n = keys.len();
    // Every slot is written before it is read: only a new length needs filling (clearing first
    // would write the whole buffer every frame).
    scratch.resize(n, 0);
    items.resize(n, T::default());
    item_scratch.resize(n, T::default());
    let mut carried = Items {
        first: Some(&item_of),
        items,
        scratch: item_scratch,
    };
    let token = super::cancel::current();
    let stop = || super::cancel::stopped(&token);
    let (ended_in_scratch, finished) = sort_passes(keys, scratch, &mut carried, low, high, &stop);
    if ended_in_scratch {
        std::mem::swap(keys, scratch);
        std::mem::swap(items, item_scratch);
    } else if width_passes(low, high, n) == 0 {
        // No pass ran: the items are still to be taken.
        items
            .par_iter_mut()
            .zip(keys.par_iter())
            .enumerate()
            .for_each(|(i, (item, &k))| *item = item_of(i, k));
    }
    finished
}

/// Sorts `keys` by bits `[low, high)` (stable; other bits ride along). `scratch` (at least as
/// long) is reused; an odd number of passes ends with a copy back.
/// Each pass counts digits per chunk, then scatters every chunk to its own offsets: stable, as
/// chunks are in order; in parallel from [`PARALLEL_MIN`] keys, which took the grid's 1M-key
/// sort (27 bits, 3 passes) from 6.0 to about 3.5 ms on 2 cores.
/// (Tried: the most significant digit first, then each of its 512 buckets, a few thousand
/// keys, sorted in cache on the other two digits with one counting read: 1M keys of 27 bits
/// took 3.7 ms against 3.6 on 2 threads and 6.3 against 6.0 on one, as the buckets still
/// cross memory once each way.)
pub fn radix_sort_slice(keys: &mut [u64], scratch: &mut [u64], low: u32, high: u32) {
    let scratch = &mut scratch[..keys.len()];
    let mut none = Items::none(keys.len());
    // Never stopped: a caller of a slice sort expects it sorted.
    if sort_passes(keys, scratch, &mut none, low, high, &|| false).0 {
        keys.copy_from_slice(scratch);
    }
}

/// The items a sort carries along its keys: pass 0 makes them with `first`, later passes
/// from the buffer the last pass wrote, in the same ping-pong as the keys (`items` beside the
/// keys, `scratch` beside theirs). `T = ()` carries nothing (zero-sized writes).
struct Items<'a, T, F> {
    first: Option<&'a F>,
    items: &'a mut [T],
    scratch: &'a mut [T],
}

impl Items<'static, (), fn(usize, u64)> {
    fn none(n: usize) -> Self {
        // Zero-sized items: `leak` allocates nothing and frees nothing.
        Self {
            first: None,
            items: vec![(); n].leak(),
            scratch: vec![(); n].leak(),
        }
    }
}

/// Passes for a sort of bits `[low, high)` of `n` keys.
fn width_passes(low: u32, high: u32, n: usize) -> u32 {
    let width = high - low;
    if width == 0 || n < 2 {
        0
    } else {
        width.div_ceil(MAX_DIGIT_BITS)
    }
}

/// A destination several tasks write through, each at positions no other task writes (here a
/// pass's chunks; the grid's dense rows use it for their counting sorts too).
pub(crate) struct Destination<T>(pub *mut T);
// SAFETY: every user gives each task its own positions (here each chunk's offsets cover its
// own digits' slots, disjoint from every other chunk's: they partition `0..len` by
// construction), so no slot is written twice; each write site states its case.
unsafe impl<T> Send for Destination<T> {}
unsafe impl<T> Sync for Destination<T> {}

/// The passes, from `keys` to `scratch` and back (same lengths), the items alongside: whether
/// the last pass run wrote `scratch`, and whether every pass ran (`stop`, asked between passes,
/// ends them early: the keys and items a whole permutation, not sorted).
fn sort_passes<T: Copy + Send + Sync, F: Fn(usize, u64) -> T + Sync>(
    keys: &mut [u64],
    scratch: &mut [u64],
    items: &mut Items<T, F>,
    low: u32,
    high: u32,
    stop: &dyn Fn() -> bool,
) -> (bool, bool) {
    debug_assert!(low <= high && high <= 64);
    let n = keys.len();
    let passes = width_passes(low, high, n);
    if passes == 0 {
        return (false, true);
    }
    let digit_bits = (high - low).div_ceil(passes);
    let buckets = 1usize << digit_bits;
    let chunks = if n >= PARALLEL_MIN {
        CHUNKS_PER_THREAD * rayon::current_num_threads().max(1)
    } else {
        1
    };
    let chunk = n.div_ceil(chunks);
    let mut offsets = vec![vec![0usize; buckets]; chunks];
    for pass in 0..passes {
        if pass > 0 && stop() {
            return (pass % 2 == 1, false);
        }
        let (keys, scratch, item_src, item_dst): (&[u64], &mut [u64], &[T], &mut [T]) =
            if pass % 2 == 0 {
                (keys, scratch, &*items.items, &mut *items.scratch)
            } else {
                (scratch, keys, &*items.scratch, &mut *items.items)
            };
        // Pass 0 takes the items from `first`, later passes from the last pass's output.
        let first = if pass == 0 { items.first } else { None };
        let shift = low + pass * digit_bits;
        // The last digit may be narrower: bits from `high` up are not part of the key.
        let mask = (1u64 << digit_bits.min(high - shift)) - 1;
        let digit = move |k: u64| ((k >> shift) & mask) as usize;
        let count = |(src, counts): (&[u64], &mut Vec<usize>)| {
            counts.fill(0);
            for &k in src {
                counts[digit(k)] += 1;
            }
        };
        if chunks > 1 {
            keys.par_chunks(chunk)
                .zip(offsets.par_iter_mut())
                .for_each(count);
        } else {
            count((keys, &mut offsets[0]));
        }
        // Digit-major, chunk-minor prefix sum: chunk c's keys of digit d follow those of the
        // earlier chunks.
        let mut sum = 0;
        for d in 0..buckets {
            for counts in offsets.iter_mut() {
                let here = counts[d];
                counts[d] = sum;
                sum += here;
            }
        }
        let dst = Destination(scratch.as_mut_ptr());
        let item_out = Destination(item_dst.as_mut_ptr());
        let scatter = |(c, slots): (usize, &mut Vec<usize>)| {
            let (out, item_out) = (&dst, &item_out);
            let begin = c * chunk;
            let src = &keys[begin..n.min(begin + chunk)];
            let mut put = |k: u64, item: T| {
                let slot = &mut slots[digit(k)];
                // SAFETY: `*slot` < n, and no other chunk owns it (see `Destination`); the
                // item buffers are n long too.
                unsafe {
                    *out.0.add(*slot) = k;
                    *item_out.0.add(*slot) = item;
                }
                *slot += 1;
            };
            match first {
                Some(first) => {
                    for (j, &k) in src.iter().enumerate() {
                        put(k, first(begin + j, k));
                    }
                }
                None => {
                    for (&k, &item) in src.iter().zip(&item_src[begin..begin + src.len()]) {
                        put(k, item);
                    }
                }
            }
        };
        if chunks > 1 {
            offsets.par_iter_mut().enumerate().for_each(scatter);
        } else {
            scatter((0, &mut offsets[0]));
        }
    }
    (passes % 2 == 1, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `n` random keys, the mask of bits `[low, high)`, and the keys sorted stably by those
    /// bits (the standard library's sort: the definition).
    fn random_keys(
        rng: &mut rand_chacha::ChaCha8Rng,
        n: usize,
        low: u32,
        high: u32,
    ) -> (Vec<u64>, u64, Vec<u64>) {
        let keys: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let mask = if high - low == 64 {
            u64::MAX
        } else {
            ((1u64 << (high - low)) - 1) << low
        };
        let mut expected = keys.clone();
        expected.sort_by_key(|&k| k & mask);
        (keys, mask, expected)
    }

    #[test]
    fn sorts_like_a_stable_sort_on_the_bit_range() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for (low, high, n) in [
            (0, 64, 5000),
            (0, 64, 200_000),
            (20, 47, 150_000),
            (20, 47, 3000),
            (5, 6, 100),
            (8, 8, 10),
            (0, 1, 1),
        ] {
            let (keys, _, expected) = random_keys(&mut rng, n, low, high);
            let mut sorted = keys.clone();
            radix_sort_slice(&mut sorted, &mut vec![0; n + 5], low, high);
            assert_eq!(sorted, expected, "slice, bits {low}..{high}");
        }
    }

    /// A cancelled caller's sort stops after its first pass: false, the keys and the items a
    /// whole permutation of the input still in step (each item beside its own key).
    #[test]
    fn a_cancelled_sort_stops_between_passes_with_items_in_step() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let (keys, _, expected) = random_keys(&mut rng, 100_000, 0, 33);
        let token = crate::CancelToken::new();
        token.cancel();
        let (mut sorted, mut scratch, mut items, mut item_scratch) =
            (keys.clone(), Vec::new(), Vec::new(), Vec::new());
        let finished = crate::Limits::new().with_cancel(token).run(|| {
            radix_sort_carrying(
                &mut sorted,
                &mut scratch,
                &mut items,
                &mut item_scratch,
                |_, k| k,
                0,
                33,
            )
        });
        assert!(!finished);
        assert_ne!(sorted, expected);
        assert_eq!(items, sorted);
        let (mut a, mut b) = (sorted.clone(), keys.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    /// The carried items end beside their keys, with the keys sorted as without them (an item
    /// made from the key's low bits, so a wrong move shows), for every number of passes,
    /// including none.
    #[test]
    fn carried_items_follow_their_keys() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut scratch, mut items, mut item_scratch) = (Vec::new(), Vec::new(), Vec::new());
        for (low, high, n) in [
            (20u32, 38u32, 200_000usize),
            (20, 47, 3000),
            (20, 29, 100_000),
            (20, 20, 500),
            (0, 64, 1),
        ] {
            let (keys, mask, expected) = random_keys(&mut rng, n, low, high);
            let item_of =
                |i: usize, k: u64| [(k & 0xfffff) as u32, (k >> 40) as u32, keys[i] as u32];
            let mut sorted = keys.clone();
            let finished = radix_sort_carrying(
                &mut sorted,
                &mut scratch,
                &mut items,
                &mut item_scratch,
                item_of,
                low,
                high,
            );
            assert!(finished);
            assert_eq!(sorted, expected, "bits {low}..{high}");
            // Stable: the input position of each sorted key, found by a stable sort of positions.
            let mut positions: Vec<usize> = (0..n).collect();
            positions.sort_by_key(|&i| keys[i] & mask);
            let want: Vec<[u32; 3]> = positions.iter().map(|&i| item_of(i, keys[i])).collect();
            assert_eq!(items, want, "items, bits {low}..{high}");
        }
    }

    /// Few distinct values in the sorted bits (most keys equal, some others spread out) and
    /// random bits outside them: equal values keep their input order.
    #[test]
    fn equal_digits_keep_their_order_in_skewed_sorts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for (low, high, n) in [
            (0u32, 33u32, 120_000usize),
            (20, 47, 150_000),
            (4, 64, 3000),
        ] {
            let width = high - low;
            let mask = (u64::MAX >> (64 - width)) << low;
            let keys: Vec<u64> = (0..n)
                .map(|_| {
                    let value: u64 = if rng.random_bool(0.9) {
                        1 << (width - 1)
                    } else {
                        rng.random_range(0..8u64) << (width - 4)
                    };
                    (value << low) | (rng.random::<u64>() & !mask)
                })
                .collect();
            let mut expected = keys.clone();
            expected.sort_by_key(|&k| k & mask);
            let mut sorted = keys.clone();
            radix_sort_slice(&mut sorted, &mut vec![7; n], low, high);
            assert_eq!(sorted, expected, "bits {low}..{high}");
        }
    }
}
