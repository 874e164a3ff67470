//! Polygon contacts far from the origin (docs/design.md §4.8): pairs whose points were worked
//! out by hand, moved out to 4e6, on the CPU here and on the GPU in `gpu_contacts_frame`.

use glam::Vec2;
use sweepfan::Polygon;
use sweepfan::cpu::contacts::polygon_contacts;
use sweepfan::geom::contact::Contact;

/// Polygon pairs whose contact points were worked out by hand, moved away from the origin by
/// `off` (every coordinate exact in f32 up to 4e6 in the first pair): (the polygons, the
/// points, each point's depth, how near a point must be).
/// 1. The squares `[-1, 1]^2` and `[0.5, 2.5] x [-0.75, 1.25]`: 0.5 deep along x, the second's
///    left edge clipped to the first's span gives two points, (0.75, 1) and (0.75, -0.75).
/// 2. A square of half-side 1 turned 0.3 rad, its lowest-x corner 0.1 inside the right face
///    of `[-10, 10]^2`: one point, midway into that corner; the incident edge's other end lies
///    0.49 outside (the other corners 1.81 and 2.40). Its corners round at their place, so it
///    is checked out to 1e5 only (where a second point 0.55 outside both was kept).
pub(crate) fn far_polygon_pairs(off: f64) -> Vec<([Polygon; 2], Vec<Vec2>, f32, f32)> {
    let at = |v: &[(f64, f64)]| {
        let v: Vec<Vec2> = v
            .iter()
            .map(|&(x, y)| Vec2::new((x + off) as f32, (y + off) as f32))
            .collect();
        Polygon::new(&v).unwrap()
    };
    let square = |x: f64, y: f64, s: f64| {
        at(&[
            (x - s, y - s),
            (x + s, y - s),
            (x + s, y + s),
            (x - s, y + s),
        ])
    };
    let flush = (
        [square(0.0, 0.0, 1.0), square(1.5, 0.25, 1.0)],
        vec![Vec2::new(0.75, 1.0), Vec2::new(0.75, -0.75)],
        0.5,
        1e-6,
    );
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    let turned: Vec<(f64, f64)> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .iter()
        .map(|&(a, b)| (a * c - b * s, a * s + b * c))
        .collect();
    let left = turned
        .iter()
        .copied()
        .min_by(|p, q| p.0.total_cmp(&q.0))
        .unwrap();
    let shifted: Vec<(f64, f64)> = turned
        .iter()
        .map(|&(x, y)| (x - left.0 + 9.9, y - left.1))
        .collect();
    let corner = Vec2::new(9.95, 0.0);
    let turned_in = (
        [square(0.0, 0.0, 10.0), at(&shifted)],
        vec![corner],
        0.1,
        1e-5,
    );
    vec![flush, turned_in]
}

/// The contacts `contact` gives of [`far_polygon_pairs`] at each offset: the points worked
/// out by hand, as many (none merged, none added), each within the pair's rounding of its place.
pub(crate) fn check_far_polygon_pairs(mut contact: impl FnMut(&[Polygon; 2]) -> Contact) {
    for off in [0.0, 1e5, 3e5, 1e6, 4e6] {
        for (k, (pair, points, depth, near)) in far_polygon_pairs(off).into_iter().enumerate() {
            // The turned square's corners round at their place: checked out to 1e5.
            if k == 1 && off > 1e5 {
                continue;
            }
            let c = contact(&pair);
            let what = format!("pair {k} at {off}: {c:?}");
            // The place's own rounding: two units in the last place of the coordinates (the
            // points are the reference vertex plus an offset), four where the inputs rounded.
            let units = if k == 0 { 2.0 } else { 4.0 };
            let within = near + units * (off as f32 + 10.0) * f32::EPSILON;
            assert_eq!(c.count as usize, points.len(), "{what}");
            assert!((c.depth - depth).abs() <= within, "{what}");
            for (p, d) in c.points().iter().zip(c.depths()) {
                let local = Vec2::new((p.x as f64 - off) as f32, (p.y as f64 - off) as f32);
                let hit = points.iter().any(|q| q.distance(local) <= within);
                assert!(hit, "{what}: point {local:?} is none of {points:?}");
                assert!((d - depth).abs() <= within, "{what}");
            }
        }
    }
}

#[test]
fn polygon_contact_points_do_not_move_with_the_pairs_place() {
    check_far_polygon_pairs(|pair| {
        let mut out = Vec::new();
        polygon_contacts(pair, &[[0, 1]], &mut out).unwrap();
        out[0]
    });
}
