//! Brute force: every pair `i < j` is tested, `n(n-1)/2` tests. The oracle of the oracles.

use super::emit::PairEmitter;
use crate::broadphase::{Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use web_time::Instant;

/// Every pair tested (docs/design.md §2.2): the reference of the test counts.
#[derive(Default)]
pub struct BruteForce {
    emitter: PairEmitter,
}

impl BruteForce {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

super::cpu_broad_phase!(BruteForce, emitter, |_: &Self| Method::BruteForce.name());

impl BruteForce {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let start = Instant::now();
        let n = spheres.len();
        let mut stats = Stats::default();
        self.emitter
            .run_pairs_stage(&mut stats, start, n, out, |rows, sink| {
                for i in rows {
                    // A row is up to n tests: a cancelled call stops within one (§9.18).
                    if sink.cancelled() {
                        break;
                    }
                    let a = &spheres[i];
                    for (j, b) in spheres.iter().enumerate().skip(i + 1) {
                        sink.test(a, b, i as u32, j as u32);
                    }
                }
            })?;
        Ok(stats)
    }
}
