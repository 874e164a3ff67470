//! The grid's unit tests: cells, coherence, wide scenes, giants.
use super::frame::cell_axis;
use super::*;
use crate::broadphase::{BroadPhase, canonicalize};
use crate::geom::test_util::real_floor;
use crate::test_scenes::{Scene, SceneKind, SceneParams, vec3_in};
use glam::Vec3;

/// `got` (any order) is exactly brute force's pairs of `spheres`.
fn assert_brute_force_pairs(spheres: &[Sphere], mut got: Vec<Pair>, what: &str) {
    let mut want = Vec::new();
    crate::cpu::BruteForce::new()
        .find_pairs(spheres, Some(&mut want))
        .unwrap();
    canonicalize(&mut got);
    canonicalize(&mut want);
    assert_eq!(got, want, "{what}");
}

/// The coherent start gives the rows, tests and pairs of a sort from scratch on every
/// frame: with slow movers (the insertion path) and the density scene's fast ones (which
/// fall back to the radix sort).
#[test]
fn coherent_frames_equal_sorting_from_scratch() {
    for slow in [true, false] {
        let mut scene = Scene::generate(SceneKind::Density, &SceneParams::new(20_000, 5));
        if slow {
            for v in &mut scene.velocities {
                *v *= 0.02;
            }
        }
        let (mut coherent, mut scratch) = (Grid::new(), Grid::new());
        coherent.set_coherent(true);
        scratch.rows_forbidden = true;
        for frame in 0..8 {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let sa = coherent.find_pairs(&scene.spheres, Some(&mut a)).unwrap();
            let sb = scratch.find_pairs(&scene.spheres, Some(&mut b)).unwrap();
            canonicalize(&mut a);
            canonicalize(&mut b);
            assert_eq!(a, b, "slow {slow}, frame {frame}");
            assert_eq!(sa.tests, sb.tests);
            // The same rows with the same objects (the radix sort leaves short rows in index
            // order, the insertion puts every row in x order).
            assert_eq!(
                coherent.row_table.keys, scratch.row_table.keys,
                "slow {slow}, frame {frame}"
            );
            assert_eq!(coherent.row_table.start, scratch.row_table.start);
            let rows_sorted = |g: &Grid| {
                let mut keys = g.keys.clone();
                for w in g.row_table.start.windows(2) {
                    keys[w[0] as usize..w[1] as usize].sort_unstable();
                }
                keys
            };
            assert_eq!(rows_sorted(&coherent), rows_sorted(&scratch));
            scene.step();
        }
        // Slow movers take the insertion on every frame after the first; fast ones never
        // get there within the budget.
        assert_eq!(
            coherent.insertion_frames,
            if slow { 7 } else { 0 },
            "slow {slow}"
        );
        assert_eq!(scratch.insertion_frames, 0);
    }
}

/// Below 2^24 cells the cell is the floor of the real quotient, for both signs, at centres one
/// or two ULP either side of cell walls over a wide range of sides, on both sides of 2^20 (the
/// fast path's end): against a product search in f64 (`k s` exact for `k < 2^29`).
#[test]
fn cells_are_the_real_floor_at_walls() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let mut checked = 0;
    while checked < 200_000 {
        let s = 10f32.powf(rng.random_range(-29.0..17.0)) * rng.random_range(1.0..2.0);
        let k: u32 = match rng.random_range(0..4) {
            0 => rng.random_range(0..4),
            1 => rng.random_range(0..1 << 20),
            2 => (1 << 20) + rng.random_range(0..3) - 1,
            _ => rng.random_range(0..1 << 24),
        };
        let wall = (k as f64 * s as f64) as f32;
        let ulps: i64 = rng.random_range(-2..=2);
        let mut c = f32::from_bits((wall.to_bits() as i64 + ulps).max(0) as u32);
        if rng.random_bool(0.5) {
            c = -c;
        }
        if !c.is_finite() || !s.is_normal() || (c.abs() as f64) >= s as f64 * 16_777_216.0 {
            continue;
        }
        let want = real_floor(c, s);
        assert_eq!(
            cell_axis(c, s, 1.0 / s as f64) as i64,
            want,
            "c {c:e}, s {s:e}"
        );
        checked += 1;
    }
}

