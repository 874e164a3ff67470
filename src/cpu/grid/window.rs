//! A short row's cells in one register-sized window: the sparse walk matches an object's x
//! against all of a row at once (a mask of the lanes within one cell), with no branch per
//! lane. Two widths behind [`Lanes`]: [`Window`] holds any cell in u32 lanes (four SSE2 vectors);
//! [`NarrowWindow`], for scenes whose cells x stay at most [`NARROW_MAX`], holds u16 lanes (two
//! vectors, half the work per mask). On x86-64 they use SSE2 (part of the x86-64 baseline);
//! elsewhere portable loops compute the same masks.

/// Lanes per window: rows up to this long are matched at once.
pub const WINDOW: usize = 16;
/// Lanes past a row's end: no cell is within one of it (relative cells stay below
/// `2^32 - 3 * 2^27`, see `GridFrame::cell`).
pub const PAD: u32 = u32::MAX - 1;

/// Largest cell x a [`NarrowWindow`] holds (its padding, `u16::MAX - 1`, is then never within
/// one of a cell, and `x - 1` wraps only for `x = 0`, to a value no cell takes).
pub const NARROW_MAX: u32 = u16::MAX as u32 - 3;
const NARROW_PAD: u16 = u16::MAX - 1;

/// `$sse2` on x86-64 (SSE2 is in its baseline), `$portable` elsewhere.
macro_rules! by_arch {
    ($sse2:expr, $portable:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            $sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $portable
        }
    }};
}

/// A window of a row's cells: loaded once per row, matched once per object.
pub trait Lanes: Copy + Default + Send + Sync {
    /// The cells `kx[start..end]`, `end - start <= WINDOW`; `kx` must hold [`WINDOW`] entries
    /// from `start` on (the grid pads it), so the loads stay in bounds.
    fn load(kx: &[u32], start: usize, end: usize) -> Self;
    /// Bit `k` set when lane `k` holds a cell within one of `x` (`|cell - x| <= 1`).
    fn near(&self, x: u32) -> u32;
}

/// Up to [`WINDOW`] cells of one row, padded with [`PAD`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Window([u32; WINDOW]);

impl Default for Window {
    fn default() -> Self {
        Self([PAD; WINDOW])
    }
}

impl Lanes for Window {
    #[inline(always)]
    fn load(kx: &[u32], start: usize, end: usize) -> Self {
        let (lanes, len) = row_lanes(kx, start, end);
        by_arch!(sse2::load(lanes, len), portable_load(lanes, len))
    }

    #[inline(always)]
    fn near(&self, x: u32) -> u32 {
        by_arch!(sse2::near(self, x), portable_near(self, x))
    }
}

/// Up to [`WINDOW`] cells of one row, each at most [`NARROW_MAX`], in u16 lanes flipped by
/// `0x8000` (so signed 16-bit compares order them), padded with `u16::MAX - 1` (flipped).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct NarrowWindow([u16; WINDOW]);

impl Default for NarrowWindow {
    fn default() -> Self {
        Self([NARROW_PAD ^ 0x8000; WINDOW])
    }
}

impl Lanes for NarrowWindow {
    #[inline(always)]
    fn load(kx: &[u32], start: usize, end: usize) -> Self {
        let (lanes, len) = row_lanes(kx, start, end);
        by_arch!(
            sse2::load_narrow(lanes, len),
            portable_load_narrow(lanes, len)
        )
    }

    #[inline(always)]
    fn near(&self, x: u32) -> u32 {
        by_arch!(sse2::near_narrow(self, x), portable_near_narrow(self, x))
    }
}

