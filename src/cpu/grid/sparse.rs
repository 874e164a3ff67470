//! The sparse layout's rows and its walk (see the module docs of [`super`]): rows found in the
//! sorted keys, then each object's candidates in its own row and the four forward rows, short
//! rows through a [`Lanes`] window, long ones by pointers.

use super::CellBits;
use super::window::{Lanes, WINDOW};
use crate::cpu::emit::Sink;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;

/// Row offsets `(dy, dz)` of the four forward rows.
const FORWARD_ROWS: [(u64, u64); 4] = [(1, 0), (u64::MAX, 1), (0, 1), (1, 1)];

/// The rows of sorted keys (runs of equal row values), with room to find them, kept between
/// frames.
#[derive(Default)]
pub(crate) struct RowTable {
    /// Each row's value, in key order.
    pub keys: Vec<u64>,
    /// Each row's first position, then the number of keys.
    pub start: Vec<u32>,
    scan: RowScan,
}

impl RowTable {
    /// The rows of `keys` by `row_of` (see [`find_rows`]).
    pub fn find<K: Copy + Sync>(
        &mut self,
        keys: &[K],
        row_of: impl Fn(K) -> u64 + Sync,
        parallel: bool,
    ) {
        find_rows(
            keys,
            row_of,
            parallel,
            &mut self.scan,
            &mut self.start,
            &mut self.keys,
        );
    }
}

/// Fills `starts` with the first position of each run of equal `row_of(key)` (then `n`) and
/// `row_keys` with the runs' values. Each chunk writes every position into its own range of
/// `scan` and advances only past a new row (no branch on the row change, which a row of about
/// 7 objects mispredicts often); the chunks' runs are then joined.
fn find_rows<K: Copy + Sync>(
    keys: &[K],
    row_of: impl Fn(K) -> u64 + Sync,
    parallel: bool,
    scan: &mut RowScan,
    starts: &mut Vec<u32>,
    row_keys: &mut Vec<u64>,
) {
    let n = keys.len();
    // Positions are below n, so a chunk never finds more rows than positions.
    scan.starts.resize(n, 0);
    scan.keys.resize(n, 0);
    let chunks = if parallel {
        // A few chunks per thread, so an uneven split of rows still shares the work.
        4 * rayon::current_num_threads().max(1)
    } else {
        1
    };
    let size = n.div_ceil(chunks).max(1);
    let run = |c: usize, (chunk_starts, chunk_keys): (&mut [u32], &mut [u64])| {
        let begin = c * size;
        let mut previous = match begin {
            0 => !row_of(keys[0]),
            _ => row_of(keys[begin - 1]),
        };
        let mut found = 0;
        for (p, &k) in keys[begin..begin + chunk_starts.len()].iter().enumerate() {
            let row = row_of(k);
            chunk_starts[found] = (begin + p) as u32;
            chunk_keys[found] = row;
            found += usize::from(row != previous);
            previous = row;
        }
        found
    };
    let (scan_starts, scan_keys) = (scan.starts.chunks_mut(size), scan.keys.chunks_mut(size));
    let found: Vec<usize> = if parallel {
        scan.starts
            .par_chunks_mut(size)
            .zip(scan.keys.par_chunks_mut(size))
            .enumerate()
            .map(|(c, chunk)| run(c, chunk))
            .collect()
    } else {
        scan_starts
            .zip(scan_keys)
            .enumerate()
            .map(|(c, chunk)| run(c, chunk))
            .collect()
    };
    starts.clear();
    row_keys.clear();
    for (c, &m) in found.iter().enumerate() {
        starts.extend_from_slice(&scan.starts[c * size..c * size + m]);
        row_keys.extend_from_slice(&scan.keys[c * size..c * size + m]);
    }
    starts.push(n as u32);
}

/// Room for [`find_rows`] to record a row at every position, kept between frames.
#[derive(Default)]
struct RowScan {
    starts: Vec<u32>,
    keys: Vec<u64>,
}

/// Asks the cache for the line holding `at` (x86-64; nothing elsewhere). Any address: a
/// prefetch never faults.
#[inline(always)]
pub(super) fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// The rows of the sorted grid.
pub(super) struct Rows<'a> {
    pub keys: &'a [u64],
    pub start: &'a [u32],
    pub bits: CellBits,
}

impl Rows<'_> {
    /// Key of the row `(ky + dy, kz + dz)` next to row `key`, if such a row can exist.
    #[inline(always)]
    fn forward(&self, key: u64, (dy, dz): (u64, u64)) -> Option<u64> {
        let y_mask = (1u64 << self.bits.y) - 1;
        let ky = (key & y_mask).wrapping_add(dy);
        let kz = (key >> self.bits.y) + dz;
        (ky <= y_mask && kz < (1u64 << self.bits.z)).then_some((kz << self.bits.y) | ky)
    }
}