/// On a scene within 2^20 cells of zero (`GridFrame::near`) a whole centre's cell (two axes at a
/// time on x86-64) is the real floor per axis, as `cell_axis` is: at centres within 2 ULP of
/// cell walls (against an f64 product search), both
/// signs, sides over the whole normal range, up to the fast region's edge; and a scene's frame
/// says `near` exactly when its largest coordinate is below 2^20 cells.
#[test]
fn near_scenes_get_the_same_cells_whole_centre_at_a_time() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    #[cfg(target_arch = "x86_64")]
    let mut eight_at_once = 0;
    for _ in 0..100_000 {
        let s = 10f32.powf(rng.random_range(-30.0..30.0)) * rng.random_range(1.0..2.0);
        if !s.is_normal() || !(s as f64 * 1_048_576.0).is_finite() {
            continue;
        }
        let coordinate = |rng: &mut rand_chacha::ChaCha8Rng| {
            let k: u32 = match rng.random_range(0..3) {
                0 => rng.random_range(0..4),
                1 => rng.random_range(0..1 << 20),
                _ => (1 << 20) - rng.random_range(1..3),
            };
            let wall = (k as f64 * s as f64) as f32;
            let ulps: i64 = rng.random_range(-2..=2);
            let c = f32::from_bits((wall.to_bits() as i64 + ulps).max(0) as u32);
            if rng.random_bool(0.5) { -c } else { c }
        };
        let center = Vec3::new(
            coordinate(&mut rng),
            coordinate(&mut rng),
            coordinate(&mut rng),
        );
        if center.abs().max_element() as f64 >= s as f64 * frame::FAST_CELLS {
            continue;
        }
        // An estimate off by up to 2^-10 cells (a perturbed reciprocal) on half the centres:
        // the exact corrections must then move walls' neighbours back (with the true
        // reciprocal they are almost never needed).
        let skew = [0.0, 1.0, -1.0][rng.random_range(0..3)] * 2f64.powi(-30);
        let f = GridFrame {
            min_cell: [0; 3],
            cell_side: s,
            inverse_side: (1.0 + skew) / s as f64,
            max_cell: [0; 3],
            giant_split: 255,
            near: true,
            valid: true,
        };
        let want = center.to_array().map(|c| real_floor(c, s) as i32);
        let inv = f.inverse_side;
        let scalar = [
            cell_axis(center.x, s, inv),
            cell_axis(center.y, s, inv),
            cell_axis(center.z, s, inv),
        ];
        assert_eq!(scalar, want, "centre {center:?}, side {s:e}, skew {skew:e}");
        assert_eq!(
            f.absolute_cell(center),
            want,
            "centre {center:?}, side {s:e}, skew {skew:e}"
        );
        assert_eq!(
            f.centre_cell(center),
            want,
            "centre {center:?}, side {s:e}, skew {skew:e}, two axes at a time"
        );
        // Eight at a time, the centre in any lane (the others at the origin, cell 0).
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            let lane = rng.random_range(0..8);
            let mut eight = [Sphere::new(Vec3::ZERO, 1.0); 8];
            eight[lane].center = center;
            // SAFETY: AVX-512F and VL are present.
            let cells = unsafe { f.cells8(&eight) };
            for (k, got) in (0..8).map(|k| (k, cells.map(|axis| axis[k] as i32))) {
                let want = if k == lane { want } else { [0; 3] };
                assert_eq!(got, want, "lane {k} of 8, centre {center:?}, side {s:e}");
            }
            eight_at_once += 1;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512vl") {
        assert!(eight_at_once > 10_000);
    }
    // The frame's flag: the paper box is near; a scene reaching 2^20 cells is not.
    let mut spheres = vec![Sphere::new(Vec3::ZERO, 0.5), Sphere::new(Vec3::ONE, 0.5)];
    assert!(GridFrame::of(&spheres).near);
    spheres[1].center.y = -1_048_576.0;
    assert!(!GridFrame::of(&spheres).near);
    spheres[1].center.y = -1_048_575.0;
    assert!(GridFrame::of(&spheres).near);
}

