//! Shared geometry on glam types.

pub mod aabb;
pub mod obb;
pub mod polygon;
pub mod sphere;
