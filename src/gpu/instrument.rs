//! What a benchmark needs to measure the GPU stages, beside the API: per-pass device times
//! ([`PassTimer`]) and host steps ([`HostSteps`]), one read-back for several buffers
//! ([`Readback`], [`words`]), the device-traffic models of the sort and the frame
//! (docs/design.md §9.8), and the compile report of every shader module on an adapter.
//!
//! These are measuring tools: their figures are models or timings, never results, and their
//! shape may change with the kernels they measure.

pub use super::compile_report::{CompileLimits, PipelineCompile, compile_report};
pub use super::readback::{Readback, words};
pub use super::shader::{Module, module_files};
pub use super::sort::radix_sort::{FILL_INVOCATIONS, plan_for};
pub use super::sort::radix_tiles::{
    bytes_per_pair as sort_bytes_per_pair, tile_keys as sort_tile_keys,
    unsupported as tiled_sort_unsupported, write_sectors_per_key,
};
pub use super::timer::{HostSteps, PassTimer};
pub use super::traffic::FLOOR_BYTES_PER_OBJECT;
