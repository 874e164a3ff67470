//! Spheres stored as columns (x, y, z, radius), and [`Sphere::touches`] for one sphere
//! against four consecutive ones at once. Each lane does the operations of `touches`' filter
//! in the same order (difference, squares summed left to right, radius sum squared, `<=`), so
//! it gives the same verdict; a lane whose squares fall below the range where they are exact,
//! or whose margin lies within the filter's error bound, is decided by `touches` itself (its
//! small-scale path, the exact rule), as is every lane of columns whose radii are all below
//! 2^-51. The dense grid's candidate runs use it (docs/design.md §2.7).

use super::sphere::{SQUARES_EXACT_FROM, Sphere, TOUCH_FILTER};
use glam::Vec3;

/// Spheres a block of [`SphereColumns::touching`] compares at once.
pub const LANES: usize = 4;

/// Spheres by column, with [`LANES`] padding entries past the last so that a block starting
/// at any position up to the length reads within the columns.
#[derive(Clone, Default, Debug)]
pub struct SphereColumns {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    r: Vec<f32>,
    /// Every radius below 2^-51, so every radius sum below 2^-50: the lanes' squares would be
    /// subnormal (a slow operation on x86 for each) and every lane left to `touches` anyway,
    /// so [`SphereColumns::touching`] asks `touches` directly (8,000 spheres of radius 5e-22:
    /// the grid's frame 9.1 ms, against 0.7 at radius 0.5).
    small: bool,
}

impl SphereColumns {
    /// The columns of `spheres`, plus the padding (zeros): one sequential pass after a
    /// scatter of whole spheres cost less than writing the four columns at each position of
    /// the scatter (the dense grid's sort stage, paper box n = 5000: 0.116 ms against 0.137).
    pub fn fill(&mut self, spheres: &[Sphere]) {
        let n = spheres.len();
        for column in [&mut self.x, &mut self.y, &mut self.z, &mut self.r] {
            // Every position below `n` is written next: only a new length needs filling.
            column.resize(n + LANES, 0.0);
            column[n..].fill(0.0);
        }
        let (x, y, z, r) = (
            &mut self.x[..n],
            &mut self.y[..n],
            &mut self.z[..n],
            &mut self.r[..n],
        );
        let mut largest = 0.0f32;
        for (p, s) in spheres.iter().enumerate() {
            (x[p], y[p], z[p], r[p]) = (s.center.x, s.center.y, s.center.z, s.radius);
            largest = largest.max(s.radius);
        }
        // Every radius sum below `touches`' own bound.
        self.small = 2.0 * largest < super::sphere::RADIUS_SUMS_SQUARED_FROM;
    }

    /// The sphere at position `p`.
    #[inline(always)]
    pub fn get(&self, p: usize) -> Sphere {
        Sphere {
            center: Vec3::new(self.x[p], self.y[p], self.z[p]),
            radius: self.r[p],
        }
    }

