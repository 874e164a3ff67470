//! Spheres, the broad-phase object, and their validation.

use crate::error::Result;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use rayon::prelude::*;

/// A sphere: centre and radius. 16 bytes, laid out as the GPU reads it (`vec4<f32>`: x, y, z, r).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Sphere {
    /// The centre.
    pub center: Vec3,
    /// The radius (>= 0).
    pub radius: f32,
}

/// Smallest non-zero magnitude of a coordinate or radius accepted (docs/design.md §9.6). Every
/// accepted value is then a multiple of 2^-125, so sums and differences of them are zero or
/// normal f32 (a GPU may flush subnormals to zero; none arise), and squares too small to be
/// exact are handled by rescaling ([`Sphere::touches`], [`origin_key`]).
pub const MIN_MAGNITUDE: f32 = 1e-30;

/// The bits of [`MIN_MAGNITUDE`].
pub(crate) const MIN_BITS: u32 = MIN_MAGNITUDE.to_bits();

/// Squares at or above this keep every bit the comparison needs (2^-100).
pub(crate) const SQUARES_EXACT_FROM: f32 = 7.888_609e-31;

/// 2^-e for the exponent e of a normal `m` (so `m * 2^-e` is in [1, 2)): an exact scale.
#[inline]
fn inverse_power_of_two(m: f32) -> f32 {
    let e = ((m.to_bits() >> 23) & 0xff) as i32 - 127;
    f32::from_bits(((127 - e) as u32) << 23)
}

/// The f32 filter's error bound, relative to `dd + ss` (docs/design.md §9.6a): 2^-19, 32
/// units of f32 rounding. The computed `dd` is within 10 units of the exact squared distance
/// of the inputs and `ss` within 6 (each operation rounded to either neighbour, as WGSL allows,
/// counts 2 units; a fused multiply-add only rounds less), so a margin `dd - ss` beyond the
/// bound has the exact margin's sign, with a factor of two to spare. Pairs within it are
/// decided on the inputs' values ([`crate::geom::sphere_exact`]).
pub(crate) const TOUCH_FILTER: f32 = 1.0 / 524_288.0;

/// The filter's verdict on the margin `dd - ss`: `Some(touching)` when the margin lies
/// beyond the bound, `None` when only the exact rule can tell. Non-finite margins (inputs
/// validation rejects) keep the f32 verdict.
#[inline(always)]
pub(crate) fn filtered(dd: f32, ss: f32) -> Option<bool> {
    filtered_with(dd, ss, TOUCH_FILTER)
}

/// [`filtered`] with another bound (the tests show that a smaller one decides wrongly).
#[inline(always)]
pub(crate) fn filtered_with(dd: f32, ss: f32, bound: f32) -> Option<bool> {
    let margin = dd - ss;
    if margin.abs() <= bound * (dd + ss) {
        None
    } else {
        Some(margin < 0.0)
    }
}

/// The inputs of `a` and `b` for the exact rule.
#[inline(always)]
fn pair_inputs(a: &Sphere, b: &Sphere) -> [f32; 8] {
    [
        a.center.x, a.center.y, a.center.z, a.radius, b.center.x, b.center.y, b.center.z, b.radius,
    ]
}

/// Radius sums from which [`Sphere::touches`] squares `s` as it is (2^-50: `ss >= 2^-100`).
pub(crate) const RADIUS_SUMS_SQUARED_FROM: f32 = 8.881_784e-16;

/// The touch test for a radius sum below 2^-50: apart where one axis alone separates the
/// centres by more than `s` (the rounded difference is within 2^-24 of the exact one, the
/// rounded sum too, so a margin of 2^-20 decides exactly), which is most of a small sphere's
/// candidates, with no square formed; else the rescaled test. (Squares of such values are
/// subnormal or underflow: on x86 each costs a microcode assist, and scenes of radius 1e-25
/// ran 15-60 times slower a test.)
#[inline(always)]
fn touches_small(a: &Sphere, b: &Sphere, d: Vec3, s: f32) -> bool {
    const APART_MARGIN: f32 = 1.0 - 1.0 / 1_048_576.0;
    if s < d.abs().max_element() * APART_MARGIN {
        return false;
    }
    touches_rescaled(a, b, d, s)
}

