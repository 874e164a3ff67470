//! Results out: pair lists become `(K, 2)` arrays (`uint32` positions, `uint64` ids) that own
//! the library's memory (no copy).

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray, PyArray2};
use pyo3::prelude::*;

/// `pairs` (positions, `[u32; 2]`, or the caller's ids, `[u64; 2]`) as a `(K, 2)` array,
/// without copying the list.
pub fn pair_array<T>(py: Python<'_>, pairs: Vec<[T; 2]>) -> Bound<'_, PyArray2<T>>
where
    T: bytemuck::Pod + Element,
{
    let k = pairs.len();
    let flat: Vec<T> = bytemuck::allocation::cast_vec(pairs);
    Array2::from_shape_vec((k, 2), flat)
        .expect("a list of k pairs holds 2k values")
        .into_pyarray(py)
}
