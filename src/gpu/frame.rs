//! Plumbing shared by the broad-phase stages: the per-dispatch parameter block (`Params` in
//! `shaders/common.wgsl`), an arena of parameter slots in one uniform buffer (every dispatch of a
//! frame gets its own slot, written once before the submission), bind-group building and 2D
//! dispatch.

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use bytemuck::{Pod, Zeroable};

/// Workgroup size of every broad-phase kernel (`WG` in `common.wgsl`).
pub const WG: u32 = 256;

/// Mirrors `struct Params` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Params {
    pub n: u32,
    pub pad: u32,
    pub axis: u32,
    pub mode: u32,
    pub j: u32,
    pub k: u32,
    pub cap: u32,
    pub flags: u32,
    pub buckets: u32,
    pub _p: [u32; 3],
}

pub const FLAG_MARK: u32 = 1;
pub const FLAG_STORE: u32 = 2;

/// The WGSL prelude prepended to every broad-phase shader.
pub const COMMON_WGSL: &str = include_str!("../../shaders/common.wgsl");

/// Parameter slots of one frame. Slots are collected while encoding and uploaded with one
/// `write_buffer` before the submission, so each dispatch sees its own values.
pub struct ParamArena {
    buffer: wgpu::Buffer,
    stride: u64,
    capacity: usize,
    slots: Vec<u8>,
}

impl ParamArena {
    /// Room for `capacity` dispatches per frame.
    pub fn new(ctx: &GpuContext, capacity: usize) -> Self {
        let stride = (std::mem::size_of::<Params>() as u64)
            .next_multiple_of(ctx.limits.min_uniform_buffer_offset_alignment as u64);
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("broad-phase params"),
            size: stride * capacity as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            buffer,
            stride,
            capacity,
            slots: Vec::new(),
        }
    }

    pub fn reset(&mut self) {
        self.slots.clear();
    }

    /// Reserves a slot holding `p`; returns its byte offset.
    pub fn push(&mut self, p: Params) -> Result<u64> {
        let index = self.slots.len() as u64 / self.stride;
        if index as usize >= self.capacity {
            return Err(Error::TooLarge(format!(
                "a frame needs more than {} dispatches",
                self.capacity
            )));
        }
        let offset = index * self.stride;
        self.slots.extend_from_slice(bytemuck::bytes_of(&p));
        self.slots.resize(((index + 1) * self.stride) as usize, 0);
        Ok(offset)
    }

    pub fn binding(&self, offset: u64) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset,
            size: wgpu::BufferSize::new(std::mem::size_of::<Params>() as u64),
        })
    }

    /// Uploads the slots of this frame (call before submitting).
    pub fn flush(&self, ctx: &GpuContext) {
        if !self.slots.is_empty() {
            ctx.queue.write_buffer(&self.buffer, 0, &self.slots);
        }
    }
}

/// A bind group for `pipeline` (group 0) with exactly the bindings its entry point uses.
pub fn bind(
    ctx: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    entries: &[(u32, wgpu::BindingResource<'_>)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
        .iter()
        .map(|(binding, resource)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: resource.clone(),
        })
        .collect();
    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// Dispatches enough workgroups of [`WG`] threads for `threads` threads (2D when needed).
pub fn dispatch(ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>, threads: u64) {
    dispatch_groups(ctx, pass, threads.div_ceil(WG as u64));
}

pub fn dispatch_groups(ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>, groups: u64) {
    // n < 2^32 objects, so groups < 2^25 and fits (dispatch_2d keeps each dimension legal).
    let groups = groups.clamp(1, u32::MAX as u64) as u32;
    let (x, y) = ctx.dispatch_2d(groups);
    pass.dispatch_workgroups(x, y, 1);
}

/// Builds a compute module from the common prelude plus one stage's WGSL.
pub fn module(ctx: &GpuContext, label: &str, stage: &str) -> Result<wgpu::ShaderModule> {
    ctx.shader(label, &format!("{COMMON_WGSL}\n{stage}"))
}

/// Opens a compute pass timed as `label` (when the device has timestamps).
pub fn begin<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    timer: &mut crate::gpu::context::PassTimer,
    label: &'static str,
) -> wgpu::ComputePass<'e> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: timer.pass(label),
    })
}
