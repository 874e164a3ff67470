//! sap's sweep axis (docs/design.md §2.6), one rule for the CPU's sweep, `auto`'s model of it
//! and the GPU's `sap_frame` (`shaders/sort/keys.wgsl`, the same rule word for word).
//!
//! Below [`SWEEP_SAMPLE_FROM`] objects, the axis of largest centre range (`max c[a] - min
//! c[a]`), ties to the lowest axis: the sweep's worst case stays small. From there, a strided
//! sample decides: the [`SWEEP_SAMPLE`] centres at positions `k * (n / SWEEP_SAMPLE)`, sorted on
//! each axis. The axis whose sample has the fewest pairs within reach (`c_j - c_i <= 2 r`, `r`
//! the sample's [`HI_RANK`]-th smallest radius: what the sweep would meet), then the largest interdecile range
//! (the [`LO_RANK`]-th to [`HI_RANK`]-th smallest), then the lowest axis. A few objects far out
//! on one axis set its range (one sphere a million units above a flat layer of 20,000 made sap
//! sweep across the layer: 1.8 s against the grid's 4 ms); they set neither the pairs within
//! reach nor the interdecile range. Two planes far apart on x made the interdecile range of x
//! their distance, and sap swept x, where each plane's objects all meet (4.7 s against the
//! grid's 6.6 ms at 100,000): the pairs within reach see that crowding.
//!
//! A spread is `hi - lo` in `f32`: accepted coordinates are zero or at least `MIN_MAGNITUDE`
//! (docs/design.md §9.6), so every difference is zero or normal and a device that flushes
//! subnormals computes the same spreads.

use crate::broadphase::keys::{from_ordered_bits, ordered_bits};
use crate::geom::sphere::Sphere;

/// From this many objects the spread is the sample's interdecile range.
pub(crate) const SWEEP_SAMPLE_FROM: usize = 4096;
/// Centres sampled per axis.
pub(crate) const SWEEP_SAMPLE: usize = 1024;
/// Rank (from 0) of the sample's lower decile.
pub(crate) const LO_RANK: usize = SWEEP_SAMPLE / 10;
/// Rank of the sample's upper decile.
pub(crate) const HI_RANK: usize = SWEEP_SAMPLE - 1 - SWEEP_SAMPLE / 10;

/// Centres the rule reads from a sample: none below [`SWEEP_SAMPLE_FROM`] objects (the range
/// is the extents'), else [`SWEEP_SAMPLE`].
pub(crate) fn sampled(n: usize) -> usize {
    if n < SWEEP_SAMPLE_FROM {
        0
    } else {
        SWEEP_SAMPLE
    }
}

/// The axis of largest spread, ties to the lowest.
fn widest(spread: [f32; 3]) -> usize {
    (1..3).fold(0, |a, b| if spread[b] > spread[a] { b } else { a })
}

/// sap's sweep axis of `spheres` (module docs). Centres must be finite.
pub(crate) fn sweep_axis(spheres: &[Sphere]) -> usize {
    let n = spheres.len();
    if sampled(n) == 0 {
        let (lo, hi) = crate::geom::sphere::lane_bounds(spheres);
        return widest([0, 1, 2].map(|a| hi[a] - lo[a]));
    }
    let step = n / SWEEP_SAMPLE;
    // Twice the sample's upper-decile radius (exact): how near two centres must be on an axis
    // for the sweep to meet them. Not its largest: one boulder in the sample made every axis
    // crowded, and the tie went back to the interdecile range.
    let mut keys = [0u32; SWEEP_SAMPLE];
    for (k, key) in keys.iter_mut().enumerate() {
        *key = spheres[k * step].radius.to_bits();
    }
    let reach = 2.0 * f32::from_bits(*keys.select_nth_unstable(HI_RANK).1);
    let [(c0, s0), (c1, s1), (c2, s2)] = [0, 1, 2].map(|a| {
        for (k, key) in keys.iter_mut().enumerate() {
            *key = ordered_bits(spheres[k * step].center[a]);
        }
        keys.sort_unstable();
        let spread = from_ordered_bits(keys[HI_RANK]) - from_ordered_bits(keys[LO_RANK]);
        (crowding(&keys, reach), spread)
    });
    // The fewest sample pairs within reach, then the largest spread, then the lowest axis.
    let (crowd, spread) = ([c0, c1, c2], [s0, s1, s2]);
    (1..3).fold(0, |a, b| {
        if crowd[b] < crowd[a] || (crowd[b] == crowd[a] && spread[b] > spread[a]) {
            b
        } else {
            a
        }
    })
}