/// Cells are monotone, and a coordinate and the largest f32 at most `s` above it are at most
/// one cell apart (so any two within `s` are): walked over runs of consecutive values on both
/// sides of zero, of the exact region's walls and of the 2^24 s boundary, for several sides.
/// Beyond the boundary each value is a new cell.
#[test]
fn cells_are_monotone_and_adjacent_everywhere() {
    let sign_cell = |c: f32, sign: f32, s: f32| cell_axis(sign * c, s, 1.0 / s as f64) as i64;
    for s in [1.0f32, 0.3, 2e-30, 7.5e17, 1.0e-3] {
        for start in [0.0f32, s * 3.0, s * 1_048_576.0, s * 16_777_216.0, s * 1e9] {
            for sign in [1.0f32, -1.0] {
                let mut c = f32::from_bits(start.to_bits().saturating_sub(3000));
                let mut prev = sign_cell(c, sign, s);
                for _ in 0..6000 {
                    let next = f32::from_bits(c.to_bits() + 1);
                    let cell = sign_cell(next, sign, s);
                    let step = (cell - prev) * sign as i64;
                    assert!(step >= 0, "s {s:e}, c {next:e}: {prev} -> {cell}");
                    if c >= s * 16_777_216.0 {
                        assert_eq!(step, 1, "one cell per value beyond 2^24 s");
                    }
                    // The largest value within s above `next`, and its cell.
                    let reach = next as f64 + s as f64;
                    let mut up = reach as f32;
                    if up as f64 > reach {
                        up = f32::from_bits(up.to_bits() - 1);
                    }
                    let gap = (sign_cell(up, sign, s) - cell) * sign as i64;
                    assert!(
                        gap <= 1,
                        "s {s:e}, c {next:e} and {up:e}: {gap} cells apart"
                    );
                    (c, prev) = (next, cell);
                }
            }
        }
        // Beyond 2^24 s, consecutive values are more than s apart.
        let far = s * 16_777_216.0;
        assert!(f32::from_bits(far.to_bits() + 1) - far > s);
    }
    // Any finite centres fit the relative cells in 32 bits.
    let s = f32::MIN_POSITIVE;
    let (lo, hi) = (
        cell_axis(-f32::MAX, s, 1.0 / s as f64),
        cell_axis(f32::MAX, s, 1.0 / s as f64),
    );
    assert!((hi as i64 - lo as i64) < 1 << 32);
}

/// A scene wider than 2^20 cells per axis (the old clamp): sparse spheres over a cube of
/// side 2e7 around a few dense clusters, one straddling zero. The grid finds brute force's
/// pairs with a test count near sap's, not the hundreds of millions of the clamp.
#[test]
fn a_wide_scene_keeps_its_cells_apart() {
    use crate::cpu::Sap;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let mut spheres = Vec::new();
    for _ in 0..6000 {
        let c = vec3_in(&mut rng, -1e7..1e7);
        spheres.push(Sphere::new(c, 0.5));
    }
    for centre in [Vec3::ZERO, Vec3::splat(9.9e6), Vec3::new(-4e6, 3e6, 1e3)] {
        for _ in 0..2000 {
            let d = vec3_in(&mut rng, -20.0..20.0);
            spheres.push(Sphere::new(centre + d, rng.random_range(0.05..0.5)));
        }
    }
    let mut grid = Vec::new();
    let stats = Grid::new().find_pairs(&spheres, Some(&mut grid)).unwrap();
    assert_brute_force_pairs(&spheres, grid, "");
    let sap = Sap::new().find_pairs(&spheres, None).unwrap();
    assert!(
        stats.tests < 3 * sap.tests.max(1000),
        "grid {} sap {}",
        stats.tests,
        sap.tests
    );
}

