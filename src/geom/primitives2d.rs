//! 2D geometric primitives of thesis 2.9: segment/segment intersection, segment/circle
//! intersection, point in rectangle (any convex polygon), point/segment distance and
//! segment/segment distance. The sector tests are built from these.

use glam::Vec2;

/// Relative tolerance for "parallel" and "collinear": below it a cross product counts as zero.
const PARALLEL_EPS: f32 = 1e-7;

/// Intersection point of the segments EF and GH (thesis 2.9.1, eq. 2.34), or `None` when they
/// do not meet. Parallel segments meet only when collinear and overlapping: the returned point is
/// then one of the shared endpoints. A zero-length segment acts as a point.
pub fn segment_intersection(e: Vec2, f: Vec2, g: Vec2, h: Vec2) -> Option<Vec2> {
    let d1 = f - e;
    let d2 = h - g;
    let denom = d1.perp_dot(d2);
    let scale = d1.length() * d2.length();
    if denom.abs() > PARALLEL_EPS * scale && scale > 0.0 {
        let w = g - e;
        let s = w.perp_dot(d2) / denom;
        let t = w.perp_dot(d1) / denom;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            return Some(e + s * d1);
        }
        return None;
    }
    // Parallel or degenerate: the segments meet iff an endpoint of one lies on the other.
    [(e, g, h), (f, g, h), (g, e, f), (h, e, f)]
        .into_iter()
        .find(|&(p, a, b)| point_on_segment(p, a, b))
        .map(|(p, _, _)| p)
}

/// True when the segments EF and GH share a point.
#[inline]
pub fn segments_intersect(e: Vec2, f: Vec2, g: Vec2, h: Vec2) -> bool {
    segment_intersection(e, f, g, h).is_some()
}

/// P lies on segment AB (within a relative tolerance of the segment's length).
pub fn point_on_segment(p: Vec2, a: Vec2, b: Vec2) -> bool {
    let scale = (a - b)
        .length()
        .max((p - a).length())
        .max(f32::MIN_POSITIVE);
    point_segment_distance(p, a, b) <= 1e-6 * scale
}

/// Where segment EF meets the circle (centre C, radius r) (thesis 2.9.2, eq. 2.39): the parameters
/// s in [0, 1] of the crossing points P = E + s (F - E), in increasing order, and their number
/// (0, 1 or 2). A tangent line gives one point.
pub fn segment_circle_intersections(e: Vec2, f: Vec2, c: Vec2, r: f32) -> ([f32; 2], usize) {
    let v = f - e;
    let w = e - c;
    let a = v.dot(v);
    let b = v.dot(w);
    let cc = w.dot(w) - r * r;
    let mut out = [0.0; 2];
    let mut n = 0;
    if a == 0.0 {
        // A point: on the circle or not.
        if cc.abs() <= 1e-6 * r * r {
            out[0] = 0.0;
            n = 1;
        }
        return (out, n);
    }
    let disc = b * b - a * cc;
    if disc < 0.0 {
        return (out, 0);
    }
    let root = disc.sqrt();
    // Stable roots of a s^2 + 2 b s + cc = 0.
    let (s0, s1) = if disc == 0.0 {
        (-b / a, f32::NAN)
    } else {
        let q = -(b + b.signum() * root);
        let (x, y) = if q != 0.0 {
            (q / a, cc / q)
        } else {
            (0.0, 0.0)
        };
        (x.min(y), x.max(y))
    };
    for s in [s0, s1] {
        if (0.0..=1.0).contains(&s) {
            out[n] = s;
            n += 1;
        }
    }
    (out, n)
}

/// Point in convex polygon (thesis 2.9.3 for rectangles: the cross products (next - v) x (P - v)
/// all >= 0 or all <= 0). Vertices in order, either orientation. Degenerate polygons are handled
/// as what they are: one vertex is a point, collinear vertices a segment.
pub fn point_in_convex_polygon(p: Vec2, vertices: &[Vec2]) -> bool {
    match vertices {
        [] => false,
        [a] => *a == p,
        [a, b] => point_on_segment(p, *a, *b),
        _ => {
            let mut area2 = 0.0;
            for (i, &v) in vertices.iter().enumerate() {
                area2 += v.perp_dot(vertices[(i + 1) % vertices.len()]);
            }
            let extent = vertices
                .iter()
                .fold(0.0f32, |m, v| m.max((*v - vertices[0]).length()));
            if area2.abs() <= PARALLEL_EPS * extent * extent {
                // Flat polygon: a segment between its two farthest-apart vertices.
                let (a, b) = farthest_pair(vertices);
                return point_on_segment(p, a, b);
            }
            let (mut pos, mut neg) = (false, false);
            for (i, &v) in vertices.iter().enumerate() {
                let next = vertices[(i + 1) % vertices.len()];
                let c = (next - v).perp_dot(p - v);
                pos |= c > 0.0;
                neg |= c < 0.0;
            }
            !(pos && neg)
        }
    }
}

