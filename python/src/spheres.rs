//! Spheres: `sphere_pairs` (one call) and `BroadPhase` (a simulation's frames, with events).

use crate::errors::{check_not_forked, copy_of, fails_with, to_py, with_row};
use crate::gpu::{self, Cache, lock};
use crate::input::{arg_error, matrix, per_object};
use crate::interrupt::{all_pairs, interruptible};
use crate::output::pair_array;
use glam::Vec3;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::{LazyLock, Mutex};
use sweepfan::Validate;
use sweepfan::broadphase::auto;
use sweepfan::events::{WorldEventTracker, WorldEvents};
use sweepfan::registry;
use sweepfan::{
    Backend, BroadPhase, EventTracker, Method, Pair, Sphere, WorldBroadPhase, WorldPairs,
    validate_spheres,
};

/// The spheres of `centers` and `radii` in the library's layout (copied while the interpreter
/// is held); [`check_spheres`] applies the library's rules.
pub fn spheres(centers: &Bound<'_, PyAny>, radii: &Bound<'_, PyAny>) -> PyResult<Vec<Sphere>> {
    check_not_forked()?;
    if let Some(spheres) = spheres_as_they_lie(centers, radii)? {
        return Ok(spheres);
    }
    let centers = matrix("centers", centers, ["x", "y", "z"], |n| match n {
        // No spheres, no pairs (docs/design.md §8.4); the library refuses an empty scene.
        0 => Ok(()),
        n => crate::interrupt::limits()
            .run(|| sweepfan::broadphase::limits::check_scene_size(n))
            .map_err(to_py),
    })?;
    let radii = per_object("radii", "radius", radii, centers.len())?;
    Ok(centers
        .iter()
        .enumerate()
        .map(|(i, c)| Sphere::new(Vec3::from_array(*c), radii.get(i)))
        .collect())
}

/// The common case without an intermediate array (docs/design.md §8.4): float32 centres,
/// aligned and C-contiguous `(N, 3)`, every value finite, and a radius given as one number
/// (finite, >= 0, and not rounded to 0 or past float32): the spheres written in one parallel
/// pass over the array as it lies. `None` for anything else, which takes the general path (and
/// its messages).
fn spheres_as_they_lie(
    centers: &Bound<'_, PyAny>,
    radius: &Bound<'_, PyAny>,
) -> PyResult<Option<Vec<Sphere>>> {
    let Ok(array) = centers.cast::<numpy::PyArray2<f32>>() else {
        return Ok(None);
    };
    // A plain ndarray only: a subclass (a masked array above all, whose mask this path would
    // drop) takes the general path, which reads it as NumPy does or refuses it.
    let ndarray = centers.py().import("numpy")?.getattr("ndarray")?;
    if !centers.get_type().is(&ndarray) {
        return Ok(None);
    }
    // A Python float (or NumPy float64) or int, never a bool (which the general path refuses).
    let number = radius.is_instance_of::<pyo3::types::PyFloat>()
        || radius.is_exact_instance_of::<pyo3::types::PyInt>();
    let Some(r) = number.then(|| radius.extract::<f64>().ok()).flatten() else {
        return Ok(None);
    };
    let radius = r as f32;
    if !(r >= 0.0 && radius.is_finite() && (r == 0.0 || radius > 0.0)) || radius.is_subnormal() {
        return Ok(None);
    }
    let aligned: bool = array.getattr("flags")?.getattr("aligned")?.extract()?;
    let columns = numpy::PyUntypedArrayMethods::shape(array)[1];
    // Row-major only: a Fortran-ordered array is contiguous too, with its columns one after
    // another.
    if !numpy::PyUntypedArrayMethods::is_c_contiguous(array) {
        return Ok(None);
    }
    let array = numpy::PyArrayMethods::readonly(array);
    let (Some(flat), true) = (array.as_slice().ok(), aligned) else {
        return Ok(None);
    };
    let n = flat.len() / 3;
    if columns != 3 || n == 0 {
        return Ok(None);
    }
    crate::interrupt::limits()
        .run(|| sweepfan::broadphase::limits::check_scene_size(n))
        .map_err(to_py)?;
    // With the interpreter held, as every copy of an argument (docs/design.md §8.4): no Python
    // thread can write the array while the pool reads it.
    use rayon::prelude::*;
    if !flat.par_iter().all(|v| v.is_finite()) {
        return Ok(None);
    }
    let mut spheres = Vec::with_capacity(n);
    spheres.par_extend(
        flat.par_chunks_exact(3)
            .map(|c| Sphere::new(Vec3::new(c[0], c[1], c[2]), radius)),
    );
    Ok(Some(spheres))
}

