//! GPU implementations (wgpu + WGSL). One module per stage; each has its WGSL file of the same
//! name in `shaders/`.

pub mod context;
pub mod radix_sort;
pub mod rotating;
pub mod scan;
pub mod sector;
pub mod sector_sphere;

pub use context::{GpuContext, GpuOptions, PassTimer, list_adapters};
pub mod sat;
