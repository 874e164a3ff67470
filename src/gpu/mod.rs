//! GPU implementations (wgpu + WGSL). Each stage is `name.rs` beside `shaders/<same path>.wgsl`.
//!
//! * [`context`]: adapter, device, limits, buffers, timing; [`adapter_check`]: the adapter a
//!   run must be on (`SWEEPFAN_EXPECT_ADAPTER`); `frame`: the per-frame parameter arena and
//!   recorder shared by the sphere kernels (`shaders/frame.wgsl`); [`readback`]: the one
//!   readback buffer per pipeline that makes one host wait per frame; [`traffic`]: the
//!   device-traffic model of the sphere frame.
//! * [`sort`]: exclusive scan, both radix sorts, the key kernels.
//! * [`spheres`]: the sphere broad phase ([`GpuBroadPhase`]) and its stages.
//! * [`boxes`]: AABB sweep and prune, SAT, and the box / polygon pipeline.
//! * [`sector`]: the sector accuracy kernel, sector vs sphere, the rotating scene.
//!
//! Nothing here imports `cpu`: the CPU twins are checked against these kernels in the tests.

#[doc(hidden)]
pub mod adapter_check;
#[doc(hidden)]
pub mod boxes;
#[doc(hidden)]
pub mod compile_report;
#[doc(hidden)]
pub mod context;
#[doc(hidden)]
pub mod events;
pub(crate) mod frame;
#[doc(hidden)]
pub mod readback;
#[doc(hidden)]
pub mod sector;
#[doc(hidden)]
pub mod shader;
#[doc(hidden)]
pub mod slots;
#[doc(hidden)]
pub mod sort;
#[doc(hidden)]
pub mod spheres;
#[doc(hidden)]
pub mod timer;
#[doc(hidden)]
pub mod traffic;
#[doc(hidden)]
pub mod upload;

pub use boxes::pipeline::{GpuBoxPipeline, Proxy};
pub use context::{GpuContext, GpuOptions, hardware_adapter, list_adapters};
pub use spheres::broad_phase::GpuBroadPhase;
pub use timer::PassTimer;

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
