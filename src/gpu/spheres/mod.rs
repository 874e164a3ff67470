//! The sphere broad phase on the GPU: [`broad_phase::GpuBroadPhase`] and its stages (cascade,
//! fewest-candidate axis, pair walks).

pub mod broad_phase;
pub mod cascade;
pub mod min_axis;
pub mod pairs;
