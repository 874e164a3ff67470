//! The narrow phase behind one trait (`NarrowPhase`, docs/design.md §4.9): on the CPU and the
//! GPU alike, the pairs of shuffled, flipped candidates that the exact oracles say touch
//! (boxes: a lattice whose touching is known by construction and random boxes against the f64
//! vertex-enumeration oracle of `sat_oracle.rs`; polygons against the exact-integer oracle;
//! sphere contacts against their closed form), in canonical order, counted the
//! same without a list; the GPU's contacts as the CPU's; bad input refused alike with nothing
//! left in the caller's list (a candidate past the shapes or naming one twice, a NaN box).

use crate::common::{cube_lattice, polygon_oracle, shared_gpu, touch_oracle};
use crate::sat_oracle::obb_expected;
use glam::Vec3;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::Shapes;
use sweepfan::cpu::CpuNarrowPhase;
use sweepfan::cpu::contacts::compare_contacts;
use sweepfan::gpu::GpuNarrowPhase;
use sweepfan::{Contact, ContactShape, Error, NarrowPhase, Pair};
use sweepfan_scenes::boxes::{generate_polygons, random_boxes};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// The CPU's narrow phase and, unless the run opts out of the GPU, the device's.
pub(crate) fn backends() -> Vec<(&'static str, Box<dyn NarrowPhase>)> {
    let mut all: Vec<(&'static str, Box<dyn NarrowPhase>)> =
        vec![("cpu", Box::new(CpuNarrowPhase::default()))];
    if let Some(ctx) = shared_gpu() {
        all.push(("gpu", Box::new(GpuNarrowPhase::new(ctx))));
    }
    all
}

/// Every pair of `n` objects, shuffled, about half of them flipped to `[j, i]`.
pub(crate) fn scrambled_pairs(n: usize, seed: u64) -> Vec<Pair> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pairs: Vec<Pair> = (0..n as u32)
        .flat_map(|i| (i + 1..n as u32).map(move |j| [i, j]))
        .map(|[i, j]| if rng.random_bool(0.5) { [j, i] } else { [i, j] })
        .collect();
    pairs.shuffle(&mut rng);
    pairs
}

/// The candidates that `touch` says touch, each `[min, max]`, sorted: the oracle's list.
pub(crate) fn expected(candidates: &[Pair], touch: impl Fn(usize, usize) -> bool) -> Vec<Pair> {
    let mut want: Vec<Pair> = candidates
        .iter()
        .map(|p| [p[0].min(p[1]), p[0].max(p[1])])
        .filter(|&[i, j]| touch(i as usize, j as usize))
        .collect();
    want.sort_unstable();
    want
}

/// On every backend: `narrow.pairs` of `shapes` gives `want` (the candidates' touching pairs,
/// canonical) over a list holding something before, tests every candidate, and counts the same
/// without a list.
fn assert_pairs_on_every_backend(shapes: Shapes<'_>, candidates: &[Pair], want: &[Pair]) {
    for (name, mut narrow) in backends() {
        let mut got = vec![[9, 9]];
        let stats = narrow.pairs(shapes, candidates, Some(&mut got)).unwrap();
        assert_eq!(got, want, "{name}: {}", shapes.kind());
        assert_eq!(stats.tests, candidates.len() as u64, "{name}");
        assert_eq!(stats.pairs, want.len() as u64, "{name}");
        let counted = narrow.pairs(shapes, candidates, None).unwrap();
        assert_eq!(counted.pairs, want.len() as u64, "{name}: counting");
    }
}

#[test]
fn box_pairs_are_the_oracles_in_canonical_order_on_every_backend() {
    // Unit cubes on a 6 x 6 x 6 lattice: two touch exactly when their cells are neighbours.
    let (lattice, cells) = cube_lattice(6);
    let lattice_candidates = scrambled_pairs(lattice.len(), 1);
    let lattice_want = expected(&lattice_candidates, |i, j| {
        (0..3).all(|d| (cells[i][d] - cells[j][d]).abs() <= 1)
    });
    // Random boxes against the independent f64 oracle (`sat_oracle.rs`: vertex enumeration
    // over the boxes' planes); none of its pairs lies within its touching band here, so every
    // candidate has a clear answer.
    let random = random_boxes(500, 7);
    let random_candidates = scrambled_pairs(random.len(), 2);
    let answers: Vec<Option<bool>> = random_candidates
        .iter()
        .map(|&[i, j]| obb_expected(&random[i as usize], &random[j as usize]))
        .collect();
    assert!(
        answers.iter().all(Option::is_some),
        "a pair in the oracle's band"
    );
    let random_want = expected(&random_candidates, |i, j| {
        obb_expected(&random[i], &random[j]) == Some(true)
    });
    // The premises: both lists hold touching and apart pairs.
    assert!(lattice_want.len() > 1000 && random_want.len() > 100);
    assert!(random_candidates.len() > 10 * random_want.len());
    for (boxes, candidates, want) in [
        (&lattice, &lattice_candidates, &lattice_want),
        (&random, &random_candidates, &random_want),
    ] {
        assert_pairs_on_every_backend(Shapes::Obbs(boxes), candidates, want);
    }
    for (name, mut narrow) in backends() {
        // No candidates: none found.
        let mut got = vec![[0, 1]];
        narrow
            .pairs(Shapes::Obbs(&random), &[], Some(&mut got))
            .unwrap();
        assert!(got.is_empty(), "{name}");
    }
}

