//! Shared geometry on glam types.

pub mod sector;
pub mod sphere;
