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

/// The floor of the real quotient `c / s` (below 2^29 cells): an f64 estimate moved until the
/// exact f64 products `k s` bracket `c`.
pub(crate) fn real_floor(c: f32, s: f32) -> i64 {
    let (cf, sf) = (c as f64, s as f64);
    let mut k = (cf / sf).floor() as i64;
    while k as f64 * sf > cf {
        k -= 1;
    }
    while (k + 1) as f64 * sf <= cf {
        k += 1;
    }
    k
}

/// One step of the small linear congruential generator (Knuth's MMIX constants) that unit tests
/// draw from where a seeded `rand` stream is more than they need: the new state, whose high
/// bits are the draw.
pub(crate) fn lcg_next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state
}
