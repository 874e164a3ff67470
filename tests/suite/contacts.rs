//! Contacts (docs/design.md §4.8) against an independent oracle, parry's contact functions
//! (parry3d, parry2d: test-only dependencies): on random, touching, deep, edge-on, nearly
//! parallel, tiny and huge pairs, the depth agrees within a relative tolerance, the normal where
//! one axis clearly has the least overlap, and every point lies on both surfaces within the
//! point's half depth (manifold reductions differ, so points are not compared one by one).

use glam::{DVec3, Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::Shapes;
use sweepfan::cpu::contacts::{obb_contacts, polygon_contacts, sphere_contacts};
use sweepfan::geom::contact::{Contact, obb_contact};
use sweepfan::{Obb, Pair, Polygon, Sphere};

/// Relative tolerance of depths and points against parry and the surfaces (times the pair's
/// extent): both compute in f32 from the same axes; 2^-14 leaves room for the rotations' own
/// rounding and parry's different order of operations.
const REL: f32 = 1.0 / 16384.0;

fn parry_box(b: &Obb) -> (parry3d::math::Pose, parry3d::shape::Cuboid) {
    use parry3d::math::{Pose, Rot3, Vec3 as PVec3};
    let q = b.rotation.normalize();
    let pose = Pose::from_parts(
        PVec3::new(b.center.x, b.center.y, b.center.z),
        Rot3::from_xyzw(q.x, q.y, q.z, q.w),
    );
    let h = b.half_extents;
    (pose, parry3d::shape::Cuboid::new(PVec3::new(h.x, h.y, h.z)))
}

/// parry's depth (>= 0 for touching) and normal from a to b.
fn parry_obb(a: &Obb, b: &Obb) -> (f32, Vec3) {
    let (pa, ca) = parry_box(a);
    let (pb, cb) = parry_box(b);
    let c = parry3d::query::contact(&pa, &ca, &pb, &cb, 0.0)
        .expect("cuboids are supported")
        .expect("the pair touches");
    (-c.dist, Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z))
}

/// Signed distance of `p` to the box's surface (negative inside), in f64.
pub(crate) fn signed_distance(b: &Obb, p: Vec3) -> f64 {
    let axes = b.axes().map(|a| a.as_dvec3());
    let d = p.as_dvec3() - b.center.as_dvec3();
    let q = DVec3::new(d.dot(axes[0]), d.dot(axes[1]), d.dot(axes[2])).abs()
        - b.half_extents.as_dvec3();
    let outside = q.max(DVec3::ZERO).length();
    if outside > 0.0 {
        outside
    } else {
        q.max_element()
    }
}

/// The least overlap over the 15 separating axes, in f64 from the normalised quaternions (edge
/// axes down to 1e-9 long): the penetration depth of two boxes, the depth's oracle. parry's
/// cuboid contact is one only where it is shallow: it projects the deepest corner onto the
/// nearest face of the other box, which in a deep pair need not be the face of the axis.
/// Also whether a face axis holds it.
fn least_overlap_f64(a: &Obb, b: &Obb) -> (f64, bool) {
    let axes_of = |o: &Obb| {
        let q = o.rotation;
        let m = glam::DMat3::from_quat(
            glam::DQuat::from_xyzw(q.x as f64, q.y as f64, q.z as f64, q.w as f64).normalize(),
        );
        [m.x_axis, m.y_axis, m.z_axis]
    };
    let (aa, ba) = (axes_of(a), axes_of(b));
    let (ha, hb) = (a.half_extents.as_dvec3(), b.half_extents.as_dvec3());
    let d = b.center.as_dvec3() - a.center.as_dvec3();
    let radius = |axes: &[DVec3; 3], h: DVec3, l: DVec3| {
        (0..3).map(|k| h[k] * axes[k].dot(l).abs()).sum::<f64>()
    };
    let mut ls: Vec<DVec3> = aa.iter().chain(&ba).copied().collect();
    for ai in aa {
        for bj in ba {
            let l = ai.cross(bj);
            if l.length() > 1e-9 {
                ls.push(l.normalize());
            }
        }
    }
    let overlaps: Vec<f64> = ls
        .iter()
        .map(|&l| radius(&aa, ha, l) + radius(&ba, hb, l) - d.dot(l).abs())
        .collect();
    let least = overlaps.iter().copied().fold(f64::INFINITY, f64::min);
    let face = overlaps[..6].iter().copied().fold(f64::INFINITY, f64::min);
    (least, face <= least + 1e-9 * (1.0 + least.abs()))
}

