//! The sphere broad phase on the GPU: [`broad_phase::GpuBroadPhase`] and its stages (cascade,
//! fewest-candidate axis, pair walks).

pub mod broad_phase;
pub(crate) mod cascade;
pub mod dispatch_args;
pub(crate) mod min_axis;
pub mod motion;
pub(crate) mod pairs;