/// The touch test at small scales: the filter on `d` and `s` scaled by a power of two (exact;
/// `s` at least `|d|`'s largest component here, so no square underflows but a component's far
/// below the others), then the exact rule.
#[cold]
fn touches_rescaled(a: &Sphere, b: &Sphere, d: Vec3, s: f32) -> bool {
    let m = d.abs().max_element().max(s);
    if m == 0.0 {
        return true; // coincident points
    }
    let k = inverse_power_of_two(m);
    let (d, s) = (d * k, s * k);
    filtered(d.dot(d), s * s)
        .unwrap_or_else(|| crate::geom::sphere_exact::touches_exact(pair_inputs(a, b)))
}

/// The origin-distance key `|c|`, exact at every accepted scale: for a centre within 2^-50 of
/// the origin (squares below 2^-100) the length is taken of `c` scaled by a power of two and
/// scaled back (`origin_key` in `shaders/sort/keys.wgsl`).
#[inline]
pub fn origin_key(c: Vec3) -> f32 {
    let m = c.abs().max_element();
    if m >= 8.881_784e-16 || m == 0.0 {
        return c.length();
    }
    // 2^e, the scale back: m with its significand cleared.
    let back = f32::from_bits(m.to_bits() & 0x7f80_0000);
    (c * inverse_power_of_two(m)).length() * back
}

/// The componentwise minimum and maximum of `spheres` as vector lanes (x, y, z, r): one min
/// and one max a sphere (a scalar loop per axis was a seventh of a batch of 4,096 worlds of 64
/// on sap). Infinite (min +inf, max -inf) for none; NaN lanes are not looked for.
#[inline]
pub(crate) fn lane_bounds(spheres: &[Sphere]) -> (glam::Vec4, glam::Vec4) {
    let (mut lo, mut hi) = (glam::Vec4::INFINITY, glam::Vec4::NEG_INFINITY);
    for s in spheres {
        let v = glam::Vec4::from_array(bytemuck::cast(*s));
        lo = lo.min(v);
        hi = hi.max(v);
    }
    (lo, hi)
}

/// Largest coordinate magnitude (|c| + r per axis) accepted. Beyond it, the squared distance of
/// two centres (up to 3 * (2 * 1e18)^2 = 1.2e37) could no longer be trusted to stay below
/// f32::MAX (3.4e38) once radii are added; rejecting is clearer than a silent infinity.
pub const MAX_COORDINATE: f32 = 1e18;

impl Sphere {
    /// The sphere of `center` and `radius` (not validated: [`Validate::check`](crate::geom::Validate::check)).
    pub const fn new(center: Vec3, radius: f32) -> Self {
        Self { center, radius }
    }

    /// The touching predicate every method must agree on: `|c_i - c_j| <= r_i + r_j` on the
    /// inputs' values, in real arithmetic (touching counts).
    ///
    /// Exact for every pair validation accepts, on the CPU and the GPU alike (docs/design.md
    /// §9.6a): the squared distance against the squared radius sum in f32 decides every pair
    /// whose margin exceeds an error bound; the few within it are decided in integers on the
    /// inputs' values. When the radius sum is below 2^-50 (its square below 2^-100, where
    /// squares lose bits to underflow), a centre difference past the sum on one axis decides
    /// "apart" at once, and otherwise the filter runs on `d` and `s` scaled by a power of two
    /// (exact).
    ///
    /// ```
    /// use glam::Vec3;
    /// use sweepfan::Sphere;
    ///
    /// let a = Sphere::new(Vec3::ZERO, 1.0);
    /// assert!(a.touches(&Sphere::new(Vec3::new(2.0, 0.0, 0.0), 1.0))); // touching counts
    /// assert!(!a.touches(&Sphere::new(Vec3::new(2.001, 0.0, 0.0), 1.0)));
    /// // The same scene shrunk by 2^-90 decides the same (exact at every accepted scale).
    /// let k = 2f32.powi(-90);
    /// let tiny = |x: f32| Sphere::new(Vec3::new(x * k, 0.0, 0.0), k);
    /// assert!(tiny(0.0).touches(&tiny(2.0)) && !tiny(0.0).touches(&tiny(2.001)));
    /// // A 3-4-5 triangle whose squares f32 rounds: exactly at contact, so touching.
    /// let k = 4097.0 / 1024.0;
    /// let b = Sphere::new(Vec3::new(3.0 * k, 4.0 * k, 0.0), 2.0 * k);
    /// assert!(Sphere::new(Vec3::ZERO, 3.0 * k).touches(&b));
    /// ```
    #[inline(always)]
    pub fn touches(&self, other: &Sphere) -> bool {
        let d = self.center - other.center;
        let s = self.radius + other.radius;
        // Below 2^-50 the square of `s` would lose bits (or, on x86, cost a slow subnormal
        // operation); at or above it, `ss >= 2^-100` keeps the squares exact.
        if s < RADIUS_SUMS_SQUARED_FROM {
            return touches_small(self, other, d, s);
        }
        let (dd, ss) = (d.dot(d), s * s);
        match filtered(dd, ss) {
            Some(touching) => touching,
            None => crate::geom::sphere_exact::touches_exact(pair_inputs(self, other)),
        }
    }

