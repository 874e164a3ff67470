//! Exact separating-axis decisions for oriented boxes (docs/design.md §4.2): the cases the
//! filtered f32 test ([`crate::geom::sat::obb_frames_verdict`]) cannot decide within its error
//! bound are settled here in integer arithmetic, so touching boxes whose rotations are exact up
//! to f32 rounding (a 90-degree turn by the nearest f32 quaternion) keep their contact.
//!
//! What a box is, exactly: the f32 centre, the f32 half-extents and the rotation of the f32
//! quaternion `q / |q|`. Its axes are the columns of `M(q) / |q|^2`, where `M` is the
//! homogeneous rotation matrix (quadratic in `q`, no square root), so every quantity of the
//! test is a polynomial in the inputs. Each input is a dyadic rational; scaling the quaternion
//! of each box, and the centres and half-extents of the pair, by powers of two makes them
//! integers without changing the answer (the test is homogeneous in each group), and the
//! separation test on an axis `L`,
//!
//! `|d.L| > sum_k hA_k |a_k.L| + sum_k hB_k |b_k.L|` with `a_k = colA_k / nA`, `b_k = colB_k / nB`,
//!
//! multiplied by `nA nB > 0`, is a comparison of integers. The axes are the columns of `M` and
//! their nine cross products; a zero axis (parallel edges) never separates, so no axis is
//! skipped.

use crate::geom::obb::{Obb, is_cube_rotation, rotation_columns_f64};
use glam::{DVec3, Quat};
use num_bigint::BigInt;

/// Edge axes `A_i x B_i` in the verdict's bit numbering (bit `6 + 3 i + j` for `A_i x B_j`):
/// exactly zero when both boxes have the same rotation.
pub const DIAGONAL_EDGES: u16 = (1 << 6) | (1 << 10) | (1 << 14);

/// Axes of the separating-axis test: A's faces (0-2), B's faces (3-5), edges `A_i x B_j`
/// (`6 + 3 i + j`).
pub const AXES: usize = 15;

/// `v = m 2^e` exactly, `m` an integer (0 for zero).
fn split(v: f32) -> (i64, i32) {
    let bits = v.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32;
    let fraction = (bits & 0x7f_ffff) as i64;
    let (m, e) = if exponent == 0 {
        (fraction, -149)
    } else {
        (fraction | (1 << 23), exponent - 150)
    };
    (if v.is_sign_negative() { -m } else { m }, e)
}

/// The values scaled by one common power of two into integers.
fn integers<const N: usize>(values: [f32; N]) -> [BigInt; N] {
    let parts = values.map(split);
    let low = parts
        .iter()
        .filter(|(m, _)| *m != 0)
        .map(|&(_, e)| e)
        .min()
        .unwrap_or(0);
    parts.map(|(m, e)| BigInt::from(m) << ((e - low) as usize))
}

type Vector = [BigInt; 3];

fn dot(a: &Vector, b: &Vector) -> BigInt {
    &a[0] * &b[0] + &a[1] * &b[1] + &a[2] * &b[2]
}

fn cross(a: &Vector, b: &Vector) -> Vector {
    [
        &a[1] * &b[2] - &a[2] * &b[1],
        &a[2] * &b[0] - &a[0] * &b[2],
        &a[0] * &b[1] - &a[1] * &b[0],
    ]
}

fn abs(v: BigInt) -> BigInt {
    if v.sign() == num_bigint::Sign::Minus {
        -v
    } else {
        v
    }
}

/// The columns of the homogeneous rotation matrix of an integer quaternion, and its squared norm.
fn homogeneous(q: Quat) -> ([Vector; 3], BigInt) {
    let [x, y, z, w] = integers([q.x, q.y, q.z, q.w]);
    let two = BigInt::from(2);
    let (ww, xx, yy, zz) = (&w * &w, &x * &x, &y * &y, &z * &z);
    let (xy, xz, yz) = (&x * &y, &x * &z, &y * &z);
    let (wx, wy, wz) = (&w * &x, &w * &y, &w * &z);
    let columns = [
        [
            &ww + &xx - &yy - &zz,
            &two * (&xy + &wz),
            &two * (&xz - &wy),
        ],
        [
            &two * (&xy - &wz),
            &ww - &xx + &yy - &zz,
            &two * (&yz + &wx),
        ],
        [
            &two * (&xz + &wy),
            &two * (&yz - &wx),
            &ww - &xx - &yy + &zz,
        ],
    ];
    (columns, ww + xx + yy + zz)
}

