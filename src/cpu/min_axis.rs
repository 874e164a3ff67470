//! Paper 3.3.2 (min_axis), made complete with an owner rule.
//!
//! `O_a(i)` = number of other objects whose interval overlaps (closed) that of `i` on axis `a`;
//! `m(i) = min_a O_a(i)`, `a(i)` = the lowest axis achieving it, priority `p(i) = (m(i), i)`
//! compared lexicographically. A pair `{i, j}` is tested iff it overlaps on axis `a(o)`, where `o`
//! is the one of `i`, `j` with the smaller priority. Every touching pair overlaps on every axis,
//! so it is tested exactly once. `tests` = the pairs so tested.
//!
//! The paper's literal rule (each object tests its forward candidates on the axis where it has
//! fewest) misses touching pairs whose two objects chose different axes; its test count is kept
//! as a diagnostic ([`MinAxis::paper_rule_tests`]).

use super::axis_order::AxisOrder;
use super::emit::PairEmitter;
use super::keys::ordered_bits;
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use web_time::Instant;

/// The paper's fewest-candidate axis, made complete (docs/design.md §2.5).
#[derive(Default)]
pub struct MinAxis {
    orders: [AxisOrder; 3],
    /// Sorted `hi` values (as ordered bits) of one axis, to count intervals ending before a `lo`.
    hi_bits: Vec<u32>,
    /// Per sorted position of one axis: (`O_a`, forward candidates on `a`).
    counts: Vec<(u32, u32)>,
    /// Per object: `m(i)`, `a(i)`, and the paper rule's fewest forward candidates.
    fewest: Vec<u32>,
    best_axis: Vec<u8>,
    fewest_forward: Vec<u32>,
    /// Per axis, per sorted position: the priority `(m, index)` packed and the owner axis.
    priority: [Vec<u64>; 3],
    owner_axis: [Vec<u8>; 3],
    /// Per axis, the sorted positions of the few intervals far wider than the rest
    /// ([`Wide::of`]), which the backward walks' window leaves out, and the widths' scratch.
    wide: [Wide; 3],
    widths: Vec<f32>,
    paper_rule_tests: u64,
    emitter: PairEmitter,
}

impl MinAxis {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tests the paper's literal rule would have done on the last scene: the sum over objects of
    /// their fewest forward candidates (objects later in `(lo, index)` order with `lo <= hi_i`)
    /// on any axis. Incomplete as a method; kept to compare with the paper's table 6.
    pub fn paper_rule_tests(&self) -> u64 {
        self.paper_rule_tests
    }

    /// Fills the per-object `m(i)`, `a(i)` and the paper rule's count from the sorted axes.
    fn choose_axes(&mut self, n: usize) {
        self.fewest.clear();
        self.fewest.resize(n, u32::MAX);
        self.best_axis.clear();
        self.best_axis.resize(n, 0);
        self.fewest_forward.clear();
        self.fewest_forward.resize(n, u32::MAX);
        for (axis, order) in self.orders.iter().enumerate() {
            self.hi_bits.clear();
            self.hi_bits
                .extend(order.hi.iter().map(|&h| ordered_bits(h)));
            if n >= 1 << 14 {
                self.hi_bits.par_sort_unstable();
            } else {
                self.hi_bits.sort_unstable();
            }
            let (lo, hi, hi_bits) = (&order.lo, &order.hi, &self.hi_bits);
            let count = |p: usize| -> (u32, u32) {
                // Objects starting at or before hi_p, minus those ending before lo_p, minus p.
                let start_before_end = lo.partition_point(|&l| l <= hi[p]);
                let lo_bits = ordered_bits(lo[p]);
                let end_before_start = hi_bits.partition_point(|&h| h < lo_bits);
                (
                    (start_before_end - end_before_start - 1) as u32,
                    (start_before_end - p - 1) as u32,
                )
            };
            self.counts.clear();
            if n >= 1 << 14 {
                self.counts.par_extend((0..n).into_par_iter().map(count));
            } else {
                self.counts.extend((0..n).map(count));
            }
            for (&i, &(overlaps, forward)) in order.index.iter().zip(&self.counts) {
                let i = i as usize;
                if overlaps < self.fewest[i] {
                    self.fewest[i] = overlaps;
                    self.best_axis[i] = axis as u8;
                }
                self.fewest_forward[i] = self.fewest_forward[i].min(forward);
            }
        }
        self.paper_rule_tests = self.fewest_forward.iter().map(|&f| u64::from(f)).sum();
        for (axis, order) in self.orders.iter().enumerate() {
            let (fewest, best_axis) = (&self.fewest, &self.best_axis);
            self.priority[axis].clear();
            self.priority[axis].extend(
                order
                    .index
                    .iter()
                    .map(|&i| (u64::from(fewest[i as usize]) << 32) | u64::from(i)),
            );
            self.owner_axis[axis].clear();
            self.owner_axis[axis].extend(order.index.iter().map(|&i| best_axis[i as usize]));
        }
    }
}

