//! GPU implementations (wgpu + WGSL). Each stage is `name.rs` beside `shaders/<same path>.wgsl`;
//! the stages are private, and this module shows what a caller uses:
//!
//! * the device: [`GpuContext`] opened from [`GpuOptions`] ([`list_adapters`],
//!   [`hardware_adapter`]; with feature `testing`, `test_gpu_with` for the workspace's suites,
//!   which must fail, not skip, without an adapter);
//! * spheres: [`GpuBroadPhase`] (one scene per call, in flight with [`SubmittedFrame`], resident
//!   with [`DeviceScene`] and its device events [`GpuEvents`]), [`GpuWorldBatch`] (many worlds),
//!   [`broad_phase`] and [`auto`] behind the trait;
//! * boxes and polygons: [`GpuBoxPipeline`] (broad phase and SAT by id, [`Proxy`],
//!   [`SweepLayout`]), [`GpuSat`] alone; contacts: [`GpuContacts`]; both behind the
//!   [`NarrowPhase`](crate::NarrowPhase) trait: [`GpuNarrowPhase`];
//! * sectors: [`RotatingGpu`] (the rotating scene's continuous detection), [`SectorSphereGpu`],
//!   and, with the feature `paper`, the paper's accuracy kernels `SectorExperimentGpu` and
//!   `FreeExperimentGpu`;
//! * the stable (u32, u32) sort every stage uses: [`RadixSort`];
//! * [`instrument`]: pass timers, one read-back for several buffers, the traffic models and the
//!   shader compile report, for benchmarks.
//!
//! Nothing here imports `cpu`: the CPU twins are checked against these kernels in the tests.

pub(crate) mod adapter_check;
pub(crate) mod boxes;
pub(crate) mod compile_report;
pub(crate) mod contacts;
pub(crate) mod context;
pub(crate) mod events;
pub(crate) mod frame;
pub mod instrument;
pub(crate) mod narrow;
pub(crate) mod readback;
pub(crate) mod sector;
pub(crate) mod shader;
pub(crate) mod slots;
pub(crate) mod sort;
pub(crate) mod spheres;
pub(crate) mod timer;
pub(crate) mod traffic;
pub(crate) mod upload;

pub use adapter_check::EXPECT_ADAPTER_ENV;
pub use boxes::aabb_sap::{SweepColumns, SweepLayout};
pub use boxes::pipeline::{GpuBoxPipeline, Proxy};
pub use boxes::sat::{Exact, GpuSat, SatCandidates, SatOutput, SatShapes};
pub use contacts::GpuContacts;
pub use context::FrameScope;
pub use context::MIN_BINDING_CAP;
pub use context::{BACKEND_ENV, GpuContext, GpuOptions, hardware_adapter, list_adapters};
#[cfg(any(test, feature = "testing"))]
pub use context::{NO_GPU_ENV, test_gpu_with};
pub use events::{GpuEvents, PartialEvents};
pub use narrow::GpuNarrowPhase;
#[cfg(feature = "paper")]
pub use sector::accuracy::SectorExperimentGpu;
#[cfg(feature = "paper")]
pub use sector::free_accuracy::FreeExperimentGpu;
pub use sector::rotating::RotatingGpu;
pub use sector::sector_sphere::SectorSphereGpu;
pub use shader::{MathMode, SLOPPY_MATH_ENV};
pub use sort::radix_sort::{RadixSort, Variant as SortVariant};
pub use spheres::broad_phase::{
    GPU_CASCADE_SHARED_MAX, GPU_GRID_SHARED_MAX, GpuBroadPhase, GpuWorldBatch, MAX_IN_FLIGHT,
    ResidentPairs, ResidentReadback, ResidentTotals, SubmittedFrame,
};
pub use spheres::motion::DeviceScene;

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
