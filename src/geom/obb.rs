//! Oriented boxes: centre, half-extents and rotation, their validation and CSV files.

use crate::error::Result;
use crate::geom::aabb::Aabb;
use crate::geom::sphere::{MAX_COORDINATE, MIN_MAGNITUDE};
use bytemuck::{Pod, Zeroable};
use glam::{DVec3, Mat3, Quat, Vec3, Vec4};

/// How far from 1 the norm of a rotation quaternion may be. Within it the quaternion is
/// normalised (text files round to a few digits); beyond it the input is almost surely not a
/// rotation (e.g. Euler angles in the wrong columns) and is rejected.
pub const QUAT_NORM_TOLERANCE: f32 = 1e-3;

/// An oriented box: the box `[-h, h]` rotated by `rotation`, then moved to `center`.
/// Half-extents may be zero (a rectangle, segment or point), never negative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obb {
    /// The centre.
    pub center: Vec3,
    /// Half the side along each of the box's own axes (>= 0).
    pub half_extents: Vec3,
    /// The rotation (normalised where used; its norm within `QUAT_NORM_TOLERANCE` of 1).
    pub rotation: Quat,
}

/// An [`Obb`] in the form the separating-axis test uses, laid out for the GPU (64 bytes, four
/// `vec4<f32>`): the centre (w = 1 when the axes are exact, else 0: [`Obb::frame`]), then each
/// unit axis with its half-extent in w. Computing the axes once per box rather than once per pair
/// is what makes the batched test fast. Aligned to 64 bytes so that each frame is exactly one
/// cache line on the CPU.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ObbFrame {
    /// xyz: the centre; w: 1 when the axes are exact (a rotation of a cube), else 0.
    pub center: Vec4,
    /// `axes[k].xyz` = unit axis k (column k of the rotation), `axes[k].w` = half-extent k.
    pub axes: [Vec4; 3],
}

impl ObbFrame {
    /// A box from its centre, three orthonormal axes (within 1e-4) and half-extents (>= 0; zero
    /// allowed: flat boxes, segments, points), validated. Its axes are not marked exact.
    pub fn from_axes(center: Vec3, axes: [Vec3; 3], half_extents: Vec3) -> Result<Self> {
        let bad = |problem: &str| super::invalid("oriented box", problem);
        if !center.is_finite() || !half_extents.is_finite() || axes.iter().any(|a| !a.is_finite()) {
            return bad("non-finite field");
        }
        if half_extents.min_element() < 0.0 {
            return bad("half-extents must be >= 0");
        }
        for i in 0..3 {
            if (axes[i].length() - 1.0).abs() > 1e-4 {
                return bad("axes must be unit vectors");
            }
            if axes[i].dot(axes[(i + 1) % 3]).abs() > 1e-4 {
                return bad("axes must be perpendicular");
            }
        }
        Ok(Self::from_parts(center, axes, half_extents))
    }

    /// [`Self::from_axes`] without the checks, for axes known orthonormal (a sector's frame).
    pub fn from_parts(center: Vec3, axes: [Vec3; 3], half_extents: Vec3) -> Self {
        Self {
            center: center.extend(0.0),
            axes: std::array::from_fn(|k| axes[k].extend(half_extents[k])),
        }
    }

    /// The centre.
    #[inline(always)]
    pub fn center(&self) -> Vec3 {
        self.center.truncate()
    }
    /// Unit axis `k`.
    #[inline(always)]
    pub fn axis(&self, k: usize) -> Vec3 {
        self.axes[k].truncate()
    }
    /// The half-extent along axis `k`.
    #[inline(always)]
    pub fn half(&self, k: usize) -> f32 {
        self.axes[k].w
    }
    /// Whether the axes are exactly those of the box's rotation (signed unit vectors).
    #[inline(always)]
    pub fn exact_axes(&self) -> bool {
        self.center.w != 0.0
    }

    /// The three axes.
    #[inline]
    pub fn axis_array(&self) -> [Vec3; 3] {
        std::array::from_fn(|k| self.axis(k))
    }

    /// The half-extents along the axes.
    #[inline]
    pub fn half_extents(&self) -> Vec3 {
        Vec3::new(self.half(0), self.half(1), self.half(2))
    }

    /// Corner k (bit i set: +half-extent along axis i; the numbering of [`Obb::corners`]).
    #[inline]
    pub fn corner(&self, k: usize) -> Vec3 {
        let mut p = self.center();
        for i in 0..3 {
            let sign = if k & (1 << i) != 0 { 1.0 } else { -1.0 };
            p += self.axis(i) * (sign * self.half(i));
        }
        p
    }