/// The pair's extent: the scale of its rounding.
pub(crate) fn extent(a: &Obb, b: &Obb) -> f32 {
    (b.center - a.center).abs().element_sum()
        + a.half_extents.element_sum()
        + b.half_extents.element_sum()
}

/// The overlaps along the 15 axes, sorted: whether the least is clearly the least.
pub(crate) fn least_axis_is_clear(a: &Obb, b: &Obb, margin: f32) -> bool {
    let (fa, fb) = (a.frame(), b.frame());
    let d = b.center - a.center;
    let mut axes: Vec<Vec3> = fa.axis_array().into_iter().chain(fb.axis_array()).collect();
    for i in 0..3 {
        for j in 0..3 {
            let l = fa.axis(i).cross(fb.axis(j));
            if l.length() > 1e-3 {
                axes.push(l.normalize());
            }
        }
    }
    // One overlap per direction (a face of each box can share one).
    let mut directions: Vec<Vec3> = Vec::new();
    for l in axes {
        if directions.iter().all(|m| m.dot(l).abs() < 1.0 - 1e-6) {
            directions.push(l);
        }
    }
    let mut o: Vec<f32> = directions
        .iter()
        .map(|&l| fa.projected_radius(l) + fb.projected_radius(l) - d.dot(l).abs())
        .collect();
    o.sort_by(f32::total_cmp);
    o.len() < 2 || o[1] - o[0] > margin
}

/// Checks one touching pair's contact against parry and the surfaces; returns whether the
/// normal was compared.
fn check_obb_pair(a: &Obb, b: &Obb, what: &str) -> bool {
    check_obb_pair_with(a, b, what, true)
}

/// [`check_obb_pair`], against parry only `with_parry`: its cuboid contact uses absolute
/// epsilons (about 1e-7), so at a scale of 1e-6 it reports depths and normals of other axes
/// (one pair: 1.7e-6 where the least overlap is 5.1e-7); there the f64 oracle alone decides.
fn check_obb_pair_with(a: &Obb, b: &Obb, what: &str, with_parry: bool) -> bool {
    assert!(a.overlaps(b), "{what}: the pair must touch");
    let c = obb_contact(&a.frame(), &b.frame());
    let scale = extent(a, b);
    let tol = REL * scale;
    let (depth, normal) = parry_obb(a, b);
    assert!(c.count >= 1, "{what}: no points: {c:?}");
    assert!(c.depth >= 0.0, "{what}: {c:?}");
    let (least, on_a_face) = least_overlap_f64(a, b);
    let least = least as f32;
    assert!(
        (c.depth - least).abs() <= tol,
        "{what}: depth {} against the least overlap {least} (tolerance {tol}): {c:?}",
        c.depth
    );
    // parry: never deeper; the same on a face axis where its corner lands on that face
    // (shallow). On an edge axis it reports the edges' distance as segments, which is less
    // than the overlap where the closest points are an edge's end.
    let thinnest = a
        .half_extents
        .min_element()
        .min(b.half_extents.min_element());
    let shallow = on_a_face && c.depth < 0.25 * thinnest;
    assert!(
        !with_parry || (depth <= c.depth + tol && (!shallow || (c.depth - depth).abs() <= tol)),
        "{what}: depth {} against parry's {depth} along {normal} (tolerance {tol}, shallow: {shallow}): {c:?}",
        c.depth
    );
    assert!((c.normal.length() - 1.0).abs() < 1e-5, "{what}: {c:?}");
    // The normal points from a towards b: b's centre lies on its positive side of a's.
    let compared = with_parry && shallow && least_axis_is_clear(a, b, 64.0 * tol);
    if compared {
        assert!(
            c.normal.dot(normal) > 1.0 - 1e-4,
            "{what}: normal {} against parry's {normal}: {c:?}",
            c.normal
        );
    }
    for (p, d) in c.points().iter().zip(c.depths()) {
        assert!(
            *d >= 0.0 && *d <= c.depth + tol,
            "{what}: point depth {d}: {c:?}"
        );
        for (name, shape) in [("a", a), ("b", b)] {
            let s = signed_distance(shape, *p);
            assert!(
                s.abs() <= (*d as f64) / 2.0 + tol as f64,
                "{what}: point {p} is {s} from {name}'s surface, half its depth {d} plus {tol}: {c:?}"
            );
        }
    }
    compared
}

