//! Uniform grid (beyond the paper).
//!
//! Cell side `s = 2 r_max` (`s = 1` when every radius is 0); `m` = componentwise minimum of the
//! centres; the cell of object `i` is `k[a] = floor((c_i[a] - m[a]) / s)` per axis, as i32
//! clamped to `[0, 2^20 - 1]` (clamping keeps neighbours within one cell of each other, so it
//! only merges far cells and never loses a pair). Two touching objects have `|c_i - c_j| <= s`
//! on every axis, so their cells differ by at most one on every axis.
//!
//! **Tests** (the GPU must count identically): every unordered pair `{i, j}` whose cells differ
//! by at most one on every axis is tested exactly once; `tests` = the number of such pairs. No
//! other filter is applied before the sphere test.
//!
//! CPU layout: objects sorted by `(kz, ky, kx, index)`. Objects with equal `(kz, ky)` form a
//! *row*, ordered by `kx`. An object visits the later objects of its own row while
//! `kx_j <= kx_i + 1` (its own cell after it, then cell `kx + 1`), and in each of the four
//! forward rows `(ky + 1, kz)`, `(ky - 1, kz + 1)`, `(ky, kz + 1)`, `(ky + 1, kz + 1)` the objects
//! with `kx_i - 1 <= kx_j <= kx_i + 1`: the 13 forward neighbour cells plus its own cell.