/// The library's checks of the spheres (run without the interpreter); a bad row raises a
/// `ValueError` naming the argument and the row.
pub fn check_spheres(spheres: &[Sphere]) -> PyResult<()> {
    validate_spheres(spheres).map_err(|e| with_row(e, |i, problem| culprit(&spheres[i], problem)))
}

/// Which argument made sphere `s` fail with `problem`: its centre or its radius where that part
/// alone fails the same way, else both (a reach beyond the coordinate range).
fn culprit(s: &Sphere, problem: &str) -> String {
    if fails_with(Sphere::new(s.center, 0.0).check(0), problem) {
        "centers".into()
    } else if fails_with(Sphere::new(Vec3::ZERO, s.radius).check(0), problem) {
        "radii".into()
    } else {
        "centers and radii".into()
    }
}

/// `method=` by name: every name the CLI's `--methods` takes (the peers' only when built with
/// them), any case, `-` for `_`.
pub fn method_name(method: &str) -> PyResult<String> {
    let lower = method.trim().to_ascii_lowercase();
    if lower == registry::AUTO
        || (cfg!(feature = "peers") && registry::PEER_NAMES.contains(&lower.as_str()))
    {
        return Ok(lower);
    }
    Method::parse(&lower)
        .map(|m| m.name().to_string())
        .map_err(|_| arg_error("method", registry::unknown_method(method, false)))
}

fn make(method: &str, backend: Backend, adapter: &str) -> PyResult<Box<dyn BroadPhase + Send>> {
    let ctx = match backend {
        Backend::Gpu => Some(gpu::context(adapter)?),
        Backend::Cpu => None,
    };
    registry::broad_phase(method, backend, ctx.as_ref()).map_err(|e| match e {
        // A peer method on the GPU: the combination's fault.
        e @ (sweepfan::Error::InvalidArgument {
            argument: "backend" | "method" | "ctx",
            ..
        }
        | sweepfan::Error::UnknownName { .. }) => arg_error("method", e.to_string()),
        other => to_py(other),
    })
}

/// Broad phases kept between `sphere_pairs` calls, per backend, adapter and method: the GPU's
/// device and pipelines, and either backend's buffers (a fresh 1M-sphere CPU grid spends a
/// quarter of its time in page faults of new buffers). `clear_caches()` drops them.
pub static PHASES: LazyLock<Cache<Box<dyn BroadPhase + Send>>> = LazyLock::new(Cache::new);

/// The pairs (or, with `out = None`, only the counts) of the spheres.
fn run(
    method: &str,
    backend: Backend,
    adapter: &str,
    spheres: &[Sphere],
    out: Option<&mut Vec<Pair>>,
) -> PyResult<sweepfan::Stats> {
    check_spheres(spheres)?;
    let stats = PHASES.with(
        format!("{}\u{0}{adapter}\u{0}{method}", backend.as_str()),
        (backend == Backend::Gpu).then_some(adapter),
        || make(method, backend, adapter),
        // In canonical order (the CPU methods gather their pairs in it); the scene was checked
        // above, for messages naming the argument.
        |broad| broad.find_pairs(spheres, out),
    )?;
    Ok(stats)
}

