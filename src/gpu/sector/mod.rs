//! Sector CCD on the GPU: the accuracy experiments' kernels (`accuracy`, `free_accuracy`:
//! feature `paper`), sector vs sphere
//! ([`sector_sphere`]) and the rotating scene's pipeline ([`rotating`]).

#[cfg(feature = "paper")]
pub mod accuracy;
#[cfg(feature = "paper")]
pub mod free_accuracy;
pub mod rotating;
pub mod sector_sphere;