    /// Bit `k` set when `s.touches(&self.get(at + k))`, for `k < LANES` (`at <= len`; lanes
    /// past the length compare with the padding, which callers mask off).
    #[inline(always)]
    pub fn touching(&self, s: &Sphere, at: usize) -> u32 {
        assert!(at + LANES <= self.x.len(), "block past the padding");
        if self.small {
            return self.settle(s, at, 0, (1 << LANES) - 1);
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the assert keeps the four loads of each column in bounds; SSE2 is in the
        // x86-64 baseline.
        let (hits, unsure) = unsafe { self.sse2_lanes(s, at) };
        #[cfg(not(target_arch = "x86_64"))]
        let (hits, unsure) = self.portable_lanes(s, at);
        if unsure == 0 {
            hits
        } else {
            self.settle(s, at, hits, unsure)
        }
    }

    /// Lanes `unsure` decided by `touches` (its rescaled path, the exact rule), the others kept
    /// from `hits`.
    #[cold]
    #[inline(never)]
    fn settle(&self, s: &Sphere, at: usize, hits: u32, unsure: u32) -> u32 {
        let mut hits = hits & !unsure;
        for k in 0..LANES {
            if unsure >> k & 1 == 1 && s.touches(&self.get(at + k)) {
                hits |= 1 << k;
            }
        }
        hits
    }

    /// `(hits, unsure)`: lanes with `dd <= ss`, and lanes with both squares below
    /// [`SQUARES_EXACT_FROM`] or the margin within [`TOUCH_FILTER`] (left to `touches`).
    ///
    /// # Safety
    /// `at + LANES` is within every column.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn sse2_lanes(&self, s: &Sphere, at: usize) -> (u32, u32) {
        use std::arch::x86_64::*;
        // SAFETY: the caller keeps `at + LANES` within the columns; unaligned loads.
        unsafe {
            let load = |column: &Vec<f32>| _mm_loadu_ps(column.as_ptr().add(at));
            let dx = _mm_sub_ps(_mm_set1_ps(s.center.x), load(&self.x));
            let dy = _mm_sub_ps(_mm_set1_ps(s.center.y), load(&self.y));
            let dz = _mm_sub_ps(_mm_set1_ps(s.center.z), load(&self.z));
            let dd = _mm_add_ps(
                _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)),
                _mm_mul_ps(dz, dz),
            );
            let sum = _mm_add_ps(_mm_set1_ps(s.radius), load(&self.r));
            let ss = _mm_mul_ps(sum, sum);
            let hits = _mm_movemask_ps(_mm_cmple_ps(dd, ss)) as u32;
            let small = _mm_cmplt_ps(_mm_max_ps(dd, ss), _mm_set1_ps(SQUARES_EXACT_FROM));
            let magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fff_ffff));
            let margin = _mm_and_ps(_mm_sub_ps(dd, ss), magnitude);
            let bound = _mm_mul_ps(_mm_set1_ps(TOUCH_FILTER), _mm_add_ps(dd, ss));
            let unsure = _mm_or_ps(small, _mm_cmple_ps(margin, bound));
            (hits, _mm_movemask_ps(unsure) as u32)
        }
    }

    /// [`SphereColumns::sse2_lanes`] lane by lane (also built for the tests on x86-64, which
    /// check that both give the same lanes).
    #[cfg(any(test, not(target_arch = "x86_64")))]
    #[inline(always)]
    fn portable_lanes(&self, s: &Sphere, at: usize) -> (u32, u32) {
        let (mut hits, mut unsure) = (0, 0);
        for k in 0..LANES {
            let q = self.get(at + k);
            let d = s.center - q.center;
            let sum = s.radius + q.radius;
            let (dd, ss) = (d.dot(d), sum * sum);
            hits |= u32::from(dd <= ss) << k;
            let filter_unsure = (dd - ss).abs() <= TOUCH_FILTER * (dd + ss);
            unsure |= u32::from(dd.max(ss) < SQUARES_EXACT_FROM || filter_unsure) << k;
        }
        (hits, unsure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes agree with `touches` on every sphere of `spheres` against every block.
    fn agrees(spheres: &[Sphere]) {
        let mut columns = SphereColumns::default();
        columns.fill(spheres);
        assert_eq!(columns.x.len(), spheres.len() + LANES, "the padding");
        for a in spheres {
            for at in 0..=spheres.len() {
                let valid = (1u32 << LANES.min(spheres.len() - at)) - 1;
                let expected = (0..LANES.min(spheres.len() - at))
                    .filter(|&k| a.touches(&spheres[at + k]))
                    .fold(0, |m, k| m | 1 << k);
                assert_eq!(columns.touching(a, at) & valid, expected, "{a:?} at {at}");
                let (hits, unsure) = columns.portable_lanes(a, at);
                let settled = columns.settle(a, at, hits, unsure);
                assert_eq!(settled & valid, expected, "portable: {a:?} at {at}");
            }
        }
    }

    #[test]
    fn lanes_decide_as_touches_on_random_spheres() {
        // A small LCG: the expected verdicts come from `touches`, not from this module.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw =
            || (crate::geom::test_util::lcg_next(&mut state) >> 40) as f32 / (1u64 << 24) as f32;
        let spheres: Vec<Sphere> = (0..61)
            .map(|_| Sphere::new(Vec3::new(draw(), draw(), draw()) * 4.0, draw()))
            .collect();
        agrees(&spheres);
    }

    #[test]
    fn lanes_decide_as_touches_at_contact_and_at_tiny_scales() {
        // Exact contacts (3-4-5 distances, touching counts), one ulp apart, coincident
        // centres, and the same scene shrunk into the rescaled range of `touches`.
        let base = [
            Sphere::new(Vec3::ZERO, 2.5),
            Sphere::new(Vec3::new(3.0, 4.0, 0.0), 2.5),
            Sphere::new(Vec3::new(3.0, 4.0f32.next_up(), 0.0), 2.5),
            Sphere::new(Vec3::new(6.0, 8.0, 0.0), 2.5f32.next_down()),
            Sphere::new(Vec3::ZERO, 0.0),
            Sphere::new(Vec3::new(0.0, 0.0, 5.0), 2.5),
            Sphere::new(Vec3::new(0.0, 0.0, 5.0f32.next_up()), 2.5),
        ];
        agrees(&base);
        let mut columns = SphereColumns::default();
        columns.fill(&base);
        assert!(!columns.small);
        for shrink in [2f32.powi(-60), 2f32.powi(-95)] {
            let tiny: Vec<Sphere> = base
                .iter()
                .map(|s| Sphere::new(s.center * shrink, s.radius * shrink))
                .collect();
            // Shrinking by a power of two keeps every verdict; the rescaled path must hold it.
            assert!(tiny[0].touches(&tiny[1]) && !tiny[0].touches(&tiny[2]));
            let mut columns = SphereColumns::default();
            columns.fill(&tiny);
            assert!(columns.small, "every lane asks touches");
            assert_eq!(
                columns.portable_lanes(&tiny[0], 0).1,
                0b1111,
                "all lanes rescaled"
            );
            agrees(&tiny);
        }
    }
}
