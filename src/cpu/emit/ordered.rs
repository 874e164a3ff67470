//! The chunks' pairs gathered into the caller's list in canonical order (docs/design.md §2.14):
//! the order is made where the pairs are found, not by a sort of the finished list.
//!
//! 1. Each chunk, its walk just ended and its pairs still in cache, partitions them by bucket
//!    of first index (`i >> shift`, [`MAX_BUCKET_BITS`] bits of buckets at most) into its
//!    [`Parted`] keys: each pair packed as `i`'s bits below the bucket above `j`'s, in a `u32`
//!    where that fits (up to 2^21 objects), so the partition writes and the gather reads half
//!    of what the pairs themselves take.
//! 2. Each bucket (in parallel) copies its runs together into a scratch that stays in cache,
//!    counts every digit of its keys in one read, sorts them by least-significant digits (as
//!    few passes as keep each pass's counters within twice the bucket's keys), or by
//!    comparison when too few for that, and writes them to its place in the list as pairs, in
//!    one sequential run ([`gather`]).
//!
//! So the list is written once, in order, as the plain concatenation wrote it unordered; a sort
//! of the finished list (`canonicalize`'s radix sort) crosses it four times each way.

use crate::broadphase::Pair;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Most bits of first index that choose a bucket: 2^11 buckets keep a chunk's counters in L1
/// and, at 5.9M pairs of 132,000 objects, give buckets of about 5,700 keys (23 KB) that sort in
/// cache.
const MAX_BUCKET_BITS: u32 = 11;
/// Widest digit of the in-bucket sort: two passes over the 25-bit keys of 2^18 objects (one
/// thread, buckets of 5,700 keys: 4.7 ns a key against 5.7 for three 9-bit passes and 9.8 by
/// comparison).
const MAX_DIGIT_BITS: u32 = 13;
/// Narrowest digit: more passes than this asks cost more than a comparison sort.
const MIN_DIGIT_BITS: u32 = 8;
/// A pass's counters (cleared and summed whatever the keys) at most this many times a
/// bucket's keys.
const COUNTERS_PER_KEY: usize = 2;
/// Pairs a chunk's partition handles between two looks at the caller's cancellation.
const PARTITION_SLICE: usize = 1 << 20;
/// From about this many pairs (as the chunks' sizes say) the pairs are gathered in order:
/// below it the list sorts in cache after the concatenation as fast or faster (one thread,
/// 420,000 pairs of 100,000 spheres: 19.6 ms ordered here against 15.9 sorted after; 1.4M
/// pairs of 30,000: 39.1 against 39.5; 5.9M of 132,000: 157 against 207).
pub const ORDERED_GATHER_MIN: usize = 1 << 20;
/// Below this many pairs [`gather`] concatenates and sorts by comparison.
const SMALL_GATHER_MAX: usize = 1 << 14;

/// A pair packed for its bucket: `i`'s bits below the bucket above `j`'s.
trait BucketKey: Copy + Default + Ord + Send + Sync {
    fn pack(key: u64) -> Self;
    fn unpack(self) -> u64;
}

impl BucketKey for u32 {
    #[inline(always)]
    fn pack(key: u64) -> Self {
        key as u32
    }
    #[inline(always)]
    fn unpack(self) -> u64 {
        u64::from(self)
    }
}

impl BucketKey for u64 {
    #[inline(always)]
    fn pack(key: u64) -> Self {
        key
    }
    #[inline(always)]
    fn unpack(self) -> u64 {
        self
    }
}

/// How first indices below a scene's size fall into buckets, and how pairs pack as keys.
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

    /// Bits of a key: `i`'s below the bucket and `j`'s.
    fn key_bits(&self) -> u32 {
        self.shift + self.index_bits
    }

    /// Whether a key fits a `u32`.
    fn narrow(&self) -> bool {
        self.key_bits() <= u32::BITS
    }

    #[inline(always)]
    fn key(&self, p: &Pair) -> u64 {
        let below = u64::from(p[0]) & ((1u64 << self.shift) - 1);
        (below << self.index_bits) | u64::from(p[1])
    }

    /// The pair of bucket `bucket` that `key` packs.
    #[inline(always)]
    fn pair(&self, bucket: usize, key: u64) -> Pair {
        let first = (bucket as u64) << self.shift;
        [
            (first + (key >> self.index_bits)) as u32,
            (key & ((1u64 << self.index_bits) - 1)) as u32,
        ]
    }

    /// The in-bucket sort's digits for a bucket of `keys` keys: `(passes, bits)`, as few passes
    /// as keep a pass's counters within [`COUNTERS_PER_KEY`] times the keys, digits of at most
    /// [`MAX_DIGIT_BITS`] bits and at most as many passes as digits of [`MIN_DIGIT_BITS`] bits
    /// would take (the digits then split the key evenly, so they may be narrower); `None`: sort
    /// by comparison.
    fn digits(&self, keys: usize) -> Option<(usize, u32)> {
        let width = self.key_bits();
        let fewest = width.div_ceil(MAX_DIGIT_BITS).max(1);
        (fewest..=width.div_ceil(MIN_DIGIT_BITS)).find_map(|passes| {
            let bits = width.div_ceil(passes);
            (1usize << bits <= COUNTERS_PER_KEY.saturating_mul(keys))
                .then_some((passes as usize, bits))
        })
    }

    /// Partitions `pairs` by bucket into `parted` as keys (its old contents overwritten, its
    /// length `pairs`'), bucket `b`'s at `starts[b]..starts[b + 1]`. Looks at `stop` between
    /// slices of [`PARTITION_SLICE`] pairs (a degenerate scene's chunk may hold gigabytes):
    /// false, `parted` unfinished, when it says stop.
    fn partition<K: BucketKey>(
        &self,
        pairs: &[Pair],
        parted: &mut Vec<K>,
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
        parted.resize(pairs.len(), K::default());
        for slice in pairs.chunks(PARTITION_SLICE) {
            if stop() {
                return false;
            }
            for p in slice {
                let slot = &mut starts[self.bucket(p) + 1];
                parted[*slot] = K::pack(self.key(p));
                *slot += 1;
            }
        }
        starts.truncate(buckets + 1);
        true
    }
}