    /// Whether the world point is inside (closed box).
    pub fn contains_point(&self, p: Vec3) -> bool {
        let d = p - self.center();
        (0..3).all(|i| d.dot(self.axis(i)).abs() <= self.half(i))
    }

    /// The box's extent along a unit direction (half-width of its projection).
    #[inline]
    pub fn projected_radius(&self, dir: Vec3) -> f32 {
        (0..3)
            .map(|i| self.half(i) * self.axis(i).dot(dir).abs())
            .sum()
    }
}

/// The columns of the rotation of `q / |q|` in f64, from the homogeneous matrix (no square
/// root): each entry within a few f64 ulps of 1 of the exact value, and exact for the rotations
/// of a cube (every sum then adds equal squares).
pub(crate) fn rotation_columns_f64(q: Quat) -> [DVec3; 3] {
    let (x, y, z, w) = (q.x as f64, q.y as f64, q.z as f64, q.w as f64);
    let (ww, xx, yy, zz) = (w * w, x * x, y * y, z * z);
    let (xy, xz, yz, wx, wy, wz) = (x * y, x * z, y * z, w * x, w * y, w * z);
    let n = ww + xx + yy + zz;
    [
        DVec3::new(ww + xx - yy - zz, 2.0 * (xy + wz), 2.0 * (xz - wy)) / n,
        DVec3::new(2.0 * (xy - wz), ww - xx + yy - zz, 2.0 * (yz + wx)) / n,
        DVec3::new(2.0 * (xz + wy), 2.0 * (yz - wx), ww - xx - yy + zz) / n,
    ]
}

/// [`rotation_columns_f64`] rounded once to f32: each entry within half an f32 ulp of 1 (plus a
/// few f64 ulps) of the exact value (docs/design.md §4.2).
fn rotation_columns(q: Quat) -> [Vec3; 3] {
    rotation_columns_f64(q).map(|c| c.as_vec3())
}

/// Whether `q / |q|` is one of the 24 rotations of a cube (a signed permutation): one non-zero
/// component, or two or four of one magnitude. [`rotation_columns`] is then exact (every sum it
/// forms is of equal squares), so the frame's axes are the exact axes.
pub(crate) fn is_cube_rotation(q: Quat) -> bool {
    let m = q.to_array().map(f32::abs);
    let top = m.iter().copied().fold(0.0f32, f32::max);
    let count = m.iter().filter(|&&v| v != 0.0).count();
    m.iter().all(|&v| v == 0.0 || v == top) && matches!(count, 1 | 2 | 4)
}

impl Obb {
    /// The box of `center`, `half_extents` and `rotation` (not validated: [`Validate::check`](crate::geom::Validate::check)).
    pub const fn new(center: Vec3, half_extents: Vec3, rotation: Quat) -> Self {
        Self {
            center,
            half_extents,
            rotation,
        }
    }

    /// An unrotated box.
    pub const fn axis_aligned(center: Vec3, half_extents: Vec3) -> Self {
        Self::new(center, half_extents, Quat::IDENTITY)
    }

    /// The rotation as a matrix whose columns are the box axes: those of the normalised
    /// quaternion, each entry within about half an f32 ulp of the exact rotation (exact for the
    /// 24 rotations of a cube), so any quaternion accepted by [`Validate::check`](crate::geom::Validate::check) gives orthonormal
    /// axes.
    pub fn rotation_matrix(&self) -> Mat3 {
        let [x, y, z] = rotation_columns(self.rotation);
        Mat3::from_cols(x, y, z)
    }

    /// The three unit axes (columns of [`Self::rotation_matrix`]), e.g. to build the sector
    /// module's oriented box.
    pub fn axes(&self) -> [Vec3; 3] {
        let m = self.rotation_matrix();
        [m.x_axis, m.y_axis, m.z_axis]
    }

    /// The axes form ([`ObbFrame`]): centre, unit axes, half-extents, exactness flag.
    pub fn frame(&self) -> ObbFrame {
        let m = self.rotation_matrix();
        let h = self.half_extents;
        let exact = if is_cube_rotation(self.rotation) {
            1.0
        } else {
            0.0
        };
        ObbFrame {
            center: self.center.extend(exact),
            axes: [
                m.x_axis.extend(h.x),
                m.y_axis.extend(h.y),
                m.z_axis.extend(h.z),
            ],
        }
    }

