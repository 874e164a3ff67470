//! `sweepfan info`: the GPU adapters, the selected one's limits and features.

use anyhow::Result;
use sweepfan::gpu::context::check_environment;
use sweepfan::gpu::{GpuContext, GpuOptions, list_adapters};

pub fn exec(adapter: Option<&str>) -> Result<bool> {
    check_environment()?;
    let adapters = list_adapters();
    if adapters.is_empty() {
        let none = "no GPU adapter found (install a Vulkan driver; on Debian: mesa-vulkan-drivers)";
        if let Some(wanted) = adapter {
            anyhow::bail!("--adapter {wanted}: {none}");
        }
        println!("{none}");
        return Ok(true);
    }
    for (i, a) in adapters.iter().enumerate() {
        println!(
            "adapter {i}: {} ({:?}, {:?}), driver {} {}",
            a.name, a.device_type, a.backend, a.driver, a.driver_info
        );
    }
    let ctx = GpuContext::new(&GpuOptions {
        adapter: adapter.map(str::to_string),
    })?;
    println!("\nselected: {} ({:?})", ctx.info.name, ctx.info.device_type);
    if ctx.info.device_type == wgpu::DeviceType::Cpu {
        println!(
            "note: a CPU (software) adapter: a correctness target; its times are not GPU times"
        );
    }
    let l = &ctx.limits;
    println!("limits:");
    println!(
        "  max_storage_buffer_binding_size  {}",
        l.max_storage_buffer_binding_size
    );
    println!("  max_buffer_size                  {}", l.max_buffer_size);
    println!(
        "  max_compute_workgroups_per_dim   {}",
        l.max_compute_workgroups_per_dimension
    );
    println!(
        "  max_compute_invocations_per_wg   {}",
        l.max_compute_invocations_per_workgroup
    );
    println!(
        "  max_compute_workgroup_storage    {}",
        l.max_compute_workgroup_storage_size
    );
    println!(
        "  max_storage_buffers_per_stage    {}",
        l.max_storage_buffers_per_shader_stage
    );
    println!(
        "  min/max subgroup size            {}/{}",
        ctx.adapter.get_info().subgroup_min_size,
        ctx.adapter.get_info().subgroup_max_size
    );
    println!("features enabled: {:?}", ctx.features);
    println!(
        "timestamps: {}",
        if ctx.has_timestamps() { "yes" } else { "no" }
    );
    Ok(true)
}
