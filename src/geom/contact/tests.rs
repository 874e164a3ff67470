//! Contacts by construction: pairs whose normal, depth and points follow from their placement.

use super::*;
use crate::geom::obb::Obb;
use glam::Quat;
use std::f32::consts::FRAC_PI_4;

fn close(a: Vec3, b: Vec3, tol: f32) -> bool {
    a.distance(b) <= tol
}

/// Every expected point matches one contact point within `tol`, and the counts agree.
fn same_points(c: &Contact, expected: &[Vec3], tol: f32) {
    assert_eq!(c.count as usize, expected.len(), "{c:?}");
    for e in expected {
        assert!(
            c.points().iter().any(|p| close(*p, *e, tol)),
            "{e} not in {c:?}"
        );
    }
}

/// `c` has the normal `normal` and the depth `depth`, each within `tol`.
fn assert_along(c: &Contact, normal: Vec3, depth: f32, tol: f32) {
    assert!(
        close(c.normal, normal, tol) && (c.depth - depth).abs() < tol,
        "{c:?}"
    );
}

/// The contact of `a` and `b`, checked to have the normal `normal` and the depth `depth`, each
/// within `tol`.
fn obb_contact_along(a: &ObbFrame, b: &ObbFrame, normal: Vec3, depth: f32, tol: f32) -> Contact {
    let c = obb_contact(a, b);
    assert_along(&c, normal, depth, tol);
    c
}

/// The corners of the rectangle `u[0]..u[1]` by `v[0]..v[1]` in order round it, each placed by
/// `at(u, v)`.
fn rectangle(u: [f32; 2], v: [f32; 2], at: impl Fn(f32, f32) -> Vec3) -> Vec<Vec3> {
    [(u[0], v[0]), (u[1], v[0]), (u[1], v[1]), (u[0], v[1])]
        .iter()
        .map(|&(u, v)| at(u, v))
        .collect()
}

fn cube(center: Vec3, half: f32, rotation: Quat) -> ObbFrame {
    Obb::new(center, Vec3::splat(half), rotation).frame()
}

#[test]
fn spheres_overlapping_touching_apart_and_coincident() {
    let s = |x: f32, r: f32| Sphere::new(Vec3::new(x, 0.0, 0.0), r);
    let c = sphere_contact(&s(0.0, 1.0), &s(1.5, 1.0));
    assert_eq!((c.normal, c.depth), (Vec3::X, 0.5));
    same_points(&c, &[Vec3::new(0.75, 0.0, 0.0)], 1e-6);
    // From the second to the first: the normal turns, the rest stays.
    let back = sphere_contact(&s(1.5, 1.0), &s(0.0, 1.0));
    assert_eq!((back.normal, back.depth), (-Vec3::X, 0.5));
    let c = sphere_contact(&s(0.0, 1.0), &s(2.0, 1.0));
    assert_eq!((c.depth, c.count), (0.0, 1));
    same_points(&c, &[Vec3::X], 0.0);
    let c = sphere_contact(&s(0.0, 1.0), &s(3.0, 1.0));
    assert_eq!((c.depth, c.count), (-1.0, 0));
    let c = sphere_contact(&s(0.0, 1.0), &s(0.0, 0.5));
    assert_eq!((c.normal, c.depth, c.count), (Vec3::X, 1.5, 1));
}

#[test]
fn a_box_resting_on_a_box_gives_its_four_corners() {
    let a = cube(Vec3::ZERO, 1.0, Quat::IDENTITY);
    let b = cube(Vec3::new(0.2, 0.1, 1.4), 0.5, Quat::IDENTITY);
    let c = obb_contact_along(&a, &b, Vec3::Z, 0.1, 1e-6);
    let corners = rectangle([-1.0, 1.0], [-1.0, 1.0], |x, y| {
        Vec3::new(0.2 + 0.5 * x, 0.1 + 0.5 * y, 0.95)
    });
    same_points(&c, &corners, 1e-6);
    assert!(c.depths().iter().all(|d| (d - 0.1).abs() < 1e-6), "{c:?}");
    // The pair the other way round: the same points, the normal turned.
    let back = obb_contact_along(&b, &a, -Vec3::Z, 0.1, 1e-6);
    same_points(&back, &corners, 1e-6);
}

#[test]
fn a_larger_box_on_a_smaller_is_clipped_to_the_smaller_face() {
    let a = cube(Vec3::ZERO, 0.5, Quat::IDENTITY);
    let b = cube(Vec3::new(0.0, 0.0, 1.4), 1.0, Quat::IDENTITY);
    let c = obb_contact_along(&a, &b, Vec3::Z, 0.1, 1e-6);
    let corners = rectangle([-0.5, 0.5], [-0.5, 0.5], |x, y| Vec3::new(x, y, 0.45));
    same_points(&c, &corners, 1e-6);
}