pub(crate) fn random_rotation(rng: &mut ChaCha8Rng) -> Quat {
    Quat::from_xyzw(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize()
}

/// Random boxes at `scale`, kept where they touch: with `shallow`, `b` is moved along a random
/// direction to where the pair just touches (bisection on the exact test), then back in by up
/// to a twentieth of the thinnest half-extent; else placed anywhere within reach.
pub(crate) fn random_touching_pairs(
    seed: u64,
    count: usize,
    scale: f32,
    shallow: bool,
) -> Vec<(Obb, Obb)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut h = || {
            Vec3::new(
                rng.random_range(0.1..2.0),
                rng.random_range(0.1..2.0),
                rng.random_range(0.1..2.0),
            )
        };
        let (ha, hb) = (h() * scale, h() * scale);
        let a = Obb::new(Vec3::splat(3.0 * scale), ha, random_rotation(&mut rng));
        let reach = ha.length() + hb.length();
        let u = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let mut b = Obb::new(a.center + u * reach, hb, random_rotation(&mut rng));
        if shallow {
            let Some(u) = u.try_normalize() else { continue };
            let at = |t: f32| Obb::new(a.center + u * t, hb, b.rotation);
            let (mut lo, mut hi) = (0.0, reach);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if at(mid).overlaps(&a) {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            let thinnest = ha.min_element().min(hb.min_element());
            b = at(lo - rng.random_range(0.0..0.05) * thinnest);
        }
        if a.overlaps(&b) {
            out.push((a, b));
        }
    }
    out
}

#[test]
fn random_box_pairs_agree_with_parry_at_every_scale() {
    for (seed, scale) in [(1, 1.0f32), (2, 1e-6), (3, 1e6), (4, 0.37)] {
        for shallow in [false, true] {
            let mut compared = 0;
            let pairs = random_touching_pairs(seed, 1500, scale, shallow);
            for (k, (a, b)) in pairs.iter().enumerate() {
                let what = format!("scale {scale}, shallow {shallow}, pair {k}");
                compared += check_obb_pair_with(a, b, &what, scale >= 1e-2) as usize;
            }
            // About a third of the shallow pairs touch on a face with one clear axis (the rest
            // on edges, where parry's depth is only a bound): normals compared there.
            if shallow && scale >= 1e-2 {
                assert!(
                    compared > pairs.len() / 4,
                    "scale {scale}: {compared} normals compared"
                );
            }
        }
    }
}