    /// The eight corners (for tests, plots and oracles).
    pub fn corners(&self) -> [Vec3; 8] {
        let m = self.rotation_matrix();
        let h = self.half_extents;
        std::array::from_fn(|i| {
            let s = Vec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            );
            self.center + m * (s * h)
        })
    }

    /// The smallest axis-aligned box containing this one, widened by a few ulps so that
    /// rounding never makes it smaller than the exact box: the broad phase must not drop a pair
    /// the exact test would keep (a wider box only adds candidates). The margin covers the
    /// rounding of the sums and of the axes themselves (half an ulp each, times every
    /// half-extent: a long box's tiny axis component counts).
    pub fn aabb(&self) -> Aabb {
        let m = self.rotation_matrix();
        let h = self.half_extents;
        let ext = m.x_axis.abs() * h.x + m.y_axis.abs() * h.y + m.z_axis.abs() * h.z;
        let reach = ext + self.center.abs() + Vec3::splat(h.element_sum());
        let margin = reach * (4.0 * f32::EPSILON);
        let ext = ext + margin;
        Aabb::new(self.center - ext, self.center + ext)
    }

    /// Exact (closed) overlap of two boxes by the separating-axis test; touching counts: the
    /// filtered f32 test, its unsure axes settled exactly (docs/design.md §4.2).
    ///
    /// ```
    /// use glam::{Quat, Vec3};
    /// use sweepfan::Obb;
    ///
    /// let a = Obb::axis_aligned(Vec3::ZERO, Vec3::splat(1.0));
    /// // A unit cube turned 45 degrees about z: its corner reaches sqrt(2) = 1.414 along x.
    /// let turned = |x: f32| {
    ///     Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::splat(1.0), Quat::from_rotation_z(0.785_398_2))
    /// };
    /// assert!(a.overlaps(&turned(2.4)));
    /// assert!(!a.overlaps(&turned(2.5)));
    /// // Touching faces count.
    /// assert!(a.overlaps(&Obb::axis_aligned(Vec3::new(2.0, 0.0, 0.0), Vec3::splat(1.0))));
    /// ```
    pub fn overlaps(&self, other: &Obb) -> bool {
        use crate::geom::sat::{SatVerdict, obb_frames_verdict};
        match obb_frames_verdict(&self.frame(), &other.frame()) {
            SatVerdict::Apart => false,
            SatVerdict::Overlap => true,
            SatVerdict::Unsure(axes) => crate::geom::exact::settle(self, other, axes),
        }
    }
}

impl super::Validate for Obb {
    /// Values that are not finite, a negative half-extent, a zero quaternion or one whose norm
    /// is not within [`QUAT_NORM_TOLERANCE`] of 1 (it is then normalised where used), a reach
    /// `|centre| + |half-extents|` past [`MAX_COORDINATE`].
    fn problem(&self) -> Option<String> {
        let named = [
            ("cx", self.center.x),
            ("cy", self.center.y),
            ("cz", self.center.z),
            ("hx", self.half_extents.x),
            ("hy", self.half_extents.y),
            ("hz", self.half_extents.z),
            ("qw", self.rotation.w),
            ("qx", self.rotation.x),
            ("qy", self.rotation.y),
            ("qz", self.rotation.z),
        ];
        if let Some(problem) = super::non_finite(named) {
            return Some(problem);
        }
        for (name, v) in &named[3..6] {
            if *v < 0.0 {
                return Some(format!("half-extent {name} is negative ({v})"));
            }
        }
        if let Some(problem) = super::below_min_magnitude(named[..6].iter().copied(), MIN_MAGNITUDE)
        {
            return Some(problem);
        }
        // In f64: the squares of a tiny quaternion (1e-25) underflow f32, whose length said 0.
        let norm = glam::Vec4::from(self.rotation).as_dvec4().length();
        if self.rotation == glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0) {
            return Some("rotation quaternion is zero".into());
        }
        if (norm - 1.0).abs() > f64::from(QUAT_NORM_TOLERANCE) {
            let norm = norm as f32;
            let shown = match norm {
                1e-3..=1e3 => format!("{norm}"),
                _ => format!("{norm:e}"),
            };
            return Some(format!(
                "rotation quaternion has norm {shown} (must be 1 within {QUAT_NORM_TOLERANCE})"
            ));
        }
        // In f64: the length of half-extents near f32's limit overflowed to inf in f32, and
        // the message said `inf` of a finite box.
        let reach =
            f64::from(self.center.abs().max_element()) + self.half_extents.as_dvec3().length();
        if reach > f64::from(MAX_COORDINATE) {
            return Some(format!(
                "|centre| + |half-extents| = {:e} exceeds {MAX_COORDINATE:e} (f32 products would overflow)",
                reach as f32
            ));
        }
        None
    }
}

