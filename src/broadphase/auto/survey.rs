//! The survey of `auto` (docs/design.md §2.12): one pass over the whole scene (its radii, its
//! extent, its largest objects taken whole) and a pseudo-random sample of the rest, estimating
//! the candidates of each method without running it.

use super::SAMPLE_MAX;
use crate::geom::radii::Histogram;
use crate::geom::sphere::Sphere;
use glam::Vec3;
/// A scene's statistics, estimated from a sample (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Survey {
    /// Spheres in the scene.
    pub n: usize,
    /// Spheres sampled.
    pub sampled: usize,
    /// Largest sampled radius below the giants, and the median sampled radius.
    pub radius: f32,
    /// The median sampled radius.
    pub median_radius: f32,
    /// Sampled giants (radii set aside by the grid's rule, `geom::radii`).
    pub giants: usize,
    /// Estimated pairs in neighbouring grid cells (the grid's tests), over the whole scene.
    pub grid_pairs: f64,
    /// Estimated pairs overlapping on the axis of largest spread (what sap scans).
    pub sweep_pairs: f64,
    /// Estimated pairs overlapping on x (what the paper's x sweep tests).
    pub x_pairs: f64,
    /// Sampled spheres per occupied cell: 1 when no two sampled centres share a cell.
    pub cell_occupancy: f64,
    /// Cells of side `2 r` in the scene's bounding box, per object of the scene.
    pub cells_per_object: f64,
    /// Objects of the scene's largest radii, taken whole rather than sampled (module docs):
    /// the top exponent bins holding at most `LARGE_MAX` objects, too rare for the sample to
    /// see well, when the scene is larger than the sample.
    pub large: usize,
    /// The scene's largest radius.
    pub largest_radius: f32,
}

/// Most objects of the largest radii that the survey takes whole (module docs).
pub(crate) const LARGE_MAX: u32 = 1024;

/// Most of the largest objects that the sample would hold, on average, for them to be taken
/// whole: more are sampled well enough, and taking them whole cost more than a frame (1,000 of
/// 2,100 objects: 2 million tests against the sample, 80 ms against a 4 ms grid frame).
pub(crate) const LARGE_SAMPLED: f64 = 32.0;

/// What `auto` reads of the whole scene in one pass (module docs): the radius histogram the
/// grid decides its cells and giants from, and the centres' bounding box.
struct SceneFacts {
    radii: Histogram,
    lo: Vec3,
    hi: Vec3,
}

impl SceneFacts {
    fn of(spheres: &[Sphere]) -> Self {
        let fold = |chunk: &[Sphere]| {
            let mut f = SceneFacts {
                radii: Histogram::default(),
                lo: Vec3::splat(f32::INFINITY),
                hi: Vec3::splat(f32::NEG_INFINITY),
            };
            for s in chunk {
                f.radii.add(s.radius);
                f.lo = f.lo.min(s.center);
                f.hi = f.hi.max(s.center);
            }
            f
        };
        let merge = |a: SceneFacts, b: SceneFacts| SceneFacts {
            radii: a.radii.merge(&b.radii),
            lo: a.lo.min(b.lo),
            hi: a.hi.max(b.hi),
        };
        if spheres.len() >= 1 << 16 {
            use rayon::prelude::*;
            spheres
                .par_chunks(1 << 15)
                .map(fold)
                .reduce_with(merge)
                .unwrap_or_else(|| fold(&[]))
        } else {
            fold(spheres)
        }
    }

    /// The lowest exponent bin of the largest radii taken whole, in a scene of `n` objects:
    /// the top bins holding at most [`LARGE_MAX`] objects in all, and so few that a sample of
    /// [`SAMPLE_MAX`] would hold at most [`LARGE_SAMPLED`] of them (`BINS`: none).
    fn large_from(&self, n: usize) -> usize {
        let rare = LARGE_SAMPLED * n as f64 / SAMPLE_MAX as f64;
        let mut above = 0u32;
        let mut from = crate::geom::radii::BINS;
        for b in (0..crate::geom::radii::BINS).rev() {
            above += self.radii.count[b];
            if above > LARGE_MAX || f64::from(above) > rare {
                break;
            }
            if self.radii.count[b] > 0 {
                from = b;
            }
        }
        from
    }

    fn largest_radius(&self) -> f32 {
        (0..crate::geom::radii::BINS)
            .rev()
            .find(|&b| self.radii.count[b] > 0)
            .map_or(0.0, |b| f32::from_bits(self.radii.max_bits[b]))
    }
}