use super::emit::{PairEmitter, Sink};
use crate::broadphase::{Backend, BroadPhase, Clock, Method, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::{Sphere, max_radius};
use glam::Vec3;
use rayon::prelude::*;
use std::time::Instant;

/// Cells per axis at most (clamped beyond).
pub const CELLS_PER_AXIS: u32 = 1 << 20;
const CELL_MAX: i32 = (CELLS_PER_AXIS - 1) as i32;
/// Bits of one cell coordinate in a row key `(kz << 20) | ky`.
const ROW_SHIFT: u32 = 20;
/// Row offsets `(dy, dz)` of the four forward rows.
const FORWARD_ROWS: [(i64, i64); 4] = [(1, 0), (-1, 1), (0, 1), (1, 1)];
const PARALLEL_MIN: usize = 1 << 14;

/// The grid of a scene: where cells start and how large they are.
#[derive(Clone, Copy, Debug)]
pub struct GridFrame {
    pub origin: Vec3,
    pub cell_side: f32,
}

impl GridFrame {
    pub fn of(spheres: &[Sphere]) -> Self {
        let r_max = max_radius(spheres);
        let cell_side = if r_max > 0.0 { 2.0 * r_max } else { 1.0 };
        let origin = if spheres.len() >= PARALLEL_MIN {
            spheres
                .par_iter()
                .map(|s| s.center)
                .reduce(|| Vec3::INFINITY, Vec3::min)
        } else {
            spheres
                .iter()
                .map(|s| s.center)
                .fold(Vec3::INFINITY, Vec3::min)
        };
        Self { origin, cell_side }
    }

    /// Cell coordinates of a centre, clamped to `[0, 2^20 - 1]`.
    #[inline(always)]
    pub fn cell(&self, center: Vec3) -> [u32; 3] {
        let k = |a: usize| {
            let f = ((center[a] - self.origin[a]) / self.cell_side).floor();
            (f as i32).clamp(0, CELL_MAX) as u32
        };
        [k(0), k(1), k(2)]
    }
}

#[inline(always)]
fn row_key(cell: [u32; 3]) -> u64 {
    (u64::from(cell[2]) << ROW_SHIFT) | u64::from(cell[1])
}

fn bits_for(max_value: u64) -> u32 {
    64 - max_value.leading_zeros()
}

#[derive(Default)]
pub struct Grid {
    cells: Vec<[u32; 3]>,
    keys: Vec<u64>,
    wide_keys: Vec<u128>,
    /// Sorted order: sphere, original index, kx, row id.
    sorted: Vec<Sphere>,
    index: Vec<u32>,
    kx: Vec<u32>,
    row_of: Vec<u32>,
    /// Per row: key `(kz << 20) | ky` and first position; `row_start` has a final sentinel.
    row_keys: Vec<u64>,
    row_start: Vec<u32>,
    emitter: PairEmitter,
}

impl Grid {
    /// Sets the most pairs one call may store (default [`super::emit::MAX_STORED_PAIRS`]); a
    /// call finding more fails with `Error::TooLarge`.
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.emitter.set_pair_limit(limit);
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Computes cells and sorts the objects by `(kz, ky, kx, index)`, filling the sorted arrays.
    fn sort(&mut self, spheres: &[Sphere]) {
        let n = spheres.len();
        let frame = GridFrame::of(spheres);
        self.cells.clear();
        if n >= PARALLEL_MIN {
            self.cells
                .par_extend(spheres.par_iter().map(|s| frame.cell(s.center)));
        } else {
            self.cells
                .extend(spheres.iter().map(|s| frame.cell(s.center)));
        }
        let max = self.cells.iter().fold([0u32; 3], |m, c| {
            [m[0].max(c[0]), m[1].max(c[1]), m[2].max(c[2])]
        });
        let (bx, by, bz) = (
            bits_for(max[0].into()),
            bits_for(max[1].into()),
            bits_for(max[2].into()),
        );
        let bi = bits_for(n.saturating_sub(1) as u64);
        self.index.clear();
        if bx + by + bz + bi <= 64 {
            // Common case: the whole (cell, index) key fits one u64.
            let pack = |(i, c): (usize, &[u32; 3])| {
                let cell = (((u64::from(c[2]) << by) | u64::from(c[1])) << bx) | u64::from(c[0]);
                (cell << bi) | i as u64
            };
            self.keys.clear();
            if n >= PARALLEL_MIN {
                self.keys
                    .par_extend(self.cells.par_iter().enumerate().map(pack));
                self.keys.par_sort_unstable();
            } else {
                self.keys.extend(self.cells.iter().enumerate().map(pack));
                self.keys.sort_unstable();
            }
            let mask = if bi == 0 { 0 } else { u64::MAX >> (64 - bi) };
            self.index
                .extend(self.keys.iter().map(|&k| (k & mask) as u32));
        } else {
            let pack = |(i, c): (usize, &[u32; 3])| {
                let cell = (u128::from(row_key(*c)) << ROW_SHIFT) | u128::from(c[0]);
                (cell << 32) | i as u128
            };
            self.wide_keys.clear();
            self.wide_keys
                .par_extend(self.cells.par_iter().enumerate().map(pack));
            self.wide_keys.par_sort_unstable();
            self.index.extend(self.wide_keys.iter().map(|&k| k as u32));
        }
        self.sorted.clear();
        self.sorted
            .extend(self.index.iter().map(|&i| spheres[i as usize]));
        self.kx.clear();
        self.kx
            .extend(self.index.iter().map(|&i| self.cells[i as usize][0]));
        self.row_keys.clear();
        self.row_start.clear();
        self.row_of.clear();
        for &i in &self.index {
            let key = row_key(self.cells[i as usize]);
            if self.row_keys.last() != Some(&key) {
                self.row_keys.push(key);
                self.row_start.push(self.row_of.len() as u32);
            }
            self.row_of.push((self.row_keys.len() - 1) as u32);
        }
        self.row_start.push(n as u32);
    }
}

/// Positions `[start, end)` of the row with `key`, empty when absent.
fn row_range(row_keys: &[u64], row_start: &[u32], key: u64) -> (usize, usize) {
    match row_keys.binary_search(&key) {
        Ok(r) => (row_start[r] as usize, row_start[r + 1] as usize),
        Err(_) => (0, 0),
    }
}

impl Grid {
    /// The candidate loop over sorted positions `rows` (see the module docs).
    fn visit(&self, positions: std::ops::Range<usize>, sink: &mut Sink) {
        let (sorted, index, kx) = (&self.sorted, &self.index, &self.kx);
        let mut current_row = usize::MAX;
        let mut own_end = 0;
        // Per forward row: next candidate position and end.
        let mut forward = [(0usize, 0usize); 4];
        for p in positions {
            let r = self.row_of[p] as usize;
            if r != current_row {
                current_row = r;
                own_end = self.row_start[r + 1] as usize;
                let key = self.row_keys[r];
                let (ky, kz) = (
                    (key & (u64::from(CELLS_PER_AXIS) - 1)) as i64,
                    (key >> ROW_SHIFT) as i64,
                );
                for (slot, (dy, dz)) in forward.iter_mut().zip(FORWARD_ROWS) {
                    let (ny, nz) = (ky + dy, kz + dz);
                    *slot = if ny < 0 || ny > i64::from(CELL_MAX) || nz > i64::from(CELL_MAX) {
                        (0, 0)
                    } else {
                        row_range(
                            &self.row_keys,
                            &self.row_start,
                            ((nz as u64) << ROW_SHIFT) | ny as u64,
                        )
                    };
                }
            }
            let (xp, sp, ip) = (kx[p], &sorted[p], index[p]);
            for q in p + 1..own_end {
                if kx[q] > xp + 1 {
                    break;
                }
                sink.test(sp, &sorted[q], ip, index[q]);
            }
            for (next, end) in forward.iter_mut() {
                while *next < *end && kx[*next] + 1 < xp {
                    *next += 1;
                }
                for q in *next..*end {
                    if kx[q] > xp + 1 {
                        break;
                    }
                    sink.test(sp, &sorted[q], ip, index[q]);
                }
            }
        }
    }
}

impl BroadPhase for Grid {
    fn name(&self) -> &str {
        Method::Grid.name()
    }

    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let mut stats = Stats::default();
        let start = Instant::now();
        self.sort(spheres);
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let mut emitter = std::mem::take(&mut self.emitter);
        let result = emitter.run(spheres.len(), out, |positions, sink| {
            self.visit(positions, sink)
        });
        self.emitter = emitter;
        let (tests, pairs) = result?;
        stats.tests = tests;
        stats.pairs = pairs;
        stats.stage("pairs", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}
