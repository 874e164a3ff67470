//! Sweep and prune (beyond the paper): objects sorted by `(lo, index)` on the axis `A` of
//! largest centre spread (`broadphase::sweep_axis`: the range, or from 4,096 objects a sample's
//! interdecile range; ties to the lowest axis); each object visits
//! the following ones while `lo_j(A) <= hi_i(A)` and tests a pair only if the two boxes also
//! overlap (closed) on both other axes. `tests` = pairs reaching the sphere test.

use super::axis_order::{AxisOrder, hi, lo};
use super::emit::PairEmitter;
use crate::broadphase::sweep_axis::sweep_axis;
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use web_time::Instant;

/// Pair-level sweep and prune on the axis of largest spread (docs/design.md §2.6).
#[derive(Default)]
pub struct Sap {
    order: AxisOrder,
    /// Bounds on the two other axes, in sorted order (flat, so the filter loop is contiguous).
    other: [Vec<f32>; 4],
    emitter: PairEmitter,
}

impl Sap {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

super::cpu_broad_phase!(Sap, emitter, |_: &Self| Method::Sap.name());

impl Sap {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = Stats::default();
        let start = Instant::now();
        let axis = sweep_axis(spheres);
        let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
        self.order.sort_all(spheres, axis);
        let sorted = &self.order.spheres;
        let bounds = [(b, false), (b, true), (c, false), (c, true)];
        for (v, (other_axis, upper)) in self.other.iter_mut().zip(bounds) {
            let f = |s: &Sphere| {
                if upper {
                    hi(s, other_axis)
                } else {
                    lo(s, other_axis)
                }
            };
            v.clear();
            if sorted.len() >= 1 << 14 {
                v.par_extend(sorted.par_iter().map(f));
            } else {
                v.extend(sorted.iter().map(f));
            }
        }
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let order = &self.order;
        let n = order.len();
        let (lo_a, hi_a, sorted, index) = (&order.lo, &order.hi, &order.spheres, &order.index);
        let [lo_b, hi_b, lo_c, hi_c] = &self.other;
        self.emitter
            .run_pairs_stage(&mut stats, start, n, out, |rows, sink| {
                for p in rows {
                    let (hp, sp, ip) = (hi_a[p], &sorted[p], index[p]);
                    let (lbp, hbp, lcp, hcp) = (lo_b[p], hi_b[p], lo_c[p], hi_c[p]);
                    let end = p + 1 + lo_a[p + 1..].partition_point(|&l| l <= hp);
                    for q in p + 1..end {
                        // Non-short-circuit `&`: one rarely taken branch instead of four.
                        let boxes_overlap = (lo_b[q] <= hbp)
                            & (lbp <= hi_b[q])
                            & (lo_c[q] <= hcp)
                            & (lcp <= hi_c[q]);
                        if boxes_overlap {
                            sink.test(sp, &sorted[q], ip, index[q]);
                        }
                    }
                }
            })?;
        Ok(stats)
    }
}