impl Survey {
    /// Grid tests per object.
    pub fn grid_per_object(&self) -> f64 {
        self.grid_pairs / self.n.max(1) as f64
    }

    /// Sweep candidates per object.
    pub fn sweep_per_object(&self) -> f64 {
        self.sweep_pairs / self.n.max(1) as f64
    }
}

/// The statistics of `spheres` (module docs). Deterministic: the sample is the same
/// pseudo-random set of distinct indices for every scene of `n` spheres.
pub fn survey(spheres: &[Sphere]) -> Survey {
    let n = spheres.len();
    if n.min(SAMPLE_MAX) < 2 {
        return Survey {
            n,
            sampled: n,
            cell_occupancy: 1.0,
            largest_radius: spheres.first().map_or(0.0, |s| s.radius),
            ..Survey::default()
        };
    }
    // The whole scene's facts: the grid's true cells and giants, its extent, and the few
    // objects of the largest radii, which a sample would miss.
    let facts = SceneFacts::of(spheres);
    let (split, cell_radius) = facts.radii.decide();
    // Points: the grid's side from the bounds (`geom::radii::points_side`), as its half.
    let objects = facts.radii.count.iter().map(|&c| u64::from(c)).sum();
    let cell_radius = match 2.0 * cell_radius < f32::MIN_POSITIVE && facts.lo.x <= facts.hi.x {
        true => crate::geom::radii::points_side(facts.lo, facts.hi, objects) / 2.0,
        false => cell_radius,
    };
    let giant = |s: &Sphere| crate::geom::radii::bin(s.radius) as u32 > split && split < 255;
    let large_from = if n > SAMPLE_MAX {
        facts.large_from(n)
    } else {
        crate::geom::radii::BINS
    };
    let is_large = |s: &Sphere| crate::geom::radii::bin(s.radius) >= large_from;
    let large: Vec<Sphere> = if large_from < crate::geom::radii::BINS {
        spheres.iter().filter(|s| is_large(s)).copied().collect()
    } else {
        Vec::new()
    };
    // The sample of the others (all of them for a scene no larger than the sample).
    let sample: Vec<Sphere> = sample_indices(n, n.min(SAMPLE_MAX))
        .into_iter()
        .map(|i| spheres[i])
        .filter(|s| !is_large(s))
        .collect();
    let m = sample.len();
    let ordinary = (n - large.len()) as f64;
    // Sampled pairs scale by the pairs of the scene's ordinary objects over the sample's, and
    // one sampled object by the ordinary objects over the sample.
    let (pair_scale, object_scale) = if m >= 2 {
        (
            ordinary * (ordinary - 1.0) / (m as f64 * (m as f64 - 1.0)),
            ordinary / m as f64,
        )
    } else {
        (0.0, 0.0)
    };
    let members: Vec<Sphere> = sample.iter().filter(|s| !giant(s)).copied().collect();
    let mut sorted_radii: Vec<f32> = members.iter().map(|s| s.radius).collect();
    sorted_radii.sort_unstable_by(f32::total_cmp);
    let median_radius = sorted_radii
        .get(sorted_radii.len() / 2)
        .copied()
        .unwrap_or(0.0);
    let (neighbours, occupancy) = neighbour_pairs(&members, cell_radius);
    // Giants are tested against the objects whose cells lie in their reach (the grid's rule,
    // `cpu::grid::giants`): counted in the sample. (They were counted as reaching every
    // object, an upper bound that priced 1,000 small boulders among a million grains as a
    // billion tests.)
    let sampled_giant_pairs: f64 = sample
        .iter()
        .filter(|s| giant(s))
        .map(|g| in_reach(&members, g, cell_radius) as f64)
        .sum();
    let sweep = crate::broadphase::sweep_axis::sweep_axis(spheres);
    let by_axis = |axis: usize| SortedIntervals::new(&sample, axis);
    let (on_sweep, on_x) = (by_axis(sweep), by_axis(0));
    // Each large object against the sampled ordinary ones, scaled, and the large ones among
    // themselves, counted (on the pool where they are many: up to 1,024 against 2,048 sampled
    // and each other; whole counts, so that the sums do not depend on the pool's splits).
    let counted = |k: usize| {
        let l = &large[k];
        let near = if giant(l) {
            in_reach(&members, l, cell_radius)
        } else {
            near_cells(&members, l, cell_radius)
        };
        let mut c = [near, on_sweep.overlapping(l), on_x.overlapping(l), 0, 0, 0].map(|v| v as u64);
        for o in &large[k + 1..] {
            c[3] += u64::from(grid_tests(l, o, cell_radius, &giant));
            c[4] += u64::from(overlap_on(l, o, sweep));
            c[5] += u64::from(overlap_on(l, o, 0));
        }
        c
    };
    let add = |a: [u64; 6], b: [u64; 6]| std::array::from_fn(|i| a[i] + b[i]);
    let c = if large.len() >= 64 {
        use rayon::prelude::*;
        let each = (0..large.len()).into_par_iter().map(counted);
        each.reduce(|| [0; 6], add)
    } else {
        (0..large.len()).map(counted).fold([0; 6], add)
    };
    let [large_grid, large_sweep, large_x] =
        [0, 1, 2].map(|i| c[i] as f64 * object_scale + c[i + 3] as f64);
    let giants_total = if split < 255 {
        ((split as usize + 1)..crate::geom::radii::BINS)
            .map(|b| facts.radii.count[b] as usize)
            .sum()
    } else {
        0
    };
    Survey {
        n,
        sampled: m + large.len(),
        radius: cell_radius,
        median_radius,
        giants: giants_total,
        grid_pairs: (neighbours as f64 + sampled_giant_pairs) * pair_scale + large_grid,
        sweep_pairs: on_sweep.pairs() as f64 * pair_scale + large_sweep,
        cells_per_object: box_cells(facts.lo, facts.hi, cell_radius) / n as f64,
        x_pairs: on_x.pairs() as f64 * pair_scale + large_x,
        cell_occupancy: occupancy,
        large: large.len(),
        largest_radius: facts.largest_radius(),
    }
}

