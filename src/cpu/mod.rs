//! CPU reference implementations: the oracle every GPU result is checked against.

pub mod aabb_sweep;
pub mod sat;
