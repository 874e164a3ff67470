//! What a [`RotatingBox`] sweeps, beyond the sector: the speculative-CCD bounds (docs/design.md §5.3), the
//! exact continuous sweep as a point test, and the thesis's 100-step reference ("detailed DCCD")
//! as an O(1) point test.
//!
//! Rotation frame: origin O, e1 = Y' at the start pose, e2 = U x Y', e3 = U. A point at radius
//! rho and angle beta in the (e1, e2) plane, height z, lies in the box at pose angle phi iff
//! |z| <= Wz/2, |rho cos(beta - phi) - d| <= Wy/2 and |rho sin(beta - phi)| <= Wx/2. For a fixed
//! rho the angles gamma = beta - phi that satisfy this are one or two pairs of arcs symmetric
//! about 0 ([`GammaArcs`]); the sweep over phi in [0, alpha] is then those arcs widened by alpha.

use crate::geom::aabb::Aabb;
use crate::geom::sector::RotatingBox;
use glam::Vec3;
use std::f32::consts::{PI, TAU};

/// The ranges of |gamma| (each within [0, pi]) at which a point at radius rho lies in the box's
/// cross-section. At most two: |gamma| in [acos(c_hi), acos(c_lo)] intersected with
/// |sin gamma| <= Wx / (2 rho), which is [0, asin s] or [pi - asin s, pi].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GammaArcs {
    /// (low, high) of |gamma|; only the first `count` are meaningful.
    pub ranges: [(f32, f32); 2],
    /// Ranges in use (0, 1 or 2).
    pub count: usize,
}

impl GammaArcs {
    /// Every angle (the point sits on the rotation axis inside the box).
    const ALL: GammaArcs = GammaArcs {
        ranges: [(0.0, PI), (0.0, 0.0)],
        count: 1,
    };

    /// Arcs for a point at in-plane radius `rho` around a box of half-widths `half_x`, `half_y`
    /// whose centre is at `distance` from the axis.
    pub fn new(rho: f32, distance: f32, half_x: f32, half_y: f32) -> GammaArcs {
        let mut arcs = GammaArcs::default();
        if rho <= 0.0 {
            // On the axis: inside at every pose or at none.
            if distance - half_y <= 0.0 && 0.0 <= distance + half_y {
                return GammaArcs::ALL;
            }
            return arcs;
        }
        let c_hi = (distance + half_y) / rho;
        let c_lo = (distance - half_y) / rho;
        if c_hi < -1.0 || c_lo > 1.0 {
            return arcs;
        }
        let g_lo = c_hi.min(1.0).acos();
        let g_hi = c_lo.max(-1.0).acos();
        let s = half_x / rho;
        if s >= 1.0 {
            arcs.push(g_lo, g_hi);
        } else {
            let a = s.asin();
            arcs.push(g_lo, g_hi.min(a));
            arcs.push(g_lo.max(PI - a), g_hi);
        }
        arcs
    }

    fn push(&mut self, lo: f32, hi: f32) {
        if lo <= hi {
            self.ranges[self.count] = (lo, hi);
            self.count += 1;
        }
    }

    /// The arcs of gamma as (start, width): each |gamma| range [lo, hi] gives [lo, hi] and
    /// [-hi, -lo].
    fn signed_arcs(&self) -> impl Iterator<Item = (f32, f32)> + '_ {
        self.ranges[..self.count]
            .iter()
            .flat_map(|&(lo, hi)| [(lo, hi - lo), (-hi, hi - lo)])
    }

    /// Continuous sweep: is beta in (arc + [0, alpha]) mod 2 pi for some arc? Any alpha >= 0.
    pub fn swept_continuously(&self, beta: f32, alpha: f32) -> bool {
        self.signed_arcs()
            .any(|(start, width)| wrap_angle(beta - start) <= width + alpha)
    }

    /// Discrete sweep over the poses k alpha / steps, k = 0..=steps: is there a k with
    /// beta - k alpha / steps inside an arc (mod 2 pi)?
    pub fn swept_discretely(&self, beta: f32, alpha: f32, steps: u32) -> bool {
        if !alpha.is_finite() {
            return false; // no poses to speak of (and the loop below would not end)
        }
        self.signed_arcs().any(|(start, width)| {
            // Need k step in [x - width, x] + 2 pi m with 0 <= k step <= alpha, x in [0, 2 pi):
            // m >= 0 while the range still starts below alpha (m = 0, 1 when alpha <= 2 pi).
            let x = wrap_angle(beta - start);
            let (mut lo, mut hi) = (x - width, x);
            while lo <= alpha {
                if pose_in_range(lo, hi, alpha, steps) {
                    return true;
                }
                lo += TAU;
                hi += TAU;
            }
            false
        })
    }
}

