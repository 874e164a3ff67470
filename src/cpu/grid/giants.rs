//! Giants: the few objects far larger than the rest, set aside so that they do not set the
//! grid's cell side (docs/design.md §2.7). One sphere of radius 40 among radius-2 spheres made
//! every cell 80 wide and the grid quadratic; now the cells follow the others and each giant
//! tests the objects whose cells fall within its reach.
//!
//! **The rule** is [`crate::geom::radii`]'s (the histogram and `decide` live there, shared with
//! the GPU grid and the partitioned broad phase).
//!
//! **Tests** of a giant `g`: every other giant whose reach overlaps `reach(g)` on every axis
//! (each pair once) and every other object whose cell lies within `reach(g)` on every axis,
//! `reach = [cell(c - r) - 1, cell(c + r) + 1]` (`c - r` and `c + r` rounded f32 sums, cells by
//! [`super::cell_axis`]). An object touching `g` has its centre within `r_g + s / 2` of `c_g`,
//! so in that range; two touching giants have `c_a - r_a <= c_b + r_b` on every axis, which
//! rounding and cells keep (both monotone), so their reaches overlap. (Every giant pair was
//! tested before: 4,096 giants made 8.4M tests a frame, most of a rod scene's grid time.)

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

    /// Whether the two giants' reaches overlap on every axis (then the pair is tested).
    #[inline(always)]
    pub fn meets(&self, other: &Giant) -> bool {
        (0..3).all(|a| self.lo[a] <= other.hi[a] && other.lo[a] <= self.hi[a])
    }
}

/// From this many giants, [`Reach`] lists them by coarse cell; with fewer, each object looks
/// at every giant (the list is as short as a coarse cell's would be).
const INDEXED_FROM: usize = 33;

/// The giants an object in a given cell may reach (docs/design.md §2.7): every giant, or with
/// 33 or more, those listed in the object's coarse cell of each level. A giant goes to the
/// level of its size, cubes of `2^shift` cells with `shift` the even number at or below the
/// least power of two as wide as its reach (so at least half as wide; at most 2^30): it is
/// listed in at most 3 coarse cells an axis (5 for a reach past 2^31 cells), whatever the other
/// giants' sizes; an object looks up its coarse
/// cell once a level (a level
/// each factor of 4 in the giants' sizes: one or two in most scenes). The coarse cells are
/// found by hashing, not laid over the scene's bounds: with the scene cut into 16 coarse cells
/// an axis, one stray object far out, a long thin scene or two far-apart clusters put nearly
/// every object in one coarse cell with nearly every giant (one sphere at 1e7 beside 500,000
/// in a cube of 5,000 with 4,000 giants: 6.5 s a frame, 8e6 looks an object, against 0.2 s for
/// sap).
#[derive(Default)]
pub struct Reach {
    /// Whether the giants are listed (else every giant for every cell).
    indexed: bool,
    /// The levels in use, smallest first.
    levels: Vec<Level>,
    /// `0..giants` (for a scene without the index).
    every: Vec<u32>,
    /// Scratch of [`Reach::build`], kept across frames: (level, coarse cell, giant) entries.
    entries: Vec<(u32, [i32; 3], u32)>,
    /// Positions in the giants by the low end of their reach on x (then position): the giants
    /// meet by a sweep along it ([`Reach::giant_pairs`]).
    by_x: Vec<u32>,
}

/// The giants of one size class by coarse cell.
#[derive(Default)]
struct Level {
    /// A cell's coarse cell is `cell >> shift` on every axis.
    shift: u32,
    /// Coarse cell -> the range of `list` holding its giants.
    table: CoarseTable,
    /// Positions in the giants, coarse cell by coarse cell.
    list: Vec<u32>,
}

impl Level {
    #[inline]
    fn near(&self, cell: [i32; 3]) -> &[u32] {
        match self.table.get(cell.map(|k| k >> self.shift)) {
            Some((start, end)) => &self.list[start as usize..end as usize],
            None => &[],
        }
    }
}

