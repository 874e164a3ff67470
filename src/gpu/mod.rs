//! GPU implementations (wgpu + WGSL). One module per stage; each has its WGSL file of the same
//! name in `shaders/`.

pub mod aabb_sap;
pub mod box_pipeline;
pub mod broad_phase;
pub mod cascade;
pub mod context;
pub mod frame;
pub mod keys;
pub mod min_axis;
pub mod pairs;
pub mod radix_sort;
pub mod radix_sort_subgroup;
pub mod rotating;
pub mod sat;
pub mod scan;
pub mod sector;
pub mod sector_sphere;

pub use box_pipeline::{GpuBoxPipeline, Proxy};
pub use broad_phase::GpuBroadPhase;
pub use context::{GpuContext, GpuOptions, PassTimer, list_adapters};
