//! `world_pairs`: many independent worlds in one call (docs/design.md §2.13), by a world id per
//! sphere or by a batch axis.

use crate::errors::to_py;
use crate::input::{arg_error, as_array};
use crate::interrupt::{all_pairs, interruptible};
use crate::output::pair_array;
use crate::spheres::{check_spheres, method_name, spheres};
use numpy::{IntoPyArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use std::sync::LazyLock;
use sweepfan::cpu::WorldBatch;
use sweepfan::gpu::GpuWorldBatch;
use sweepfan::{Backend, Method, WorldBroadPhase, WorldPairs, registry};

/// Batches kept between `world_pairs` calls, per backend, adapter and method (the GPU's device,
/// pipelines and buffers; the CPU's per-thread instances). `clear_caches()` drops them.
pub static WORLD_BATCHES: LazyLock<crate::gpu::Cache<Box<dyn WorldBroadPhase + Send>>> =
    LazyLock::new(crate::gpu::Cache::new);

/// The methods the GPU batches ([`GpuWorldBatch`]): every sphere method and auto; the peer
/// crates run on the CPU only.
pub(crate) fn gpu_batches(method: &str) -> bool {
    method == registry::AUTO || sweepfan::Method::parse(method).is_ok()
}

/// A batch of `method` on `backend`.
pub(crate) fn make(
    method: &str,
    backend: Backend,
    adapter: &str,
) -> PyResult<Box<dyn WorldBroadPhase + Send>> {
    let parsed = || {
        Method::parse(method)
            .map_err(|_| arg_error("method", format!("{method} does not run batches of worlds")))
    };
    Ok(match backend {
        Backend::Gpu => {
            let ctx = crate::gpu::context(adapter)?;
            let batch = if method == registry::AUTO {
                GpuWorldBatch::auto(ctx)
            } else {
                GpuWorldBatch::new(ctx, parsed()?)
            };
            Box::new(batch.map_err(|e| match e {
                e @ (sweepfan::Error::InvalidArgument {
                    argument: "backend" | "method" | "ctx",
                    ..
                }
                | sweepfan::Error::UnknownName { .. }) => arg_error("method", e.to_string()),
                other => crate::errors::to_py(other),
            })?)
        }
        Backend::Cpu if method == registry::AUTO => Box::new(WorldBatch::auto()),
        Backend::Cpu => Box::new(WorldBatch::new(parsed()?)),
    })
}

/// The world ids of `world` for `n` spheres: integers in [0, 2^32 - 1] (2^32 - 1 = SHARED, an
/// object of every world), one per sphere.
pub(crate) fn world_ids(world: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<u32>> {
    let outside = |row: usize, id: &dyn std::fmt::Display| {
        arg_error(
            "world",
            format!(
                "row {row}: world id {id} outside [0, 2^32 - 1] (2^32 - 1 is SHARED, an object \
                 of every world)"
            ),
        )
    };
    let wrong_length = |shape: &[usize]| {
        arg_error(
            "world",
            format!("one id per object expected: shape ({n},), got {shape:?}"),
        )
    };
    // A list or tuple of Python ints is read as given: NumPy would make ids past 2^63 beside
    // smaller ones float64, and the message would call them no integers.
    if let Some(items) = python_int_items("world", world)? {
        if items.len() != n {
            return Err(wrong_length(&[items.len()]));
        }
        return items
            .iter()
            .enumerate()
            .map(|(row, v)| match v.extract::<u32>() {
                Ok(id) => Ok(id),
                Err(_) => Err(outside(row, &v.str()?)),
            })
            .collect();
    }
    let array = as_array("world", world)?;
    // `[]` (a float64 array to NumPy): no ids, for no spheres.
    if n == 0 && array.shape() == [0] {
        return Ok(Vec::new());
    }
    if array.ndim() != 1 || array.len() != n {
        return Err(wrong_length(array.shape()));
    }
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind != "i" && kind != "u" {
        let dtype: String = array.getattr("dtype")?.str()?.extract()?;
        return Err(arg_error(
            "world",
            format!("integer world ids expected, got dtype {dtype}"),
        ));
    }
    // i128 holds every int64 and uint64 as it is (uint64 past int64 was clamped, and the
    // message named another id than the one given).
    let ids: Vec<i128> = if kind == "u" {
        let unsigned: Vec<u64> = array.call_method0("tolist")?.extract()?;
        unsigned.into_iter().map(i128::from).collect()
    } else {
        let signed: Vec<i64> = array.call_method0("tolist")?.extract()?;
        signed.into_iter().map(i128::from).collect()
    };
    ids.iter()
        .enumerate()
        .map(|(i, &v)| u32::try_from(v).map_err(|_| outside(i, &v)))
        .collect()
}

/// The items of a non-empty list or tuple whose every item is a Python int; `None` for
/// anything else; an error naming `arg` where one is a bool (NumPy would read True as 1).
fn python_int_items<'py>(
    arg: &str,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    use pyo3::types::{PyInt, PyList, PyTuple};
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    let items: Vec<Bound<'py, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    crate::input::refuse_booleans(arg, &items)?;
    let ints = items.iter().all(|v| v.is_instance_of::<PyInt>());
    Ok((!items.is_empty() && ints).then_some(items))
}

/// The touching pairs of many independent worlds in one call: pairs only between spheres of the
/// same world, and between any sphere and a shared one (world id SHARED = 2^32 - 1: ground,
/// walls).
///
/// centers: an (N, 3) array with world= (N,) integer ids, or a batch axis, (B, N, 3): B worlds
/// of N spheres (world b is rows b*N .. b*N + N - 1 of the flattened batch). radii: a scalar,
/// (N,) or, with a batch axis, (N,) (the same radii in every world), (B, N) or (B * N,).
/// method: "auto" (the default) or a name of METHODS. backend: "auto" (the default: a hardware
/// GPU when there is one and it batches the method, else the CPU), "cpu" or "gpu" (which
/// batches auto and every sphere method; the peer crates' names raise ValueError there);
/// adapter as sphere_pairs takes it. One call, one frame on the GPU: the world is a key of its
/// sort, not a loop.
///
/// Returns (pairs, worlds, offsets): pairs (K, 2) uint32 indices into the flattened spheres,
/// i < j, grouped by world, sorted inside each; worlds (W,) the world ids present, ascending,
/// SHARED last; offsets (W + 1,): world worlds[k] has pairs[offsets[k]:offsets[k + 1]]. With
/// count_only: (pairs, tests).
///
/// Raises ValueError for bad input, naming the argument (world ids of another length, negative,
/// not integers or past 2^32 - 1, ragged worlds).
#[pyfunction]
#[pyo3(signature = (centers, radii, world = None, *, method = "auto", backend = "auto", adapter = None, count_only = false))]
#[allow(clippy::too_many_arguments)]
pub fn world_pairs<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    radii: &Bound<'py, PyAny>,
    world: Option<&Bound<'py, PyAny>>,
    method: &str,
    backend: &str,
    adapter: Option<&Bound<'py, PyAny>>,
    count_only: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let method = method_name(method)?;
    let explicit =
        backend.trim().eq_ignore_ascii_case("gpu") || adapter.is_some_and(|a| !a.is_none());
    let crate::gpu::Target {
        mut backend,
        mut adapter,
    } = crate::gpu::target(py, backend, adapter)?;
    if backend == Backend::Gpu && !gpu_batches(&method) {
        if explicit {
            return Err(arg_error(
                "method",
                format!(
                    "{method} does not run batches of worlds on the GPU (every sphere method and \
                     auto do; the peer crates run on the CPU only); use backend=\"cpu\""
                ),
            ));
        }
        (backend, adapter) = (Backend::Cpu, String::new());
    }
    let Some((spheres, ids)) = batch_input(py, centers, radii, world)? else {
        return Err(arg_error(
            "world",
            "one id per sphere is needed with (N, 3) centers (or give centers a batch axis, \
             (B, N, 3))",
        ));
    };
    let key = format!("{}\u{0}{adapter}\u{0}{method}", backend.as_str());
    let on_gpu = (backend == Backend::Gpu).then_some(adapter.as_str());
    let run = |out: Option<&mut WorldPairs>| {
        WORLD_BATCHES.with(
            key.clone(),
            on_gpu,
            || make(&method, backend, &adapter),
            |batch| batch.find_pairs(&spheres, &ids, out),
        )
    };
    if count_only {
        let stats = interruptible(py, all_pairs(spheres.len()), || run(None))?;
        return Ok((stats.pairs, stats.tests).into_pyobject(py)?.into_any());
    }
    let out = interruptible(py, all_pairs(spheres.len()), || {
        let mut out = WorldPairs::new();
        run(Some(&mut out)).map(|_| out)
    })?;
    let (pairs, worlds, offsets) = out.into_parts();
    let offsets: Vec<u64> = offsets.into_iter().map(|o| o as u64).collect();
    Ok((
        pair_array(py, pairs),
        worlds.into_pyarray(py),
        offsets.into_pyarray(py),
    )
        .into_pyobject(py)?
        .into_any())
}

