//! The grid's dense-row layout, for scenes with more cells than objects but few rows and short
//! ones (the density scene at 1M: about 7 objects per `(ky, kz)` row, 0.14 rows per object):
//! a counting sort by row, stable (a row keeps index order), with a start offset for every
//! row, so the forward rows are found in O(1) from the own row's number.
//!
//! Rows are numbered `kz * dim_y + ky + 1` with a padding row at `y = -1` and `y = dim_y` and
//! a padding layer at `z = dim_z`, so that the forward rows of the grid (see [`super`]) make
//! two runs of consecutive positions: row `(ky + 1, kz)` follows the own row, and rows
//! `(ky - 1 ..= ky + 1, kz + 1)` are consecutive. An object's candidates are then the later
//! positions of its own row with the next row, and that run of three rows: each matched on
//! cell x alone ([`Span::near`]), which visits exactly the pairs the grid defines
//! (docs/design.md §2.7). Crowded rows (an object per 16 cells or more, with AVX-512) keep the
//! spheres by coordinate and test a whole block of them at once ([`super::touch`]).

use super::GridFrame;
use super::span::{self, PAD, SPAN, SPAN_MAX, Span, lanes};
use super::sparse::prefetch;
use super::touch::Touch;
use crate::broadphase::radix::Destination;
use crate::cpu::emit::Sink;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;

/// Dense rows are used while rows <= this many per object (plus a constant for small scenes).
const MAX_ROWS_PER_OBJECT: usize = 2;
const MAX_ROWS_EXTRA: usize = 1 << 12;
/// ... and while no row holds more objects than this: a run is matched in blocks of
/// [`SPAN`] whatever the cells x in it, so a long row (a line of objects) costs each of its
/// objects the whole row; the sparse layout sorts such rows by x instead.
const MAX_ROW: u32 = 64;
/// Blocks are tested whole from this many objects a cell on (with 13 forward cells, about
/// one test an object).
const CROWDED_PER_CELL: f64 = 1.0 / 16.0;
/// Objects a row on average for which the grid tries this layout first ([`DenseRows::first`]).
const FIRST_PER_ROW: (f64, f64) = (4.0, 12.0);
/// The walk fetches the spheres this many positions past the forward run's end, this many
/// lines of four of them, per row.
const AHEAD: usize = 16;
const AHEAD_LINES: usize = 3;
const STREAM_AHEAD: usize = 8;
/// ... and the next layer's cells x this many positions past it (two lines).
const KX_AHEAD: usize = 64;

#[derive(Default)]
pub struct DenseRows {
    /// Rows per layer of z, padding included.
    dim_y: usize,
    /// `start[r]` is the first sorted position of row `r`, for `r` in `0..=rows` (the last is
    /// `n`).
    start: Vec<u32>,
    /// Per chunk of objects, its counts.
    counts: Vec<Counts>,
    /// Per object (in the order given), its cell `(kz << 32) | ((ky + 1) << 16) | kx`.
    cells: Vec<u64>,
    /// The objects by layer, each layer in the order given.
    staged: Vec<Staged>,
    /// Next position in each row, during the sort by rows.
    row_cursor: Vec<u32>,
    /// Per sorted position: sphere, original index, cell x (then [`SPAN`] entries of [`PAD`]).
    /// (Only while the blocks are sparse; crowded, the spheres are in `coords`.)
    sorted: Vec<Sphere>,
    index: Vec<u32>,
    kx: Vec<u16>,
    /// Whether blocks are crowded enough to test whole ([`super::touch`]): the spheres are
    /// then stored by coordinate in `coords` (x, y, z, r, then [`SPAN`] zeros) instead of
    /// `sorted`.
    crowded: bool,
    coords: [Vec<f32>; 4],
}

/// A chunk's count of each row, and of each layer (then its next position in each layer).
#[derive(Default)]
struct Counts {
    rows: Vec<u32>,
    layers: Vec<u32>,
}

