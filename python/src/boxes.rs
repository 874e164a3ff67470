//! `BoxBroadPhase`: axis-aligned boxes by the caller's ids, frame after frame (the library's
//! `BoxBroadPhase`, docs/design.md §4.7).

use crate::errors::{check_not_forked, copy_of, to_py};
use crate::gpu::{self, lock};
use crate::input::{arg_error, ids, matrix, rows_fit};
use crate::interrupt::{BOX_PAIR, all_pairs, interruptible};
use crate::output::pair_array;
use glam::Vec3;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use std::sync::Mutex;
use sweepfan::{Aabb, Backend, BoxBroadPhase, IdPair};

/// What a `BoxBroadPhase` keeps between updates.
struct Held {
    broad: BoxBroadPhase,
    found: Vec<IdPair>,
    lost: Vec<IdPair>,
    found_worlds: Vec<u32>,
    lost_worlds: Vec<u32>,
}

/// Axis-aligned boxes held by your ids (any integers in 0..2**64), for a simulation's frames.
/// set(ids, lo, hi) inserts or moves boxes (lo, hi: (K, 3) lower and upper corners), remove(ids)
/// drops them, update() finds every touching pair (closed boxes: touching faces count) and
/// returns (found, lost): the pairs by id that began and stopped touching since the last
/// update, (K, 2) uint64 arrays, each row (a, b) with a < b, rows sorted. pairs holds the
/// pairs touching now. Exact on both backends.
///
/// backend: "auto" (the default: a hardware GPU when there is one, else the CPU), "cpu" or
/// "gpu"; adapter as sphere_pairs takes it.
#[pyclass(name = "BoxBroadPhase", module = "sweepfan")]
pub struct PyBoxBroadPhase {
    held: Mutex<Held>,
    backend: Backend,
}

#[pymethods]
impl PyBoxBroadPhase {
    #[new]
    #[pyo3(signature = (backend = "auto", adapter = None))]
    fn new(py: Python<'_>, backend: &str, adapter: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let gpu::Target { backend, adapter } = gpu::target(py, backend, adapter)?;
        check_not_forked()?;
        let broad = py.detach(|| -> PyResult<BoxBroadPhase> {
            Ok(match backend {
                Backend::Cpu => BoxBroadPhase::cpu(),
                Backend::Gpu => BoxBroadPhase::gpu(gpu::context(&adapter)?).map_err(to_py)?,
            })
        })?;
        Ok(Self {
            held: Mutex::new(Held {
                broad,
                found: Vec::new(),
                lost: Vec::new(),
                found_worlds: Vec::new(),
                lost_worlds: Vec::new(),
            }),
            backend,
        })
    }

    /// Inserts the boxes of ids, or moves them there: lo and hi are (K, 3) arrays of the lower
    /// and upper corners, one row per id. All or nothing: a NaN or infinite coordinate raises
    /// ValueError naming the argument and row, lo > hi on an axis or an id given twice one
    /// naming the id, and nothing changes.
    /// world: (K,) integer world ids (many worlds in one broad phase: boxes of different worlds
    /// never pair; sweepfan.SHARED = 2**32 - 1 pairs with every world). Without it a new box is
    /// in world 0 and a moved one keeps its world.
    #[pyo3(signature = (ids, lo, hi, world = None))]
    fn set(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        lo: &Bound<'_, PyAny>,
        hi: &Bound<'_, PyAny>,
        world: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let ids = self::ids("ids", ids)?;
        let lo = matrix("lo", lo, ["x", "y", "z"], rows_fit("lo", 12))?;
        let hi = matrix("hi", hi, ["x", "y", "z"], rows_fit("hi", 12))?;
        for (arg, rows) in [("lo", lo.len()), ("hi", hi.len())] {
            if rows != ids.len() {
                return Err(arg_error(
                    arg,
                    format!("{rows} rows for {} ids: one row per id", ids.len()),
                ));
            }
        }
        let boxes: Vec<Aabb> = lo
            .iter()
            .zip(&hi)
            .map(|(l, h)| Aabb::new(Vec3::from_array(*l), Vec3::from_array(*h)))
            .collect();
        let worlds = world
            .map(|w| crate::worlds::world_ids(w, ids.len()))
            .transpose()?;
        py.detach(|| {
            let broad = &mut lock(&self.held).broad;
            match &worlds {
                Some(worlds) => broad.set_many_in_worlds(&ids, &boxes, worlds),
                None => broad.set_many(&ids, &boxes),
            }
        })
        .map_err(to_py)
    }

    /// Drops the boxes of ids (their pairs are lost at the next update); ids not held are
    /// ignored. Returns how many were dropped.
    fn remove(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<usize> {
        let ids = self::ids("ids", ids)?;
        Ok(py.detach(|| {
            let mut held = lock(&self.held);
            ids.iter()
                .filter(|&&id| held.broad.remove(id).is_some())
                .count()
        }))
    }

    /// Finds the pairs touching now; returns (found, lost) against the last update. An update
    /// that fails changes nothing.
    #[allow(clippy::type_complexity)]
    fn update<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray2<u64>>, Bound<'py, PyArray2<u64>>)> {
        let objects = py.detach(|| lock(&self.held).broad.len());
        let work = all_pairs(objects).saturating_mul(BOX_PAIR);
        let (found, lost) = interruptible(py, work, || {
            let mut held = lock(&self.held);
            let frame = held.broad.update().map_err(to_py)?;
            // The copies kept for the getters, or MemoryError (not an abort).
            held.found = copy_of(&frame.found)?;
            held.lost = copy_of(&frame.lost)?;
            (held.found_worlds, held.lost_worlds) = (frame.found_worlds, frame.lost_worlds);
            Ok((frame.found, frame.lost))
        })?;
        Ok((pair_array(py, found), pair_array(py, lost)))
    }

    /// The pairs touching at the last update, (K, 2) uint64, rows sorted, a < b in each.
    #[getter]
    fn pairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let pairs = py.detach(|| copy_of(lock(&self.held).broad.pairs()))?;
        Ok(pair_array(py, pairs))
    }

    /// The pairs that began touching at the last update.
    #[getter]
    fn found<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let found = py.detach(|| copy_of(&lock(&self.held).found))?;
        Ok(pair_array(py, found))
    }

    /// The pairs that stopped touching at the last update.
    #[getter]
    fn lost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let lost = py.detach(|| copy_of(&lock(&self.held).lost))?;
        Ok(pair_array(py, lost))
    }

    /// The world of each pair of found (its boxes' world, or where one is SHARED the other's;
    /// 0 for boxes set without a world), (K,) uint32 beside found's rows.
    #[getter]
    fn found_worlds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let worlds = py.detach(|| copy_of(&lock(&self.held).found_worlds))?;
        Ok(worlds.into_pyarray(py))
    }

    /// The world of each pair of lost, as it was while the pair touched, beside lost's rows.
    #[getter]
    fn lost_worlds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let worlds = py.detach(|| copy_of(&lock(&self.held).lost_worlds))?;
        Ok(worlds.into_pyarray(py))
    }

    /// Boxes held.
    fn __len__(&self, py: Python<'_>) -> usize {
        py.detach(|| lock(&self.held).broad.len())
    }

    /// "cpu" or "gpu".
    #[getter]
    fn backend(&self) -> &str {
        self.backend.as_str()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "BoxBroadPhase(backend='{}', boxes={})",
            self.backend.as_str(),
            self.__len__(py)
        )
    }
}
