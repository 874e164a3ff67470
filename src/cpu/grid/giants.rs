//! Giants: the few objects far larger than the rest, set aside so that they do not set the
//! grid's cell side (docs/design.md §2.7). One sphere of radius 40 among radius-2 spheres made
//! every cell 80 wide and the grid quadratic; now the cells follow the others and each giant
//! tests the objects whose cells fall within its reach.
//!
//! **The rule** is [`crate::geom::radii`]'s (the histogram and `decide` live there, shared with
//! the GPU grid and the partitioned broad phase).
//!
//! **Tests** of a giant `g`: every other giant (each pair once) and every other object whose
//! cell lies within `reach(g)` on every axis, `reach = [cell(c - r) - 1, cell(c + r) + 1]`
//! (`c - r` and `c + r` rounded f32 sums, cells by [`super::cell_axis`]). An object touching
//! `g` has its centre within `r_g + s / 2` of `c_g`, so in that range.

use super::GridFrame;
use crate::cpu::emit::Sink;
use crate::geom::sphere::Sphere;
use glam::Vec3;
use std::ops::Range;

pub use crate::geom::radii::{Histogram, bin};

/// A giant as the pass reads it: index, sphere and reach in absolute cells.
#[derive(Clone, Copy)]
pub struct Giant {
    pub index: u32,
    pub sphere: Sphere,
    pub lo: [i32; 3],
    pub hi: [i32; 3],
}

impl Giant {
    pub fn new(frame: &GridFrame, index: u32, sphere: Sphere) -> Self {
        let cell = |x: Vec3| frame.absolute_cell(x);
        let (lo, hi) = (
            cell(sphere.center - Vec3::splat(sphere.radius)),
            cell(sphere.center + Vec3::splat(sphere.radius)),
        );
        // |cell| <= 2^31 - 3 * 2^26, so one more either way stays in i32.
        Self {
            index,
            sphere,
            lo: lo.map(|k| k - 1),
            hi: hi.map(|k| k + 1),
        }
    }

    /// Whether an object in absolute cell `cell` is in reach.
    #[inline(always)]
    pub fn reaches(&self, cell: [i32; 3]) -> bool {
        (0..3).all(|a| self.lo[a] <= cell[a] && cell[a] <= self.hi[a])
    }
}

/// The giants' tests over `items`: item `k < members.len()` tests member `k` against every
/// giant in reach; item `members.len() + t` tests giant `t` against the giants after it.
pub fn visit(
    frame: &GridFrame,
    spheres: &[Sphere],
    members: &[u32],
    giants: &[Giant],
    items: Range<usize>,
    sink: &mut Sink,
) {
    for k in items {
        if let Some(&i) = members.get(k) {
            let s = &spheres[i as usize];
            // Recomputed, not read back from the layouts (which hold relative, packed or sorted
            // cells): three cell_axis per object, only in frames with giants.
            let cell = frame.centre_cell(s.center);
            for g in giants {
                if g.reaches(cell) {
                    sink.test(s, &g.sphere, i, g.index);
                }
            }
        } else {
            let t = k - members.len();
            let a = &giants[t];
            for b in &giants[t + 1..] {
                sink.test(&a.sphere, &b.sphere, a.index, b.index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(radii: &[f32]) -> Histogram {
        let mut h = Histogram::default();
        for &r in radii {
            h.add(r);
        }
        h
    }

    #[test]
    fn one_giant_among_equals_is_set_aside() {
        let mut radii = vec![2.0f32; 1000];
        radii.push(40.0);
        // 40 is in bin 132, 2 in bin 128: four exponents apart.
        assert_eq!(histogram(&radii).decide(), (128, 2.0));
    }

    #[test]
    fn a_ladder_of_adjacent_bins_is_set_aside() {
        // Radii 2.5 .. 40 fill the bins right above the unit spheres' (127): no bin is empty
        // between them, yet setting the five aside makes the cells 40 times smaller.
        let mut radii = vec![1.0f32; 1000];
        radii.extend([2.5, 5.0, 10.0, 20.0, 40.0]);
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        // A few just above the others' largest radius halve nothing: kept.
        let mut radii = vec![1.9f32; 1000];
        radii.extend([2.1; 5]);
        assert_eq!(histogram(&radii).decide(), (255, 2.1));
        radii.push(3.9);
        assert_eq!(histogram(&radii).decide(), (127, 1.9));
    }

    #[test]
    fn no_giants_without_halving_or_past_the_budget() {
        // A log-uniform spread: its top bin alone holds more than the budget.
        let radii: Vec<f32> = (0..2000)
            .map(|i| 0.1 * 100f32.powf(i as f32 / 2000.0))
            .collect();
        let top = radii.iter().copied().fold(0.0, f32::max);
        assert_eq!(histogram(&radii).decide(), (255, top));
        // 33 giants: one too many.
        let mut radii = vec![1.0f32; 500];
        radii.extend([100.0; 33]);
        assert_eq!(histogram(&radii).decide(), (255, 100.0));
        radii.pop();
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        // Points and a few spheres: the rest would be all points, so no giants.
        let mut radii = vec![0.0f32; 500];
        radii.extend([1.0; 3]);
        assert_eq!(histogram(&radii).decide(), (255, 1.0));
    }

    #[test]
    fn the_lowest_split_within_the_budget_wins() {
        // Bins 127 (1.0), 130 (8.0, 5 objects), 134 (100, 3 objects): both splits qualify;
        // the one setting aside 8 objects gives the smaller cells.
        let mut radii = vec![1.0f32; 400];
        radii.extend([8.0; 5]);
        radii.extend([100.0; 3]);
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        // With 40 objects in bin 130 only the top three go.
        radii.extend([8.0; 35]);
        assert_eq!(histogram(&radii).decide(), (130, 8.0));
    }
}
