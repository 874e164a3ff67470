//! Unit tests of `geom::polygon`: construction, faults and their wording, convexity within
//! rounding.

use super::*;

fn v(points: &[(f32, f32)]) -> Vec<Vec2> {
    points.iter().map(|&(x, y)| Vec2::new(x, y)).collect()
}

fn problem(points: &[(f32, f32)]) -> String {
    Polygon::new(&v(points))
        .map_err(|f| f.at(4))
        .unwrap_err()
        .to_string()
}

#[test]
fn clockwise_input_is_stored_counter_clockwise() {
    let cw = v(&[(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0)]);
    let p = Polygon::new(&cw).unwrap();
    let mut expected = cw.clone();
    expected.reverse();
    assert_eq!(p.vertices(), &expected[..]);
    let ccw = v(&[(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]);
    assert_eq!(Polygon::new(&ccw).unwrap().vertices(), &ccw[..]);
    // A straight vertex (midpoint of an edge) is accepted and dropped.
    let straight = v(&[(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (1.0, 1.0)]);
    let kept = v(&[(0.0, 0.0), (2.0, 0.0), (1.0, 1.0)]);
    assert_eq!(Polygon::new(&straight).unwrap().vertices(), &kept[..]);
}

/// A midpoint that f32 rounding bends slightly inward is dropped (the SAT assumes every
/// edge's line supports the polygon: kept, it hid the vertex two polygons share); many
/// small inward bends that add up to a dent are refused, numbered as given.
#[test]
fn rounded_midpoints_are_dropped_and_dents_refused() {
    let scaled = |pts: &[(f32, f32)]| -> Vec<Vec2> {
        let s = |c: f32| (f64::from(c) * 1e-3) as f32;
        pts.iter().map(|&(x, y)| Vec2::new(s(x), s(y))).collect()
    };
    let a = scaled(&[(3.0, 4.0), (3.0, 6.0), (2.0, 5.0), (1.0, 4.0)]);
    let b = scaled(&[(3.0, 6.0), (4.0, 7.0), (2.0, 7.0)]);
    // The rounded midpoint (2, 5) 1e-3 turns inward by rounding alone.
    let turn = (a[2] - a[1]).as_dvec2().perp_dot((a[3] - a[2]).as_dvec2());
    assert!(turn < 0.0, "the case needs an inward turn: {turn}");
    let (pa, pb) = (Polygon::new(&a).unwrap(), Polygon::new(&b).unwrap());
    assert_eq!(pa.vertices(), &[a[0], a[1], a[3]]);
    // A corner at x = 0 beside a vertex at x = -0.0 is kept (a sort by bits put -0.0 before
    // 0.0, out of y order, and the chain lost the corner (0, 0)).
    let signed = v(&[(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (-0.0, 0.5)]);
    let kept = Polygon::new(&signed).unwrap();
    assert_eq!(kept.vertices(), &signed[..4]);
    assert!(pa.overlaps(&pb), "they share the vertex (3, 6) 1e-3");
    // A bottom edge bent inward by 110 over 2^20, in 1,024 steps of under 1e-6 each.
    let l = (1u32 << 20) as f64;
    let mut dent: Vec<Vec2> = (0..=1024)
        .map(|k| {
            let x = k as f64 * l / 1024.0;
            Vec2::new(x as f32, (4e-10 * x * (l - x)) as f32)
        })
        .collect();
    dent.extend([Vec2::new(l as f32, l as f32), Vec2::new(0.0, l as f32)]);
    let e = Polygon::new(&dent)
        .map_err(|f| f.at(3))
        .unwrap_err()
        .to_string();
    assert!(e.contains('3') && e.contains("convex"), "{e}");
    // Clockwise, the vertex is named as given.
    let mut cw = dent.clone();
    cw.reverse();
    let fault = Polygon::new(&cw).unwrap_err();
    let PolygonFault::NotConvex { vertex } = fault else {
        panic!("{fault:?}")
    };
    assert!((1..1024).contains(&(cw.len() - 1 - vertex)), "{vertex}");
}

#[test]
fn bad_polygons_name_the_problem() {
    let e = problem(&[(0.0, 0.0), (1.0, 0.0)]);
    assert!(e.contains("object 4") && e.contains("at least 3"), "{e}");
    let e = problem(&[(0.0, 0.0), (1.0, 0.0), (1.0, 0.0), (0.0, 1.0)]);
    assert!(e.contains("zero-length edge"), "{e}");
    let e = problem(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]);
    assert!(e.contains("collinear"), "{e}");
    let e = problem(&[(0.0, 0.0), (2.0, 0.0), (1.0, 0.5), (2.0, 2.0), (0.0, 2.0)]);
    assert!(e.contains("not convex") && e.contains("vertex 2"), "{e}");
    // Pentagram: every turn has the same sign, but it winds twice.
    let star: Vec<(f32, f32)> = (0..5)
        .map(|k| {
            let a = (k * 2) as f32 * std::f32::consts::TAU / 5.0;
            (a.cos(), a.sin())
        })
        .collect();
    let e = problem(&star);
    assert!(e.contains("winds around 2 times"), "{e}");
    let e = problem(&[(0.0, 0.0), (2.0, 0.0), (1.0, 0.0), (1.0, 1.0)]);
    assert!(e.contains("doubles back"), "{e}");
    // A spike turning back within the convexity tolerance, either way.
    for y in [1e-8, -1e-8] {
        let e = problem(&[(0.0, 0.0), (2.0, 0.0), (1.0, 0.0), (1.0, y), (1.0, 1.0)]);
        assert!(
            e.contains("doubles back") || e.contains("not convex"),
            "{e}"
        );
    }
    let e = problem(&[(0.0, 0.0), (f32::NAN, 0.0), (1.0, 1.0)]);
    assert!(e.contains("vertex 1: x is NaN"), "{e}");
    let e = problem(&[(0.0, 0.0), (1.0, f32::NEG_INFINITY), (1.0, 1.0)]);
    assert!(e.contains("vertex 1: y is infinite"), "{e}");
    let e = problem(&[(0.0, 0.0), (1.0, 0.0), (1.0, 3e18)]);
    assert!(e.contains("exceeds"), "{e}");
}

/// A convex polygon with tips sharper than the convexity tolerance is convex: kept, and
/// its tips touch what touches them.
#[test]
fn sharp_convex_tips_are_kept() {
    for w in [1e-7f32, 1e-5, 3e-4] {
        let rhombus = Polygon::new(&v(&[(0.0, 0.0), (1.0, -w), (2.0, 0.0), (1.0, w)]))
            .unwrap_or_else(|e| panic!("tip {w}: {e}"));
        let at = |x: f32| Polygon::new(&v(&[(x, -1.0), (x + 1.0, 0.0), (x, 1.0)])).unwrap();
        assert!(rhombus.overlaps(&at(2.0)), "tip {w}: a triangle at the tip");
        assert!(!rhombus.overlaps(&at(2.001)), "tip {w}: just past it");
    }
}

/// Issue 28: a bow-tie was called "collinear"; each kind of bad loop now gets its own words
/// and the vertices involved.
#[test]
fn each_fault_is_classified_and_located() {
    let fault = |points: &[(f32, f32)]| Polygon::new(&v(points)).unwrap_err();
    // Symmetric bow-tie: zero signed area, vertices not on one line.
    let bow_tie = [(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)];
    assert_eq!(
        fault(&bow_tie),
        PolygonFault::SelfIntersecting {
            edges: [[0, 1], [2, 3]],
            winds: None
        }
    );
    let e = problem(&bow_tie);
    assert!(
        e.contains("object 4: self-intersecting")
            && e.contains("vertex 0 to vertex 1 crosses the edge from vertex 2 to vertex 3")
            && !e.contains("collinear"),
        "{e}"
    );
    // Lopsided bow-tie: non-zero area, so the turn check fails first; still a crossing.
    assert_eq!(
        fault(&[(0.0, 0.0), (2.0, 2.0), (2.0, 0.0), (0.0, 1.0)]),
        PolygonFault::SelfIntersecting {
            edges: [[0, 1], [2, 3]],
            winds: None
        }
    );
    // The crossing edge that closes the loop (3 -> 0) is named with its wrap.
    assert_eq!(
        fault(&[(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]),
        PolygonFault::SelfIntersecting {
            edges: [[1, 2], [3, 0]],
            winds: None
        }
    );
    assert_eq!(
        fault(&[(0.0, 0.0), (1.0, 1.0), (3.0, 3.0), (2.0, 2.0)]),
        PolygonFault::Collinear { vertices: 4 }
    );
    assert_eq!(
        fault(&[(0.0, 0.0), (1.0, 0.0)]),
        PolygonFault::TooFewVertices { found: 2 }
    );
    assert!(fault(&[(0.0, 0.0)]).to_string().contains("fewer than 3"));
    // A simple dart: not convex at its reflex vertex, not self-intersecting.
    assert_eq!(
        fault(&[(0.0, 0.0), (2.0, 0.0), (0.5, 0.5), (0.0, 2.0)]),
        PolygonFault::NotConvex { vertex: 2 }
    );
    // A file reader names the lines (see `sweepfan_scenes::files`).
    let f = fault(&[(0.0, 0.0), (2.0, 0.0), (0.5, 0.5), (0.0, 2.0)]);
    assert_eq!(
        f.describe(&|k: usize| format!("vertex {k} (line {})", 10 + k)),
        "not convex: the boundary turns the wrong way at vertex 2 (line 12) (an interior \
         angle above 180 degrees)"
    );
}

/// A convex quadrilateral given in f64, one vertex 1e-6 outside the chord of its neighbours,
/// is accepted at any place: 1e4 from the origin its rounding to f32 bends that vertex inward
/// by up to 3e-4 (it was refused as not convex), which is within rounding, so it is dropped.
/// A bend well past the rounding of the place is still refused.
#[test]
fn convex_loops_rounded_to_f32_far_out_are_accepted() {
    let (a, b, c) = ([0.0f64, 0.0], [3.0f64, 1.0], [0.0f64, 2.0]);
    let off = 1e-6 / 10f64.sqrt();
    let mid = [0.362 * b[0] + off, 0.362 * b[1] - 3.0 * off];
    for place in [0.0, 1e3, 1e4, 3e4, 1e5] {
        let at = |p: [f64; 2]| Vec2::new((p[0] + place) as f32, (p[1] + place) as f32);
        let loop_ = [at(a), at(mid), at(b), at(c)];
        let kept = Polygon::new(&loop_).unwrap_or_else(|f| panic!("at {place}: {f:?}"));
        assert!(kept.vertices().len() >= 3, "at {place}");
        // The same loop with the middle vertex 0.5 inside its neighbours' chord: a dent.
        let dent = [
            at(a),
            at([mid[0] - 0.5 / 10f64.sqrt(), mid[1] + 1.5 / 10f64.sqrt()]),
            at(b),
            at(c),
        ];
        assert!(
            matches!(Polygon::new(&dent), Err(PolygonFault::NotConvex { .. })),
            "at {place}"
        );
    }
}