/// Point in the rectangle with corners E, F, G, H in order (thesis 2.9.3).
#[cfg(test)]
pub fn point_in_rectangle(p: Vec2, corners: &[Vec2; 4]) -> bool {
    point_in_convex_polygon(p, corners)
}

fn farthest_pair(vertices: &[Vec2]) -> (Vec2, Vec2) {
    let mut best = (vertices[0], vertices[0], 0.0);
    for (i, &a) in vertices.iter().enumerate() {
        for &b in &vertices[i + 1..] {
            let d = (a - b).length_squared();
            if d > best.2 {
                best = (a, b, d);
            }
        }
    }
    (best.0, best.1)
}

/// A 2D oriented rectangle: centre, unit x-axis (the y-axis is its perpendicular), half-extents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect2 {
    /// The centre.
    pub center: Vec2,
    /// The rectangle's unit x-axis.
    pub axis: Vec2,
    /// Half-widths along the x-axis and its perpendicular.
    pub half_extents: Vec2,
}

impl Rect2 {
    /// Corners E, F, G, H in counter-clockwise order.
    pub fn corners(&self) -> [Vec2; 4] {
        let x = self.axis * self.half_extents.x;
        let y = self.axis.perp() * self.half_extents.y;
        let c = self.center;
        [c - x - y, c + x - y, c + x + y, c - x + y]
    }
}

