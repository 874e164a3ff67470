//! The separating-axis tests against an independent oracle: linear-programming feasibility by
//! vertex enumeration in f64. Two convex shapes given as half-spaces overlap exactly when their
//! joint constraint set is non-empty; a non-empty bounded polytope has a vertex, and every
//! vertex is the intersection of 3 (2D: 2) constraint planes. So the oracle solves every triple
//! of planes and checks the solution against all constraints, with a tolerance `tol` that grows
//! (tol > 0) or shrinks (tol < 0) both shapes. Cases where the grown and shrunk answers differ are
//! within the touching tolerance and skipped (and counted).

use glam::{DMat3, DQuat, DVec2, DVec3, Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::Pair;
use sweepfan::cpu::sat::{obb_overlaps, obb_pairs, polygon_overlaps, polygon_pairs};
use sweepfan::geom::obb::Obb;
use sweepfan::geom::polygon::Polygon;
use sweepfan_scenes::random::vec3_in;

/// Relative half-width of the touching band (docs/design.md §4.5, verification).
const TOUCH_REL: f64 = 1e-5;

/// A closed half-space `n . x <= d` with unit `n`.
type Plane3 = (DVec3, f64);

fn obb_planes(b: &Obb) -> Vec<Plane3> {
    // f64 rotation straight from the quaternion: shares nothing with the code under test.
    let q = DQuat::from_xyzw(
        b.rotation.x as f64,
        b.rotation.y as f64,
        b.rotation.z as f64,
        b.rotation.w as f64,
    )
    .normalize();
    let m = DMat3::from_quat(q);
    let c = b.center.as_dvec3();
    let h = b.half_extents.as_dvec3();
    let mut planes = Vec::new();
    for (axis, h) in [(m.x_axis, h.x), (m.y_axis, h.y), (m.z_axis, h.z)] {
        planes.push((axis, axis.dot(c) + h));
        planes.push((-axis, -axis.dot(c) + h));
    }
    planes
}

fn solve3(a: [DVec3; 3], d: [f64; 3]) -> Option<DVec3> {
    let m = DMat3::from_cols(a[0], a[1], a[2]).transpose();
    let det = m.determinant();
    if det.abs() < 1e-12 {
        return None;
    }
    Some(m.inverse() * DVec3::from_array(d))
}

/// Do the two boxes, each grown by `tol` on every face, intersect?
fn obb_oracle(a: &Obb, b: &Obb, tol: f64) -> bool {
    obb_oracle_each(a, b, tol, tol)
}

/// Do `a` grown by `tol_a` and `b` grown by `tol_b` (on every face) intersect?
fn obb_oracle_each(a: &Obb, b: &Obb, tol_a: f64, tol_b: f64) -> bool {
    let mut planes = obb_planes(a);
    for p in &mut planes {
        p.1 += tol_a;
    }
    planes.extend(obb_planes(b).into_iter().map(|(n, d)| (n, d + tol_b)));
    let n = planes.len();
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                let Some(x) = solve3(
                    [planes[i].0, planes[j].0, planes[k].0],
                    [planes[i].1, planes[j].1, planes[k].1],
                ) else {
                    continue;
                };
                if planes
                    .iter()
                    .all(|(nrm, d)| nrm.dot(x) <= d + 1e-9 * (1.0 + x.abs().max_element()))
                {
                    return true;
                }
            }
        }
    }
    false
}

/// Some(answer) when the answer is clear, None within the touching band.
pub(crate) fn obb_expected(a: &Obb, b: &Obb) -> Option<bool> {
    let scale = (a.half_extents.max_element() + b.half_extents.max_element()) as f64
        + (a.center - b.center).length() as f64;
    let m = TOUCH_REL * scale;
    let grown = obb_oracle(a, b, m);
    let shrunk = obb_oracle(a, b, -m);
    (grown == shrunk).then_some(grown)
}