/// `v` mod 2 pi into [0, 2 pi), for finite v.
#[inline]
pub fn wrap_angle(v: f32) -> f32 {
    let w = v.rem_euclid(TAU);
    // rem_euclid can round up to exactly TAU.
    if w >= TAU { 0.0 } else { w }
}

/// Is some pose angle k alpha / steps (k = 0..=steps) inside [lo, hi]?
#[inline]
fn pose_in_range(lo: f32, hi: f32, alpha: f32, steps: u32) -> bool {
    if alpha <= 0.0 || steps == 0 {
        // Every pose is the start pose (angle 0).
        return lo <= 0.0 && 0.0 <= hi;
    }
    // In units of poses; clamping k (not the angle) keeps the last pose reachable when
    // alpha / step rounds below `steps`.
    let per_radian = steps as f32 / alpha;
    let k_min = (lo * per_radian).ceil().max(0.0);
    let k_max = (hi * per_radian).floor().min(steps as f32);
    k_min <= k_max
}

/// A point in the rotation frame: in-plane radius, angle from the start arm (counter-clockwise
/// about U), height along U.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepCoords {
    /// Distance from the rotation axis.
    pub rho: f32,
    /// Angle from the start arm e1 towards e2, in radians, in [-pi, pi].
    pub beta: f32,
    /// Height along the axis U, from the origin.
    pub z: f32,
}

impl RotatingBox {
    /// e2 = U x Y': the direction the arm moves in at the start.
    pub fn sweep_direction(&self) -> Vec3 {
        self.axis.cross(self.arm)
    }

    /// World point to the rotation frame.
    pub fn sweep_coords(&self, p: Vec3) -> SweepCoords {
        let d = p - self.origin;
        let x = d.dot(self.arm);
        let y = d.dot(self.sweep_direction());
        SweepCoords {
            rho: (x * x + y * y).sqrt(),
            beta: y.atan2(x),
            z: d.dot(self.axis),
        }
    }

    /// The box's cross-section arcs at in-plane radius `rho`.
    pub fn gamma_arcs(&self, rho: f32) -> GammaArcs {
        GammaArcs::new(rho, self.distance, 0.5 * self.widths.x, 0.5 * self.widths.y)
    }

    /// Exact continuous-sweep point test: is `p` inside the box at some angle in [0, alpha]?
    pub fn sweep_contains(&self, p: Vec3) -> bool {
        let c = self.sweep_coords(p);
        c.z.abs() <= 0.5 * self.widths.z
            && self
                .gamma_arcs(c.rho)
                .swept_continuously(c.beta, self.angle)
    }

    /// The discrete reference: is `p` inside the box at one of the poses k alpha / steps,
    /// k = 0..=steps? The thesis's "detailed DCCD" is `steps = 100` (101 poses).
    pub fn discrete_sweep_contains(&self, p: Vec3, steps: u32) -> bool {
        let c = self.sweep_coords(p);
        c.z.abs() <= 0.5 * self.widths.z
            && self
                .gamma_arcs(c.rho)
                .swept_discretely(c.beta, self.angle, steps)
    }

    /// World AABB of the oriented box at parameter t in [0, 1].
    pub fn pose_aabb(&self, t: f32) -> Aabb {
        let (c, axes) = self.pose(t);
        let half = 0.5 * self.widths;
        let extent = axes[0].abs() * half.x + axes[1].abs() * half.y + axes[2].abs() * half.z;
        Aabb {
            min: c - extent,
            max: c + extent,
        }
    }

