//! CPU reference implementations: the oracle every GPU result is checked against, and the CPU
//! baseline. One file per method; each is a [`BroadPhase`] with its scratch buffers kept across
//! calls, running on rayon's pool. Each module's docs define its `tests` count exactly (the GPU
//! counts the same); every method applies [`crate::Sphere::touches`] to its candidates.
//!
//! * `brute_force`: all pairs; `origin_distance`: paper method 1; `sweep`: the paper's
//!   x / xy / xyz cascade; `min_axis`: paper 3.3.2 with a complete owner rule; `sap`: sweep
//!   and prune; `grid`: uniform grid, the fastest at scale.
//! * Shared parts: `keys` (order-preserving float keys), `broadphase::radix`, `axis_order` (sorted
//!   structure-of-arrays per axis), `emit` (parallel chunks, per-chunk pair buffers, the
//!   stored-pair limit), and with feature `peers` the peer crates in `peers`.
//!
//! Rounding: the candidate filters compare f32 values computed as each module states
//! (`lo = c - r`, `|c|`, cell indices). A pair that touches only within rounding of a filter's
//! boundary (e.g. exactly touching spheres whose interval ends round apart) could in principle
//! be filtered out; the property tests include exact integer contacts and find none.

/// The [`BroadPhase`] impl every CPU method shares: `name` from `$name` (a `fn(&Self) -> &str`),
/// the CPU backend, and `find_pairs_validated` as the method's own inherent `pairs` (none for an
/// empty scene; with `emitter`, gathered as the emitter is set). With a last name, the scene is
/// validated by that inherent method (one that validates it in a pass it makes anyway) instead
/// of the separate pass of the default. With `emitter` (a method whose pairs leave through its
/// `emitter` field), also `set_pair_limit`, and the order made where the pairs are gathered
/// (docs/design.md §2.14): `find_pairs` gathers them in canonical order, `find_pairs_unordered`
/// as the chunks found them.
macro_rules! cpu_broad_phase {
    (@checked) => {
        |broad: &mut Self, spheres: &[$crate::geom::sphere::Sphere], out| {
            $crate::geom::sphere::validate_spheres(spheres)?;
            broad.pairs(spheres, out)
        }
    };
    (@checked $checking:ident) => {
        Self::$checking
    };
    (@impl $ty:ty, $name:expr, $pairs:expr, { $($extra:item)* }) => {
        impl $crate::broadphase::BroadPhase for $ty {
            fn name(&self) -> &str {
                let name: fn(&Self) -> &'static str = $name;
                name(self)
            }

            fn backend(&self) -> $crate::broadphase::Backend {
                $crate::broadphase::Backend::Cpu
            }

            fn find_pairs_validated(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                out: Option<&mut Vec<$crate::broadphase::Pair>>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                if spheres.is_empty() {
                    return Ok($crate::broadphase::no_pairs(out));
                }
                let pairs: fn(
                    &mut Self,
                    &[$crate::geom::sphere::Sphere],
                    Option<&mut Vec<$crate::broadphase::Pair>>,
                ) -> $crate::error::Result<$crate::broadphase::Stats> = $pairs;
                pairs(self, spheres, out)
            }

            $($extra)*
        }
    };
    ($ty:ty, emitter, $name:expr $(, $checking:ident)?) => {
        impl $ty {
            /// Sets the most pairs one call may store (default
            /// [`MAX_STORED_PAIRS`](crate::cpu::MAX_STORED_PAIRS)); a call finding more fails
            /// with `Error::TooLarge`.
            pub fn set_pair_limit(&mut self, limit: u64) {
                self.emitter.set_pair_limit(limit);
            }

            /// The pairs of `spheres` by `run` (none for an empty scene), gathered as the
            /// emitter is set.
            fn scene_pairs(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                out: Option<&mut Vec<$crate::broadphase::Pair>>,
                run: fn(
                    &mut Self,
                    &[$crate::geom::sphere::Sphere],
                    Option<&mut Vec<$crate::broadphase::Pair>>,
                ) -> $crate::error::Result<$crate::broadphase::Stats>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                if spheres.is_empty() {
                    return Ok($crate::broadphase::no_pairs(out));
                }
                $crate::broadphase::memory::check_method_scene(spheres)?;
                self.emitter.set_objects(spheres.len());
                run(self, spheres, out)
            }

            /// The scene validated (by `$checking` where given), then its pairs.
            fn checked_pairs(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                out: Option<&mut Vec<$crate::broadphase::Pair>>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                self.scene_pairs(spheres, out, $crate::cpu::cpu_broad_phase!(@checked $($checking)?))
            }
        }
        $crate::cpu::cpu_broad_phase!(@impl $ty, $name, |broad: &mut Self, spheres, out| {
            broad.scene_pairs(spheres, out, Self::pairs)
        }, {
            fn find_pairs(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                mut out: Option<&mut Vec<$crate::broadphase::Pair>>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                let result = self.checked_pairs(spheres, out.as_deref_mut());
                let mut stats = $crate::broadphase::cleared_on_error(out.as_deref_mut(), result)?;
                // Gathered in order, the list needs no look (where the gather could not order
                // it, within the memory budget, the stage `order` does).
                if !self.emitter.take_in_order() {
                    $crate::broadphase::order_pairs(out, &mut stats);
                }
                Ok(stats)
            }

            fn find_pairs_unordered(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                mut out: Option<&mut Vec<$crate::broadphase::Pair>>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                self.emitter.set_ordered(false);
                let result = self.checked_pairs(spheres, out.as_deref_mut());
                self.emitter.set_ordered(true);
                $crate::broadphase::cleared_on_error(out, result)
            }
        });
    };
    ($ty:ty, $name:expr) => {
        $crate::cpu::cpu_broad_phase!(@impl $ty, $name, |broad: &mut Self, spheres, out| {
            $crate::broadphase::memory::check_method_scene(spheres)?;
            broad.pairs(spheres, out)
        }, {});
    };
}
pub(crate) use cpu_broad_phase;

