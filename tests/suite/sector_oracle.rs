//! Oracle tests of every sector test against brute-force sampling written here.
//!
//! The oracle never uses the code under test beyond `Sector::contains_point` (the thesis's point
//! test, eq. 2.4-2.7) and the sectors' frames. For a shape "core plus radius" (circle, sphere,
//! capsule) it samples the sector's boundary densely (covering radius <= `delta`) and the core:
//! * a core sample inside the sector, or a boundary sample within the radius, is a witness: HIT;
//! * otherwise, if every boundary sample is farther than radius + delta, it is a MISS (a core
//!   disjoint from the sector is nearest it at the boundary; a core crossing it would have come
//!   within delta of a boundary sample);
//! * in between, the case is within delta of touching: UNSURE, skipped and counted.
//!
//! For boxes, rectangles and other sectors the same holds with containment: overlap implies the
//! other shape meets the sector's boundary or contains all of it, so "no boundary sample inside
//! the other shape grown by delta" proves a miss.
//!
//! Exact tests must agree on every HIT and MISS; conservative ones must say yes on every HIT;
//! the over-detection rates (yes on a MISS) are printed (`--nocapture`).

use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f32::consts::{FRAC_PI_2, PI};
use std::ops::Range;
use sweepfan::Sphere;
use sweepfan::geom::obb::ObbFrame;
use sweepfan::geom::sector::{Capsule2, Capsule3, Rect2, Sector, Sector2};
use sweepfan_scenes::random::vec3_in;

/// Rounding allowance on top of the sampling margin.
const EPS: f32 = 1e-4;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Truth {
    Hit,
    Miss,
    Unsure,
}

#[derive(Default, Debug)]
struct Tally {
    hit: usize,
    miss: usize,
    unsure: usize,
    wrong: usize,
    over: usize,
}

impl Tally {
    /// Records an exact test's answer.
    fn exact(&mut self, truth: Truth, said: bool, what: impl Fn() -> String) {
        self.count(truth);
        let bad = match truth {
            Truth::Hit => !said,
            Truth::Miss => said,
            Truth::Unsure => false,
        };
        if bad {
            if self.wrong < 5 {
                eprintln!("disagreement ({truth:?}, said {said}): {}", what());
            }
            self.wrong += 1;
        }
    }

    /// Records a conservative test's answer: a miss of a HIT is wrong, a yes on a MISS is over.
    fn conservative(&mut self, truth: Truth, said: bool, what: impl Fn() -> String) {
        self.count(truth);
        if truth == Truth::Hit && !said {
            if self.wrong < 5 {
                eprintln!("missed a hit: {}", what());
            }
            self.wrong += 1;
        }
        if truth == Truth::Miss && said {
            self.over += 1;
        }
    }

    fn count(&mut self, truth: Truth) {
        match truth {
            Truth::Hit => self.hit += 1,
            Truth::Miss => self.miss += 1,
            Truth::Unsure => self.unsure += 1,
        }
    }

    fn report(&self, name: &str) {
        let (hit, miss, unsure) = (self.hit, self.miss, self.unsure);
        let (wrong, over) = (self.wrong, self.over);
        let rate = 100.0 * over as f64 / miss.max(1) as f64;
        println!(
            "{name}: {hit} hits, {miss} misses, {unsure} unsure (skipped), {wrong} wrong, over-detection {over} of {miss} misses ({rate:.2}%)"
        );
    }

    fn assert_sound(&self, name: &str, min_each: usize) {
        self.report(name);
        assert_eq!(self.wrong, 0, "{name}: {self:?}");
        assert!(
            self.hit >= min_each && self.miss >= min_each,
            "{name}: too few decided cases: {self:?}"
        );
    }
}

fn unit(rng: &mut ChaCha8Rng) -> Vec3 {
    loop {
        let v = vec3_in(rng, -1.0..1.0);
        let l = v.length();
        if l > 0.1 && l <= 1.0 {
            return v / l;
        }
    }
}

