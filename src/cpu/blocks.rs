//! The blocked walk of the world batches' lean walks (`cpu::worlds`, the grid's `LeanGrid`):
//! an object's candidates taken eight rows at a time, found by vector compares without a
//! branch on each, so that the walk's one unpredictable branch, where the object's candidates
//! end, is taken once a block instead of once a row (worlds of the paper's box have about three
//! candidates an object; single thread, 4,096 worlds of 64: sap's walk 7.16 -> 6.2 ms).

use glam::Vec4;

/// Rows a walk visits at a time; the rows' columns carry this many sentinels past the end,
/// which are never in reach.
pub(crate) const BLOCK: usize = 8;

/// Four rows of a column from row `q` (the column holds [`BLOCK`] sentinels past its end).
#[inline(always)]
pub(crate) fn column(v: &[f32], q: usize) -> Vec4 {
    Vec4::from_slice(&v[q..q + 4])
}

/// Walks every pair of `m` rows that are in reach of each other, eight rows `p..p + 8` at a
/// time, diagonal by diagonal: `diagonal(q, four)` gives, for the four rows `four` (loaded
/// once by `rows(p)`) against the rows `q - p` places after each, the bit masks of those in
/// reach and of those to test; `hit(p, q)` is called for each pair to test. A row's reach
/// must be a prefix of the rows after it (the rows in order of their lower end on the walk's
/// axis), and rows from `m` (the columns' sentinels) must be in no one's reach, nor reach any
/// (so `rows(p)` for `p >= m` must give a row that reaches nothing). The walk of eight rows
/// ends at the first diagonal none of them reaches.
///
/// Paper box, 4,096 worlds of 64, one thread, `sap`'s walk: 2.05 ms one row at a time (a
/// block of its next eight each, the walk's branch once a row), 1.6 four rows at a time and
/// 1.2 eight at a time; sixteen ran out of vector registers (1.8).
#[inline(always)]
pub(crate) fn walk_diagonals<R: Copy>(
    m: usize,
    rows: impl Fn(usize) -> R,
    diagonal: impl Fn(usize, R) -> (u32, u32),
    mut hit: impl FnMut(usize, usize),
) {
    for p in (0..m).step_by(BLOCK) {
        let (a, b) = (rows(p), rows(p + 4));
        for q in p + 1.. {
            let ((reach_a, hits_a), (reach_b, hits_b)) = (diagonal(q, a), diagonal(q + 4, b));
            if reach_a | reach_b == 0 {
                break;
            }
            let mut lanes = hits_a | hits_b << 4;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                hit(p + lane, q + lane);
                lanes &= lanes - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::test_util::lcg_next;

    /// The diagonal walk hits exactly the pairs a double loop finds (in reach on x, the rows in
    /// lo order, and overlapping on y), at every size around the blocks, with intervals
    /// that reach none, a few, or all of the rows after them.
    #[test]
    fn diagonal_walk_hits_what_a_double_loop_finds() {
        let mut state = 11;
        let mut unit = || (lcg_next(&mut state) >> 40) as f32 / (1u64 << 24) as f32;
        for m in 0..41usize {
            for width in [0.0f32, 0.05, 0.3, 2.0] {
                let mut rows: Vec<[f32; 4]> = (0..m)
                    .map(|_| {
                        let (x, y) = (unit(), unit());
                        [x, x + width * unit(), y, y + 0.3 * unit()]
                    })
                    .collect();
                rows.sort_by(|a, b| a[0].total_cmp(&b[0]));
                // Columns with sentinels up to the walk's last read: lo infinite, the rest NaN.
                let padded = m.next_multiple_of(BLOCK) + BLOCK;
                let column = |k: usize, sentinel: f32| -> Vec<f32> {
                    let mut c: Vec<f32> = rows.iter().map(|r| r[k]).collect();
                    c.resize(padded, sentinel);
                    c
                };
                let (lo, hi) = (column(0, f32::INFINITY), column(1, f32::NAN));
                let (ylo, yhi) = (column(2, f32::NAN), column(3, f32::NAN));
                let row = |p: usize| {
                    [
                        super::column(&hi, p),
                        super::column(&ylo, p),
                        super::column(&yhi, p),
                    ]
                };
                let diagonal = |q: usize, [h, yl, yh]: [Vec4; 3]| {
                    let reach = super::column(&lo, q).cmple(h);
                    let hits =
                        reach & super::column(&ylo, q).cmple(yh) & yl.cmple(super::column(&yhi, q));
                    (reach.bitmask(), hits.bitmask())
                };
                let mut got = Vec::new();
                walk_diagonals(m, row, diagonal, |p, q| got.push((p, q)));
                got.sort_unstable();
                let mut want = Vec::new();
                for p in 0..m {
                    for q in p + 1..m {
                        let (a, b) = (rows[p], rows[q]);
                        if b[0] <= a[1] && b[2] <= a[3] && a[2] <= b[3] {
                            want.push((p, q));
                        }
                    }
                }
                assert_eq!(got, want, "m {m}, width {width}");
            }
        }
    }
}
