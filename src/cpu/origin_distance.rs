//! Paper method 1 (origin distance): key `D_i = |c_i|`, objects sorted by `(D, index)`; each
//! object tests the following ones while `D[p+h] - D[p] <= 2 r_max + ORIGIN_KEY_SLACK D[p+h]`
//! and stops at the first that exceeds. Complete because `|D_i - D_j| <= |c_i - c_j|` (triangle
//! inequality), with the slack for the rounding of the keys ([`ORIGIN_KEY_SLACK`]).
//! `tests` = the pairs so visited.

use super::emit::PairEmitter;
use super::keys::{index_of, pack, sort_keys};
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::{ORIGIN_KEY_SLACK, Sphere, max_radius, origin_key};
use rayon::prelude::*;
use web_time::Instant;

/// The paper's first method (docs/design.md §2.3): sorted by distance from the origin.
#[derive(Default)]
pub struct OriginDistance {
    keys: Vec<u64>,
    /// Sorted order: distance to the origin, sphere, original index.
    distance: Vec<f32>,
    sorted: Vec<Sphere>,
    index: Vec<u32>,
    emitter: PairEmitter,
}

impl OriginDistance {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

super::cpu_broad_phase!(OriginDistance, emitter, |_: &Self| Method::OriginDistance
    .name());

impl OriginDistance {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = Stats::default();
        let start = Instant::now();
        let n = spheres.len();
        self.keys.clear();
        self.keys.par_extend(
            spheres
                .par_iter()
                .enumerate()
                .map(|(i, s)| pack(origin_key(s.center), i as u32)),
        );
        sort_keys(&mut self.keys);
        self.index.clear();
        self.index.extend(self.keys.iter().map(|&k| index_of(k)));
        self.sorted.clear();
        self.sorted
            .extend(self.index.iter().map(|&i| spheres[i as usize]));
        self.distance.clear();
        self.distance
            .extend(self.sorted.iter().map(|s| origin_key(s.center)));
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let reach = 2.0 * max_radius(spheres);
        let (distance, sorted, index) = (&self.distance, &self.sorted, &self.index);
        self.emitter
            .run_pairs_stage(&mut stats, start, n, out, |rows, sink| {
                for p in rows {
                    let (dp, sp, ip) = (distance[p], &sorted[p], index[p]);
                    for q in p + 1..n {
                        if distance[q] - dp > reach + ORIGIN_KEY_SLACK * distance[q] {
                            break;
                        }
                        sink.test(sp, &sorted[q], ip, index[q]);
                    }
                }
            })?;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::BroadPhase;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};

    /// Pairs of max-radius spheres far from the origin, touching (by the f32 sphere test) along
    /// their radial direction, whose rounded keys differ by more than 2 r_max: without the
    /// slack the walk stops before the partner and the pair is lost (checked by removing it).
    #[test]
    fn radial_touching_pairs_far_out_survive_rounded_keys() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let r = 0.01f32;
        let mut scene = Vec::new();
        let mut tries = 0;
        while scene.len() < 20 && tries < 1_000_000 {
            tries += 1;
            let c1 = Vec3::new(
                rng.random_range(1e3..2e3),
                rng.random_range(1e3..2e3),
                rng.random_range(1e3..2e3),
            );
            let c2 = c1 + c1.normalize() * (2.0 * r);
            let (a, b) = (Sphere::new(c1, r), Sphere::new(c2, r));
            if a.touches(&b) && c2.length() - c1.length() > 2.0 * r {
                scene.extend([a, b]);
            }
        }
        assert!(scene.len() >= 20, "no such pair in {tries} tries");
        let mut want = Vec::new();
        crate::cpu::broad_phase(Method::BruteForce)
            .find_pairs(&scene, Some(&mut want))
            .unwrap();
        let mut got = Vec::new();
        OriginDistance::new()
            .find_pairs(&scene, Some(&mut got))
            .unwrap();
        crate::broadphase::canonicalize(&mut want);
        crate::broadphase::canonicalize(&mut got);
        assert!(want.len() >= 10);
        assert_eq!(got, want);
    }
}