/// Half-angles mixing the edge cases: ~0, pi/2, pi (full ring), just below pi.
fn half_angle(rng: &mut ChaCha8Rng, k: usize) -> f32 {
    match k % 8 {
        0 => PI,
        1 => rng.random_range(0.0..1e-3),
        2 => FRAC_PI_2 + rng.random_range(-1e-3..1e-3),
        3 => PI - rng.random_range(0.0..1e-3),
        _ => rng.random_range(0.05..PI),
    }
}

/// Zero on every `every`-th case `k` (a degenerate edge case), else uniform in `range`.
fn zero_every(rng: &mut ChaCha8Rng, k: usize, every: usize, range: Range<f32>) -> f32 {
    if k.is_multiple_of(every) {
        0.0
    } else {
        rng.random_range(range)
    }
}

fn radii(rng: &mut ChaCha8Rng, k: usize) -> (f32, f32) {
    let r = zero_every(rng, k, 5, 0.0..2.0);
    let width = zero_every(rng, k, 13, 0.1..2.5);
    (r, r + width)
}

fn random_sector(rng: &mut ChaCha8Rng, k: usize) -> Sector {
    let axis = unit(rng);
    let centre_axis = axis.cross(unit(rng)).normalize();
    let (r, rr) = radii(rng, k);
    let h = zero_every(rng, k, 11, 0.05..1.0);
    let origin = vec3_in(rng, -1.0..1.0);
    Sector::new(origin, axis, centre_axis, half_angle(rng, k), r, rr, h).unwrap()
}

fn random_sector2(rng: &mut ChaCha8Rng, k: usize) -> Sector2 {
    let (r, rr) = radii(rng, k);
    Sector2 {
        center: Vec2::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)),
        axis: Vec2::from_angle(rng.random_range(0.0..2.0 * PI)),
        half_angle: half_angle(rng, k),
        inner_radius: r,
        outer_radius: rr,
    }
}

/// The 2D sector as a flat 3D sector, so that the oracle uses the thesis's point test.
fn as_flat(s: &Sector2) -> Sector {
    Sector {
        origin: s.center.extend(0.0),
        axis: Vec3::Z,
        centre_axis: s.axis.extend(0.0),
        half_angle: s.half_angle,
        inner_radius: s.inner_radius,
        outer_radius: s.outer_radius,
        half_thickness: 0.0,
    }
}

fn contains2(s: &Sector2, p: Vec2) -> bool {
    as_flat(s).contains_point(p.extend(0.0))
}

/// Enough steps to cover `len` at spacing <= `step` (at least one).
fn steps(len: f32, step: f32) -> usize {
    ((len / step).ceil() as usize).max(1)
}

/// The `n + 1` evenly spaced values from `lo` to `lo + span`.
fn grid(lo: f32, span: f32, n: usize) -> impl Iterator<Item = f32> + Clone {
    (0..=n).map(move |j| lo + span * j as f32 / n as f32)
}

/// Dense samples of a 2D sector's boundary (arcs and straight edges), spacing <= step.
fn boundary2(s: &Sector2, step: f32) -> Vec<Vec2> {
    let (r, rr, th) = (s.inner_radius, s.outer_radius, s.half_angle);
    let (n_phi, n_r) = (steps(2.0 * th * rr, step), steps(rr - r, step));
    let mut out = Vec::with_capacity(2 * (n_phi + n_r + 2));
    let world = |rho: f32, phi: f32| s.center + rho * Vec2::from_angle(phi).rotate(s.axis);
    for phi in grid(-th, 2.0 * th, n_phi) {
        // A disk (full ring, r = 0) has no inner boundary: its centre is interior.
        if r > 0.0 || th < PI {
            out.push(world(r, phi));
        }
        out.push(world(rr, phi));
    }
    // A full ring's straight edges are interior, not boundary.
    for rho in grid(r, rr - r, n_r).filter(|_| th < PI) {
        out.push(world(rho, th));
        out.push(world(rho, -th));
    }
    out
}

