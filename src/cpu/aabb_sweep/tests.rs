use super::*;
use glam::Vec3;
use rand::{Rng, SeedableRng};

/// Large enough for the parallel radix passes: the order is the comparison sort of
/// (lower corner's column, lower bound, index), and the pairs those of a plain sweep on x.
#[test]
fn large_sets_sort_and_pair_like_the_definitions() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let n = 90_000;
    let boxes: Vec<Aabb> = (0..n)
        .map(|k| {
            let min = Vec3::new(
                rng.random_range(-300.0..300.0),
                rng.random_range(-300.0..300.0),
                rng.random_range(-300.0..300.0),
            );
            // Some giants, some negative zero lower bounds, many equal lower bounds.
            let size = if k % 5000 == 0 {
                40.0
            } else {
                rng.random_range(0.0..3.0)
            };
            let min = if k % 7 == 0 { min.floor() } else { min };
            Aabb::new(min, min + Vec3::splat(size))
        })
        .collect();
    let plan = SweepPlan::new(&boxes);
    let mut sweep = BoxSweep::new();
    sweep.plan(&boxes);
    let mut expected: Vec<u32> = (0..n as u32).collect();
    expected.sort_by_key(|&i| {
        let b = &boxes[i as usize];
        (plan.lower_column(b), ordered_bits(b.min[plan.axis]), i)
    });
    let mut order = vec![7];
    sweep.order(&boxes, &mut order);
    assert_eq!(order, expected);

    let mut by_x: Vec<usize> = (0..n).collect();
    by_x.sort_by(|&i, &j| boxes[i].min.x.total_cmp(&boxes[j].min.x));
    let mut want = Vec::new();
    for (k, &i) in by_x.iter().enumerate() {
        for &j in &by_x[k + 1..] {
            if boxes[j].min.x > boxes[i].max.x {
                break;
            }
            let (a, b) = (boxes[i], boxes[j]);
            if (1..3).all(|d| a.min[d] <= b.max[d] && b.min[d] <= a.max[d]) {
                want.push([i.min(j) as u32, i.max(j) as u32]);
            }
        }
    }
    want.sort_unstable();
    let mut got = Vec::new();
    sweep.pairs(&boxes, &mut got).unwrap();
    got.sort_unstable();
    assert!(want.len() > 1000, "{} pairs", want.len());
    assert_eq!(got, want);
}

/// All pairs of overlapping AABBs, by definition.
fn all_overlapping(boxes: &[Aabb]) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let (a, b) = (boxes[i], boxes[j]);
            if (0..3).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k]) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

/// A sweep planned for other boxes still finds exactly the pairs: a plan of narrow
/// columns used on other small boxes, then on boxes that span every column (replanned,
/// rather than entering each box into thousands of columns).
#[test]
fn a_plan_made_for_other_boxes_still_gives_exact_pairs() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let mut boxes = |n: usize, spread: f32, size: f32| -> Vec<Aabb> {
        (0..n)
            .map(|_| {
                let min = Vec3::from_array([0; 3].map(|_| rng.random_range(-spread..spread)));
                Aabb::new(min, min + Vec3::splat(rng.random_range(0.0..size)))
            })
            .collect()
    };
    let planned = boxes(3000, 50.0, 2.0);
    let others = [boxes(2000, 60.0, 3.0), boxes(400, 50.0, 120.0)];
    let mut sweep = BoxSweep::new();
    sweep.plan(&planned);
    let narrow = sweep.plan.expect("planned").columns.dims;
    for (k, set) in others.iter().enumerate() {
        let mut got = Vec::new();
        sweep.pairs(set, &mut got).unwrap();
        got.sort_unstable();
        assert_eq!(got, all_overlapping(set), "set {k}");
    }
    // The wide boxes made it plan again, with fewer columns.
    let wide = sweep.plan.expect("planned").columns.dims;
    assert!(
        wide[0] * wide[1] < narrow[0] * narrow[1],
        "{narrow:?} -> {wide:?}"
    );
    assert!(sweep.keys.len() <= 8 * 400, "{} entries", sweep.keys.len());
}

#[test]
fn matches_all_pairs_check_including_touching() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for n in [0usize, 1, 2, 50, 700, 3000] {
        let mut boxes: Vec<Aabb> = (0..n)
            .map(|_| {
                // Integer coordinates make many boxes touch exactly.
                let min = Vec3::new(
                    rng.random_range(0..20) as f32,
                    rng.random_range(0..20) as f32,
                    rng.random_range(0..4) as f32,
                );
                let size = Vec3::new(
                    rng.random_range(0..4) as f32,
                    rng.random_range(0..4) as f32,
                    rng.random_range(0..2) as f32,
                );
                Aabb::new(min, min + size)
            })
            .collect();
        if n > 2 {
            boxes[1] = boxes[0]; // a duplicate
        }
        if n == 3000 {
            // Float coordinates in a wide area, and one long box spanning many columns.
            for b in &mut boxes {
                let min = Vec3::new(
                    rng.random_range(-50.0..50.0),
                    rng.random_range(-50.0..50.0),
                    rng.random_range(-5.0..5.0),
                );
                *b = Aabb::new(min, min + Vec3::splat(rng.random_range(0.0..2.0)));
            }
            boxes[7] = Aabb::new(Vec3::new(-60.0, -1.0, -1.0), Vec3::new(60.0, 1.0, 1.0));
            // Giants (more than 1%): wider than the columns, entered into many of them.
            for g in 0..40 {
                let c = Vec3::new(g as f32 * 2.0 - 40.0, 0.0, 0.0);
                boxes[100 + g] = Aabb::new(c - Vec3::splat(15.0), c + Vec3::splat(15.0));
            }
        }
        let expected = all_overlapping(&boxes);
        let mut got = vec![[9, 9]];
        aabb_sweep(&boxes, &mut got).unwrap();
        got.sort_unstable();
        assert_eq!(got, expected, "n = {n}");
    }
}

/// The galloping search finds every run length, and the runs (the sweep's candidate tests,
/// counted one by one here) bound the pairs: the pre-check of docs/design.md §9.14.
#[test]
fn runs_are_found_by_galloping_and_bound_the_pairs() {
    for len in 0..70 {
        for run in 0..=len {
            assert_eq!(prefix_run(5, 5 + len, |i| i < 5 + run), run, "{len} {run}");
        }
    }
    assert_eq!(prefix_run(9, 3, |_| true), 0);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let boxes: Vec<Aabb> = (0..6000)
        .map(|_| {
            let min = Vec3::new(
                rng.random_range(0.0..40.0),
                rng.random_range(0.0..40.0),
                rng.random_range(0.0..40.0),
            );
            Aabb::new(min, min + Vec3::splat(rng.random_range(0.5..3.0)))
        })
        .collect();
    let mut sweep = BoxSweep::new();
    let mut pairs = Vec::new();
    sweep.pairs(&boxes, &mut pairs).unwrap();
    let (column, lo, hi) = (&sweep.column, &sweep.lo, &sweep.hi);
    let m = column.len();
    let runs: u64 = (0..m)
        .map(|a| {
            (a + 1..m)
                .take_while(|&b| column[b] == column[a] && lo[b] <= hi[a])
                .count() as u64
        })
        .sum();
    assert_eq!(candidate_bound(column, lo, hi), runs);
    assert!(!pairs.is_empty() && runs >= pairs.len() as u64, "{runs}");
    // (Refusals past a limit: cli/tests/suite/memory_limits.rs.)
}
