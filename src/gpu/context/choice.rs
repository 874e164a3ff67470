//! Adapter choice: the backends tried, the instance, the adapters listed, the environment
//! checked.

use crate::error::{Error, Result};

/// Backends tried by default: Vulkan, Metal, DX12 (and WebGPU). OpenGL is left out unless
/// WGPU_BACKEND asks for it: its compute support is partial, and probing EGL on a headless
/// machine only prints noise.
pub(super) fn backends() -> wgpu::Backends {
    wgpu::Backends::PRIMARY.with_env()
}

pub(super) fn instance() -> wgpu::Instance {
    // Respects WGPU_BACKEND (and the other WGPU_* variables) from the environment.
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends();
    wgpu::Instance::new(desc)
}

/// Backend names `WGPU_BACKEND` may list (wgpu ignores any other name, which leaves no backend
/// and reads as "no driver installed").
const BACKEND_NAMES: [&str; 9] = [
    "vulkan", "vk", "metal", "mtl", "dx12", "d3d12", "gl", "opengl", "webgpu",
];

/// Checks the environment variables wgpu reads: a `WGPU_BACKEND` naming no backend is an
/// error naming the variable, not an adapter search that finds nothing.
pub fn check_environment() -> Result<()> {
    let Ok(value) = std::env::var("WGPU_BACKEND") else {
        return Ok(());
    };
    for name in value.split(',').map(|n| n.trim().to_ascii_lowercase()) {
        if !BACKEND_NAMES.contains(&name.as_str()) {
            return Err(Error::Environment(format!(
                "WGPU_BACKEND={value}: '{name}' is not a backend (vulkan, metal, dx12, gl, \
                 webgpu; comma-separated)"
            )));
        }
    }
    Ok(())
}

/// Every adapter wgpu can see, in enumeration order (the index `--adapter` takes).
/// None in a browser build, where listing them would block the page (docs/design.md §8.5).
pub fn list_adapters() -> Vec<wgpu::AdapterInfo> {
    if super::block::refuse_in_browser("enumerate_adapters").is_err() {
        return Vec::new();
    }
    let instance = instance();
    super::block::block_on("enumerate_adapters", instance.enumerate_adapters(backends()))
        .unwrap_or_default()
        .iter()
        .map(|a| a.get_info())
        .collect()
}

/// The index (as `--adapter` takes it) of the first adapter that is a GPU (a discrete one
/// first) rather than a CPU emulating one (lavapipe, SwiftShader; wgpu's `Other` too): where a caller that asks for "the
/// GPU if there is one" should run. `None` when there is none: no GPU driver, or only software
/// adapters, whose GPU paths are slower than the CPU's.
pub fn hardware_adapter() -> Result<Option<usize>> {
    check_environment()?;
    let adapters = list_adapters();
    // A discrete GPU before an integrated or virtual one, as wgpu's high-performance choice.
    let first =
        |kinds: &[wgpu::DeviceType]| adapters.iter().position(|a| kinds.contains(&a.device_type));
    Ok(first(&[wgpu::DeviceType::DiscreteGpu]).or_else(|| {
        first(&[
            wgpu::DeviceType::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu,
        ])
    }))
}