#[test]
fn polygon_pairs_are_the_exact_oracles_on_every_backend() {
    let polygons = generate_polygons(SceneKind::Density, &SceneParams::new(600, 21)).unwrap();
    let candidates = scrambled_pairs(polygons.len(), 3);
    let want = expected(&candidates, |i, j| {
        polygon_oracle(polygons[i].vertices(), polygons[j].vertices())
    });
    assert!(want.len() > 200, "{}", want.len());
    assert_pairs_on_every_backend(Shapes::Polygons(&polygons), &candidates, &want);
}

/// Spheres' pairs (exact touches, on the host on either backend) are the oracle's, on a
/// clustered scene with touching and near-touching pairs, counted the same without a list.
#[test]
fn sphere_pairs_are_the_exact_oracles_on_every_backend() {
    let spheres = Scene::generate(SceneKind::Clusters, &SceneParams::new(300, 8)).spheres;
    let candidates = scrambled_pairs(spheres.len(), 4);
    let want = expected(&candidates, |i, j| touch_oracle(&spheres[i], &spheres[j]));
    assert!(want.len() > 100, "{}", want.len());
    assert_pairs_on_every_backend(Shapes::from(&spheres), &candidates, &want);
}

#[test]
fn contacts_are_the_same_on_every_backend() {
    let boxes = random_boxes(3_000, 5);
    let mut cpu = CpuNarrowPhase::default();
    let mut touching = Vec::new();
    cpu.pairs(
        Shapes::Obbs(&boxes),
        &scrambled_pairs(400, 4),
        Some(&mut touching),
    )
    .unwrap();
    assert!(touching.len() > 20, "{}", touching.len());
    let mut want: Vec<Contact> = Vec::new();
    cpu.contacts(Shapes::Obbs(&boxes), &touching, &mut want)
        .unwrap();
    assert_eq!(want.len(), touching.len());
    assert!(
        want.iter()
            .all(|c| c.depth >= 0.0 && (1..=4).contains(&c.count))
    );
    let polygons = generate_polygons(SceneKind::Density, &SceneParams::new(500, 9)).unwrap();
    let mut polygon_pairs = Vec::new();
    cpu.pairs(
        Shapes::Polygons(&polygons),
        &scrambled_pairs(polygons.len(), 6),
        Some(&mut polygon_pairs),
    )
    .unwrap();
    let mut polygon_want = Vec::new();
    cpu.contacts(
        Shapes::Polygons(&polygons),
        &polygon_pairs,
        &mut polygon_want,
    )
    .unwrap();
    // Spheres: the closed form (normal along the centres, depth the overlap), in f64.
    let spheres: Vec<sweepfan::Sphere> = (0..200)
        .map(|k| {
            let x = k as f32 * 1.5;
            sweepfan::Sphere::new(Vec3::new(x, 0.25 * (k % 3) as f32, 0.0), 1.0)
        })
        .collect();
    let sphere_pairs: Vec<Pair> = (0..199).map(|k| [k, k + 1]).collect();
    for (name, mut narrow) in backends() {
        let mut got = Vec::new();
        narrow
            .contacts(Shapes::Spheres(&spheres), &sphere_pairs, &mut got)
            .unwrap();
        assert_eq!(got.len(), sphere_pairs.len(), "{name}");
        for (c, &[i, j]) in got.iter().zip(&sphere_pairs) {
            let (a, b) = (&spheres[i as usize], &spheres[j as usize]);
            let d = (b.center.as_dvec3() - a.center.as_dvec3()).length();
            let normal = (b.center.as_dvec3() - a.center.as_dvec3()) / d;
            let depth = (a.radius + b.radius) as f64 - d;
            assert!(
                (c.depth as f64 - depth).abs() < 1e-5,
                "{name}: [{i}, {j}] {c:?}"
            );
            assert!(
                (c.normal.as_dvec3() - normal).length() < 1e-5,
                "{name}: [{i}, {j}]"
            );
        }
        assert_contacts_as_cpu(&mut *narrow, &boxes, &touching, &want, name);
        assert_contacts_as_cpu(&mut *narrow, &polygons, &polygon_pairs, &polygon_want, name);
    }
}