/// Rows `kz * dim_y + ky + 1` of eight objects' cells `k` (kx, ky, kz), and their cells packed
/// as `(kz << 32) | ((ky + 1) << 16) | kx` written to `out`.
///
/// # Safety
/// The CPU has AVX-512F and VL; `out` is valid for eight writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn rows_and_cells8(k: &[[u32; 8]; 3], dim_y: u32, out: *mut u64) -> [u32; 8] {
    use std::arch::x86_64::*;
    // SAFETY: each of `k` is eight u32; `out` the caller's.
    unsafe {
        let [kx, ky, kz] = k.each_ref().map(|a| _mm256_loadu_si256(a.as_ptr().cast()));
        let y = _mm256_add_epi32(ky, _mm256_set1_epi32(1));
        // Below 2^32: rows are at most 2n + 4096.
        let layer = _mm256_mullo_epi32(kz, _mm256_set1_epi32(dim_y as i32));
        let rows = _mm256_add_epi32(layer, y);
        let wide = |v: __m256i| _mm512_cvtepu32_epi64(v);
        let cells = _mm512_or_si512(
            _mm512_or_si512(
                _mm512_slli_epi64::<32>(wide(kz)),
                _mm512_slli_epi64::<16>(wide(y)),
            ),
            wide(kx),
        );
        _mm512_storeu_si512(out.cast(), cells);
        let mut row = [0u32; 8];
        _mm256_storeu_si256(row.as_mut_ptr().cast(), rows);
        row
    }
}

/// The lines of a few ranges of tables, fetched one a step (the next layer's output, while the
/// sort by rows fills this one).
#[derive(Default)]
struct Feed {
    /// First line and bytes from it, per range.
    ranges: [(usize, usize); 6],
    len: usize,
    /// The range and the offset in it fetched next.
    range: usize,
    offset: usize,
}

impl Feed {
    /// Adds the entries `at` of the table at `table`.
    fn add<T>(&mut self, table: *mut T, at: std::ops::Range<usize>) {
        let size = std::mem::size_of::<T>();
        let from = table as usize + at.start * size;
        let line = from & !63;
        self.ranges[self.len] = (line, from - line + at.len() * size);
        self.len += usize::from(!at.is_empty());
    }

    /// Fetches the next line, if any is left.
    #[inline(always)]
    fn step(&mut self) {
        if self.range < self.len {
            let (line, bytes) = self.ranges[self.range];
            prefetch((line + self.offset) as *const u8);
            self.offset += 64;
            if self.offset >= bytes {
                (self.range, self.offset) = (self.range + 1, 0);
            }
        }
    }
}

/// An object placed in its layer: what the sort by rows moves to its final position.
#[derive(Clone, Copy, Default)]
struct Staged {
    sphere: Sphere,
    index: u32,
    /// Row in the layer, `ky + 1`.
    y: u16,
    x: u16,
}

impl DenseRows {
    /// Whether the last build stored the spheres by coordinate, to test whole blocks.
    #[cfg(test)]
    pub fn crowded(&self) -> bool {
        self.crowded
    }

    /// Whether `n` objects in `frame` are crowded enough to test whole blocks, and this CPU
    /// does that well ([`super::touch`]).
    fn crowding(frame: &GridFrame, n: usize) -> bool {
        let m = frame.max_cell.map(|m| f64::from(m) + 1.0);
        // Radius sums below 2^-50 (at most the cell side) square to subnormals, a slow
        // operation on x86 for every lane, and every lane is then left to `Sphere::touches`
        // anyway: such scenes test one candidate at a time (as `SphereColumns` does).
        n as f64 >= CROWDED_PER_CELL * m[0] * m[1] * m[2]
            && span::avx512()
            && frame.cell_side >= crate::geom::sphere::RADIUS_SUMS_SQUARED_FROM
    }

    /// Whether the grid should try this layout before the dense cells: crowded scenes whose
    /// rows hold 4 to 12 objects on average, so that both runs mostly fit a block and fill it.
    /// The paper box (576 rows), two threads, median frame against the dense cells,
    /// alternating in one run: n = 2000 (3.5 a row) 0.05 ms against 0.04, 4000 0.12 against
    /// 0.15, 5000 0.12 against 0.15, 6000 (10.4 a row) 0.19 against 0.21, 8000 (13.9 a row)
    /// 0.34 against 0.29.
    pub fn first(frame: &GridFrame, n: usize) -> bool {
        let m = frame.max_cell.map(|m| f64::from(m) + 1.0);
        let per_row = n as f64 / (m[1] * m[2]);
        (FIRST_PER_ROW.0..=FIRST_PER_ROW.1).contains(&per_row) && Self::crowding(frame, n)
    }

