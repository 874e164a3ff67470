//! Bad input gets a clear error from every CPU method, never a panic; extreme but valid input
//! (coordinates near the accepted limit, too many pairs to store) has a defined outcome.

use glam::Vec3;
use sweepfan::cpu::{broad_phase, broad_phase_with_pair_limit};
use sweepfan::{BroadPhase, Error, Method, Pair, Sphere, canonicalize};

fn scene_with(bad: Sphere, at: usize) -> Vec<Sphere> {
    let mut s: Vec<Sphere> = (0..10)
        .map(|i| Sphere::new(Vec3::new(i as f32, 0.0, 0.0), 0.75))
        .collect();
    s[at] = bad;
    s
}

#[test]
fn invalid_objects_are_named() {
    let cases = [
        (Sphere::new(Vec3::new(f32::NAN, 0.0, 0.0), 1.0), "x is NaN"),
        (Sphere::new(Vec3::new(0.0, 0.0, f32::NAN), 1.0), "z is NaN"),
        (
            Sphere::new(Vec3::new(0.0, f32::INFINITY, 0.0), 1.0),
            "y is infinite",
        ),
        (
            Sphere::new(Vec3::new(f32::NEG_INFINITY, 0.0, 0.0), 1.0),
            "x is infinite",
        ),
        (Sphere::new(Vec3::ZERO, f32::NAN), "radius is NaN"),
        (Sphere::new(Vec3::ZERO, f32::INFINITY), "radius is infinite"),
        (Sphere::new(Vec3::ZERO, -0.5), "negative"),
        (Sphere::new(Vec3::new(0.0, 3e18, 0.0), 1.0), "overflow"),
        (Sphere::new(Vec3::ZERO, 2e18), "overflow"),
        (Sphere::new(Vec3::ZERO, 1e-35), "below 1e-30"),
        (
            Sphere::new(Vec3::new(0.0, -2e-31, 0.0), 1.0),
            "|y| = 2e-31 is below 1e-30",
        ),
    ];
    for method in Method::ALL {
        let mut bp = broad_phase(method);
        for (k, (bad, problem)) in cases.iter().enumerate() {
            let at = k % 10;
            match bp.find_pairs(&scene_with(*bad, at), None) {
                Err(Error::InvalidObject { index, problem: p }) => {
                    assert_eq!(index, at, "{method}");
                    assert!(p.contains(problem), "{method}: '{p}' lacks '{problem}'");
                }
                other => panic!("{method}: {problem}: got {other:?}"),
            }
        }
        // The instance still works after rejecting input.
        let mut pairs = Vec::new();
        let stats = bp
            .find_pairs(
                &scene_with(Sphere::new(Vec3::ZERO, 0.75), 0),
                Some(&mut pairs),
            )
            .unwrap();
        assert_eq!(stats.pairs, 9, "{method}");
    }
}

/// An empty scene has no pairs (a simulation whose objects are all gone), for every CPU method
/// and `auto`: the caller's list is cleared, nothing is an error, and the next frame is whole.
#[test]
fn an_empty_scene_has_no_pairs() {
    let mut all: Vec<Box<dyn sweepfan::BroadPhase + Send>> =
        Method::ALL.into_iter().map(broad_phase).collect();
    all.push(Box::new(sweepfan::cpu::auto()));
    let two = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
    for bp in &mut all {
        let mut pairs = vec![[0, 1]];
        let stats = bp.find_pairs(&[], Some(&mut pairs)).unwrap();
        let name = bp.name().to_string();
        assert_eq!((stats.pairs, stats.tests, pairs.len()), (0, 0, 0), "{name}");
        assert_eq!(bp.find_pairs(&[], None).unwrap().pairs, 0, "{name}");
        bp.find_pairs(&two, Some(&mut pairs)).unwrap();
        assert_eq!(pairs, vec![[0, 1]], "{name}");
    }
}

/// Coordinates near the accepted limit: the grid clamps its cells, sweeps compare huge
/// intervals; every method still returns brute force's pairs.
#[test]
fn huge_coordinates_still_match_brute_force() {
    let mut s = vec![
        Sphere::new(Vec3::new(9e17, -9e17, 0.0), 1e16),
        Sphere::new(Vec3::new(9e17 + 1e16, -9e17, 0.0), 1e16),
        Sphere::new(Vec3::new(-9e17, 9e17, 9e17), 1.0),
        Sphere::new(Vec3::new(-9e17, 9e17, 9e17), 0.0),
    ];
    s.extend((0..50).map(|i| Sphere::new(Vec3::new(i as f32 * 0.5, 0.0, 1.0), 0.3)));
    let expected = pairs_of(Method::BruteForce, &s);
    assert!(expected.contains(&[0, 1]) && expected.contains(&[2, 3]));
    assert_every_method_finds(&s, &expected);
}