    /// The chord |P' - P| the box centre travels between the start and end poses.
    pub fn chord(&self) -> f32 {
        2.0 * self.distance * (0.5 * self.angle).sin().abs()
    }

    /// Speculative CCD (docs/design.md §5.3, after Unity/PhysX): the start pose's AABB grown on every side
    /// by the chord. This is the definition that reproduces the thesis's table 3.1.
    pub fn speculative_aabb(&self) -> Aabb {
        let a = self.pose_aabb(0.0);
        let grow = Vec3::splat(self.chord());
        Aabb {
            min: a.min - grow,
            max: a.max + grow,
        }
    }

    /// The literal reading of speculative CCD: the AABB of the start and end poses.
    pub fn speculative_endpoints(&self) -> Aabb {
        self.pose_aabb(0.0).union(&self.pose_aabb(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::test_util::for_each_drawn;
    use glam::DVec3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_unit(rng: &mut ChaCha8Rng) -> Vec3 {
        let z: f32 = rng.random_range(-1.0..=1.0);
        let phi: f32 = rng.random_range(0.0..TAU);
        let s = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new(s * phi.cos(), s * phi.sin(), z)
    }

    fn random_box(rng: &mut ChaCha8Rng) -> RotatingBox {
        let axis = random_unit(rng);
        let arm = axis.any_orthonormal_vector();
        let arm = crate::geom::sector::rodrigues(arm, axis, rng.random_range(0.0..TAU));
        RotatingBox {
            origin: Vec3::new(
                rng.random_range(-2.0..2.0),
                rng.random_range(-2.0..2.0),
                rng.random_range(-2.0..2.0),
            ),
            axis,
            arm: arm.normalize(),
            // Includes boxes that reach across the axis (distance < Wy / 2).
            distance: rng.random_range(0.0..12.0),
            widths: Vec3::new(
                rng.random_range(0.0..10.0),
                rng.random_range(0.0..16.0),
                rng.random_range(0.0..6.0),
            ),
            angle: rng.random_range(0.0..TAU),
        }
    }

    /// Box membership at pose angle phi, computed in f64 by rotating the box (Rodrigues) and
    /// projecting onto its axes, with the box grown by `margin` on every side.
    fn in_box_at(b: &RotatingBox, p: Vec3, phi: f64, margin: f64) -> bool {
        let u = b.axis.as_dvec3();
        let rot =
            |v: DVec3| v * phi.cos() + u.cross(v) * phi.sin() + u * u.dot(v) * (1.0 - phi.cos());
        let arm = rot(b.arm.as_dvec3());
        let xax = arm.cross(u);
        let d = p.as_dvec3() - (b.origin.as_dvec3() + arm * b.distance as f64);
        let w = b.widths.as_dvec3() * 0.5 + DVec3::splat(margin);
        d.dot(xax).abs() <= w.x && d.dot(arm).abs() <= w.y && d.dot(u).abs() <= w.z
    }

    fn brute_discrete(b: &RotatingBox, p: Vec3, steps: u32, margin: f64) -> bool {
        (0..=steps).any(|k| in_box_at(b, p, b.angle as f64 * k as f64 / steps as f64, margin))
    }

    /// Continuous sweep by fine pose sampling: with the box grown (or shrunk) by `margin`, poses
    /// closer than 2 margin / rho apart leave no gap, so `margin > 0` never misses a point of the
    /// true sweep and `margin < 0` never adds one.
    fn brute_continuous(b: &RotatingBox, p: Vec3, margin: f64) -> bool {
        let rho = (p - b.origin).length() as f64 + 1.0;
        let steps = (b.angle as f64 * rho / margin.abs()).ceil() as u32 + 1;
        brute_discrete(b, p, steps, margin)
    }

    /// Random points around the box's sweep, biased to lie near it.
    fn random_point(b: &RotatingBox, rng: &mut ChaCha8Rng) -> Vec3 {
        let reach = b.distance + 0.5 * b.widths.length() + 1.0;
        b.origin
            + Vec3::new(
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
            )
    }

    #[test]
    fn discrete_sweep_matches_rotating_the_box_to_each_pose() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut inside, mut checked) = (0, 0);
        for n in 0..40 {
            let mut b = random_box(&mut rng);
            if n % 4 == 0 {
                b.angle += TAU; // more than a turn: poses wrap around
            }
            for _ in 0..2_000 {
                let p = random_point(&b, &mut rng);
                let strict = brute_discrete(&b, p, 100, -1e-4);
                let loose = brute_discrete(&b, p, 100, 1e-4);
                if strict != loose {
                    continue; // within 1e-4 of a face: either answer is right
                }
                checked += 1;
                inside += strict as usize;
                assert_eq!(b.discrete_sweep_contains(p, 100), strict, "{b:?} {p}");
            }
        }
        // The sample exercised both answers.
        assert!(
            inside > 2_000 && checked - inside > 2_000,
            "{inside}/{checked}"
        );
    }

    #[test]
    fn continuous_sweep_matches_a_very_fine_pose_sampling() {
        let (mut inside, mut checked) = (0, 0);
        for_each_drawn(8, 12, random_box, |b, rng| {
            for _ in 0..150 {
                let p = random_point(&b, rng);
                let loose = brute_continuous(&b, p, 1e-2);
                let strict = loose && brute_continuous(&b, p, -1e-2);
                if strict != loose {
                    continue;
                }
                checked += 1;
                inside += strict as usize;
                assert_eq!(b.sweep_contains(p), strict, "{b:?} {p}");
            }
        });
        assert!(inside > 40 && checked - inside > 40, "{inside}/{checked}");
    }

    #[test]
    fn continuous_sweep_contains_the_discrete_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..50 {
            let b = random_box(&mut rng);
            for _ in 0..1_000 {
                let p = random_point(&b, &mut rng);
                if b.discrete_sweep_contains(p, 100) {
                    // The continuous test may only disagree by rounding at a face.
                    assert!(b.sweep_contains(p) || !brute_discrete(&b, p, 100, -1e-4));
                }
            }
        }
    }

