//! Uniform grid (beyond the paper).
//!
//! Up to 1,024 objects far larger than the rest are *giants* ([`giants`]), kept out of the cells.
//! Cell side `s = 2 r` with `r` the largest radius of the others (`s = 1` when `2 r` is 0 or
//! below the normal f32 range); the cell of object `i` is `k[a] = cell_axis(c_i[a])` per axis
//! ([`frame`]): the floor of the real quotient `c / s`
//! below `2^24` cells, one cell per f32 value beyond (where consecutive values are more than `s`
//! apart). Monotone, unclamped, and two touching objects (`|c_i[a] - c_j[a]| <= s` on every
//! axis) get cells that differ by at most one on every axis. Cells are stored relative to the
//! minimum centre's cell.
//!
//! **Tests** (the GPU must count identically): every unordered pair `{i, j}` of non-giants whose
//! cells differ by at most one on every axis is tested exactly once, and the giants' pairs as
//! [`giants`] says; `tests` = the number of such pairs. No other filter is applied before the
//! sphere test. The count depends only on the cells, not on
//! the traversal. The cell is the floor of the *real* quotient on both sides (docs/design.md
//! §9.2): here an f64 estimate corrected by exact f64 products (`frame::cell_axis`); the GPU
//! corrects its f32 division (WGSL allows 2.5 ULP) with integer comparisons. An earlier
//! version floored the f32 quotient, which a GPU's division can move across a cell wall.
//!
//! CPU layout ([`sparse`]): objects sorted into *rows* of equal `(kz, ky)` (a stable radix
//! sort of keys packing the cell in as many bits as the scene needs, above the index, on the
//! row bits only, carrying the spheres along).
//! A row of at most 16 objects stays in index order: the walk matches it all at once through a
//! window of its cells x. A longer row is then sorted by `(kx, index)`. In its own row an object
//! pairs with the later objects of cells `kx` and `kx + 1` (in a long row: while
//! `kx_j <= kx_i + 1`), and in each of the four forward rows `(ky + 1, kz)`, `(ky - 1, kz + 1)`,
//! `(ky, kz + 1)`, `(ky + 1, kz + 1)` with the objects of `kx_i - 1 <= kx_j <= kx_i + 1`: its
//! own cell plus the 13 forward neighbour cells, so each pair of neighbouring cells is visited
//! from exactly one side. Pointers into long forward rows only move forward while the own row
//! is in x order too (else a binary search per object). Grids with at most a few cells per
//! object use [`dense`] instead (counting sort, O(1) neighbour ranges), which visits the same
//! pairs; grids with few rows per object and none long use [`dense_rows`] (a start per row,
//! the forward rows as two runs of positions), which does too (docs/design.md §2.7).

mod dense;
mod dense_rows;
mod frame;
pub mod giants;
mod lean;
mod span;
mod sparse;
mod survey;
mod touch;
mod window;

use crate::broadphase::radix::{radix_sort_carrying, radix_sort_slice};
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::cpu::emit::{PairEmitter, Sink};
use crate::error::Result;
use crate::geom::sphere::{Sphere, invalid_scene_error};
use dense::DenseGrid;
use dense_rows::DenseRows;
pub use frame::GridFrame;
use giants::{Giant, Reach};
pub(crate) use lean::LeanGrid;
use rayon::prelude::*;
pub(crate) use sparse::RowTable;
use sparse::{Rows, visit};
use web_time::Instant;
use window::{NARROW_MAX, NarrowWindow, PAD, WINDOW, Window};

/// From this many objects the frame, keys and rows are computed in parallel. (Tried: the dense
/// rows' sort in parallel from 2^12: at n = 5000, two threads, 0.04-0.05 ms against 0.05-0.06
/// serially with frames back to back, but 0.155-0.158 against 0.060-0.064 in `bench`, whose
/// frames leave the pool's second thread time to fall asleep between them.)
const PARALLEL_MIN: usize = 1 << 14;
/// The candidate loop runs on the calling thread up to this many objects: a grid does a few
/// tests per object, so below this rayon's fork/join costs more than it saves. (At 2^13, chosen
/// on 2 loaded cores, the paper box at n = 5000 ran serially; on 2 quiet cores, 8 interleaved
/// runs of 200 frames each, its frame took 0.374 ms in parallel against 0.492 serially, pair
/// stage 0.218 against 0.338.)
/// (Tried: running a whole call on the pool when the caller is outside it, one hand-over
/// instead of one a parallel step: paper box at n = 5000, `bench` on the global pool of two
/// threads, pair stage 0.072-0.074 ms against 0.079-0.080 but frame 0.134-0.137 against
/// 0.129-0.131; brute force run that way, median of eight runs 10.7 ms against 9.5.)
const SERIAL_MAX: usize = 1 << 11;