/// More pairs than a call may store: a clear `TooLarge`, and counting still works.
#[test]
fn too_many_pairs_to_store() {
    let s = vec![Sphere::new(Vec3::ZERO, 1.0); 2_000];
    let all = 2_000u64 * 1_999 / 2;
    for method in Method::ALL {
        let mut bp = broad_phase_with_pair_limit(method, all - 1);
        let mut pairs = Vec::new();
        match bp.find_pairs(&s, Some(&mut pairs)) {
            Err(Error::TooLarge { message: msg, .. }) => {
                assert!(msg.contains(&all.to_string()), "{msg}")
            }
            other => panic!("{method}: {other:?}"),
        }
        assert!(pairs.is_empty(), "{method}: a partial list was left");
        assert_eq!(bp.find_pairs(&s, None).unwrap().pairs, all, "{method}");
        let mut bp = broad_phase_with_pair_limit(method, all);
        bp.find_pairs(&s, Some(&mut pairs)).unwrap();
        assert_eq!(pairs.len() as u64, all, "{method}");
    }
    // `auto` passes its limit to the method it chooses.
    let mut pairs = Vec::new();
    use sweepfan::BroadPhase;
    let mut bp = sweepfan::cpu::auto_with_pair_limit(all - 1);
    match bp.find_pairs(&s, Some(&mut pairs)) {
        Err(Error::TooLarge { message: msg, .. }) => {
            assert!(msg.contains(&all.to_string()), "{msg}")
        }
        other => panic!("auto: {other:?}"),
    }
    assert!(pairs.is_empty(), "auto: a partial list was left");
    let mut bp = sweepfan::cpu::auto_with_pair_limit(all);
    bp.find_pairs(&s, Some(&mut pairs)).unwrap();
    assert_eq!(pairs.len() as u64, all);
}

/// A scene spanning more than 2^20 cells on every axis: cells are clamped and the packed
/// (cell, index) key no longer fits 64 bits (the grid's wide path); pairs still match.
#[test]
fn clamped_cells_and_wide_grid_keys_match_brute_force() {
    let mut s = Vec::new();
    for k in 0..40u32 {
        let t = (k as f32) * 1.0e5;
        let c = Vec3::new(t, 3.0e6 - t, (k % 7) as f32 * 5.0e5);
        s.push(Sphere::new(c, 0.5));
        // An exactly touching neighbour on each axis, and one just apart.
        s.push(Sphere::new(c + Vec3::X, 0.5));
        s.push(Sphere::new(c + Vec3::Y, 0.5));
        s.push(Sphere::new(c - Vec3::Z * 1.25, 0.5));
    }
    // Far beyond cell 2^20 - 1 on every axis (cell side 1): clamped together.
    s.push(Sphere::new(Vec3::splat(4.0e6), 0.5));
    s.push(Sphere::new(Vec3::splat(4.0e6) + Vec3::X, 0.5));
    let expected = pairs_of(Method::BruteForce, &s);
    assert!(expected.len() > 80);
    assert_every_method_finds(&s, &expected);
}

/// The canonical pairs `method` (CPU) finds in `s`.
fn pairs_of(method: Method, s: &[Sphere]) -> Vec<Pair> {
    let mut pairs = Vec::new();
    broad_phase(method).find_pairs(s, Some(&mut pairs)).unwrap();
    canonicalize(&mut pairs);
    pairs
}

/// Every method finds exactly `expected` in `s`.
fn assert_every_method_finds(s: &[Sphere], expected: &[Pair]) {
    for method in Method::ALL {
        assert_eq!(pairs_of(method, s), expected, "{method}");
    }
}

/// Decimals f32 cannot hold are named as such, not as "infinite" or silently zero.
#[test]
fn decimals_outside_f32_are_named() {
    use sweepfan_scenes::files::parse_spheres_csv;
    for (text, problem) in [
        ("x,y,z,r\n1e39,0,0,1\n", "x = `1e39` overflows f32"),
        ("x,y,z,r\n0,0,0,-4e40\n", "r = `-4e40` overflows f32"),
        ("x,y,z,r\n0,1e-50,0,1\n", "y = `1e-50` rounds to 0 in f32"),
        ("x,y,z,r\n0,0,0,inf\n", "r is infinite"),
    ] {
        let (line, p) = parse_spheres_csv(text).unwrap_err();
        assert_eq!(line, 2, "{text}");
        assert!(p.contains(problem), "{text}: {p}");
    }
    // Zero written many ways is zero.
    let zero = parse_spheres_csv("x,y,z,r\n0.0,-0,0e5,1\n").unwrap();
    assert_eq!(zero, [Sphere::new(Vec3::ZERO, 1.0)]);
}

