use super::*;
use glam::Vec3;

fn lattice(side: usize, spacing: f32, radius: f32) -> Vec<Sphere> {
    let mut out = Vec::new();
    for z in 0..side {
        for y in 0..side {
            for x in 0..side {
                let c = Vec3::new(x as f32, y as f32, z as f32) * spacing;
                out.push(Sphere::new(c, radius));
            }
        }
    }
    out
}

/// Every pair of `spheres` whose cells (side `2 r`, floors) differ by at most one per axis,
/// counted pair by pair.
fn neighbour_pairs_by_hand(spheres: &[Sphere], r: f32) -> u64 {
    let cell = |s: &Sphere| s.center.to_array().map(|c| (c / (2.0 * r)).floor() as i64);
    let mut pairs = 0;
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            let (a, b) = (cell(&spheres[i]), cell(&spheres[j]));
            pairs += u64::from((0..3).all(|k| (a[k] - b[k]).abs() <= 1));
        }
    }
    pairs
}

#[test]
fn a_sparse_lattice_has_no_grid_pairs_and_sweeps_its_planes() {
    // 10^3 spheres of radius 1, 10 apart: no two share or neighbour a cell; on x (the first
    // axis of largest spread) the 100 spheres of each plane x = const overlap.
    let s = survey(&lattice(10, 10.0, 1.0));
    assert_eq!((s.n, s.sampled), (1000, 1000));
    assert_eq!(s.grid_pairs, 0.0);
    assert_eq!(s.cell_occupancy, 1.0);
    assert_eq!(s.sweep_pairs, 10.0 * (100.0 * 99.0 / 2.0));
    assert_eq!((s.radius, s.median_radius, s.giants), (1.0, 1.0, 0));
    // The box spans 90 / 2 + 1 = 46 cells per axis.
    assert_eq!(s.cells_per_object, 46.0f64.powi(3) / 1000.0);
}

#[test]
fn a_dense_lattice_counts_neighbour_cells_as_the_grid_does() {
    // Spacing 1.5, radius 1 (cells of side 2): cells hold 1 or 2 spheres per axis.
    let spheres = lattice(8, 1.5, 1.0);
    let s = survey(&spheres);
    assert_eq!(s.grid_pairs, neighbour_pairs_by_hand(&spheres, 1.0) as f64);
    // 8 positions per axis fall in 6 cells: 0, 0 | 1 | 2, 2 | 3 | 4, 4 | 5 -> 8^3 / 6^3.
    assert!((s.cell_occupancy - 512.0 / 216.0).abs() < 1e-12);
}

#[test]
fn a_sample_scales_to_the_whole_scene() {
    // 4 x SAMPLE_MAX spheres at one point: every pair is a neighbour and overlaps on every
    // axis; the sample's pairs scale to n (n - 1) / 2 exactly.
    let n = 4 * SAMPLE_MAX;
    let s = survey(&vec![Sphere::new(Vec3::ONE, 0.5); n]);
    // Draws that repeat an index are dropped: fewer than SAMPLE_MAX, scaled by their count.
    assert!(
        s.sampled <= SAMPLE_MAX && s.sampled > SAMPLE_MAX / 2,
        "{}",
        s.sampled
    );
    let all = n as f64 * (n as f64 - 1.0) / 2.0;
    assert!((s.grid_pairs / all - 1.0).abs() < 1e-9, "{}", s.grid_pairs);
    assert!(
        (s.sweep_pairs / all - 1.0).abs() < 1e-9,
        "{}",
        s.sweep_pairs
    );
}

#[test]
fn a_sample_sees_clusters_listed_one_after_another() {
    // 32,768 spheres in clusters of 64 listed consecutively, the clusters 100 apart: a stride
    // of n / 2048 = 16 would take 4 of each cluster, a stride of 64 one; a random sample
    // estimates the C(64, 2) = 2016 neighbour pairs a cluster within a factor of two.
    let mut spheres = Vec::new();
    for cluster in 0..512 {
        let at = Vec3::new(
            (cluster % 8) as f32,
            (cluster / 8 % 8) as f32,
            (cluster / 64) as f32,
        );
        for k in 0..64 {
            let jitter = Vec3::new((k % 4) as f32, (k / 4 % 4) as f32, (k / 16) as f32) * 0.1;
            spheres.push(Sphere::new(at * 100.0 + jitter, 1.0));
        }
    }
    let s = survey(&spheres);
    let exact = 512.0 * 2016.0;
    assert!(
        s.grid_pairs > exact / 2.0 && s.grid_pairs < exact * 2.0,
        "{}",
        s.grid_pairs
    );
}

#[test]
fn giants_are_set_aside_from_the_cell_radius() {
    let mut spheres = lattice(10, 10.0, 1.0);
    spheres[500].radius = 40.0;
    let s = survey(&spheres);
    assert_eq!((s.giants, s.radius), (1, 1.0));
    // The giant counts as reaching every sampled object.
    assert_eq!(s.grid_pairs, 1000.0);
}

#[test]
fn the_rule_prices_each_method() {
    let costs = Costs {
        grid: (10.0, 1.0),
        grid_spread_object: 40.0,
        sap: (20.0, 1.0),
        x: (15.0, 1.0),
        brute_force: (0.0, 1.0),
    };
    let survey = |n: usize, grid_pairs: f64, sweep_pairs: f64, x_pairs: f64| Survey {
        n,
        sampled: n,
        radius: 1.0,
        median_radius: 1.0,
        grid_pairs,
        sweep_pairs,
        x_pairs,
        cell_occupancy: 1.0,
        cells_per_object: 8.0,
        ..Survey::default()
    };
    // n = 1000: brute force 499,500; grid 10,000 + pairs; x 15,000 + pairs; sap 20,000 + pairs.
    let pick = |s: Survey| choose_from(&s, &costs).method;
    assert_eq!(pick(survey(1000, 100.0, 100.0, 100.0)), Method::Grid);
    assert_eq!(pick(survey(1000, 20_000.0, 100.0, 9_000.0)), Method::Sap);
    assert_eq!(pick(survey(1000, 20_000.0, 100.0, 1_000.0)), Method::X);
    // A spread scene prices the grid's objects at 40: x wins at equal candidates.
    let spread = Survey {
        cells_per_object: 2.0 * SPREAD_CELLS_PER_OBJECT,
        ..survey(1000, 100.0, 100_000.0, 100.0)
    };
    let x = choose_from(&spread, &costs);
    assert_eq!(x.method, Method::X);
    assert!(
        x.reason
            .starts_with("spread, uniform radii, 0.1 candidates on x"),
        "{}",
        x.reason
    );
    let one_point = choose_from(&survey(1000, 499_500.0, 499_500.0, 499_500.0), &costs);
    assert_eq!(one_point.method, Method::BruteForce);
    assert!(
        one_point.reason.contains("1000 objects"),
        "{}",
        one_point.reason
    );
    // Ties go to the grid.
    let tie = choose_from(
        &survey(1000, 5_000.0, 0.0, 0.0),
        &Costs {
            x: (15.0, 1.0),
            ..costs
        },
    );
    assert_eq!(tie.method, Method::Grid);
    assert_eq!(
        tie.to_string(),
        "grid (uniform radii, 1.00 spheres a cell, 5.0 tests an object)"
    );
}