/// Every touching pair of spheres: a (K, 2) uint32 array, i < j in each row, rows sorted.
///
/// centers: an (N, 3) array (float32 read in place; float64 and integers converted once, each
/// value rounded to the nearest float32, which is then the value decided on).
/// radii: a scalar or an (N,) array, >= 0. Spheres touch when |c_i - c_j| <= r_i + r_j in
/// real arithmetic on the float32 values (decided exactly, as the CLI decides it: not a float32
/// evaluation of that formula, which rounds). method: any name in METHODS: "auto" (the
/// default) runs the method choose_method names for these spheres (grid, sap, x or brute_force),
/// or name one of "grid", "sap", "brute_force", "origin_distance", "x", "xy", "xyz",
/// "min_axis". backend: "auto" (the default: a hardware GPU when there is one, else the CPU;
/// default_backend() says which), "cpu" or "gpu" (a software adapter there warns:
/// SoftwareAdapterWarning). adapter: an index into adapters() or part of an adapter's name, with
/// backend="gpu" or "auto" (None: the default adapter). An empty scene gives a (0, 2) array. count_only: return (pairs, tests) instead of the list,
/// where tests counts the sphere-sphere tests the method performed.
///
/// world: None (one scene), or one world id per sphere (SHARED for an object in every world):
/// pairs only within a world, returned as world_pairs returns them, (pairs, worlds, offsets);
/// centers with a batch axis, (B, N, 3), mean B worlds of N the same way.
///
/// Raises ValueError for bad input (naming the argument and the first bad row), MemoryError
/// when the scene or its pairs do not fit, RuntimeError when the GPU is missing or fails.
#[pyfunction]
#[pyo3(signature = (centers, radii, *, world = None, method = "auto", backend = "auto", adapter = None, count_only = false))]
#[allow(clippy::too_many_arguments)]
pub fn sphere_pairs<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    radii: &Bound<'py, PyAny>,
    world: Option<&Bound<'py, PyAny>>,
    method: &str,
    backend: &str,
    adapter: Option<&Bound<'py, PyAny>>,
    count_only: bool,
) -> PyResult<Bound<'py, PyAny>> {
    // A batch axis from an array or from nested lists (their depth, as NumPy reads it).
    let batch_axis = match centers.cast::<numpy::PyUntypedArray>() {
        Ok(a) => numpy::PyUntypedArrayMethods::ndim(a) == 3,
        Err(_) => py
            .import("numpy")?
            .call_method1("ndim", (centers,))
            .and_then(|d| d.extract::<usize>())
            .is_ok_and(|d| d == 3),
    };
    if batch_axis || world.is_some_and(|w| !w.is_none()) {
        let world = world.filter(|w| !w.is_none());
        return crate::worlds::world_pairs(
            py, centers, radii, world, method, backend, adapter, count_only,
        );
    }
    let method = method_name(method)?;
    let gpu::Target { backend, adapter } = gpu::target(py, backend, adapter)?;
    let spheres = spheres(centers, radii)?;
    if spheres.is_empty() {
        return Ok(if count_only {
            (0u64, 0u64).into_pyobject(py)?.into_any()
        } else {
            pair_array(py, Vec::<Pair>::new()).into_any()
        });
    }
    // `auto` resolved here, per call: the cached broad phases are per named method.
    let method = if method == registry::AUTO {
        check_spheres(&spheres)?;
        let software = is_software(backend, &adapter)?;
        py.detach(|| {
            auto::choose(&spheres, backend, software)
                .method
                .name()
                .to_string()
        })
    } else {
        method
    };
    if count_only {
        let stats = interruptible(py, all_pairs(spheres.len()), || {
            run(&method, backend, &adapter, &spheres, None)
        })?;
        return Ok((stats.pairs, stats.tests).into_pyobject(py)?.into_any());
    }
    let mut pairs = crate::output::spare_pair_list();
    interruptible(py, all_pairs(spheres.len()), || {
        run(&method, backend, &adapter, &spheres, Some(&mut pairs))
    })?;
    Ok(crate::output::position_pair_array(py, pairs)?.into_any())
}

