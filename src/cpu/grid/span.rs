//! Cells x of a run of sorted positions matched 32 at a time: [`Span::near`] reads 32 u16
//! cells straight from the position table (padded at its end) and sets a bit for each within
//! one of `x`. Three instruction sets behind one trait: AVX-512BW (one compare per block), SSE2
//! (the x86-64 baseline, four vectors), and a portable loop; [`super::dense_rows`] picks the
//! widest the CPU has once per call.

/// Positions a block covers; the position table holds this many [`PAD`] entries past its end.
pub const SPAN: usize = 32;
/// A cell x no object has: never within one of a cell up to [`SPAN_MAX`] (`x + 1 <= PAD - 1`,
/// and `x - 1` wraps only for `x = 0`, to `u16::MAX`).
pub const PAD: u16 = u16::MAX - 1;
/// Largest cell x a span holds.
pub const SPAN_MAX: u32 = u16::MAX as u32 - 3;

/// One way to match a block of cells.
pub trait Span {
    /// The cells of one block in registers: loaded once, matched against many `x`.
    type Block: Copy;

    /// The block `kx[at..at + SPAN]`.
    ///
    /// # Safety
    /// `kx[at..at + SPAN]` is in bounds, and the CPU has the instruction set of the
    /// implementation.
    unsafe fn load(kx: &[u16], at: usize) -> Self::Block;

    /// Bit `k` set when lane `k` of `block` is within one of `x` (`|cell - x| <= 1`).
    ///
    /// # Safety
    /// The CPU has the instruction set of the implementation.
    unsafe fn near_block(block: &Self::Block, x: u16) -> u32;

    /// [`Span::near_block`] of the block at `at`.
    ///
    /// # Safety
    /// As [`Span::load`].
    #[inline(always)]
    unsafe fn near(kx: &[u16], at: usize, x: u16) -> u32 {
        // SAFETY: the caller's.
        unsafe { Self::near_block(&Self::load(kx, at), x) }
    }
}

