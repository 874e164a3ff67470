//! Shared geometry on glam types.

pub mod sector;
pub mod sphere;
pub mod swept_box;