fn random_quat(rng: &mut ChaCha8Rng) -> Quat {
    loop {
        let q = Quat::from_vec4(vec3_in(rng, -1.0..1.0).extend(rng.random_range(-1.0..1.0)));
        let l = q.length();
        if l > 0.1 && l <= 1.0 {
            return q.normalize();
        }
    }
}

fn random_boxes(
    rng: &mut ChaCha8Rng,
    n: usize,
    side: f32,
    same_rotation: Option<Quat>,
) -> Vec<Obb> {
    (0..n)
        .map(|_| {
            Obb::new(
                vec3_in(rng, 0.0..side),
                vec3_in(rng, 0.05..1.0),
                same_rotation.unwrap_or_else(|| random_quat(rng)),
            )
        })
        .collect()
}

/// Checks every pair of `boxes` against the oracle; returns (overlapping, separate, skipped).
fn check_all_pairs(boxes: &[Obb]) -> (usize, usize, usize) {
    let (mut yes, mut no, mut skipped) = (0, 0, 0);
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let (a, b) = (&boxes[i], &boxes[j]);
            match obb_expected(a, b) {
                None => skipped += 1,
                Some(expected) => {
                    let got = a.overlaps(b);
                    assert_eq!(got, expected, "pair {i},{j}: {a:?} {b:?}");
                    // Symmetric.
                    assert_eq!(b.overlaps(a), expected);
                    if expected { yes += 1 } else { no += 1 }
                }
            }
        }
    }
    (yes, no, skipped)
}

#[test]
fn obb_random_pairs_match_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let boxes = random_boxes(&mut rng, 150, 5.0, None);
    let (yes, no, skipped) = check_all_pairs(&boxes);
    eprintln!("random: {yes} overlapping, {no} separate, {skipped} within the touching band");
    assert!(yes > 500 && no > 2000, "{yes} {no}");
    assert!(skipped * 1000 < yes + no);
}

#[test]
fn obb_parallel_edges_match_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    // All edges pairwise parallel: every edge-edge cross product is (near) zero.
    let q = random_quat(&mut rng);
    let boxes = random_boxes(&mut rng, 100, 4.0, Some(q));
    let (yes, no, _) = check_all_pairs(&boxes);
    assert!(yes > 100 && no > 1000, "{yes} {no}");
    // Some edges parallel: rotations about one shared axis.
    let axis = random_quat(&mut rng) * Vec3::X;
    let mut boxes = random_boxes(&mut rng, 100, 4.0, None);
    for b in &mut boxes {
        b.rotation = Quat::from_axis_angle(axis, rng.random_range(0.0..6.3));
    }
    let (yes, no, _) = check_all_pairs(&boxes);
    assert!(yes > 100 && no > 1000, "{yes} {no}");
    // Axis-aligned, exactly representable: touching is exact here, so nothing is skipped.
    let boxes: Vec<Obb> = (0..120)
        .map(|_| {
            let c = Vec3::new(
                rng.random_range(0..12) as f32 * 0.5,
                rng.random_range(0..12) as f32 * 0.5,
                rng.random_range(0..4) as f32 * 0.5,
            );
            let h = Vec3::new(
                rng.random_range(1..4) as f32 * 0.25,
                rng.random_range(1..4) as f32 * 0.25,
                rng.random_range(0..4) as f32 * 0.25,
            );
            // 180-degree turns about z have exact axes (-1, 0, 0), (0, -1, 0), (0, 0, 1).
            let q = if rng.random() {
                Quat::IDENTITY
            } else {
                Quat::from_xyzw(0.0, 0.0, 1.0, 0.0)
            };
            Obb::new(c, h, q)
        })
        .collect();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let (a, b) = (&boxes[i], &boxes[j]);
            // Exact expectation: axis-aligned intervals meet on all three axes.
            let expected = (0..3).all(|k| {
                (a.center[k] - b.center[k]).abs() <= a.half_extents[k] + b.half_extents[k]
            });
            assert_eq!(a.overlaps(b), expected, "{a:?} {b:?}");
        }
    }
}

