//! Every object the library creates on a device, and every byte it moves between host and
//! device, counted (docs/design.md §9.16): the context makes them through these methods, so that
//! a frame's creations and traffic appear in every GPU row (`created_per_frame`,
//! `bytes_to_host_per_frame`, `bytes_from_host_per_frame`), and so do its compute passes. `cli/tests/suite/gpu_counters.rs`
//! fails on a creation under `src/gpu/` that bypasses them.

use super::GpuContext;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use wgpu::util::DeviceExt;

/// What a bind group of buffers is made of: the pipeline (group 0) and each binding's buffer
/// range.
type BindKey = (
    wgpu::ComputePipeline,
    Vec<(u32, wgpu::Buffer, u64, Option<wgpu::BufferSize>)>,
);

/// Most bind groups kept: past it, those not used in this frame are dropped at once.
const MAX_KEPT: usize = 4096;

/// Bind groups kept across frames (docs/design.md §9.16), each with the last frame that used
/// it. A bind group holds its buffers alive, so groups are kept only inside frames
/// ([`GpuContext::frame`]: the pipelines that run every frame), and one that three frames did
/// not use (a list replaced by a larger one, a method no longer run) is dropped when the next
/// frame starts, and the memory it held with it. One-shot work (a sort of the caller's
/// buffers, a self-test) makes its groups and lets them go.
#[derive(Default)]
pub(super) struct BindGroups {
    kept: HashMap<BindKey, (wgpu::BindGroup, u64)>,
    frame: u64,
    /// Frames open ([`FrameScope`]s alive): groups are kept only while one is.
    open: u32,
}

/// A frame of a pipeline that runs every frame ([`GpuContext::frame`]); nested frames (a box
/// frame's sphere broad phase, the parts of a frame) are part of the outermost one.
pub struct FrameScope<'a> {
    ctx: &'a GpuContext,
}

impl Drop for FrameScope<'_> {
    fn drop(&mut self) {
        let mut cache = self
            .ctx
            .bind_groups
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache.open = cache.open.saturating_sub(1);
    }
}

/// Running totals of a context (read by [`GpuContext::counts`]).
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub bind_groups: AtomicU64,
    pub buffers: AtomicU64,
    pub query_sets: AtomicU64,
    pub pipelines: AtomicU64,
    /// Bytes of mapped staging read by the host.
    pub bytes_to_host: AtomicU64,
    /// Bytes written by the host: `write_buffer`, buffers created with contents, and the kept
    /// upload buffer (`gpu::upload`).
    pub bytes_from_host: AtomicU64,
    /// Compute passes opened ([`GpuContext::compute_pass`]).
    pub compute_passes: AtomicU64,
}

