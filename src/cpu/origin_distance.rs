//! Paper method 1 (origin distance): key `D_i = |c_i|`, objects sorted by `(D, index)`; each
//! object tests the following ones while `D[p+h] - D[p] <= 2 r_max` and stops at the first that
//! exceeds. Complete because `|D_i - D_j| <= |c_i - c_j|` (triangle inequality).
//! `tests` = the pairs so visited.

use super::emit::PairEmitter;
use super::keys::{index_of, pack, sort_keys};
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::{Sphere, max_radius};
use rayon::prelude::*;
use std::time::Instant;

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
                .map(|(i, s)| pack(s.center.length(), i as u32)),
        );
        sort_keys(&mut self.keys);
        self.index.clear();
        self.index.extend(self.keys.iter().map(|&k| index_of(k)));
        self.sorted.clear();
        self.sorted
            .extend(self.index.iter().map(|&i| spheres[i as usize]));
        self.distance.clear();
        self.distance
            .extend(self.sorted.iter().map(|s| s.center.length()));
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let reach = 2.0 * max_radius(spheres);
        let (distance, sorted, index) = (&self.distance, &self.sorted, &self.index);
        self.emitter
            .run_pairs_stage(&mut stats, start, n, out, |rows, sink| {
                for p in rows {
                    let (dp, sp, ip) = (distance[p], &sorted[p], index[p]);
                    for q in p + 1..n {
                        if distance[q] - dp > reach {
                            break;
                        }
                        sink.test(sp, &sorted[q], ip, index[q]);
                    }
                }
            })?;
        Ok(stats)
    }
}