/// The method `sphere_pairs(..., method="auto")` runs on these spheres, and why: a tuple
/// (method, reason), e.g. ("grid", "uniform radii, 0.13 spheres a cell, 0.3 tests an object").
/// Decided from a sample of the spheres (at most 2048), without running any method.
/// backend: "auto", "cpu" or "gpu", and adapter as sphere_pairs takes them (their prices differ; a
/// software adapter's too).
#[pyfunction]
#[pyo3(signature = (centers, radii, *, backend = "auto", adapter = None))]
pub fn choose_method(
    py: Python<'_>,
    centers: &Bound<'_, PyAny>,
    radii: &Bound<'_, PyAny>,
    backend: &str,
    adapter: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, String)> {
    let gpu::Target { backend, adapter } = gpu::target(py, backend, adapter)?;
    let spheres = spheres(centers, radii)?;
    if spheres.is_empty() {
        // Nothing to run; ties go to the grid (docs/design.md §2.12).
        return Ok((
            Method::Grid.name().to_string(),
            "an empty scene: no pairs".to_string(),
        ));
    }
    check_spheres(&spheres)?;
    let software = is_software(backend, &adapter)?;
    let choice = py.detach(|| auto::choose(&spheres, backend, software));
    Ok((choice.method.name().to_string(), choice.reason))
}

/// Whether `backend` runs on a software adapter (`auto` prices those apart).
fn is_software(backend: Backend, adapter: &str) -> PyResult<bool> {
    Ok(match backend {
        Backend::Gpu => gpu::context(adapter)?.is_software(),
        Backend::Cpu => false,
    })
}

/// What a `BroadPhase` keeps between steps.
struct Frames {
    broad: Box<dyn BroadPhase + Send>,
    /// Events tracked on the host from the pairs, when the backend does not track them itself.
    tracker: Option<EventTracker>,
    /// The backend computes events itself (the GPU, on the device).
    on_device: bool,
    found: Vec<Pair>,
    lost: Vec<Pair>,
    tests: u64,
    frames: u64,
    /// `auto`: the last step's choice.
    chosen: Option<auto::Choice>,
    /// The batch of worlds, made by the first step with worlds.
    worlds: Option<WorldFrames>,
    /// Whether the steps take worlds (set by the first step that succeeds).
    with_worlds: Option<bool>,
}

/// `world_groups()`'s result: the worlds and their offsets.
type WorldRows<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u64>>);

/// What a `BroadPhase` stepping batches of worlds keeps between steps.
struct WorldFrames {
    batch: Box<dyn WorldBroadPhase + Send>,
    tracker: Option<WorldEventTracker>,
    pairs: WorldPairs,
    events: WorldEvents,
}

impl Frames {
    /// The last step's events and world groups emptied, as a step begins (the trackers keep
    /// the last frame that succeeded, which the next step compares with).
    fn forget_last_step(&mut self) {
        self.found.clear();
        self.lost.clear();
        if let Some(w) = self.worlds.as_mut() {
            w.events = WorldEvents::default();
            // Emptied, its memory kept for this step's pairs.
            w.pairs.clear();
        }
    }
}