    /// [`super::Validate::check`] as one branch-free predicate (the same rule, without the message).
    #[inline(always)]
    pub(crate) fn valid(&self) -> bool {
        valid_bits(bytemuck::cast(*self))
    }
}

/// [`Sphere::valid`] on a sphere's bits `[x, y, z, r]`: integer lanes but for one sum, so a
/// block of spheres compiles to vector instructions ([`all_valid`]). Where every value is
/// finite (else the result is false whatever the rest says) it is the rule of
/// [`super::Validate::check`]: finite magnitudes order as their bits, so the largest
/// |coordinate| is the integer maximum of the magnitudes' bits, and `r >= 0.0` (-0.0 included)
/// is `r`'s bits at most those of -0.0. A non-zero value below [`MIN_MAGNITUDE`] is one whose
/// magnitude's bits minus one, unsigned, are below MIN's bits minus one.
#[inline(always)]
fn valid_bits([x, y, z, r]: [u32; 4]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    const MAGNITUDE: u32 = 0x7fff_ffff;
    let finite = |v: u32| (v & EXPONENT) != EXPONENT;
    let tiny = |v: u32| (v & MAGNITUDE).wrapping_sub(1) < MIN_BITS - 1;
    let largest = (x & MAGNITUDE).max(y & MAGNITUDE).max(z & MAGNITUDE);
    let reach = f32::from_bits(largest) + f32::from_bits(r);
    finite(x)
        & finite(y)
        & finite(z)
        & finite(r)
        & (r <= (-0.0f32).to_bits())
        & (reach <= MAX_COORDINATE)
        & !(tiny(x) | tiny(y) | tiny(z) | tiny(r))
}

impl super::Validate for Sphere {
    /// A centre or radius that is not finite, a negative radius, a coordinate past
    /// [`MAX_COORDINATE`] with the radius, a non-zero value below [`MIN_MAGNITUDE`]. A zero
    /// radius is a point (allowed; it touches what contains it).
    fn problem(&self) -> Option<String> {
        let c = self.center;
        let named = [("x", c.x), ("y", c.y), ("z", c.z), ("radius", self.radius)];
        if let Some(problem) = super::non_finite(named) {
            return Some(problem);
        }
        if self.radius < 0.0 {
            return Some(format!("radius is negative ({})", self.radius));
        }
        let reach = c.abs().max_element() + self.radius;
        if reach > MAX_COORDINATE {
            return Some(format!(
                "|coordinate| + radius = {reach:e} exceeds {MAX_COORDINATE:e} (f32 squared distances would overflow)"
            ));
        }
        super::below_min_magnitude(named, MIN_MAGNITUDE)
    }
}

/// Whether every sphere passes the validation rule ([`Sphere::valid`]), in one branch-free
/// pass on the calling thread; [`validate_spheres`] names the first that does not.
#[inline]
pub(crate) fn all_valid(spheres: &[Sphere]) -> bool {
    // Eight spheres a step, their bits by lane, so the rule runs on vectors of eight (one
    // sphere a step, the loop stayed scalar: 3.3 ns a sphere on the 2-core VM).
    let bits: &[[u32; 4]] = bytemuck::cast_slice(spheres);
    let (blocks, rest) = bits.as_chunks::<8>();
    let block_valid = |block: &[[u32; 4]; 8]| {
        let lane = |l: usize| -> [u32; 8] { std::array::from_fn(|k| block[k][l]) };
        let (x, y, z, r) = (lane(0), lane(1), lane(2), lane(3));
        (0..8).fold(true, |ok, k| ok & valid_bits([x[k], y[k], z[k], r[k]]))
    };
    let blocks_valid = blocks.iter().fold(true, |ok, b| ok & block_valid(b));
    blocks_valid & rest.iter().fold(true, |ok, &b| ok & valid_bits(b))
}

