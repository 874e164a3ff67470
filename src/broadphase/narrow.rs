//! The narrow phase as one job on either backend (docs/design.md §4.9): which of the broad
//! phase's candidate pairs truly touch, and the contact of each touching pair.
//! `cpu::CpuNarrowPhase` and `gpu::GpuNarrowPhase` implement it with the same
//! signatures, so a simulation swaps backends without touching its loop.

use crate::broadphase::{Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::contact::Contact;
use crate::geom::obb::Obb;
use crate::geom::polygon::Polygon;
use crate::geom::sphere::Sphere;

/// The exact pair tests and contacts of shapes named by index, on the CPU or the GPU.
///
/// Candidates are pairs of indices into the shapes, in any order and either orientation (a
/// broad phase's pairs, `[i, j]` with `i < j`, are the usual ones). A candidate naming a shape
/// past the slice, or a shape with itself, is an [`Error::InvalidArgument`] naming the
/// candidate; a shape that fails validation (NaN, a negative extent, a non-unit rotation) is an
/// [`Error::InvalidObject`](crate::Error::InvalidObject) naming the shape. Nothing is computed
/// then and `out` is left cleared. No shapes and no candidates: no pairs, no contacts.
///
/// ```
/// use sweepfan::{Contact, NarrowPhase, Obb, Pair, cpu::CpuNarrowPhase};
/// use glam::{Quat, Vec3};
///
/// let cube = |x: f32, turn: f32| Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::splat(0.5), Quat::from_rotation_z(turn));
/// let boxes = [cube(0.0, 0.0), cube(1.1, 0.0), cube(1.1, 0.785), cube(5.0, 0.0)];
/// let candidates: Vec<Pair> = vec![[2, 0], [0, 1], [0, 3]]; // as a broad phase might give them
/// let mut narrow = CpuNarrowPhase::default(); // or GpuNarrowPhase::new(context)
/// let mut touching = Vec::new();
/// let stats = narrow.obb_pairs(&boxes, &candidates, Some(&mut touching))?;
/// assert_eq!(touching, [[0, 2]]); // the turned cube reaches x = 0.39; the others are apart
/// assert_eq!((stats.tests, stats.pairs), (3, 1));
/// let mut contacts: Vec<Contact> = Vec::new();
/// narrow.obb_contacts(&boxes, &touching, &mut contacts)?;
/// assert!(contacts[0].depth > 0.0);
/// # Ok::<(), sweepfan::Error>(())
/// ```
pub trait NarrowPhase {
    /// The candidates whose oriented boxes overlap or touch, exactly (the same pairs on every
    /// backend), into `out` (cleared first) as `[min, max]` in canonical order (ascending; a
    /// candidate given twice is listed twice); `out = None` only counts. `Stats::tests` is the
    /// candidates tested, `Stats::pairs` those that touch.
    fn obb_pairs(
        &mut self,
        boxes: &[Obb],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats>;

    /// [`Self::obb_pairs`] for convex polygons in the plane (exact on both backends,
    /// docs/design.md §4.6).
    fn polygon_pairs(
        &mut self,
        polygons: &[Polygon],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats>;

    /// The contact of each of `pairs` (normal from the first shape towards the second), into
    /// `out` (cleared first), one a pair, in the pairs' order; the GPU's within the tolerance
    /// of docs/design.md §4.8 of the CPU's.
    fn sphere_contacts(
        &mut self,
        spheres: &[Sphere],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()>;

    /// [`Self::sphere_contacts`] for oriented boxes.
    fn obb_contacts(&mut self, boxes: &[Obb], pairs: &[Pair], out: &mut Vec<Contact>)
    -> Result<()>;

    /// [`Self::sphere_contacts`] for convex polygons, in the plane z = 0.
    fn polygon_contacts(
        &mut self,
        polygons: &[Polygon],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()>;
}

/// The error of a candidate list with a pair naming one shape twice (the check beside the
/// range check of [`crate::broadphase::check_candidates`]).
pub(crate) fn self_pair(k: usize, pair: Pair) -> Error {
    Error::invalid_argument(
        "candidates",
        format!(
            "candidate pair {k} = {pair:?} pairs object {} with itself",
            pair[0]
        ),
    )
}
