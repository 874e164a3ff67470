//! The grid's frame (docs/design.md §2.7, §9.2): the cell side (set by the largest radius of
//! the objects that are not giants), the cell of a coordinate, exact on every device, and the
//! range of cells a scene occupies.

use super::PARALLEL_MIN;
use super::giants;
use super::survey::Survey;
use crate::geom::radii::points_side;
use crate::geom::sphere::Sphere;
use glam::Vec3;
use rayon::prelude::*;

/// Cells below this magnitude are the exact floor of `c / s`; beyond it, one cell per f32
/// value (see [`cell_axis`]).
pub const EXACT_CELLS: u32 = 1 << 24;
/// The grid of a scene: its cell side, the range of cells its centres occupy, and which
/// objects are giants ([`giants`]).
#[derive(Clone, Copy, Debug)]
pub struct GridFrame {
    /// Cell of the componentwise minimum centre: cells are stored relative to it.
    pub min_cell: [i32; 3],
    pub cell_side: f32,
    /// `1 / cell_side` in f64: the estimate [`cell_axis`] corrects.
    pub inverse_side: f64,
    /// Largest relative cell coordinate per axis (the cell of the componentwise maximum centre).
    pub max_cell: [u32; 3],
    /// Objects whose radius's exponent bin is above this are giants (255: none).
    pub giant_split: u32,
    /// Every centre coordinate is below [`FAST_CELLS`] cells in magnitude: [`cell_axis`]'s
    /// fast path holds for the whole scene, so cells can be computed two axes at a time.
    pub near: bool,
    /// Every sphere passed [`Sphere`]'s check ([`Validate::check`](crate::geom::Validate::check)) rule (looked at during the survey, which reads
    /// them anyway); when not, the rest of the frame means nothing.
    pub valid: bool,
}

/// Below this many cells from zero, [`cell_axis`] takes its fast path.
pub const FAST_CELLS: f64 = 1_048_576.0;

impl GridFrame {
    pub fn of(spheres: &[Sphere]) -> Self {
        let survey = if spheres.len() >= PARALLEL_MIN {
            spheres
                .par_chunks(PARALLEL_MIN)
                .map(Survey::of)
                .reduce(Survey::default, Survey::merge)
        } else {
            Survey::of(spheres)
        };
        if !survey.valid {
            return Self {
                min_cell: [0; 3],
                cell_side: 1.0,
                inverse_side: 1.0,
                max_cell: [0; 3],
                giant_split: 255,
                near: false,
                valid: false,
            };
        }
        let objects = survey.radii.count.iter().map(|&c| u64::from(c)).sum();
        Self::from_bounds(survey.min, survey.max, survey.radii.decide(), objects)
    }

    /// [`Self::of`] for a world of a few dozen objects, the same frame: one pass for the
    /// bounds and the smallest and largest radii. Giants need the largest radius more than twice
    /// the largest of the others ([`giants`]), so radii within a factor two of each other decide
    /// no giants and the largest radius without the histogram, whose 256 bins (clearing,
    /// merging, deciding) cost more than the rest of such a world's frame. Other worlds take the
    /// full survey. The spheres must be valid (the world batch validates them first): the rule
    /// is not applied again.
    pub fn of_small(spheres: &[Sphere]) -> Self {
        debug_assert!(crate::geom::sphere::all_valid(spheres));
        let (lo, hi) = crate::geom::sphere::lane_bounds(spheres);
        let (min, max) = (lo.truncate(), hi.truncate());
        let (smallest, largest) = (lo.w, hi.w.max(0.0));
        if spheres.is_empty() || largest > 2.0 * smallest {
            return Self::of(spheres);
        }
        Self::from_bounds(min, max, (255, largest), spheres.len() as u64)
    }

    /// The frame of valid spheres with these centre bounds and giants decision
    /// ([`giants::Histogram::decide`]'s `(split, cell radius)`).
    fn from_bounds(
        min: Vec3,
        max: Vec3,
        (giant_split, cell_radius): (u32, f32),
        objects: u64,
    ) -> Self {
        let cell_side = match cell_side(cell_radius) {
            // Points: only coincident centres touch, so any side finds them.
            _ if 2.0 * cell_radius < f32::MIN_POSITIVE && min.x <= max.x => {
                points_side(min, max, objects)
            }
            side => side,
        };
        let mut frame = Self {
            min_cell: [0; 3],
            cell_side,
            inverse_side: 1.0 / cell_side as f64,
            max_cell: [0; 3],
            giant_split,
            near: false,
            valid: true,
        };
        // The cell formula is monotone in the centre, so the extreme cells are the extremes'.
        if min.x <= max.x {
            let reach = min.abs().max(max.abs()).max_element();
            frame.near = (reach as f64) < cell_side as f64 * FAST_CELLS;
            frame.min_cell = frame.centre_cell(min);
            frame.max_cell = frame.cell(max);
        }
        frame
    }