/// Dense samples of a 3D sector's boundary: the two caps, the two arc surfaces and the two
/// straight faces; spacing <= step in every parameter direction.
fn boundary3(s: &Sector, step: f32) -> Vec<Vec3> {
    let (r, rr) = (s.inner_radius, s.outer_radius);
    let (th, h) = (s.half_angle, s.half_thickness);
    let rhos = grid(r, rr - r, steps(rr - r, step));
    let zs = grid(-h, 2.0 * h, steps(2.0 * h, step));
    let mut out = Vec::new();
    let local = |rho: f32, phi: f32, z: f32| Vec3::new(rho * phi.cos(), rho * phi.sin(), z);
    for phi in grid(-th, 2.0 * th, steps(2.0 * th * rr, step)) {
        for rho in rhos.clone() {
            out.push(local(rho, phi, h));
            out.push(local(rho, phi, -h));
        }
        for z in zs.clone() {
            // A disk (full ring, r = 0) has no inner surface: its axis is interior.
            if r > 0.0 || th < PI {
                out.push(local(r, phi, z));
            }
            out.push(local(rr, phi, z));
        }
    }
    for rho in rhos.filter(|_| th < PI) {
        for z in zs.clone() {
            out.push(local(rho, th, z));
            out.push(local(rho, -th, z));
        }
    }
    out.into_iter().map(|q| s.to_world(q)).collect()
}

/// The smallest `dist(p)` over the boundary samples.
fn min_over<T: Copy>(samples: &[T], dist: impl Fn(&T) -> f32) -> f32 {
    samples.iter().map(dist).fold(f32::MAX, f32::min)
}

/// A point in a random direction from the sector's centre, at most `margin` past its outer arc.
fn near2(rng: &mut ChaCha8Rng, s: &Sector2, margin: f32) -> Vec2 {
    s.center
        + Vec2::from_angle(rng.random_range(0.0..2.0 * PI))
            * rng.random_range(0.0..s.outer_radius + margin)
}

/// A point in a random direction from the sector's origin, at most `margin` past its outer radius.
fn near3(rng: &mut ChaCha8Rng, s: &Sector, margin: f32) -> Vec3 {
    s.origin + unit(rng) * rng.random_range(0.0..s.outer_radius + margin)
}

fn classify(core_inside: bool, min_dist: f32, radius: f32, delta: f32) -> Truth {
    if core_inside || min_dist <= radius - EPS {
        Truth::Hit
    } else if min_dist > radius + delta + EPS {
        Truth::Miss
    } else {
        Truth::Unsure
    }
}

/// [`seg_dist3`] in the plane z = 0 (the zero coordinate adds nothing to any sum).
fn seg_dist2(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    seg_dist3(p.extend(0.0), a.extend(0.0), b.extend(0.0))
}

fn seg_dist3(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let v = b - a;
    let t = if v.length_squared() > 0.0 {
        ((p - a).dot(v) / v.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + t * v)).length()
}

/// Whether `hit(t)` holds at some sample `t` in [0, 1] along a segment of length `len`, the
/// samples spaced <= `step` apart.
fn along(len: f32, step: f32, hit: impl Fn(f32) -> bool) -> bool {
    let n = (len / step).ceil() as usize + 1;
    (0..=n).any(|i| hit(i as f32 / n as f32))
}

/// Classification for a shape given by containment: `inside(p, grow)` says whether `p` lies in
/// the shape grown by `grow`. HIT on a witness (`corners_in`: a corner of the shape inside the
/// sector, or a boundary sample inside the shape); MISS when no boundary sample is inside the
/// shape grown by `step`.
fn containment_truth<T: Copy>(
    corners_in: bool,
    samples: &[T],
    inside: impl Fn(T, f32) -> bool,
    step: f32,
) -> Truth {
    if corners_in || samples.iter().any(|p| inside(*p, -EPS)) {
        Truth::Hit
    } else if !samples.iter().any(|p| inside(*p, step + EPS)) {
        Truth::Miss
    } else {
        Truth::Unsure
    }
}

