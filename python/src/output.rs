//! Results out: pair lists become `(K, 2)` arrays (`uint32` positions, `uint64` ids) that own
//! the library's memory (no copy).

use numpy::ndarray::{Array2, ArrayView2};
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

/// Lists of fewer pairs are not kept as the spare: their pages cost little to fault in.
const SPARE_MIN_PAIRS: usize = 1 << 20;
/// Nor lists of more (256 MiB): memory a caller freed that large goes back to the system.
const SPARE_MAX_PAIRS: usize = 1 << 25;

/// The list of the last large position array Python freed, kept (one list at most) for the
/// next `sphere_pairs` call to find its pairs into: a new list of millions of pairs is new
/// memory each call (above glibc's largest reused mapping), and its first touch faults in each
/// 4 KiB page, about 20 ms at 5M pairs, a fifth of the call. The process keeps at most this one
/// list (of at most 256 MiB) beyond the arrays it hands out.
static SPARE: std::sync::Mutex<Vec<[u32; 2]>> = std::sync::Mutex::new(Vec::new());

/// A list to find pairs into: the spare (empty, its memory kept), else a new one.
pub fn spare_pair_list() -> Vec<[u32; 2]> {
    std::mem::take(
        &mut *SPARE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

/// Owns a position array's memory ([`position_pair_array`]); when Python frees the array, its
/// list becomes the spare.
#[pyclass(frozen, module = "sweepfan")]
struct PairListOwner {
    pairs: Vec<[u32; 2]>,
}

impl Drop for PairListOwner {
    fn drop(&mut self) {
        let mut list = std::mem::take(&mut self.pairs);
        list.clear();
        if (SPARE_MIN_PAIRS..=SPARE_MAX_PAIRS).contains(&list.capacity()) {
            *SPARE
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = list;
        }
    }
}

/// [`pair_array`] of positions, its memory handed back as the spare list when Python frees the
/// array. A list much longer than its pairs (a large spare refilled by a small result) is
/// shrunk first, so an array never holds much more memory than it shows.
pub fn position_pair_array(
    py: Python<'_>,
    mut pairs: Vec<[u32; 2]>,
) -> PyResult<Bound<'_, PyArray2<u32>>> {
    if pairs.capacity() > 2 * pairs.len() + SPARE_MIN_PAIRS {
        pairs.shrink_to_fit();
    }
    let k = pairs.len();
    let owner = Bound::new(py, PairListOwner { pairs })?;
    let flat: &[u32] = bytemuck::cast_slice(&owner.get().pairs);
    let view = ArrayView2::from_shape((k, 2), flat).expect("a list of k pairs holds 2k values");
    // SAFETY: the array's memory is the owner's list, which nothing changes or reallocates while
    // the owner lives (the class is frozen and has no methods); the owner is the array's base
    // object, so numpy keeps it alive as long as the array.
    Ok(unsafe { PyArray2::borrow_from_array(&view, owner.clone().into_any()) })
}
