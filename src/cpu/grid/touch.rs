//! Sphere tests of a whole block of [`SPAN`] sorted positions at once, for the dense rows where
//! blocks are crowded: the spheres stored by coordinate (x, y, z, r, each padded by `SPAN`
//! entries), loaded once per row, tested against each object of the row by the same arithmetic
//! as [`Sphere::touches`], lane by lane: `d = a - b`, `(d.x² + d.y²) + d.z² <= (a.r + b.r)²`.
//! The lanes whose squares both lie below `SQUARES_EXACT_FROM`, or whose margin `dd - ss` lies
//! within the filter's error bound (`TOUCH_FILTER`), are left undecided: the caller decides
//! them with [`Sphere::touches`] itself (its rescaled branch, the exact rule). The same three
//! instruction sets as [`super::span`].

use super::span::{Portable, SPAN};
use crate::geom::sphere::{SQUARES_EXACT_FROM, Sphere, TOUCH_FILTER};

/// One way to test a block of spheres.
pub trait Touch {
    /// The spheres of one block in registers (or where they are read from).
    type Spheres: Copy;

    /// The spheres at positions `at..at + SPAN` of `coords` (x, y, z, r).
    ///
    /// # Safety
    /// Each of `coords` holds `at + SPAN` entries, and the CPU has the instruction set of the
    /// implementation.
    unsafe fn load_spheres(coords: &[Vec<f32>; 4], at: usize) -> Self::Spheres;

    /// `(touching, undecided)` for lanes `0..len` at least (lanes from `len` on may be left
    /// clear): bit `k` of `touching` set when lane `k` touches `s` by the squared distance
    /// against the squared sum of radii; of `undecided` when both squares lie below
    /// `SQUARES_EXACT_FROM` or the margin within the filter's bound (the lane's bit in
    /// `touching` then means nothing).
    ///
    /// # Safety
    /// The CPU has the instruction set of the implementation.
    unsafe fn touching(block: &Self::Spheres, s: &Sphere, len: usize) -> (u32, u32);
}

/// The lane rule, one lane at a time (the portable implementation, and the definition the
/// others are tested against).
#[inline(always)]
fn lane(s: &Sphere, [x, y, z, r]: [f32; 4]) -> (bool, bool) {
    let (dx, dy, dz) = (s.center.x - x, s.center.y - y, s.center.z - z);
    let dd = (dx * dx + dy * dy) + dz * dz;
    let sum = s.radius + r;
    let ss = sum * sum;
    let unsure = (dd - ss).abs() <= TOUCH_FILTER * (dd + ss);
    (
        dd <= ss,
        unsure || (dd < SQUARES_EXACT_FROM && ss < SQUARES_EXACT_FROM),
    )
}

impl Touch for Portable {
    /// Lane by lane: x, y, z, r.
    type Spheres = [[f32; 4]; SPAN];

    #[inline(always)]
    unsafe fn load_spheres(coords: &[Vec<f32>; 4], at: usize) -> Self::Spheres {
        std::array::from_fn(|k| coords.each_ref().map(|c| c[at + k]))
    }

    #[inline(always)]
    unsafe fn touching(block: &Self::Spheres, s: &Sphere, len: usize) -> (u32, u32) {
        let (mut touching, mut undecided) = (0, 0);
        for (k, &spheres) in block.iter().enumerate().take(len) {
            let (t, u) = lane(s, spheres);
            touching |= u32::from(t) << k;
            undecided |= u32::from(u) << k;
        }
        (touching, undecided)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Portable, SPAN, SQUARES_EXACT_FROM, Sphere, TOUCH_FILTER, Touch};
    use crate::cpu::grid::span::{Avx512, Sse2};

    /// Lane by lane, as [`Portable`]: never run but in tests (the dense rows test whole
    /// blocks only with AVX-512, [`crate::cpu::grid::span::avx512`]). Eight groups of four lanes did not pay: the paper box at n =
    /// 5000, one thread, pair stage 0.24 ms against 0.21 testing the lanes within one one by
    /// one (and 0.19 on the dense cells), in one alternating run; AVX-512 0.14.
    impl Touch for Sse2 {
        type Spheres = <Portable as Touch>::Spheres;

        #[inline(always)]
        unsafe fn load_spheres(coords: &[Vec<f32>; 4], at: usize) -> Self::Spheres {
            // SAFETY: the caller's.
            unsafe { Portable::load_spheres(coords, at) }
        }

        #[inline(always)]
        unsafe fn touching(block: &Self::Spheres, s: &Sphere, len: usize) -> (u32, u32) {
            // SAFETY: the caller's.
            unsafe { Portable::touching(block, s, len) }
        }
    }
    use std::arch::x86_64::*;

    /// Two halves of sixteen lanes, each a register per coordinate.
    impl Touch for Avx512 {
        type Spheres = [[__m512; 4]; 2];

        #[inline(always)]
        unsafe fn load_spheres(coords: &[Vec<f32>; 4], at: usize) -> Self::Spheres {
            debug_assert!(coords.iter().all(|c| at + SPAN <= c.len()));
            // SAFETY: the caller keeps `at + SPAN` entries in bounds and checked AVX-512.
            unsafe { load_avx512(coords, at) }
        }