impl GpuContext {
    /// Opens a compute pass on `encoder`, counted (docs/design.md §9.16): every pass of the
    /// library opens here, so rows show passes per frame beside dispatches.
    pub(crate) fn compute_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        desc: &wgpu::ComputePassDescriptor<'_>,
    ) -> wgpu::ComputePass<'e> {
        self.totals.compute_passes.fetch_add(1, Relaxed);
        encoder.begin_compute_pass(desc)
    }

    /// Records one dispatch into an open pass: `pipeline`, `group` as bind group 0, `groups`
    /// workgroups (x, y, z), counted ([`GpuContext::note_dispatch`]).
    pub(crate) fn dispatch_in(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: [u32; 3],
    ) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        self.note_dispatch();
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
    }

    /// A compute pass of one dispatch ([`GpuContext::compute_pass`], then
    /// [`GpuContext::dispatch_in`]), timed when `timestamp_writes` says so.
    pub(crate) fn dispatch_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: [u32; 3],
    ) {
        let mut pass = self.compute_pass(
            encoder,
            &wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes,
            },
        );
        self.dispatch_in(&mut pass, pipeline, group, groups);
    }

    /// A kernel sized on the device: the pass of `prepare` (label, pipeline, and the buffers of
    /// its bind group 0; one workgroup, untimed), which writes the workgroup counts `[x, y, z]`
    /// at the start of `args`, then a pass of `kernel` (the same) dispatched indirectly by them,
    /// timed when `timestamp_writes` says so. The prepare dispatch is counted
    /// ([`GpuContext::note_dispatch`]), the indirect one is not.
    pub(crate) fn dispatch_prepared(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        prepare: (&str, &wgpu::ComputePipeline, &[(u32, &wgpu::Buffer)]),
        kernel: (&str, &wgpu::ComputePipeline, &[(u32, &wgpu::Buffer)]),
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
        args: &wgpu::Buffer,
    ) {
        let (label, pipeline, buffers) = prepare;
        let group = self.bind_buffers(label, pipeline, buffers);
        self.dispatch_pass(encoder, label, None, pipeline, &group, [1, 1, 1]);
        let (label, pipeline, buffers) = kernel;
        let group = self.bind_buffers(label, pipeline, buffers);
        let mut pass = self.compute_pass(
            encoder,
            &wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes,
            },
        );
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups_indirect(args, 0);
    }

    /// One dispatch ([`GpuContext::dispatch_in`]) in a pass and an encoder of its own,
    /// submitted: a test's kernel, run once.
    #[cfg(test)]
    pub(crate) fn submit_dispatch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: [u32; 3],
    ) {
        let mut enc = self.device.create_command_encoder(&Default::default());
        self.dispatch_in(
            &mut self.compute_pass(&mut enc, &Default::default()),
            pipeline,
            group,
            groups,
        );
        self.submit(enc);
    }

    /// The bind group of buffer `entries` for group 0 of `pipeline`: made on first use, then
    /// the same one while every frame uses it (no creation per frame once sizes are stable).
    pub(crate) fn bind_group_for(
        &self,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        entries: &[wgpu::BindGroupEntry<'_>],
    ) -> wgpu::BindGroup {
        let buffers: Option<Vec<_>> = entries
            .iter()
            .map(|e| match &e.resource {
                wgpu::BindingResource::Buffer(b) => {
                    Some((e.binding, b.buffer.clone(), b.offset, b.size))
                }
                _ => None,
            })
            .collect();
        let make = || {
            self.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout: &pipeline.get_bind_group_layout(0),
                entries,
            })
        };
        let Some(buffers) = buffers else {
            return make();
        };
        let key = (pipeline.clone(), buffers);
        let mut cache = self.bind_groups.lock().unwrap_or_else(|p| p.into_inner());
        if cache.open == 0 {
            return make();
        }
        let frame = cache.frame;
        if let Some((group, used)) = cache.kept.get_mut(&key) {
            *used = frame;
            return group.clone();
        }
        if cache.kept.len() >= MAX_KEPT {
            cache.kept.retain(|_, (_, used)| *used == frame);
            if cache.kept.len() >= MAX_KEPT {
                cache.kept.clear();
            }
        }
        let group = make();
        cache.kept.insert(key, (group.clone(), frame));
        group
    }

    /// A bind group of whole buffers, `(binding, buffer)`, for group 0 of `pipeline`.
    pub(crate) fn bind_buffers(
        &self,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        self.bind_group_for(label, pipeline, &entries)
    }

    /// Starts a frame of a pipeline that runs every frame, until the scope drops: bind groups
    /// made inside are kept across frames. The outermost frame drops the groups that the last
    /// three frames did not use (a group of lists that alternate between frames is used every
    /// other frame).
    pub fn frame(&self) -> FrameScope<'_> {
        let mut cache = self.bind_groups.lock().unwrap_or_else(|p| p.into_inner());
        if cache.open == 0 {
            cache.frame += 1;
            let frame = cache.frame;
            cache.kept.retain(|_, (_, used)| *used + 3 > frame);
        }
        cache.open += 1;
        FrameScope { ctx: self }
    }

    /// Records a validation error outside any error scope, as a caller's bad command or a
    /// driver fault would: a buffer both mappable and storage (refused without
    /// `MAPPABLE_PRIMARY_BUFFERS`, which the context never enables). The next wait reports it.
    /// Keep the buffer returned until the error is seen. (Feature `testing`: the suites check
    /// that failures stay local, docs/design.md §9.7.)
    #[cfg(any(test, feature = "testing"))]
    pub fn inject_fault(&self) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("injected fault"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    }

    /// Bind groups kept now (feature `testing`: the suites check the cache's reuse).
    #[cfg(any(test, feature = "testing"))]
    pub fn kept_bind_groups(&self) -> usize {
        self.bind_groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .kept
            .len()
    }

    /// Runs `work`, sweepfan's own on the device, inside error scopes when the device is the
    /// caller's ([`GpuContext::from_device`]): what they catch is recorded for
    /// [`GpuContext::check`], as the handler of a device sweepfan made records it, and never
    /// reaches the caller's handler.
    pub(crate) fn captured<T>(&self, work: impl FnOnce() -> T) -> T {
        if !self.scoped {
            return work();
        }
        let filters = [
            wgpu::ErrorFilter::Validation,
            wgpu::ErrorFilter::OutOfMemory,
            wgpu::ErrorFilter::Internal,
        ];
        let (value, error) = super::block::caught(&self.device, &filters, work);
        if let Some(e) = error {
            let mut slot = self.errors.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| super::device_error(&self.info.name, e));
        }
        value
    }

    /// Finishes `enc` and submits it to the queue (its errors captured on a caller's device).
    pub(crate) fn submit(&self, enc: wgpu::CommandEncoder) -> wgpu::SubmissionIndex {
        self.captured(|| self.queue.submit([enc.finish()]))
    }

    /// A bind group (counted).
    pub(crate) fn create_bind_group(
        &self,
        desc: &wgpu::BindGroupDescriptor<'_>,
    ) -> wgpu::BindGroup {
        self.counted(&self.totals.bind_groups, || {
            self.device.create_bind_group(desc)
        })
    }

    /// A buffer (counted). The device running out of memory for it is an error here, at once
    /// ([`Error::TooLarge`](crate::Error::TooLarge)), never a buffer kept: an invalid buffer
    /// kept in a scratch slot made every later frame of the broad phase fail, after the memory
    /// had come back. (Other errors are captured as any other work's, for
    /// [`GpuContext::check`]; in a browser the scope is not pushed, docs/design.md §9.14.)
    pub(crate) fn create_buffer(
        &self,
        desc: &wgpu::BufferDescriptor<'_>,
    ) -> crate::error::Result<wgpu::Buffer> {
        let (buffer, error) = self.counted(&self.totals.buffers, || {
            super::block::caught(&self.device, &[wgpu::ErrorFilter::OutOfMemory], || {
                self.device.create_buffer(desc)
            })
        });
        match error {
            Some(e) => Err(super::device_error(&self.info.name, e)),
            None => Ok(buffer),
        }
    }

    /// A buffer holding `desc.contents` from the start (counted as bytes from the host).
    pub(crate) fn create_buffer_init(
        &self,
        desc: &wgpu::util::BufferInitDescriptor<'_>,
    ) -> wgpu::Buffer {
        self.note_bytes_from_host(desc.contents.len() as u64);
        self.counted(&self.totals.buffers, || {
            self.device.create_buffer_init(desc)
        })
    }

    /// A query set (counted).
    pub(crate) fn create_query_set(&self, desc: &wgpu::QuerySetDescriptor<'_>) -> wgpu::QuerySet {
        self.counted(&self.totals.query_sets, || {
            self.device.create_query_set(desc)
        })
    }

    /// One more in `counter`, then `make`'s object with its errors [captured](Self::captured).
    fn counted<T>(&self, counter: &AtomicU64, make: impl FnOnce() -> T) -> T {
        counter.fetch_add(1, Relaxed);
        self.captured(make)
    }

    pub(super) fn create_compute_pipeline(
        &self,
        desc: &wgpu::ComputePipelineDescriptor<'_>,
    ) -> wgpu::ComputePipeline {
        self.totals.pipelines.fetch_add(1, Relaxed);
        self.device.create_compute_pipeline(desc)
    }

    /// `queue.write_buffer`, counted.
    pub(crate) fn write_buffer(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) {
        self.note_bytes_from_host(data.len() as u64);
        self.captured(|| self.queue.write_buffer(buffer, offset, data));
    }

    /// Counts `bytes` the host wrote into a mapped staging buffer (`gpu::upload`).
    pub(crate) fn note_bytes_from_host(&self, bytes: u64) {
        self.totals.bytes_from_host.fetch_add(bytes, Relaxed);
    }

    /// Counts `bytes` of a mapped staging buffer read by the host.
    pub(super) fn note_bytes_to_host(&self, bytes: u64) {
        self.totals.bytes_to_host.fetch_add(bytes, Relaxed);
    }
}
