//! The narrow phase as one job on either backend (docs/design.md §4.9): which of the broad
//! phase's candidate pairs truly touch, and the contact of each touching pair.
//! `cpu::CpuNarrowPhase` and `gpu::GpuNarrowPhase` implement it with the same
//! signatures, so a simulation swaps backends without touching its loop.

use crate::broadphase::narrow_by_id::{contacts_by_id, pairs_by_id};
use crate::broadphase::{Id, IdPair, Pair, Stats, cleared_on_error};
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

    /// [`Self::obb_pairs`] by the caller's ids, as `BoxBroadPhase` gives its pairs: `ids[k]`
    /// names `boxes[k]` (each id once), the candidates are pairs of ids (any order and
    /// orientation), and the touching ones come into `out` (cleared first) as `[min, max]` by
    /// id, sorted. An id given twice is an [`Error::InvalidId`](crate::Error::InvalidId), a
    /// candidate naming an id not among `ids` (or one id twice) an
    /// [`Error::InvalidArgument`] naming the candidate; `ids` of another length than `boxes` an
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
    ///
    /// ```
    /// use sweepfan::{Aabb, BoxBroadPhase, NarrowPhase, Obb, cpu::CpuNarrowPhase};
    /// use glam::{Quat, Vec3};
    ///
    /// let cube = |x: f32, y: f32, turn: f32| {
    ///     Obb::new(Vec3::new(x, y, 0.0), Vec3::splat(0.5), Quat::from_rotation_z(turn))
    /// };
    /// // Two cubes turned 45 degrees: 10's box reaches 70's only at the corner of their AABBs.
    /// let boxes = [cube(0.0, 0.0, 0.0), cube(1.1, 1.1, 0.785), cube(1.1, 0.0, 0.785)];
    /// let ids = [70, 10, 40];
    /// let mut broad = BoxBroadPhase::cpu();
    /// let aabbs: Vec<Aabb> = boxes.iter().map(Obb::aabb).collect();
    /// broad.set_many(&ids, &aabbs)?;
    /// broad.update()?;
    /// assert_eq!(broad.pairs(), [[10, 40], [10, 70], [40, 70]]); // their AABBs overlap
    /// let mut touching = Vec::new();
    /// CpuNarrowPhase::default().obb_pairs_by_id(&ids, &boxes, broad.pairs(), Some(&mut touching))?;
    /// assert_eq!(touching, [[10, 40], [40, 70]]); // 10 and 70 are apart
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    fn obb_pairs_by_id(
        &mut self,
        ids: &[Id],
        boxes: &[Obb],
        candidates: &[IdPair],
        out: Option<&mut Vec<IdPair>>,
    ) -> Result<Stats> {
        pairs_by_id(ids, boxes.len(), candidates, out, |c, o| {
            self.obb_pairs(boxes, c, o)
        })
    }

    /// [`Self::polygon_pairs`] by the caller's ids, as [`Self::obb_pairs_by_id`].
    fn polygon_pairs_by_id(
        &mut self,
        ids: &[Id],
        polygons: &[Polygon],
        candidates: &[IdPair],
        out: Option<&mut Vec<IdPair>>,
    ) -> Result<Stats> {
        pairs_by_id(ids, polygons.len(), candidates, out, |c, o| {
            self.polygon_pairs(polygons, c, o)
        })
    }

    /// [`Self::sphere_contacts`] by the caller's ids (`ids[k]` names `spheres[k]`): one
    /// contact a pair of ids, in their order, the normal from the first id's sphere towards
    /// the second's. Errors as [`Self::obb_pairs_by_id`]'s, naming the pair.
    fn sphere_contacts_by_id(
        &mut self,
        ids: &[Id],
        spheres: &[Sphere],
        pairs: &[IdPair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_by_id(ids, spheres.len(), pairs, out, |p, o| {
            self.sphere_contacts(spheres, p, o)
        })
    }

    /// [`Self::sphere_contacts_by_id`] for oriented boxes.
    fn obb_contacts_by_id(
        &mut self,
        ids: &[Id],
        boxes: &[Obb],
        pairs: &[IdPair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_by_id(ids, boxes.len(), pairs, out, |p, o| {
            self.obb_contacts(boxes, p, o)
        })
    }

    /// [`Self::sphere_contacts_by_id`] for convex polygons, in the plane z = 0.
    fn polygon_contacts_by_id(
        &mut self,
        ids: &[Id],
        polygons: &[Polygon],
        pairs: &[IdPair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_by_id(ids, polygons.len(), pairs, out, |p, o| {
            self.polygon_contacts(polygons, p, o)
        })
    }
}

/// A backend's filter (an implementation of [`NarrowPhase::obb_pairs`] or
/// [`NarrowPhase::polygon_pairs`]): `run` into `out`, cleared first (`None` only counts), the
/// list left empty where it fails (the trait's promise: nothing half written).
pub(crate) fn pairs_into(
    mut out: Option<&mut Vec<Pair>>,
    run: impl FnOnce(Option<&mut Vec<Pair>>) -> Result<Stats>,
) -> Result<Stats> {
    if let Some(list) = out.as_deref_mut() {
        list.clear();
    }
    let result = run(out.as_deref_mut());
    cleared_on_error(out, result)
}

/// A backend's contacts (an implementation of [`NarrowPhase::sphere_contacts`] and its
/// likes): `run` into `out`, cleared first, left empty where it fails.
pub(crate) fn contacts_into(
    out: &mut Vec<Contact>,
    run: impl FnOnce(&mut Vec<Contact>) -> Result<()>,
) -> Result<()> {
    out.clear();
    let result = run(out);
    if result.is_err() {
        out.clear();
    }
    result
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