/// Runs `cases` random cases drawn from a generator seeded with `seed`: `case(rng, k, tallies)`
/// records case `k` into the tallies, and each tally is then asserted sound (at least `min_each`
/// hits and misses) under its name from `names`.
fn run_cases<const N: usize>(
    seed: u64,
    cases: usize,
    min_each: usize,
    names: [&str; N],
    mut case: impl FnMut(&mut ChaCha8Rng, usize, &mut [Tally; N]),
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tallies = std::array::from_fn(|_| Tally::default());
    for k in 0..cases {
        case(&mut rng, k, &mut tallies);
    }
    for (tally, name) in tallies.iter().zip(names) {
        tally.assert_sound(name, min_each);
    }
}

/// [`run_cases`] for a shape both a thesis test and a signed-distance test decide exactly, tallied
/// as "`shape` (thesis `equation`)" and "`shape` (signed distance)": `case(rng, k)` gives case
/// `k`'s truth, the two tests' answers and the case written out.
fn run_thesis_and_exact(
    shape: &str,
    equation: &str,
    seed: u64,
    cases: usize,
    min_each: usize,
    mut case: impl FnMut(&mut ChaCha8Rng, usize) -> (Truth, [bool; 2], String),
) {
    let names = [
        format!("{shape} (thesis {equation})"),
        format!("{shape} (signed distance)"),
    ];
    let names = [names[0].as_str(), names[1].as_str()];
    run_cases(seed, cases, min_each, names, |rng, k, [thesis, exact]| {
        let (truth, [by_thesis, by_distance], what) = case(rng, k);
        thesis.exact(truth, by_thesis, || what.clone());
        exact.exact(truth, by_distance, || what.clone());
    });
}

/// [`run_cases`] for a 2D shape that a sector's thesis test decides exactly: 3000 cases from
/// `seed`, each a random sector and a shape anchored at most 3 past its arc, which
/// `case(rng, k, sector, anchor, tally)` draws and records; tallied as `name`.
fn run_thesis_2d(
    name: &str,
    seed: u64,
    mut case: impl FnMut(&mut ChaCha8Rng, usize, &Sector2, Vec2, &mut Tally),
) {
    run_cases(seed, 3000, 300, [name], |rng, k, [tally]| {
        let s = random_sector2(rng, k);
        let anchor = near2(rng, &s, 3.0);
        case(rng, k, &s, anchor, tally);
    });
}

const STEP2: f32 = 0.004;
const STEP3: f32 = 0.04;

#[test]
fn circles_2d_thesis_and_exact() {
    run_thesis_and_exact("2D sector-circle", "2.4", 101, 3000, 300, |rng, k| {
        let s = random_sector2(rng, k);
        let c = near2(rng, &s, 2.0);
        let rc = zero_every(rng, k, 9, 0.0..1.5);
        let min = min_over(&boundary2(&s, STEP2), |b| (*b - c).length());
        let truth = classify(contains2(&s, c), min, rc, STEP2);
        let said = [s.overlaps_circle(c, rc), s.overlaps_circle_exact(c, rc)];
        (truth, said, format!("{s:?} circle {c} r {rc}"))
    });
}

