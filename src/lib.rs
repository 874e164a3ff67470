//! sweepfan: broad-phase collision detection for millions of spheres on the GPU (wgpu + WGSL),
//! with a CPU reference that checks every GPU result; separating-axis narrow phase; sector
//! ("fan") continuous collision detection for rotating boxes.
//!
//! The public API is small: a [`BroadPhase`] trait implemented by every method on every
//! backend, [`Scene`] generators, and the geometry in [`geom`].

pub mod broadphase;
pub mod cpu;
pub mod error;
pub mod experiments;
pub mod geom;
pub mod gpu;
pub mod report;
pub mod run;
pub mod scenes;

pub use broadphase::{Backend, BroadPhase, Method, Pair, Stats, canonicalize};
pub use error::{Error, Result};
pub use geom::sphere::{Sphere, validate_spheres};
pub use scenes::{Scene, SceneKind, SceneParams};