/// Whether `a` and `b` overlap on `axis` (closed intervals `[c - r, c + r]`).
fn overlap_on(a: &Sphere, b: &Sphere, axis: usize) -> bool {
    a.center[axis] - a.radius <= b.center[axis] + b.radius
        && b.center[axis] - b.radius <= a.center[axis] + a.radius
}

/// The grid's cell of a coordinate, for cells of side `2 radius` (1 where that is not normal).
fn cell_of(radius: f32) -> impl Fn(f64) -> f64 {
    let side = f64::from(2.0 * radius);
    let side = if side.is_normal() { side } else { 1.0 };
    move |x: f64| (x / side).floor()
}

/// A sphere's reach in cells of side `2 radius`: the cells of `c - r` to `c + r` and one more
/// on each side (`cpu::grid::giants`).
fn reach_of(s: &Sphere, radius: f32) -> ([f64; 3], [f64; 3]) {
    let cell = cell_of(radius);
    let (c, r) = (s.center.as_dvec3(), f64::from(s.radius));
    (
        [0, 1, 2].map(|a| cell(c[a] - r) - 1.0),
        [0, 1, 2].map(|a| cell(c[a] + r) + 1.0),
    )
}

/// Whether the grid tests `a` with `b` (cells of side `2 radius`): two giants whose reaches
/// overlap, a giant with an object whose cell is in its reach, two others in neighbouring cells.
fn grid_tests(a: &Sphere, b: &Sphere, radius: f32, giant: &impl Fn(&Sphere) -> bool) -> bool {
    let cell = cell_of(radius);
    let home = |s: &Sphere| [0, 1, 2].map(|k| cell(f64::from(s.center[k])));
    match (giant(a), giant(b)) {
        (true, true) => {
            let ((alo, ahi), (blo, bhi)) = (reach_of(a, radius), reach_of(b, radius));
            (0..3).all(|k| alo[k] <= bhi[k] && blo[k] <= ahi[k])
        }
        (true, false) | (false, true) => {
            let (g, o) = if giant(a) { (a, b) } else { (b, a) };
            let ((lo, hi), c) = (reach_of(g, radius), home(o));
            (0..3).all(|k| lo[k] <= c[k] && c[k] <= hi[k])
        }
        (false, false) => {
            let (ca, cb) = (home(a), home(b));
            (0..3).all(|k| (ca[k] - cb[k]).abs() <= 1.0)
        }
    }
}