    /// Sorts `spheres` (only `members` when given) by row if the rows are few and short
    /// enough; returns false (leaving the layout unusable) otherwise.
    ///
    /// Two counting sorts, each writing where the cache can follow: by layer `kz` (a few hundred
    /// sequential output streams), then each layer by row in its own range of positions, a
    /// few thousand objects in cache. (Tried first: one counting sort straight by row, 140k
    /// output streams at density 1M: its scatter alone took 13-21 ms on one thread, each
    /// write a cache miss. Tried: each object's cell computed and the object placed in its
    /// layer's bucket in one pass, the buckets sized from a sample of 2^15 objects' layers and
    /// the rows counted per layer in the second pass: sort stage 14.3-14.4 ms against
    /// 11.9-12.2 in alternating runs, the first pass's reads of the spheres slowed beside
    /// hundreds of write streams.)
    pub fn build(
        &mut self,
        frame: &GridFrame,
        spheres: &[Sphere],
        members: Option<&[u32]>,
        parallel: bool,
    ) -> bool {
        let n = members.map_or(spheres.len(), <[u32]>::len);
        let m = frame.max_cell.map(|m| m as usize);
        if n == 0 || m[0].max(m[1]) > SPAN_MAX as usize {
            return false;
        }
        let (dim_y, dim_z) = (m[1] + 3, m[2].saturating_add(2));
        let Some(rows) = dim_y
            .checked_mul(dim_z)
            .filter(|&r| r <= MAX_ROWS_PER_OBJECT * n + MAX_ROWS_EXTRA)
        else {
            return false;
        };
        self.dim_y = dim_y;
        self.crowded = Self::crowding(frame, n);
        let crowded = self.crowded;
        let object = |j: usize| match members {
            None => (spheres[j], j as u32),
            Some(m) => (spheres[m[j] as usize], m[j]),
        };
        // Chunks of objects, each counted and scattered by one task.
        let chunks = if parallel {
            rayon::current_num_threads().clamp(1, n)
        } else {
            1
        };
        let size = n.div_ceil(chunks);
        self.counts.resize_with(chunks, Counts::default);
        self.cells.resize(n, 0);
        // Per object its cell; per chunk its count of each row and of each layer.
        #[cfg(target_arch = "x86_64")]
        let eight_at_once = frame.near
            && members.is_none()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl");
        let count = |c: usize, counts: &mut Counts, cells: &mut [u64]| {
            counts.rows.clear();
            counts.rows.resize(rows, 0);
            // The objects whose cells were computed eight at a time, their rows and packed
            // cells too (sort stage at density 1M, one thread: 9.7-9.8 ms against 10.5-10.8
            // with the rows and cells made lane by lane and each layer counted too, in
            // alternating runs).
            #[cfg(target_arch = "x86_64")]
            let done = if eight_at_once {
                let spheres = &spheres[c * size..c * size + cells.len()];
                for (eight, out) in spheres.chunks_exact(8).zip(cells.chunks_exact_mut(8)) {
                    // SAFETY: AVX-512F and VL are present, the frame is near; `out` holds
                    // eight cells.
                    let rows8 = unsafe {
                        let k = frame.cells8(eight.try_into().expect("eight"));
                        rows_and_cells8(&k, dim_y as u32, out.as_mut_ptr())
                    };
                    for row in rows8 {
                        counts.rows[row as usize] += 1;
                    }
                }
                cells.len() / 8 * 8
            } else {
                0
            };
            #[cfg(not(target_arch = "x86_64"))]
            let done = 0;
            for (j, cell) in cells.iter_mut().enumerate().skip(done) {
                let [kx, ky, kz] = frame.cell(object(c * size + j).0.center);
                counts.rows[kz as usize * dim_y + ky as usize + 1] += 1;
                *cell = (u64::from(kz) << 32) | (u64::from(ky + 1) << 16) | u64::from(kx);
            }
            // Each layer's count, from its rows'.
            counts.layers.clear();
            counts
                .layers
                .extend(counts.rows.chunks(dim_y).map(|r| r.iter().sum::<u32>()));
        };
        if chunks > 1 {
            self.counts
                .par_iter_mut()
                .zip(self.cells.par_chunks_mut(size))
                .enumerate()
                .for_each(|(c, (counts, cells))| count(c, counts, cells));
        } else {
            count(0, &mut self.counts[0], &mut self.cells);
        }
        // Each row's first position, from all chunks' counts; a row longer than `MAX_ROW`
        // gives the scene to the sparse layout.
        self.start.clear();
        self.start.reserve(rows + 1);
        let (mut sum, mut longest) = (0u32, 0u32);
        for r in 0..rows {
            self.start.push(sum);
            let here: u32 = self.counts.iter().map(|c| c.rows[r]).sum();
            longest = longest.max(here);
            sum += here;
        }
        self.start.push(sum);
        if longest > MAX_ROW {
            return false;
        }
        // Layer-major, chunk-minor: chunk c's objects of a layer follow the earlier chunks'
        // (stable), from the layer's first row on.
        for z in 0..dim_z {
            let mut at = self.start[z * dim_y];
            for counts in &mut self.counts {
                let here = counts.layers[z];
                counts.layers[z] = at;
                at += here;
            }
        }
        self.staged.resize(n, Staged::default());
        let staged = Destination(self.staged.as_mut_ptr());
        let cells = &self.cells;
        // (The objects and their cells zipped, not indexed: sort stage at density 1M, one
        // thread, 9.2-9.3 ms against 10.1-10.4 reading `object(j)` by position.)
        let scatter = |(c, counts): (usize, &mut Counts)| {
            let (staged, cursor) = (&staged, &mut counts.layers[..dim_z]);
            let chunk = c * size..n.min(c * size + size);
            let mut place = |cell: u64, sphere: Sphere, index: u32| {
                let slot = &mut cursor[(cell >> 32) as usize];
                let p = *slot as usize;
                *slot += 1;
                // Each layer is a stream of writes, hundreds at once: fetch its line ahead.
                prefetch(staged.0.wrapping_add(p + STREAM_AHEAD));
                let (y, x) = ((cell >> 16) as u16, cell as u16);
                // SAFETY: `p < n` (the prefix sum gives each layer's objects of this chunk their
                // own positions), written by this chunk only (see `Destination`).
                unsafe {
                    *staged.0.add(p) = Staged {
                        sphere,
                        index,
                        y,
                        x,
                    }
                };
            };
            let cells = &cells[chunk.clone()];
            match members {
                None => {
                    let objects = spheres[chunk.clone()].iter().zip(chunk.start as u32..);
                    for (&cell, (&sphere, index)) in cells.iter().zip(objects) {
                        place(cell, sphere, index);
                    }
                }
                Some(m) => {
                    for (&cell, &index) in cells.iter().zip(&m[chunk]) {
                        place(cell, spheres[index as usize], index);
                    }
                }
            }
        };
        if chunks > 1 {
            self.counts.par_iter_mut().enumerate().for_each(scatter);
        } else {
            scatter((0, &mut self.counts[0]));
        }
        // Each layer by row, into its own range of positions (the layer's range of `staged`).
        if crowded {
            self.sorted.clear();
            for c in &mut self.coords {
                c.resize(n + SPAN, 0.0);
                c[n..].fill(0.0);
            }
        } else {
            self.sorted.resize(n, Sphere::default());
        }
        self.index.resize(n, 0);
        self.kx.resize(n + SPAN, PAD);
        self.kx[n..].fill(PAD);
        let out = (
            Destination(self.sorted.as_mut_ptr()),
            Destination(self.index.as_mut_ptr()),
            Destination(self.kx.as_mut_ptr()),
        );
        let coords = self.coords.each_mut().map(|c| Destination(c.as_mut_ptr()));
        let (start, staged) = (&self.start, &self.staged);
        let by_rows = |(z, cursor): (usize, &mut [u32])| {
            let (out, coords) = (&out, &coords);
            let first = z * dim_y;
            cursor.copy_from_slice(&start[first..first + dim_y]);
            let layer = start[first] as usize..start[first + dim_y] as usize;
            // The layer's objects land in its positions in any order: fetch the next layer's
            // output lines in order, a line an object until all are (`Feed`), and the staged
            // objects ahead (the walk of the last frame left them out of cache; rows pass at
            // density 1M, one thread: 7.1-8.0 ms without, 5.1-5.5 with the next layer's
            // lines fetched at once before the layer, 4.1-4.2 with a line of each table an
            // object, running ahead up to 32 layers).
            let next = layer.end..start[(first + 2 * dim_y).min(rows)] as usize;
            let mut feed = Feed::default();
            if crowded {
                for c in coords {
                    feed.add(c.0, next.clone());
                }
            } else {
                feed.add(out.0.0, next.clone());
            }
            feed.add(out.1.0, next.clone());
            feed.add(out.2.0, next);
            let staged_at = staged.as_ptr().wrapping_add(layer.start);
            for (k, s) in staged[layer].iter().enumerate() {
                feed.step();
                prefetch(staged_at.wrapping_add(k + 16));
                let slot = &mut cursor[s.y as usize];
                let p = *slot as usize;
                *slot += 1;
                // SAFETY: `p` lies in this layer's range of positions (below `n`), which no
                // other layer writes (see `Destination`); `sorted` or `coords` holds `n`.
                unsafe {
                    if crowded {
                        let c = s.sphere.center;
                        for (to, v) in coords.iter().zip([c.x, c.y, c.z, s.sphere.radius]) {
                            *to.0.add(p) = v;
                        }
                    } else {
                        *out.0.0.add(p) = s.sphere;
                    }
                    *out.1.0.add(p) = s.index;
                    *out.2.0.add(p) = s.x;
                }
            }
        };
        self.row_cursor.resize(rows, 0);
        if parallel {
            let layers = self.row_cursor.par_chunks_mut(dim_y);
            layers.enumerate().for_each(by_rows);
        } else {
            let layers = self.row_cursor.chunks_mut(dim_y);
            layers.enumerate().for_each(by_rows);
        }
        true
    }