/// Convex hull (Andrew's monotone chain), counter-clockwise, collinear points dropped. Returns
/// the number of hull vertices written to `out` (1 for coincident points, 2 for collinear ones).
pub fn convex_hull(points: &mut [Vec2], out: &mut Vec<Vec2>) {
    out.clear();
    if points.is_empty() {
        return;
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    let turn = |o: Vec2, a: Vec2, b: Vec2| (a - o).perp_dot(b - o);
    let n = points.len();
    for pass in 0..2 {
        let start = out.len();
        for k in 0..n {
            let p = if pass == 0 {
                points[k]
            } else {
                points[n - 1 - k]
            };
            while out.len() >= start + 2 && turn(out[out.len() - 2], out[out.len() - 1], p) <= 0.0 {
                out.pop();
            }
            out.push(p);
        }
        // The last point of each chain is the first of the other.
        out.pop();
    }
    out.dedup();
    if out.len() > 1 && out[0] == out[out.len() - 1] {
        out.pop();
    }
    if out.is_empty() {
        out.push(points[0]);
    }
}

/// The length of `v` from its components scaled to a largest of 1: no square underflows (a
/// length of 1e-23 squared is subnormal in f32, of 1e-25 zero) or overflows. The sector
/// distances' lengths, `scaled_length` in `shaders/sector/sector_sphere.wgsl`.
#[inline]
pub fn scaled_length(v: Vec2) -> f32 {
    let largest = v.abs().max_element();
    if largest == 0.0 || !largest.is_finite() {
        return largest;
    }
    largest * (v / largest).length()
}

/// Parameter t' in [0, 1] of the point of segment SE nearest Q (thesis 2.9.4, eq. 2.43-2.44).
#[inline]
pub fn closest_parameter_on_segment(q: Vec2, s: Vec2, e: Vec2) -> f32 {
    let v = e - s;
    let len2 = v.dot(v);
    if len2 == 0.0 {
        return 0.0;
    }
    ((q - s).dot(v) / len2).clamp(0.0, 1.0)
}

/// Distance from Q to segment SE (thesis 2.9.4).
#[inline]
pub fn point_segment_distance(q: Vec2, s: Vec2, e: Vec2) -> f32 {
    let t = closest_parameter_on_segment(q, s, e);
    (q - (s + t * (e - s))).length()
}

/// Distance between segments CD and EF (thesis 2.9.5): zero when they cross, otherwise the least
/// of the four endpoint-to-segment distances (in 2D the minimum of two non-crossing segments is
/// always attained at an endpoint of one of them).
pub fn segment_segment_distance(c: Vec2, d: Vec2, e: Vec2, f: Vec2) -> f32 {
    if segments_intersect(c, d, e, f) {
        return 0.0;
    }
    point_segment_distance(c, e, f)
        .min(point_segment_distance(d, e, f))
        .min(point_segment_distance(e, c, d))
        .min(point_segment_distance(f, c, d))
}

/// Intersection points of two circles (centres c0, c1, radii r0, r1): 0, 1 (tangent) or 2.
/// Concentric circles report none (equal ones overlap everywhere; callers test containment).
pub fn circle_circle_intersections(c0: Vec2, r0: f32, c1: Vec2, r1: f32) -> ([Vec2; 2], usize) {
    let d = c1 - c0;
    let dist = d.length();
    let mut out = [Vec2::ZERO; 2];
    if dist == 0.0 || dist > r0 + r1 || dist < (r0 - r1).abs() {
        return (out, 0);
    }
    let a = (r0 * r0 - r1 * r1 + dist * dist) / (2.0 * dist);
    let h2 = (r0 * r0 - a * a).max(0.0);
    let dir = d / dist;
    let mid = c0 + a * dir;
    if h2 == 0.0 {
        out[0] = mid;
        return (out, 1);
    }
    let off = h2.sqrt() * dir.perp();
    out[0] = mid + off;
    out[1] = mid - off;
    (out, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::test_util::sampled_min;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn pt(rng: &mut ChaCha8Rng) -> Vec2 {
        Vec2::new(rng.random_range(-5.0..5.0), rng.random_range(-5.0..5.0))
    }

    /// Brute force: the least distance over dense samples of both segments.
    fn sampled_segment_distance(c: Vec2, d: Vec2, e: Vec2, f: Vec2) -> f32 {
        sampled_min(400, |s, t| (c.lerp(d, s) - e.lerp(f, t)).length())
    }

    #[test]
    fn segment_distance_matches_dense_sampling() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            let (c, d, e, f) = (pt(&mut rng), pt(&mut rng), pt(&mut rng), pt(&mut rng));
            let exact = segment_segment_distance(c, d, e, f);
            let sampled = sampled_segment_distance(c, d, e, f);
            // Sampling overestimates by at most half a sample step of each segment (< 0.04 here).
            assert!(exact <= sampled + 1e-4, "{exact} > {sampled}");
            assert!(sampled - exact <= 0.04, "{exact} vs {sampled}");
        }
    }

    #[test]
    fn point_segment_distance_matches_sampling() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..500 {
            let (q, s, e) = (pt(&mut rng), pt(&mut rng), pt(&mut rng));
            let n = 2000;
            let sampled = (0..=n)
                .map(|i| (q - s.lerp(e, i as f32 / n as f32)).length())
                .fold(f32::MAX, f32::min);
            let exact = point_segment_distance(q, s, e);
            assert!(exact <= sampled + 1e-5 && sampled - exact < 0.01);
        }
    }

    #[test]
    fn intersection_point_lies_on_both_segments_and_agrees_with_distance() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut crossings = 0;
        for _ in 0..2000 {
            let (e, f, g, h) = (pt(&mut rng), pt(&mut rng), pt(&mut rng), pt(&mut rng));
            let sampled = sampled_segment_distance(e, f, g, h);
            match segment_intersection(e, f, g, h) {
                Some(p) => {
                    crossings += 1;
                    assert!(point_segment_distance(p, e, f) < 1e-4);
                    assert!(point_segment_distance(p, g, h) < 1e-4);
                }
                // Sampled distance of crossing segments is below one sample step.
                None => assert!(sampled > 0.0),
            }
        }
        assert!(crossings > 100, "too few crossings to test: {crossings}");
    }

    #[test]
    fn collinear_and_degenerate_segments() {
        let a = Vec2::new(0.0, 0.0);
        let b = Vec2::new(2.0, 0.0);
        // (c, d, whether ab meets cd): overlapping, apart, and point segments on and off ab,
        // then a parallel segment.
        let cases = [
            ((1.0, 0.0), (3.0, 0.0), true),
            ((2.5, 0.0), (3.0, 0.0), false),
            ((1.0, 0.0), (1.0, 0.0), true),
            ((1.0, 0.1), (1.0, 0.1), false),
            ((0.0, 1.0), (2.0, 1.0), false),
        ];
        for ((cx, cy), (dx, dy), meets) in cases {
            let (c, d) = (Vec2::new(cx, cy), Vec2::new(dx, dy));
            assert_eq!(segments_intersect(a, b, c, d), meets, "{c} {d}");
        }
        assert_eq!(
            segment_segment_distance(a, b, Vec2::new(0.0, 1.0), Vec2::new(2.0, 1.0)),
            1.0
        );
    }

    #[test]
    fn circle_crossings_lie_on_circle_and_segment() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..2000 {
            let (e, f, c) = (pt(&mut rng), pt(&mut rng), pt(&mut rng));
            let r = rng.random_range(0.1..4.0);
            let (s, n) = segment_circle_intersections(e, f, c, r);
            for &si in &s[..n] {
                let p = e.lerp(f, si);
                assert!(((p - c).length() - r).abs() < 1e-3 * (1.0 + r));
            }
            // Independent count: sign changes of |P - C| - r along dense samples.
            let m = 4000;
            let mut changes = 0;
            let g = |i: usize| (e.lerp(f, i as f32 / m as f32) - c).length() - r;
            for i in 0..m {
                if (g(i) <= 0.0) != (g(i + 1) <= 0.0) {
                    changes += 1;
                }
            }
            // Away from tangency the counts agree.
            let margin = (0..=m).map(|i| g(i).abs()).fold(f32::MAX, f32::min);
            let tangent_safe = (point_segment_distance(c, e, f) - r).abs() > 0.01;
            if margin > 1e-3 && tangent_safe {
                assert_eq!(n, changes, "e {e} f {f} c {c} r {r}");
            }
        }
    }

    #[test]
    fn rectangle_containment_matches_local_coordinates() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..200 {
            let c = pt(&mut rng);
            let ang: f32 = rng.random_range(0.0..6.3);
            let (ax, ay) = (Vec2::from_angle(ang), Vec2::from_angle(ang).perp());
            let he = Vec2::new(rng.random_range(0.1..3.0), rng.random_range(0.1..3.0));
            let corners = [
                c - ax * he.x - ay * he.y,
                c + ax * he.x - ay * he.y,
                c + ax * he.x + ay * he.y,
                c - ax * he.x + ay * he.y,
            ];
            for _ in 0..50 {
                let p = pt(&mut rng);
                let (u, v) = ((p - c).dot(ax), (p - c).dot(ay));
                if (u.abs() - he.x).abs() < 1e-3 || (v.abs() - he.y).abs() < 1e-3 {
                    continue;
                }
                let inside = u.abs() <= he.x && v.abs() <= he.y;
                assert_eq!(point_in_rectangle(p, &corners), inside);
            }
        }
        // Zero-width rectangle = segment.
        let flat = [Vec2::ZERO, Vec2::X, Vec2::X, Vec2::ZERO];
        assert!(point_in_rectangle(Vec2::new(0.5, 0.0), &flat));
        assert!(!point_in_rectangle(Vec2::new(1.5, 0.0), &flat));
        assert!(!point_in_rectangle(Vec2::new(0.5, 0.1), &flat));
    }

    #[test]
    fn circle_circle_points_lie_on_both() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut seen = 0;
        for _ in 0..1000 {
            let (c0, c1) = (pt(&mut rng), pt(&mut rng));
            let (r0, r1) = (rng.random_range(0.1..5.0), rng.random_range(0.1..5.0));
            let (p, n) = circle_circle_intersections(c0, r0, c1, r1);
            let d = (c1 - c0).length();
            let expect = if d < r0 + r1 && d > (r0 - r1).abs() {
                2
            } else {
                0
            };
            if (d - r0 - r1).abs() > 1e-3 && (d - (r0 - r1).abs()).abs() > 1e-3 {
                assert_eq!(n, expect);
            }
            for q in &p[..n] {
                seen += 1;
                assert!(((*q - c0).length() - r0).abs() < 1e-3);
                assert!(((*q - c1).length() - r1).abs() < 1e-3);
            }
        }
        assert!(seen > 100);
    }

    #[test]
    fn hull_contains_every_point_and_handles_degenerate_sets() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut hull = Vec::new();
        for _ in 0..200 {
            let mut pts: Vec<Vec2> = (0..rng.random_range(3..20)).map(|_| pt(&mut rng)).collect();
            let all = pts.clone();
            convex_hull(&mut pts, &mut hull);
            assert!(hull.len() >= 3);
            for p in &all {
                assert!(point_in_convex_polygon(*p, &hull), "{p} outside {hull:?}");
            }
            // Counter-clockwise, strictly convex.
            for i in 0..hull.len() {
                let (a, b, c) = (
                    hull[i],
                    hull[(i + 1) % hull.len()],
                    hull[(i + 2) % hull.len()],
                );
                assert!((b - a).perp_dot(c - b) > 0.0);
            }
        }
        let mut line = vec![Vec2::ZERO, Vec2::new(2.0, 2.0), Vec2::ONE, Vec2::ONE];
        convex_hull(&mut line, &mut hull);
        assert_eq!(hull.len(), 2);
        let mut same = vec![Vec2::ONE; 3];
        convex_hull(&mut same, &mut hull);
        assert_eq!(hull, vec![Vec2::ONE]);
    }
}