/// Flat boxes (a zero half-extent: rectangles), segments and points against solid boxes. A flat
/// box cannot be shrunk, so the touching band comes from growing and shrinking the solid one.
#[test]
fn obb_degenerate_boxes_match_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let solids = random_boxes(&mut rng, 60, 3.0, None);
    let mut flats = random_boxes(&mut rng, 60, 3.0, None);
    for (k, f) in flats.iter_mut().enumerate() {
        f.half_extents.z = 0.0;
        if k % 3 == 0 {
            f.half_extents.y = 0.0; // a segment
        }
        if k % 10 == 0 {
            f.half_extents = Vec3::ZERO; // a point
        }
    }
    let (mut yes, mut no) = (0, 0);
    for s in &solids {
        for f in &flats {
            let scale = (s.half_extents.max_element() + f.half_extents.max_element()) as f64
                + (s.center - f.center).length() as f64;
            let m = TOUCH_REL * scale;
            let grown = obb_oracle_each(f, s, 0.0, m);
            if grown != obb_oracle_each(f, s, 0.0, -m) {
                continue;
            }
            assert_eq!(f.overlaps(s), grown, "{f:?} {s:?}");
            assert_eq!(s.overlaps(f), grown, "{s:?} {f:?}");
            if grown { yes += 1 } else { no += 1 }
        }
    }
    assert!(yes > 100 && no > 1000, "{yes} {no}");
}

#[test]
fn obb_touching_constructions() {
    let unit = Vec3::ONE;
    let a = Obb::axis_aligned(Vec3::ZERO, unit);
    let overlaps = |b: Obb| a.overlaps(&b);
    // Face, edge and corner contact, exactly at the boundary: touching counts.
    for offset in [
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(2.0, 2.0, 0.0),
        Vec3::new(2.0, -2.0, 2.0),
    ] {
        assert!(overlaps(Obb::axis_aligned(offset, unit)), "{offset}");
        let apart = offset * (1.0 + 1e-4);
        assert!(!overlaps(Obb::axis_aligned(apart, unit)), "{apart}");
    }
    // Nested boxes, and a zero-size box (a point) inside, on a corner, outside.
    assert!(overlaps(Obb::new(
        Vec3::splat(0.1),
        Vec3::splat(0.2),
        Quat::from_rotation_z(0.5)
    )));
    assert!(overlaps(Obb::axis_aligned(
        Vec3::new(0.3, -0.2, 0.1),
        Vec3::ZERO
    )));
    assert!(overlaps(Obb::axis_aligned(Vec3::ONE, Vec3::ZERO)));
    assert!(!overlaps(Obb::axis_aligned(
        Vec3::new(1.0, 1.0, 1.001),
        Vec3::ZERO
    )));
    assert!(overlaps(Obb::new(
        Vec3::ZERO,
        Vec3::splat(5.0),
        Quat::from_rotation_x(0.3)
    )));

    // Edge-edge contact decided only by a cross-product axis: A turned 45 degrees about x has a
    // top edge along x at height sqrt(2); B turned 45 degrees about y has a bottom edge along y
    // at c - sqrt(2). They touch at c = 2 sqrt(2), and the separating direction z is neither
    // box's face normal.
    let a = Obb::new(
        Vec3::ZERO,
        unit,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
    );
    let contact = 2.0 * std::f32::consts::SQRT_2;
    for (gap, expected) in [(-1e-3f32, true), (1e-3, false), (-0.5, true), (0.5, false)] {
        let b = Obb::new(
            Vec3::new(0.0, 0.0, contact + gap),
            unit,
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_4),
        );
        assert_eq!(a.overlaps(&b), expected, "gap {gap}");
        assert_eq!(obb_expected(&a, &b), Some(expected), "oracle, gap {gap}");
        // Every face axis alone would say "overlap" for the small positive gap.
    }
}