    /// The candidate loop over sorted positions, with the widest instruction set the CPU has.
    pub fn visit(&self, positions: std::ops::Range<usize>, sink: &mut Sink) {
        #[cfg(target_arch = "x86_64")]
        {
            if span::avx512() {
                // SAFETY: AVX-512BW, POPCNT and BMI1 are present.
                return unsafe { self.visit_avx512(positions, sink) };
            }
            self.walk::<span::Sse2>(positions, sink)
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.walk::<span::Portable>(positions, sink)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512bw,popcnt,bmi1")]
    unsafe fn visit_avx512(&self, positions: std::ops::Range<usize>, sink: &mut Sink) {
        self.walk::<span::Avx512>(positions, sink)
    }

    /// Per own row, the two runs (its later positions with the next row's, and the three
    /// forward rows of the next layer); per object, each run in blocks of [`SPAN`] cells x,
    /// the lanes past the run's end masked off, and a sphere test per lane left.
    #[inline(always)]
    fn walk<S: Span + Touch>(&self, positions: std::ops::Range<usize>, sink: &mut Sink) {
        let (start, kx, sorted, index) = (&self.start, &self.kx, &self.sorted, &self.index);
        let dy = self.dim_y;
        let end = positions.end;
        let mut p = positions.start;
        if p >= end {
            return;
        }
        // The row holding `p` (the last row starting at or before it: empty rows share their
        // start with the next).
        let mut r = start.partition_point(|&s| s as usize <= p) - 1;
        // A row's objects with lanes within one: position, own run's lanes, next layer's
        // lanes above bit 32.
        let mut near = [(0u32, 0u64); SPAN];
        while p < end {
            // `p` lies in row `r`; real rows have every neighbour row numbered below `rows`.
            let own_end = start[r + 1] as usize;
            let next_end = start[r + 2] as usize;
            let (above, above_end) = (start[r + dy - 1] as usize, start[r + dy + 2] as usize);
            let stop = own_end.min(end);
            // The spheres and indices of the next layer are read only on a test, sparsely:
            // fetch the lines the next rows' runs will reach (a test's sphere load had 29% of
            // the walk's samples at density 1M without this).
            if !self.crowded {
                for k in 0..AHEAD_LINES {
                    prefetch(sorted.as_ptr().wrapping_add(above_end + AHEAD + 4 * k));
                }
                prefetch(index.as_ptr().wrapping_add(above_end + AHEAD));
                prefetch(kx.as_ptr().wrapping_add(above_end + KX_AHEAD));
            }
            let own = start[r] as usize;
            if next_end - own <= SPAN && above_end - above <= SPAN {
                // Both runs fit one block each (all but about 1% of the rows at density 1M):
                // load them once for the row; each object then masks the own run to its
                // later positions. (Loading each object's runs from its own position instead:
                // pair stage at density 1M, one thread, 11.5-12.2 ms against 7.9-10.0, three
                // alternating runs in a busy hour.)
                // SAFETY: both blocks start at most at `n`, and `kx` holds `SPAN` padding
                // entries past `n`; `visit` checked the instruction set.
                let (own_block, above_block) = unsafe { (S::load(kx, own), S::load(kx, above)) };
                let (own_lanes, above_lanes) = (lanes(next_end - own), lanes(above_end - above));
                let near_lanes = |p: usize, x: u16| {
                    // Lanes after `p` (`p - own < SPAN`: the own row is in the block).
                    let later = own_lanes & (u32::MAX << (p - own)) << 1;
                    // SAFETY: as above.
                    let (near_own, near_above) =
                        unsafe { (S::near_block(&own_block, x), S::near_block(&above_block, x)) };
                    (near_own & later, near_above & above_lanes)
                };
                if self.crowded {
                    // SAFETY: as the cells x (`coords` holds `SPAN` entries past `n`).
                    let (own_spheres, above_spheres) = unsafe {
                        (
                            S::load_spheres(&self.coords, own),
                            S::load_spheres(&self.coords, above),
                        )
                    };
                    // Only the lanes of the runs are tested (their lengths fix the registers
                    // or groups of lanes each object computes).
                    let (own_len, above_len) = (next_end - own, above_end - above);
                    let mut tests = 0;
                    for (p, &x) in (p..stop).zip(&kx[p..stop]) {
                        let (near_own, near_above) = near_lanes(p, x);
                        tests += near_own.count_ones() + near_above.count_ones();
                        let sp = self.sphere(p);
                        // SAFETY: `visit` checked the instruction set.
                        let (own_hits, above_hits) = unsafe {
                            (
                                S::touching(&own_spheres, &sp, own_len),
                                S::touching(&above_spheres, &sp, above_len),
                            )
                        };
                        let ip = index[p];
                        for (at, near, (hits, undecided)) in
                            [(own, near_own, own_hits), (above, near_above, above_hits)]
                        {
                            let (hits, undecided) = (near & hits & !undecided, near & undecided);
                            let lanes = (at, at.wrapping_sub(SPAN));
                            let wide = u64::from;
                            self.touching_lanes(
                                lanes,
                                wide(hits),
                                wide(undecided),
                                (&sp, ip),
                                sink,
                            );
                        }
                    }
                    sink.add_tests(u64::from(tests));
                } else {
                    // First each object's lanes within one, both runs in one mask, the objects
                    // with any kept without a branch (most have none: 0.26 tests an object at
                    // density 1M, where a branch per object mispredicted often); then their
                    // tests.
                    let mut found = 0;
                    for (p, &x) in (p..stop).zip(&kx[p..stop]) {
                        let (near_own, near_above) = near_lanes(p, x);
                        let mask = u64::from(near_own) | u64::from(near_above) << 32;
                        // `found <= p - own < SPAN`.
                        near[found % SPAN] = (p as u32, mask);
                        found += usize::from(mask != 0);
                    }
                    // Both runs' lanes in one loop (a loop a run, its exit mispredicted twice
                    // as often: pair stage at density 1M, one thread, 5.8-5.9 ms against
                    // 5.0-5.3 now, alternating runs).
                    let above_from = above.wrapping_sub(SPAN);
                    for &(p, mut mask) in &near[..found] {
                        let p = p as usize;
                        let (sp, ip) = (&sorted[p], index[p]);
                        while mask != 0 {
                            let k = mask.trailing_zeros() as usize;
                            let q = if k < SPAN { own } else { above_from }.wrapping_add(k);
                            sink.test(sp, &sorted[q], ip, index[q]);
                            mask &= mask - 1;
                        }
                    }
                }
            } else {
                for p in p..stop {
                    let (x, ip, sp) = (kx[p], index[p], &self.sphere(p));
                    self.match_run::<S>(p + 1..next_end, (x, sp, ip), sink);
                    self.match_run::<S>(above..above_end, (x, sp, ip), sink);
                }
            }
            p = stop;
            r += 1;
            while p < end && start[r + 1] as usize <= p {
                r += 1;
            }
        }
    }

    /// The sphere at sorted position `q`.
    #[inline(always)]
    fn sphere(&self, q: usize) -> Sphere {
        if self.crowded {
            let c = &self.coords;
            Sphere::new(glam::Vec3::new(c[0][q], c[1][q], c[2][q]), c[3][q])
        } else {
            self.sorted[q]
        }
    }

    /// Matches the cells x of positions `run` against the object's `x`, testing its sphere
    /// against each position within one.
    /// Crowded, each block's spheres are tested whole (the paper box at n = 5000, about one row
    /// in ten: pair stage 0.096-0.098 ms against 0.108-0.110 testing its lanes one by one,
    /// one thread, alternating runs).
    #[inline(always)]
    fn match_run<S: Span + Touch>(
        &self,
        run: std::ops::Range<usize>,
        (x, sp, ip): (u16, &Sphere, u32),
        sink: &mut Sink,
    ) {
        let mut at = run.start;
        loop {
            // SAFETY: a block starts at most at `n` (a run ends there at the latest and starts
            // a further block only below its end), and `kx` and `coords` hold `SPAN` padding
            // entries past `n`; `visit` checked the instruction set.
            let near = unsafe { S::near(&self.kx, at, x) } & lanes(run.end.saturating_sub(at));
            if self.crowded {
                let len = run.end.saturating_sub(at);
                // SAFETY: as above.
                let (hits, undecided) =
                    unsafe { S::touching(&S::load_spheres(&self.coords, at), sp, len) };
                sink.add_tests(u64::from(near.count_ones()));
                let lanes = (at, at.wrapping_sub(SPAN));
                let wide = u64::from;
                let undecided = wide(near & undecided);
                self.touching_lanes(
                    lanes,
                    wide(near & hits) & !undecided,
                    undecided,
                    (sp, ip),
                    sink,
                );
            } else {
                self.test_lanes(at, near, (sp, ip), sink);
            }
            at += SPAN;
            if at >= run.end {
                break;
            }
        }
    }

    /// Tests the sphere `sp` (index `ip`) against position `at + k` for each bit `k` of
    /// `mask`.
    #[inline(always)]
    fn test_lanes(&self, at: usize, mut mask: u32, (sp, ip): (&Sphere, u32), sink: &mut Sink) {
        while mask != 0 {
            let q = at + mask.trailing_zeros() as usize;
            sink.test(sp, &self.sphere(q), ip, self.index[q]);
            mask &= mask - 1;
        }
    }

    /// The tests of an object's lanes whose results [`Touch::touching`] gave, counted by the
    /// caller: `hits` and the `undecided` lanes, bit `k` for position `lanes.0 + k` below
    /// [`SPAN`] and `lanes.1 + k` from it. Decides the undecided with [`Sphere::touches`],
    /// reports each touching lane.
    #[inline(always)]
    fn touching_lanes(
        &self,
        lanes: (usize, usize),
        mut hits: u64,
        mut undecided: u64,
        (sp, ip): (&Sphere, u32),
        sink: &mut Sink,
    ) {
        let at = |k: usize| if k < SPAN { lanes.0 } else { lanes.1 }.wrapping_add(k);
        while undecided != 0 {
            let k = undecided.trailing_zeros() as usize;
            hits |= u64::from(sp.touches(&self.sphere(at(k)))) << k;
            undecided &= undecided - 1;
        }
        while hits != 0 {
            sink.touching(ip, self.index[at(hits.trailing_zeros() as usize)]);
            hits &= hits - 1;
        }
    }
}
