//! GPU implementations (wgpu + WGSL). One module per stage; each has its WGSL file of the same
//! name in `shaders/`.

pub mod context;
pub mod radix_sort;
pub mod scan;

pub use context::{GpuContext, GpuOptions, PassTimer, list_adapters};