#[test]
fn a_turned_box_clipped_to_an_octagon_keeps_four_spread_points() {
    // A diamond (a cube of half 0.6 turned 45 degrees about z, corners 0.85 out) on a square of
    // half 0.5: their overlap is an octagon; four of its eight corners are kept.
    let a = cube(Vec3::ZERO, 0.5, Quat::IDENTITY);
    let b = cube(
        Vec3::new(0.0, 0.0, 1.05),
        0.6,
        Quat::from_rotation_z(FRAC_PI_4),
    );
    let c = obb_contact_along(&a, &b, Vec3::Z, 0.05, 1e-5);
    assert_eq!(c.count, 4, "{c:?}");
    let diamond = 0.6 * 2f32.sqrt();
    for p in c.points() {
        assert!((p.z - 0.475).abs() < 1e-5, "{c:?}");
        assert!(p.x.abs() <= 0.5 + 1e-5 && p.y.abs() <= 0.5 + 1e-5, "{c:?}");
        assert!(p.x.abs() + p.y.abs() <= diamond + 1e-5, "{c:?}");
    }
    // Spread: the four span more than half the octagon's area (a quadrilateral of its corners).
    let p = c.points();
    let area =
        0.5 * ((p[1] - p[0]).cross(p[2] - p[0]).z.abs() + (p[2] - p[0]).cross(p[3] - p[0]).z.abs());
    assert!(area > 0.5, "{area}: {c:?}");
}

#[test]
fn crossing_edges_touch_at_one_point() {
    // A's top is an edge along x at z = sqrt 2, B's bottom an edge along y, 0.1 below it.
    let r2 = 2f32.sqrt();
    let a = cube(Vec3::ZERO, 1.0, Quat::from_rotation_x(FRAC_PI_4));
    let b = cube(
        Vec3::new(0.0, 0.0, 2.0 * r2 - 0.1),
        1.0,
        Quat::from_rotation_y(FRAC_PI_4),
    );
    let c = obb_contact_along(&a, &b, Vec3::Z, 0.1, 1e-5);
    same_points(&c, &[Vec3::new(0.0, 0.0, r2 - 0.05)], 1e-5);
}

#[test]
fn a_corner_into_a_face_touches_at_the_corner() {
    // B's corner (1,1,1) * 0.5 turned to point straight down.
    let down = Quat::from_rotation_arc(Vec3::ONE.normalize(), -Vec3::Z);
    let a = cube(Vec3::ZERO, 1.0, Quat::IDENTITY);
    let reach = 0.5 * 3f32.sqrt();
    let b = cube(Vec3::new(0.3, -0.2, 1.0 + reach - 0.05), 0.5, down);
    let c = obb_contact_along(&a, &b, Vec3::Z, 0.05, 1e-5);
    same_points(&c, &[Vec3::new(0.3, -0.2, 0.975)], 1e-5);
}

#[test]
fn touching_faces_give_depth_zero_and_points_and_apart_gives_none() {
    let a = cube(Vec3::ZERO, 1.0, Quat::IDENTITY);
    let b = cube(Vec3::new(2.0, 0.5, 0.0), 1.0, Quat::IDENTITY);
    let c = obb_contact(&a, &b);
    assert_eq!((c.normal, c.depth), (Vec3::X, 0.0), "{c:?}");
    let corners = rectangle([-0.5, 1.0], [-1.0, 1.0], |y, z| Vec3::new(1.0, y, z));
    same_points(&c, &corners, 1e-6);
    let apart = obb_contact(&a, &cube(Vec3::new(2.5, 0.0, 0.0), 1.0, Quat::IDENTITY));
    assert_eq!((apart.count, apart.depth), (0, -0.5));
}

#[test]
fn flat_and_point_boxes_touch_too() {
    let flat = Obb::new(Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0), Quat::IDENTITY).frame();
    let b = cube(Vec3::new(0.0, 0.0, 0.4), 0.5, Quat::IDENTITY);
    let c = obb_contact_along(&flat, &b, Vec3::Z, 0.1, 1e-6);
    assert_eq!(c.count, 4, "{c:?}");
    let point = Obb::new(Vec3::new(0.1, 0.2, 0.3), Vec3::ZERO, Quat::IDENTITY).frame();
    let c = obb_contact(&cube(Vec3::ZERO, 1.0, Quat::IDENTITY), &point);
    assert_eq!(c.count, 1, "{c:?}");
    assert_along(&c, Vec3::Z, 0.7, 1e-6);
}