#[test]
fn bounded_insertion_sorts_or_gives_up() {
    let mut k = vec![1u64, 5, 3, 4, 2];
    assert!(insertion_sort_bounded(&mut k, 10));
    assert_eq!(k, [1, 2, 3, 4, 5]);
    let mut r: Vec<u64> = (0..100).rev().collect();
    assert!(!insertion_sort_bounded(&mut r, 50));
    r.sort_unstable();
    assert_eq!(r, (0..100).collect::<Vec<u64>>());
}

/// One giant among 20,000 paper-box spheres (the giant scene): set aside, the cells stay
/// 4 wide; the pairs are brute force's and the tests stay near those of the scene without it
/// plus what the giant reaches (before: cells 80 wide, about n^2 / 4 tests).
#[test]
fn a_giant_does_not_set_the_cell_side() {
    let scene = Scene::generate(SceneKind::Giant, &SceneParams::new(20_000, 3));
    let mut got = Vec::new();
    let mut grid = Grid::new();
    let stats = grid.find_pairs(&scene.spheres, Some(&mut got)).unwrap();
    assert_eq!(grid.giants.len(), 1);
    assert_eq!(grid.frame.unwrap().cell_side, 4.0);
    assert_brute_force_pairs(&scene.spheres, got, "");
    let without = Grid::new()
        .find_pairs(&scene.spheres[..19_999], None)
        .unwrap();
    assert!(
        stats.tests <= without.tests + 20_000,
        "{} tests, {} without the giant",
        stats.tests,
        without.tests
    );
}

/// Giants of several sizes in a density scene, on both layouts (dense and sparse) and with
/// giants touching giants: the pairs are sap's (exact), and giant pairs are tested once.
#[test]
fn giants_on_both_layouts_match_sap() {
    use crate::cpu::Sap;
    // Where whole blocks pay, the paper box takes the dense rows first.
    let paper = match super::span::avx512() {
        true => Layout::Rows,
        false => Layout::Cells,
    };
    for (kind, n, layout, rows_forbidden) in [
        (SceneKind::Paper, 5000usize, paper, false),
        (SceneKind::Paper, 5000usize, Layout::Cells, true),
        (SceneKind::Density, 30_000, Layout::Rows, false),
        (SceneKind::Density, 30_000, Layout::Sparse, true),
    ] {
        let mut scene = Scene::generate(kind, &SceneParams::new(n, 8)).spheres;
        let half = scene.iter().map(|s| s.center.x).fold(0.0f32, f32::max);
        for (k, r) in [40.0f32, 40.0, 90.0, 9.0, 300.0].into_iter().enumerate() {
            let c = Vec3::new(half * 0.1 * k as f32, -half * 0.05 * k as f32, 0.0);
            scene[k * 17] = Sphere::new(c, r);
        }
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut grid = Grid::new();
        grid.rows_forbidden = rows_forbidden;
        grid.find_pairs(&scene, Some(&mut got)).unwrap();
        assert_eq!(grid.giants.len(), 5, "{kind:?}");
        assert_eq!(grid.layout, layout);
        Sap::new().find_pairs(&scene, Some(&mut want)).unwrap();
        canonicalize(&mut got);
        canonicalize(&mut want);
        assert_eq!(got, want, "{kind:?}");
    }
}

/// The grid's test count by its definition, all pairs: pairs whose cells (per axis, `cell`)
/// differ by at most one on every axis (no giants).
fn neighbour_pairs(spheres: &[Sphere], cell: impl Fn(f32) -> i64) -> u64 {
    let cells: Vec<[i64; 3]> = spheres
        .iter()
        .map(|s| s.center.to_array().map(&cell))
        .collect();
    let mut pairs = 0;
    for (i, a) in cells.iter().enumerate() {
        for b in &cells[i + 1..] {
            pairs += u64::from((0..3).all(|k| (a[k] - b[k]).abs() <= 1));
        }
    }
    pairs
}