#[test]
fn capsules_2d_thesis() {
    let name = "2D sector-capsule (thesis 2.6)";
    run_thesis_2d(name, 102, |rng, k, s, a, tally| {
        let len = zero_every(rng, k, 10, 0.0..5.0);
        let b = a + Vec2::from_angle(rng.random_range(0.0..2.0 * PI)) * len;
        let rc = rng.random_range(0.0..1.2);
        let core_inside = along(len, STEP2, |t| contains2(s, a.lerp(b, t)));
        let min = min_over(&boundary2(s, STEP2), |p| seg_dist2(*p, a, b));
        let truth = classify(core_inside, min, rc, STEP2);
        let cap = Capsule2::new(a, b, rc);
        tally.exact(truth, s.overlaps_capsule(&cap), || format!("{s:?} {cap:?}"));
    });
}

#[test]
fn rectangles_2d_thesis() {
    let name = "2D sector-rectangle (thesis 2.3)";
    run_thesis_2d(name, 103, |rng, k, s, center, tally| {
        let mut he = Vec2::new(rng.random_range(0.0..2.0), rng.random_range(0.0..2.0));
        if k.is_multiple_of(7) {
            he.y = 0.0; // zero-width rectangle: a segment
        }
        let rect = Rect2 {
            center,
            axis: Vec2::from_angle(rng.random_range(0.0..2.0 * PI)),
            half_extents: he,
        };
        let inside = |p: Vec2, grow: f32| {
            let d = p - rect.center;
            d.dot(rect.axis).abs() <= he.x + grow && d.dot(rect.axis.perp()).abs() <= he.y + grow
        };
        let corners_in = rect.corners().iter().any(|c| contains2(s, *c));
        let truth = containment_truth(corners_in, &boundary2(s, STEP2), inside, STEP2);
        tally.exact(truth, s.overlaps_rectangle(&rect), || {
            format!("{s:?} {rect:?}")
        });
    });
}

#[test]
fn spheres_3d_thesis_and_exact() {
    run_thesis_and_exact("3D sector-sphere", "2.5", 104, 1500, 200, |rng, k| {
        let s = random_sector(rng, k);
        let mut c = near3(rng, &s, 2.0);
        let rs = zero_every(rng, k, 9, 0.0..1.5);
        if k.is_multiple_of(6) {
            // Straddling a slab face: centre within the radius of the face plane.
            let q = s.to_local(c);
            let z = s.half_thickness + rng.random_range(-rs..=rs);
            c = s.to_world(Vec3::new(
                q.x,
                q.y,
                if k.is_multiple_of(12) { z } else { -z },
            ));
        }
        let min = min_over(&boundary3(&s, STEP3), |b| (*b - c).length());
        let truth = classify(s.contains_point(c), min, rs, STEP3);
        let sphere = Sphere::new(c, rs);
        let said = [s.overlaps_sphere(&sphere), s.overlaps_sphere_exact(&sphere)];
        (truth, said, format!("{s:?} {sphere:?}"))
    });
}

#[test]
fn signed_distance_3d_matches_sampled_boundary() {
    let mut rng = ChaCha8Rng::seed_from_u64(105);
    let mut checked = 0;
    for k in 0..400 {
        let s = random_sector(&mut rng, k);
        let samples = boundary3(&s, STEP3);
        for _ in 0..10 {
            let p = near3(&mut rng, &s, 2.0);
            let to_boundary = min_over(&samples, |b| (*b - p).length());
            let sd = s.signed_distance(p);
            assert!(
                (sd.abs() - to_boundary).abs() <= STEP3 + EPS,
                "{s:?} p {p}: sd {sd}, sampled {to_boundary}"
            );
            if to_boundary > STEP3 + EPS {
                assert_eq!(sd < 0.0, s.contains_point(p), "{s:?} p {p}");
                checked += 1;
            }
        }
    }
    println!(
        "3D signed distance: {checked} points checked for sign, all within the sample spacing"
    );
    assert!(checked > 2000);
}

