//! Shared geometry on glam types.

pub mod aabb;
pub(crate) mod capsule;
pub mod contact;
pub(crate) mod exact;
pub mod motion;
pub use exact::obbs_overlap_exactly;
pub mod obb;
pub mod polygon;
pub(crate) mod primitives2d;
pub mod radii;
pub mod sat;
pub mod sector;
pub mod shapes;
pub mod sphere;
pub(crate) mod sphere_columns;
pub(crate) mod sphere_exact;
pub(crate) mod sphere_grid;
#[cfg(test)]
pub(crate) mod test_util;

use crate::error::{Error, Result};
use rayon::prelude::*;

/// The library's one validation convention for the shapes it is given (spheres, boxes, oriented
/// boxes, sector bodies and their turns):
///
/// * a shape says what makes it unusable as input ([`Self::problem`], for people; `None` when
///   it is valid), and [`Self::check`] makes that an [`Error::InvalidObject`] at the caller's
///   index;
/// * a slice is checked by the shape's `validate_*` function (`validate_spheres`,
///   `validate_aabbs`, `validate_obbs`, ...), which names the lowest bad index, refuses more
///   shapes than u32 indices hold, and accepts an empty slice (no shapes: nothing to find, as
///   every call's empty frame);
/// * a shape whose invariants its constructor keeps ([`crate::Polygon`]) is checked there, its
///   fault placed at an index by the caller (`PolygonFault::at`).
pub trait Validate {
    /// What makes this shape unusable as input, if anything.
    fn problem(&self) -> Option<String>;

    /// [`Self::problem`] as [`Error::InvalidObject`] of object `index`.
    fn check(&self, index: usize) -> Result<()> {
        match self.problem() {
            Some(problem) => Err(Error::InvalidObject { index, problem }),
            None => Ok(()),
        }
    }
}

/// A set of `len` shapes (`what`, plural, for the message) can be indexed by u32 (the largest
/// value is kept free as a sentinel). Empty is fine.
pub(crate) fn check_u32_count(len: usize, what: &str) -> Result<()> {
    if len > u32::MAX as usize - 1 {
        return Err(Error::past_u32(
            len as u64,
            format!("{len} {what}: indices are u32"),
        ));
    }
    Ok(())
}

/// Every shape of `items` passes [`Validate::check`] and they fit u32 indices (the
/// `validate_*` functions of the shapes without a faster pass of their own).
pub(crate) fn validate_all<T: Validate + Sync>(items: &[T], what: &str) -> Result<()> {
    check_u32_count(items.len(), what)?;
    check_each(items, Validate::check)
}

/// The error of one malformed `what` (index 0), its problem worded "WHAT: PROBLEM".
pub(crate) fn invalid<T>(what: &str, problem: impl std::fmt::Display) -> Result<T> {
    Err(Error::InvalidObject {
        index: 0,
        problem: format!("{what}: {problem}"),
    })
}

/// Every item passes `check(item, index)`. One parallel scan first (the common, valid case);
/// on a failure, the lowest bad index is found and reported, so the message is deterministic.
pub(crate) fn check_each<T: Sync>(
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

/// The first named value that is non-zero but smaller in magnitude than `min`, as a problem.
pub(crate) fn below_min_magnitude<'a>(
    values: impl IntoIterator<Item = (&'a str, f32)>,
    min: f32,
) -> Option<String> {
    values.into_iter().find_map(|(name, v)| {
        (v != 0.0 && v.abs() < min).then(|| {
            format!(
                "|{name}| = {:e} is below {min:e}, the smallest non-zero magnitude accepted \
                 (f32 squares and differences of smaller values lose bits or flush to zero on \
                 GPUs): use 0, or scale the scene up",
                v.abs()
            )
        })
    })
}

/// The first of the named `values` that is NaN or infinite, as "NAME is NaN" or "NAME is
/// infinite" (the wording of every validation and file error).
pub(crate) fn non_finite<'a>(values: impl IntoIterator<Item = (&'a str, f32)>) -> Option<String> {
    values.into_iter().find_map(|(name, v)| {
        if v.is_nan() {
            Some(format!("{name} is NaN"))
        } else if v.is_infinite() {
            Some(format!("{name} is infinite"))
        } else {
            None
        }
    })
}
