//! Results out: pair lists become `(K, 2)` `uint32` arrays that own the library's memory (no
//! copy).

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use sweepfan::Pair;

/// `pairs` as a `(K, 2)` `uint32` array, without copying the list.
pub fn pair_array(py: Python<'_>, pairs: Vec<Pair>) -> Bound<'_, PyArray2<u32>> {
    let k = pairs.len();
    let flat: Vec<u32> = bytemuck::allocation::cast_vec(pairs);
    Array2::from_shape_vec((k, 2), flat)
        .expect("a list of k pairs holds 2k indices")
        .into_pyarray(py)
}

/// Pairs of the caller's ids as a `(K, 2)` `uint64` array, without copying the list.
pub fn id_pair_array(py: Python<'_>, pairs: Vec<sweepfan::IdPair>) -> Bound<'_, PyArray2<u64>> {
    let k = pairs.len();
    let flat: Vec<u64> = bytemuck::allocation::cast_vec(pairs);
    Array2::from_shape_vec((k, 2), flat)
        .expect("a list of k pairs holds 2k ids")
        .into_pyarray(py)
}