/// Validates a set of boxes ([`super::Validate`]'s convention): each passes
/// [`super::Validate::check`] (the lowest bad index named), fewer than 2^32 - 1; none is fine.
pub fn validate_obbs(boxes: &[Obb]) -> Result<()> {
    super::validate_all(boxes, "boxes")
}

/// Frames of all boxes (in parallel).
pub fn obb_frames(boxes: &[Obb]) -> Vec<ObbFrame> {
    use rayon::prelude::*;
    boxes.par_iter().map(Obb::frame).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::Validate;

    #[test]
    fn frame_is_64_bytes_and_orthonormal() {
        assert_eq!(std::mem::size_of::<ObbFrame>(), 64);
        let q = Quat::from_xyzw(0.3, -0.2, 0.5, 0.7);
        // Norm 0.911...: outside the tolerance, so use a normalised one for the frame check.
        let b = Obb::new(Vec3::ONE, Vec3::new(1.0, 2.0, 3.0), q.normalize());
        let f = b.frame();
        for i in 0..3 {
            assert!((f.axis(i).length() - 1.0).abs() < 1e-6);
            for j in 0..i {
                assert!(f.axis(i).dot(f.axis(j)).abs() < 1e-6);
            }
        }
        assert_eq!([f.half(0), f.half(1), f.half(2)], [1.0, 2.0, 3.0]);
    }

    #[test]
    fn aabb_contains_every_corner() {
        let b = Obb::new(
            Vec3::new(5.0, -3.0, 2.0),
            Vec3::new(1.0, 0.5, 2.0),
            Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-1.2),
        );
        let a = b.aabb();
        for c in b.corners() {
            assert!(
                c.cmpge(a.min).all() && c.cmple(a.max).all(),
                "{c} not in {a:?}"
            );
        }
        // And it is tight: some corner reaches each face within a relative 1e-5.
        let (lo, hi) = b.corners().iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(lo, hi), c| (lo.min(*c), hi.max(*c)),
        );
        assert!((lo - a.min).abs().max_element() < 1e-5 * 8.0);
        assert!((hi - a.max).abs().max_element() < 1e-5 * 8.0);
    }

    #[test]
    fn check_names_each_problem() {
        let ok = Obb::axis_aligned(Vec3::ZERO, Vec3::ONE);
        assert!(ok.check(0).is_ok());
        let msg = |b: Obb| b.check(3).unwrap_err().to_string();
        let mut b = ok;
        b.center.y = f32::NAN;
        assert!(msg(b).contains("object 3") && msg(b).contains("cy is NaN"));
        let mut b = ok;
        b.half_extents.z = -0.5;
        assert!(msg(b).contains("hz is negative"), "{}", msg(b));
        let mut b = ok;
        b.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert!(msg(b).contains("quaternion is zero"));
        // A tiny one is not zero: its norm is named.
        let mut tiny = b;
        tiny.rotation = glam::Quat::from_xyzw(1e-25, 0.0, 0.0, 0.0);
        assert!(msg(tiny).contains("has norm 1e-25"), "{}", msg(tiny));
        let mut b = ok;
        b.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 1.01);
        assert!(msg(b).contains("norm"));
        let mut b = ok;
        b.rotation = Quat::from_xyzw(f32::INFINITY, 0.0, 0.0, 1.0);
        assert!(msg(b).contains("qx is infinite"));
        let mut b = ok;
        b.center.x = 2e18;
        assert!(msg(b).contains("overflow"));
        // A half-extent whose square overflows f32 is reported as the finite reach it is.
        let mut b = ok;
        b.half_extents.x = 1e30;
        assert!(msg(b).contains("= 1e30 exceeds"), "{}", msg(b));
        // Zero half-extents are allowed (a flat box); a nearly unit quaternion is normalised.
        let mut b = ok;
        b.half_extents = Vec3::new(1.0, 0.0, 1.0);
        b.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 1.0005);
        assert!(b.check(0).is_ok());
        assert!((b.frame().axis(0) - Vec3::X).length() < 1e-6);
        assert!(validate_obbs(&[]).is_ok(), "no boxes: nothing wrong");
        let mut v = vec![ok; 50_000];
        v[40_000].half_extents.x = -1.0;
        v[45_000].center.x = f32::NAN;
        assert!(
            validate_obbs(&v)
                .unwrap_err()
                .to_string()
                .starts_with("object 40000")
        );
    }
}
