//! Adapter choice: the backends tried, the instance, the adapters listed.

use super::GpuOptions;
use crate::error::{Error, Result};

/// Backends tried by default: Vulkan, Metal, DX12 (and WebGPU). OpenGL is left out unless
/// [`GpuOptions::backends`] asks for it: its compute support is partial, and probing EGL on a
/// headless machine only prints noise.
pub(super) fn default_backends() -> wgpu::Backends {
    wgpu::Backends::PRIMARY
}

/// The instance over `backends`, with wgpu's flags of the build (validation in debug builds),
/// none read from the environment.
pub(super) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// Backend names a list may hold (wgpu ignores any other name, which leaves no backend and
/// reads as "no driver installed").
const BACKEND_NAMES: [&str; 9] = [
    "vulkan", "vk", "metal", "mtl", "dx12", "d3d12", "gl", "opengl", "webgpu",
];

/// The backends of a comma-separated list as `WGPU_BACKEND` holds it ([`GpuOptions::from_vars`]):
/// a name that is no backend is [`Error::Environment`] naming the variable, not an adapter
/// search that finds nothing.
pub(super) fn parse_backends(list: &str) -> Result<wgpu::Backends> {
    for name in list.split(',').map(|n| n.trim().to_ascii_lowercase()) {
        if !BACKEND_NAMES.contains(&name.as_str()) {
            return Err(Error::Environment(format!(
                "{}={list}: '{name}' is not a backend (vulkan, metal, dx12, gl, webgpu; \
                 comma-separated)",
                super::BACKEND_ENV
            )));
        }
    }
    Ok(wgpu::Backends::from_comma_list(list))
}

/// Every adapter wgpu can see on the backends of `options` ([`GpuOptions::backends`]), in
/// enumeration order (the index [`GpuOptions::adapter`] takes). None in a browser build, where
/// listing them would block the page (docs/design.md §8.5).
pub fn list_adapters(options: &GpuOptions) -> Vec<wgpu::AdapterInfo> {
    if super::block::refuse_in_browser("enumerate_adapters").is_err() {
        return Vec::new();
    }
    let backends = options.backends.unwrap_or_else(default_backends);
    let instance = instance(backends);
    super::block::block_on("enumerate_adapters", instance.enumerate_adapters(backends))
        .unwrap_or_default()
        .iter()
        .map(|a| a.get_info())
        .collect()
}

/// The index (as `--adapter` takes it) of the first adapter that is a GPU (a discrete one
/// first) rather than a CPU emulating one (lavapipe, SwiftShader; wgpu's `Other` too): where a caller that asks for "the
/// GPU if there is one" should run. `None` when there is none: no GPU driver, or only software
/// adapters, whose GPU paths are slower than the CPU's.
pub fn hardware_adapter(options: &GpuOptions) -> Option<usize> {
    let adapters = list_adapters(options);
    // A discrete GPU before an integrated or virtual one, as wgpu's high-performance choice.
    let first =
        |kinds: &[wgpu::DeviceType]| adapters.iter().position(|a| kinds.contains(&a.device_type));
    first(&[wgpu::DeviceType::DiscreteGpu]).or_else(|| {
        first(&[
            wgpu::DeviceType::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu,
        ])
    })
}