/// Moves `b` along `dir` to where the oracle says the boxes just touch (bisection), then checks
/// the test at relative gaps of -1e-4 and +1e-4 of the scale: close to touching, yet clear.
#[test]
fn obb_near_touching_random_pairs() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut checked = 0;
    for _ in 0..150 {
        let a = random_boxes(&mut rng, 1, 0.0001, None)[0];
        let mut b = random_boxes(&mut rng, 1, 0.0001, None)[0];
        let dir = (random_quat(&mut rng) * Vec3::X).as_dvec3();
        let at = |s: f64, b: &Obb| Obb {
            center: (a.center.as_dvec3() + dir * s).as_vec3(),
            ..*b
        };
        let (mut lo, mut hi) = (0.0f64, 10.0f64); // overlapping at lo, separate at hi
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if obb_oracle(&a, &at(mid, &b), 0.0) {
                lo = mid
            } else {
                hi = mid
            }
        }
        let scale = (a.half_extents.max_element() + b.half_extents.max_element()) as f64 + lo;
        for (rel, expected) in [(-1e-4, true), (1e-4, false)] {
            b = at(lo + rel * scale, &b);
            if obb_expected(&a, &b) != Some(expected) {
                continue; // f32 rounding of the centre moved it into the band
            }
            assert_eq!(a.overlaps(&b), expected, "{a:?} {b:?}");
            checked += 1;
        }
    }
    assert!(checked > 250, "{checked}");
}

/// Polygon oracle: 2D vertex enumeration over the edge half-planes of both polygons.
fn polygon_oracle(p: &[Vec2], q: &[Vec2], tol: f64) -> bool {
    let mut lines: Vec<(DVec2, f64)> = Vec::new();
    for poly in [p, q] {
        // Orientation from the f64 signed area, independent of the code under test.
        let v: Vec<DVec2> = poly.iter().map(|v| v.as_dvec2()).collect();
        let area: f64 = (0..v.len())
            .map(|i| v[i].perp_dot(v[(i + 1) % v.len()]))
            .sum();
        for i in 0..v.len() {
            let (a, b) = (v[i], v[(i + 1) % v.len()]);
            let e = (b - a).normalize();
            // Outward normal for counter-clockwise, flipped for clockwise.
            let n = DVec2::new(e.y, -e.x) * area.signum();
            lines.push((n, n.dot(a) + tol));
        }
    }
    for i in 0..lines.len() {
        for j in i + 1..lines.len() {
            let (n1, d1) = lines[i];
            let (n2, d2) = lines[j];
            let det = n1.perp_dot(n2);
            if det.abs() < 1e-12 {
                continue;
            }
            let x = DVec2::new(d1 * n2.y - d2 * n1.y, n1.x * d2 - n2.x * d1) / det;
            if lines
                .iter()
                .all(|(n, d)| n.dot(x) <= d + 1e-9 * (1.0 + x.abs().max_element()))
            {
                return true;
            }
        }
    }
    false
}

fn polygon_expected(p: &[Vec2], q: &[Vec2]) -> Option<bool> {
    let span = |v: &[Vec2]| {
        v.iter()
            .map(|a| v.iter().map(|b| (*a - *b).length()).fold(0.0f32, f32::max))
            .fold(0.0f32, f32::max)
    };
    let scale = (span(p) + span(q) + (p[0] - q[0]).length()) as f64;
    let m = TOUCH_REL * scale;
    let grown = polygon_oracle(p, q, m);
    let shrunk = polygon_oracle(p, q, -m);
    (grown == shrunk).then_some(grown)
}

fn random_polygon(rng: &mut ChaCha8Rng, centre: Vec2, size: f32) -> Vec<Vec2> {
    // Points on an ellipse at sorted random angles: convex, 3 to 10 vertices, random winding.
    let n = rng.random_range(3..=10);
    let mut angles: Vec<f32> = (0..n)
        .map(|_| rng.random_range(0.0..std::f32::consts::TAU))
        .collect();
    angles.sort_by(f32::total_cmp);
    let (ax, ay, tilt) = (
        size * rng.random_range(0.3..1.0),
        size * rng.random_range(0.3..1.0),
        rng.random_range(0.0..3.2f32),
    );
    let mut v: Vec<Vec2> = angles
        .iter()
        .map(|a| {
            let p = Vec2::new(ax * a.cos(), ay * a.sin());
            centre + Vec2::from_angle(tilt).rotate(p)
        })
        .collect();
    if rng.random() {
        v.reverse();
    }
    v
}

