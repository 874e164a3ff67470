//! Helpers of the geometry unit tests.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The least `dist(s, t)` over the parameter pairs `s = i / n`, `t = j / n` (`0 <= i, j <= n`):
/// the distance of two segments by dense sampling, where `dist` measures between the point at
/// `s` of one and the point at `t` of the other.
pub(crate) fn sampled_min(n: u32, dist: impl Fn(f32, f32) -> f32) -> f32 {
    let mut best = f32::MAX;
    for i in 0..=n {
        let s = i as f32 / n as f32;
        for j in 0..=n {
            best = best.min(dist(s, j as f32 / n as f32));
        }
    }
    best
}

/// Property-test driver: `count` instances drawn by `draw` from one ChaCha8 generator seeded
/// with `seed`, each handed to `check` with the generator for the trial's further draws.
pub(crate) fn for_each_drawn<T>(
    seed: u64,
    count: usize,
    mut draw: impl FnMut(&mut ChaCha8Rng) -> T,
    mut check: impl FnMut(T, &mut ChaCha8Rng),
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..count {
        let item = draw(&mut rng);
        check(item, &mut rng);
    }
}
