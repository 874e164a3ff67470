//! Sweep and prune over axis-aligned boxes: the CPU broad phase of the shapes that are not
//! spheres (oriented boxes, polygons). Sort by the lower bound on the axis where the boxes spread
//! most, then test each box against the following ones while their intervals on that axis meet.

use crate::broadphase::Pair;
use crate::geom::aabb::Aabb;
use rayon::prelude::*;

/// Every pair of overlapping (closed, so touching counts) boxes, `i < j`, appended to `out`
/// after clearing it. The order is the sweep's own.
pub fn aabb_sweep(aabbs: &[Aabb], out: &mut Vec<Pair>) {
    out.clear();
    let n = aabbs.len();
    if n < 2 {
        return;
    }
    let axis = widest_axis(aabbs);
    let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_unstable_by(|&a, &b| {
        aabbs[a as usize].min[axis].total_cmp(&aabbs[b as usize].min[axis])
    });
    // Sorted structure of arrays: the inner loop reads these sequentially.
    let lo: Vec<f32> = order.iter().map(|&i| aabbs[i as usize].min[axis]).collect();
    let hi: Vec<f32> = order.iter().map(|&i| aabbs[i as usize].max[axis]).collect();
    let rest: Vec<[f32; 4]> = order
        .iter()
        .map(|&i| {
            let b = &aabbs[i as usize];
            [b.min[o1], b.max[o1], b.min[o2], b.max[o2]]
        })
        .collect();
    out.par_extend((0..n).into_par_iter().flat_map_iter(|a| {
        let (hi_a, ra, ia) = (hi[a], rest[a], order[a]);
        let (lo, rest, order) = (&lo, &rest, &order);
        (a + 1..n)
            .take_while(move |&b| lo[b] <= hi_a)
            .filter(move |&b| {
                let rb = rest[b];
                ra[0] <= rb[1] && rb[0] <= ra[1] && ra[2] <= rb[3] && rb[2] <= ra[3]
            })
            .map(move |b| {
                let ib = order[b];
                [ia.min(ib), ia.max(ib)]
            })
    }));
}

/// The axis along which the box centres have the largest variance (fewest sweep overlaps).
fn widest_axis(aabbs: &[Aabb]) -> usize {
    let (sum, sum_sq) = aabbs
        .par_iter()
        .map(|b| {
            let c = ((b.min + b.max) * 0.5).as_dvec3();
            (c, c * c)
        })
        .reduce(
            || (glam::DVec3::ZERO, glam::DVec3::ZERO),
            |a, b| (a.0 + b.0, a.1 + b.1),
        );
    let n = aabbs.len() as f64;
    let var = sum_sq / n - (sum / n) * (sum / n);
    if var.x >= var.y && var.x >= var.z {
        0
    } else if var.y >= var.z {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};

    #[test]
    fn matches_all_pairs_check_including_touching() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for n in [0usize, 1, 2, 50, 700] {
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
            let mut expected = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    let (a, b) = (boxes[i], boxes[j]);
                    if (0..3).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k]) {
                        expected.push([i as u32, j as u32]);
                    }
                }
            }
            let mut got = vec![[9, 9]];
            aabb_sweep(&boxes, &mut got);
            got.sort_unstable();
            assert_eq!(got, expected, "n = {n}");
        }
    }
}