#[test]
fn face_edge_vertex_deep_and_touching_pairs_agree_with_parry() {
    let cube = |c: Vec3, h: f32, q: Quat| Obb::new(c, Vec3::splat(h), q);
    let r2 = 2f32.sqrt();
    let mut cases = vec![
        (
            "face on face",
            cube(Vec3::ZERO, 1.0, Quat::IDENTITY),
            cube(Vec3::new(0.3, -0.2, 1.9), 1.0, Quat::IDENTITY),
        ),
        (
            "edge across edge",
            cube(Vec3::ZERO, 1.0, Quat::from_rotation_x(0.785)),
            cube(
                Vec3::new(0.1, 0.2, 2.0 * r2 - 0.05),
                1.0,
                Quat::from_rotation_y(0.785),
            ),
        ),
        (
            "corner into face",
            cube(Vec3::ZERO, 2.0, Quat::IDENTITY),
            cube(
                Vec3::new(0.4, 0.1, 2.0 + 0.5 * 3f32.sqrt() - 0.03),
                0.5,
                Quat::from_rotation_arc(Vec3::ONE.normalize(), -Vec3::Z),
            ),
        ),
        (
            "deep: centre inside",
            cube(Vec3::ZERO, 1.0, Quat::IDENTITY),
            cube(Vec3::new(0.2, 0.1, 0.3), 0.7, Quat::from_rotation_z(0.3)),
        ),
        (
            "same box",
            cube(Vec3::ONE, 1.0, Quat::from_rotation_x(0.2)),
            cube(Vec3::ONE, 1.0, Quat::from_rotation_x(0.2)),
        ),
        (
            "touching faces",
            cube(Vec3::ZERO, 1.0, Quat::IDENTITY),
            cube(Vec3::new(2.0, 0.5, 0.25), 1.0, Quat::IDENTITY),
        ),
        (
            "touching at a corner",
            cube(Vec3::ZERO, 1.0, Quat::IDENTITY),
            cube(Vec3::new(2.0, 2.0, 2.0), 1.0, Quat::IDENTITY),
        ),
        (
            "flat on a box",
            Obb::new(Vec3::ZERO, Vec3::new(3.0, 3.0, 0.0), Quat::IDENTITY),
            cube(Vec3::new(0.0, 0.0, 0.9), 1.0, Quat::from_rotation_z(0.5)),
        ),
        (
            "long thin",
            Obb::new(
                Vec3::ZERO,
                Vec3::new(100.0, 0.01, 0.01),
                Quat::from_rotation_z(0.001),
            ),
            cube(Vec3::new(50.0, 0.0, 0.5), 0.5, Quat::IDENTITY),
        ),
    ];
    // Edges within a thousandth to a tenth of a radian of parallel, crossing.
    for angle in [1e-3f32, 3e-3, 1e-2, 3e-2, 0.1] {
        cases.push((
            "nearly parallel edges",
            cube(Vec3::ZERO, 1.0, Quat::from_rotation_x(0.785)),
            cube(
                Vec3::new(0.05, 0.0, 2.0 * r2 - 0.02),
                1.0,
                Quat::from_rotation_z(angle) * Quat::from_rotation_x(0.785),
            ),
        ));
    }
    for (what, a, b) in &cases {
        check_obb_pair(a, b, what);
        check_obb_pair(b, a, &format!("{what}, swapped"));
    }
}

/// Every pair `[i, j]`, `i < j < n`, for which `keep(i, j)`: the all-pairs oracle's list.
fn all_pairs_where(n: usize, keep: impl Fn(usize, usize) -> bool) -> Vec<[u32; 2]> {
    (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| keep(i, j))
        .map(|(i, j)| [i as u32, j as u32])
        .collect()
}

