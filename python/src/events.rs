//! `EventTracker`: the frame events of any pair list (`obb_pairs`, `polygon_pairs`, a contact
//! list's pairs, pairs from elsewhere), as `BroadPhase(track_events=True)` gives them for
//! spheres.

use crate::gpu::lock;
use crate::input::{arg_error, pair_rows};
use crate::output::pair_array;
use numpy::PyArray2;
use pyo3::prelude::*;
use std::sync::Mutex;
use sweepfan::{EventTracker, Pair, canonicalize};

/// (found, lost), as `update` returns them.
type Events<'py> = (Bound<'py, PyArray2<u32>>, Bound<'py, PyArray2<u32>>);

/// EventTracker(): the pairs that begin and stop touching between successive pair lists.
///
/// update(pairs) takes this frame's pairs, a (K, 2) integer array of positions (either order
/// in a row, rows in any order; each pair once, no object with itself), and returns (found,
/// lost): the pairs new since the last update and those gone, (K, 2) uint32 arrays, each row
/// (i, j) with i < j, rows sorted. The first update finds every pair. pairs holds the last
/// update's pairs, frames counts the updates, reset() forgets them. Bad pairs raise
/// ValueError naming the row (a pair given twice: both rows), and change nothing.
#[pyclass(name = "EventTracker", module = "sweepfan")]
pub struct PyEventTracker {
    tracker: Mutex<EventTracker>,
}

#[pymethods]
impl PyEventTracker {
    #[new]
    fn new() -> Self {
        Self {
            tracker: Mutex::new(EventTracker::new()),
        }
    }

    fn update<'py>(&self, py: Python<'py>, pairs: &Bound<'py, PyAny>) -> PyResult<Events<'py>> {
        let mut rows = pair_rows("pairs", pairs, u32::MAX as usize)?;
        // Ordered, checked and compared off the GIL (2x10^7 pairs held it 1.25 s), within the
        // process's memory budget: events that cannot fit raise MemoryError instead of
        // aborting.
        let events = py.detach(|| {
            for row in &mut rows {
                *row = [row[0].min(row[1]), row[0].max(row[1])];
            }
            canonicalize(&mut rows);
            if let Some(twice) = rows.windows(2).find(|w| w[0] == w[1]) {
                return Ok(Err(twice[0]));
            }
            crate::interrupt::limits()
                .run(|| lock(&self.tracker).try_update(&rows))
                .map(Ok)
                .map_err(crate::errors::to_py)
        })?;
        match events {
            Ok(events) => Ok((pair_array(py, events.found), pair_array(py, events.lost))),
            Err(pair) => Err(given_twice(pairs, pair)),
        }
    }

    /// The last update's pairs, (K, 2) uint32, sorted.
    #[getter]
    fn pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let pairs = crate::errors::copy_of(lock(&self.tracker).pairs())?;
        Ok(pair_array(py, pairs))
    }

    /// Updates so far.
    #[getter]
    fn frames(&self) -> u64 {
        lock(&self.tracker).frames()
    }

    /// Forgets the pairs: the next update finds every pair again.
    fn reset(&self) {
        lock(&self.tracker).reset();
    }
}

/// The error for `pair` given twice in `pairs` (in either order): the two rows named, found
/// again in the caller's array (the ordered copy no longer has them).
fn given_twice(pairs: &Bound<'_, PyAny>, pair: Pair) -> PyErr {
    let rows: Vec<usize> = pair_rows("pairs", pairs, u32::MAX as usize)
        .map(|rows| {
            rows.iter()
                .enumerate()
                .filter(|(_, r)| [r[0].min(r[1]), r[0].max(r[1])] == pair)
                .map(|(k, _)| k)
                .take(2)
                .collect()
        })
        .unwrap_or_default();
    let rows = match rows[..] {
        [first, second] => format!("rows {first} and {second}"),
        _ => "two rows".to_string(),
    };
    arg_error(
        "pairs",
        format!(
            "{rows} are the same pair ({}, {}): each pair once",
            pair[0], pair[1]
        ),
    )
}