/// The error for `spheres` once a branch-free pass ([`all_valid`], [`Sphere::valid`]) found a
/// bad one: [`validate_spheres`]'s, naming the lowest. `found_by` names the pass, should the
/// two rules ever disagree (they are the same rule, so this is not expected).
pub(crate) fn invalid_scene_error(spheres: &[Sphere], found_by: &str) -> crate::error::Error {
    match validate_spheres(spheres) {
        Err(e) => e,
        Ok(()) => crate::error::Error::invalid_argument(
            "spheres",
            format!("{found_by} found a sphere the validation accepts"),
        ),
    }
}

/// Validates a scene ([`super::Validate`]'s convention): every sphere passes
/// [`super::Validate::check`] (the lowest bad index named, so the message is deterministic),
/// fewer than 2^32 - 1; an empty scene is fine.
pub fn validate_spheres(spheres: &[Sphere]) -> Result<()> {
    super::check_u32_count(spheres.len(), "objects")?;
    // One branch-free pass (in parallel for large scenes) over the whole rule; only a scene
    // with a bad sphere pays for the checks that name it. (Before: a branch-free pass for the
    // smallest magnitudes, then a branchy one per sphere: 4 ms of a 55 ms frame at 1M.)
    let any_bad = if spheres.len() >= 1 << 16 {
        spheres.par_chunks(1 << 14).any(|chunk| !all_valid(chunk))
    } else {
        !all_valid(spheres)
    };
    if any_bad {
        // The full check names the lowest bad sphere.
        return super::check_each(spheres, super::Validate::check);
    }
    Ok(())
}

/// Values at and around every edge of the validation rule, for tests: zeros of both signs, the
/// smallest accepted magnitude and the values just below it, subnormals, |coordinate| + radius
/// at the limit and just past it, f32::MAX, infinities and NaNs of both signs.
#[cfg(test)]
pub(crate) const EDGE_VALUES: [f32; 21] = {
    let below = f32::from_bits(MIN_BITS - 1);
    let past = f32::from_bits(MAX_COORDINATE.to_bits() + 1);
    [
        0.0,
        -0.0,
        1.5,
        -3.0,
        MIN_MAGNITUDE,
        -MIN_MAGNITUDE,
        below,
        -below,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        MAX_COORDINATE,
        -MAX_COORDINATE,
        MAX_COORDINATE - 1e12,
        past,
        -past,
        5e17,
        f32::MAX,
    ]
};

/// Relative slack of the origin-distance walk (docs/design.md §9.3): it goes on while
/// `D_q - D_p <= 2 r_max + ORIGIN_KEY_SLACK * D_q`. The keys `D = |c|` carry rounding (the
/// squared norm's and the square root's, a few ULP; the GPU computes the same bits, §9.13),
/// which the triangle inequality behind the walk does not allow for; 1e-5 is about 80 ULP of
/// `D_q`, so every touching pair stays a candidate.
pub const ORIGIN_KEY_SLACK: f32 = 1e-5;