#[test]
fn spheres_and_polygons_agree_with_parry() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let spheres: Vec<Sphere> = (0..400)
        .map(|_| {
            Sphere::new(
                Vec3::new(
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-3.0..3.0),
                ),
                rng.random_range(0.2..1.5),
            )
        })
        .collect();
    let pairs = all_pairs_where(spheres.len(), |i, j| spheres[i].touches(&spheres[j]));
    assert!(pairs.len() > 100);
    let mut contacts = Vec::new();
    sphere_contacts(&spheres, &pairs, &mut contacts).unwrap();
    assert_eq!(contacts.len(), pairs.len());
    for (p, c) in pairs.iter().zip(&contacts) {
        let (a, b) = (spheres[p[0] as usize], spheres[p[1] as usize]);
        let pose = |s: Sphere| {
            parry3d::math::Pose::from_translation(parry3d::math::Vec3::new(
                s.center.x, s.center.y, s.center.z,
            ))
        };
        let r = parry3d::query::contact(
            &pose(a),
            &parry3d::shape::Ball::new(a.radius),
            &pose(b),
            &parry3d::shape::Ball::new(b.radius),
            0.0,
        )
        .unwrap()
        .unwrap();
        assert!((c.depth + r.dist).abs() < 1e-5, "{p:?}: {c:?} {r:?}");
        assert!(
            c.normal
                .dot(Vec3::new(r.normal1.x, r.normal1.y, r.normal1.z))
                > 1.0 - 1e-5,
            "{p:?}"
        );
        let mid = (Vec3::new(r.point1.x, r.point1.y, r.point1.z)
            + Vec3::new(r.point2.x, r.point2.y, r.point2.z))
            * 0.5;
        assert!(c.points()[0].distance(mid) < 1e-5, "{p:?}: {c:?} {r:?}");
    }

    // Random convex polygons (points on a circle) that touch.
    let polygon = |rng: &mut ChaCha8Rng| {
        let centre = Vec2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0));
        let radius = rng.random_range(0.3..1.5);
        let mut angles: Vec<f32> = (0..rng.random_range(3..9))
            .map(|_| rng.random_range(0.0..std::f32::consts::TAU))
            .collect();
        angles.sort_by(f32::total_cmp);
        let v: Vec<Vec2> = angles
            .iter()
            .map(|t| centre + Vec2::new(t.cos(), t.sin()) * radius)
            .collect();
        Polygon::new(&v).ok()
    };
    let polygons: Vec<Polygon> = std::iter::repeat_with(|| polygon(&mut rng))
        .flatten()
        .take(300)
        .collect();
    let pairs = all_pairs_where(polygons.len(), |i, j| polygons[i].overlaps(&polygons[j]));
    assert!(pairs.len() > 100);
    polygon_contacts(&polygons, &pairs, &mut contacts).unwrap();
    let parry_polygon = |p: &Polygon| {
        parry2d::shape::ConvexPolygon::from_convex_polyline(
            p.vertices()
                .iter()
                .map(|v| parry2d::math::Vec2::new(v.x, v.y))
                .collect(),
        )
        .expect("convex")
    };
    let mut compared = 0;
    for (p, c) in pairs.iter().zip(&contacts) {
        let (a, b) = (&polygons[p[0] as usize], &polygons[p[1] as usize]);
        let id = parry2d::math::Pose::identity();
        let r = parry2d::query::contact(&id, &parry_polygon(a), &id, &parry_polygon(b), 0.0)
            .unwrap()
            .unwrap();
        let scale: f32 = [a, b]
            .iter()
            .flat_map(|q| q.vertices())
            .map(|v| v.abs().element_sum())
            .fold(0.0, f32::max)
            * 4.0;
        assert!(
            (c.depth + r.dist).abs() <= REL * scale,
            "{p:?}: {c:?} {r:?}"
        );
        assert!(c.count >= 1 && c.count <= 2, "{p:?}: {c:?}");
        // Parry's polygon normal where the depth is not shared by two edges.
        if c.normal.truncate().dot(Vec2::new(r.normal1.x, r.normal1.y)) > 1.0 - 1e-4 {
            compared += 1;
        }
    }
    assert!(
        compared * 10 > pairs.len() * 9,
        "{compared} of {} normals agree",
        pairs.len()
    );
}