/// Bits of the largest value (0 for 0).
pub(crate) fn bits_for(max_value: u64) -> u32 {
    64 - max_value.leading_zeros()
}

/// Bit widths of the packed cell key `((kz << by | ky) << bx) | kx` (also the rotating scene's
/// sphere index, `cpu::sphere_index`).
#[derive(Clone, Copy, Default)]
pub(crate) struct CellBits {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl CellBits {
    /// The widths for cells up to `max_cell` per axis.
    pub fn of(max_cell: [u32; 3]) -> Self {
        let [x, y, z] = max_cell.map(|m| bits_for(m.into()));
        Self { x, y, z }
    }

    /// Bits of a whole packed cell.
    pub fn total(self) -> u32 {
        self.x + self.y + self.z
    }

    /// The packed cell, when it fits 64 bits.
    #[inline(always)]
    pub fn pack(self, c: [u32; 3]) -> u64 {
        (((u64::from(c[2]) << self.y) | u64::from(c[1])) << self.x) | u64::from(c[0])
    }

    #[inline(always)]
    fn pack_wide(self, c: [u32; 3]) -> u128 {
        (((u128::from(c[2]) << self.y) | u128::from(c[1])) << self.x) | u128::from(c[0])
    }
}

/// The uniform grid (docs/design.md §2.7): sorted cell keys, neighbour cells.
#[derive(Default)]
pub struct Grid {
    /// Sorted `(cell << index_bits) | index` keys, when they fit 64 bits (else `wide_keys`).
    keys: Vec<u64>,
    scratch: Vec<u64>,
    wide_keys: Vec<u128>,
    bits: CellBits,
    index_bits: u32,
    wide: bool,
    /// Per row: key `(kz << bits.y) | ky` and first sorted position (then `n`).
    row_table: RowTable,
    /// Spheres in sorted order: the candidate loop reads them contiguously.
    sorted: Vec<Sphere>,
    sorted_scratch: Vec<Sphere>,
    /// Whether the sort carried the spheres into `sorted` (else they are gathered after it).
    carried: bool,
    /// Cell x per sorted position (sparse layout).
    kx: Vec<u32>,
    /// The layout for grids with few cells per object.
    dense_grid: DenseGrid,
    /// The layout for grids with few, short rows.
    rows_grid: DenseRows,
    /// Which layout holds this frame.
    layout: Layout,
    /// Keeps [`DenseRows`] from taking a frame (the tests, to reach the sparse layout on the
    /// same scenes).
    rows_forbidden: bool,
    emitter: PairEmitter,
    /// Temporal coherence (docs/design.md §2.7): start from the last frame's order; off unless
    /// asked for ([`Grid::set_coherent`]).
    coherent: bool,
    /// Whether `keys` holds the last frame's sorted order of this many objects (the sparse,
    /// 64-bit layout), which the next frame can start from.
    reusable: Option<usize>,
    /// Frames whose sort was the coherent insertion (for the tests).
    insertion_frames: u64,
    /// This frame's grid, giants (with their reach) and the other objects' indices (filled
    /// only when there are giants).
    frame: Option<GridFrame>,
    giants: Vec<Giant>,
    /// The giants by the coarse cells their reach covers.
    reach: Reach,
    members: Vec<u32>,
}

/// The three layouts of the grid's sorted objects, each visiting exactly the grid's pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Layout {
    /// [`DenseGrid`]: a start per cell, for few cells per object.
    #[default]
    Cells,
    /// [`DenseRows`]: a start per `(ky, kz)` row, for few rows per object, none long.
    Rows,
    /// [`sparse`]: sorted keys and the rows found in them, for any scene.
    Sparse,
}

/// Rows longer than this are sorted by the radix sort (see [`Grid::sort_long_rows`]).
const LONG_ROW_RADIX: usize = 1 << 12;

/// The coherent start gives up (and the radix sort runs) once insertion has moved this many
/// keys per object: past that, the frame has changed too much to be "nearly sorted".
const COHERENT_MOVES_PER_OBJECT: usize = 2;