/// Whether this CPU has AVX-512BW, with POPCNT and BMI1 for the masks: the dense rows then
/// match with [`Avx512`] and, where crowded, test whole blocks ([`super::touch`]).
pub fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The lanes of `len` positions (all 32 from `SPAN` on).
#[inline(always)]
pub fn lanes(len: usize) -> u32 {
    ((1u64 << len.min(SPAN)) - 1) as u32
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
/// Any CPU: lane by lane, `cell - (x - 1)` modulo 2^16 at most 2.
pub struct Portable;

impl Span for Portable {
    type Block = [u16; SPAN];

    #[inline(always)]
    unsafe fn load(kx: &[u16], at: usize) -> Self::Block {
        kx[at..at + SPAN].try_into().expect("SPAN cells")
    }

    #[inline(always)]
    unsafe fn near_block(block: &Self::Block, x: u16) -> u32 {
        let low = x.wrapping_sub(1);
        let mut mask = 0;
        for (k, &c) in block.iter().enumerate() {
            mask |= u32::from(c.wrapping_sub(low) <= 2) << k;
        }
        mask
    }
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx512, Sse2};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{SPAN, Span};
    use std::arch::x86_64::*;

    /// The x86-64 baseline: four vectors of eight lanes; `cell - (x - 1)`, less 2 with
    /// unsigned saturation, is zero exactly for the lanes within one; the four compares
    /// packed to bytes, their top bits gathered.
    pub struct Sse2;

    impl Span for Sse2 {
        type Block = [__m128i; 4];

        #[inline(always)]
        unsafe fn load(kx: &[u16], at: usize) -> Self::Block {
            debug_assert!(at + SPAN <= kx.len());
            // SAFETY: the caller keeps `kx[at..at + 32]` in bounds; SSE2 is in the baseline.
            unsafe {
                let src = kx.as_ptr().add(at).cast::<__m128i>();
                [0, 1, 2, 3].map(|k| _mm_loadu_si128(src.add(k)))
            }
        }

        #[inline(always)]
        unsafe fn near_block(block: &Self::Block, x: u16) -> u32 {
            // SAFETY: SSE2 is in the baseline; register operations only.
            unsafe {
                let low = _mm_set1_epi16(x.wrapping_sub(1) as i16);
                let (two, zero) = (_mm_set1_epi16(2), _mm_setzero_si128());
                let lane = |k: usize| {
                    let d = _mm_sub_epi16(block[k], low);
                    _mm_cmpeq_epi16(_mm_subs_epu16(d, two), zero)
                };
                let first = _mm_movemask_epi8(_mm_packs_epi16(lane(0), lane(1))) as u32;
                let second = _mm_movemask_epi8(_mm_packs_epi16(lane(2), lane(3))) as u32;
                first | second << 16
            }
        }
    }

    /// AVX-512BW: the 32 lanes in one register, one unsigned compare to a mask.
    pub struct Avx512;

    impl Span for Avx512 {
        type Block = __m512i;

        #[inline(always)]
        unsafe fn load(kx: &[u16], at: usize) -> Self::Block {
            debug_assert!(at + SPAN <= kx.len());
            // SAFETY: the caller keeps `kx[at..at + 32]` in bounds and checked AVX-512BW.
            unsafe { load_avx512(kx.as_ptr().add(at)) }
        }

        #[inline(always)]
        unsafe fn near_block(block: &Self::Block, x: u16) -> u32 {
            // SAFETY: the caller checked AVX-512BW.
            unsafe { near_avx512(*block, x) }
        }
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    unsafe fn load_avx512(src: *const u16) -> __m512i {
        // SAFETY: 64 readable bytes at `src` (the caller's bounds).
        unsafe { _mm512_loadu_si512(src.cast()) }
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn near_avx512(cells: __m512i, x: u16) -> u32 {
        let d = _mm512_sub_epi16(cells, _mm512_set1_epi16(x.wrapping_sub(1) as i16));
        _mm512_cmple_epu16_mask(d, _mm512_set1_epi16(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every implementation the CPU runs gives the definition's mask (in u32, no wrapping),
    /// for cells near 0, near [`SPAN_MAX`], across the sign bit of a lane and anywhere, with
    /// the padding among them, for `x` at and around them and at both ends.
    #[test]
    fn every_instruction_set_marks_exactly_the_cells_within_one() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let mut checked = [0u32; 3];
        for round in 0..3000 {
            let base: u32 = match round % 4 {
                0 => 0,
                1 => SPAN_MAX - 40,
                2 => rng.random_range(0..SPAN_MAX - 40),
                _ => (1 << 15) - 20,
            };
            let kx: Vec<u16> = (0..SPAN + 7)
                .map(|_| match rng.random_range(0..8) {
                    0 => PAD,
                    _ => (base + rng.random_range(0..=40)) as u16,
                })
                .collect();
            let at = round % 8;
            for x in [base, base + 1, base + rng.random_range(0..41), 0, SPAN_MAX] {
                let want: u32 = (0..SPAN)
                    .filter(|&k| kx[at + k] != PAD && u32::from(kx[at + k]).abs_diff(x) <= 1)
                    .map(|k| 1 << k)
                    .sum();
                let x = x as u16;
                // SAFETY: `at + SPAN <= kx.len()`; each set only where detected.
                unsafe {
                    assert_eq!(Portable::near(&kx, at, x), want);
                    checked[0] += 1;
                    #[cfg(target_arch = "x86_64")]
                    {
                        assert_eq!(Sse2::near(&kx, at, x), want, "sse2 x {x} at {at}");
                        checked[1] += 1;
                        if std::arch::is_x86_feature_detected!("avx512bw") {
                            assert_eq!(Avx512::near(&kx, at, x), want, "avx512 x {x}");
                            checked[2] += 1;
                        }
                    }
                }
            }
        }
        // Every instruction set this CPU has was compared, as often as the portable loop.
        assert!(checked[0] > 0);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(checked[1], checked[0]);
            if std::arch::is_x86_feature_detected!("avx512bw") {
                assert_eq!(checked[2], checked[0]);
            }
        }
    }

    #[test]
    fn lanes_cover_the_length() {
        assert_eq!(lanes(0), 0);
        assert_eq!(lanes(1), 1);
        assert_eq!(lanes(31), u32::MAX >> 1);
        assert_eq!(lanes(32), u32::MAX);
        assert_eq!(lanes(1000), u32::MAX);
    }
}
