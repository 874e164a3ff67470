//! `auto`: the method chosen from the scene's own statistics (docs/design.md §2.12), without
//! running the candidates.
//!
//! [`survey`] reads a pseudo-random sample of at most [`SAMPLE_MAX`] spheres (about 0.5 ms at
//! 10^6, the sample's reads from memory) and estimates, scaled from the sample to the whole
//! scene, the quantities that decide every method's work:
//!
//! * **grid neighbours**: pairs whose centres fall in neighbouring cells of side `2 r` (`r` the
//!   sample's largest radius below its giants): the grid's tests;
//! * **sweep overlaps**: pairs whose intervals `[c - r, c + r]` overlap on the axis of largest
//!   spread: what sweep-and-prune scans (it then rejects on the other two axes); the same on x,
//!   what the paper's x sweep tests;
//! * the cells of the sample's bounding box per object (a *spread* scene costs the grid more).
//!
//! [`choose`] prices `grid`, `sap`, `x` and `brute_force` with a per-object and a per-candidate
//! cost per backend ([`Costs`], fitted to the scenes of `sweepfan auto-bench`, `results/auto/`)
//! and takes the cheapest. The paper's other methods (origin distance, the xy and xyz cascades,
//! the fewest-candidate axis) were never the fastest by more than a few percent on any scene
//! measured: they scan what x scans and pay more per candidate.
//!
//! [`Auto`] is a [`BroadPhase`] that chooses on its first frame, when the number of objects
//! changes and every [`RECHOOSE_EVERY`] frames (a moving scene may change character), keeps the
//! methods it built (their buffers and, on the GPU, pipelines), and reports its choice in
//! [`Stats::chosen`]. While frame events are tracked by the backend it keeps its first choice:
//! a backend's events compare a frame with that same backend's previous frame.

use crate::broadphase::{Backend, BroadPhase, Diagnostics, FrameEvents, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::radii::Histogram;
use crate::geom::sphere::Sphere;
use glam::Vec3;
use serde::Serialize;

/// Most spheres the survey samples.
pub const SAMPLE_MAX: usize = 2048;
/// Frames between two choices of an [`Auto`] whose scene keeps its size.
pub const RECHOOSE_EVERY: u64 = 32;

/// What `auto` chose and why (in every row that ran `auto`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    /// The method chosen.
    pub method: Method,
    /// The statistics that decided, in words: `"uniform radii, 1.00 spheres a cell, 0.3 tests
    /// an object"`.
    pub reason: String,
}

impl std::fmt::Display for Choice {
    /// `grid (uniform radii, 1.00 spheres a cell, 0.3 tests an object)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.method, self.reason)
    }
}

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
    /// the top exponent bins holding at most [`LARGE_MAX`] objects, when the scene is larger
    /// than the sample.
    pub large: usize,
    /// The scene's largest radius.
    pub largest_radius: f32,
}

