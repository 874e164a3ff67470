//! The chunks' pairs gathered into the caller's list in canonical order (docs/design.md §2.14):
//! the order is made where the pairs are found, not by a sort of the finished list.
//!
//! 1. Each chunk, its walk just ended and its pairs still in cache, partitions them by bucket
//!    of first index (`i >> shift`, [`MAX_BUCKET_BITS`] bits of buckets at most) into its
//!    second buffer ([`Split::partition`]).
//! 2. Each bucket (in parallel) takes its runs from every chunk into a scratch that stays in
//!    cache and is sorted there by least-significant digits (`j`'s digits, then `i`'s bits
//!    below the bucket), the last pass writing it to its place in the list ([`gather`]).
//!
//! So the list is written once, in order, as the plain concatenation wrote it unordered; a sort
//! of the finished list (`canonicalize`'s radix sort) crosses it four times each way.

use crate::broadphase::Pair;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Most bits of first index that choose a bucket: 2^11 buckets keep a chunk's counters in L1
/// and, at 5.9M pairs, give buckets of about 2,900 pairs (23 KB) that sort in cache.
const MAX_BUCKET_BITS: u32 = 11;
/// Widest digit of the in-bucket sort.
const MAX_DIGIT_BITS: u32 = 12;
/// Pairs a chunk's partition handles between two looks at the caller's cancellation.
const PARTITION_SLICE: usize = 1 << 20;
/// From about this many pairs (as the chunks' sizes say) the pairs are gathered in order:
/// below it the list sorts in cache after the concatenation as fast or faster (one thread,
/// 420,000 pairs of 100,000 spheres: 19.6 ms ordered here against 15.9 sorted after; 1.4M
/// pairs of 30,000: 39.1 against 39.5; 5.9M of 132,000: 157 against 207).
pub const ORDERED_GATHER_MIN: usize = 1 << 20;
/// Below this many pairs [`gather`] concatenates and sorts by comparison.
const SMALL_GATHER_MAX: usize = 1 << 14;

/// How first indices below a scene's size fall into buckets, and the in-bucket sort's digits.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    /// Buckets: `1 << bits`.
    bits: u32,
    /// A pair's bucket is `i >> shift`; the `shift` bits below sort inside the bucket.
    shift: u32,
    /// Bits of the largest index (`j`'s width).
    index_bits: u32,
}

impl Split {
    /// For pairs whose every index is below `objects`.
    pub fn of(objects: usize) -> Self {
        let index_bits = usize::BITS - objects.saturating_sub(1).leading_zeros();
        let bits = index_bits.min(MAX_BUCKET_BITS);
        Self {
            bits,
            shift: index_bits - bits,
            index_bits,
        }
    }

    fn buckets(&self) -> usize {
        1 << self.bits
    }

    #[inline(always)]
    fn bucket(&self, p: &Pair) -> usize {
        (p[0] >> self.shift) as usize
    }

    /// Partitions `pairs` by bucket into `parted` (its old contents overwritten, its length
    /// `pairs`'), bucket `b`'s pairs at `starts[b]..starts[b + 1]`. Looks at `stop` between
    /// slices of [`PARTITION_SLICE`] pairs (a degenerate scene's chunk may hold gigabytes):
    /// false, `parted` unfinished, when it says stop.
    pub fn partition(
        &self,
        pairs: &[Pair],
        parted: &mut Vec<Pair>,
        starts: &mut Vec<usize>,
        stop: impl Fn() -> bool,
    ) -> bool {
        // Counted one place up, summed, then used as the cursors, `starts` ends as the starts
        // with no second table: bucket b counts at b + 2, its cursor is at b + 1 (starting at
        // its start), which ends at its end, bucket b + 1's start.
        let buckets = self.buckets();
        starts.clear();
        starts.resize(buckets + 2, 0);
        for slice in pairs.chunks(PARTITION_SLICE) {
            if stop() {
                return false;
            }
            for p in slice {
                starts[self.bucket(p) + 2] += 1;
            }
        }
        for b in 2..buckets + 2 {
            starts[b] += starts[b - 1];
        }
        // Only a longer list than the last writes new slots; `resize` keeps the others.
        parted.resize(pairs.len(), [0, 0]);
        for slice in pairs.chunks(PARTITION_SLICE) {
            if stop() {
                return false;
            }
            for p in slice {
                let slot = &mut starts[self.bucket(p) + 1];
                parted[*slot] = *p;
                *slot += 1;
            }
        }
        starts.truncate(buckets + 1);
        true
    }

