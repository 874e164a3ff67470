//! The grid's dense layout, for scenes whose grid has few cells per object (the paper box: 25^3
//! cells for 5000 objects): a counting sort by cell id `(kz * dim_y + ky) * dim_x + kx` with a
//! start offset per cell, so every neighbour range is found in O(1) instead of by walking rows.
//! Visits exactly the pairs [`super`] defines (own cell plus the 13 forward neighbours).

use super::GridFrame;
use crate::cpu::emit::Sink;
use crate::geom::sphere::Sphere;
use crate::geom::sphere_columns::{LANES, SphereColumns};

/// Dense tables are used while cells <= this many per object (plus a constant for tiny scenes).
const MAX_CELLS_PER_OBJECT: usize = 4;
const MAX_CELLS_EXTRA: usize = 1 << 12;
/// Forward rows `(dy + 1, dz)`: the 12 forward cells outside the own row are 3 consecutive `kx`
/// in each of the rows `(y + 1, z)`, `(y - 1, z + 1)`, `(y, z + 1)`, `(y + 1, z + 1)`
/// (`dy` offset by one so every entry, and every cell offset below, is non-negative).
const FORWARD_ROWS: [(usize, usize); 4] = [(2, 0), (0, 1), (1, 1), (2, 1)];

#[derive(Default)]
pub struct DenseGrid {
    /// Padded dimensions: a layer of empty cells at `x = -1`, `x = dim_x`, `y = -1`, `y = dim_y`
    /// and `z = dim_z`, so every neighbour cell of a real cell exists and each neighbour run is
    /// two loads at a fixed offset from the object's own cell (no bounds tests per object).
    dims: [usize; 3],
    /// `cell_start[k]` is the first sorted position of cell `k`, for `k` in `0..=cells` (the
    /// last is `n`). One spare entry at the end serves as a cursor during the scatter.
    cell_start: Vec<u32>,
    /// Padded cell id per object (in index order), before the scatter.
    cell_by_object: Vec<u32>,
    /// Per sorted position: padded cell id, sphere (whole, then by column), original index.
    cell: Vec<u32>,
    sorted: Vec<Sphere>,
    columns: SphereColumns,
    index: Vec<u32>,
}

impl DenseGrid {
    /// Sorts `spheres` (only `members` when given) by cell if the grid is small enough;
    /// returns false (and does nothing) otherwise.
    pub fn build(
        &mut self,
        frame: &GridFrame,
        spheres: &[Sphere],
        members: Option<&[u32]>,
    ) -> bool {
        match members {
            None => self.build_from(frame, spheres.iter().zip(0u32..), spheres.len()),
            Some(m) => {
                self.build_from(frame, m.iter().map(|&i| (&spheres[i as usize], i)), m.len())
            }
        }
    }