/// The candidate loop over sorted positions (see the module docs). `kx[p]` is the cell's x at
/// sorted position `p` (then [`WINDOW`] padding entries) and `index(p)` the object's index.
///
/// Rows up to [`WINDOW`] long (nearly all on sparse scenes: the density scene has about 7
/// objects per row) are loaded once per own row into a window; each object then finds its
/// candidates in a row with one branch-free mask (lanes within one cell of its x), so the
/// loop branches only on a candidate. Longer rows keep pointers that only move forward: a
/// skip loop to the first cell at least `x - 1`, then a run while the cell is at most
/// `x + 1`. (The pointer loops alone, for every row: cachegrind counted about 6 mispredicted
/// branches and 230 instructions per object on the density scene (200k); the windows cut the
/// mispredicts to about 2 and the pair stage at density 1M from about 23.8 to 13.7 ms on 2
/// cores. Before that, reading a `u32` x per position instead of unpacking keys took it from
/// about 25.5 to 22.5 ms. Tried and not kept: counting over a fixed window per object, scalar,
/// instead of the skip loop: 33 ms. Row-major, each forward row's window matched against all of
/// the own row's positions in turn (no per-object loop over the four rows): pair stage 20.7-21.0
/// ms on one thread against 13.8-14.0, and 10.7-10.9 against 7.0-7.1 on two.)
#[inline(always)]
pub(super) fn visit<W: Lanes>(
    sorted: &[Sphere],
    rows: &Rows,
    kx: &[u32],
    index: impl Fn(usize) -> u32,
    positions: std::ops::Range<usize>,
    sink: &mut Sink,
) {
    if positions.is_empty() {
        return;
    }
    // Row of the chunk's first position; later rows follow one by one.
    let mut r = rows
        .start
        .partition_point(|&s| s as usize <= positions.start)
        - 1;
    let (mut own_start, mut own_end) = (0, 0);
    let mut first_row = true;
    // Per forward row: row index (monotone over the chunk's rows), next candidate position
    // and end position in that row, and its window when it is short.
    let mut row_ptr = [0usize; 4];
    let mut next = [0usize; 4];
    let mut end = [0usize; 4];
    let mut short = [false; 4];
    let mut windows = [W::default(); 4];
    let (mut own_short, mut own_window) = (false, W::default());
    for p in positions {
        if first_row || p == own_end {
            if !first_row {
                r += 1;
            }
            (own_start, own_end) = (rows.start[r] as usize, rows.start[r + 1] as usize);
            own_short = own_end - own_start <= WINDOW;
            if own_short {
                own_window = W::load(kx, own_start, own_end);
            }
            let key = rows.keys[r];
            for d in 0..4 {
                (next[d], end[d]) = (0, 0);
                if let Some(target) = rows.forward(key, FORWARD_ROWS[d]) {
                    // Targets grow with the row, so the pointer only moves forward; the
                    // chunk's first row places it by binary search.
                    let ptr = &mut row_ptr[d];
                    if first_row {
                        *ptr = rows.keys.partition_point(|&k| k < target);
                    }
                    while *ptr < rows.keys.len() && rows.keys[*ptr] < target {
                        *ptr += 1;
                    }
                    if *ptr < rows.keys.len() && rows.keys[*ptr] == target {
                        next[d] = rows.start[*ptr] as usize;
                        end[d] = rows.start[*ptr + 1] as usize;
                    }
                }
                short[d] = end[d] - next[d] <= WINDOW;
                if short[d] {
                    windows[d] = W::load(kx, next[d], end[d]);
                }
                if next[d] < end[d] {
                    // The forward row's spheres are read only on a test, a few
                    // thousand positions ahead of the walk: fetch their first lines now
                    // (a test's sphere load had 21% of the pair stage's samples at density
                    // 1M; pair stage 14.7-14.9 to 13.3-13.5 ms on one thread, 8.0-8.2 to
                    // 6.9-7.1 on two). Tried: also the first key of the row, which a test
                    // reads for the index: no measurable change (4 alternating runs).
                    prefetch(&sorted[next[d]]);
                    prefetch(&sorted[end[d] - 1]);
                }
            }
            first_row = false;
        }
        let (x, ip) = (kx[p], index(p));
        let sp = &sorted[p];
        if own_short {
            // Later positions of the row only (`p - own_start < WINDOW`).
            let later = (u32::MAX << (p - own_start)) << 1;
            let mut mask = own_window.near(x) & later;
            while mask != 0 {
                let q = own_start + mask.trailing_zeros() as usize;
                sink.test(sp, &sorted[q], ip, index(q));
                mask &= mask - 1;
            }
        } else {
            let xp = u64::from(x);
            for q in p + 1..own_end {
                if u64::from(kx[q]) > xp + 1 {
                    break;
                }
                sink.test(sp, &sorted[q], ip, index(q));
            }
        }
        for d in 0..4 {
            if short[d] {
                let mut mask = windows[d].near(x);
                while mask != 0 {
                    let q = next[d] + mask.trailing_zeros() as usize;
                    sink.test(sp, &sorted[q], ip, index(q));
                    mask &= mask - 1;
                }
                continue;
            }
            let xp = u64::from(x);
            let (mut q, e) = (next[d], end[d]);
            if own_short {
                // A short own row may be in index order, not x order: search the long row
                // (always in x order) instead of moving its pointer.
                q += kx[q..e].partition_point(|&c| u64::from(c) + 1 < xp);
            } else {
                while q < e && u64::from(kx[q]) + 1 < xp {
                    q += 1;
                }
                next[d] = q;
            }
            while q < e && u64::from(kx[q]) <= xp + 1 {
                sink.test(sp, &sorted[q], ip, index(q));
                q += 1;
            }
        }
    }
}