/// Crowded cells on both layouts (every neighbour run many of the dense walk's four-lane blocks
/// long, and rows far longer than the sparse walk's 16-lane window), against brute
/// force: pairs and the test count of the definition (pairs of objects whose cells differ by
/// at most one per axis, counted here directly from the cells).
#[test]
fn crowded_cells_match_brute_force_on_both_layouts() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    // 1500 spheres of radius 0.5 (cells of side 1) in a 3 x 3 x 3 cube: ~55 per cell, dense;
    // then the same crowd plus two far outliers (cells beyond the dense limit), sparse.
    let mut spheres: Vec<Sphere> = (0..1500)
        .map(|_| {
            let c = vec3_in(&mut rng, 0.0..3.0);
            Sphere::new(c, rng.random_range(0.1..0.5))
        })
        .collect();
    spheres[7].radius = 0.5;
    for dense in [true, false] {
        if !dense {
            spheres.push(Sphere::new(Vec3::splat(1e5), 0.5));
            spheres.push(Sphere::new(Vec3::new(-1e5, 2e5, 1.0), 0.5));
        }
        let mut got = Vec::new();
        let mut grid = Grid::new();
        let stats = grid.find_pairs(&spheres, Some(&mut got)).unwrap();
        let layout = if dense { Layout::Cells } else { Layout::Sparse };
        assert_eq!(grid.layout, layout);
        assert_brute_force_pairs(&spheres, got, &format!("dense {dense}"));
        // Cells of side 1 (the largest radius is 0.5): floor of each coordinate.
        let tests = neighbour_pairs(&spheres, |c| c.floor() as i64);
        assert_eq!(stats.tests, tests, "dense {dense}");
    }
}

/// Short rows (index order, matched by windows) beside long rows (x order, walked by
/// pointers), on the sparse layout, against brute force: each row of an 8 x 8 block holds 1
/// to 40 objects, so short own rows meet long forward rows and the other way round.
#[test]
fn short_and_long_rows_side_by_side_match_brute_force() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    for round in 0..4 {
        let mut spheres = Vec::new();
        for y in 0..8 {
            for z in 0..8 {
                let count = if (y + z + round) % 3 == 0 {
                    rng.random_range(17..40)
                } else {
                    rng.random_range(1..10)
                };
                for _ in 0..count {
                    let c = Vec3::new(
                        rng.random_range(0.0..30.0),
                        y as f32 + rng.random_range(0.0..1.0),
                        z as f32 + rng.random_range(0.0..1.0),
                    );
                    spheres.push(Sphere::new(c, rng.random_range(0.2..0.5)));
                }
            }
        }
        spheres.push(Sphere::new(Vec3::new(1e5, -1e5, 3e4), 0.5));
        let mut got = Vec::new();
        let mut grid = Grid::new();
        let stats = grid.find_pairs(&spheres, Some(&mut got)).unwrap();
        assert_eq!(grid.layout, Layout::Sparse);
        let lengths: Vec<u32> = grid
            .row_table
            .start
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        assert!(lengths.iter().any(|&l| l as usize > WINDOW));
        assert!(lengths.iter().any(|&l| l > 1 && l as usize <= WINDOW));
        assert_brute_force_pairs(&spheres, got, &format!("round {round}"));
        // The definition's count, from the cells (side: twice the largest radius drawn).
        let side = 2.0 * spheres.iter().map(|s| s.radius).fold(0.0f32, f32::max);
        let tests = neighbour_pairs(&spheres, |c| cell_axis(c, side, 1.0 / side as f64) as i64);
        assert_eq!(stats.tests, tests, "round {round}");
    }
}

/// `spheres` on the dense rows and on the sparse layout: both find brute force's pairs (sap's
/// above `exact_max` objects) and the definition's test count (`cell`, when given).
fn assert_rows_layout_exact(spheres: &[Sphere], cell: Option<&dyn Fn(f32) -> i64>, what: &str) {
    let mut want = Vec::new();
    if spheres.len() <= 5000 {
        crate::cpu::BruteForce::new()
            .find_pairs(spheres, Some(&mut want))
            .unwrap();
    } else {
        crate::cpu::Sap::new()
            .find_pairs(spheres, Some(&mut want))
            .unwrap();
    }
    canonicalize(&mut want);
    let mut tests = Vec::new();
    for (forbidden, layout) in [(false, Layout::Rows), (true, Layout::Sparse)] {
        let mut got = Vec::new();
        let mut grid = Grid::new();
        grid.rows_forbidden = forbidden;
        let stats = grid.find_pairs(spheres, Some(&mut got)).unwrap();
        assert_eq!(grid.layout, layout, "{what}");
        canonicalize(&mut got);
        assert_eq!(got, want, "{what}, {layout:?}");
        assert_eq!(stats.pairs, want.len() as u64);
        tests.push(stats.tests);
    }
    assert_eq!(tests[0], tests[1], "{what}: tests on both layouts");
    if let Some(cell) = cell {
        assert_eq!(
            tests[0],
            neighbour_pairs(spheres, cell),
            "{what}: definition"
        );
    }
}