super::cpu_broad_phase!(MinAxis, emitter, |_: &Self| Method::MinAxis.name());

impl MinAxis {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = Stats::default();
        let n = spheres.len();
        let start = Instant::now();
        for (axis, order) in self.orders.iter_mut().enumerate() {
            order.sort_all(spheres, axis);
        }
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        self.choose_axes(n);
        stats.stage("choose axis", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        // Scan window below an owner: an interval reaching up to lo_p starts at most its width
        // below it, the widest but the few far wider ones (`wide`, visited apart). The window
        // only bounds the scan (the overlap test decides), so it is widened far beyond f32
        // rounding (relative 1e-4 of the width, 1e-6 of the coordinate).
        let mut reach = [0.0f32; 3];
        for ((r, order), wide) in reach.iter_mut().zip(&self.orders).zip(&mut self.wide) {
            *r = 1.0001 * wide.build(order, &mut self.widths);
        }
        let (orders, priority, owner_axis) = (&self.orders, &self.priority, &self.owner_axis);
        let wide = &self.wide;
        self.emitter
            .run_pairs_stage(&mut stats, start, 3 * n, out, |rows, sink| {
                for t in rows {
                    let (axis, p) = (t / n, t % n);
                    let owner = &owner_axis[axis];
                    if usize::from(owner[p]) != axis {
                        continue;
                    }
                    // p owns the pairs with the objects of higher priority that overlap it on its
                    // axis: later ones start at or before hi_p, earlier ones end at or after lo_p.
                    let order = &orders[axis];
                    let (lo, hi, sorted, index) =
                        (&order.lo, &order.hi, &order.spheres, &order.index);
                    let prio = &priority[axis];
                    let (lp, hp, sp, ip, pp) = (lo[p], hi[p], &sorted[p], index[p], prio[p]);
                    let end = p + 1 + lo[p + 1..].partition_point(|&l| l <= hp);
                    for q in p + 1..end {
                        if prio[q] > pp {
                            sink.test(sp, &sorted[q], ip, index[q]);
                        }
                    }
                    let floor = lp - reach[axis] - 1e-6 * lp.abs();
                    for q in (0..p).rev() {
                        if lo[q] < floor {
                            break;
                        }
                        if hi[q] >= lp && prio[q] > pp {
                            sink.test(sp, &sorted[q], ip, index[q]);
                        }
                    }
                    // The wide intervals starting below the window (those within it were
                    // visited above): only they can reach lo_p from there.
                    for &q in wide[axis]
                        .positions
                        .iter()
                        .take_while(|&&q| (q as usize) < p)
                    {
                        let q = q as usize;
                        if lo[q] < floor && hi[q] >= lp && prio[q] > pp {
                            sink.test(sp, &sorted[q], ip, index[q]);
                        }
                    }
                }
            })?;
        Ok(stats)
    }
}

/// The intervals of one axis far wider than the rest ([`super::wide::wide_threshold`]): one
/// sphere spanning the scene made every owner's backward walk scan the whole axis (80,000
/// spheres at 1% volume and one wide sphere: 2.4 s a frame against 0.18 s without it, one
/// thread). Each owner looks at those set aside before it; none in most scenes.
#[derive(Default)]
struct Wide {
    /// Sorted positions (in the axis's `(lo, index)` order) of the wide intervals.
    positions: Vec<u32>,
}

impl Wide {
    /// Finds the wide intervals of `order` and returns the largest width of the others.
    fn build(&mut self, order: &AxisOrder, widths: &mut Vec<f32>) -> f32 {
        self.positions.clear();
        let width = |p: usize| order.hi[p] - order.lo[p];
        let n = order.lo.len();
        widths.clear();
        widths.extend((0..n).map(width));
        let extent = match (order.lo.first(), order.lo.last()) {
            (Some(&first), Some(&last)) => last - first,
            _ => 0.0,
        };
        let threshold = super::wide::wide_threshold(widths, extent);
        let mut rest = 0.0f32;
        for p in 0..n {
            let w = width(p);
            if w > threshold {
                self.positions.push(p as u32);
            } else {
                rest = rest.max(w);
            }
        }
        rest
    }
}