/// A broad phase kept between frames: its buffers (and on the GPU its device and pipelines)
/// are reused by every step. step(centers, radii) returns the frame's pairs as sphere_pairs
/// does. With track_events=True, found and lost hold the pairs that began and ended touching
/// in the last step (the first step finds every pair; an empty step loses every pair; a step
/// that raises, for its input too, leaves them empty, and the next step compares with the last
/// step that succeeded); the GPU computes them on the device.
///
/// With world= (one id per sphere) or a batch axis ((B, N, 3) centers), a step is a batch of
/// independent worlds as world_pairs runs it: its pairs (and found and lost) grouped by world,
/// sorted inside each; world_groups() gives each world's rows. Every step of one broad phase
/// takes worlds, or none does.
///
/// method: "auto" (the default; choice says what each step ran), "grid", "sap",
/// "brute_force", "origin_distance", "x", "xy", "xyz" or "min_axis". backend: "auto" (the
/// default: a hardware GPU when there is one, else the CPU; the backend attribute says which),
/// "cpu" or "gpu"; adapter as sphere_pairs takes it.
#[pyclass(name = "BroadPhase", module = "sweepfan")]
pub struct PyBroadPhase {
    frames: Mutex<Frames>,
    method: String,
    backend: Backend,
    adapter: String,
    /// Whether the GPU was asked for by name (a batch of worlds then does not fall back to
    /// the CPU for a method the GPU does not batch).
    explicit_gpu: bool,
    track_events: bool,
}

#[pymethods]
impl PyBroadPhase {
    #[new]
    #[pyo3(signature = (method = "auto", backend = "auto", track_events = false, adapter = None))]
    fn new(
        py: Python<'_>,
        method: &str,
        backend: &str,
        track_events: bool,
        adapter: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let method = method_name(method)?;
        let explicit_gpu =
            backend.trim().eq_ignore_ascii_case("gpu") || adapter.is_some_and(|a| !a.is_none());
        let gpu::Target { backend, adapter } = gpu::target(py, backend, adapter)?;
        check_not_forked()?;
        let frames = py.detach(|| -> PyResult<Frames> {
            let mut broad = make(&method, backend, &adapter)?;
            let on_device = track_events && broad.track_events(true).map_err(to_py)?;
            Ok(Frames {
                broad,
                tracker: (track_events && !on_device).then(EventTracker::new),
                on_device,
                found: Vec::new(),
                lost: Vec::new(),
                tests: 0,
                frames: 0,
                chosen: None,
                worlds: None,
                with_worlds: None,
            })
        })?;
        Ok(PyBroadPhase {
            frames: Mutex::new(frames),
            method,
            backend,
            adapter,
            explicit_gpu,
            track_events,
        })
    }