    /// Whether `s` is one of the frame's giants.
    #[inline(always)]
    pub fn is_giant(&self, s: &Sphere) -> bool {
        giants::bin(s.radius) as u32 > self.giant_split
    }

    /// Absolute cell coordinates of a centre of the frame's spheres ([`cell_axis`] per axis),
    /// on a `near` frame two axes at a time: its fast path holds only within the centres'
    /// bounds. Any other point (a giant's reach, a query box's corner) takes
    /// [`Self::absolute_cell`].
    #[inline(always)]
    pub fn centre_cell(&self, center: Vec3) -> [i32; 3] {
        #[cfg(target_arch = "x86_64")]
        if self.near {
            debug_assert!(
                (center.abs().max_element() as f64) < self.cell_side as f64 * FAST_CELLS,
                "{center} is no centre of a near frame of side {}",
                self.cell_side
            );
            return sse2::near_cell(center, self.cell_side, self.inverse_side);
        }
        self.absolute_cell(center)
    }

    /// Absolute cell coordinates of any finite point ([`cell_axis`] per axis, exact however
    /// far it lies from the centres: `c ± r` of a sphere 2^40 times the cell side gets its
    /// cell, not a fast path's overflow).
    #[inline(always)]
    pub fn absolute_cell(&self, point: Vec3) -> [i32; 3] {
        // Written out: `[0, 1, 2].map(..)` stayed an out-of-line call (10% of a 1M frame).
        let (s, inv) = (self.cell_side, self.inverse_side);
        [
            cell_axis(point.x, s, inv),
            cell_axis(point.y, s, inv),
            cell_axis(point.z, s, inv),
        ]
    }

    /// [`GridFrame::cell`] of eight spheres at once, per axis, on a `near` frame: the same
    /// estimate and exact corrections in eight f64 lanes (AVX-512). The dense rows' first
    /// pass at density 1M, one thread: 3.3-3.9 ms against 4.8-5.1 an object at a time (SSE2).
    ///
    /// # Safety
    /// The CPU has AVX-512F and AVX-512VL.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl")]
    pub unsafe fn cells8(&self, spheres: &[Sphere; 8]) -> [[u32; 8]; 3] {
        debug_assert!(self.near);
        avx512::cells8(spheres, self.cell_side, self.inverse_side, self.min_cell)
    }

    /// Cell coordinates of a centre relative to the minimum centre's cell: below 2^32 for any
    /// finite centres, since `|cell_axis| <= 2^31 - 3 * 2^26`.
    #[inline(always)]
    pub fn cell(&self, center: Vec3) -> [u32; 3] {
        let (c, m) = (self.centre_cell(center), self.min_cell);
        [
            c[0].wrapping_sub(m[0]) as u32,
            c[1].wrapping_sub(m[1]) as u32,
            c[2].wrapping_sub(m[2]) as u32,
        ]
    }
}

/// The grid's cell side for a largest radius `r_max`: `2 r_max`, or 1 when that is 0 or below
/// the normal f32 range (`grid_side` in `shaders/frame.wgsl`); a frame of points takes
/// [`points_side`] instead.
pub fn cell_side(r_max: f32) -> f32 {
    let s = 2.0 * r_max;
    if s >= f32::MIN_POSITIVE { s } else { 1.0 }
}

/// The cell of coordinate `c` on one axis, for a normal cell side `s` and `inverse = 1 / s` in
/// f64 (`cell_axis` in `shaders/frame.wgsl`; docs/design.md §9.2). Monotone in `c`, and two
/// coordinates at most `s` apart get cells at most one apart:
///
/// * `|c| < 2^24 s`: `floor(c / s)` of the real quotient: an estimate corrected by exact
///   comparisons of `k s` with `c` in f64 (`k s` of a 25-bit integer and a 24-bit significand
///   is exact).
/// * `|c| >= 2^24 s`: `±(2^24 + the number of f32 values from 2^24 s up to |c|)`. There
///   consecutive f32 values are more than `s` apart, so only centres with the same coordinate
///   can touch, and neighbouring values get neighbouring cells.
///
/// No clamp: every scene keeps its cells apart (an earlier version clamped to `[0, 2^20 - 1]`
/// from the minimum centre, which put every far object of a wide scene in the last cell). Cells
/// are absolute, not measured from the minimum centre: `c - min` rounds, and a rounded
/// difference can move two touching centres two cells apart.
#[inline(always)]
pub fn cell_axis(c: f32, s: f32, inverse: f64) -> i32 {
    let (cf, sf) = (c as f64, s as f64);
    // Below 2^20 cells: the f64 estimate `c * (1 / s)` is within 2^-31 of `c / s`, so its
    // floor (by truncating after a positive shift) is off by at most one, and one exact
    // comparison each way fixes it, for either sign.
    if cf.abs() < sf * FAST_CELLS {
        let mut k = ((cf * inverse + 2_097_152.0) as i64 - 2_097_152) as i32;
        if k as f64 * sf > cf {
            k -= 1;
        } else if (k + 1) as f64 * sf <= cf {
            k += 1;
        }
        return k;
    }
    cell_axis_far(c, s)
}

