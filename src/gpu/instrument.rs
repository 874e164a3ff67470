//! What a benchmark needs to measure the GPU stages, beside the API: per-pass device times
//! ([`PassTimer`]) and host steps ([`HostSteps`]), one read-back for several buffers
//! ([`Readback`], [`words`]), the device-traffic models of the sort and the frame
//! (docs/design.md §9.8), the compile report of every shader module on an adapter, and the
//! test data a benchmark puts on the device ([`storage_buffer`], [`write_buffer`]: counted in
//! [`GpuContext::counts`] as the library's own creations and writes are).
//!
//! These are measuring tools: their figures are models or timings, never results, and their
//! shape may change with the kernels they measure.

pub use super::compile_report::{CompileLimits, PeakRss, PipelineCompile, compile_report};
pub use super::readback::{Readback, words};
pub use super::shader::{Module, module_files};
pub use super::sort::radix_sort::{FILL_INVOCATIONS, plan_for};
pub use super::sort::radix_tiles::{
    bytes_per_pair as sort_bytes_per_pair, tile_keys as sort_tile_keys,
    unsupported as tiled_sort_unsupported, write_sectors_per_key,
};
pub use super::timer::{HostSteps, PassTimer};
pub use super::traffic::FLOOR_BYTES_PER_OBJECT;

use super::context::GpuContext;
use crate::error::Result;

/// A storage buffer of `bytes` on `ctx`'s device (at least 4), checked against its binding
/// limit, usable by every stage (copy source and destination): a benchmark's keys and values
/// for the [`RadixSort`](super::RadixSort), counted.
pub fn storage_buffer(ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
    ctx.storage_buffer(label, bytes)
}

/// Writes `data` into `buffer` at `offset` through `ctx`'s queue, counted as bytes from the
/// host.
pub fn write_buffer(ctx: &GpuContext, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
    ctx.write_buffer(buffer, offset, data);
}
