//! Sizes and counts the GPU code is held to: the bytes one binding may hold (and a lowered
//! limit), buffer growth within it, what a size-limit error is, u32 counts, and 2D dispatch
//! grids (docs/design.md §9.4, §2.10); limits lowered for a run (`GpuContext::lower_limits`).

use super::GpuContext;
use crate::error::{Error, Result};

/// Whether `e` is a device size limit (a binding or a buffer too small for this frame): what
/// smaller parts overcome (`crate::partition`), unlike host memory or a device error. Read
/// from the error's kind ([`Exceeds::is_device_size`](crate::error::Exceeds::is_device_size)), not its text.
pub fn is_size_limit(e: &Error) -> bool {
    matches!(e, Error::TooLarge { exceeds, .. } if exceeds.is_device_size())
}

/// The smallest binding limit
/// [`GpuOptions::max_binding_bytes`](super::GpuOptions::max_binding_bytes) accepts: the fixed
/// tables of the kernels (histograms, scan blocks, parameter slots) need up to this much.
pub const MIN_BINDING_CAP: u64 = 1 << 16;

/// See [`GpuContext::dispatch_2d`](super::GpuContext::dispatch_2d).
pub fn dispatch_2d(groups: u32, max_per_dim: u32) -> (u32, u32) {
    if groups <= max_per_dim {
        (groups.max(1), 1)
    } else {
        let y = groups.div_ceil(max_per_dim);
        (groups.div_ceil(y), y)
    }
}

/// `n` as the u32 count the shaders index with, or [`Error::TooLarge`] naming `what` (never a
/// silent truncation).
pub(crate) fn count_u32(what: &str, n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| {
        Error::past_u32(
            n as u64,
            format!(
                "{n} {what}: the GPU kernels index with 32 bits, so at most {} fit",
                u32::MAX
            ),
        )
    })
}

/// Every storage buffer size is a multiple of this (the largest element any shader binds,
/// `vec4<f32>`; also wgpu's copy alignment).
pub const BINDING_ALIGN: u64 = 16;

/// The most bytes one binding is given on any backend: 2^31 - 16 (docs/design.md §9.4).
pub const MAX_BINDING_BYTES: u64 = (1 << 31) - BINDING_ALIGN;

/// The largest storage buffer one binding can hold under `limits` (docs/design.md §9.4): the
/// smaller of the binding and buffer limits, at most [`MAX_BINDING_BYTES`], rounded down to
/// [`BINDING_ALIGN`]. Rounded down because wgpu reports 2^31 - 1 on Vulkan and DX12, and a size
/// rounded *up* from that (every buffer size is a multiple of 4) would be refused. Clamped
/// because naga's buffer sizes and `arrayLength` are 32-bit while Metal may allow more than
/// 4 GiB per binding, and because some backends index bytes with signed 32-bit offsets: below
/// 2^31 nothing wraps on any backend.
pub fn max_binding_bytes_of(limits: &wgpu::Limits) -> u64 {
    let max = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
        .min(MAX_BINDING_BYTES);
    max - max % BINDING_ALIGN
}

/// `limits` with the storage-binding size lowered to `cap` (never raised): what
/// [`crate::gpu::GpuOptions::max_binding_bytes`] makes every size check see.
pub fn capped_binding(mut limits: wgpu::Limits, cap: u64) -> crate::error::Result<wgpu::Limits> {
    let min = MIN_BINDING_CAP;
    if cap < min {
        return Err(crate::error::Error::invalid_argument(
            "max_binding_bytes",
            format!(
                "a binding limit of {cap} bytes is below {min}, the least the kernels' fixed \
             tables need"
            ),
        ));
    }
    limits.max_storage_buffer_binding_size = limits.max_storage_buffer_binding_size.min(cap);
    Ok(limits)
}

/// The size a buffer that must hold `bytes` (a multiple of 4, at most `max`) is given: half
/// again for later growth, never past `max` (itself a multiple of [`BINDING_ALIGN`]).
pub fn grown_bytes(bytes: u64, max: u64) -> u64 {
    (bytes + bytes / 2).min(max).max(bytes).next_multiple_of(4)
}

impl GpuContext {
    /// Makes the stages plan for less than the device grants, as a smaller device would (a
    /// binding size, workgroups per dimension): `lower` edits a copy of [`Self::limits`], which
    /// replaces them only if no limit got better; otherwise [`Error::InvalidArgument`] names the first
    /// such limit. Tests reach a small device's paths (parts, 2-D dispatches) with small
    /// scenes this way; results are the same. (Feature `testing`.)
    #[cfg(any(test, feature = "testing"))]
    pub fn lower_limits(&mut self, lower: impl FnOnce(&mut wgpu::Limits)) -> Result<()> {
        let mut limits = self.limits.clone();
        lower(&mut limits);
        let mut raised = None;
        limits.check_limits_with_fail_fn(&self.limits, true, |name, wanted, granted| {
            raised = Some(format!(
                "{name} {wanted} is better than the device's {granted}"
            ));
        });
        match raised {
            Some(why) => Err(Error::invalid_argument(
                "lower",
                format!("lower_limits: {why}"),
            )),
            None => {
                self.limits = limits;
                Ok(())
            }
        }
    }
}
