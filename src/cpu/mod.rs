//! CPU reference implementations: the oracle every GPU result is checked against, and the CPU
//! baseline. One file per method; each is a [`BroadPhase`] with its scratch buffers kept across
//! calls, running on rayon's pool.

pub mod axis_order;
pub mod brute_force;
pub mod emit;
pub mod grid;
pub mod keys;
pub mod min_axis;
pub mod origin_distance;
#[cfg(feature = "peers")]
pub mod peers;
pub mod radix;
pub mod sap;
pub mod sweep;

pub use brute_force::BruteForce;
pub use grid::Grid;
pub use min_axis::MinAxis;
pub use origin_distance::OriginDistance;
pub use sap::Sap;
pub use sweep::Sweep;

use crate::broadphase::{BroadPhase, Method};

/// The CPU implementation of `method`.
pub fn broad_phase(method: Method) -> Box<dyn BroadPhase + Send> {
    broad_phase_with_pair_limit(method, emit::MAX_STORED_PAIRS)
}

/// The CPU implementation of `method`, storing at most `limit` pairs per call (a call that finds
/// more fails with `Error::TooLarge`; counting without storing has no limit).
pub fn broad_phase_with_pair_limit(method: Method, limit: u64) -> Box<dyn BroadPhase + Send> {
    fn boxed<T: BroadPhase + Send + 'static>(
        mut method: T,
        set: fn(&mut T, u64),
        limit: u64,
    ) -> Box<dyn BroadPhase + Send> {
        set(&mut method, limit);
        Box::new(method)
    }
    match method {
        Method::BruteForce => boxed(BruteForce::new(), BruteForce::set_pair_limit, limit),
        Method::OriginDistance => {
            boxed(OriginDistance::new(), OriginDistance::set_pair_limit, limit)
        }
        Method::X => boxed(Sweep::x(), Sweep::set_pair_limit, limit),
        Method::Xy => boxed(Sweep::xy(), Sweep::set_pair_limit, limit),
        Method::Xyz => boxed(Sweep::xyz(), Sweep::set_pair_limit, limit),
        Method::MinAxis => boxed(MinAxis::new(), MinAxis::set_pair_limit, limit),
        Method::Sap => boxed(Sap::new(), Sap::set_pair_limit, limit),
        Method::Grid => boxed(Grid::new(), Grid::set_pair_limit, limit),
    }
}
