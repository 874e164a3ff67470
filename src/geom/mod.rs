//! Shared geometry on glam types.

pub mod aabb;
pub mod capsule;
pub mod obb;
pub mod polygon;
pub mod primitives2d;
pub mod sector;
pub mod sector2d;
pub mod sector_box;
pub mod sector_distance;
pub mod sector_overlap;
pub mod sector_pair;
pub mod sphere;
pub mod swept_box;
