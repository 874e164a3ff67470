//! The exact sweep point test for any body of [`super::body`] (docs/design.md §5.8).
//!
//! In the rotation's frame (x = e1, y = e2, z = U, origin O; the angle made >= 0 by flipping U)
//! a point (x0, y0, z) is inside the body turned by t iff (x0 cos t + y0 sin t,
//! y0 cos t - x0 sin t, z) is inside the start pose. Every body is an OR of clauses, each an AND
//! of quadric constraints `q^T M q + l.q + k <= 0` (a face plane, a sphere, an infinite cylinder,
//! a slab), and on the point's circle each quadric is a trigonometric polynomial of degree <= 2:
//! g(t) = k0 + k1 cos t + k2 sin t + k3 cos 2t + k4 sin 2t. The set of t where a clause holds
//! is a union of closed intervals whose left ends are 0 or roots of one of its constraints, so
//! the point is swept iff the clause holds at one of those candidates. Roots are algebraic:
//! closed form on the unit circle for degree 1, a quartic in u = tan(tau / 2) on at most two
//! half-turns for degree 2, isolated between the roots of its derivatives and bisected. No
//! angle is ever computed: candidates are (cos t, sin t) pairs. `shaders/sector/free_accuracy.wgsl`
//! does the same in f32.

use glam::DVec3;

/// A quadric constraint `q^T M q + l.q + k <= 0` in the rotation's frame. `m` is M's
/// (xx, yy, zz, xy, xz, yz).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quadric {
    /// M's entries (xx, yy, zz, xy, xz, yz).
    pub m: [f64; 6],
    /// The linear term l.
    pub l: [f64; 3],
    /// The constant term.
    pub k: f64,
}

/// The tolerance of a constraint's value at a candidate, relative to the size of its terms at
/// the point (the f32 GPU twin needs about 15 ulp; the CPU uses the same so they agree).
pub const TOLERANCE: f64 = 1e-6;

impl Quadric {
    /// `n . q <= d`.
    pub fn plane(n: DVec3, d: f64) -> Self {
        Self {
            l: n.to_array(),
            k: -d,
            ..Default::default()
        }
    }

    /// `|q - c| <= r`.
    pub fn ball(c: DVec3, r: f64) -> Self {
        Self {
            m: [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
            l: (-2.0 * c).to_array(),
            k: c.length_squared() - r * r,
        }
    }

    /// Distance from q to the line through `a` along the unit `u` <= r.
    pub fn line_cylinder(a: DVec3, u: DVec3, r: f64) -> Self {
        // |w|^2 - (w.u)^2 - r^2 with w = q - a: M = I - u u^T, l = -2 M a, k = a^T M a - r^2.
        let m = [
            1.0 - u.x * u.x,
            1.0 - u.y * u.y,
            1.0 - u.z * u.z,
            -u.x * u.y,
            -u.x * u.z,
            -u.y * u.z,
        ];
        let ma = DVec3::new(
            m[0] * a.x + m[3] * a.y + m[4] * a.z,
            m[3] * a.x + m[1] * a.y + m[5] * a.z,
            m[4] * a.x + m[5] * a.y + m[2] * a.z,
        );
        Self {
            m,
            l: (-2.0 * ma).to_array(),
            k: a.dot(ma) - r * r,
        }
    }

    /// The value at q.
    pub fn at(&self, q: DVec3) -> f64 {
        let m = &self.m;
        m[0] * q.x * q.x
            + m[1] * q.y * q.y
            + m[2] * q.z * q.z
            + 2.0 * (m[3] * q.x * q.y + m[4] * q.x * q.z + m[5] * q.y * q.z)
            + self.l[0] * q.x
            + self.l[1] * q.y
            + self.l[2] * q.z
            + self.k
    }

    /// Degree 1 on every circle about z: M's xy block is a multiple of the identity.
    pub fn is_linear_on_circles(&self) -> bool {
        self.m[0] == self.m[1] && self.m[3] == 0.0
    }

    /// Largest |M| entry and |l|: with |k| they bound the terms of the value.
    pub fn magnitudes(&self) -> (f64, f64) {
        let mmax = self.m.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let l = DVec3::from_array(self.l).length();
        (mmax, l)
    }

    /// (k0 .. k4) of g(t) on the circle of the point (x0, y0, z).
    pub fn trig(&self, x0: f64, y0: f64, z: f64) -> [f64; 5] {
        let m = &self.m;
        let (l, k) = (&self.l, self.k);
        let rho2 = x0 * x0 + y0 * y0;
        let diff = m[0] - m[1];
        [
            m[2] * z * z + l[2] * z + k + 0.5 * (m[0] + m[1]) * rho2,
            l[0] * x0 + l[1] * y0 + 2.0 * z * (m[4] * x0 + m[5] * y0),
            l[0] * y0 - l[1] * x0 + 2.0 * z * (m[4] * y0 - m[5] * x0),
            0.5 * diff * (x0 * x0 - y0 * y0) + 2.0 * m[3] * x0 * y0,
            diff * x0 * y0 + m[3] * (y0 * y0 - x0 * x0),
        ]
    }
}

/// g at (cos t, sin t) = (c, s).
#[inline]
pub fn trig_at(k: &[f64; 5], c: f64, s: f64) -> f64 {
    k[0] + k[1] * c + k[2] * s + k[3] * (c * c - s * s) + k[4] * (2.0 * c * s)
}

/// The turn [0, alpha] (alpha in [0, 2 pi]) and what the root finders need of it: its end, and
/// one or two half-turns (at most pi each) centred at c_j, as (cos c, sin c, cos 2c, sin 2c),
/// on which u = tan((t - c_j) / 2) runs over [-w, w].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Turn {
    /// The turn's angle, in [0, 2 pi].
    pub alpha: f64,
    /// (cos alpha, sin alpha).
    pub end: (f64, f64),
    /// The half-turns' (cos c, sin c, cos 2c, sin 2c); only the first `half_count` are used.
    pub halves: [[f64; 4]; 2],
    /// Half-turns used: 1 when alpha <= pi, else 2.
    pub half_count: usize,
    /// tan of a quarter of a half-turn's length: u runs over [-w, w].
    pub w: f64,
}