    /// The in-bucket sort's digits over a key of `i`'s bits below the bucket above `j`'s:
    /// `(passes, bits)`, each digit at most [`MAX_DIGIT_BITS`] wide.
    fn key_digits(&self) -> (usize, u32) {
        let width = self.shift + self.index_bits;
        match width.div_ceil(MAX_DIGIT_BITS) {
            0 => (0, 0),
            passes => (passes as usize, width.div_ceil(passes)),
        }
    }
}

/// Every chunk's partitioned pairs (`parts[c]` with its `starts`, [`Split::partition`]) into
/// `out` (any contents; it ends `total` long) in canonical order: `i < j`, ascending.
pub fn gather(split: &Split, parts: &[(&[Pair], &[usize])], total: usize, out: &mut Vec<Pair>) {
    gather_sorting(split, parts, total, out, COUNTERS_PER_PAIR);
}

/// A bucket is sorted by digits when it holds at least this many pairs per counter of its
/// digits (fewer: by comparison, clearing and summing counters for nothing).
const COUNTERS_PER_PAIR: usize = 2;

/// [`gather`], sorting a bucket by digits from `per_counter` pairs a counter.
fn gather_sorting(
    split: &Split,
    parts: &[(&[Pair], &[usize])],
    total: usize,
    out: &mut Vec<Pair>,
    per_counter: usize,
) {
    out.clear();
    if total < SMALL_GATHER_MAX {
        for (pairs, _) in parts {
            out.extend_from_slice(pairs);
        }
        out.sort_unstable();
        return;
    }
    out.reserve(total);
    // Each bucket's place in the list, written once below without being cleared first.
    let buckets = split.buckets();
    let mut places: Vec<&mut [MaybeUninit<Pair>]> = Vec::with_capacity(buckets);
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for b in 0..buckets {
        let len: usize = parts.iter().map(|(_, s)| s[b + 1] - s[b]).sum();
        let (here, after) = rest.split_at_mut(len);
        places.push(here);
        rest = after;
    }
    assert!(
        rest.is_empty(),
        "the parts hold the pairs they were counted with"
    );
    let (passes, digit_bits) = split.key_digits();
    let counters = passes << digit_bits;
    let index_bits = split.index_bits;
    let j_mask = (1u64 << index_bits) - 1;
    let digit_mask = (1u64 << digit_bits) - 1;
    places.into_par_iter().enumerate().for_each_init(
        || (Vec::new(), Vec::new(), Vec::new()),
        |(a, b, counts): &mut (Vec<u64>, Vec<u64>, Vec<usize>), (bucket, place)| {
            let first = (bucket as u32) << split.shift;
            let key = |p: &Pair| (u64::from(p[0] - first) << index_bits) | u64::from(p[1]);
            let pair = |k: u64| [first + (k >> index_bits) as u32, (k & j_mask) as u32];
            a.clear();
            a.reserve(place.len());
            let sort_by_digits = passes > 0 && place.len() >= per_counter * counters;
            counts.clear();
            counts.resize(counters, 0);
            for (pairs, starts) in parts {
                a.extend(pairs[starts[bucket]..starts[bucket + 1]].iter().map(key));
            }
            if sort_by_digits {
                for &k in a.iter() {
                    for d in 0..passes {
                        let digit = ((k >> (d as u32 * digit_bits)) & digit_mask) as usize;
                        counts[(d << digit_bits) + digit] += 1;
                    }
                }
            }
            // Few pairs against the digits' counters: by comparison.
            if !sort_by_digits {
                a.sort_unstable();
                for (slot, &k) in place.iter_mut().zip(a.iter()) {
                    slot.write(pair(k));
                }
                return;
            }
            b.resize(a.len(), 0);
            for d in 0..passes {
                let offsets = &mut counts[d << digit_bits..(d + 1) << digit_bits];
                let mut sum = 0;
                for c in offsets.iter_mut() {
                    let here = *c;
                    *c = sum;
                    sum += here;
                }
                let shift = d as u32 * digit_bits;
                let digit = |k: u64| ((k >> shift) & digit_mask) as usize;
                let (src, dst) = if d % 2 == 0 {
                    (&*a, &mut *b)
                } else {
                    (&*b, &mut *a)
                };
                if d + 1 == passes {
                    for &k in src {
                        let slot = &mut offsets[digit(k)];
                        place[*slot].write(pair(k));
                        *slot += 1;
                    }
                } else {
                    for &k in src {
                        let slot = &mut offsets[digit(k)];
                        dst[*slot] = k;
                        *slot += 1;
                    }
                }
            }
        },
    );
    // SAFETY: the places partition the first `total` slots, and each bucket wrote every slot
    // of its place: the comparison path one pair a slot, the digits' last pass a permutation of
    // the bucket's pairs (its counters' places cover `0..len` once).
    unsafe { out.set_len(total) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every shape of input comes out as the sorted list of its pairs: few and many objects
    /// (digits on `i` or none, buckets sorted by digits or by comparison), empty chunks, one
    /// first index holding thousands of pairs, a list longer and shorter than the last.
    #[test]
    fn the_gather_is_the_sorted_concatenation() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut out = vec![[9, 9]; 1_000_000];
        for (objects, pairs, chunks) in [
            (100usize, 20_000usize, 3usize),
            (3_000, 1_000_000, 9),
            (5_000, 300_000, 17),
            (132_000, 2_000, 2),
            (132_000, 300_000, 128),
            (1 << 26, 40_000, 5),
            ((1 << 26) + 3, 50_000, 1),
        ] {
            let mut lists = vec![Vec::new(); chunks];
            for _ in 0..pairs {
                let i = rng.random_range(0..objects as u32 - 1);
                let j = rng.random_range(i + 1..objects as u32);
                lists[rng.random_range(0..chunks)].push([i, j]);
            }
            lists.push(Vec::new());
            // One first index with a run of its own, its partners descending.
            for j in (1..3_000.min(objects as u32)).rev() {
                lists[0].push([0, j]);
            }
            let total = lists.iter().map(Vec::len).sum();
            let mut expected: Vec<Pair> = lists.concat();
            expected.sort_unstable();
            let split = Split::of(objects);
            let parted: Vec<(Vec<Pair>, Vec<usize>)> = lists
                .iter()
                .map(|l| {
                    let (mut parted, mut starts) = (vec![[7, 7]; 5], Vec::new());
                    assert!(split.partition(l, &mut parted, &mut starts, || false));
                    (parted, starts)
                })
                .collect();
            let parts: Vec<(&[Pair], &[usize])> = parted
                .iter()
                .map(|(p, s)| (p.as_slice(), s.as_slice()))
                .collect();
            // Buckets as they come (most by comparison at these sizes), then every one by
            // digits.
            gather(&split, &parts, total, &mut out);
            assert!(out == expected, "{objects} objects, {pairs} pairs");
            gather_sorting(&split, &parts, total, &mut out, 0);
            assert!(
                out == expected,
                "{objects} objects, {pairs} pairs, by digits"
            );
        }
    }

    #[test]
    fn buckets_and_digits_cover_every_index() {
        for objects in [1usize, 2, 3, 2048, 2049, 132_000, (1 << 31) + 5] {
            let split = Split::of(objects);
            assert!(split.bits <= MAX_BUCKET_BITS);
            let last = (objects - 1) as u32;
            assert!(split.bucket(&[last, last]) < split.buckets(), "{objects}");
            // The key (i's bits below the bucket above j's) fits a u64, and the digits,
            // each at most MAX_DIGIT_BITS wide, cover it.
            let (passes, bits) = split.key_digits();
            let width = split.shift + split.index_bits;
            assert!(width <= 64 && bits <= MAX_DIGIT_BITS, "{objects}");
            let passes = passes as u32;
            assert!(passes * bits >= width && passes.saturating_sub(1) * bits < width.max(1));
        }
    }
}
