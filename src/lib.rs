//! sweepfan: broad-phase collision detection for millions of spheres on the GPU (wgpu + WGSL),
//! with a CPU reference that checks every GPU result; separating-axis narrow phase for oriented
//! boxes and convex polygons; sector ("fan") continuous collision detection for rotating boxes.
//!
//! # What a user calls
//! * [`BroadPhase`]: every method on every backend, chosen by [`Method`] and [`Backend`]:
//!   [`cpu::broad_phase`], [`GpuBroadPhase::new`], or by name with [`registry`];
//!   [`cpu::auto`] and [`gpu::auto`] choose the method per scene ([`broadphase::auto`]).
//! * Shapes: [`Sphere`], [`Obb`], [`Polygon`]; the SAT pair tests in [`geom::sat`]; the box and
//!   polygon pipelines in [`cpu::sat`] and [`GpuBoxPipeline`].
//! * Scenes: [`Scene`] generators ([`SceneKind`], [`SceneParams`]) and CSV files.
//! * The GPU: [`GpuContext`] (adapter, limits, errors), [`GpuOptions`].
//! * Results: [`Stats`] per call, pairs as [`Pair`] (`i < j`; [`canonicalize`] sorts a list),
//!   every failure an [`Error`] that names the object, line or limit.
//! * Frame events: [`EventTracker`] turns each frame's pairs into [`FrameEvents`], the contacts
//!   that began (`found`) and ended (`lost`).
//!
//! ```
//! use sweepfan::{BroadPhase, Method, Sphere, canonicalize, cpu};
//! use glam::Vec3;
//!
//! let spheres = [
//!     Sphere::new(Vec3::ZERO, 1.0),
//!     Sphere::new(Vec3::new(1.5, 0.0, 0.0), 1.0),
//!     Sphere::new(Vec3::new(10.0, 0.0, 0.0), 1.0),
//! ];
//! let mut grid = cpu::broad_phase(Method::Grid);
//! let mut pairs = Vec::new();
//! let stats = grid.find_pairs(&spheres, Some(&mut pairs))?;
//! canonicalize(&mut pairs);
//! assert_eq!(pairs, [[0, 1]]);
//! assert_eq!(stats.pairs, 1);
//! # Ok::<(), sweepfan::Error>(())
//! ```
//!
//! # The tree
//! Layered: each module names only those above it in this list (`tests/suite/layers.rs` checks it;
//! `docs/design.md` §8).
//! * [`error`]: [`Error`], [`Result`].
//! * [`geom`]: shapes, validation, the exact one-pair tests (SAT, sectors).
//! * [`broadphase`]: the [`BroadPhase`] trait and its vocabulary.
//! * [`scenes`]: seeded generators and file formats; [`events`]: found and lost pairs;
//!   [`partition`]: a scene split into parts with ghosts, for any method on any number of
//!   devices (docs/design.md §2.10).
//! * [`cpu`] and [`gpu`]: the CPU oracle and baseline; the GPU stages, each beside its WGSL.
//! * [`registry`]: methods by name, on either backend.
//!
//! The `sweepfan` tool (benchmarks, verification, the paper reproductions, reports, the broad
//! phase over MPI) is the workspace's member crate `sweepfan-cli` (`cli/`), built on this
//! library alone.

pub mod broadphase;
pub mod cpu;
pub mod error;
pub mod events;
pub mod geom;
pub mod gpu;
pub mod partition;
pub mod registry;
pub mod scenes;

pub use broadphase::{Backend, BroadPhase, FrameEvents, Method, Pair, Stats, canonicalize};
pub use error::{Error, Exceeds, Result};
pub use events::EventTracker;
pub use geom::obb::Obb;
pub use geom::polygon::Polygon;
pub use geom::sphere::{Sphere, validate_spheres};
pub use gpu::{GpuBoxPipeline, GpuBroadPhase, GpuContext, GpuOptions};
pub use scenes::{Scene, SceneKind, SceneParams};
