//! Backends and adapters by name, and the GPU devices and pipelines kept between calls (opening
//! a device and compiling its pipelines costs far more than a call on a small scene).

use crate::errors::to_py;
use crate::input::arg_error;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use sweepfan::{Backend, GpuContext, GpuOptions};

pyo3::create_exception!(
    sweepfan,
    SoftwareAdapterWarning,
    pyo3::exceptions::PyRuntimeWarning,
    "backend=\"gpu\" named an adapter that is a CPU emulating a GPU (lavapipe, SwiftShader): \
     exact, but usually slower than backend=\"cpu\"; backend=\"auto\" (the default) would run \
     on the CPU."
);

/// Where a call runs: the backend, and with the GPU the adapter key ([`context`]'s: empty for
/// wgpu's default adapter, else an index or part of a name).
#[derive(Clone, Debug)]
pub struct Target {
    pub backend: Backend,
    pub adapter: String,
}

/// The GPU options the process's environment asks for (`WGPU_BACKEND`,
/// `SWEEPFAN_EXPECT_ADAPTER`, `SWEEPFAN_SLOPPY_MATH`): the library reads no variable itself,
/// the module maps them, as the `sweepfan` tool does.
pub fn env_options() -> PyResult<GpuOptions> {
    GpuOptions::from_vars(|name| std::env::var(name).ok()).map_err(to_py)
}

/// The first hardware GPU's index, looked for once per process (`None`: the CPU).
fn hardware_gpu() -> PyResult<Option<usize>> {
    static FOUND: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    if let Some(found) = FOUND.get() {
        return Ok(*found);
    }
    let found = sweepfan::gpu::hardware_adapter(&env_options()?);
    Ok(*FOUND.get_or_init(|| found))
}

/// What `backend="auto"` runs on: `"gpu"` when an adapter is a hardware GPU (the first such,
/// by `adapters()` index), else `"cpu"` (no GPU driver, or only a software adapter, on which
/// the GPU paths are slower than the CPU's).
pub fn default_backend(py: Python<'_>) -> PyResult<Target> {
    Ok(match py.detach(hardware_gpu)? {
        Some(index) => Target {
            backend: Backend::Gpu,
            adapter: index.to_string(),
        },
        None => Target {
            backend: Backend::Cpu,
            adapter: String::new(),
        },
    })
}

/// `backend=` and `adapter=` as the functions take them: `"auto"` (the default: a hardware GPU
/// when there is one, else the CPU; with an adapter named, that adapter), `"cpu"` or `"gpu"`.
/// A GPU named explicitly that is a software adapter gives a [`SoftwareAdapterWarning`].
pub fn target(
    py: Python<'_>,
    backend: &str,
    adapter: Option<&Bound<'_, PyAny>>,
) -> PyResult<Target> {
    // Before any adapter is listed or opened: in a forked child that would wait forever.
    crate::errors::check_not_forked()?;
    let lower = backend.trim().to_ascii_lowercase();
    let named = match lower.as_str() {
        "auto" => {
            if adapter.is_none_or(|a| a.is_none()) {
                return default_backend(py);
            }
            Backend::Gpu
        }
        "cpu" => Backend::Cpu,
        "gpu" => Backend::Gpu,
        _ => {
            return Err(arg_error(
                "backend",
                format!(
                    "{} is not a backend (auto, cpu, gpu)",
                    sweepfan::error::shown(backend)
                ),
            ));
        }
    };
    let adapter = adapter_key(named, adapter)?;
    if named == Backend::Gpu {
        let ctx = py.detach(|| context(&adapter))?;
        if ctx.is_software() {
            PyErr::warn(
                py,
                &py.get_type::<SoftwareAdapterWarning>(),
                &std::ffi::CString::new(format!(
                    "adapter '{}' is a software adapter (a CPU emulating a GPU): pairs are \
                     exact, but usually slower than backend=\"cpu\"; backend=\"auto\" runs \
                     on the CPU here",
                    sweepfan::error::shown(&ctx.info().name)
                ))
                .unwrap_or_default(),
                1,
            )?;
        }
    }
    Ok(Target {
        backend: named,
        adapter,
    })
}

/// Declares a module function of shapes given as arrays (`obb_pairs`, `polygon_pairs` and the
/// contact functions, whose signatures differ only in the parts named here; pyo3 needs each
/// written out): `$name(<shape arguments>, *, [pairs=None,] backend=<default>, adapter=None)`,
/// each array any object NumPy reads. Its body runs with `backend` and `adapter` resolved by
/// [`target`] (which also refuses a forked process) into the two names after the signature.
///
/// ```ignore
/// shape_function! {
///     /// The docstring.
///     fn polygon_contacts(py, vertices, offsets; pairs) -> PyDict, backend = "cpu"
///     |backend, adapter| { ... }
/// }
/// ```
macro_rules! shape_function {
    (
        $(#[doc = $doc:tt])*
        fn $name:ident($py:ident, $($shape:ident),+ $(; $pairs:ident)?) -> $ret:ty,
            backend = $default:tt
        |$backend:ident, $adapter:ident| $body:block
    ) => {
        $(#[doc = $doc])*
        #[pyo3::pyfunction]
        #[pyo3(signature = (
            $($shape),+, * $(, $pairs = None)?, backend = $default, adapter = None
        ))]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<'py>(
            $py: pyo3::Python<'py>,
            $($shape: &pyo3::Bound<'py, pyo3::PyAny>,)+
            $($pairs: Option<&pyo3::Bound<'py, pyo3::PyAny>>,)?
            backend: &str,
            adapter: Option<&pyo3::Bound<'py, pyo3::PyAny>>,
        ) -> pyo3::PyResult<pyo3::Bound<'py, $ret>> {
            let crate::gpu::Target {
                backend: $backend,
                adapter: $adapter,
            } = crate::gpu::target($py, backend, adapter)?;
            $body
        }
    };
}
pub(crate) use shape_function;