#[test]
fn capsules_3d_certified_and_approximate() {
    let mut rng = ChaCha8Rng::seed_from_u64(106);
    let (mut certified, mut approx, mut skim) =
        (Tally::default(), Tally::default(), Tally::default());
    let tolerance = 1e-3;
    let mut band_hits = 0;
    for k in 0..2000 {
        let s = random_sector(&mut rng, k);
        let mut a = near3(&mut rng, &s, 3.0);
        let len = rng.random_range(0.0..5.0);
        let dir = if k.is_multiple_of(6) {
            s.axis // parallel to the rotation axis
        } else if k % 6 == 1 {
            s.axis.cross(unit(&mut rng)).normalize() // flat, in the slab's plane
        } else {
            unit(&mut rng)
        };
        let mut b = a + dir * len;
        let rc = rng.random_range(0.0..1.2);
        let skimming = k % 3 == 2;
        if skimming {
            // Both ends just outside a slab face, within the radius: where the thesis's enclosing
            // 2D capsule is loosest.
            let near = |rng: &mut ChaCha8Rng| {
                let rho = rng.random_range(0.0..s.outer_radius + 1.5);
                let phi = rng.random_range(-PI..PI);
                let z = s.half_thickness + rng.random_range(0.0..=rc);
                s.to_world(Vec3::new(rho * phi.cos(), rho * phi.sin(), z))
            };
            a = near(&mut rng);
            b = near(&mut rng);
        }
        let len = (b - a).length();
        let core_inside = along(len, STEP3, |t| s.contains_point(a.lerp(b, t)));
        let min = min_over(&boundary3(&s, STEP3), |p| seg_dist3(*p, a, b));
        let truth = classify(core_inside, min, rc, STEP3);
        let cap = Capsule3::new(a, b, rc);
        let said = s.overlaps_capsule_certified(&cap, tolerance);
        certified.conservative(truth, said, || format!("{s:?} {cap:?}"));
        // Beyond the tolerance band, a yes is wrong.
        if truth == Truth::Miss && said {
            band_hits += 1;
            assert!(
                min <= rc + STEP3 + tolerance + EPS,
                "certified test over-detected beyond its tolerance: {s:?} {cap:?}"
            );
        }
        let said_approx = s.overlaps_capsule_approx(&cap);
        approx.conservative(truth, said_approx, || format!("{s:?} {cap:?}"));
        if skimming {
            skim.conservative(truth, said_approx, || format!("{s:?} {cap:?}"));
        }
    }
    certified.assert_sound("3D sector-capsule (certified, tol 1e-3)", 200);
    println!("  certified yes on decided misses (all within the tolerance band): {band_hits}");
    approx.assert_sound("3D sector-capsule (thesis 2.7, approximate)", 200);
    skim.assert_sound("  of which skimming a slab face", 50);
}

#[test]
fn boxes_3d_exact() {
    let names = ["3D sector-box (exact)"];
    run_cases(107, 1500, 200, names, |rng, k, [tally]| {
        let s = random_sector(rng, k);
        let q = Quat::from_axis_angle(unit(rng), rng.random_range(0.0..2.0 * PI));
        let mut he = vec3_in(rng, 0.0..1.5);
        if k.is_multiple_of(7) {
            he.z = 0.0; // a flat box
        }
        if k.is_multiple_of(21) {
            he.y = 0.0; // a segment
        }
        let center = near3(rng, &s, 2.5);
        let axes = [q * Vec3::X, q * Vec3::Y, q * Vec3::Z];
        let bx = ObbFrame::from_parts(center, axes, he);
        let inside = |p: Vec3, grow: f32| {
            let d = p - center;
            (0..3).all(|i| d.dot(axes[i]).abs() <= he[i] + grow)
        };
        let corners_in = (0..8).any(|c| s.contains_point(bx.corner(c)));
        let truth = containment_truth(corners_in, &boundary3(&s, STEP3), inside, STEP3);
        tally.exact(truth, s.overlaps_box(&bx), || format!("{s:?} {bx:?}"));
    });
}

