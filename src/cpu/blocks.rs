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

/// Walks the rows from `start` a block at a time: `half(q)` gives, for rows `q..q + 4`, the
/// bit mask of those in reach (a prefix of the rows from `start`: once one is out of reach,
/// every later one is) and of those to test; `hit(r)` is called for each row `r` to test, in
/// order. The walk ends at the first block not wholly in reach.
#[inline(always)]
pub(crate) fn walk_blocks(
    start: usize,
    half: impl Fn(usize) -> (u32, u32),
    mut hit: impl FnMut(usize),
) {
    let mut q = start;
    loop {
        let ((reach_a, hits_a), (reach_b, hits_b)) = (half(q), half(q + 4));
        let mut hits = hits_a | hits_b << 4;
        while hits != 0 {
            hit(q + hits.trailing_zeros() as usize);
            hits &= hits - 1;
        }
        if reach_a | reach_b << 4 != (1 << BLOCK) - 1 {
            break;
        }
        q += BLOCK;
    }
}