/// The pairs of a sorted sample (ordered keys, ascending) whose centres lie within `reach`
/// on its axis: for each `i`, the `j > i` with `c_j - c_i <= reach` (an f32 difference, so a
/// prefix of the `j`; the GPU finds its end by a binary search, the same count).
fn crowding(sorted: &[u32], reach: f32) -> u32 {
    let c = |k: usize| from_ordered_bits(sorted[k]);
    let mut end = 0;
    (0..sorted.len())
        .map(|i| {
            end = end.max(i + 1);
            while end < sorted.len() && c(end) - c(i) <= reach {
                end += 1;
            }
            (end - i - 1) as u32
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn layer(n: usize, size: [f32; 3], seed: u64) -> Vec<Sphere> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let c = size.map(|s| rng.random_range(0.0..=s));
                Sphere::new(Vec3::from_array(c), 0.05)
            })
            .collect()
    }

    /// A flat layer (100 x 50 x 0.01) with a few objects far above and below it: the range
    /// rule would sweep z, across the whole layer; the interdecile range keeps x. Below the
    /// sample's size the range decides, as before.
    #[test]
    fn a_few_far_objects_do_not_choose_the_axis() {
        for n in [SWEEP_SAMPLE_FROM, 20_000, 100_003] {
            let mut spheres = layer(n, [100.0, 50.0, 0.01], n as u64);
            // 2% of the objects, spread over the whole list (the sample sees about 20).
            for (k, s) in spheres.iter_mut().step_by(50).enumerate() {
                s.center.z = if k % 2 == 0 { 1e6 } else { -3e5 };
            }
            assert_eq!(sweep_axis(&spheres), 0, "n = {n}");
            let mut spheres = layer(n, [0.01, 50.0, 100.0], 7);
            spheres[n / 2].center.x = 1e6;
            assert_eq!(sweep_axis(&spheres), 2, "n = {n}");
        }
        let mut small = layer(SWEEP_SAMPLE_FROM - 1, [100.0, 50.0, 0.01], 3);
        small[5].center.z = 1e6;
        assert_eq!(sweep_axis(&small), 2);
        small[5].center.z = 0.0;
        assert_eq!(sweep_axis(&small), 0);
    }

    /// Two planes far apart on x (the scene's halves at x = 0 and x = 1e4), each spread over y
    /// and z: the interdecile range of x is the planes' distance, yet every object of a plane
    /// meets every other on x (a sweep of 100,000 took 4.7 s against the grid's 6.6 ms). The
    /// sample's pairs within reach see it; an elongated lattice too, whose long axis has the
    /// fewest objects a coordinate.
    #[test]
    fn crowded_axes_are_not_swept() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for n in [SWEEP_SAMPLE_FROM, 20_000, 100_000] {
            let planes: Vec<Sphere> = (0..n)
                .map(|i| {
                    let x = if i % 2 == 0 { 0.0 } else { 1e4 };
                    let (y, z) = (rng.random_range(0.0..300.0), rng.random_range(0.0..900.0));
                    Sphere::new(Vec3::new(x, y, z), 1.0)
                })
                .collect();
            assert_eq!(sweep_axis(&planes), 2, "n = {n}");
            // With boulders among them, one in the sample (index 0): the reach stays the
            // spheres'.
            let mut boulders = planes;
            for s in boulders.iter_mut().take(40) {
                s.radius = 300.0;
            }
            assert_eq!(sweep_axis(&boulders), 2, "n = {n}, boulders");
        }
        // 10 x 10 x 100 unit cells, touching spheres: z, the long axis (x and y tie on the
        // spread too: 9 each).
        let lattice: Vec<Sphere> = (0..10_000)
            .map(|i| {
                Sphere::new(
                    Vec3::new((i % 10) as f32, (i / 10 % 10) as f32, (i / 100) as f32),
                    0.5,
                )
            })
            .collect();
        assert_eq!(sweep_axis(&lattice), 2);
    }

    /// Ties go to the lowest axis; no object or one.
    #[test]
    fn ties_go_to_the_lowest_axis() {
        let at = |c: [f32; 3]| Sphere::new(Vec3::from_array(c), 1.0);
        assert_eq!(sweep_axis(&[]), 0);
        assert_eq!(sweep_axis(&[at([1.0, 2.0, 3.0])]), 0);
        assert_eq!(sweep_axis(&[at([0.0; 3]), at([1.0, 1.0, 1.0])]), 0);
        assert_eq!(sweep_axis(&[at([0.0; 3]), at([1.0, 2.0, 2.0])]), 1);
        assert_eq!(sweep_axis(&[at([0.0; 3]), at([-1.0, 2.0, -3.0])]), 2);
        // A diagonal: every axis's sample has the same deciles (exact integers).
        let diagonal = |y: f32| -> Vec<Sphere> {
            (0..5000)
                .map(|t| at([t as f32, y * t as f32, -(t as f32)]))
                .collect()
        };
        assert_eq!(sweep_axis(&diagonal(1.0)), 0);
        assert_eq!(sweep_axis(&diagonal(-2.0)), 1);
    }

    /// The sample's ranks by hand: a sorted column whose deciles are known.
    #[test]
    fn the_deciles_of_the_strided_sample() {
        // n = 3 x 1024: the sample takes every third object; object i has x = i on the sample
        // and 1e9 elsewhere, y = i / 1000 everywhere.
        let n = 3 * SWEEP_SAMPLE;
        let spheres: Vec<Sphere> = (0..n)
            .map(|i| {
                let x = if i % 3 == 0 { (i / 3) as f32 } else { 1e9 };
                Sphere::new(Vec3::new(x, i as f32 / 1000.0, 0.0), 1.0)
            })
            .collect();
        // x: deciles 102 and 921 of the sampled 0..1024: 819; y: (3 * 921 - 3 * 102) / 1000.
        assert_eq!((LO_RANK, HI_RANK), (102, 921));
        assert_eq!(sweep_axis(&spheres), 0);
    }
}
