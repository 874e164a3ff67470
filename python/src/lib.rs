//! The Python package `sweepfan` (docs/design.md §8.4): NumPy arrays in, touching pairs and
//! frame events out, on the CPU or the GPU, over the library's public API. Each argument is
//! read in Rust ([`input`]), the work runs with the interpreter released, and pair lists go back
//! as NumPy arrays that own the library's memory ([`output`]).

mod boxes;
mod contacts;
mod errors;
mod events;
mod gpu;
mod input;
mod interrupt;
mod output;
mod shapes;
mod spheres;
mod worlds;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sweepfan::Method;

/// Every GPU adapter wgpu sees, in the order `adapter=` indexes them (what `sweepfan info`
/// lists): dicts with index, name, device_type, backend, driver, driver_info, vendor, device.
/// An empty list when no GPU driver is installed.
#[pyfunction]
fn adapters(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let options = gpu::env_options()?;
    let infos = py.detach(|| sweepfan::gpu::list_adapters(&options));
    infos
        .iter()
        .enumerate()
        .map(|(index, a)| {
            let d = PyDict::new(py);
            d.set_item("index", index)?;
            d.set_item("name", &a.name)?;
            d.set_item("device_type", format!("{:?}", a.device_type))?;
            d.set_item("backend", format!("{:?}", a.backend))?;
            d.set_item("driver", &a.driver)?;
            d.set_item("driver_info", &a.driver_info)?;
            d.set_item("vendor", a.vendor)?;
            d.set_item("device", a.device)?;
            Ok(d)
        })
        .collect()
}

/// What backend="auto" (every function's default) runs on: "gpu" when an adapter is a hardware
/// GPU (the first in adapters() order), else "cpu" (no GPU driver, or only a software adapter
/// such as lavapipe, on which the GPU paths are slower than the CPU's).
#[pyfunction]
fn default_backend(py: Python<'_>) -> PyResult<&'static str> {
    Ok(gpu::default_backend(py)?.backend.as_str())
}

/// Drops every device, pipeline and buffer the package keeps between calls (each is made
/// again on next use): frees their memory. `BroadPhase` objects keep their own.
#[pyfunction]
fn clear_caches(py: Python<'_>) {
    py.detach(|| {
        spheres::PHASES.clear();
        worlds::WORLD_BATCHES.clear();
        shapes::GPU_BOXES.clear();
        contacts::GPU_CONTACTS.clear();
        gpu::clear_contexts();
    })
}

#[pymodule]
fn _sweepfan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let mut methods: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    methods.push(sweepfan::registry::AUTO);
    if cfg!(feature = "peers") {
        methods.extend(sweepfan::registry::PEER_NAMES);
    }
    m.add("METHODS", pyo3::types::PyTuple::new(m.py(), methods)?)?;
    m.add("BACKENDS", ("auto", "cpu", "gpu"))?;
    m.add(
        "SoftwareAdapterWarning",
        m.py().get_type::<gpu::SoftwareAdapterWarning>(),
    )?;
    m.add_function(wrap_pyfunction!(spheres::sphere_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(spheres::choose_method, m)?)?;
    m.add_function(wrap_pyfunction!(worlds::world_pairs, m)?)?;
    m.add("SHARED", sweepfan::SHARED)?;
    m.add_function(wrap_pyfunction!(shapes::obb_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(shapes::polygon_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(contacts::sphere_contacts, m)?)?;
    m.add_function(wrap_pyfunction!(contacts::obb_contacts, m)?)?;
    m.add_function(wrap_pyfunction!(contacts::polygon_contacts, m)?)?;
    m.add_function(wrap_pyfunction!(adapters, m)?)?;
    m.add_function(wrap_pyfunction!(default_backend, m)?)?;
    m.add_function(wrap_pyfunction!(clear_caches, m)?)?;
    m.add_class::<spheres::PyBroadPhase>()?;
    m.add_class::<boxes::PyBoxBroadPhase>()?;
    m.add_class::<events::PyEventTracker>()?;
    Ok(())
}