/// [`cell_axis`] from `2^20` cells on.
#[cold]
fn cell_axis_far(c: f32, s: f32) -> i32 {
    let m = c.abs();
    let far = s.to_bits() + (24 << 23);
    let (magnitude, exact) = if m.to_bits() >= far {
        ((EXACT_CELLS + (m.to_bits() - far)) as i32, true)
    } else {
        // 2^20 <= m / s < 2^24: the f64 quotient is within 2^-28 of the real one, and a
        // non-integer quotient of two 24-bit significands is at least 2^-24 from an integer;
        // the loops only guard that argument.
        let (mf, sf) = (m as f64, s as f64);
        let mut k = ((mf / sf) as u32).min(EXACT_CELLS - 1);
        while k as f64 * sf > mf {
            k -= 1;
        }
        while ((k + 1) as f64) * sf <= mf {
            k += 1;
        }
        (k as i32, k as f64 * sf == mf)
    };
    if c.is_sign_negative() {
        -magnitude - i32::from(!exact)
    } else {
        magnitude
    }
}

/// [`cell_axis`]'s fast path for a whole centre, on a scene whose coordinates are all below
/// [`FAST_CELLS`] cells: the same estimate and the same two exact corrections, for x and y in
/// one vector of two f64 and z in another (SSE2, in the x86-64 baseline). The scalar path took
/// about 85 instructions per object; the grid's sort stage at density 1M fell by about 3 ms
/// (25.8-26.0 to 22.6-22.9 ms, three alternating runs each, 2 cores).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use glam::Vec3;
    use std::arch::x86_64::*;

    #[inline(always)]
    pub fn near_cell(center: Vec3, side: f32, inverse: f64) -> [i32; 3] {
        // SAFETY: SSE2 is in the x86-64 baseline; only register operations.
        unsafe {
            let s = _mm_set1_pd(side as f64);
            let inv = _mm_set1_pd(inverse);
            let xy = _mm_cvtps_pd(_mm_set_ps(0.0, 0.0, center.y, center.x));
            let z = _mm_cvtps_pd(_mm_set_ss(center.z));
            let xy = floor_quotient(xy, s, inv);
            let z = floor_quotient(z, s, inv);
            [
                _mm_cvtsi128_si32(xy),
                _mm_cvtsi128_si32(_mm_shuffle_epi32(xy, 0b01)),
                _mm_cvtsi128_si32(z),
            ]
        }
    }

    /// `floor(c / s)` of the real quotient in the two low i32 lanes, for `|c| < 2^20 s`: the
    /// truncation of `c (1 / s) + 2^21` (positive) less `2^21`, then `-1` where `k s > c` and
    /// `+1` where `(k + 1) s <= c` (exact products: `k` below 2^22, `s` of 24 bits).
    #[inline(always)]
    unsafe fn floor_quotient(c: __m128d, s: __m128d, inv: __m128d) -> __m128i {
        unsafe {
            let bias = _mm_set1_pd(2_097_152.0);
            let t = _mm_add_pd(_mm_mul_pd(c, inv), bias);
            let k = _mm_sub_epi32(_mm_cvttpd_epi32(t), _mm_set1_epi32(2_097_152));
            let kf = _mm_cvtepi32_pd(k);
            let above = _mm_castpd_si128(_mm_cmpgt_pd(_mm_mul_pd(kf, s), c));
            let next = _mm_add_pd(kf, _mm_set1_pd(1.0));
            let below = _mm_castpd_si128(_mm_cmple_pd(_mm_mul_pd(next, s), c));
            // The 64-bit lane masks' low halves, as two i32 lanes: -1 where true.
            let above = _mm_shuffle_epi32(above, 0b1000);
            let below = _mm_shuffle_epi32(below, 0b1000);
            _mm_sub_epi32(_mm_add_epi32(k, above), below)
        }
    }
}