/// A superset of every point within `d` of the sector (for the oracle's miss proof).
fn grown(s: &Sector, d: f32) -> Sector {
    let widen = if s.inner_radius > d {
        (d / s.inner_radius).asin()
    } else {
        PI
    };
    Sector {
        half_angle: (s.half_angle + widen).min(PI),
        inner_radius: (s.inner_radius - d).max(0.0),
        outer_radius: s.outer_radius + d,
        half_thickness: s.half_thickness + d,
        ..*s
    }
}

fn sector_pair_truth(a: &Sector, b: &Sector, sa: &[Vec3], sb: &[Vec3], step: f32) -> Truth {
    if sa.iter().any(|p| b.contains_point(*p)) || sb.iter().any(|p| a.contains_point(*p)) {
        return Truth::Hit;
    }
    let (ga, gb) = (grown(a, step + EPS), grown(b, step + EPS));
    if !sa.iter().any(|p| gb.contains_point(*p)) && !sb.iter().any(|p| ga.contains_point(*p)) {
        Truth::Miss
    } else {
        Truth::Unsure
    }
}

#[test]
fn sectors_2d_exact() {
    let names = ["2D sector-sector (exact)"];
    run_cases(108, 2000, 200, names, |rng, k, [tally]| {
        let a = random_sector2(rng, k);
        let mut b = random_sector2(rng, k / 3);
        b.center = a.center
            + Vec2::from_angle(rng.random_range(0.0..2.0 * PI))
                * rng.random_range(0.0..a.outer_radius + b.outer_radius + 1.0);
        let (fa, fb) = (as_flat(&a), as_flat(&b));
        let lift = |v: Vec<Vec2>| v.into_iter().map(|p| p.extend(0.0)).collect::<Vec<_>>();
        let (sa, sb) = (lift(boundary2(&a, STEP2)), lift(boundary2(&b, STEP2)));
        let truth = sector_pair_truth(&fa, &fb, &sa, &sb, STEP2);
        tally.exact(truth, a.overlaps_sector(&b), || format!("{a:?} {b:?}"));
    });
}

#[test]
fn sectors_3d_parallel_exact_and_skew_conservative() {
    let names = [
        "3D sector-sector, parallel axes (exact)",
        "3D sector-sector, skew axes (conservative)",
    ];
    run_cases(109, 1200, 100, names, |rng, k, [parallel, skew]| {
        let a = random_sector(rng, k);
        let mut b = random_sector(rng, k / 3);
        b.origin =
            a.origin + unit(rng) * rng.random_range(0.0..a.outer_radius + b.outer_radius + 0.5);
        let is_parallel = k.is_multiple_of(2);
        if is_parallel {
            b.axis = if k.is_multiple_of(4) { a.axis } else { -a.axis };
            b.centre_axis = b.axis.cross(unit(rng)).normalize();
        }
        let (sa, sb) = (boundary3(&a, STEP3), boundary3(&b, STEP3));
        let truth = sector_pair_truth(&a, &b, &sa, &sb, STEP3);
        let said = a.overlaps_sector_conservative(&b);
        let what = || format!("{a:?} {b:?}");
        if is_parallel {
            assert!(a.axes_parallel(&b));
            parallel.exact(truth, said, what);
        } else {
            skew.conservative(truth, said, what);
        }
    });
}