/// `auto` between two surveys lets the chosen method validate the scene its own way (the grid
/// in its survey): a bad sphere in a frame after a good one of the same size is still named at
/// its lowest index, whether the call orders its list or not, the list is left empty, and the
/// next good frame finds brute force's pairs.
#[test]
fn auto_between_surveys_names_bad_spheres_as_a_survey_does() {
    let scene: Vec<Sphere> = (0..3000)
        .map(|i| Sphere::new(Vec3::new((i % 60) as f32, (i / 60) as f32, 0.0), 0.6))
        .collect();
    let want = pairs_of(Method::BruteForce, &scene);
    assert!(want.len() > 5000);
    let mut auto = sweepfan::cpu::auto();
    let mut out = Vec::new();
    auto.find_pairs(&scene, Some(&mut out)).unwrap();
    assert_eq!(out, want);
    for (k, (bad, lowest)) in [
        (vec![(2_999, f32::NAN)], 2_999),
        (vec![(1_234, -1.0), (17, f32::INFINITY)], 17),
        (vec![(0, 1e-35)], 0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = scene.clone();
        for &(i, r) in &bad {
            s[i].radius = r;
        }
        out = vec![[7, 8]; 3];
        let r = match k % 2 {
            0 => auto.find_pairs(&s, Some(&mut out)),
            _ => auto.find_pairs_unordered(&s, Some(&mut out)),
        };
        match r {
            Err(Error::InvalidObject { index, .. }) => assert_eq!(index, lowest, "{bad:?}"),
            other => panic!("{bad:?}: expected InvalidObject, got {other:?}"),
        }
        assert!(out.is_empty(), "{bad:?}: a list left behind");
        let stats = auto.find_pairs(&scene, Some(&mut out)).unwrap();
        assert_eq!(out, want, "{bad:?}: the next frame");
        assert_eq!(stats.chosen.map(|c| c.method), Some(Method::Grid));
    }
}

/// A call that fails leaves the caller's list empty, whatever held it before and whatever the
/// failure: bad input, too many pairs, a cancellation (which once left the last frame's pairs
/// in place, as if this frame had found them); the box sweep's cancellation is an error too,
/// not a short list.
#[test]
fn a_failed_call_leaves_the_list_empty() {
    use sweepfan::{Aabb, CancelToken, Limits};
    let line: Vec<Sphere> = (0..3000)
        .map(|i| Sphere::new(Vec3::new(i as f32, 0.0, 0.0), 0.75))
        .collect();
    let bad = scene_with(Sphere::new(Vec3::ZERO, -1.0), 3);
    let cancelled = CancelToken::new();
    cancelled.cancel();
    for m in Method::ALL {
        let stale = || vec![[7, 8]; 3];
        let mut out = stale();
        assert!(broad_phase(m).find_pairs(&bad, Some(&mut out)).is_err());
        assert!(out.is_empty(), "{m}: bad input");
        out = stale();
        let mut few = broad_phase_with_pair_limit(m, 10);
        assert!(few.find_pairs(&line, Some(&mut out)).is_err());
        assert!(out.is_empty(), "{m}: past the pair limit");
        for unordered in [false, true] {
            out = stale();
            let mut bp = broad_phase(m);
            let r = Limits::new()
                .with_cancel(cancelled.clone())
                .run(|| match unordered {
                    false => bp.find_pairs(&line, Some(&mut out)),
                    true => bp.find_pairs_unordered(&line, Some(&mut out)),
                });
            assert!(matches!(r, Err(Error::Interrupted)), "{m}: {r:?}");
            assert!(out.is_empty(), "{m}: cancelled (unordered: {unordered})");
        }
    }
    let boxes: Vec<Aabb> = line
        .iter()
        .map(|s| Aabb::new(s.center - s.radius, s.center + s.radius))
        .collect();
    let mut out = vec![[7, 8]; 3];
    let r = Limits::new()
        .with_cancel(cancelled)
        .run(|| sweepfan::cpu::aabb_sweep(&boxes, &mut out));
    assert!(
        matches!(r, Err(Error::Interrupted)) && out.is_empty(),
        "{r:?}"
    );
}

/// One validation convention for every shape (`Validate`): a slice's `validate_*` accepts an
/// empty slice, names the lowest bad index, and the polygon's constructor names the vertex at
/// fault, placed at the caller's index by `PolygonFault::at`.
#[test]
fn every_validation_follows_one_convention() {
    use sweepfan::geom::aabb::validate_aabbs;
    use sweepfan::geom::obb::validate_obbs;
    use sweepfan::{Aabb, Obb, Polygon, validate_spheres};
    assert!(validate_spheres(&[]).is_ok());
    assert!(validate_aabbs(&[]).is_ok());
    assert!(validate_obbs(&[]).is_ok());
    let index_of = |e: Error| match e {
        Error::InvalidObject { index, .. } => index,
        other => panic!("not an invalid object: {other}"),
    };
    let mut spheres = vec![Sphere::new(Vec3::ZERO, 1.0); 5];
    spheres[3].radius = -1.0;
    spheres[4].radius = f32::NAN;
    assert_eq!(index_of(validate_spheres(&spheres).unwrap_err()), 3);
    let mut aabbs = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 5];
    aabbs[2] = Aabb::new(Vec3::ONE, Vec3::ZERO);
    aabbs[4].min.x = f32::NAN;
    assert_eq!(index_of(validate_aabbs(&aabbs).unwrap_err()), 2);
    let mut obbs = vec![Obb::new(Vec3::ZERO, Vec3::ONE, glam::Quat::IDENTITY); 5];
    obbs[1].half_extents.y = -1.0;
    assert_eq!(index_of(validate_obbs(&obbs).unwrap_err()), 1);
    // Three vertices, the last equal to the first: a zero-length edge named by its vertices.
    let loop_back = [glam::Vec2::ZERO, glam::Vec2::X, glam::Vec2::ZERO];
    let fault = Polygon::new(&loop_back).unwrap_err();
    assert!(fault.to_string().contains("vertex"), "{fault}");
    assert_eq!(index_of(fault.at(6)), 6);
    // Made alone, without an index: an invalid argument, not object 0.
    let alone: Error = fault.into();
    assert!(
        matches!(
            alone,
            Error::InvalidArgument {
                argument: "vertices",
                ..
            }
        ),
        "{alone}"
    );
}