#[test]
fn batched_contacts_follow_the_pairs_and_refuse_bad_input() {
    let boxes = [
        Obb::axis_aligned(Vec3::ZERO, Vec3::ONE),
        Obb::axis_aligned(Vec3::new(1.5, 0.0, 0.0), Vec3::ONE),
        Obb::axis_aligned(Vec3::new(0.0, 1.8, 0.0), Vec3::ONE),
    ];
    let mut out = vec![Contact::default(); 7];
    obb_contacts(&boxes, &[[0, 1], [0, 2]], &mut out).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].normal, out[1].normal), (Vec3::X, Vec3::Y));
    assert!((out[0].depth - 0.5).abs() < 1e-6 && (out[1].depth - 0.2).abs() < 1e-6);
    let e = obb_contacts(&boxes, &[[0, 3]], &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("[0, 3]"), "{e}");
    let mut bad = boxes;
    bad[1].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    let e = obb_contacts(&bad, &[[0, 1]], &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("object 1") || e.contains("box 1"), "{e}");
    bad[1].half_extents.y = f32::NAN;
    assert!(obb_contacts(&bad, &[[0, 1]], &mut out).is_err());
    let e = sphere_contacts(&[Sphere::new(Vec3::ZERO, f32::NAN)], &[], &mut out).unwrap_err();
    assert!(e.to_string().contains('0'), "{e}");
    obb_contacts(&[], &[], &mut out).unwrap();
    assert!(out.is_empty());
}

/// A touching pair's contact has points and a depth >= 0; one apart, no points and a negative
/// depth (`-0.0` at least).
fn settled_as(c: &Contact, touching: bool, x: f32) {
    if touching {
        assert!(c.count > 0 && c.depth >= 0.0, "x = {x}: {c:?}");
    } else {
        assert!(c.count == 0 && c.depth.is_sign_negative(), "x = {x}: {c:?}");
    }
}

/// A pair apart by less than the f32 test's tolerance gets no points and a negative depth (the
/// exact test decides, as `obb_pairs` and `polygon_pairs` do); touching exactly and overlapping
/// by one unit in the last place keep their points. Unit cubes 3e-5 apart once got depth 0 and
/// four points, contradicting the pair lists.
#[test]
fn pairs_apart_within_the_tolerance_get_no_points() {
    let up = |x: f32| f32::from_bits(x.to_bits() + 1);
    let down = |x: f32| f32::from_bits(x.to_bits() - 1);
    let unit = |x: f32, turn: Quat| Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::ONE, turn);
    let quarter = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    for (x, turn, touching) in [
        (2.0 + 3e-5, Quat::IDENTITY, false),
        (up(2.0), Quat::IDENTITY, false),
        (2.0, Quat::IDENTITY, true),
        (down(2.0), Quat::IDENTITY, true),
        (2.0 + 3e-5, quarter, false),
        (1.99999, quarter, true),
    ] {
        let boxes = [unit(0.0, Quat::IDENTITY), unit(x, turn)];
        assert_eq!(boxes[0].overlaps(&boxes[1]), touching, "x = {x}");
        let mut out = Vec::new();
        obb_contacts(&boxes, &[[0, 1]], &mut out).unwrap();
        settled_as(&out[0], touching, x);
    }
    // Polygons: unit squares 1e-5 and one unit in the last place apart, and touching.
    let square = |x: f32| {
        let v = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map(|(a, b)| Vec2::new(a + x, b));
        Polygon::new(&v).unwrap()
    };
    for (x, touching) in [(1.0 + 1e-5, false), (up(1.0), false), (1.0, true)] {
        let polygons = [square(0.0), square(x)];
        assert_eq!(polygons[0].overlaps(&polygons[1]), touching, "x = {x}");
        let mut out = Vec::new();
        polygon_contacts(&polygons, &[[0, 1]], &mut out).unwrap();
        settled_as(&out[0], touching, x);
    }
}