/// [`GridFrame::cells8`]: [`sse2::floor_quotient`] in eight lanes.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use crate::geom::sphere::Sphere;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f,avx512vl")]
    pub fn cells8(spheres: &[Sphere; 8], side: f32, inverse: f64, min: [i32; 3]) -> [[u32; 8]; 3] {
        // SAFETY: the 8 spheres are 32 contiguous f32 (`Sphere` is four f32, `repr(C)`).
        let (a, b) = unsafe {
            let p = spheres.as_ptr().cast::<f32>();
            (_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16)))
        };
        // Lanes 4k + axis of the two vectors: x and y in one, z in another.
        let xy = _mm512_permutex2var_ps(
            a,
            _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29),
            b,
        );
        let z = _mm512_permutex2var_ps(
            a,
            _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30),
            b,
        );
        let s = _mm512_set1_pd(side as f64);
        let inv = _mm512_set1_pd(inverse);
        let axis = |c: __m256, min: i32| {
            let c = _mm512_cvtps_pd(c);
            let t = _mm512_add_pd(_mm512_mul_pd(c, inv), _mm512_set1_pd(2_097_152.0));
            let k = _mm256_sub_epi32(_mm512_cvttpd_epi32(t), _mm256_set1_epi32(2_097_152));
            let kf = _mm512_cvtepi32_pd(k);
            let above = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(_mm512_mul_pd(kf, s), c);
            let next = _mm512_add_pd(kf, _mm512_set1_pd(1.0));
            let below = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(_mm512_mul_pd(next, s), c);
            let one = _mm256_set1_epi32(1);
            let k = _mm256_mask_sub_epi32(k, above, k, one);
            let k = _mm256_mask_add_epi32(k, below, k, one);
            let k = _mm256_sub_epi32(k, _mm256_set1_epi32(min));
            let mut out = [0u32; 8];
            // SAFETY: `out` holds eight u32.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), k) };
            out
        };
        let low = _mm512_castps512_ps256(xy);
        let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(xy)));
        [
            axis(low, min[0]),
            axis(high, min[1]),
            axis(_mm512_castps512_ps256(z), min[2]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(f: &GridFrame) -> ([i32; 3], u32, u64, [u32; 3], u32, bool, bool) {
        let side = f.cell_side.to_bits();
        let inverse = f.inverse_side.to_bits();
        (
            f.min_cell,
            side,
            inverse,
            f.max_cell,
            f.giant_split,
            f.near,
            f.valid,
        )
    }

    /// The small worlds' frame is the survey's, where the radii share one bin, span two
    /// adjacent ones within a factor two (no giants either way, the fast path), or spread far
    /// enough for giants, in adjacent bins or not (the full survey), and for empty, far-out and
    /// invalid worlds.
    #[test]
    fn small_world_frames_equal_the_surveyed_frame() {
        let ball = |i: usize, r: f32| {
            let t = i as f32;
            Sphere::new(
                Vec3::new(t * 1.7 - 20.0, (t * 0.37).sin() * 9.0, t * -0.9),
                r,
            )
        };
        let world = |radius: &dyn Fn(usize) -> f32| (0..60).map(|i| ball(i, radius(i))).collect();
        let worlds: Vec<(&str, Vec<Sphere>)> = vec![
            ("one bin", world(&|_| 2.0)),
            ("one bin, unequal", world(&|i| 2.0 + (i % 5) as f32 * 0.3)),
            (
                "adjacent bins",
                world(&|i| if i % 3 == 0 { 1.5 } else { 2.5 }),
            ),
            (
                "adjacent bins, one past twice",
                world(&|i| if i == 7 { 3.5 } else { 1.5 }),
            ),
            ("bins two apart", world(&|i| if i == 7 { 9.0 } else { 1.0 })),
            ("a giant", world(&|i| if i == 7 { 40.0 } else { 1.0 })),
            ("points", world(&|_| 0.0)),
            (
                "points and a sphere",
                world(&|i| if i == 3 { 1.0 } else { 0.0 }),
            ),
            ("empty", Vec::new()),
            (
                "far out",
                (0..40)
                    .map(|i| Sphere::new(Vec3::new(9e17 - i as f32 * 1e11, -3e17, 0.0), 6e10))
                    .collect(),
            ),
        ];
        for (what, spheres) in &worlds {
            let (small, full) = (GridFrame::of_small(spheres), GridFrame::of(spheres));
            assert_eq!(small.valid, full.valid, "{what}");
            if full.valid {
                assert_eq!(fields(&small), fields(&full), "{what}");
            }
        }
        // The fast path was taken where it can be: no giants, the largest radius's side.
        let adjacent = GridFrame::of_small(&worlds[2].1);
        assert_eq!(
            (adjacent.giant_split, adjacent.cell_side),
            (255, cell_side(2.5))
        );
        for k in [3, 5] {
            assert!(
                GridFrame::of(&worlds[k].1).giant_split < 255,
                "{}: a giant is set aside",
                worlds[k].0
            );
        }
    }
}
