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

/// From this many giants, [`Reach`] lists them by coarse cell; with fewer, each object looks
/// at every giant (the list is as short as a coarse cell's would be).
const INDEXED_FROM: usize = 33;
/// Coarse cells per axis at most: 4,096 in all, each giant listed in every coarse cell its
/// reach covers (at most 4,096 entries a giant).
const COARSE_PER_AXIS: i64 = 16;

/// The giants an object in a given cell may reach (docs/design.md §2.7): every giant, or with
/// more than 32, those whose reach covers the object's coarse cell. The scene's cells (the
/// frame's centre bounds) are cut into at most 16 coarse cells per axis, each a power of two
/// of cells wide; each giant is listed in every coarse cell its reach meets. So an object
/// looks at the giants near it, not at all of them: 256 boulders among 500,000 spheres cost
/// each object a few looks instead of 256.
#[derive(Default)]
pub struct Reach {
    /// Lowest absolute cell of the scene's centres.
    origin: [i64; 3],
    /// A cell's coarse cell per axis is `(cell - origin) >> shift`.
    shift: u32,
    /// Coarse cells per axis (0: no index, every giant for every cell).
    dims: [usize; 3],
    /// Coarse cell `c`'s giants are `list[starts[c]..starts[c + 1]]` (positions in the giants).
    starts: Vec<u32>,
    list: Vec<u32>,
    /// Scratch of [`Reach::build`], kept across frames: each giant's coarse range, and the
    /// next free place of each coarse cell.
    ranges: Vec<Option<[(usize, usize); 3]>>,
    at: Vec<u32>,
    /// `0..giants` (for a scene without the index).
    every: Vec<u32>,
}

impl Reach {
    /// Lists `giants` (of `frame`) by the coarse cells their reach covers; reuses the storage.
    pub fn build(&mut self, frame: &GridFrame, giants: &[Giant]) {
        self.every.clear();
        self.every.extend(0..giants.len() as u32);
        self.dims = [0; 3];
        if giants.len() < INDEXED_FROM {
            return;
        }
        let origin = frame.min_cell.map(i64::from);
        let top = [0, 1, 2].map(|a| origin[a] + i64::from(frame.max_cell[a]));
        // The least shift that fits every axis in COARSE_PER_AXIS coarse cells.
        let widest = (0..3).map(|a| top[a] - origin[a]).max().unwrap_or(0);
        let shift = (0..64u32)
            .find(|&s| (widest >> s) < COARSE_PER_AXIS)
            .unwrap_or(63);
        let dims = [0, 1, 2].map(|a| ((top[a] - origin[a]) >> shift) as usize + 1);
        // A giant's coarse range per axis, clamped to the scene's; None when it misses it.
        let coarse = |g: &Giant| -> Option<[(usize, usize); 3]> {
            let mut range = [(0, 0); 3];
            for a in 0..3 {
                let (lo, hi) = (
                    i64::from(g.lo[a]).max(origin[a]),
                    i64::from(g.hi[a]).min(top[a]),
                );
                if lo > hi {
                    return None;
                }
                range[a] = (
                    ((lo - origin[a]) >> shift) as usize,
                    ((hi - origin[a]) >> shift) as usize,
                );
            }
            Some(range)
        };
        let cells = dims[0] * dims[1] * dims[2];
        let counts = &mut self.starts;
        counts.clear();
        counts.resize(cells + 1, 0);
        let each = |range: [(usize, usize); 3], f: &mut dyn FnMut(usize)| {
            for z in range[2].0..=range[2].1 {
                for y in range[1].0..=range[1].1 {
                    for x in range[0].0..=range[0].1 {
                        f((z * dims[1] + y) * dims[0] + x);
                    }
                }
            }
        };
        self.ranges.clear();
        self.ranges.extend(giants.iter().map(coarse));
        for range in self.ranges.iter().flatten() {
            each(*range, &mut |c| counts[c + 1] += 1);
        }
        for c in 0..cells {
            counts[c + 1] += counts[c];
        }
        self.at.clone_from(counts);
        self.list.clear();
        self.list.resize(counts[cells] as usize, 0);
        for (t, range) in self.ranges.iter().enumerate() {
            if let Some(range) = range {
                each(*range, &mut |c| {
                    self.list[self.at[c] as usize] = t as u32;
                    self.at[c] += 1;
                });
            }
        }
        (self.origin, self.shift, self.dims) = (origin, shift, dims);
    }

