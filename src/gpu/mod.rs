//! GPU implementations (wgpu + WGSL). Each stage is `name.rs` beside `shaders/<same path>.wgsl`.
//!
//! * [`context`]: adapter, device, limits, buffers, timing; `adapter_check`: the adapter a
//!   run must be on (`SWEEPFAN_EXPECT_ADAPTER`); `frame`: the per-frame parameter arena and
//!   recorder shared by the sphere kernels (`shaders/frame.wgsl`); [`readback`]: the one
//!   readback buffer per pipeline that makes one host wait per frame; [`traffic`]: the
//!   device-traffic model of the sphere frame.
//! * [`sort`]: exclusive scan, both radix sorts, the key kernels.
//! * [`spheres`]: the sphere broad phase ([`GpuBroadPhase`]) and its stages.
//! * [`boxes`]: AABB sweep and prune, SAT, and the box / polygon pipeline.
//! * [`contacts`]: the contacts of sphere, box and polygon pairs.
//! * [`sector`]: the sector accuracy kernel, sector vs sphere, the rotating scene.
//!
//! Nothing here imports `cpu`: the CPU twins are checked against these kernels in the tests.

internal_modules!(
    contacts,
    context,
    readback,
    sector,
    sort,
    spheres,
    timer,
    traffic,
    compile_report,
    shader,
    boxes,
    events
);
pub(crate) mod adapter_check;
pub(crate) mod frame;
pub(crate) mod slots;
pub(crate) mod upload;

pub use adapter_check::EXPECT_ADAPTER_ENV;
pub use boxes::pipeline::{GpuBoxPipeline, Proxy};
pub use context::{BACKEND_ENV, GpuContext, GpuOptions, hardware_adapter, list_adapters};
pub use shader::{MathMode, SLOPPY_MATH_ENV};
pub use spheres::broad_phase::{
    GPU_CASCADE_SHARED_MAX, GPU_GRID_SHARED_MAX, GPU_WORLD_METHODS, GpuBroadPhase, GpuWorldBatch,
    MAX_IN_FLIGHT, SubmittedFrame,
};
pub use timer::PassTimer;

/// The GPU implementation of `method` on `ctx` ([`Method::Auto`](crate::Method::Auto):
/// [`auto`]), behind the trait as the CPU's `broad_phase` is.
pub fn broad_phase(
    ctx: std::sync::Arc<GpuContext>,
    method: crate::Method,
) -> crate::Result<Box<dyn crate::BroadPhase + Send>> {
    Ok(match method {
        crate::Method::Auto => Box::new(auto(ctx)),
        method => Box::new(GpuBroadPhase::new(ctx, method)?),
    })
}

/// `auto` on the GPU of `ctx` (`broadphase::auto`): grid, sap, x or brute force, chosen per
/// scene, priced for the adapter (a software one apart).
pub fn auto(ctx: std::sync::Arc<GpuContext>) -> crate::broadphase::auto::Auto {
    use crate::broadphase::{Backend, BroadPhase};
    let software = ctx.is_software();
    crate::broadphase::auto::Auto::new(
        Backend::Gpu,
        software,
        Box::new(move |method| {
            Ok(Box::new(GpuBroadPhase::new(ctx.clone(), method)?) as Box<dyn BroadPhase + Send>)
        }),
    )
}
