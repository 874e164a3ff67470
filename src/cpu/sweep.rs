//! Paper method 2, the object-level cascade `x`, `xy`, `xyz`.
//!
//! `S` starts as all objects. On every axis but the last, `S` keeps only the objects whose
//! interval overlaps (closed) that of at least one other object of the current `S`; in the
//! order sorted by `(lo, index)` an object overlaps an earlier one iff the running maximum of
//! `hi` before it is `>= lo`, and a later one iff the next object's `lo <= hi`. On the last axis
//! every pair of `S` that overlaps on that axis is tested (each object against the following
//! ones while `lo_j <= hi_i`). `tests` = those pairs. Touching pairs overlap on every axis, so
//! no touching pair is dropped.

use super::axis_order::AxisOrder;
use super::emit::PairEmitter;
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::sphere::Sphere;
use web_time::Instant;

/// The paper's second method (docs/design.md §2.4): an endpoint sweep on x, then y, then z.
pub struct Sweep {
    method: Method,
    /// Number of cascade axes: 1 (x), 2 (x, y) or 3 (x, y, z).
    axes: usize,
    order: AxisOrder,
    survivors: Vec<u32>,
    emitter: PairEmitter,
}

impl Sweep {
    /// `method` must be one of `X`, `Xy`, `Xyz`.
    pub fn new(method: Method) -> Result<Self> {
        match method {
            Method::X => Ok(Self::x()),
            Method::Xy => Ok(Self::xy()),
            Method::Xyz => Ok(Self::xyz()),
            other => Err(Error::invalid_argument(
                "method",
                format!("the sweep cascade implements x, xy and xyz, not {other}"),
            )),
        }
    }

    /// The sweep on x alone.
    pub fn x() -> Self {
        Self::cascade(Method::X, 1)
    }

    /// The cascade x, then y.
    pub fn xy() -> Self {
        Self::cascade(Method::Xy, 2)
    }

    /// The cascade x, y, z.
    pub fn xyz() -> Self {
        Self::cascade(Method::Xyz, 3)
    }

    fn cascade(method: Method, axes: usize) -> Self {
        Self {
            method,
            axes,
            order: AxisOrder::default(),
            survivors: Vec::new(),
            emitter: PairEmitter::default(),
        }
    }
}

/// Keeps the objects of `order` (sorted on one axis) that overlap another of them on that axis.
fn keep_overlapping(order: &AxisOrder, kept: &mut Vec<u32>) {
    kept.clear();
    let (lo, hi) = (&order.lo, &order.hi);
    let n = order.len();
    let mut hi_before = f32::NEG_INFINITY;
    for p in 0..n {
        let overlaps_earlier = hi_before >= lo[p];
        let overlaps_later = p + 1 < n && lo[p + 1] <= hi[p];
        if overlaps_earlier || overlaps_later {
            kept.push(order.index[p]);
        }
        hi_before = hi_before.max(hi[p]);
    }
}

super::cpu_broad_phase!(Sweep, emitter, |s: &Self| s.method.name());

impl Sweep {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = Stats::default();
        let start = Instant::now();
        self.order.sort_all(spheres, 0);
        for axis in 1..self.axes {
            keep_overlapping(&self.order, &mut self.survivors);
            self.order.sort_subset(spheres, &self.survivors, axis);
        }
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let order = &self.order;
        let n = order.len();
        let (lo, hi, sorted, index) = (&order.lo, &order.hi, &order.spheres, &order.index);
        self.emitter
            .run_pairs_stage(&mut stats, start, n, out, |rows, sink| {
                for p in rows {
                    let (hp, sp, ip) = (hi[p], &sorted[p], index[p]);
                    // The candidates are the run of following objects starting at or before hi_p.
                    let end = p + 1 + lo[p + 1..].partition_point(|&l| l <= hp);
                    sink.add_tests((end - p - 1) as u64);
                    for q in p + 1..end {
                        if sp.touches(&sorted[q]) {
                            sink.touching(ip, index[q]);
                        }
                    }
                }
            })?;
        Ok(stats)
    }
}