    /// Positions (in the giants) of the giants an object in absolute cell `cell` may reach:
    /// the object's coarse cell's, or every giant without the index. `cell` must be the cell of
    /// a centre of the frame the index was built for.
    #[inline]
    pub fn near(&self, cell: [i32; 3]) -> &[u32] {
        if self.dims[0] == 0 {
            return &self.every;
        }
        let at = |a: usize| {
            let coarse = (i64::from(cell[a]) - self.origin[a]) >> self.shift;
            coarse.clamp(0, self.dims[a] as i64 - 1) as usize
        };
        let c = (at(2) * self.dims[1] + at(1)) * self.dims[0] + at(0);
        &self.list[self.starts[c] as usize..self.starts[c + 1] as usize]
    }
}

/// The giants' tests over `items`: item `k < members.len()` tests member `k` against every
/// giant in reach (those [`Reach::near`] lists); item `members.len() + t` tests giant `t`
/// against the giants after it.
pub fn visit(
    frame: &GridFrame,
    spheres: &[Sphere],
    members: &[u32],
    (giants, reach): (&[Giant], &Reach),
    items: Range<usize>,
    sink: &mut Sink,
) {
    for k in items {
        if let Some(&i) = members.get(k) {
            let s = &spheres[i as usize];
            // Recomputed, not read back from the layouts (which hold relative, packed or sorted
            // cells): three cell_axis per object, only in frames with giants.
            let cell = frame.centre_cell(s.center);
            for &t in reach.near(cell) {
                let g = &giants[t as usize];
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
    use crate::geom::radii::GIANTS_MAX;

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
        let radii: Vec<f32> = (0..30_000)
            .map(|i| 0.1 * 100f32.powf(i as f32 / 30_000.0))
            .collect();
        let top = radii.iter().copied().fold(0.0, f32::max);
        assert_eq!(histogram(&radii).decide(), (255, top));
        // One giant too many: of the budget's cap, in a scene large enough for it.
        let mut radii = vec![1.0f32; 70_000];
        radii.extend(vec![100.0; GIANTS_MAX as usize + 1]);
        assert_eq!(histogram(&radii).decide(), (255, 100.0));
        radii.pop();
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        // And of a sixteenth of the scene: radii spread evenly over 0.1..0.5 put 60% above
        // 0.25, more than twice 0.1..0.125's largest, yet they are no giants.
        let spread: Vec<f32> = (0..1500).map(|i| 0.1 + 0.4 * i as f32 / 1499.0).collect();
        let largest = spread.iter().copied().fold(0.0, f32::max);
        assert_eq!(histogram(&spread).decide(), (255, largest));
        let mut radii = vec![1.0f32; 1600];
        radii.extend([100.0; 100]);
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        radii.push(100.0);
        assert_eq!(
            histogram(&radii).decide(),
            (127, 1.0),
            "1,701 objects: 106 may go"
        );
        radii.extend([100.0; 6]);
        assert_eq!(
            histogram(&radii).decide(),
            (255, 100.0),
            "1,707 objects: 107 > 106"
        );
        // Points and a few spheres: the spheres are giants (the points' cells come from
        // their bounds, `geom::radii::points_side`).
        let mut radii = vec![0.0f32; 500];
        radii.extend([1.0; 3]);
        assert_eq!(histogram(&radii).decide(), (0, 0.0));
    }

    /// More than `GIANTS_NEAR_MAX` giants are set aside only when far larger than the rest
    /// (`FAR_GIANT_RATIO`): 2,000 of radius 3 among 70,000 of radius 1 size the cells (on the
    /// GPU every object would look at each of them), 1,000 of them or 2,000 of radius 9 are set
    /// aside.
    #[test]
    fn many_giants_only_when_far_larger() {
        use crate::geom::radii::{FAR_GIANT_RATIO, GIANTS_NEAR_MAX};
        let scene = |count: usize, radius: f32| {
            let mut radii = vec![1.0f32; 70_000];
            radii.extend(vec![radius; count]);
            histogram(&radii).decide()
        };
        let near = GIANTS_NEAR_MAX as usize;
        assert_eq!(scene(2000, 3.0), (255, 3.0), "2,000 near ones");
        assert_eq!(scene(near, 3.0), (127, 1.0), "{near} near ones");
        assert_eq!(scene(near + 1, 3.0), (255, 3.0), "{near} + 1 near ones");
        assert_eq!(scene(2000, 9.0), (127, 1.0), "2,000 far ones");
        // The ratio is strict: exactly FAR_GIANT_RATIO times is near.
        assert_eq!(scene(2000, FAR_GIANT_RATIO), (255, FAR_GIANT_RATIO));
        assert_eq!(scene(2000, 8.5), (127, 1.0));
    }

    #[test]
    fn the_lowest_split_within_the_budget_wins() {
        // Bins 127 (1.0), 130 (8.0, 5 objects), 134 (100, 3 objects): both splits qualify;
        // the one setting aside 8 objects gives the smaller cells.
        let mut radii = vec![1.0f32; 400];
        radii.extend([8.0; 5]);
        radii.extend([100.0; 3]);
        assert_eq!(histogram(&radii).decide(), (127, 1.0));
        // With more objects in bin 130 than the budget only the top three go.
        radii.extend(vec![8.0; GIANTS_MAX as usize]);
        assert_eq!(histogram(&radii).decide(), (130, 8.0));
    }

    /// `Reach::near` lists, for every cell of the scene's centres, every giant whose reach
    /// holds it (an index that missed one would lose its pairs), on a spread of giants large
    /// and small, near the scene's edges and beyond them.
    #[test]
    fn the_reach_index_lists_every_giant_that_reaches_a_cell() {
        let mut spheres: Vec<Sphere> = (0..4000)
            .map(|i| {
                let f = i as f32;
                Sphere::new(
                    Vec3::new((f * 7.3) % 300.0, (f * 3.1) % 90.0, (f * 1.7) % 40.0),
                    0.5,
                )
            })
            .collect();
        for k in 0..60 {
            let f = k as f32;
            let r = [2.0, 9.0, 40.0, 400.0][k % 4];
            let at = Vec3::new(f * 11.0 - 50.0, (f * 37.0) % 150.0 - 30.0, (f * 5.0) % 60.0);
            spheres.push(Sphere::new(at, r));
        }
        let frame = GridFrame::of(&spheres);
        let giants: Vec<Giant> = (0..spheres.len() as u32)
            .filter(|&i| frame.is_giant(&spheres[i as usize]))
            .map(|i| Giant::new(&frame, i, spheres[i as usize]))
            .collect();
        assert_eq!(giants.len(), 60, "every large sphere is a giant");
        let mut reach = Reach::default();
        reach.build(&frame, &giants);
        assert!(reach.dims[0] > 1, "indexed");
        let (lo, top) = (
            frame.min_cell,
            [0, 1, 2].map(|a| frame.min_cell[a] + frame.max_cell[a] as i32),
        );
        let mut listed = 0usize;
        for z in lo[2]..=top[2] {
            for y in lo[1]..=top[1] {
                for x in lo[0]..=top[0] {
                    let cell = [x, y, z];
                    let near = reach.near(cell);
                    listed += near.len();
                    for (t, g) in giants.iter().enumerate() {
                        if g.reaches(cell) {
                            assert!(
                                near.contains(&(t as u32)),
                                "cell {cell:?}: giant {t} missed"
                            );
                        }
                    }
                }
            }
        }
        let cells = (0..3)
            .map(|a| frame.max_cell[a] as usize + 1)
            .product::<usize>();
        assert!(
            listed < cells * giants.len() / 2,
            "the index lists far fewer than every giant"
        );
        // Below the index's threshold every giant is listed for any cell.
        reach.build(&frame, &giants[..8]);
        assert_eq!(reach.near(lo), &[0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