/// The dense rows on density scenes (serial below 2^14 objects, in chunks above) and on rows
/// of every length from empty to the longest it takes, at the edges of the grid in y and z:
/// runs of up to six 32-lane blocks (three rows of 64), lanes past a run's end, the padding
/// rows. Pairs as brute force, tests as the definition and as the sparse layout.
#[test]
fn dense_rows_match_brute_force_and_the_sparse_layout() {
    use rand::{Rng, SeedableRng};
    for (n, seed) in [(4000usize, 41u64), (40_000, 42)] {
        let scene = Scene::generate(SceneKind::Density, &SceneParams::new(n, seed));
        let side = 2.0
            * scene
                .spheres
                .iter()
                .map(|s| s.radius)
                .fold(0.0f32, f32::max);
        let cell = move |c: f32| cell_axis(c, side, 1.0 / side as f64) as i64;
        let definition: Option<&dyn Fn(f32) -> i64> = (n <= 5000).then_some(&cell);
        assert_rows_layout_exact(&scene.spheres, definition, &format!("density {n}"));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(43);
    for round in 0..3 {
        // Rows (y, z) of 12 x 12 cells of side 1, each holding 0 to 64 objects (64 in the
        // corners), x over 200 cells: too many cells for the dense cells, few rows.
        let mut spheres = vec![Sphere::new(Vec3::new(0.5, 0.5, 0.5), 0.5)];
        for y in 0..12 {
            for z in 0..12 {
                let corner = (y == 0 || y == 11) && (z == 0 || z == 11);
                let count = match (corner, (y * 12 + z + round) % 4) {
                    (true, _) => 63,
                    (_, 0) => 0,
                    (_, 1) => rng.random_range(40..=64),
                    _ => rng.random_range(1..20),
                };
                for _ in 0..count {
                    let x = match round {
                        // Crowded in x: runs full of neighbours.
                        0 => rng.random_range(0.0..6.0),
                        _ => rng.random_range(0.0..200.0),
                    };
                    let c = Vec3::new(
                        x,
                        y as f32 + rng.random_range(0.0..1.0),
                        z as f32 + rng.random_range(0.0..1.0),
                    );
                    spheres.push(Sphere::new(c, rng.random_range(0.2..0.5)));
                }
            }
        }
        if round == 0 {
            // Wide enough in x that the dense cells do not take it.
            spheres.push(Sphere::new(Vec3::new(1000.0, 5.0, 5.0), 0.3));
        }
        let cell = |c: f32| c.floor() as i64;
        assert_rows_layout_exact(&spheres, Some(&cell), &format!("rows, round {round}"));
    }
}

/// Crowded scenes with short rows (the paper box) take the dense rows first where whole blocks
/// pay, and test whole blocks (runs of one block and of several): pairs as brute force, tests
/// as the definition, at scales where the squares of touching pairs need rescaling too: the
/// paper box at 2^-50 with every third radius 2^-12 of the rest (cells of 2^-48, the whole
/// blocks taken, the small pairs' lanes undecided), and below 2^-50 cells (1e-16, a lattice of
/// exact contacts at 2^-98, where every square underflows), which the rows leave to
/// `Sphere::touches` one candidate at a time.
#[test]
fn crowded_rows_test_whole_blocks_exactly() {
    use rand::{Rng, SeedableRng};
    let pays = super::span::avx512();
    let mut scenes = Vec::new();
    for (n, scale) in [(3000usize, 1.0f32), (5000, 1e-16), (6000, 1.0)] {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 44)).spheres;
        let spheres: Vec<Sphere> = scene
            .iter()
            .map(|s| Sphere::new(s.center * scale, s.radius * scale))
            .collect();
        scenes.push((format!("paper {n} at scale {scale}"), spheres, 4.0 * scale));
    }
    let small = 2f32.powi(-50);
    let mixed: Vec<Sphere> = Scene::generate(SceneKind::Paper, &SceneParams::new(5000, 46))
        .spheres
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let r = if i % 3 != 0 {
                s.radius
            } else {
                s.radius / 4096.0
            };
            Sphere::new(s.center * small, r * small)
        })
        .collect();
    scenes.push((
        "paper 5000 at 2^-50, radii mixed".into(),
        mixed,
        4.0 * small,
    ));
    // A third of the sites of a 24^3 lattice, radius 0.5: neighbours touch exactly.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
    let lattice: Vec<Sphere> = (0..24 * 24 * 24)
        .filter(|_| rng.random_range(0..3) == 0)
        .map(|i| Vec3::new((i % 24) as f32, (i / 24 % 24) as f32, (i / 576) as f32))
        .map(|c| Sphere::new(c, 0.5))
        .collect();
    // The same at scale 2^-98: every square underflows, each lane's verdict is the rescaled
    // rule's (the undecided lanes of `touch`).
    let tiny = 2f32.powi(-98);
    let scaled = lattice
        .iter()
        .map(|s| Sphere::new(s.center * tiny, s.radius * tiny))
        .collect();
    scenes.push(("lattice".into(), lattice, 1.0));
    scenes.push(("lattice at 2^-98".into(), scaled, tiny));
    for (what, spheres, side) in scenes {
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut grid = Grid::new();
        let stats = grid.find_pairs(&spheres, Some(&mut got)).unwrap();
        let crowd = pays && side >= 2f32.powi(-50);
        assert_eq!(grid.layout == Layout::Rows, crowd, "{what}");
        assert_eq!(grid.rows_grid.crowded(), crowd, "{what}");
        crate::cpu::BruteForce::new()
            .find_pairs(&spheres, Some(&mut want))
            .unwrap();
        canonicalize(&mut got);
        canonicalize(&mut want);
        assert!(
            want.len() > spheres.len() / 4,
            "{what}: {} pairs",
            want.len()
        );
        assert_eq!(got, want, "{what}");
        let cell = |c: f32| cell_axis(c, side, 1.0 / side as f64) as i64;
        assert_eq!(stats.tests, neighbour_pairs(&spheres, cell), "{what}");
    }
}