impl Turn {
    /// The turn [0, alpha], alpha clamped to [0, 2 pi].
    pub fn new(alpha: f64) -> Self {
        let alpha = alpha.clamp(0.0, std::f64::consts::TAU);
        let half_count = if alpha > std::f64::consts::PI { 2 } else { 1 };
        let len = alpha / half_count as f64;
        let mut halves = [[0.0; 4]; 2];
        for (j, h) in halves.iter_mut().enumerate().take(half_count) {
            let c = (j as f64 + 0.5) * len;
            *h = [c.cos(), c.sin(), (2.0 * c).cos(), (2.0 * c).sin()];
        }
        Self {
            alpha,
            end: (alpha.cos(), alpha.sin()),
            halves,
            half_count,
            w: (0.25 * len).tan(),
        }
    }

    /// Whether the angle of the unit vector (c, s) lies in [0, alpha].
    #[inline]
    pub fn holds(&self, c: f64, s: f64) -> bool {
        let before_end = c * self.end.1 - s * self.end.0 >= 0.0; // sin(alpha - t) >= 0
        if self.alpha <= std::f64::consts::PI {
            s >= 0.0 && before_end
        } else {
            s >= 0.0 || before_end
        }
    }
}

/// Real roots of the polynomial `p` (ascending coefficients, degree <= 4) in [lo, hi], given the
/// sorted roots `crit` of its derivative there: p is monotone between consecutive ones.
fn roots_between(p: &[f64], crit: &[f64], lo: f64, hi: f64, out: &mut Vec<f64>) {
    let eval = |u: f64| p.iter().rev().fold(0.0, |a, c| a * u + c);
    let mut a = lo;
    let mut fa = eval(a);
    if fa == 0.0 {
        out.push(a);
    }
    for &b in crit.iter().chain(std::iter::once(&hi)) {
        let fb = eval(b);
        if fb == 0.0 {
            out.push(b);
        } else if fa != 0.0 && (fa < 0.0) != (fb < 0.0) {
            let (mut x0, mut x1, mut f0) = (a, b, fa);
            for _ in 0..64 {
                let mid = 0.5 * (x0 + x1);
                if mid <= x0 || mid >= x1 {
                    break;
                }
                let fm = eval(mid);
                if (fm < 0.0) == (f0 < 0.0) {
                    (x0, f0) = (mid, fm);
                } else {
                    x1 = mid;
                }
            }
            out.push(0.5 * (x0 + x1));
        }
        (a, fa) = (b, fb);
    }
}