/// The sphere pairs of [`exact_contact_scene`] (each at contact in real arithmetic, every third
/// moved by one lowest bit: apart or overlapping by a hair), at three scales.
pub fn hairline_sphere_pairs() -> Vec<(f32, Vec<Sphere>, Vec<sweepfan::Pair>)> {
    [1.0, 2f32.powi(-60), 2f32.powi(30)]
        .into_iter()
        .map(|scale| {
            let s = crate::common::exact_contact_scene(300, 64, scale);
            let pairs = (0..s.len() as u32 / 2)
                .map(|k| [2 * k, 2 * k + 1])
                .collect();
            (scale, s, pairs)
        })
        .chain([1.0, 2f32.powi(-40), 2f32.powi(40)].map(|scale| {
            // A sideways offset whose square vanishes beside the distance's in f64: at
            // `(2, t, 0)` the spheres of radius 1 lie apart by `t^2 / 4`, and `(2 - 2^-22, t,
            // 0)` overlap by a hair.
            let mut s = Vec::new();
            for t in [1e-10f32, 3e-9, 1e-6] {
                for x in [2.0, 2.0 - f32::EPSILON / 2.0] {
                    s.push(Sphere::new(Vec3::ZERO, scale));
                    s.push(Sphere::new(Vec3::new(x, t, 0.0) * scale, scale));
                    s.push(Sphere::new(Vec3::new(0.0, 0.0, t) * scale, scale));
                    s.push(Sphere::new(Vec3::new(-x, t, t) * scale, scale));
                }
            }
            let pairs = (0..s.len() as u32 / 2)
                .map(|k| [2 * k, 2 * k + 1])
                .collect();
            (scale, s, pairs)
        }))
        .collect()
}

/// Each of `contacts` (of `pairs` of `s`) has points exactly when its pair touches in real
/// arithmetic, a depth of the verdict's sign, within a hair (2^-20) of the extent of 0; returns
/// how many pairs lie apart.
pub fn assert_touch_exactly(
    what: &str,
    s: &[Sphere],
    pairs: &[Pair],
    contacts: &[Contact],
) -> usize {
    assert_eq!(contacts.len(), pairs.len(), "{what}");
    let mut apart = 0;
    for (p, c) in pairs.iter().zip(contacts) {
        let (a, b) = (&s[p[0] as usize], &s[p[1] as usize]);
        let touching = crate::common::touch_oracle(a, b);
        apart += usize::from(!touching);
        let at = format!("{what}, {a:?} {b:?}: {c:?}");
        assert_eq!(c.count > 0, touching, "{at}");
        let signed = if touching {
            c.depth >= 0.0
        } else {
            c.depth <= 0.0
        };
        assert!(signed, "{at}");
        // One lowest bit of a coordinate: a hair of the pair's extent.
        let extent =
            a.center.abs().element_sum() + b.center.abs().element_sum() + a.radius + b.radius;
        assert!(c.depth.abs() <= extent / 1_048_576.0, "{at}");
    }
    apart
}

/// A contact has points exactly when its pair touches in real arithmetic, on pairs one lowest
/// bit from contact either way (the f64 depth alone rounds some of them across).
#[test]
fn sphere_contacts_touch_exactly_when_the_spheres_do() {
    let mut apart = 0;
    for (scale, s, pairs) in hairline_sphere_pairs() {
        let mut out = Vec::new();
        sphere_contacts(&s, &pairs, &mut out).unwrap();
        apart += assert_touch_exactly(&format!("scale {scale}"), &s, &pairs, &out);
    }
    assert!(apart > 20, "the scenes hold pairs just apart ({apart})");
}

/// Contacts past the caller's memory budget are refused before they are stored (a list the
/// allocator could not hold aborted the process), on the CPU and the GPU.
#[test]
fn contacts_past_the_memory_budget_are_refused() {
    use sweepfan::{Limits, MemoryBudget};
    let two = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
    let pairs = vec![[0u32, 1]; 100_000];
    let limits = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
    let mut out = Vec::new();
    let e = limits
        .run(|| sphere_contacts(&two, &pairs, &mut out))
        .unwrap_err();
    assert!(matches!(e, sweepfan::Error::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("contacts of 100000 pairs"), "{e}");
    // Within it, every contact.
    limits
        .run(|| sphere_contacts(&two, &pairs[..1000], &mut out))
        .unwrap();
    assert_eq!(out.len(), 1000);
    let Some(ctx) = crate::common::test_gpu() else {
        return;
    };
    let mut kernel = sweepfan::gpu::GpuContacts::new(&ctx).unwrap();
    let e = limits
        .run(|| kernel.contacts(&ctx, Shapes::Spheres(&two), &pairs, &mut out))
        .unwrap_err();
    assert!(e.to_string().contains("contacts of 100000 pairs"), "{e}");
}