/// Scenes the dense rows leave to the sparse layout: a row longer than it takes (a line),
/// more rows than objects allow (a wide scene), cells x beyond 16 bits. Each still exact.
#[test]
fn dense_rows_leave_long_rows_and_wide_scenes_to_the_sparse_layout() {
    let line: Vec<Sphere> = (0..3000)
        .map(|i| Sphere::new(Vec3::new(i as f32 * 0.9, 0.0, 0.0), 0.5))
        .collect();
    let mut spread: Vec<Sphere> = (0..3000)
        .map(|i| {
            let f = i as f32;
            Sphere::new(Vec3::new(f * 7.0 % 300.0, f * 13.0 % 900.0, f * 0.3), 0.5)
        })
        .collect();
    let mut long_x = spread.clone();
    long_x.push(Sphere::new(Vec3::new(70_000.0, 0.0, 0.0), 0.5));
    spread.push(Sphere::new(Vec3::new(0.0, 0.0, 0.0), 0.5));
    for (spheres, what) in [(&line, "line"), (&spread, "spread"), (&long_x, "long x")] {
        let mut got = Vec::new();
        let mut grid = Grid::new();
        grid.find_pairs(spheres, Some(&mut got)).unwrap();
        assert_eq!(grid.layout, Layout::Sparse, "{what}");
        assert_brute_force_pairs(spheres, got, what);
    }
}