/// One chunk's pairs partitioned by bucket as keys ([`Split`]), kept across calls.
#[derive(Default)]
pub struct Parted {
    narrow: Vec<u32>,
    wide: Vec<u64>,
    /// Bucket `b`'s keys are at `starts[b]..starts[b + 1]`.
    starts: Vec<usize>,
}

impl Parted {
    /// The bytes partitioning `pairs` pairs would add to what this holds.
    pub fn growth(&self, split: &Split, pairs: usize) -> u64 {
        let (held, key) = if split.narrow() {
            (self.narrow.capacity(), 4)
        } else {
            (self.wide.capacity(), 8)
        };
        (pairs.saturating_sub(held) * key) as u64
    }

    /// Partitions `pairs` ([`Split::partition`]); false when `stop` cut it short.
    pub fn partition(&mut self, split: &Split, pairs: &[Pair], stop: impl Fn() -> bool) -> bool {
        // The other width's keys are dropped: an emitter keeps one width's memory.
        if split.narrow() {
            self.wide = Vec::new();
            split.partition(pairs, &mut self.narrow, &mut self.starts, stop)
        } else {
            self.narrow = Vec::new();
            split.partition(pairs, &mut self.wide, &mut self.starts, stop)
        }
    }
}

/// Every chunk's partitioned pairs ([`Parted::partition`] with `split`) into `out` (any
/// contents; it ends `total` long) in canonical order: `i < j`, ascending.
pub fn gather(split: &Split, parts: &[&Parted], total: usize, out: &mut Vec<Pair>) {
    gather_sorting(split, parts, total, out, false);
}

/// [`gather`]; `by_digits`: every bucket sorted by digits, however few its keys.
fn gather_sorting(
    split: &Split,
    parts: &[&Parted],
    total: usize,
    out: &mut Vec<Pair>,
    by_digits: bool,
) {
    if split.narrow() {
        let runs: Vec<(&[u32], &[usize])> = parts
            .iter()
            .map(|p| (&p.narrow[..], &p.starts[..]))
            .collect();
        gather_keys(split, &runs, total, out, by_digits);
    } else {
        let runs: Vec<(&[u64], &[usize])> =
            parts.iter().map(|p| (&p.wide[..], &p.starts[..])).collect();
        gather_keys(split, &runs, total, out, by_digits);
    }
}

