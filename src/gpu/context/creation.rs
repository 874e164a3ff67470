//! Every object the library creates on a device, and every byte it moves between host and
//! device, counted (docs/design.md §6.9): the context makes them through these methods, so that
//! a frame's creations and traffic appear in every GPU row (`created_per_frame`,
//! `bytes_to_host_per_frame`, `bytes_from_host_per_frame`). `tests/suite/gpu_counters.rs`
//! fails on a creation under `src/gpu/` that bypasses them.

use super::GpuContext;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use wgpu::util::DeviceExt;

/// Running totals of a context (read by [`GpuContext::counts`]).
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub bind_groups: AtomicU64,
    pub buffers: AtomicU64,
    pub query_sets: AtomicU64,
    pub pipelines: AtomicU64,
    /// Bytes of mapped staging read by the host.
    pub bytes_to_host: AtomicU64,
    /// Bytes written by the host: `write_buffer` and buffers created with contents.
    pub bytes_from_host: AtomicU64,
}

impl GpuContext {
    pub fn create_bind_group(&self, desc: &wgpu::BindGroupDescriptor<'_>) -> wgpu::BindGroup {
        self.totals.bind_groups.fetch_add(1, Relaxed);
        self.device.create_bind_group(desc)
    }

    pub fn create_buffer(&self, desc: &wgpu::BufferDescriptor<'_>) -> wgpu::Buffer {
        self.totals.buffers.fetch_add(1, Relaxed);
        self.device.create_buffer(desc)
    }

    /// A buffer holding `desc.contents` from the start (counted as bytes from the host).
    pub fn create_buffer_init(&self, desc: &wgpu::util::BufferInitDescriptor<'_>) -> wgpu::Buffer {
        self.totals.buffers.fetch_add(1, Relaxed);
        self.totals
            .bytes_from_host
            .fetch_add(desc.contents.len() as u64, Relaxed);
        self.device.create_buffer_init(desc)
    }

    pub fn create_query_set(&self, desc: &wgpu::QuerySetDescriptor<'_>) -> wgpu::QuerySet {
        self.totals.query_sets.fetch_add(1, Relaxed);
        self.device.create_query_set(desc)
    }

    pub(super) fn create_compute_pipeline(
        &self,
        desc: &wgpu::ComputePipelineDescriptor<'_>,
    ) -> wgpu::ComputePipeline {
        self.totals.pipelines.fetch_add(1, Relaxed);
        self.device.create_compute_pipeline(desc)
    }

    /// `queue.write_buffer`, counted.
    pub fn write_buffer(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
        self.totals
            .bytes_from_host
            .fetch_add(data.len() as u64, Relaxed);
        self.queue.write_buffer(buffer, offset, data);
    }

    /// Counts `bytes` of a mapped staging buffer read by the host.
    pub(super) fn note_bytes_to_host(&self, bytes: u64) {
        self.totals.bytes_to_host.fetch_add(bytes, Relaxed);
    }
}