/// Objects of `spheres` whose cells (side `2 radius`) lie within a giant's reach, the cells of
/// `c - r` to `c + r` and one more on each side (`cpu::grid::giants`).
fn in_reach(spheres: &[Sphere], giant: &Sphere, radius: f32) -> usize {
    let cell = cell_of(radius);
    let (lo, hi) = reach_of(giant, radius);
    spheres
        .iter()
        .filter(|o| {
            (0..3).all(|a| {
                let k = cell(f64::from(o.center[a]));
                lo[a] <= k && k <= hi[a]
            })
        })
        .count()
}

/// Objects of `spheres` whose cells (side `2 radius`) neighbour `s`'s cell or are its own.
fn near_cells(spheres: &[Sphere], s: &Sphere, radius: f32) -> usize {
    let side = f64::from(2.0 * radius);
    let side = if side.is_normal() { side } else { 1.0 };
    let cell = |c: Vec3| [0, 1, 2].map(|a| (f64::from(c[a]) / side).floor());
    let home = cell(s.center);
    spheres
        .iter()
        .filter(|o| {
            let c = cell(o.center);
            (0..3).all(|a| (c[a] - home[a]).abs() <= 1.0)
        })
        .count()
}

/// A sample's intervals `[c - r, c + r]` on one axis, by start and by end.
struct SortedIntervals {
    axis: usize,
    starts: Vec<f32>,
    ends: Vec<f32>,
    /// (start, end) by start.
    by_start: Vec<(f32, f32)>,
}

impl SortedIntervals {
    fn new(spheres: &[Sphere], axis: usize) -> Self {
        let mut by_start: Vec<(f32, f32)> = spheres
            .iter()
            .map(|s| (s.center[axis] - s.radius, s.center[axis] + s.radius))
            .collect();
        by_start.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let starts: Vec<f32> = by_start.iter().map(|p| p.0).collect();
        let mut ends: Vec<f32> = by_start.iter().map(|p| p.1).collect();
        ends.sort_unstable_by(f32::total_cmp);
        Self {
            axis,
            starts,
            ends,
            by_start,
        }
    }

    /// Pairs of the sample whose intervals overlap (closed).
    fn pairs(&self) -> u64 {
        // Interval k (k-th by start) overlaps the later-starting intervals whose start <= its
        // end.
        self.by_start
            .iter()
            .enumerate()
            .map(|(k, &(_, end))| (self.starts.partition_point(|&s| s <= end) - k - 1) as u64)
            .sum()
    }

    /// Sampled intervals overlapping `s`'s on the axis: those starting at or before its end,
    /// less those ending before its start.
    fn overlapping(&self, s: &Sphere) -> usize {
        let (lo, hi) = (
            s.center[self.axis] - s.radius,
            s.center[self.axis] + s.radius,
        );
        let starting = self.starts.partition_point(|&v| v <= hi);
        let ended = self.ends.partition_point(|&v| v < lo);
        starting.saturating_sub(ended)
    }
}