fn random_polygons(rng: &mut ChaCha8Rng, n: usize, side: f32) -> Vec<Polygon> {
    let mut out = Vec::new();
    while out.len() < n {
        let c = Vec2::new(rng.random_range(0.0..side), rng.random_range(0.0..side));
        let size = rng.random_range(0.2..1.5);
        let v = random_polygon(rng, c, size);
        // Some with straight vertices (edge midpoints): repeated normals, zero turn.
        let v = if rng.random_range(0..4) == 0 {
            (0..v.len())
                .flat_map(|i| [v[i], (v[i] + v[(i + 1) % v.len()]) * 0.5])
                .collect()
        } else {
            v
        };
        // Random angles may produce a sliver rejected as degenerate: draw again.
        if let Ok(p) = Polygon::new(&v) {
            out.push(p);
        }
    }
    out
}

#[test]
fn polygon_random_pairs_match_the_oracle() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let polys = random_polygons(&mut rng, 250, 9.0);
    let (mut yes, mut no, mut skipped) = (0, 0, 0);
    for i in 0..polys.len() {
        for j in i + 1..polys.len() {
            let (p, q) = (polys[i].vertices(), polys[j].vertices());
            match polygon_expected(p, q) {
                None => skipped += 1,
                Some(e) => {
                    assert_eq!(polys[i].overlaps(&polys[j]), e, "{i},{j}: {p:?} {q:?}");
                    if e { yes += 1 } else { no += 1 }
                }
            }
        }
    }
    eprintln!("polygons: {yes} overlapping, {no} separate, {skipped} within the touching band");
    assert!(yes > 500 && no > 5000, "{yes} {no}");
}

#[test]
fn polygon_touching_nested_and_parallel_constructions() {
    let poly = |pts: &[(f32, f32)]| {
        let v: Vec<Vec2> = pts.iter().map(|&(x, y)| Vec2::new(x, y)).collect();
        Polygon::new(&v).unwrap()
    };
    let square = |x: f32, y: f32, s: f32| poly(&[(x, y), (x + s, y), (x + s, y + s), (x, y + s)]);
    let a = square(0.0, 0.0, 1.0);
    let cases = [
        (square(1.0, 0.0, 1.0), true),                       // shared edge
        (square(1.0, 0.5, 1.0), true),                       // edges overlapping in part (parallel)
        (square(1.0, 1.0, 1.0), true),                       // corner to corner
        (square(1.001, 0.0, 1.0), false),                    // parallel edges, tiny gap
        (square(0.25, 0.25, 0.5), true),                     // nested
        (square(-1.0, -1.0, 3.0), true),                     // containing
        (poly(&[(0.5, 1.0), (1.0, 2.0), (0.0, 2.0)]), true), // apex on an edge
        (poly(&[(0.5, 1.001), (1.0, 2.0), (0.0, 2.0)]), false),
        // Diamond whose vertex touches the square's corner along the diagonal.
        (
            poly(&[(1.5, 1.0), (2.0, 1.5), (1.5, 2.0), (1.0, 1.5)]),
            false,
        ),
        (
            poly(&[(1.5, 1.0), (2.0, 1.5), (1.5, 2.0), (1.0, 1.5), (1.0, 1.0)]),
            true,
        ),
    ];
    for (k, (b, expected)) in cases.iter().enumerate() {
        assert_eq!(a.overlaps(b), *expected, "case {k}");
        assert_eq!(b.overlaps(&a), *expected, "case {k} swapped");
        assert_eq!(
            polygon_oracle(a.vertices(), b.vertices(), 0.0),
            *expected,
            "oracle {k}"
        );
    }
    // Winding does not matter: clockwise input gives the same answers.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..200 {
        let v1 = random_polygon(&mut rng, Vec2::ZERO, 1.0);
        let x = rng.random_range(-2.0..2.0);
        let v2 = random_polygon(&mut rng, Vec2::new(x, 0.5), 1.0);
        let (Ok(p), Ok(q)) = (Polygon::new(&v1), Polygon::new(&v2)) else {
            continue;
        };
        let mut r1 = v1.clone();
        r1.reverse();
        let p_rev = Polygon::new(&r1).unwrap();
        assert_eq!(p.overlaps(&q), p_rev.overlaps(&q));
    }
}