impl Reach {
    /// Lists `giants` by the coarse cells their reach covers; reuses the storage.
    pub fn build(&mut self, giants: &[Giant]) {
        self.every.clear();
        self.every.extend(0..giants.len() as u32);
        self.by_x.clone_from(&self.every);
        self.by_x
            .sort_unstable_by_key(|&t| (giants[t as usize].lo[0], t));
        self.indexed = giants.len() >= INDEXED_FROM;
        let mut spare = std::mem::take(&mut self.levels);
        if !self.indexed {
            self.levels = spare;
            self.levels.clear();
            return;
        }
        self.entries.clear();
        for (t, g) in giants.iter().enumerate() {
            // Reach widths are at least 3 cells and below 2^32 (cells fit an i32).
            let width = (0..3)
                .map(|a| (i64::from(g.hi[a]) - i64::from(g.lo[a]) + 1) as u64)
                .max()
                .unwrap_or(1);
            let fits = u64::BITS - (width - 1).leading_zeros();
            // At most 30: a reach past 2^31 cells (radius 1e16 among radii of 1e-30) would
            // otherwise shift an i32 by 32 (5 coarse cells an axis at most then).
            let shift = (fits & !1).min(30);
            let (lo, hi) = (g.lo.map(|k| k >> shift), g.hi.map(|k| k >> shift));
            for z in lo[2]..=hi[2] {
                for y in lo[1]..=hi[1] {
                    for x in lo[0]..=hi[0] {
                        self.entries.push((shift, [x, y, z], t as u32));
                    }
                }
            }
        }
        // Level by level, coarse cell by coarse cell, each cell's giants in order.
        self.entries.sort_unstable();
        let mut at = 0;
        while at < self.entries.len() {
            let shift = self.entries[at].0;
            let end = at + self.entries[at..].partition_point(|e| e.0 == shift);
            let mut level = spare.pop().unwrap_or_default();
            level.shift = shift;
            level.list.clear();
            let run = &self.entries[at..end];
            let cells = 1 + run.windows(2).filter(|w| w[0].1 != w[1].1).count();
            level.table.reserve(cells);
            let mut k = 0;
            while k < run.len() {
                let cell = run[k].1;
                let start = level.list.len() as u32;
                while k < run.len() && run[k].1 == cell {
                    level.list.push(run[k].2);
                    k += 1;
                }
                level.table.insert(cell, start, level.list.len() as u32);
            }
            self.levels.push(level);
            at = end;
        }
    }

    /// Positions (in the giants) of the giants an object in absolute cell `cell` may reach:
    /// those listed in its coarse cell of each level, or every giant without the index.
    #[inline]
    pub fn near(&self, cell: [i32; 3]) -> impl Iterator<Item = &u32> + '_ {
        let every = if self.indexed {
            &[][..]
        } else {
            &self.every[..]
        };
        every
            .iter()
            .chain(self.levels.iter().flat_map(move |level| level.near(cell)))
    }

    /// Calls `meet` with the `t`-th giant of the sweep order and each giant after it there
    /// whose reach overlaps its own ([`Giant::meets`]): over `t` in `0..giants.len()`, every
    /// such pair once. The sweep stops at the first giant starting past its reach on x.
    #[inline]
    pub fn giant_pairs(&self, giants: &[Giant], t: usize, mut meet: impl FnMut(&Giant, &Giant)) {
        let a = &giants[self.by_x[t] as usize];
        for &u in &self.by_x[t + 1..] {
            let b = &giants[u as usize];
            if b.lo[0] > a.hi[0] {
                break;
            }
            if a.meets(b) {
                meet(a, b);
            }
        }
    }
}

/// An open-addressing table from coarse cells to ranges (linear probing, a power-of-two
/// capacity at least twice the cells): one multiply-and-shift hash and, mostly, one probe a
/// look, where a sorted list's binary search took a dozen.
#[derive(Default)]
struct CoarseTable {
    cells: Vec<[i32; 3]>,
    ranges: Vec<(u32, u32)>,
    /// `capacity - 1`; the table is empty while `cells` is.
    mask: usize,
}

