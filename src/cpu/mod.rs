//! CPU reference implementations: the oracle every GPU result is checked against, and the CPU
//! baseline. One file per method; each is a [`BroadPhase`] with its scratch buffers kept across
//! calls, running on rayon's pool.

pub mod aabb_sweep;
pub mod axis_order;
pub mod brute_force;
pub mod emit;
pub mod grid;
pub mod keys;
pub mod min_axis;
pub mod origin_distance;
pub mod rotating;
pub mod sap;
pub mod sat;
pub mod sector_batch;
pub mod sector_speed;
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
    match method {
        Method::BruteForce => Box::new(BruteForce::new()),
        Method::OriginDistance => Box::new(OriginDistance::new()),
        Method::X | Method::Xy | Method::Xyz => {
            Box::new(Sweep::new(method).expect("x, xy and xyz are sweep methods"))
        }
        Method::MinAxis => Box::new(MinAxis::new()),
        Method::Sap => Box::new(Sap::new()),
        Method::Grid => Box::new(Grid::new()),
    }
}
pub mod sector_accuracy;
