//! The subgroup scatter of [`crate::gpu::radix_sort::RadixSort`] (warp-level multisplit, see
//! `shaders/radix_sort_subgroup.wgsl`): each subgroup ranks whole chunks with ballots, two
//! barriers per workgroup instead of three per 256 keys, no second pass over the keys.
//! Needs `Features::SUBGROUP` and workgroup memory for one 256-digit table per chunk.

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::radix_sort::pipeline_without_zero_fill;

/// Invocations per workgroup; must match `WG` in the shader.
const WORKGROUP: u32 = 64;
/// The histogram's keys per chunk per round (its workgroup size).
const HISTOGRAM_ROUND: u32 = 256;
/// Digits per pass.
const RADIX: u32 = 256;

/// Workgroup bytes the shader declares: a u32 per digit per chunk and the slot counter.
fn workgroup_bytes(chunks: u32) -> u64 {
    chunks as u64 * RADIX as u64 * 4 + 4
}

/// Chunks per workgroup: as many as the most subgroups a workgroup can hold, so every subgroup
/// ranks one chunk on average.
pub(crate) fn chunks_per_group(ctx: &GpuContext) -> u32 {
    // wgpu never reports below 4 (WebGPU's minimum); guard anyway against a zero.
    (WORKGROUP / ctx.info.subgroup_min_size.max(4)).max(1)
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
    let need = workgroup_bytes(chunks_per_group(ctx));
    let have = ctx.limits.max_compute_workgroup_storage_size as u64;
    if need > have {
        return Some(format!(
            "it needs {need} bytes of workgroup memory (subgroups as small as {}); the adapter \
             '{}' allows {have}",
            ctx.info.subgroup_min_size, ctx.info.name
        ));
    }
    if ctx.limits.max_compute_invocations_per_workgroup < WORKGROUP
        || ctx.limits.max_compute_workgroup_size_x < WORKGROUP
    {
        return Some(format!(
            "it needs {WORKGROUP}-invocation workgroups; the adapter '{}' allows fewer",
            ctx.info.name
        ));
    }
    None
}

/// The scatter pipeline for chunks of 256 x `rounds` keys (`rounds` 1..=64, checked by the
/// caller): the portable histogram's blocks. `ballots_only` forces the any-size digit matching
/// (tests cover it on fixed-size adapters).
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
    // Sizes of workgroup arrays and the matching choice are written into the source.
    let source = format!(
        "const CHUNK: u32 = {}u;\nconst CHUNKS: u32 = {}u;\nconst BROADCAST_LANES: u32 = {}u;\n{}",
        rounds * HISTOGRAM_ROUND,
        chunks_per_group(ctx),
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