/// [`gather_sorting`] over one width of keys.
fn gather_keys<K: BucketKey>(
    split: &Split,
    parts: &[(&[K], &[usize])],
    total: usize,
    out: &mut Vec<Pair>,
    by_digits: bool,
) {
    let runs = |bucket: usize| {
        parts
            .iter()
            .map(move |(keys, starts)| &keys[starts[bucket]..starts[bucket + 1]])
    };
    out.clear();
    if total < SMALL_GATHER_MAX {
        for bucket in 0..split.buckets() {
            let from = out.len();
            out.extend(
                runs(bucket)
                    .flatten()
                    .map(|k| split.pair(bucket, k.unpack())),
            );
            out[from..].sort_unstable();
        }
        debug_assert_eq!(
            out.len(),
            total,
            "the parts hold the pairs they were counted with"
        );
        return;
    }
    out.reserve(total);
    // Each bucket's place in the list, written once below without being cleared first.
    let mut places: Vec<&mut [MaybeUninit<Pair>]> = Vec::with_capacity(split.buckets());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for bucket in 0..split.buckets() {
        let len: usize = runs(bucket).map(<[K]>::len).sum();
        let (here, after) = rest.split_at_mut(len);
        places.push(here);
        rest = after;
    }
    assert!(
        rest.is_empty(),
        "the parts hold the pairs they were counted with"
    );
    places.into_par_iter().enumerate().for_each_init(
        || (Vec::<K>::new(), Vec::<u32>::new()),
        |(scratch, counts), (bucket, place)| {
            let len = place.len();
            let pair = |k: K| split.pair(bucket, k.unpack());
            // Counters are u32: a bucket past them (a pair limit raised past 2^32) compares.
            let digits = split.digits(if by_digits { usize::MAX } else { len });
            let Some((passes, bits)) = digits.filter(|_| len <= u32::MAX as usize) else {
                scratch.clear();
                scratch.extend(runs(bucket).flatten());
                scratch.sort_unstable();
                for (slot, &k) in place.iter_mut().zip(scratch.iter()) {
                    slot.write(pair(k));
                }
                return;
            };
            let mask = (1u64 << bits) - 1;
            let digit =
                move |k: K, pass: usize| ((k.unpack() >> (pass as u32 * bits)) & mask) as usize;
            // The runs copied together (one read of each chunk's run, as memory copies), every
            // pass's digits counted in one read of the copy, then each pass's counts turned
            // into its digits' first places.
            scratch.clear();
            scratch.reserve(2 * len);
            for run in runs(bucket) {
                scratch.extend_from_slice(run);
            }
            let width = 1usize << bits;
            counts.clear();
            counts.resize(passes * width, 0);
            for &k in scratch.iter() {
                for pass in 0..passes {
                    counts[pass * width + digit(k, pass)] += 1;
                }
            }
            for offsets in counts.chunks_exact_mut(width) {
                let mut sum = 0;
                for c in offsets {
                    (*c, sum) = (sum, sum + *c);
                }
            }
            // The passes read the scratch's halves in turn, then the sorted keys are written to
            // their place as pairs, in one sequential run (scattering the last pass into the
            // list itself cost more: 142-147 ms a frame against 132-134 at 132,000 spheres).
            scratch.resize(2 * len, K::default());
            let (mut src, mut dst) = scratch.split_at_mut(len);
            for (pass, offsets) in counts.chunks_exact_mut(width).enumerate() {
                for &k in src.iter() {
                    let slot = &mut offsets[digit(k, pass)];
                    dst[*slot as usize] = k;
                    *slot += 1;
                }
                std::mem::swap(&mut src, &mut dst);
            }
            for (slot, &k) in place.iter_mut().zip(src.iter()) {
                slot.write(pair(k));
            }
        },
    );
    // SAFETY: the places partition the first `total` slots, and each bucket wrote every slot
    // of its place: the comparison path one pair a slot, the digits' last pass a permutation of
    // the bucket's keys (its counters' places cover `0..len` once).
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
            (40_000, 2_000_000, 8),
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
            let parted: Vec<Parted> = lists
                .iter()
                .map(|l| {
                    let mut parted = Parted {
                        narrow: vec![7; 5],
                        wide: vec![7; 5],
                        starts: Vec::new(),
                    };
                    assert!(parted.partition(&split, l, || false));
                    parted
                })
                .collect();
            let parts: Vec<&Parted> = parted.iter().collect();
            // Buckets as they come (by comparison, by two passes of digits or more), then
            // every one by digits.
            gather(&split, &parts, total, &mut out);
            assert!(out == expected, "{objects} objects, {pairs} pairs");
            gather_sorting(&split, &parts, total, &mut out, true);
            assert!(
                out == expected,
                "{objects} objects, {pairs} pairs, by digits"
            );
        }
    }

    #[test]
    fn buckets_keys_and_digits_cover_every_index() {
        for objects in [
            1usize,
            2,
            3,
            2048,
            2049,
            132_000,
            1 << 21,
            (1 << 21) + 1,
            (1 << 31) + 5,
        ] {
            let split = Split::of(objects);
            assert!(split.bits <= MAX_BUCKET_BITS);
            let last = (objects - 1) as u32;
            assert!(split.bucket(&[last, last]) < split.buckets(), "{objects}");
            // A key packs and unpacks both indices, in a u32 up to 2^21 objects.
            assert_eq!(split.narrow(), objects <= 1 << 21, "{objects}");
            for p in [[0, last], [last / 2, last], [last, last]] {
                let key = split.key(&p);
                assert!(key < 1 << split.key_bits(), "{objects}");
                assert_eq!(split.pair(split.bucket(&p), key), p, "{objects}");
            }
            // The digits, each of MIN_DIGIT_BITS to MAX_DIGIT_BITS bits, cover the key, as few
            // passes as the counters allow; below that the bucket sorts by comparison.
            let width = split.key_bits();
            for keys in [0, 1, 100, 1_000, 5_000, 100_000, usize::MAX] {
                let Some((passes, bits)) = split.digits(keys) else {
                    assert!(
                        width == 0 || keys < 1 << (MIN_DIGIT_BITS - 1),
                        "{objects} {keys}"
                    );
                    continue;
                };
                let passes = passes as u32;
                assert!(bits <= MAX_DIGIT_BITS && passes <= width.div_ceil(MIN_DIGIT_BITS));
                assert!(passes * bits >= width && (passes - 1) * bits < width.max(1));
                assert!(
                    1 << bits <= COUNTERS_PER_KEY.saturating_mul(keys),
                    "{objects} {keys}"
                );
            }
        }
    }
}