/// One pair of boxes in integers, ready to test any of the 15 axes exactly.
pub struct ExactPair {
    a: [Vector; 3],
    na: BigInt,
    b: [Vector; 3],
    nb: BigInt,
    d: Vector,
    ha: Vector,
    hb: Vector,
}

impl ExactPair {
    /// The pair `a`, `b` scaled into integers: each box's rotation columns and norm, the
    /// centre offset from `a` to `b` and both half-extents.
    pub fn new(a: &Obb, b: &Obb) -> Self {
        let (ca, na) = homogeneous(a.rotation);
        let (cb, nb) = homogeneous(b.rotation);
        let [ax, ay, az, bx, by, bz, hax, hay, haz, hbx, hby, hbz] = integers([
            a.center.x,
            a.center.y,
            a.center.z,
            b.center.x,
            b.center.y,
            b.center.z,
            a.half_extents.x,
            a.half_extents.y,
            a.half_extents.z,
            b.half_extents.x,
            b.half_extents.y,
            b.half_extents.z,
        ]);
        Self {
            a: ca,
            na,
            b: cb,
            nb,
            d: [bx - ax, by - ay, bz - az],
            ha: [hax, hay, haz],
            hb: [hbx, hby, hbz],
        }
    }

    /// Axis `k` in the numbering of [`AXES`] (not normalised; zero for parallel edges).
    fn axis(&self, k: usize) -> Vector {
        match k {
            0..3 => self.a[k].clone(),
            3..6 => self.b[k - 3].clone(),
            _ => cross(&self.a[(k - 6) / 3], &self.b[(k - 6) % 3]),
        }
    }

    /// Whether axis `k` separates the two boxes (strictly: touching does not).
    pub fn separates(&self, k: usize) -> bool {
        let l = self.axis(k);
        let centres = &self.na * &self.nb * abs(dot(&self.d, &l));
        let radius = |cols: &[Vector; 3], h: &Vector| -> BigInt {
            (0..3).map(|i| &h[i] * abs(dot(&cols[i], &l))).sum()
        };
        let reach = &self.nb * radius(&self.a, &self.ha) + &self.na * radius(&self.b, &self.hb);
        centres > reach
    }
}

/// Whether boxes with the same rotation (the same quaternion up to sign, so bit-for-bit the same
/// exact axes): their diagonal edge axes are exactly zero.
pub fn same_rotation(a: &Obb, b: &Obb) -> bool {
    let (p, q) = (a.rotation, b.rotation);
    p == q || p == -q
}

/// Relative error bound of the f64 margins ([`narrow_in_f64`]): 128 units of f64 rounding
/// (2^-53) of the pair's scale, the f32 filter's bound in f64 units.
const F64_ERROR_REL: f64 = 128.0 * (f64::EPSILON / 2.0);

/// What the f64 margins leave of the unsure axes.
enum Narrowed {
    /// An axis separates by more than the bound.
    Apart,
    /// These axes are still within the bound (0: none separates).
    Unsure(u16),
}

/// The second tier: the margins of the `unsure` axes in f64, the boxes' axes computed from
/// the homogeneous matrix, with the f32 filter's analysis in f64 units (docs/design.md §4.2).
/// Decides all but the pairs within about 1e-14 of their scale of touching; an edge axis
/// between exact axes (rotations of a cube) that computes to zero is exactly zero.
fn narrow_in_f64(a: &Obb, b: &Obb, unsure: u16) -> Narrowed {
    let (ra, rb) = (
        rotation_columns_f64(a.rotation),
        rotation_columns_f64(b.rotation),
    );
    let (ha, hb) = (a.half_extents.as_dvec3(), b.half_extents.as_dvec3());
    let d = b.center.as_dvec3() - a.center.as_dvec3();
    let scale = d.abs().element_sum() + ha.element_sum() + hb.element_sum();
    let e = scale * F64_ERROR_REL;
    let exact = is_cube_rotation(a.rotation) && is_cube_rotation(b.rotation);
    let mut left = 0;
    for k in (0..AXES).filter(|k| unsure & (1 << k) != 0) {
        let l = match k {
            0..3 => ra[k],
            3..6 => rb[k - 3],
            _ => ra[(k - 6) / 3].cross(rb[(k - 6) % 3]),
        };
        if exact && l == DVec3::ZERO {
            continue;
        }
        let reach = |cols: &[DVec3; 3], h: DVec3| {
            h.x * cols[0].dot(l).abs() + h.y * cols[1].dot(l).abs() + h.z * cols[2].dot(l).abs()
        };
        let m = d.dot(l).abs() - (reach(&ra, ha) + reach(&rb, hb));
        if m > e {
            return Narrowed::Apart;
        }
        if m > -e {
            left |= 1 << k;
        }
    }
    Narrowed::Unsure(left)
}

