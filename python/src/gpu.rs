//! Backends and adapters by name, and the GPU devices and pipelines kept between calls (opening
//! a device and compiling its pipelines costs far more than a call on a small scene).

use crate::errors::to_py;
use crate::input::arg_error;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use sweepfan::{Backend, GpuContext, GpuOptions};

/// `backend="cpu"` or `"gpu"`.
pub fn backend(name: &str) -> PyResult<Backend> {
    match name.trim().to_ascii_lowercase().as_str() {
        "cpu" => Ok(Backend::Cpu),
        "gpu" => Ok(Backend::Gpu),
        _ => Err(arg_error(
            "backend",
            format!("{name:?} is not a backend (cpu, gpu)"),
        )),
    }
}

/// `adapter=None`, an index into `sweepfan.adapters()` or part of an adapter's name; only with
/// the GPU backend. `None` (wgpu's default choice) is kept as the empty key.
pub fn adapter(backend: Backend, adapter: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let Some(adapter) = adapter.filter(|a| !a.is_none()) else {
        return Ok(String::new());
    };
    if backend != Backend::Gpu {
        return Err(arg_error("adapter", "only with backend=\"gpu\""));
    }
    if adapter.is_instance_of::<pyo3::types::PyBool>() {
        return Err(arg_error(
            "adapter",
            "expected None, an index or part of an adapter's name, not a bool",
        ));
    }
    if let Ok(index) = adapter.extract::<i64>() {
        if index < 0 {
            return Err(arg_error("adapter", format!("index {index} is negative")));
        }
        return Ok(index.to_string());
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
        ..Default::default()
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
                if let (Some(adapter), sweepfan::Error::Gpu(_)) = (gpu_adapter, &e) {
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
