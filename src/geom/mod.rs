//! Shared geometry on glam types.

pub mod aabb;
pub mod capsule;
pub mod obb;
pub mod polygon;
pub mod primitives2d;
pub mod sat;
pub mod sector;
pub mod sphere;
pub mod sphere_grid;

use crate::error::{Error, Result};
use rayon::prelude::*;

/// A set of `len` objects (`what`, plural, for the message) is not empty and can be indexed by
/// u32 (the largest value is kept free as a sentinel).
pub fn check_count(len: usize, what: &str) -> Result<()> {
    if len == 0 {
        return Err(Error::EmptyScene);
    }
    if len > u32::MAX as usize - 1 {
        return Err(Error::TooLarge(format!("{len} {what}: indices are u32")));
    }
    Ok(())
}

/// Every item passes `check(item, index)`. One parallel scan first (the common, valid case);
/// on a failure, the lowest bad index is found and reported, so the message is deterministic.
pub fn check_each<T: Sync>(
    items: &[T],
    check: impl Fn(&T, usize) -> Result<()> + Sync,
) -> Result<()> {
    let all_ok = items
        .par_chunks(1 << 14)
        .all(|chunk| chunk.iter().all(|x| check(x, 0).is_ok()));
    if all_ok {
        return Ok(());
    }
    for (i, x) in items.iter().enumerate() {
        check(x, i)?;
    }
    Ok(())
}