/// The spheres and world ids of a batch: `centers` (B, N, 3) (a batch axis; `world` must be
/// `None`) or (N, 3) with `world` one id per sphere; `None` for (N, 3) centers without `world`
/// (one scene, no worlds). Errors name the argument.
pub(crate) fn batch_input(
    py: Python<'_>,
    centers: &Bound<'_, PyAny>,
    radii: &Bound<'_, PyAny>,
    world: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(Vec<sweepfan::Sphere>, Vec<u32>)>> {
    let numpy = py.import("numpy")?;
    let batch_axis = match centers.cast::<numpy::PyUntypedArray>() {
        Ok(a) => a.ndim() == 3,
        Err(_) => {
            // A nested list: its depth decides, as NumPy reads it.
            let read = numpy.call_method1("asarray", (centers,)).map_err(|e| {
                arg_error(
                    "centers",
                    format!(
                        "cannot be read as an array ({e}); ragged worlds: concatenate them and \
                         pass world="
                    ),
                )
            })?;
            read.getattr("ndim")?.extract::<usize>()? == 3
        }
    };
    let (centers, radii, ids) = if batch_axis {
        if world.is_some() {
            return Err(arg_error(
                "world",
                "give either world= or a batch axis (B, N, 3) in centers, not both",
            ));
        }
        let array = as_array("centers", centers)?;
        let shape: Vec<usize> = array.getattr("shape")?.extract()?;
        let (b, n) = (shape[0], shape[1]);
        // The ids and spheres of B x N objects are allocated below: refused first where they
        // cannot fit (a MemoryError, not an abort).
        check_batch_size(b * n)?;
        if shape[2] != 3 {
            return Err(arg_error(
                "centers",
                format!("a batch axis is (B, N, 3), got {shape:?}"),
            ));
        }
        if b > u32::MAX as usize {
            return Err(arg_error("centers", format!("{b} worlds exceed 2^32 - 1")));
        }
        let flat = array.call_method1("reshape", ((b * n, 3),))?;
        let radii = batch_radii(py, radii, b, n)?;
        let ids: Vec<u32> = (0..b as u32)
            .flat_map(|w| std::iter::repeat_n(w, n))
            .collect();
        (flat, radii, ids)
    } else {
        let shape: Vec<usize> = as_array("centers", centers)?.getattr("shape")?.extract()?;
        // Neither (N, 3) nor (B, N, 3) (`[]`: no spheres): the centers are at fault, whatever
        // `world` says.
        if !(shape.len() == 2 && shape[1] == 3 || shape == [0]) {
            return Err(arg_error(
                "centers",
                format!(
                    "expected (N, 3) with world= or a batch axis (B, N, 3), got shape {shape:?}"
                ),
            ));
        }
        let Some(world) = world else {
            return Ok(None);
        };
        let spheres_n = shape[0];
        check_batch_size(spheres_n)?;
        let ids = world_ids(world, spheres_n)?;
        (centers.clone(), radii.clone(), ids)
    };
    let spheres = spheres(&centers, &radii)?;
    if spheres.len() != ids.len() {
        return Err(arg_error(
            "world",
            format!("{} ids for {} spheres", ids.len(), spheres.len()),
        ));
    }
    // An empty batch has no pairs (the library's rule, as an empty scene's in Python).
    check_spheres(&spheres)?;
    Ok(Some((spheres, ids)))
}

/// The radii of a batch of `b` worlds of `n` spheres as one per flattened row: a scalar,
/// `(n,)` (the same in every world), `(b, n)` or `(b * n,)`.
fn batch_radii<'py>(
    py: Python<'py>,
    radii: &Bound<'py, PyAny>,
    b: usize,
    n: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let array = as_array("radii", radii)?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    match shape.as_slice() {
        [] => Ok(radii.clone()),
        [len] if *len == b * n => Ok(array.into_any()),
        [len] if *len == n => Ok(py.import("numpy")?.call_method1("tile", (array, b))?),
        [rows, len] if (*rows, *len) == (b, n) => array.call_method1("reshape", (b * n,)),
        _ => Err(arg_error(
            "radii",
            format!(
                "with a batch axis ({b}, {n}, 3), radii are a scalar, ({n},) (the same in every \
                 world), ({b}, {n}) or ({},); got {shape:?}",
                b * n
            ),
        )),
    }
}

/// A batch of `n` objects fits the memory a call may use (none: an empty batch, no pairs).
fn check_batch_size(n: usize) -> PyResult<()> {
    if n == 0 {
        return Ok(());
    }
    crate::interrupt::limits()
        .run(|| sweepfan::broadphase::limits::check_scene_size(n))
        .map_err(to_py)
}