/// Settles the axes in `unsure` (bits in the numbering of [`AXES`]) exactly, the others being
/// known not to separate: whether the boxes overlap (touching counts). Boxes with the same
/// rotation drop their diagonal edge axes (exactly zero); the f64 margins decide what they can;
/// the axes still within their bound are tested in integers.
pub fn settle(a: &Obb, b: &Obb, unsure: u16) -> bool {
    let unsure = if same_rotation(a, b) {
        unsure & !DIAGONAL_EDGES
    } else {
        unsure
    };
    if unsure == 0 {
        return true;
    }
    let unsure = match narrow_in_f64(a, b, unsure) {
        Narrowed::Apart => return false,
        Narrowed::Unsure(0) => return true,
        Narrowed::Unsure(axes) => axes,
    };
    let pair = ExactPair::new(a, b);
    !(0..AXES).any(|k| unsure & (1 << k) != 0 && pair.separates(k))
}

/// Whether two boxes overlap, every axis tested exactly (the oracle of the filtered test).
pub fn obbs_overlap_exactly(a: &Obb, b: &Obb) -> bool {
    let pair = ExactPair::new(a, b);
    !(0..AXES).any(|k| pair.separates(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat3, Vec3};

    #[test]
    fn split_is_exact() {
        for v in [
            0.0f32,
            -0.0,
            1.0,
            -2.5,
            0.707_106_77,
            1e-40,
            -3e38,
            f32::MIN_POSITIVE,
        ] {
            let (m, e) = split(v);
            assert_eq!(m as f64 * (e as f64).exp2(), v as f64, "{v}");
        }
    }

    #[test]
    fn homogeneous_matrix_is_glams_rotation() {
        // Independent of the code under test: glam's matrix of the normalised quaternion.
        for q in [
            Quat::from_xyzw(0.3, -0.2, 0.5, 0.7),
            Quat::from_rotation_z(1.0),
            Quat::from_xyzw(0.0, 0.0, 0.0, 2.0),
        ] {
            let (cols, n) = homogeneous(q);
            let m = Mat3::from_quat(q.normalize());
            let n = n.to_string().parse::<f64>().unwrap();
            for (k, col) in cols.iter().enumerate() {
                for (i, entry) in col.iter().enumerate() {
                    let v = entry.to_string().parse::<f64>().unwrap() / n;
                    assert!((v - m.col(k)[i] as f64).abs() < 1e-6, "{q} col {k} row {i}");
                }
            }
        }
    }

    #[test]
    fn quarter_turned_unit_boxes_touch_exactly() {
        // The nearest f32 quaternion of a 90-degree turn normalises to it exactly.
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let q = Quat::from_xyzw(0.0, 0.0, s, s);
        let at = |x: f32| Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::ONE, q);
        assert!(obbs_overlap_exactly(&at(0.0), &at(2.0)));
        assert!(!obbs_overlap_exactly(&at(0.0), &at(2.0f32.next_up())));
        // Different but equivalent quaternions (q and -q, a scaled identity) agree.
        let id = Obb::new(
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::ONE,
            Quat::from_xyzw(0.0, 0.0, 0.0, -1.0005),
        );
        assert!(obbs_overlap_exactly(&at(0.0), &id));
        assert!(settle(&at(0.0), &at(2.0), (1 << AXES) - 1));
    }
}