    fn build_from<'a>(
        &mut self,
        frame: &GridFrame,
        objects: impl Iterator<Item = (&'a Sphere, u32)> + Clone,
        n: usize,
    ) -> bool {
        let m = frame.max_cell.map(|m| m as usize);
        let dims = [
            m[0].checked_add(3),
            m[1].checked_add(3),
            m[2].checked_add(2),
        ];
        let [Some(dx), Some(dy), Some(dz)] = dims else {
            return false;
        };
        let cells = dx.checked_mul(dy).and_then(|c| c.checked_mul(dz));
        // Cell ids are stored as u32 (the sparse layout takes larger grids).
        let fits =
            |c: usize| c <= MAX_CELLS_PER_OBJECT * n + MAX_CELLS_EXTRA && c < u32::MAX as usize;
        let Some(cells) = cells.filter(|&c| fits(c)) else {
            return false;
        };
        self.dims = [dx, dy, dz];
        // Real cell (x, y, z) is padded cell (x + 1, y + 1, z).
        let id = |c: [u32; 3]| {
            ((c[2] as usize * dy + c[1] as usize + 1) * dx + c[0] as usize + 1) as u32
        };
        // Counting sort with the counts of cell k at k + 2: after the prefix sum, entry k + 1 is
        // the start of cell k and serves as its cursor; the scatter advances it to the start of
        // cell k + 1, leaving `cell_start[k]` = start of cell k with no separate cursor array.
        self.cell_start.clear();
        self.cell_start.resize(cells + 2, 0);
        self.cell_by_object.clear();
        let counts = &mut self.cell_start;
        self.cell_by_object.extend(objects.clone().map(|(s, _)| {
            let c = id(frame.cell(s.center));
            counts[c as usize + 2] += 1;
            c
        }));
        let mut sum = 0;
        for c in &mut self.cell_start[2..] {
            sum += *c;
            *c = sum;
        }
        // Stable scatter in index order (equal cells keep index order), writing every
        // per-position table directly instead of gathering them afterwards.
        // Every position is written below: only a new length needs filling.
        self.sorted.resize(n, Sphere::default());
        self.index.resize(n, 0);
        self.cell.resize(n, 0);
        for (&c, (s, i)) in self.cell_by_object.iter().zip(objects) {
            let slot = &mut self.cell_start[c as usize + 1];
            let p = *slot as usize;
            *slot += 1;
            self.sorted[p] = *s;
            self.index[p] = i;
            self.cell[p] = c;
        }
        self.cell_start.pop();
        self.columns.fill(&self.sorted);
        true
    }

    /// The candidate loop over sorted positions. Per object: the rest of its own cell and cell
    /// `x + 1` (consecutive cells are consecutive positions), then in each forward row the run
    /// of cells `x - 1 ..= x + 1`, found at a fixed offset from its own cell. (Before the
    /// padding, each run's cells were computed from the coordinates with bounds tests: pair
    /// stage on the paper box, n = 5000, 0.316-0.330 ms against 0.264-0.268.)
    ///
    /// Each run is tested in blocks of four positions at once ([`SphereColumns::touching`]),
    /// lanes past the run's end masked off: one block for a run of up to four, whatever its
    /// length, so the loop has no exit whose trip count (0 to 3 on the paper box) a predictor
    /// would have to learn, and branches only on a hit. (Before: the five runs' positions
    /// copied into one candidate list, 8 per run without a branch, and tested one by one,
    /// branch-free on the outcome: pair stage 0.206-0.216 ms against 0.264-0.268 for five
    /// scalar loops. Tried: blocks of eight with AVX, so that a run of five to eight, about a
    /// fifth of them on the paper box, is one block too: cachegrind counted the same
    /// mispredicted branches, 0.85 an object, and times did not separate from the noise in
    /// 6 alternating runs of 3000 frames. They follow the hits, 0.72 an object.)
    pub fn visit(&self, positions: std::ops::Range<usize>, sink: &mut Sink) {
        let [dx, dy, _] = self.dims;
        // Offset from a cell to the cell at x - 1 of each forward row: `(oy, oz)` with `oy`
        // counted from y - 1, so every offset is positive.
        let offsets = FORWARD_ROWS.map(|(oy, oz)| (oz * dy + oy) * dx - dx - 1);
        let (start, columns, index) = (&self.cell_start, &self.columns, &self.index);
        for p in positions {
            let c = self.cell[p] as usize;
            let (sp, ip) = (columns.get(p), index[p]);
            let mut tests = 0;
            let mut run = |run: std::ops::Range<usize>, sink: &mut Sink| {
                tests += run.len();
                let mut at = run.start;
                loop {
                    let lanes = run.end.saturating_sub(at).min(LANES);
                    let mut hits = columns.touching(&sp, at) & ((1 << lanes) - 1);
                    while hits != 0 {
                        let q = at + hits.trailing_zeros() as usize;
                        sink.touching(ip, index[q]);
                        hits &= hits - 1;
                    }
                    at += LANES;
                    if at >= run.end {
                        break;
                    }
                }
            };
            run(p + 1..start[c + 2] as usize, sink);
            for offset in offsets {
                let first = c + offset;
                run(start[first] as usize..start[first + 3] as usize, sink);
            }
            sink.add_tests(tests as u64);
        }
    }
}
