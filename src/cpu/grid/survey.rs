//! The grid's survey of a scene, the one pass that reads every sphere before the sort: centre
//! bounds, the exponent histogram of radii ([`Histogram`]) and the validation rule
//! ([`Sphere::check`], as its branch-free form), so that `find_pairs` needs no pass of its
//! own to validate. With SSE2 (every x86-64), a sphere is one vector: bounds and the rule
//! lane-wise; the histogram in four interleaved copies, so that objects of the same bin (all
//! of them, in most scenes) do not wait on each other's counts.

use super::giants::Histogram;
use crate::geom::sphere::Sphere;
use glam::Vec3;

/// Centre bounds, the radius histogram, and whether every sphere is valid.
#[derive(Clone)]
pub struct Survey {
    pub min: Vec3,
    pub max: Vec3,
    pub radii: Histogram,
    pub valid: bool,
}

impl Default for Survey {
    fn default() -> Self {
        Self {
            min: Vec3::INFINITY,
            max: Vec3::NEG_INFINITY,
            radii: Histogram::default(),
            valid: true,
        }
    }
}

impl Survey {
    /// The survey of `spheres` (by reference: a 2 KB value moved per object cost more than
    /// the grid's whole sort on the paper box).
    pub fn of(spheres: &[Sphere]) -> Self {
        #[cfg(target_arch = "x86_64")]
        return sse2::survey(spheres);
        #[cfg(not(target_arch = "x86_64"))]
        Self::by_sphere(spheres)
    }

    /// One sphere at a time, with [`Sphere::valid`] (any CPU; the reference of the tests).
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn by_sphere(spheres: &[Sphere]) -> Self {
        let mut survey = Self::default();
        for s in spheres {
            survey.min = survey.min.min(s.center);
            survey.max = survey.max.max(s.center);
            survey.radii.add(s.radius);
            survey.valid &= s.valid();
        }
        survey
    }