/// Real roots of the quartic `p` (ascending) in [lo, hi], each isolated between the roots of
/// the derivatives.
/// A zero polynomial (a constraint constant on the circle) has none worth trying.
pub fn quartic_roots(p: &[f64; 5], lo: f64, hi: f64) -> Vec<f64> {
    if p.iter().all(|&c| c == 0.0) {
        return Vec::new();
    }
    let d1 = [p[1], 2.0 * p[2], 3.0 * p[3], 4.0 * p[4]];
    let d2 = [d1[1], 2.0 * d1[2], 3.0 * d1[3]];
    let d3 = [d2[1], 2.0 * d2[2]];
    let mut r3 = Vec::new();
    if d3[1] != 0.0 {
        let u = -d3[0] / d3[1];
        if lo < u && u < hi {
            r3.push(u);
        }
    }
    let mut r2 = Vec::new();
    roots_between(&d2, &r3, lo, hi, &mut r2);
    let mut r1 = Vec::new();
    roots_between(&d1, &r2, lo, hi, &mut r1);
    let mut r0 = Vec::new();
    roots_between(p, &r1, lo, hi, &mut r0);
    r0
}

/// The points (cos t, sin t) with t in the turn where g(t) = 0.
pub fn trig_roots(k: &[f64; 5], linear: bool, turn: &Turn, out: &mut Vec<(f64, f64)>) {
    if linear {
        let (a, b, c) = (k[1], k[2], k[0]);
        let m2 = a * a + b * b;
        let disc = m2 - c * c;
        if m2 == 0.0 || disc < 0.0 {
            return;
        }
        let r = disc.sqrt();
        for (cs, sn) in [
            ((-a * c - b * r) / m2, (-b * c + a * r) / m2),
            ((-a * c + b * r) / m2, (-b * c - a * r) / m2),
        ] {
            if turn.holds(cs, sn) {
                out.push((cs, sn));
            }
        }
        return;
    }
    for h in &turn.halves[..turn.half_count] {
        let [cc, sc, c2, s2] = *h;
        let k1 = k[1] * cc + k[2] * sc;
        let k2 = k[2] * cc - k[1] * sc;
        let k3 = k[3] * c2 + k[4] * s2;
        let k4 = k[4] * c2 - k[3] * s2;
        let p = [
            k[0] + k1 + k3,
            2.0 * k2 + 4.0 * k4,
            2.0 * k[0] - 6.0 * k3,
            2.0 * k2 - 4.0 * k4,
            k[0] - k1 + k3,
        ];
        for u in quartic_roots(&p, -turn.w, turn.w) {
            let den = 1.0 + u * u;
            let (ct, st) = ((1.0 - u * u) / den, 2.0 * u / den);
            out.push((cc * ct - sc * st, sc * ct + cc * st));
        }
    }
}

/// One clause's constraints on a point's circle: coefficients, degree-1 flag, tolerance.
struct OnCircle {
    k: [f64; 5],
    linear: bool,
    tol: f64,
}

/// Whether the point (x0, y0, z) of the rotation's frame is swept by the body whose clauses
/// are given, turning through `turn`: (exact, at one of `steps` poses). The step poses are
/// (cos t_k, sin t_k); each holds with no tolerance, the continuous sweep within [`TOLERANCE`].
pub fn sweep_membership<'a>(
    clauses: impl Iterator<Item = &'a [Quadric]>,
    turn: &Turn,
    point: DVec3,
    steps: &[(f64, f64)],
) -> (bool, bool) {
    let (x0, y0, z) = (point.x, point.y, point.z);
    let scale = point.length() + 1.0;
    let (mut exact, mut discrete) = (false, false);
    let mut roots = Vec::new();
    for clause in clauses {
        let on: Vec<OnCircle> = clause
            .iter()
            .map(|q| {
                let (mmax, l) = q.magnitudes();
                OnCircle {
                    k: q.trig(x0, y0, z),
                    linear: q.is_linear_on_circles(),
                    tol: TOLERANCE * (mmax * scale * scale + l * scale + q.k.abs()),
                }
            })
            .collect();
        let holds = |c: f64, s: f64, slack: bool| {
            on.iter()
                .all(|g| trig_at(&g.k, c, s) <= if slack { g.tol } else { 0.0 })
        };
        if !exact {
            exact = holds(1.0, 0.0, true) || holds(turn.end.0, turn.end.1, true);
            for g in &on {
                if exact {
                    break;
                }
                roots.clear();
                trig_roots(&g.k, g.linear, turn, &mut roots);
                exact = roots.iter().any(|&(c, s)| holds(c, s, true));
            }
        }
        if !discrete {
            discrete = steps.iter().any(|&(c, s)| holds(c, s, false));
        }
        if exact && discrete {
            break;
        }
    }
    (exact, discrete)
}

