//! sweepfan: broad-phase collision detection for millions of spheres on the GPU (wgpu + WGSL),
//! with a CPU reference that checks every GPU result; separating-axis narrow phase for oriented
//! boxes and convex polygons; sector ("fan") continuous collision detection for rotating boxes.
//!
//! # A simulation's loop: five calls
//! Bodies by the simulation's own ids, as axis-aligned boxes ([`BoxBroadPhase`]); each update
//! says which pairs began and ended touching, by id. The same calls run on the GPU
//! (`BoxBroadPhase::gpu(Arc::new(GpuContext::new(&GpuOptions::default())?))`).
//!
//! ```
//! use sweepfan::{Aabb, BoxBroadPhase};
//! use glam::Vec3;
//!
//! let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
//! let mut broad = BoxBroadPhase::cpu();                       // 1. a broad phase
//! broad.set_many(&[10, 11, 12], &[unit(0.0), unit(3.0), unit(6.0)])?; // 2. the bodies
//! assert!(broad.update()?.found.is_empty());                // 3. a frame: nothing touches
//! broad.set(11, unit(0.5))?;                                // 4. a body moved...
//! broad.remove(12);                                         // 5. ...and one left
//! let frame = broad.update()?;
//! assert_eq!(frame.found, [[10, 11]]);
//! assert!(frame.lost.is_empty());
//! # Ok::<(), sweepfan::Error>(())
//! ```
//!
//! # What a user calls
//! * [`BoxBroadPhase`]: boxes by the caller's ids ([`Id`], pairs as [`IdPair`]), on the CPU or
//!   the GPU, exact ([`AabbOverlaps`] is the job behind it).
//! * [`BroadPhase`]: spheres, the fast special case: every method on every backend, chosen by
//!   [`Method`] and [`Backend`]: [`cpu::broad_phase`], [`GpuBroadPhase::new`], or by name with
//!   [`registry`]; [`Method::Auto`] ([`cpu::auto`], [`gpu::auto`]) chooses the method per
//!   scene ([`broadphase::auto`]); [`gpu::broad_phase`] is [`cpu::broad_phase`]'s twin.
//! * Shapes: [`Aabb`], [`Sphere`], [`Obb`], [`Polygon`]; the SAT pair tests in [`geom::sat`]
//!   (boxes) and [`Polygon::overlaps`];
//!   the box and polygon pipelines behind one trait, [`ShapeOverlaps`]
//!   ([`cpu::sat::CpuBoxPipeline`], [`GpuBoxPipeline`]); the narrow phase
//!   (which candidates touch, each touching pair's [`Contact`]) behind one trait,
//!   [`NarrowPhase`]: [`cpu::CpuNarrowPhase`], [`gpu::GpuNarrowPhase`].
//! * The GPU: [`GpuContext`] (adapter, limits, errors), [`GpuOptions`].
//! * Results: [`Stats`] per call, pairs as [`Pair`] (`i < j`, every list sorted;
//!   [`canonicalize`] sorts a list of the caller's),
//!   every failure an [`Error`] that names the object, line or limit.
//! * Frame events: [`EventTracker`] turns each frame's pairs into [`FrameEvents`], the contacts
//!   that began (`found`) and ended (`lost`).
//!
//! Spheres by position:
//!
//! ```
//! use sweepfan::{BroadPhase, Method, Sphere, cpu};
//! use glam::Vec3;
//!
//! let spheres = [
//!     Sphere::new(Vec3::ZERO, 1.0),
//!     Sphere::new(Vec3::new(1.5, 0.0, 0.0), 1.0),
//!     Sphere::new(Vec3::new(10.0, 0.0, 0.0), 1.0),
//! ];
//! let mut grid = cpu::broad_phase(Method::Grid);
//! let mut pairs = Vec::new();
//! let stats = grid.find_pairs(&spheres, Some(&mut pairs))?; // canonical: i < j, sorted
//! assert_eq!(pairs, [[0, 1]]);
//! assert_eq!(stats.pairs, 1);
//! # Ok::<(), sweepfan::Error>(())
//! ```
//!
//! # What the caller decides
//! Nothing is read from the environment (docs/design.md §8.1): the GPU's backends, the adapter
//! a run must be on and the kernels' math are [`GpuOptions`] fields
//! ([`GpuOptions::from_vars`] maps `WGPU_BACKEND`, `SWEEPFAN_EXPECT_ADAPTER` and
//! `SWEEPFAN_SLOPPY_MATH` through a lookup the caller passes). What a call may allocate and
//! when it must stop are [`Limits`]: a [`MemoryBudget`] (none by default; the system's figure
//! only when asked for, [`MemoryBudget::System`]) and a [`CancelToken`], given to the calls of
//! [`Limits::run`]. CPU work runs on the rayon pool of the calling thread: a caller that gives
//! its own runs the call inside it.
//!
//! ```
//! use sweepfan::{BroadPhase, Method, Sphere, cpu};
//! use glam::Vec3;
//!
//! let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let spheres = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X, 1.0)];
//! let mut grid = cpu::broad_phase(Method::Grid);
//! let stats = pool.install(|| grid.find_pairs(&spheres, None))?; // on the caller's two threads
//! assert_eq!(stats.pairs, 1);
//! // An empty frame (every object gone) has no pairs; it is not an error.
//! assert_eq!(grid.find_pairs(&[], None)?.pairs, 0);
//! # Ok::<(), sweepfan::Error>(())
//! ```
//!
//! # The tree
//! Layered: each module names only those above it in this list (`tests/suite/layers.rs` checks it;
//! `docs/design.md` §8).
//! * [`error`]: [`Error`], [`Result`].
//! * [`geom`]: shapes, validation, the exact one-pair tests (SAT, sectors).
//! * [`broadphase`]: the [`BroadPhase`] trait and its vocabulary.
//! * [`events`]: found and lost pairs; [`partition`]: a scene split into parts with ghosts,
//!   for any method on any number of devices (docs/design.md §2.10).
//! * [`cpu`] and [`gpu`]: the CPU oracle and baseline; the GPU stages, each beside its WGSL.
//! * [`registry`]: methods by name, on either backend; [`boxes`]: the caller's boxes by id.
//!
//! The `sweepfan` tool (benchmarks, verification, the paper reproductions, reports, the broad
//! phase over MPI) is the workspace's member crate `sweepfan-cli` (`cli/`), built on this
//! library alone; the scenes it measures on (the paper's box, the scenes beyond it, the scene
//! files) are the member crate `sweepfan-scenes` (`scenes/`), built on it too.
//!
//! # Features
//! * `peers`: the peer crates (parry, rstar, broccoli) as methods by name, for comparisons.
//! * `paper`: the papers' experiments, which the tool's `reproduce` and `selftest` run: the
//!   sector accuracy classifiers (`geom::sector::classify`, `free_classify`), their histograms
//!   on the CPU and the GPU (`cpu::cpu_histograms`, `gpu::SectorExperimentGpu`,
//!   `gpu::FreeExperimentGpu`) and the speed tables' batched sector-sphere counts
//!   (`cpu::count_sector_sphere_hits`). Off by default: a simulation needs none of it.
//! * `testing`: the workspace suites' knobs; no API.