/// The public geometry that takes orders and shapes refuses what names no shape, instead of
/// indexing past it; contacts take validated polygons.
#[test]
fn polygon_sets_refuse_indices_past_their_polygons() {
    use glam::Vec2;
    use sweepfan::geom::contact::polygon_contact;
    use sweepfan::geom::polygon::PolygonSet;
    let square = |x: f32| {
        let v = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map(|(a, b)| Vec2::new(a + x, b));
        sweepfan::Polygon::new(&v).unwrap()
    };
    let polygons = [square(0.0), square(0.5)];
    let set = PolygonSet::in_order(&polygons, &[1, 0]).unwrap();
    assert_eq!(set.polygon(0), polygons[1].vertices());
    let e = PolygonSet::in_order(&polygons, &[0, 2]).unwrap_err();
    assert!(
        matches!(
            e,
            sweepfan::Error::InvalidArgument {
                argument: "order",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("order[1] = 2 names no polygon (there are 2)"),
        "{e}"
    );
    let c = polygon_contact(&polygons[0], &polygons[1]);
    assert!(c.count > 0 && (c.depth - 0.5).abs() < 1e-6, "{c:?}");
}

/// A scene whose frame does not fit the caller's memory budget is refused by every CPU method
/// (and `auto`) before it allocates, naming the scene, even when it has no pairs at all: the
/// methods' sort scratch and sorted copies grew without a check, so a caller that had not
/// checked the scene's size first (`sweepfan verify` of 10^6 spheres under `ulimit -v 150000`)
/// aborted in the grid's sort. The instance still works after the refusal.
#[test]
fn a_scene_past_the_memory_budget_is_refused_before_it_is_sorted() {
    use sweepfan::{Limits, MemoryBudget};
    // 20,000 spheres apart on a line: no pairs, but each method's frame needs more than 1 MiB.
    let apart: Vec<Sphere> = (0..20_000)
        .map(|i| Sphere::new(Vec3::new(3.0 * i as f32, 0.0, 0.0), 1.0))
        .collect();
    let two = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
    let tight = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
    let mut all: Vec<Box<dyn sweepfan::BroadPhase + Send>> =
        Method::ALL.into_iter().map(broad_phase).collect();
    all.push(Box::new(sweepfan::cpu::auto()));
    for bp in &mut all {
        let name = bp.name().to_string();
        for ordered in [true, false] {
            let mut pairs = vec![[0, 1]];
            let result = tight.run(|| match ordered {
                true => bp.find_pairs(&apart, Some(&mut pairs)),
                false => bp.find_pairs_unordered(&apart, Some(&mut pairs)),
            });
            match result {
                Err(Error::TooLarge { message, .. }) => {
                    assert!(message.contains("20000 objects"), "{name}: {message}")
                }
                other => panic!("{name}: {other:?}"),
            }
            assert!(pairs.is_empty(), "{name}: the list is left empty");
        }
        let mut pairs = Vec::new();
        tight.run(|| bp.find_pairs(&two, Some(&mut pairs))).unwrap();
        assert_eq!(pairs, vec![[0, 1]], "{name}");
    }
}
