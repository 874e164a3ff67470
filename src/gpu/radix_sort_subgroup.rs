//! The subgroup scatter of [`crate::gpu::radix_sort::RadixSort`] (warp-level multisplit, see
//! `shaders/radix_sort_subgroup.wgsl`): a few barriers per block instead of three per 256 keys.
//! Needs `Features::SUBGROUP` and workgroup memory for one digit table per possible subgroup.

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::radix_sort::pipeline_without_zero_fill;

/// Invocations per workgroup; must match `WG` in the shader. Half the portable histogram's
/// workgroup, so each invocation ranks 2 x rounds keys per block.
const WORKGROUP: u32 = 128;
/// The histogram's keys per block per round (its workgroup size).
const HISTOGRAM_ROUND: u32 = 256;
/// Digits per pass.
const RADIX: u32 = 256;

/// Workgroup bytes the shader declares for `slots` subgroup slots: a u32 per digit per slot and
/// the cursor.
fn workgroup_bytes(slots: u32) -> u64 {
    slots as u64 * RADIX as u64 * 4 + 4
}

/// Most subgroups a workgroup can hold on this adapter.
fn slots(ctx: &GpuContext) -> u32 {
    // wgpu never reports below 4 (WebGPU's minimum); guard anyway against a zero.
    WORKGROUP / ctx.info.subgroup_min_size.clamp(4, WORKGROUP)
}

/// The subgroup size when every subgroup has the same one, 4 or 8 (then digits are matched with
/// one broadcast per lane instead of 8 ballots), else 0.
fn broadcast_lanes(ctx: &GpuContext) -> u32 {
    let (min, max) = (ctx.info.subgroup_min_size, ctx.info.subgroup_max_size);
    if min == max && (min == 4 || min == 8) {
        min
    } else {
        0
    }
}

/// Why the subgroup scatter cannot run on this device, or `None` when it can.
pub(crate) fn unsupported(ctx: &GpuContext) -> Option<String> {
    if !ctx.has_subgroups() {
        return Some(format!(
            "the adapter '{}' offers no subgroup operations",
            ctx.info.name
        ));
    }
    let need = workgroup_bytes(slots(ctx));
    let have = ctx.limits.max_compute_workgroup_storage_size as u64;
    if need > have {
        return Some(format!(
            "it needs {need} bytes of workgroup memory (subgroups as small as {}); the adapter \
             '{}' allows {have}",
            ctx.info.subgroup_min_size, ctx.info.name
        ));
    }
    None
}

/// The scatter pipeline for blocks of 256 x `rounds` keys (`rounds` 1..=64, checked by the
/// caller), the portable histogram's blocks.
/// `ballots_only` forces the any-size digit matching (tests cover it on fixed-size adapters).
pub(crate) fn scatter_pipeline(
    ctx: &GpuContext,
    rounds: u32,
    ballots_only: bool,
) -> Result<wgpu::ComputePipeline> {
    if let Some(why) = unsupported(ctx) {
        return Err(Error::Config(format!(
            "radix sort: the subgroup variant cannot run: {why}"
        )));
    }
    let items = rounds * HISTOGRAM_ROUND / WORKGROUP;
    // Private arrays need constant sizes, so the sizes are written into the source.
    let source = format!(
        "const SLOTS: u32 = {}u;\nconst ITEMS: u32 = {items}u;\nconst BROADCAST_LANES: u32 = {}u;\n{}",
        slots(ctx),
        if ballots_only {
            0
        } else {
            broadcast_lanes(ctx)
        },
        include_str!("../../shaders/radix_sort_subgroup.wgsl")
    );
    let module = ctx.shader("radix_sort_subgroup.wgsl", &source)?;
    Ok(pipeline_without_zero_fill(ctx, &module, "scatter", &[]))
}
