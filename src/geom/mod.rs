//! Shared geometry on glam types.

pub mod sector;
pub mod sector_sdf;
pub mod sphere;
pub mod swept_box;