/// Most objects of the largest radii that the survey takes whole (module docs).
pub const LARGE_MAX: u32 = 1024;

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

    /// The lowest exponent bin of the largest radii taken whole: the top bins holding at most
    /// [`LARGE_MAX`] objects in all (`BINS`: none).
    fn large_from(&self) -> usize {
        let mut above = 0u32;
        let mut from = crate::geom::radii::BINS;
        for b in (0..crate::geom::radii::BINS).rev() {
            above += self.radii.count[b];
            if above > LARGE_MAX {
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
    let giant = |s: &Sphere| crate::geom::radii::bin(s.radius) as u32 > split && split < 255;
    let large_from = if n > SAMPLE_MAX {
        facts.large_from()
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
    let sampled_giants = sample.len() - members.len();
    let mut sorted_radii: Vec<f32> = members.iter().map(|s| s.radius).collect();
    sorted_radii.sort_unstable_by(f32::total_cmp);
    let median_radius = sorted_radii
        .get(sorted_radii.len() / 2)
        .copied()
        .unwrap_or(0.0);
    let (neighbours, occupancy) = neighbour_pairs(&members, cell_radius);
    // Giants are tested against everything in their reach: count them as reaching every
    // object (an upper bound, and giants are few).
    let sampled_giant_pairs = sampled_giants as f64 * m as f64;
    let sweep = sweep_axis(facts.lo, facts.hi);
    let by_axis = |axis: usize| SortedIntervals::new(&sample, axis);
    let (on_sweep, on_x) = (by_axis(sweep), by_axis(0));
    // Each large object against the sampled ordinary ones, scaled, and the large ones among
    // themselves, counted.
    let mut large_grid = 0.0;
    let (mut large_sweep, mut large_x) = (0.0, 0.0);
    for (k, l) in large.iter().enumerate() {
        large_grid += if giant(l) {
            ordinary
        } else {
            near_cells(&members, l, cell_radius) as f64 * object_scale
        };
        large_sweep += on_sweep.overlapping(l) as f64 * object_scale;
        large_x += on_x.overlapping(l) as f64 * object_scale;
        for o in &large[k + 1..] {
            large_grid += 1.0;
            large_sweep += f64::from(u8::from(overlap_on(l, o, sweep)));
            large_x += f64::from(u8::from(overlap_on(l, o, 0)));
        }
    }
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
    // Cells relative to the sample's lowest, 21 bits an axis (farther cells wrap: a rare
    // false neighbour in an estimate), packed z, y, x with a spare bit between axes so that
    // an offset of -1 or +1 never carries into the next axis.
    let floor = |c: f32| (f64::from(c) / side).floor();
    let low = spheres.iter().fold([f64::INFINITY; 3], |m, s| {
        [0, 1, 2].map(|a| m[a].min(floor(s.center[a])))
    });
    const MASK: u64 = (1 << 21) - 1;
    let pack = |c: [u64; 3]| (c[2] << 44) | (c[1] << 22) | c[0];
    let mut cells: Vec<u64> = spheres
        .iter()
        .map(|s| pack([0, 1, 2].map(|a| ((floor(s.center[a]) - low[a]) as u64 + 1) & MASK)))
        .collect();
    cells.sort_unstable();
    // Runs of equal cells: (cell, count).
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for c in cells {
        match runs.last_mut() {
            Some((last, count)) if *last == c => *count += 1,
            _ => runs.push((c, 1)),
        }
    }
    let occupancy = spheres.len() as f64 / runs.len() as f64;
    let find = |c: u64| {
        runs.binary_search_by_key(&c, |&(k, _)| k)
            .map_or(0, |i| runs[i].1)
    };
    let mut pairs = 0u64;
    for &(c, count) in &runs {
        pairs += count * (count - 1) / 2;
        // The 13 forward neighbours: each pair of neighbouring cells once. Cells start at 1
        // per axis, so `c - 1` on an axis stays within it.
        for (dx, dy, dz) in FORWARD {
            let moved = |v: u64, d: i64, shift: u32| v.wrapping_add((d as u64) << shift);
            let target = moved(moved(moved(c, dx, 0), dy, 22), dz, 44);
            pairs += count * find(target);
        }
    }
    (pairs, occupancy)
}

/// The 13 neighbour offsets after `(0, 0, 0)` in `(z, y, x)` order.
const FORWARD: [(i64, i64, i64); 13] = [
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

/// The axis of largest centre spread (ties to the lowest), as sap takes it.
fn sweep_axis(lo: Vec3, hi: Vec3) -> usize {
    let spread = hi - lo;
    (1..3).fold(0, |a, b| if spread[b] > spread[a] { b } else { a })
}

/// Cells of the scene's bounding box per object past which the grid walks a *spread* scene:
/// nearly every object alone in its row (CPU) or its keys scattered (GPU), and each object
/// costs the grid more (the wide scene: 1M objects over 2e7 cells per axis).
pub const SPREAD_CELLS_PER_OBJECT: f64 = 1_048_576.0;

/// A backend's price of each candidate method in nanoseconds: per object and per candidate pair
/// (grid: neighbour pairs; sap: overlaps on the axis of largest spread; x: overlaps on x; brute
/// force: every pair). The grid has a per-object price for spread scenes too.
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    /// grid: per object, per neighbour pair.
    pub grid: (f64, f64),
    /// grid: per object, extra, on spread scenes.
    pub grid_spread_object: f64,
    /// sap: per object, per overlap on the axis of largest spread.
    pub sap: (f64, f64),
    /// x: per object, per overlap on x.
    pub x: (f64, f64),
    /// brute force: per object, per pair.
    pub brute_force: (f64, f64),
}

impl Costs {
    /// The prices on `backend`; `software`: a CPU-emulated GPU adapter (lavapipe, SwiftShader).
    ///
    /// Fitted to `sweepfan auto-bench` on this project's 2-core machine (`results/auto/`): the
    /// CPU's times directly, software adapters' from lavapipe's. Hardware GPUs: from the one
    /// real-GPU pair measured so far (H100, density 1M: grid 3.23 ms, sap 11.55 ms a frame,
    /// `../shared/baselines.md`), brute force and x by their work alone; the next lent GPU runs
    /// `auto-bench --backend gpu` to fit them.
    pub fn of(backend: Backend, software: bool) -> Self {
        match (backend, software) {
            (Backend::Cpu, _) => Self {
                grid: (18.0, 1.0),
                grid_spread_object: 60.0,
                sap: (28.0, 1.5),
                x: (22.0, 1.05),
                brute_force: (0.0, 1.2),
            },
            (Backend::Gpu, true) => Self {
                grid: (2_700.0, 80.0),
                grid_spread_object: 5_000.0,
                sap: (1_900.0, 30.0),
                x: (900.0, 40.0),
                brute_force: (0.0, 25.0),
            },
            (Backend::Gpu, false) => Self {
                grid: (3.2, 0.01),
                grid_spread_object: 6.4,
                sap: (3.5, 0.003),
                x: (3.5, 0.003),
                brute_force: (0.0, 0.003),
            },
        }
    }
}

/// The method `auto` runs on `spheres` on `backend` (`software`: see [`Costs::of`]), and why.
pub fn choose(spheres: &[Sphere], backend: Backend, software: bool) -> Choice {
    choose_from(&survey(spheres), &Costs::of(backend, software))
}

/// Each candidate's price on survey `s` (ns, the module docs' `a n + b k`), grid first.
pub fn prices(s: &Survey, costs: &Costs) -> [(Method, f64); 4] {
    let n = s.n as f64;
    let grid_object = if s.cells_per_object > SPREAD_CELLS_PER_OBJECT {
        costs.grid_spread_object
    } else {
        costs.grid.0
    };
    let price = |(object, pair): (f64, f64), pairs: f64| object * n + pair * pairs;
    [
        (
            Method::Grid,
            price((grid_object, costs.grid.1), s.grid_pairs),
        ),
        (Method::Sap, price(costs.sap, s.sweep_pairs)),
        (Method::X, price(costs.x, s.x_pairs)),
        (
            Method::BruteForce,
            price(costs.brute_force, n * (n - 1.0) / 2.0),
        ),
    ]
}

/// [`choose`] from a survey and a backend's prices: the cheapest of grid, sap, x and brute
/// force.
pub fn choose_from(s: &Survey, costs: &Costs) -> Choice {
    let n = s.n as f64;
    let spread_scene = s.cells_per_object > SPREAD_CELLS_PER_OBJECT;
    let priced = prices(s, costs);
    // The first of the cheapest: ties go to the grid.
    let (method, _) = priced
        .into_iter()
        .fold((Method::Grid, f64::INFINITY), |best, c| {
            if c.1 < best.1 { c } else { best }
        });
    let radius_spread = if s.median_radius > 0.0 {
        s.radius / s.median_radius
    } else {
        1.0
    };
    let shape = if s.giants > 0 {
        format!("{} giants", s.giants)
    } else if s.large > 0 && s.largest_radius > 4.0 * s.median_radius {
        format!(
            "{} large objects up to radius {:.3e}",
            s.large, s.largest_radius
        )
    } else if radius_spread > 4.0 {
        format!("radii spread {radius_spread:.0}x")
    } else {
        "uniform radii".to_string()
    };
    let layout = if spread_scene {
        "spread, ".to_string()
    } else {
        String::new()
    };
    let reason = match method {
        Method::BruteForce => format!(
            "{} objects, {:.0} grid tests an object",
            s.n,
            s.grid_per_object()
        ),
        Method::Grid => format!(
            "{layout}{shape}, {:.2} spheres a cell, {:.1} tests an object",
            s.cell_occupancy,
            s.grid_per_object()
        ),
        Method::Sap => format!(
            "{layout}{shape}, {:.1} sweep candidates against {:.1} grid tests an object",
            s.sweep_per_object(),
            s.grid_per_object()
        ),
        _ => format!(
            "{layout}{shape}, {:.1} candidates on x against {:.1} grid tests an object",
            s.x_pairs / n.max(1.0),
            s.grid_per_object()
        ),
    };
    Choice { method, reason }
}

/// Builds a backend's method on demand.
pub type Builder = Box<dyn FnMut(Method) -> Result<Box<dyn BroadPhase + Send>> + Send>;

/// The `auto` broad phase (module docs): one of `grid`, `sap`, `x` and `brute_force`, chosen
/// per scene, behind one [`BroadPhase`].
pub struct Auto {
    backend: Backend,
    costs: Costs,
    build: Builder,
    built: Vec<(Method, Box<dyn BroadPhase + Send>)>,
    current: Option<Choice>,
    /// Objects of the frame the choice was made for, and frames since.
    chosen_for: usize,
    frames_since: u64,
    /// Whether frame events are asked of the backend (then the first choice stays).
    events: bool,
}

impl Auto {
    /// `auto` on `backend` (`software`: a CPU-emulated GPU adapter, [`Costs::of`]), building
    /// each method it chooses with `build`.
    pub fn new(backend: Backend, software: bool, build: Builder) -> Self {
        Self {
            backend,
            costs: Costs::of(backend, software),
            build,
            built: Vec::new(),
            current: None,
            chosen_for: 0,
            frames_since: 0,
            events: false,
        }
    }

    /// The last choice, if a frame ran.
    pub fn choice(&self) -> Option<&Choice> {
        self.current.as_ref()
    }

    fn inner(&mut self) -> Option<&mut Box<dyn BroadPhase + Send>> {
        let method = self.current.as_ref()?.method;
        self.built
            .iter_mut()
            .find(|(m, _)| *m == method)
            .map(|(_, b)| b)
    }

    fn inner_ref(&self) -> Option<&(dyn BroadPhase + Send)> {
        let method = self.current.as_ref()?.method;
        self.built
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, b)| b.as_ref())
    }

    /// Chooses for this frame (module docs) and builds the method if needed.
    fn prepare(&mut self, spheres: &[Sphere]) -> Result<()> {
        let stale = self.current.is_none()
            || (!self.events
                && (self.chosen_for != spheres.len() || self.frames_since >= RECHOOSE_EVERY));
        if stale {
            self.current = Some(choose_from(&survey(spheres), &self.costs));
            self.chosen_for = spheres.len();
            self.frames_since = 0;
        }
        self.frames_since += 1;
        let method = self
            .current
            .as_ref()
            .map(|c| c.method)
            .expect("chosen above");
        if !self.built.iter().any(|(m, _)| *m == method) {
            let mut broad = (self.build)(method)?;
            if self.events {
                broad.track_events(true)?;
            }
            self.built.push((method, broad));
        }
        Ok(())
    }
}

impl BroadPhase for Auto {
    fn name(&self) -> &str {
        "auto"
    }

    fn backend(&self) -> Backend {
        self.backend
    }

    /// The chosen method's.
    fn diagnostics(&self) -> Option<&dyn Diagnostics> {
        self.inner_ref()?.diagnostics()
    }

    /// Events by the backend: on only where the chosen method's backend can; the first choice
    /// then stays for every later frame (module docs).
    fn track_events(&mut self, on: bool) -> Result<bool> {
        if !on {
            self.events = false;
            for (_, b) in &mut self.built {
                b.track_events(false)?;
            }
            return Ok(false);
        }
        // Asked before any frame: probe with the method most scenes choose; a different first
        // choice asks its own method when built (`prepare`).
        let accepted = match self.inner() {
            Some(b) => b.track_events(true)?,
            None => {
                let mut probe = (self.build)(Method::Grid)?;
                let accepted = probe.track_events(true)?;
                self.built.push((Method::Grid, probe));
                accepted
            }
        };
        self.events = accepted;
        Ok(accepted)
    }

    fn take_events(&mut self) -> Option<FrameEvents> {
        self.inner()?.take_events()
    }

    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let start = web_time::Instant::now();
        self.prepare(spheres)?;
        let choosing = start.elapsed().as_secs_f64();
        let choice = self.current.clone();
        let inner = self.inner().expect("built by prepare");
        let mut stats = inner.find_pairs_validated(spheres, out)?;
        stats.stages.insert(
            0,
            crate::broadphase::StageTime {
                stage: "choose",
                seconds: choosing,
                clock: crate::broadphase::Clock::Wall,
            },
        );
        stats.chosen = choice;
        Ok(stats)
    }
}

#[cfg(test)]
mod tests;
