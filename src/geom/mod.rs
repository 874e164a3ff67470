//! Shared geometry on glam types.

pub mod sphere;