pub(crate) mod aabb_sweep;
pub(crate) mod axis_order;
pub(crate) mod blocks;
pub(crate) mod brute_force;
pub mod contacts;
pub(crate) mod emit;
pub(crate) mod grid;
pub(crate) mod keys;
pub(crate) mod min_axis;
pub(crate) mod narrow;
pub(crate) mod origin_distance;
pub(crate) mod partitioned;
#[cfg(feature = "peers")]
pub mod peers;
pub(crate) mod rotating;
pub(crate) mod sap;
pub mod sat;
#[cfg(feature = "paper")]
pub(crate) mod sector_batch;
#[cfg(feature = "paper")]
pub(crate) mod sector_grid;
pub(crate) mod sphere_index;
pub(crate) mod sweep;
pub(crate) mod wide;
pub(crate) mod worlds;

pub use aabb_sweep::{BoxSweep, TooManyCandidates, aabb_sweep, sweep_order};
pub use brute_force::BruteForce;
/// The most pairs one call stores unless `set_pair_limit` says otherwise.
pub use emit::MAX_STORED_PAIRS;
pub use grid::Grid;
pub use min_axis::MinAxis;
pub use narrow::CpuNarrowPhase;
pub use origin_distance::OriginDistance;
pub use partitioned::PartitionedCpu;
pub use rotating::{RotatingCpu, rotating_brute_force, rotating_frame_cpu};
pub use sap::Sap;
#[cfg(feature = "paper")]
pub use sector_batch::{
    SphereColumns, count_sector_sphere_hits, count_sector_sphere_hits_parallel,
    sector_sphere_flags_parallel,
};
#[cfg(feature = "paper")]
pub use sector_grid::{cpu_histograms, pose_histograms, rotation_histogram};
pub use sweep::Sweep;
pub use worlds::{AUTO_SWEEP_MAX, WorldBatch};

use crate::broadphase::{BroadPhase, Method};

/// `auto` on the CPU (`broadphase::auto`): grid, sap, x or brute force, chosen per scene.
pub fn auto() -> crate::broadphase::auto::Auto {
    auto_with_pair_limit(emit::MAX_STORED_PAIRS)
}

/// [`auto`] storing at most `limit` pairs per call (see [`broad_phase_with_pair_limit`]).
pub fn auto_with_pair_limit(limit: u64) -> crate::broadphase::auto::Auto {
    crate::broadphase::auto::Auto::new(
        crate::broadphase::Backend::Cpu,
        false,
        Box::new(move |method| Ok(broad_phase_with_pair_limit(method, limit))),
    )
}

/// The CPU implementation of `method` ([`Method::Auto`]: [`auto`]).
///
/// ```
/// use sweepfan::{BroadPhase, Method, Sphere, cpu};
/// let mut any = cpu::broad_phase(Method::Auto);
/// let two = [Sphere::new(glam::Vec3::ZERO, 1.0), Sphere::new(glam::Vec3::X, 1.0)];
/// let stats = any.find_pairs(&two, None)?;
/// assert!(stats.chosen.is_some_and(|c| c.method.is_rule())); // it ran one of the rules
/// # Ok::<(), sweepfan::Error>(())
/// ```
pub fn broad_phase(method: Method) -> Box<dyn BroadPhase + Send> {
    broad_phase_with_pair_limit(method, emit::MAX_STORED_PAIRS)
}

/// The CPU implementation of `method`, storing at most `limit` pairs per call (a call that finds
/// more fails with `Error::TooLarge`; counting without storing has no limit).
pub fn broad_phase_with_pair_limit(method: Method, limit: u64) -> Box<dyn BroadPhase + Send> {
    fn boxed<T: BroadPhase + Send + 'static>(
        mut method: T,
        set: fn(&mut T, u64),
        limit: u64,
    ) -> Box<dyn BroadPhase + Send> {
        set(&mut method, limit);
        Box::new(method)
    }
    match method {
        Method::Auto => Box::new(auto_with_pair_limit(limit)),
        Method::BruteForce => boxed(BruteForce::new(), BruteForce::set_pair_limit, limit),
        Method::OriginDistance => {
            boxed(OriginDistance::new(), OriginDistance::set_pair_limit, limit)
        }
        Method::X => boxed(Sweep::x(), Sweep::set_pair_limit, limit),
        Method::Xy => boxed(Sweep::xy(), Sweep::set_pair_limit, limit),
        Method::Xyz => boxed(Sweep::xyz(), Sweep::set_pair_limit, limit),
        Method::MinAxis => boxed(MinAxis::new(), MinAxis::set_pair_limit, limit),
        Method::Sap => boxed(Sap::new(), Sap::set_pair_limit, limit),
        Method::Grid => boxed(Grid::new(), Grid::set_pair_limit, limit),
    }
}