/// The (cos, sin) of the `steps + 1` poses t_k = alpha k / steps.
pub fn step_poses(alpha: f64, steps: u32) -> Vec<(f64, f64)> {
    (0..=steps)
        .map(|k| {
            let t = alpha * k as f64 / steps.max(1) as f64;
            (t.cos(), t.sin())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartic_roots_are_found_and_only_in_range() {
        // (u - 0.5)(u + 0.25)(u - 0.9)(u + 2) = roots 0.5, -0.25, 0.9 in [-1, 1]; -2 outside.
        let roots = [0.5, -0.25, 0.9, -2.0];
        let mut p = [1.0, 0.0, 0.0, 0.0, 0.0];
        for r in roots {
            let mut q = [0.0; 5];
            for i in 0..4 {
                q[i + 1] += p[i];
                q[i] -= r * p[i];
            }
            p = q;
        }
        let mut got = quartic_roots(&p, -1.0, 1.0);
        got.sort_by(f64::total_cmp);
        assert_eq!(got.len(), 3, "{got:?}");
        for (g, want) in got.iter().zip([-0.25, 0.5, 0.9]) {
            assert!((g - want).abs() < 1e-12, "{g} {want}");
        }
        // A double root (tangency) is found where p touches zero exactly.
        let sq = [0.25, -1.0, 1.0, 0.0, 0.0]; // (u - 0.5)^2
        assert!(
            quartic_roots(&sq, -1.0, 1.0)
                .iter()
                .any(|u| (u - 0.5).abs() < 1e-12)
        );
        assert!(quartic_roots(&[1.0, 0.0, 1.0, 0.0, 0.0], -1.0, 1.0).is_empty());
        assert!(quartic_roots(&[0.0; 5], -1.0, 1.0).is_empty());
    }

    #[test]
    fn trig_coefficients_match_the_quadric_on_the_circle() {
        let qs = [
            Quadric::plane(DVec3::new(0.3, -0.4, 0.866).normalize(), 2.0),
            Quadric::ball(DVec3::new(3.0, 1.0, -2.0), 1.5),
            Quadric::line_cylinder(
                DVec3::new(1.0, 2.0, 3.0),
                DVec3::new(0.2, 0.9, -0.4).normalize(),
                0.7,
            ),
        ];
        let (x0, y0, z) = (2.5, -1.25, 0.75);
        for q in qs {
            let k = q.trig(x0, y0, z);
            for i in 0..16 {
                let t = i as f64 * 0.41;
                let (c, s) = (t.cos(), t.sin());
                let p = DVec3::new(x0 * c + y0 * s, y0 * c - x0 * s, z);
                assert!((trig_at(&k, c, s) - q.at(p)).abs() < 1e-9, "{q:?} t {t}");
            }
            assert_eq!(
                q.is_linear_on_circles(),
                k[3].abs() + k[4].abs() < 1e-15,
                "{q:?}"
            );
        }
    }

    #[test]
    fn trig_roots_are_zeros_inside_the_turn() {
        let turn = Turn::new(5.0);
        let q = Quadric::line_cylinder(
            DVec3::new(4.0, 1.0, 0.0),
            DVec3::new(0.3, 0.1, 1.0).normalize(),
            2.0,
        );
        for (x0, y0) in [(4.0, 0.5), (3.0, -2.0), (0.5, 4.5)] {
            let k = q.trig(x0, y0, 0.3);
            let mut roots = Vec::new();
            trig_roots(&k, false, &turn, &mut roots);
            // Count sign changes on a fine sampling of the turn.
            let n = 200_000;
            let changes = (0..n)
                .filter(|&i| {
                    let (t0, t1) = (5.0 * i as f64 / n as f64, 5.0 * (i + 1) as f64 / n as f64);
                    (trig_at(&k, t0.cos(), t0.sin()) < 0.0)
                        != (trig_at(&k, t1.cos(), t1.sin()) < 0.0)
                })
                .count();
            assert_eq!(roots.len(), changes, "({x0}, {y0}): {roots:?}");
            for (c, s) in roots {
                assert!(trig_at(&k, c, s).abs() < 1e-9);
                assert!(turn.holds(c, s));
            }
        }
    }

    #[test]
    fn turn_holds_angles_in_range() {
        for alpha in [0.0, 0.3, 3.0, 3.2, 6.0, std::f64::consts::TAU] {
            let turn = Turn::new(alpha);
            for i in 0..720 {
                let t = i as f64 * std::f64::consts::TAU / 720.0 + 1e-6;
                assert_eq!(
                    turn.holds(t.cos(), t.sin()),
                    t <= alpha,
                    "alpha {alpha} t {t}"
                );
            }
        }
    }
}