impl Grid {
    /// With empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Temporal coherence on or off (the default). On: each frame's keys are made in the last
    /// frame's sorted order and insertion-sorted, O(n + moves), falling back to the radix sort
    /// when a frame moved too much. Either way the order, the tests and the pairs are the same.
    /// Off by default because it did not pay where measured (`examples/grid_coherence.rs`, 2
    /// cores, medians): the paper box uses the dense layout, which it does not touch (sort 0.090
    /// ms either way); on the density scene at 1M the sort took 54.7 ms coherent against 17.1 ms
    /// from scratch, and still 67.6 against 21.3 ms with every velocity scaled by 0.02. Keys
    /// are ordered by `(kz, ky, kx)`, so an object that changes `kz` moves a whole plane of
    /// keys (thousands of positions at 1M): the insertion exceeds its budget and the frame pays
    /// the repack and the radix sort both. (The first measurement of this, 50.8 against 16.5
    /// ms, came from an example that never turned coherence on: two identical grids, the first
    /// after each step finding colder caches.)
    pub fn set_coherent(&mut self, on: bool) {
        self.coherent = on;
        self.reusable = None;
    }

    /// Computes cells and sorts the objects by `(kz, ky, kx, index)`, then finds the rows.
    /// False where the caller's token stopped the radix sort between passes (a pass over 30M
    /// keys takes about a second): nothing of this frame's order is used or kept.
    #[must_use = "false: stopped by the caller's token, the order unusable"]
    fn sort(&mut self, spheres: &[Sphere], frame: GridFrame) -> bool {
        // Looked at between the steps too: at 30M objects the first frame's layouts and their
        // new memory take seconds before the radix sort begins.
        let token = crate::broadphase::cancel::current();
        let stopped = || crate::broadphase::cancel::stopped(&token);
        self.frame = Some(frame);
        self.giants.clear();
        self.members.clear();
        if frame.giant_split < 255 {
            for (i, s) in spheres.iter().enumerate() {
                if frame.is_giant(s) {
                    self.giants.push(Giant::new(&frame, i as u32, *s));
                } else {
                    self.members.push(i as u32);
                }
            }
        }
        self.reach.build(&self.giants);
        if stopped() {
            self.reusable = None;
            return false;
        }
        // Without giants every object is a member; with them, only `members` enter the grid.
        let members = (!self.giants.is_empty()).then_some(&self.members[..]);
        let n = members.map_or(spheres.len(), <[u32]>::len);
        let parallel = n >= PARALLEL_MIN;
        // Coherence starts from the sparse layout's last order: it keeps that layout.
        // Crowded scenes with short rows try the dense rows first (whole blocks tested at once).
        let rows_allowed = !self.rows_forbidden && !self.coherent;
        let rows_first = rows_allowed && DenseRows::first(&frame, n);
        self.layout = if rows_first && self.rows_grid.build(&frame, spheres, members, parallel) {
            Layout::Rows
        } else if !stopped() && self.dense_grid.build(&frame, spheres, members) {
            Layout::Cells
        } else if !stopped()
            && rows_allowed
            && !rows_first
            && self.rows_grid.build(&frame, spheres, members, parallel)
        {
            Layout::Rows
        } else {
            Layout::Sparse
        };
        if stopped() {
            self.reusable = None;
            return false;
        }
        if self.layout != Layout::Sparse {
            self.reusable = None;
            return true;
        }
        // The last frame's object order, if it can start this one (same n, 64-bit keys, no
        // giants).
        let previous_bits = (self.reusable == Some(n) && self.coherent && members.is_none())
            .then_some(self.index_bits);
        let bits = CellBits::of(frame.max_cell);
        let cell_bits = bits.total();
        let bi = bits_for(spheres.len().saturating_sub(1) as u64);
        self.bits = bits;
        self.index_bits = bi;
        self.wide = cell_bits + bi > 64;
        // Cells take up to 96 bits; they fit 64 with the index on the 64-bit path.
        let cell_of = |s: &Sphere| bits.pack(frame.cell(s.center));
        let wide_cell_of = |s: &Sphere| bits.pack_wide(frame.cell(s.center));
        // Whether every row is in x order already (else only rows longer than the window
        // need it, see below).
        let mut rows_in_x_order = true;
        if !self.wide {
            let coherent = previous_bits.is_some_and(|old_bits| {
                // Keys made in the last frame's order (its indices, this frame's cells), then
                // insertion-sorted: equal to the full sort's result, keys being unique.
                let old_mask = index_mask(old_bits);
                let repack = |k: &mut u64| {
                    let i = (*k & old_mask) as usize;
                    *k = (cell_of(&spheres[i]) << bi) | i as u64;
                };
                if parallel {
                    self.keys.par_iter_mut().for_each(repack);
                } else {
                    self.keys.iter_mut().for_each(repack);
                }
                insertion_sort_bounded(&mut self.keys, COHERENT_MOVES_PER_OBJECT * n)
            });
            self.insertion_frames += coherent as u64;
            // The insertion leaves every row in x order; the radix sort, below, only long rows.
            rows_in_x_order = coherent;
            if !coherent {
                // Keys are made in index order and the radix sort is stable on the row bits
                // alone, so a row keeps index order: the window matches a short row whatever
                // its order, and the long rows are sorted by x below. (All cell bits: one
                // more pass, 27 bits in 3 passes of 9 instead of 18 in 2 at density 1M, where
                // the sort stage took 11.8-12.0 ms on two threads against 11.1-11.9 now, and
                // 20.8-21.4 against 20.2-20.9 on one.)
                let pack = |(i, s): (usize, &Sphere)| (cell_of(s) << bi) | i as u64;
                let member = |&i: &u32| pack((i as usize, &spheres[i as usize]));
                self.keys.clear();
                match (members, parallel) {
                    (None, true) => self
                        .keys
                        .par_extend(spheres.par_iter().enumerate().map(pack)),
                    (None, false) => self.keys.extend(spheres.iter().enumerate().map(pack)),
                    (Some(m), true) => self.keys.par_extend(m.par_iter().map(member)),
                    (Some(m), false) => self.keys.extend(m.iter().map(member)),
                }
                // The spheres ride along (read in index order in the first pass) instead of
                // being gathered by index after the sort: 16 more bytes written and read per
                // pass, no random read. Sort stage at density 1M, alternating runs: 21.2-21.3
                // to 18.8-19.1 ms on one thread, 13.5-13.8 to 12.2-13.0 on two.
                let mask = index_mask(bi);
                if !radix_sort_carrying(
                    &mut self.keys,
                    &mut self.scratch,
                    &mut self.sorted,
                    &mut self.sorted_scratch,
                    |_, k| spheres[(k & mask) as usize],
                    bi + bits.x,
                    bi + cell_bits,
                ) {
                    self.reusable = None;
                    return false;
                }
            }
            self.carried = !coherent;
            self.reusable = members.is_none().then_some(n);
        } else {
            self.reusable = None;
            self.carried = false;
            let pack = |(i, s): (usize, &Sphere)| (wide_cell_of(s) << 32) | i as u128;
            self.wide_keys.clear();
            match members {
                None => self
                    .wide_keys
                    .par_extend(spheres.par_iter().enumerate().map(pack)),
                Some(m) => self.wide_keys.par_extend(
                    m.par_iter()
                        .map(|&i| pack((i as usize, &spheres[i as usize]))),
                ),
            }
            self.wide_keys.par_sort_unstable();
        }
        // Rows: where the row bits change. (A filtered parallel iterator, branching on each
        // change, took 1.75-2.3 ms at density 1M on 2 threads and 3.2-3.7 on one for about
        // 140k rows; `RowTable::find` 0.6 and 0.8.)
        if self.wide {
            let row_of = move |k: u128| ((k >> 32) >> bits.x) as u64;
            self.row_table.find(&self.wide_keys, row_of, parallel);
        } else {
            let shift = bi + bits.x;
            let row_of = move |k: u64| k.checked_shr(shift).unwrap_or(0);
            self.row_table.find(&self.keys, row_of, parallel);
        }
        if stopped() {
            self.reusable = None;
            return false;
        }
        if !rows_in_x_order {
            self.sort_long_rows(spheres);
        }
        // The spheres in sorted order, where the radix sort did not carry them: random reads
        // by index. (Tried: an x86 prefetch of the sphere 16 positions ahead: sort stage at
        // density 1M 15.9-19.6 ms against 16.3-19.2, no measurable change on 2 cores. Tried:
        // no gather, the walk reading `spheres[index]` on a sparse scene where it tests only
        // 0.26 pairs per object: at density 1M, sort 9.9 ms and pairs 22.8 against 14.5 and
        // 9.3, so the sorted copy stays.)
        if self.wide {
            self.sorted.clear();
            let keys = &self.wide_keys;
            self.sorted
                .par_extend(keys.par_iter().map(|&k| spheres[k as u32 as usize]));
        } else if !self.carried {
            self.sorted.clear();
            let mask = index_mask(bi);
            if parallel {
                self.sorted
                    .par_extend(self.keys.par_iter().map(|&k| spheres[(k & mask) as usize]));
            } else {
                self.sorted
                    .extend(self.keys.iter().map(|&k| spheres[(k & mask) as usize]));
            }
        }
        // Each position's cell x: the walk's comparisons read 4 bytes, not a key to unpack.
        // (Tried: x and the rows in one pass over the keys per chunk; at density 1M both took
        // 2.8-3.3 ms, no measurable change.)
        let x_mask = (1u64 << bits.x) - 1;
        self.kx.clear();
        if self.wide {
            let x_of = |&k: &u128| ((k >> 32) as u64 & x_mask) as u32;
            self.kx.par_extend(self.wide_keys.par_iter().map(x_of));
        } else {
            let x_of = |&k: &u64| (k.checked_shr(bi).unwrap_or(0) & x_mask) as u32;
            if parallel {
                self.kx.par_extend(self.keys.par_iter().map(x_of));
            } else {
                self.kx.extend(self.keys.iter().map(x_of));
            }
        }
        self.kx.extend([PAD; WINDOW]);
        true
    }
}