impl CoarseTable {
    /// Room for `cells` distinct cells (at most; a cell's entries may repeat it).
    fn reserve(&mut self, cells: usize) {
        let capacity = (2 * cells).next_power_of_two().max(16);
        self.cells.clear();
        self.cells.resize(capacity, [i32::MIN; 3]);
        self.ranges.clear();
        self.ranges.resize(capacity, (0, 0));
        self.mask = capacity - 1;
    }

    #[inline(always)]
    fn slot(&self, cell: [i32; 3]) -> usize {
        let h = (cell[0] as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (cell[1] as u32 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (cell[2] as u32 as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        ((h ^ (h >> 29)) as usize) & self.mask
    }

    /// Inserts a cell not yet in the table. (`[i32::MIN; 3]` marks a free slot: no coarse cell
    /// is that, as cells are within 2^31 - 3 * 2^26 of 0.)
    fn insert(&mut self, cell: [i32; 3], start: u32, end: u32) {
        let mut at = self.slot(cell);
        while self.cells[at] != [i32::MIN; 3] {
            at = (at + 1) & self.mask;
        }
        (self.cells[at], self.ranges[at]) = (cell, (start, end));
    }

    #[inline]
    fn get(&self, cell: [i32; 3]) -> Option<(u32, u32)> {
        if self.cells.is_empty() {
            return None;
        }
        let mut at = self.slot(cell);
        loop {
            let here = self.cells[at];
            if here == cell {
                return Some(self.ranges[at]);
            }
            if here == [i32::MIN; 3] {
                return None;
            }
            at = (at + 1) & self.mask;
        }
    }
}

/// The giants' tests over `items`: item `k < members.len()` tests member `k` against every
/// giant in reach (those [`Reach::near`] lists); item `members.len() + t` tests the `t`-th
/// giant of the sweep order against those after it that it meets ([`Reach::giant_pairs`]).
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
            reach.giant_pairs(giants, k - members.len(), |a, b| {
                sink.test(&a.sphere, &b.sphere, a.index, b.index);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::radii::GIANTS_MAX;

    /// The giants of `spheres` in `frame`, in index order.
    fn giants_of(frame: &GridFrame, spheres: &[Sphere]) -> Vec<Giant> {
        (0..spheres.len() as u32)
            .filter(|&i| frame.is_giant(&spheres[i as usize]))
            .map(|i| Giant::new(frame, i, spheres[i as usize]))
            .collect()
    }

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

    /// Giants whose reach spans more than 2^31 cells (radius 1e16 among radii of 1e-30) are
    /// listed with a shift of at most 30, not 32 (which overflows an i32 shift), and found.
    #[test]
    fn giants_reaching_past_two_to_the_31_cells_are_listed() {
        let mut spheres: Vec<Sphere> = (0..1000)
            .map(|i| Sphere::new(Vec3::new(i as f32 * 1e-29, 0.0, 0.0), 1e-30))
            .collect();
        spheres.extend((0..40).map(|_| Sphere::new(Vec3::ZERO, 1e16)));
        let frame = GridFrame::of(&spheres);
        let giants = giants_of(&frame, &spheres);
        assert_eq!(giants.len(), 40);
        assert!(
            giants
                .iter()
                .all(|g| i64::from(g.hi[0]) - i64::from(g.lo[0]) > 1 << 31)
        );
        let mut reach = Reach::default();
        reach.build(&giants);
        assert!(reach.levels.iter().all(|l| l.shift <= 30));
        for s in &spheres[..1000] {
            let near: Vec<u32> = reach.near(frame.centre_cell(s.center)).copied().collect();
            assert_eq!(near, (0..40).collect::<Vec<u32>>());
        }
    }

    /// `Reach::near` lists, for every cell of the scene's centres, every giant whose reach
    /// holds it (an index that missed one would lose its pairs), on a spread of giants large
    /// and small, near the scene's edges and beyond them, with one stray object far out (which
    /// once put every object in one coarse cell with every giant).
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
        spheres.push(Sphere::new(Vec3::splat(1e6), 0.5));
        let frame = GridFrame::of(&spheres);
        let giants = giants_of(&frame, &spheres);
        assert_eq!(giants.len(), 60, "every large sphere is a giant");
        let mut reach = Reach::default();
        reach.build(&giants);
        assert!(reach.indexed);
        // The cells of the ordinary objects and a margin (the stray one's too, below).
        let (lo, top) = (
            frame.centre_cell(Vec3::splat(-2.0)),
            frame.centre_cell(Vec3::new(302.0, 92.0, 42.0)),
        );
        let mut listed = 0usize;
        let mut cells = 0usize;
        for z in lo[2]..=top[2] {
            for y in lo[1]..=top[1] {
                for x in lo[0]..=top[0] {
                    let cell = [x, y, z];
                    let near: Vec<u32> = reach.near(cell).copied().collect();
                    listed += near.len();
                    cells += 1;
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
        assert!(
            listed < cells * giants.len() / 2,
            "the index lists far fewer than every giant: {listed} over {cells} cells"
        );
        let stray: Vec<u32> = reach
            .near(frame.centre_cell(Vec3::splat(1e6)))
            .copied()
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
        // Below the index's threshold every giant is listed for any cell.
        reach.build(&giants[..8]);
        let every: Vec<u32> = reach.near(lo).copied().collect();
        assert_eq!(every, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    /// `Reach::giant_pairs` over every sweep position lists each pair of giants whose reaches
    /// overlap on every axis exactly once (by the reaches' own bounds, compared here pair by
    /// pair), every touching pair among them, and far fewer than every pair on a spread scene:
    /// giants of four sizes, equal x reach starts (ties) and a chain of touching giants.
    #[test]
    fn giants_meet_where_their_reaches_overlap() {
        let mut spheres: Vec<Sphere> = (0..4000)
            .map(|i| {
                let f = i as f32;
                Sphere::new(Vec3::new((f * 7.3) % 900.0, (f * 3.1) % 90.0, 0.0), 0.5)
            })
            .collect();
        for k in 0..120 {
            let f = k as f32;
            let r = [2.0, 3.0, 9.0, 30.0][k % 4];
            // Every third giant shares its x with the one before; the first ten sit 4 apart on
            // x, of radius 2, some of them touching.
            let x = if k < 10 {
                f * 4.0
            } else {
                (f - (k % 3) as f32) * 13.0
            };
            let r = if k < 10 { 2.0 } else { r };
            spheres.push(Sphere::new(Vec3::new(x, (f * 37.0) % 600.0, 0.0), r));
        }
        let frame = GridFrame::of(&spheres);
        let giants = giants_of(&frame, &spheres);
        assert_eq!(giants.len(), 120);
        let mut reach = Reach::default();
        reach.build(&giants);
        let mut met = Vec::new();
        for t in 0..giants.len() {
            reach.giant_pairs(&giants, t, |a, b| {
                met.push([a.index.min(b.index), a.index.max(b.index)]);
            });
        }
        let listed = met.len();
        met.sort_unstable();
        met.dedup();
        assert_eq!(met.len(), listed, "a pair met twice");
        let mut expected = Vec::new();
        let mut touching = 0;
        for (k, a) in giants.iter().enumerate() {
            for b in &giants[k + 1..] {
                let overlap = (0..3).all(|x| a.lo[x] <= b.hi[x] && b.lo[x] <= a.hi[x]);
                if overlap {
                    expected.push([a.index, b.index]);
                }
                if a.sphere.touches(&b.sphere) {
                    touching += 1;
                    assert!(
                        overlap,
                        "touching giants {} and {} do not meet",
                        a.index, b.index
                    );
                }
            }
        }
        assert_eq!(met, expected);
        assert!(touching >= 9, "the chain touches: {touching}");
        assert!(
            met.len() < 120 * 119 / 8,
            "a sweep, not every pair: {}",
            met.len()
        );
    }
}
