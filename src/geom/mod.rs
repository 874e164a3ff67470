//! Shared geometry on glam types.

pub mod aabb;
pub mod capsule;
pub mod obb;
pub mod polygon;
pub mod primitives2d;
pub mod sat;
pub mod sector;
pub mod sphere;
pub mod sphere_grid;