impl Grid {
    /// Sorts each row longer than [`WINDOW`] by x (then index), in parallel over rows; shorter
    /// rows keep index order. Rows up to [`LONG_ROW_RADIX`] by whole keys (their row bits are
    /// equal), longer ones (a line of objects is one row) by the radix sort on the x bits.
    fn sort_long_rows(&mut self, spheres: &[Sphere]) {
        let (low, high) = (self.index_bits, self.index_bits + self.bits.x);
        let (mask, carried) = (index_mask(self.index_bits), self.carried);
        // The radix sort left `scratch` at least `n` long; each long row takes the same range
        // of it.
        let (mut rest, mut spare) = (&mut self.keys[..], &mut self.scratch[..]);
        // The carried spheres of a long row are taken again after its keys' sort (by index,
        // like the gather); without carrying they are gathered later, `sorted` is empty.
        let mut sorted = if carried {
            &mut self.sorted[..]
        } else {
            &mut []
        };
        let mut at = 0;
        let mut long = Vec::new();
        for pair in self.row_table.start.windows(2) {
            let (start, end) = (pair[0] as usize, pair[1] as usize);
            if end - start > WINDOW {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
                let (row, tail) = tail.split_at_mut(end - start);
                let (_, spare_tail) = std::mem::take(&mut spare).split_at_mut(start - at);
                let (row_spare, spare_tail) = spare_tail.split_at_mut(end - start);
                let row_spheres = if carried {
                    let (_, sorted_tail) = std::mem::take(&mut sorted).split_at_mut(start - at);
                    let (row_spheres, sorted_tail) = sorted_tail.split_at_mut(end - start);
                    sorted = sorted_tail;
                    row_spheres
                } else {
                    &mut []
                };
                long.push((row, row_spare, row_spheres));
                (rest, spare, at) = (tail, spare_tail, end);
            }
        }
        long.into_par_iter()
            .for_each(|(row, row_spare, row_spheres)| {
                if row.len() <= LONG_ROW_RADIX {
                    row.sort_unstable();
                } else {
                    radix_sort_slice(row, row_spare, low, high);
                }
                for (s, &k) in row_spheres.iter_mut().zip(row.iter()) {
                    *s = spheres[(k & mask) as usize];
                }
            });
    }
}

