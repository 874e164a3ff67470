//! `sweepfan info`: the GPU adapters, the selected one's limits and features.

use anyhow::Result;
use sweepfan::gpu::{GpuContext, GpuOptions, list_adapters};
use sweepfan_cli::run::gpu::with_env;

pub fn exec(options: &GpuOptions) -> Result<bool> {
    let options = &with_env(options.clone())?;
    let adapter = options.adapter.as_deref();
    let adapters = list_adapters(options);
    if adapters.is_empty() {
        let none = "no GPU adapter found (install a Vulkan driver; on Debian: mesa-vulkan-drivers)";
        // An error (exit 2), not a listing: a script that asks `sweepfan info` whether a GPU is
        // there gets its answer from the exit status (issue 28; docs/design.md §9.5).
        if let Some(wanted) = adapter {
            anyhow::bail!("--adapter {}: {none}", sweepfan::error::shown(wanted));
        }
        anyhow::bail!("{none}");
    }
    for (i, a) in adapters.iter().enumerate() {
        outln!(
            "adapter {i}: {} ({:?}, {:?}), driver {} {}",
            a.name,
            a.device_type,
            a.backend,
            a.driver,
            a.driver_info
        );
    }
    let ctx = GpuContext::new(options)?;
    outln!();
    for line in context_lines(&ctx, "selected") {
        outln!("{line}");
    }
    Ok(true)
}

/// The opened adapter (name, type, backend, driver), its key limits, subgroup sizes and
/// features, one line each, the first starting with `heading`: `sweepfan info` prints them
/// for the selected adapter, the selftest before its checks (docs/design.md §9.5).
pub fn context_lines(ctx: &GpuContext, heading: &str) -> Vec<String> {
    let info = &ctx.info();
    let l = &ctx.limits();
    let mut lines = vec![
        format!(
            "{heading}: {} ({:?}, {:?})",
            info.name, info.device_type, info.backend
        ),
        format!("driver: {} {}", info.driver, info.driver_info),
    ];
    if info.device_type == wgpu::DeviceType::Cpu {
        lines.push(
            "note: a CPU (software) adapter: a correctness target; its times are not GPU times"
                .into(),
        );
    }
    if ctx.math() == sweepfan::gpu::MathMode::Sloppy {
        // A run under SWEEPFAN_SLOPPY_MATH says so (docs/design.md §9.11).
        lines.push(
            "math: sloppy (SWEEPFAN_SLOPPY_MATH): sqrt, division and dot products off by up to \
             2 ULP or fused, as real GPUs may compute them"
                .into(),
        );
    }
    lines.push("limits:".into());
    for (name, value) in [
        (
            "max_storage_buffer_binding_size",
            l.max_storage_buffer_binding_size,
        ),
        ("max_buffer_size", l.max_buffer_size),
        ("bytes per binding used", ctx.max_binding_bytes()),
        (
            "max_compute_workgroups_per_dim",
            l.max_compute_workgroups_per_dimension.into(),
        ),
        (
            "max_compute_invocations_per_wg",
            l.max_compute_invocations_per_workgroup.into(),
        ),
        (
            "max_compute_workgroup_storage",
            l.max_compute_workgroup_storage_size.into(),
        ),
        (
            "max_storage_buffers_per_stage",
            l.max_storage_buffers_per_shader_stage.into(),
        ),
    ] {
        lines.push(format!("  {name:<32} {value}"));
    }
    let subgroups = "min/max subgroup size";
    lines.push(format!(
        "  {subgroups:<32} {}/{}",
        info.subgroup_min_size, info.subgroup_max_size
    ));
    lines.push(format!("features enabled: {:?}", ctx.features()));
    lines.push(format!(
        "timestamps: {}",
        if ctx.has_timestamps() { "yes" } else { "no" }
    ));
    lines
}
