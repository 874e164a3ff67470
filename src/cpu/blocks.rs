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