/// Up to `m` distinct indices below `n`, pseudo-random and the same on every call (all of them
/// when `m == n`). Not a stride: scenes list an object's neighbours next to it (clusters are
/// made one after another), and a stride of `n / m` would sample one object per cluster.
fn sample_indices(n: usize, m: usize) -> Vec<usize> {
    if m >= n {
        return (0..n).collect();
    }
    // SplitMix64 of the draw number, a multiply-shift into 0..n.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (((z ^ (z >> 31)) as u128 * n as u128) >> 64) as usize
    };
    let mut picked: Vec<usize> = (0..m).map(|_| next()).collect();
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// Pairs of `spheres` whose centres lie in neighbouring cells of side `2 radius` (the grid's
/// rule, floors of `c / s` in f64: an estimate needs no exact cells), and the spheres per
/// occupied cell.
fn neighbour_pairs(spheres: &[Sphere], radius: f32) -> (u64, f64) {
    if spheres.is_empty() {
        return (0, 1.0);
    }
    let side = f64::from(2.0 * radius);
    let side = if side.is_normal() { side } else { 1.0 };
    // `+ 0.0`: -0.0 is the cell of +0.0.
    let floor = |c: f32| (f64::from(c) / side).floor() + 0.0;
    let cells: Vec<[f64; 3]> = spheres
        .iter()
        .map(|s| [0, 1, 2].map(|a| floor(s.center[a])))
        .collect();
    let (low, high) = cells.iter().fold(
        ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
        |(lo, hi), c| {
            (
                [0, 1, 2].map(|a| lo[a].min(c[a])),
                [0, 1, 2].map(|a| hi[a].max(c[a])),
            )
        },
    );
    // Within 2^21 - 2 cells on every axis, cells relative to the lowest pack into a u64 (21
    // bits an axis from 1, a spare bit between axes so that a step of one never carries into
    // the next axis); wider samples keep their cells whole (packed, cells 2^21 apart were one
    // cell: a lattice of that spacing made the grid look quadratic). Past 2^53 cells a step of
    // one rounds back onto the cell itself, which is then no neighbour.
    const NARROW: f64 = ((1u64 << 21) - 2) as f64;
    if (0..3).all(|a| high[a] - low[a] < NARROW) {
        let pack = |c: &[f64; 3]| {
            let [x, y, z] = [0, 1, 2].map(|a| (c[a] - low[a]) as u64 + 1);
            (z << 44) | (y << 22) | x
        };
        let step = |c: u64, (dx, dy, dz): (i64, i64, i64)| {
            let moved = |v: u64, d: i64, shift: u32| v.wrapping_add((d as u64) << shift);
            Some(moved(moved(moved(c, dx, 0), dy, 22), dz, 44))
        };
        count_neighbours(cells.iter().map(pack).collect(), step)
    } else {
        // (z, y, x) order, as the packed cells sort.
        let key = |c: &[f64; 3]| [c[2], c[1], c[0]].map(f64::to_bits).map(ordered_bits);
        let step = |c: [u64; 3], (dx, dy, dz): (i64, i64, i64)| {
            let [z, y, x] = c.map(unordered_bits);
            let moved = [z + dz as f64, y + dy as f64, x + dx as f64];
            let still = (dz != 0 && moved[0] == z)
                || (dy != 0 && moved[1] == y)
                || (dx != 0 && moved[2] == x);
            (!still).then(|| moved.map(|v| ordered_bits(v.to_bits())))
        };
        count_neighbours(cells.iter().map(key).collect(), step)
    }
}

/// An f64's bits as a u64 that sorts as the number does.
fn ordered_bits(bits: u64) -> u64 {
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The f64 of [`ordered_bits`].
fn unordered_bits(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// [`neighbour_pairs`] over cell keys: pairs within each cell and with its 13 forward
/// neighbours (`step`: a cell's neighbour at an offset, or none), and objects per cell.
fn count_neighbours<K: Ord + Copy>(
    mut cells: Vec<K>,
    step: impl Fn(K, (i64, i64, i64)) -> Option<K>,
) -> (u64, f64) {
    let objects = cells.len();
    cells.sort_unstable();
    // Runs of equal cells: (cell, count).
    let mut runs: Vec<(K, u64)> = Vec::new();
    for c in cells {
        match runs.last_mut() {
            Some((last, count)) if *last == c => *count += 1,
            _ => runs.push((c, 1)),
        }
    }
    let occupancy = objects as f64 / runs.len() as f64;
    let find = |c: K| {
        runs.binary_search_by_key(&c, |&(k, _)| k)
            .map_or(0, |i| runs[i].1)
    };
    let mut pairs = 0u64;
    for &(c, count) in &runs {
        pairs += count * (count - 1) / 2;
        // The 13 forward neighbours: each pair of neighbouring cells once.
        for offset in FORWARD {
            pairs += step(c, offset).map_or(0, |t| count * find(t));
        }
    }
    (pairs, occupancy)
}

/// The 13 neighbour offsets after `(0, 0, 0)` in `(z, y, x)` order.
pub(super) const FORWARD: [(i64, i64, i64); 13] = [
    (1, 0, 0),
    (-1, 1, 0),
    (0, 1, 0),
    (1, 1, 0),
    (-1, -1, 1),
    (0, -1, 1),
    (1, -1, 1),
    (-1, 0, 1),
    (0, 0, 1),
    (1, 0, 1),
    (-1, 1, 1),
    (0, 1, 1),
    (1, 1, 1),
];

/// Cells of side `2 radius` in the box `lo..hi` of the scene's centres.
fn box_cells(lo: Vec3, hi: Vec3, radius: f32) -> f64 {
    let side = f64::from(2.0 * radius);
    let side = if side.is_normal() { side } else { 1.0 };
    (0..3)
        .map(|a| (f64::from(hi[a]) - f64::from(lo[a])) / side + 1.0)
        .product()
}