    /// One frame: the touching pairs of these spheres, a (K, 2) uint32 array (i < j, rows
    /// sorted; with worlds, grouped by world and sorted inside each). The number of spheres
    /// may change between steps; events then compare indices.
    #[pyo3(signature = (centers, radii, world = None))]
    fn step<'py>(
        &self,
        py: Python<'py>,
        centers: &Bound<'py, PyAny>,
        radii: &Bound<'py, PyAny>,
        world: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        // A step that fails leaves no events behind, whatever fails (its input too): `found`
        // and `lost` read after a step refused for a NaN held the step before's events.
        py.detach(|| lock(&self.frames).forget_last_step());
        if let Some((spheres, ids)) = crate::worlds::batch_input(py, centers, radii, world)? {
            return self.world_step(py, spheres, ids);
        }
        let spheres = spheres(centers, radii)?;
        let pairs = interruptible(py, all_pairs(spheres.len()), || -> PyResult<Vec<Pair>> {
            // An empty frame runs as one sphere, which touches nothing: no pairs, and every
            // pair of the frame before lost, wherever the events are tracked.
            let empty = spheres.is_empty();
            let spheres = if empty {
                vec![Sphere::new(Vec3::ZERO, 0.0)]
            } else {
                spheres
            };
            check_spheres(&spheres)?;
            let mut frames = lock(&self.frames);
            same_kind(&frames, false)?;
            // A step that fails leaves no events behind (the next step's compare with the
            // last frame that succeeded).
            frames.found.clear();
            frames.lost.clear();
            let mut pairs = Vec::new();
            let stats = frames
                .broad
                .find_pairs(&spheres, Some(&mut pairs))
                .map_err(to_py)?;
            // The host's tracker keeps this frame only if Ctrl-C has not come by now.
            crate::interrupt::stop_if_interrupted()?;
            let events = if frames.on_device {
                Some(frames.broad.take_events().ok_or_else(|| {
                    PyRuntimeError::new_err("the backend returned no events for this frame")
                })?)
            } else if let Some(tracker) = frames.tracker.as_mut() {
                Some(tracker.update(copy_of(&pairs)?))
            } else {
                None
            };
            if let Some(events) = events {
                frames.found = events.found;
                frames.lost = events.lost;
            }
            frames.tests = if empty { 0 } else { stats.tests };
            frames.chosen = if empty { None } else { stats.chosen };
            frames.frames += 1;
            frames.with_worlds = Some(false);
            Ok(pairs)
        })?;
        Ok(pair_array(py, pairs))
    }

    /// The worlds of the last step with worlds and where each one's rows are: which="pairs"
    /// (the default, the step's result), "found" or "lost" (track_events=True). Returns
    /// (worlds, offsets): worlds (W,) uint32 ascending (SHARED last), offsets (W + 1,) uint64;
    /// world worlds[k] has rows offsets[k]:offsets[k + 1]. The events' worlds are those of
    /// either frame.
    #[pyo3(signature = (which = "pairs"))]
    fn world_groups<'py>(&self, py: Python<'py>, which: &str) -> PyResult<WorldRows<'py>> {
        let events = matches!(which, "found" | "lost");
        if !events && which != "pairs" {
            return Err(arg_error(
                "which",
                format!("{which:?}: \"pairs\", \"found\" or \"lost\""),
            ));
        }
        if events && !self.track_events {
            return Err(PyRuntimeError::new_err(
                "events are not tracked: make the broad phase with BroadPhase(..., track_events=True)",
            ));
        }
        let (worlds, offsets) = py.detach(|| {
            let frames = lock(&self.frames);
            let Some(w) = frames.worlds.as_ref() else {
                return Err(PyRuntimeError::new_err(
                    "no step with worlds yet: step(centers, radii, world=ids) or (B, N, 3) centers",
                ));
            };
            let groups = match which {
                "found" => &w.events.found,
                "lost" => &w.events.lost,
                _ => &w.pairs,
            };
            let offsets: Vec<u64> = groups.offsets().iter().map(|&o| o as u64).collect();
            Ok((groups.worlds().to_vec(), offsets))
        })?;
        Ok((worlds.into_pyarray(py), offsets.into_pyarray(py)))
    }

    /// The pairs that began touching in the last step (track_events=True only).
    #[getter]
    fn found<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        self.events(py, |f| &f.found)
    }

    /// The pairs that stopped touching in the last step (track_events=True only).
    #[getter]
    fn lost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        self.events(py, |f| &f.lost)
    }

    /// Sphere-sphere tests performed in the last step.
    #[getter]
    fn tests(&self, py: Python<'_>) -> u64 {
        py.detach(|| lock(&self.frames).tests)
    }

    /// method="auto": (method, reason) of the method that ran the last step (it chooses on the
    /// first step, when the number of spheres changes, every 32 steps and after a step whose
    /// tests far outgrew its choice's estimate; with
    /// track_events=True on the GPU, whose events are the device's, a new choice runs from the
    /// step after the one it was made on); None before the first step, after an empty one and
    /// for a named method.
    #[getter]
    fn choice(&self, py: Python<'_>) -> Option<(String, String)> {
        py.detach(|| {
            lock(&self.frames)
                .chosen
                .as_ref()
                .map(|c| (c.method.name().to_string(), c.reason.clone()))
        })
    }

    /// Steps done so far.
    #[getter]
    fn frames(&self, py: Python<'_>) -> u64 {
        py.detach(|| lock(&self.frames).frames)
    }

    #[getter]
    fn method(&self) -> &str {
        &self.method
    }

    #[getter]
    fn backend(&self) -> &str {
        self.backend.as_str()
    }

    fn __repr__(&self) -> String {
        format!(
            "BroadPhase(method='{}', backend='{}', track_events={})",
            self.method,
            self.backend.as_str(),
            if self.track_events { "True" } else { "False" }
        )
    }
}

