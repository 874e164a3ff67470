//! The sweepfan tool, on the [`sweepfan`] library: what the `sweepfan` binary, its tests and
//! the examples share. Layered like the library (each module names only those above it;
//! `tests/suite/layers.rs` checks it; docs/design.md §8):
//! * [`run`]: measurement, stress, verification against the CPU oracle.
//! * [`experiments`]: the paper reproductions and the selftest, returning data; `dist`
//!   (feature `mpi`): the broad phase across processes and machines over MPI
//!   (docs/design.md §2.11).
//! * [`report`]: tables, JSON/CSV rows, SVG plots.

#[cfg(feature = "mpi")]
pub mod dist;
pub mod experiments;
pub mod report;
pub mod run;