        #[inline(always)]
        unsafe fn touching(block: &Self::Spheres, s: &Sphere, len: usize) -> (u32, u32) {
            // SAFETY: the caller checked AVX-512 (F is implied by BW).
            unsafe { touching_avx512(block, s, len) }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn load_avx512(coords: &[Vec<f32>; 4], at: usize) -> [[__m512; 4]; 2] {
        let [x, y, z, r] = coords.each_ref().map(|c| c.as_ptr().wrapping_add(at));
        // SAFETY: each of `coords` holds `at + SPAN` entries (the caller's bounds).
        unsafe {
            [
                [
                    _mm512_loadu_ps(x),
                    _mm512_loadu_ps(y),
                    _mm512_loadu_ps(z),
                    _mm512_loadu_ps(r),
                ],
                [
                    _mm512_loadu_ps(x.add(16)),
                    _mm512_loadu_ps(y.add(16)),
                    _mm512_loadu_ps(z.add(16)),
                    _mm512_loadu_ps(r.add(16)),
                ],
            ]
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn touching_avx512(block: &[[__m512; 4]; 2], s: &Sphere, len: usize) -> (u32, u32) {
        let a = [s.center.x, s.center.y, s.center.z].map(|v| _mm512_set1_ps(v));
        let (radius, exact) = (_mm512_set1_ps(s.radius), _mm512_set1_ps(SQUARES_EXACT_FROM));
        let filter = _mm512_set1_ps(TOUCH_FILTER);
        let (mut touching, mut undecided) = (0, 0);
        for (h, b) in block.iter().enumerate().take(len.div_ceil(16)) {
            let d = [0, 1, 2].map(|c| _mm512_sub_ps(a[c], b[c]));
            let dd = _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(d[0], d[0]), _mm512_mul_ps(d[1], d[1])),
                _mm512_mul_ps(d[2], d[2]),
            );
            let sum = _mm512_add_ps(radius, b[3]);
            let ss = _mm512_mul_ps(sum, sum);
            let t = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(dd, ss);
            let tiny = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(
                _mm512_cmp_ps_mask::<_CMP_LT_OQ>(dd, exact),
                ss,
                exact,
            );
            let margin = _mm512_abs_ps(_mm512_sub_ps(dd, ss));
            let bound = _mm512_mul_ps(filter, _mm512_add_ps(dd, ss));
            let u = tiny | _mm512_cmp_ps_mask::<_CMP_LE_OQ>(margin, bound);
            touching |= u32::from(t) << (16 * h);
            undecided |= u32::from(u) << (16 * h);
        }
        (touching, undecided)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};

    /// A random block and object at several scales (near the exact-squares limit too): each
    /// instruction set's masks are the lane rule's, and wherever a lane is decided, the rule
    /// agrees with `Sphere::touches`.
    #[test]
    fn every_instruction_set_tests_a_block_as_touches_does() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut checked = [0u32; 2];
        let (mut touched, mut undecided, mut exact) = (0, 0, 0);
        for round in 0..2000 {
            let scale = [1.0f32, 1e-15, 3e-16, 1e6, 1.0][round % 5];
            // Every fifth round on a lattice of half units with radii 0.25 and 0.5: many lanes
            // touch exactly (squared distance equal to the squared sum of radii).
            let lattice = round % 5 == 4;
            let mut v = || match lattice {
                true => rng.random_range(-2i32..=2) as f32 * 0.5,
                false => rng.random_range(-2.0f32..2.0) * scale,
            };
            let radius = |v: f32| match lattice {
                true => [0.25, 0.5][(v * 2.0) as i32 as usize % 2],
                false => v.abs(),
            };
            let s = Sphere::new(Vec3::new(v(), v(), v()), radius(v()));
            let coords: [Vec<f32>; 4] = std::array::from_fn(|c| {
                (0..SPAN + 3)
                    .map(|_| if c == 3 { radius(v()) } else { v() })
                    .collect()
            });
            let at = round % 3;
            // SAFETY: `at + SPAN` entries; each set only where detected.
            unsafe {
                let want = Portable::touching(&Portable::load_spheres(&coords, at), &s, SPAN);
                for k in 0..SPAN {
                    let b = Sphere::new(
                        Vec3::new(coords[0][at + k], coords[1][at + k], coords[2][at + k]),
                        coords[3][at + k],
                    );
                    let d = s.center - b.center;
                    exact += u32::from(d.dot(d) == (s.radius + b.radius).powi(2));
                    if want.1 >> k & 1 == 0 {
                        assert_eq!(
                            want.0 >> k & 1 == 1,
                            s.touches(&b),
                            "round {round} lane {k}"
                        );
                    }
                }
                checked[0] += 1;
                touched += (want.0 & !want.1).count_ones();
                undecided += want.1.count_ones();
                #[cfg(target_arch = "x86_64")]
                {
                    use crate::cpu::grid::span::Avx512;
                    if crate::cpu::grid::span::avx512() {
                        let got = Avx512::touching(&Avx512::load_spheres(&coords, at), &s, SPAN);
                        assert_eq!(got, want, "avx512 round {round}");
                        checked[1] += 1;
                    }
                }
            }
        }
        // Near the limit some lanes were undecided, elsewhere some touched, on the lattice
        // many exactly; AVX-512 was
        // compared every round where it pays.
        assert!(
            touched > 1000 && undecided > 100 && exact > 100,
            "{touched} {undecided} {exact}"
        );
        assert_eq!(checked[0], 2000);
        assert_eq!(
            checked[1],
            if crate::cpu::grid::span::avx512() {
                2000
            } else {
                0
            }
        );
    }
}