/// A pipeline's pairs on `items`, sorted: checked to equal `brute_pairs` over `overlap` (more than
/// 300 pairs) and to number what its stats say; with those stats.
fn matches_brute<T>(
    run: sweepfan::Result<(Vec<Pair>, sweepfan::Stats)>,
    items: &[T],
    overlap: impl Fn(&T, &T) -> bool,
) -> (Vec<Pair>, sweepfan::Stats) {
    let (mut got, stats) = run.unwrap();
    got.sort_unstable();
    let expected = crate::common::brute_pairs(items, overlap);
    assert!(expected.len() > 300, "{}", expected.len());
    assert_eq!(got, expected);
    assert_eq!(stats.pairs as usize, got.len());
    (got, stats)
}

#[test]
fn pipelines_find_every_overlapping_pair() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let boxes = random_boxes(&mut rng, 1500, 30.0, None);
    let (got, stats) = matches_brute(obb_overlaps(&boxes), &boxes, |a, b| a.overlaps(b));
    assert!(stats.tests >= stats.pairs);
    // And against the oracle where it is clear.
    let mut disagreements = 0;
    for i in 0..200 {
        for j in i + 1..200 {
            if let Some(e) = obb_expected(&boxes[i], &boxes[j]) {
                disagreements += (e != got.binary_search(&[i as u32, j as u32]).is_ok()) as usize;
            }
        }
    }
    assert_eq!(disagreements, 0);

    let polys = random_polygons(&mut rng, 1500, 40.0);
    matches_brute(polygon_overlaps(&polys), &polys, |a, b| a.overlaps(b));
}

#[test]
fn bad_input_is_a_clear_error() {
    let ok = Obb::axis_aligned(Vec3::ZERO, Vec3::ONE);
    // No shapes: no pairs, as every broad phase's empty frame (not an error).
    let (pairs, stats) = obb_overlaps(&[]).unwrap();
    assert!(pairs.is_empty() && stats.tests == 0);
    let mut bad = vec![ok; 10];
    bad[7].half_extents.y = -1.0;
    let e = obb_overlaps(&bad).unwrap_err().to_string();
    assert!(e.contains("object 7") && e.contains("negative"), "{e}");
    bad[7] = ok;
    bad[3].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    assert!(
        obb_overlaps(&bad)
            .unwrap_err()
            .to_string()
            .contains("object 3")
    );
    assert!(polygon_overlaps(&[]).unwrap().0.is_empty());
    let mut out = Vec::new();
    let e = obb_pairs(&[ok, ok], &[[0, 1], [1, 2]], &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("candidate pair 1"), "{e}");
    let tri = Polygon::new(&[Vec2::ZERO, Vec2::X, Vec2::Y]).unwrap();
    assert!(polygon_pairs(&[tri.clone(), tri], &[[0, 5]], &mut out).is_err());
    // A pair list with only valid indices works: canonical, whatever the candidates' order and
    // orientation; the `_unordered` form keeps them as given.
    obb_pairs(&[ok, ok, ok], &[[1, 2], [2, 0], [0, 1]], &mut out).unwrap();
    assert_eq!(out, vec![[0, 1], [0, 2], [1, 2]]);
    sweepfan::cpu::sat::obb_pairs_unordered(&[ok, ok, ok], &[[1, 2], [2, 0], [0, 1]], &mut out)
        .unwrap();
    assert_eq!(out, vec![[1, 2], [2, 0], [0, 1]]);
}