/// `narrow`'s contacts of `pairs` of `shapes` are `want` (the CPU's) within the tolerance
/// (`compare_contacts`: no pair wrong).
fn assert_contacts_as_cpu<S: ContactShape>(
    narrow: &mut dyn NarrowPhase,
    shapes: &[S],
    pairs: &[Pair],
    want: &[Contact],
    name: &str,
) where
    for<'a> Shapes<'a>: From<&'a [S]>,
{
    let mut got = Vec::new();
    narrow
        .contacts(Shapes::from(shapes), pairs, &mut got)
        .unwrap();
    let check = compare_contacts(shapes, pairs, &got, want);
    assert_eq!(
        (check.pairs, check.wrong),
        (pairs.len(), 0),
        "{name}: {check:?}"
    );
}

/// No shapes and no candidates: no pairs and no contacts, not an error, on every call.
#[test]
fn no_shapes_are_no_pairs_and_no_contacts() {
    for (name, mut narrow) in backends() {
        let mut pairs = vec![[0, 1]];
        let stats = narrow
            .pairs(Shapes::Obbs(&[]), &[], Some(&mut pairs))
            .unwrap();
        assert!(pairs.is_empty() && stats.pairs == 0, "{name}");
        pairs.push([0, 1]);
        narrow
            .pairs(Shapes::Polygons(&[]), &[], Some(&mut pairs))
            .unwrap();
        assert!(pairs.is_empty(), "{name}");
        let mut contacts = vec![Contact::default()];
        narrow
            .contacts(Shapes::Spheres(&[]), &[], &mut contacts)
            .unwrap();
        assert!(contacts.is_empty(), "{name}");
        contacts.push(Contact::default());
        narrow
            .contacts(Shapes::Obbs(&[]), &[], &mut contacts)
            .unwrap();
        assert!(contacts.is_empty(), "{name}");
        contacts.push(Contact::default());
        narrow
            .contacts(Shapes::Polygons(&[]), &[], &mut contacts)
            .unwrap();
        assert!(contacts.is_empty(), "{name}");
    }
}

#[test]
fn bad_candidates_and_shapes_are_refused_alike() {
    let boxes = random_boxes(10, 3);
    let polygons = generate_polygons(SceneKind::Density, &SceneParams::new(10, 3)).unwrap();
    let spheres = [sweepfan::Sphere::new(Vec3::ZERO, 1.0); 3];
    let mut nan_box = boxes.clone();
    nan_box[4].center.y = f32::NAN;
    for (name, mut narrow) in backends() {
        let invalid = |e: Error, words: &str| {
            assert!(
                matches!(e, Error::InvalidArgument { .. }) && e.to_string().contains(words),
                "{name}: {e}"
            );
        };
        let mut out = vec![[1, 2]];
        invalid(
            narrow
                .pairs(Shapes::Obbs(&boxes), &[[0, 1], [3, 10]], Some(&mut out))
                .unwrap_err(),
            "[3, 10]",
        );
        assert!(out.is_empty(), "{name}: a refused call leaves no pairs");
        invalid(
            narrow
                .pairs(Shapes::Obbs(&boxes), &[[5, 5]], None)
                .unwrap_err(),
            "with itself",
        );
        invalid(
            narrow
                .pairs(Shapes::Polygons(&polygons), &[[2, 11]], None)
                .unwrap_err(),
            "[2, 11]",
        );
        invalid(
            narrow
                .pairs(Shapes::Polygons(&polygons), &[[7, 7]], Some(&mut out))
                .unwrap_err(),
            "with itself",
        );
        let e = narrow
            .pairs(Shapes::Obbs(&nan_box), &[[0, 1]], None)
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidObject { index: 4, .. }),
            "{name}: {e}"
        );
        let mut contacts = vec![Contact::default()];
        invalid(
            narrow
                .contacts(Shapes::Spheres(&spheres), &[[0, 1], [2, 2]], &mut contacts)
                .unwrap_err(),
            "with itself",
        );
        assert!(
            contacts.is_empty(),
            "{name}: a refused call leaves no contacts"
        );
        invalid(
            narrow
                .contacts(Shapes::Obbs(&boxes), &[[0, 10]], &mut contacts)
                .unwrap_err(),
            "[0, 10]",
        );
        invalid(
            narrow
                .pairs(Shapes::Spheres(&spheres), &[[0, 3]], Some(&mut out))
                .unwrap_err(),
            "[0, 3]",
        );
        let mut nan_sphere = spheres;
        nan_sphere[1].radius = f32::NAN;
        let e = narrow
            .pairs(Shapes::Spheres(&nan_sphere), &[[0, 2]], Some(&mut out))
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidObject { index: 1, .. }) && out.is_empty(),
            "{name}: {e}"
        );
    }
}