/// The [`WINDOW`] entries of `kx` from `start` (the grid pads `kx`) and the row's length.
#[inline(always)]
fn row_lanes(kx: &[u32], start: usize, end: usize) -> (&[u32; WINDOW], usize) {
    debug_assert!(end - start <= WINDOW);
    let lanes = kx[start..start + WINDOW].try_into().expect("padded");
    (lanes, end - start)
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable_load_narrow(lanes: &[u32; WINDOW], len: usize) -> NarrowWindow {
    NarrowWindow(std::array::from_fn(|k| {
        (if k < len { lanes[k] as u16 } else { NARROW_PAD }) ^ 0x8000
    }))
}

/// As [`portable_near`] in 16 bits: `cell - (x - 1)` is at most 2 modulo 2^16 exactly when
/// the cell is within one of `x`, cells and `x` being at most [`NARROW_MAX`].
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable_near_narrow(w: &NarrowWindow, x: u32) -> u32 {
    let low = x.wrapping_sub(1) as u16;
    let mut mask = 0u32;
    for (k, &c) in w.0.iter().enumerate() {
        mask |= u32::from((c ^ 0x8000).wrapping_sub(low) <= 2) << k;
    }
    mask
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable_load(lanes: &[u32; WINDOW], len: usize) -> Window {
    Window(std::array::from_fn(
        |k| if k < len { lanes[k] } else { PAD },
    ))
}

/// `cell - (x - 1)`, wrapping, is at most 2 exactly when the cell is within one of `x`
/// (cells and `x` are below `2^32 - 2`, so `x - 1` wraps only for `x = 0`, where it still
/// works).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn portable_near(w: &Window, x: u32) -> u32 {
    let low = x.wrapping_sub(1);
    let mut mask = 0u32;
    for (k, &c) in w.0.iter().enumerate() {
        mask |= u32::from(c.wrapping_sub(low) <= 2) << k;
    }
    mask
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{NARROW_PAD, NarrowWindow, PAD, WINDOW, Window};
    use std::arch::x86_64::*;

    /// Vector `k` (lanes `4k..4k + 4`) of `lanes`, those from `len` on replaced by `pad`: a
    /// compare of the lane numbers with `len`, then a select.
    ///
    /// # Safety
    /// `k < WINDOW / 4` (SSE2 is in the x86-64 baseline).
    #[inline(always)]
    unsafe fn padded_vector(lanes: &[u32; WINDOW], k: usize, len: usize, pad: u32) -> __m128i {
        // SAFETY: `k < 4`, so the unaligned load reads within the 16 u32 of `lanes`.
        unsafe {
            let first = 4 * k as i32;
            let lane = _mm_set_epi32(first + 3, first + 2, first + 1, first);
            let valid = _mm_cmpgt_epi32(_mm_set1_epi32(len as i32), lane);
            let cells = _mm_loadu_si128(lanes.as_ptr().cast::<__m128i>().add(k));
            let pad = _mm_set1_epi32(pad as i32);
            _mm_or_si128(_mm_and_si128(valid, cells), _mm_andnot_si128(valid, pad))
        }
    }

    /// Lanes `len..` replaced by [`PAD`].
    #[inline(always)]
    pub fn load(lanes: &[u32; WINDOW], len: usize) -> Window {
        let mut w = Window::default();
        // SAFETY: `k < 4`; `w` is 16-byte aligned with room for 4 vectors.
        unsafe {
            let dst = w.0.as_mut_ptr().cast::<__m128i>();
            for k in 0..WINDOW / 4 {
                _mm_store_si128(dst.add(k), padded_vector(lanes, k, len, PAD));
            }
        }
        w
    }

    /// [`super::portable_near`] on four vectors: `cell - (x - 1)` compared unsigned with 3
    /// (a signed compare after flipping the sign bits), then the 16 lane results packed to
    /// bytes and their top bits gathered.
    #[inline(always)]
    pub fn near(w: &Window, x: u32) -> u32 {
        // SAFETY: SSE2 is in the x86-64 baseline; `w` is 16-byte aligned, 4 vectors long.
        unsafe {
            let low = _mm_set1_epi32(x.wrapping_sub(1) as i32);
            let bias = _mm_set1_epi32(i32::MIN);
            let limit = _mm_set1_epi32(i32::MIN + 3);
            let src = w.0.as_ptr().cast::<__m128i>();
            let lane = |k: usize| {
                let d = _mm_xor_si128(_mm_sub_epi32(_mm_load_si128(src.add(k)), low), bias);
                _mm_cmpgt_epi32(limit, d)
            };
            let low_half = _mm_packs_epi32(lane(0), lane(1));
            let high_half = _mm_packs_epi32(lane(2), lane(3));
            _mm_movemask_epi8(_mm_packs_epi16(low_half, high_half)) as u32
        }
    }

    /// [`load`] (padded with `u16::MAX - 1`), then each lane less `0x8000` packed to a signed
    /// 16-bit lane (cells and the padding fit, so the pack never saturates).
    #[inline(always)]
    pub fn load_narrow(lanes: &[u32; WINDOW], len: usize) -> NarrowWindow {
        let mut w = NarrowWindow::default();
        // SAFETY: `k < 4`; `w` is 16-byte aligned with room for 2 vectors.
        unsafe {
            let bias = _mm_set1_epi32(0x8000);
            let vector =
                |k: usize| _mm_sub_epi32(padded_vector(lanes, k, len, NARROW_PAD.into()), bias);
            let dst = w.0.as_mut_ptr().cast::<__m128i>();
            _mm_store_si128(dst, _mm_packs_epi32(vector(0), vector(1)));
            _mm_store_si128(dst.add(1), _mm_packs_epi32(vector(2), vector(3)));
        }
        w
    }

    /// [`near`] on two vectors of 16-bit lanes: the flipped lanes less the flipped `x - 1`
    /// give `cell - (x - 1)` modulo 2^16, compared unsigned with 3 by flipping again.
    #[inline(always)]
    pub fn near_narrow(w: &NarrowWindow, x: u32) -> u32 {
        // SAFETY: SSE2 is in the x86-64 baseline; `w` is 16-byte aligned, 2 vectors long.
        unsafe {
            let low = _mm_set1_epi16((x.wrapping_sub(1) as u16 ^ 0x8000) as i16);
            let bias = _mm_set1_epi16(i16::MIN);
            let limit = _mm_set1_epi16(i16::MIN + 3);
            let src = w.0.as_ptr().cast::<__m128i>();
            let lane = |k: usize| {
                let d = _mm_xor_si128(_mm_sub_epi16(_mm_load_si128(src.add(k)), low), bias);
                _mm_cmpgt_epi16(limit, d)
            };
            _mm_movemask_epi8(_mm_packs_epi16(lane(0), lane(1))) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The definition, lane by lane in u64 (no wrapping).
    fn expected(cells: &[u32], x: u32) -> u32 {
        cells
            .iter()
            .enumerate()
            .filter(|&(_, &c)| u64::from(c).abs_diff(u64::from(x)) <= 1)
            .map(|(k, _)| 1u32 << k)
            .sum()
    }

    /// Rows of every length with cells near 0, near `top` (the largest cell the width holds),
    /// anywhere, and across `flip` (where the lanes' sign bit changes), then cells of the next
    /// row past the end: the window's lanes are the portable loader's, and its mask and the
    /// portable mask are the definition's for `x` at and beyond the row's cells, 0 and `top`.
    fn check_masks<W: Lanes + PartialEq + std::fmt::Debug>(
        seed: u64,
        top: u32,
        flip: u32,
        portable_load: fn(&[u32; WINDOW], usize) -> W,
        portable_near: fn(&W, u32) -> u32,
    ) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for round in 0..4000 {
            let len = round % (WINDOW + 1);
            let base: u32 = match round % 4 {
                0 => 0,
                1 => top - 40,
                2 => rng.random_range(0..top - 40),
                _ => flip - 20,
            };
            let mut kx: Vec<u32> = (0..len).map(|_| base + rng.random_range(0..=40)).collect();
            kx.sort_unstable();
            let real = kx.clone();
            // Garbage past the row (the next row's cells) must not leak into the window.
            kx.extend((0..WINDOW).map(|_| base + rng.random_range(0..=40)));
            let w = W::load(&kx, 0, len);
            let portable = portable_load(kx[..WINDOW].try_into().unwrap(), len);
            assert_eq!(w, portable, "len {len} cells {real:?}");
            for x in [
                base,
                base + 1,
                base + rng.random_range(0..41),
                base + 40,
                0,
                top,
            ] {
                let want = expected(&real, x);
                assert_eq!(w.near(x), want, "len {len} x {x} cells {real:?}");
                assert_eq!(portable_near(&w, x), want);
            }
        }
    }

    /// u32 lanes, up to the largest relative cell (see [`PAD`]).
    #[test]
    fn masks_mark_exactly_the_cells_within_one_at_every_length() {
        check_masks(
            11,
            u32::MAX - 3 * (1 << 27),
            1 << 31,
            portable_load,
            portable_near,
        );
    }

    /// u16 lanes, up to [`NARROW_MAX`].
    #[test]
    fn narrow_masks_mark_exactly_the_cells_within_one_at_every_length() {
        check_masks(
            12,
            NARROW_MAX,
            1 << 15,
            portable_load_narrow,
            portable_near_narrow,
        );
    }
}