/// Largest radius in the scene (0 for an empty slice).
pub(crate) fn max_radius(spheres: &[Sphere]) -> f32 {
    spheres.iter().fold(0.0f32, |m, s| m.max(s.radius))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Validate;

    /// Pairs near contact decide the same scaled by 2^-e (exact), whether their radius sum is
    /// squared as it is (e = 0, 20), or falls below 2^-50 to `touches_small` (e = 52 to 90):
    /// apart by one axis, apart or touching within rounding, touching on a diagonal.
    #[test]
    fn small_radius_sums_decide_as_their_scaled_up_pair() {
        assert_eq!(RADIUS_SUMS_SQUARED_FROM, 2f32.powi(-50));
        let mut pairs = Vec::new();
        let mut state = 12345u32;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / 16_777_216.0
        };
        for k in 0..4000 {
            let (ra, rb) = (0.5 + next(), 0.5 + next());
            let dir = match k % 3 {
                0 => Vec3::X,
                1 => Vec3::new(3.0, 4.0, 0.0) / 5.0,
                _ => Vec3::new(next() + 0.1, next() + 0.1, next() + 0.1).normalize(),
            };
            // Within a few ULPs of contact, or clearly apart or overlapping.
            let gap = match k % 4 {
                0 => 0.0,
                1 => (next() - 0.5) * 1e-6,
                _ => (next() - 0.5) * 0.5,
            };
            let a = Sphere::new(Vec3::new(1.0, 1.0, 1.0), ra);
            let b = Sphere::new(a.center + dir * (ra + rb + gap), rb);
            pairs.push((a, b));
        }
        let scaled = |s: &Sphere, k: f32| Sphere::new(s.center * k, s.radius * k);
        let (mut touching, mut apart) = (0, 0);
        for (a, b) in &pairs {
            let want = a.touches(b);
            touching += usize::from(want);
            apart += usize::from(!want);
            for e in [20, 52, 60, 75, 90] {
                let k = 2f32.powi(-e);
                let (sa, sb) = (scaled(a, k), scaled(b, k));
                assert_eq!(sa.touches(&sb), want, "{a:?} {b:?} at 2^-{e}");
                assert_eq!(sb.touches(&sa), want, "{b:?} {a:?} at 2^-{e}");
            }
        }
        assert!(
            touching > 1000 && apart > 1000,
            "{touching} touching, {apart} apart"
        );
    }

    #[test]
    fn touching_is_inclusive() {
        let a = Sphere::new(Vec3::ZERO, 1.0);
        let b = Sphere::new(Vec3::new(2.0, 0.0, 0.0), 1.0);
        let c = Sphere::new(Vec3::new(2.0001, 0.0, 0.0), 1.0);
        assert!(a.touches(&b));
        assert!(!a.touches(&c));
    }

    #[test]
    fn check_names_the_problem() {
        let s = Sphere::new(Vec3::new(0.0, f32::NAN, 0.0), 1.0);
        let e = s.check(7).unwrap_err().to_string();
        assert!(e.contains("object 7") && e.contains("y is NaN"), "{e}");
        let s = Sphere::new(Vec3::ZERO, -1.0);
        assert!(s.check(0).unwrap_err().to_string().contains("negative"));
        let s = Sphere::new(Vec3::new(f32::INFINITY, 0.0, 0.0), 1.0);
        assert!(s.check(0).unwrap_err().to_string().contains("infinite"));
        let s = Sphere::new(Vec3::new(2e18, 0.0, 0.0), 1.0);
        assert!(s.check(0).unwrap_err().to_string().contains("overflow"));
        assert!(Sphere::new(Vec3::ZERO, 0.0).check(0).is_ok());
    }

    /// The branch-free rule on the bits ([`Sphere::valid`], [`all_valid`] in blocks of eight
    /// and the tail) says what [`super::super::Validate::check`]'s messages say, for every
    /// combination of [`EDGE_VALUES`] in the four lanes.
    #[test]
    fn the_branch_free_rule_is_the_checked_rule() {
        use super::super::Validate;
        let values = EDGE_VALUES;
        let mut spheres = Vec::new();
        for &x in &values {
            for &y in &values {
                for &z in &values {
                    for &r in &values {
                        spheres.push(Sphere::new(Vec3::new(x, y, z), r));
                    }
                }
            }
        }
        let (mut good, mut bad) = (0, 0);
        for (i, s) in spheres.iter().enumerate() {
            let expected = s.check(0).is_ok();
            assert_eq!(s.valid(), expected, "{s:?}");
            assert_eq!(all_valid(std::slice::from_ref(s)), expected, "{s:?}");
            // In a block of eight good spheres at each place, then in a tail of three.
            let mut block = [Sphere::new(Vec3::new(1.0, 2.0, 3.0), 0.5); 11];
            block[i % 8] = *s;
            assert_eq!(all_valid(&block), expected, "{s:?} at {}", i % 8);
            block[i % 8] = block[10];
            block[8 + i % 3] = *s;
            assert_eq!(all_valid(&block), expected, "{s:?} at {}", 8 + i % 3);
            if expected { good += 1 } else { bad += 1 }
        }
        // Both sides seen: 0, -0, 1.5, -3, 5e17 and MIN's magnitude are fine as coordinates.
        assert!(good > 1_000 && bad > 30_000, "{good} good, {bad} bad");
    }

    #[test]
    fn validate_reports_first_bad_index_and_empty() {
        let mut v = vec![Sphere::new(Vec3::ZERO, 1.0); 100_000];
        v[70_000].radius = f32::NAN;
        v[90_000].radius = -1.0;
        let e = validate_spheres(&v).unwrap_err().to_string();
        assert!(e.starts_with("object 70000"), "{e}");
        assert!(validate_spheres(&[]).is_ok(), "no spheres: nothing wrong");
    }
}