/// `adapter=None`, an index into `sweepfan.adapters()` or part of an adapter's name; only with
/// the GPU backend. `None` (wgpu's default choice) is kept as the empty key.
fn adapter_key(backend: Backend, adapter: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let Some(adapter) = adapter.filter(|a| !a.is_none()) else {
        return Ok(String::new());
    };
    if backend != Backend::Gpu {
        return Err(arg_error(
            "adapter",
            "only with backend=\"gpu\" or \"auto\"",
        ));
    }
    if adapter.is_instance_of::<pyo3::types::PyBool>() {
        return Err(arg_error(
            "adapter",
            "expected None, an index or part of an adapter's name, not a bool",
        ));
    }
    // An index: a Python int, or any integer that says so (`__index__`: NumPy's int64).
    let index = if adapter.is_instance_of::<pyo3::types::PyInt>() {
        Some(adapter.clone())
    } else if !adapter.is_instance_of::<pyo3::types::PyString>() && adapter.hasattr("__index__")? {
        let not_index = |_| {
            arg_error(
                "adapter",
                "expected None, an index or part of an adapter's name",
            )
        };
        Some(adapter.call_method0("__index__").map_err(not_index)?)
    } else {
        None
    };
    if let Some(adapter) = index {
        return match adapter.extract::<i64>() {
            Ok(index) if index < 0 => {
                Err(arg_error("adapter", format!("index {index} is negative")))
            }
            Ok(index) => Ok(index.to_string()),
            // An int past 64 bits: the right type, out of range.
            Err(_) => Err(arg_error(
                "adapter",
                format!(
                    "index {} is out of range (sweepfan.adapters() lists the indices)",
                    adapter.str()?
                ),
            )),
        };
    }
    match adapter.extract::<String>() {
        Ok(name) if !name.trim().is_empty() => Ok(name),
        Ok(_) => Err(arg_error("adapter", "an empty name")),
        Err(_) => Err(arg_error(
            "adapter",
            "expected None, an index or part of an adapter's name",
        )),
    }
}

/// A lock that a panic elsewhere has not made unusable (what it guards is rebuilt on error).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

static CONTEXTS: Mutex<Vec<(String, Arc<GpuContext>)>> = Mutex::new(Vec::new());

/// The device for `adapter` (the key [`adapter`] returns), opened once per process.
pub fn context(adapter: &str) -> PyResult<Arc<GpuContext>> {
    let mut contexts = lock(&CONTEXTS);
    if let Some((_, ctx)) = contexts.iter().find(|(key, _)| key == adapter) {
        return Ok(ctx.clone());
    }
    let options = GpuOptions {
        adapter: (!adapter.is_empty()).then(|| adapter.to_string()),
        ..env_options()?
    };
    let ctx = Arc::new(GpuContext::new(&options).map_err(to_py)?);
    contexts.push((adapter.to_string(), ctx.clone()));
    Ok(ctx)
}

/// Forgets the device of `adapter` (after a device error: the next call opens it again).
pub fn forget_context(adapter: &str) {
    lock(&CONTEXTS).retain(|(key, _)| key != adapter);
}

/// Drops every kept device, broad phase and pipeline (`sweepfan.clear_caches()`).
pub fn clear_contexts() {
    lock(&CONTEXTS).clear();
}

/// One kept item: made on first use, dropped after a failed call.
type Slot<T> = Arc<Mutex<Option<T>>>;

/// Items kept per key (backend, adapter, method): built on first use, reused after. Calls on
/// one key are serialised; different keys run at once (the map is locked only to find the
/// slot). A call that fails drops its item, so a device error is not carried to the next call;
/// on the GPU it also forgets the device ([`forget_context`]).
pub struct Cache<T> {
    items: Mutex<HashMap<String, Slot<T>>>,
}

impl<T> Cache<T> {
    pub fn new() -> Self {
        Cache {
            items: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `f` on the item for `key`, made by `make` when there is none. `gpu_adapter`: the
    /// adapter key when the item lives on a GPU.
    pub fn with<R>(
        &self,
        key: String,
        gpu_adapter: Option<&str>,
        make: impl FnOnce() -> PyResult<T>,
        f: impl FnOnce(&mut T) -> sweepfan::Result<R>,
    ) -> PyResult<R> {
        let slot = lock(&self.items).entry(key).or_default().clone();
        let mut item = lock(&slot);
        let made = match item.take() {
            Some(made) => made,
            None => make()?,
        };
        let made = item.insert(made);
        match f(made) {
            Ok(r) => Ok(r),
            Err(e) => {
                *item = None;
                if let (Some(adapter), sweepfan::Error::Gpu { .. }) = (gpu_adapter, &e) {
                    forget_context(adapter);
                }
                Err(to_py(e))
            }
        }
    }

    pub fn clear(&self) {
        lock(&self.items).clear();
    }
}