impl PyBroadPhase {
    /// A step with worlds: the batch (made at the first such step) over `spheres`, `ids` one
    /// world id each; events per world from the host's tracker.
    fn world_step<'py>(
        &self,
        py: Python<'py>,
        spheres: Vec<Sphere>,
        ids: Vec<u32>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let (mut backend, mut adapter) = (self.backend, self.adapter.clone());
        if backend == Backend::Gpu && !crate::worlds::gpu_batches(&self.method) {
            if self.explicit_gpu {
                return Err(arg_error(
                    "method",
                    format!(
                        "{} does not run batches of worlds on the GPU (every sphere method and \
                         auto do; the peer crates run on the CPU only); use backend=\"cpu\"",
                        self.method
                    ),
                ));
            }
            (backend, adapter) = (Backend::Cpu, String::new());
        }
        let pairs = interruptible(py, all_pairs(spheres.len()), || -> PyResult<Vec<Pair>> {
            let mut guard = lock(&self.frames);
            let frames = &mut *guard;
            same_kind(frames, true)?;
            frames.found.clear();
            frames.lost.clear();
            if frames.worlds.is_none() {
                frames.worlds = Some(WorldFrames {
                    batch: crate::worlds::make(&self.method, backend, &adapter)?,
                    tracker: self.track_events.then(WorldEventTracker::new),
                    pairs: WorldPairs::new(),
                    events: WorldEvents::default(),
                });
            }
            let w = frames.worlds.as_mut().expect("made above");
            // The groups follow `found` and `lost`, emptied above, and `pairs`, which a failed
            // or interrupted step leaves empty (the tracker keeps the last good frame).
            w.events = WorldEvents::default();
            let stats = w
                .batch
                .find_pairs(&spheres, &ids, Some(&mut w.pairs))
                .map_err(|e| {
                    w.pairs = WorldPairs::new();
                    to_py(e)
                })?;
            // The tracker keeps this frame only if Ctrl-C has not come by now.
            crate::interrupt::stop_if_interrupted().inspect_err(|_| w.pairs = WorldPairs::new())?;
            if let Some(tracker) = w.tracker.as_mut() {
                w.events.clone_from(tracker.update(&w.pairs));
                frames.found = copy_of(w.events.found.pairs())?;
                frames.lost = copy_of(w.events.lost.pairs())?;
            }
            frames.tests = stats.tests;
            frames.chosen = None;
            frames.frames += 1;
            frames.with_worlds = Some(true);
            copy_of(w.pairs.pairs())
        })?;
        Ok(pair_array(py, pairs))
    }

    fn events<'py>(
        &self,
        py: Python<'py>,
        list: impl Fn(&Frames) -> &Vec<Pair> + Send + Sync,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        if !self.track_events {
            return Err(PyRuntimeError::new_err(
                "events are not tracked: make the broad phase with BroadPhase(..., track_events=True)",
            ));
        }
        let pairs = py.detach(|| copy_of(list(&lock(&self.frames))))?;
        Ok(pair_array(py, pairs))
    }
}

/// An error when a step's kind (with worlds or without) is not the first step's.
fn same_kind(frames: &Frames, with_worlds: bool) -> PyResult<()> {
    match frames.with_worlds {
        Some(before) if before != with_worlds => Err(arg_error(
            "world",
            if before {
                "this broad phase steps batches of worlds: give world= or (B, N, 3) centers \
                 every step (or make another BroadPhase)"
            } else {
                "this broad phase steps one scene: a step with world= or (B, N, 3) centers \
                 needs a BroadPhase of its own"
            },
        )),
        _ => Ok(()),
    }
}