#[test]
fn boundary_cases_by_construction() {
    let s = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.5, 1.0, 2.0, 0.5).unwrap();
    // A point sphere exactly on the outer arc, on the inner arc, on a slab face: touching counts.
    for c in [
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(1.5, 0.0, 0.5),
    ] {
        let p = Sphere::new(c, 0.0);
        assert!(s.overlaps_sphere(&p) && s.overlaps_sphere_exact(&p), "{c}");
    }
    // Tangent to the top face from above (0.75 + 0.25 = 1.0 exactly), then just off.
    let tangent = Sphere::new(Vec3::new(1.5, 0.0, 0.75), 0.25);
    assert!(s.overlaps_sphere(&tangent) && s.overlaps_sphere_exact(&tangent));
    let off = Sphere::new(Vec3::new(1.5, 0.0, 0.76), 0.25);
    assert!(!s.overlaps_sphere(&off) && !s.overlaps_sphere_exact(&off));
    // Zero-angle sector (a flat strip): a sphere on its centre line hits, one beside it misses.
    let strip = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.0, 1.0, 2.0, 0.5).unwrap();
    assert!(strip.overlaps_sphere_exact(&Sphere::new(Vec3::new(1.5, 0.25, 0.0), 0.25)));
    assert!(!strip.overlaps_sphere_exact(&Sphere::new(Vec3::new(1.5, 0.25, 0.0), 0.24)));
    // r = 0: the axis belongs to the sector.
    let pie = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.3, 0.0, 2.0, 0.5).unwrap();
    assert!(pie.overlaps_sphere(&Sphere::new(Vec3::new(0.0, 0.0, 0.2), 0.0)));
    // A capsule along the axis, through the hole of a ring, misses; with a radius reaching the
    // inner wall it hits (both 3D tests).
    let ring = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, PI, 1.0, 2.0, 0.5).unwrap();
    let through = |rc| Capsule3::new(Vec3::new(0.0, 0.0, -3.0), Vec3::new(0.0, 0.0, 3.0), rc);
    assert!(!ring.overlaps_capsule_approx(&through(0.9)));
    assert!(!ring.overlaps_capsule_certified_default(&through(0.9)));
    assert!(ring.overlaps_capsule_approx(&through(1.0)));
    assert!(ring.overlaps_capsule_certified_default(&through(1.0)));
    // Zero-width box touching the sector's outer arc at one point.
    let (aligned, flat) = ([Vec3::X, Vec3::Y, Vec3::Z], Vec3::new(0.0, 0.5, 0.5));
    let sheet = ObbFrame::from_parts(Vec3::new(2.0, 0.0, 0.0), aligned, flat);
    assert!(s.overlaps_box(&sheet));
    let sheet_off = ObbFrame::from_parts(Vec3::new(2.01, 0.0, 0.0), aligned, flat);
    assert!(!s.overlaps_box(&sheet_off));
}

#[test]
fn non_finite_inputs_do_not_panic() {
    let s = Sector::new(Vec3::ZERO, Vec3::Z, Vec3::X, 0.5, 1.0, 2.0, 0.5).unwrap();
    let s2 = Sector2::local(0.5, 1.0, 2.0);
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let v3 = Vec3::splat(bad);
        let v2 = Vec2::splat(bad);
        let _ = s.overlaps_sphere(&Sphere::new(v3, 1.0));
        let _ = s.overlaps_sphere_exact(&Sphere::new(Vec3::ONE, bad));
        let cap = Capsule3::new(Vec3::ZERO, v3, 1.0);
        let _ = s.overlaps_capsule_approx(&cap);
        let _ = s.overlaps_capsule_certified_default(&cap);
        let _ = s.overlaps_capsule_certified(&Capsule3::new(Vec3::ZERO, Vec3::X, bad), bad);
        let bx = ObbFrame::from_parts(v3, [Vec3::X, Vec3::Y, Vec3::Z], Vec3::ONE);
        let _ = s.overlaps_box(&bx);
        let _ = s.overlaps_sector_conservative(&Sector { origin: v3, ..s });
        let _ = s2.overlaps_circle(v2, 1.0);
        let _ = s2.overlaps_capsule(&Capsule2::new(v2, Vec2::ZERO, 1.0));
        let rect = Rect2 {
            center: v2,
            axis: Vec2::X,
            half_extents: Vec2::ONE,
        };
        let _ = s2.overlaps_rectangle(&rect);
        let _ = s2.overlaps_sector(&Sector2 { center: v2, ..s2 });
    }
}