#[test]
fn polygons_edge_on_edge_and_corner_in() {
    let square = |x: f32, y: f32| {
        [
            Vec2::new(x, y),
            Vec2::new(x + 1.0, y),
            Vec2::new(x + 1.0, y + 1.0),
            Vec2::new(x, y + 1.0),
        ]
    };
    // Either way round: the same two points, the normal turned.
    let (a, b) = (square(0.0, 0.0), square(0.8, 0.2));
    for (c, normal) in [
        (vertices_contact(&a, &b), Vec3::X),
        (vertices_contact(&b, &a), -Vec3::X),
    ] {
        assert_along(&c, normal, 0.2, 1e-6);
        same_points(
            &c,
            &[Vec3::new(0.9, 0.2, 0.0), Vec3::new(0.9, 1.0, 0.0)],
            1e-6,
        );
    }
    // A triangle's corner 0.1 into the square's top.
    let tri = [
        Vec2::new(0.5, 0.9),
        Vec2::new(1.5, 2.0),
        Vec2::new(-0.5, 2.0),
    ];
    let c = vertices_contact(&square(0.0, 0.0), &tri);
    assert_along(&c, Vec3::Y, 0.1, 1e-6);
    same_points(&c, &[Vec3::new(0.5, 0.95, 0.0)], 1e-6);
    // Touching edges: depth 0, two points; apart: none.
    let c = vertices_contact(&square(0.0, 0.0), &square(1.0, 0.5));
    assert_eq!((c.depth, c.count), (0.0, 2), "{c:?}");
    let c = vertices_contact(&square(0.0, 0.0), &square(1.5, 0.0));
    assert_eq!((c.depth, c.count), (-0.5, 0), "{c:?}");
}

/// The reference axis is the least overlap wherever the pair sits: the tie-break between the
/// two polygons' axes allows the rounding of the pair's size, not of its distance from the
/// origin (at 65,536 that allowance was 2 units and took an axis 49% deeper).
#[test]
fn a_polygon_contact_does_not_move_with_the_pair() {
    let at = |dx: f32, pts: &[(f32, f32)]| -> Vec<Vec2> {
        pts.iter()
            .map(|&(x, y)| Vec2::new(x + dx, y + dx))
            .collect()
    };
    let square = [(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)];
    let triangle = [(-1.0, 4.25), (5.0, -1.75), (5.0, 10.0)];
    let here = vertices_contact(&at(0.0, &square), &at(0.0, &triangle));
    // 0.75 / sqrt(2) deep along the triangle's long edge, the least of both polygons' axes.
    let least = 4.75 / std::f32::consts::SQRT_2;
    assert!((here.depth - least).abs() < 1e-5, "{here:?}");
    for dx in [65_536.0, 1_048_576.0] {
        let there = vertices_contact(&at(dx, &square), &at(dx, &triangle));
        assert!((there.depth - here.depth).abs() < 1e-2, "{dx}: {there:?}");
        assert!(close(there.normal, here.normal, 1e-5), "{dx}: {there:?}");
    }
}

/// Midpoints on the edges (accepted, dropped by `Polygon`) leave the contact points inside the
/// overlap: two squares of 1,024 and 1,000 overlapping in [1000, 1024] x [800, 1024].
#[test]
fn squares_with_midpoints_touch_inside_their_overlap() {
    use crate::geom::polygon::Polygon;
    let square = |x0: f32, y0: f32, s: f32| {
        let h = s / 2.0;
        let pts = [
            (x0, y0),
            (x0 + h, y0),
            (x0 + s, y0),
            (x0 + s, y0 + h),
            (x0 + s, y0 + s),
            (x0 + h, y0 + s),
            (x0, y0 + s),
            (x0, y0 + h),
        ];
        let v: Vec<Vec2> = pts.iter().map(|&(x, y)| Vec2::new(x, y)).collect();
        Polygon::new(&v).unwrap()
    };
    let (a, b) = (square(0.0, 0.0, 1024.0), square(1000.0, 800.0, 1000.0));
    let c = polygon_contact(&a, &b);
    assert!(c.count > 0 && (c.depth - 24.0).abs() < 1e-3, "{c:?}");
    for p in c.points() {
        let inside = (1000.0..=1024.0).contains(&p.x) && (800.0..=1024.0).contains(&p.y);
        assert!(inside, "{p} outside the overlap: {c:?}");
    }
}