#![warn(missing_docs)]

pub mod boxes;
pub mod broadphase;
pub mod cpu;
pub mod error;
pub mod events;
pub mod geom;
pub mod gpu;
pub mod partition;
pub mod registry;
#[cfg(test)]
mod test_scenes;

pub use boxes::{BoxBroadPhase, BoxFrame};
pub use broadphase::aabbs::AabbOverlaps;
pub use broadphase::cancel::CancelToken;
pub use broadphase::limits::{Limits, MemoryBudget};
pub use broadphase::narrow::NarrowPhase;
pub use broadphase::shapes::ShapeOverlaps;
pub use broadphase::worlds::{SHARED, WorldBroadPhase, WorldPairs};
pub use broadphase::{
    Backend, BroadPhase, FrameEvents, Method, Pair, SphereFrame, Stats, canonicalize,
};
pub use broadphase::{Id, IdPair};
pub use error::{Error, Exceeds, GpuFailure, Result};
pub use events::{EventTracker, WorldEventTracker, WorldEvents};
pub use geom::Validate;
pub use geom::aabb::Aabb;
pub use geom::contact::{Contact, ContactShape};
pub use geom::obb::Obb;
pub use geom::polygon::{Polygon, PolygonFault};
pub use geom::shapes::Shapes;
pub use geom::sphere::{Sphere, validate_spheres};
pub use gpu::{GpuBoxPipeline, GpuBroadPhase, GpuContext, GpuOptions};