/// The index bits of a key.
fn index_mask(index_bits: u32) -> u64 {
    if index_bits == 0 {
        0
    } else {
        u64::MAX >> (64 - index_bits)
    }
}

/// Sorts `keys` by insertion while it has moved at most `budget` keys in total; false (keys
/// left a permutation, partly sorted) when the budget ran out first.
fn insertion_sort_bounded(keys: &mut [u64], budget: usize) -> bool {
    let mut moved = 0usize;
    for i in 1..keys.len() {
        let k = keys[i];
        if keys[i - 1] <= k {
            continue;
        }
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = k;
        moved += i - j;
        if moved > budget {
            return false;
        }
    }
    true
}

super::cpu_broad_phase!(
    Grid,
    emitter,
    |_: &Self| Method::Grid.name(),
    checking_pairs
);

impl Grid {
    /// `find_pairs`: the frame's survey validates the scene ([`Grid::pairs`]).
    fn checking_pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        crate::geom::check_u32_count(spheres.len(), "objects")?;
        self.pairs(spheres, out)
    }

    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let mut stats = Stats::default();
        self.emitter.set_serial_max_items(SERIAL_MAX);
        let start = Instant::now();
        // The frame's survey reads every sphere and applies the validation rule on the way
        // (density 1M, one thread: the separate pass took about 1 ms); a scene it finds
        // invalid goes through `validate_spheres` for the error naming its first bad sphere.
        let frame = GridFrame::of(spheres);
        if !frame.valid {
            return Err(invalid_scene_error(spheres, "the grid's survey"));
        }
        if !self.sort(spheres, frame) {
            return Err(crate::error::Error::Interrupted);
        }
        stats.stage("sort", start.elapsed().as_secs_f64(), Clock::Wall);

        let start = Instant::now();
        let rows = Rows {
            keys: &self.row_table.keys,
            start: &self.row_table.start,
            bits: self.bits,
        };
        // Items: the grid's sorted positions, then the giants' tests (members against giants in
        // reach, then giant pairs); one emission, so the pairs gather into `out` once.
        // The grid holds every object, or only the members when there are giants.
        let (grid_len, giant_items) = if self.giants.is_empty() {
            (spheres.len(), 0)
        } else {
            (self.members.len(), self.members.len() + self.giants.len())
        };
        let frame = self.frame.expect("sorted above");
        let (members, giants) = (&self.members, (&self.giants[..], &self.reach));
        let split = |positions: std::ops::Range<usize>,
                     sink: &mut Sink,
                     grid: &dyn Fn(std::ops::Range<usize>, &mut Sink)| {
            grid(
                positions.start.min(grid_len)..positions.end.min(grid_len),
                sink,
            );
            if positions.end > grid_len {
                let rest = positions.start.max(grid_len) - grid_len..positions.end - grid_len;
                giants::visit(&frame, spheres, members, giants, rest, sink);
            }
        };
        let items = grid_len + giant_items;
        let result = if self.layout == Layout::Cells {
            let dense = &self.dense_grid;
            self.emitter.run(items, out, |positions, sink| {
                split(positions, sink, &|p, sink| dense.visit(p, sink))
            })
        } else if self.layout == Layout::Rows {
            let rows = &self.rows_grid;
            self.emitter.run(items, out, |positions, sink| {
                split(positions, sink, &|p, sink| rows.visit(p, sink))
            })
        } else {
            // The sparse walk, for each key width and window width: u16 lanes when every cell
            // x fits (pair stage at density 1M, 1 thread: 18.5-19.0 ms with u32 lanes against
            // 15.7-16.4; 2 threads: 9.5-11.8 against 8.1-8.5).
            let (keys, wide_keys, bi) = (&self.keys, &self.wide_keys, self.index_bits);
            let mask = index_mask(bi);
            let narrow = frame.max_cell[0] <= NARROW_MAX;
            let (sorted, kx, emitter) = (&self.sorted, &self.kx, &mut self.emitter);
            macro_rules! walk {
                ($lanes:ty, $index:expr) => {{
                    let index = $index;
                    emitter.run(items, out, |positions, sink| {
                        split(positions, sink, &|p, sink| {
                            visit::<$lanes>(sorted, &rows, kx, index, p, sink)
                        })
                    })
                }};
            }
            match (self.wide, narrow) {
                (true, true) => walk!(NarrowWindow, |p: usize| wide_keys[p] as u32),
                (true, false) => walk!(Window, |p: usize| wide_keys[p] as u32),
                (false, true) => walk!(NarrowWindow, |p: usize| (keys[p] & mask) as u32),
                (false, false) => walk!(Window, |p: usize| (keys[p] & mask) as u32),
            }
        };
        let (tests, pairs) = result?;
        stats.tests = tests;
        stats.pairs = pairs;
        stats.stage("pairs", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}

#[cfg(test)]
mod tests;