    pub fn merge(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            radii: self.radii.merge(&other.radii),
            valid: self.valid && other.valid,
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{Histogram, Survey};
    use crate::geom::radii::{BINS, bin};
    use crate::geom::sphere::{MAX_COORDINATE, MIN_BITS, Sphere};
    use glam::Vec3;
    use std::arch::x86_64::*;

    /// Interleaved copies of the histogram.
    const COPIES: usize = 4;

    pub fn survey(spheres: &[Sphere]) -> Survey {
        let mut count = [[0u32; BINS]; COPIES];
        let mut max_bits = [[0u32; BINS]; COPIES];
        // SAFETY: SSE2 is in the x86-64 baseline; each load reads one 16-byte sphere.
        let (min, max, valid) = unsafe {
            let mut min = _mm_set1_ps(f32::INFINITY);
            let mut max = _mm_set1_ps(f32::NEG_INFINITY);
            let mut bad = _mm_setzero_si128();
            let magnitude = _mm_set1_epi32(0x7fff_ffff);
            let exponent = _mm_set1_epi32(0x7f80_0000);
            let sign = _mm_set1_epi32(i32::MIN);
            // `|v| - 1 < MIN_BITS - 1` unsigned, as a signed compare of both less 2^31.
            let one = _mm_set1_epi32(1);
            let tiny_below = _mm_set1_epi32((MIN_BITS - 1) as i32 ^ i32::MIN);
            let limit = _mm_set1_ps(MAX_COORDINATE);
            for (j, s) in spheres.iter().enumerate() {
                let v = _mm_loadu_ps((s as *const Sphere).cast());
                // Bounds (lane 3, the radius, is not read).
                min = _mm_min_ps(min, v);
                max = _mm_max_ps(max, v);
                // The rule of `Sphere::valid`, lane by lane: each value finite and not tiny...
                let bits = _mm_castps_si128(v);
                let abs = _mm_and_si128(bits, magnitude);
                let not_finite = _mm_cmpeq_epi32(_mm_and_si128(bits, exponent), exponent);
                let biased = _mm_xor_si128(_mm_sub_epi32(abs, one), sign);
                let tiny = _mm_cmplt_epi32(biased, tiny_below);
                // ... each |c| + r within the limit (the largest |c| + r is the sum of the
                // largest |c|: rounding is monotone), and r >= 0 (lane 3).
                let r = _mm_shuffle_ps::<0xff>(v, v);
                let reach = _mm_add_ps(_mm_castsi128_ps(abs), r);
                let within = _mm_cmple_ps(reach, limit);
                let r_ok = _mm_cmpge_ps(v, _mm_setzero_ps());
                // Lanes 0-2 need `within`, lane 3 `r >= 0`.
                let ok = _mm_castps_si128(radius_lane_of(within, r_ok));
                bad = _mm_or_si128(bad, _mm_or_si128(not_finite, tiny));
                bad = _mm_or_si128(bad, _mm_andnot_si128(ok, _mm_set1_epi32(-1)));
                // The histogram, in the copy of this position.
                let (b, bits) = (bin(s.radius), s.radius.to_bits() & 0x7fff_ffff);
                let copy = j % COPIES;
                count[copy][b] += 1;
                max_bits[copy][b] = max_bits[copy][b].max(bits);
            }
            (min, max, _mm_movemask_epi8(bad) == 0)
        };
        let mut radii = Histogram::default();
        for copy in 0..COPIES {
            for b in 0..BINS {
                radii.count[b] += count[copy][b];
                radii.max_bits[b] = radii.max_bits[b].max(max_bits[copy][b]);
            }
        }
        let lanes = |v: __m128| {
            let mut out = [0.0f32; 4];
            // SAFETY: SSE2; `out` holds four f32.
            unsafe { _mm_storeu_ps(out.as_mut_ptr(), v) };
            Vec3::new(out[0], out[1], out[2])
        };
        Survey {
            min: lanes(min),
            max: lanes(max),
            radii,
            valid,
        }
    }

    /// Lanes 0-2 of `a`, lane 3 of `b` (SSE2 has no blend).
    #[inline(always)]
    unsafe fn radius_lane_of(a: __m128, b: __m128) -> __m128 {
        // SAFETY: SSE2; register operations only.
        unsafe {
            let high = _mm_castsi128_ps(_mm_set_epi32(-1, 0, 0, 0));
            _mm_or_ps(_mm_andnot_ps(high, a), _mm_and_ps(high, b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::sphere::{MAX_COORDINATE, MIN_MAGNITUDE};

    /// On spheres at and around every edge of the rule (non-finite values, negative and
    /// negative-zero radii, magnitudes at the smallest accepted and just below, subnormals,
    /// coordinates plus radius at the limit and just above), one bad sphere among good ones
    /// at each position of the four histogram copies: the survey's verdict is `Sphere::valid`'s
    /// and `Sphere::check`'s, and its bounds and histogram are the sphere-by-sphere survey's.
    #[test]
    fn the_survey_validates_and_bounds_as_sphere_by_sphere() {
        let below = f32::from_bits(MIN_MAGNITUDE.to_bits() - 1);
        let past = f32::from_bits(MAX_COORDINATE.to_bits() + 1);
        let values = [
            0.0,
            -0.0,
            1.5,
            -3.0,
            MIN_MAGNITUDE,
            -MIN_MAGNITUDE,
            below,
            -below,
            f32::from_bits(1),
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            MAX_COORDINATE,
            -MAX_COORDINATE,
            MAX_COORDINATE - 1e12,
            past,
            5e17,
        ];
        let good = Sphere::new(Vec3::new(1.0, -2.0, 3.0), 0.5);
        let (mut checked, mut bad_ones) = (0, 0);
        for (k, &a) in values.iter().enumerate() {
            for &b in &values {
                for axis in 0..4 {
                    let mut v = [0.25f32, -0.5, 2.0, 1.0];
                    v[axis] = a;
                    if axis != 3 {
                        v[3] = b;
                    }
                    let odd = Sphere::new(Vec3::new(v[0], v[1], v[2]), v[3]);
                    let mut scene = vec![good; 6];
                    scene[k % 6] = odd;
                    let want = Survey::by_sphere(&scene);
                    let got = Survey::of(&scene);
                    assert_eq!(got.valid, want.valid, "{odd:?}");
                    assert_eq!(got.valid, odd.check(0).is_ok(), "{odd:?}");
                    bad_ones += usize::from(!got.valid);
                    if got.valid {
                        assert_eq!((got.min, got.max), (want.min, want.max));
                        assert_eq!(got.radii.count, want.radii.count);
                        assert_eq!(got.radii.max_bits, want.radii.max_bits);
                    }
                    checked += 1;
                }
            }
        }
        assert!(
            bad_ones > checked / 3 && bad_ones < checked,
            "{bad_ones} of {checked}"
        );
    }
}