    #[test]
    fn speculative_bounds_contain_what_they_promise() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        for _ in 0..200 {
            let b = random_box(&mut rng);
            let spec = b.speculative_aabb();
            let ends = b.speculative_endpoints();
            let chord = (b.pose(1.0).0 - b.pose(0.0).0).length();
            assert!((b.chord() - chord).abs() < 1e-4 * (1.0 + chord));
            for t in [0.0, 1.0] {
                let (c, axes) = b.pose(t);
                for corner in 0..8 {
                    let s = |bit: i32| if corner & bit == 0 { -0.5 } else { 0.5 };
                    let p = c
                        + axes[0] * s(1) * b.widths.x * 0.999
                        + axes[1] * s(2) * b.widths.y * 0.999
                        + axes[2] * s(4) * b.widths.z * 0.999;
                    assert!(ends.contains(p), "end pose corner {corner} at t = {t}");
                    if t == 0.0 {
                        assert!(spec.contains(p));
                        // Grown by exactly the chord on each side.
                        assert!(spec.contains(p + Vec3::splat(0.999 * chord)));
                        assert!(spec.contains(p - Vec3::splat(0.999 * chord)));
                    }
                }
            }
        }
    }

    #[test]
    fn gamma_arcs_cover_a_box_reaching_across_the_axis() {
        // distance 1, Wy 6: the box spans the axis; a point at rho 2 lies in it near gamma = 0
        // and near gamma = pi (the part of the box behind the axis).
        let arcs = GammaArcs::new(2.0, 1.0, 0.5, 3.0);
        assert_eq!(arcs.count, 2);
        assert!(arcs.ranges[0].0 == 0.0 && arcs.ranges[1].1 == PI);
        // On the axis, inside: every angle.
        assert_eq!(GammaArcs::new(0.0, 1.0, 0.5, 3.0), GammaArcs::ALL);
        assert_eq!(GammaArcs::new(0.0, 5.0, 0.5, 3.0).count, 0);
    }

    #[test]
    fn wrap_angle_stays_in_range() {
        for v in [-4.0 * PI + 1e-3, -TAU, -1e-9, 0.0, 1e-9, PI, TAU, 3.0 * PI] {
            let w = wrap_angle(v);
            assert!((0.0..TAU).contains(&w), "{v} -> {w}");
        }
    }
}
