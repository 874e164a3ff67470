//! The narrow phase as one job on either backend (docs/design.md §4.9): which of the broad
//! phase's candidate pairs truly touch, and the contact of each touching pair.
//! `cpu::CpuNarrowPhase` and `gpu::GpuNarrowPhase` implement it with the same
//! signatures, so a simulation swaps backends without touching its loop.

use crate::broadphase::narrow_by_id::{contacts_by_id, pairs_by_id};
use crate::broadphase::{Clock, Id, IdPair, Pair, Stats, cancel, check_candidates};
use crate::broadphase::{cleared_on_error, orient_and_canonicalize};
use crate::error::{Error, Result};
use crate::geom::contact::Contact;
use crate::geom::shapes::Shapes;
use crate::geom::sphere::{Sphere, validate_spheres};
use rayon::prelude::*;
use web_time::Instant;

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
/// use sweepfan::{Contact, NarrowPhase, Obb, Pair, Shapes, cpu::CpuNarrowPhase};
/// use glam::{Quat, Vec3};
///
/// let cube = |x: f32, turn: f32| Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::splat(0.5), Quat::from_rotation_z(turn));
/// let boxes = [cube(0.0, 0.0), cube(1.1, 0.0), cube(1.1, 0.785), cube(5.0, 0.0)];
/// let candidates: Vec<Pair> = vec![[2, 0], [0, 1], [0, 3]]; // as a broad phase might give them
/// let mut narrow = CpuNarrowPhase::default(); // or GpuNarrowPhase::new(context)
/// let mut touching = Vec::new();
/// let stats = narrow.pairs(Shapes::Obbs(&boxes), &candidates, Some(&mut touching))?;
/// assert_eq!(touching, [[0, 2]]); // the turned cube reaches x = 0.39; the others are apart
/// assert_eq!((stats.tests, stats.pairs), (3, 1));
/// let mut contacts: Vec<Contact> = Vec::new();
/// narrow.contacts(Shapes::Obbs(&boxes), &touching, &mut contacts)?;
/// assert!(contacts[0].depth > 0.0);
/// # Ok::<(), sweepfan::Error>(())
/// ```
pub trait NarrowPhase {
    /// The candidates whose shapes overlap or touch, exactly (the same pairs on every backend:
    /// boxes and polygons by their separating axes, docs/design.md §4.6; spheres by the exact
    /// touch test, on the host on either backend, as a sphere broad phase's pairs already are),
    /// into `out` (cleared first) as `[min, max]` in canonical order (ascending; a candidate
    /// given twice is listed twice); `out = None` only counts. `Stats::tests` is the candidates
    /// tested, `Stats::pairs` those that touch.
    fn pairs(
        &mut self,
        shapes: Shapes<'_>,
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats>;

    /// The contact of each of `pairs` (normal from the first shape towards the second), into
    /// `out` (cleared first), one a pair, in the pairs' order; the GPU's within the tolerance
    /// of docs/design.md §4.8 of the CPU's. Polygons' contacts lie in the plane z = 0.
    fn contacts(
        &mut self,
        shapes: Shapes<'_>,
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()>;

    /// [`Self::pairs`] by the caller's ids, as `BoxBroadPhase` gives its pairs: `ids[k]` names
    /// shape `k` (each id once), the candidates are pairs of ids (any order and orientation),
    /// and the touching ones come into `out` (cleared first) as `[min, max]` by id, sorted. An
    /// id given twice is an [`Error::InvalidId`](crate::Error::InvalidId), a candidate naming an
    /// id not among `ids` (or one id twice) an [`Error::InvalidArgument`] naming the candidate;
    /// `ids` of another length than the shapes an
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch).
    ///
    /// ```
    /// use sweepfan::{Aabb, BoxBroadPhase, NarrowPhase, Obb, Shapes, cpu::CpuNarrowPhase};
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
    /// let shapes = Shapes::Obbs(&boxes);
    /// CpuNarrowPhase::default().pairs_by_id(&ids, shapes, broad.pairs(), Some(&mut touching))?;
    /// assert_eq!(touching, [[10, 40], [40, 70]]); // 10 and 70 are apart
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    fn pairs_by_id(
        &mut self,
        ids: &[Id],
        shapes: Shapes<'_>,
        candidates: &[IdPair],
        out: Option<&mut Vec<IdPair>>,
    ) -> Result<Stats> {
        pairs_by_id(ids, shapes.len(), candidates, out, |c, o| {
            self.pairs(shapes, c, o)
        })
    }

    /// [`Self::contacts`] by the caller's ids (`ids[k]` names shape `k`): one contact a pair of
    /// ids, in their order, the normal from the first id's shape towards the second's. Errors
    /// as [`Self::pairs_by_id`]'s, naming the pair.
    fn contacts_by_id(
        &mut self,
        ids: &[Id],
        shapes: Shapes<'_>,
        pairs: &[IdPair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_by_id(ids, shapes.len(), pairs, out, |p, o| {
            self.contacts(shapes, p, o)
        })
    }
}

/// The stage of the spheres' exact touch test in a narrow phase's [`Stats`] (boxes' and
/// polygons' is `sat`).
pub(crate) const TOUCH: &str = "touch";

/// A host filter of candidates, the list it keeps between calls for counting (`out = None`).
#[derive(Default)]
pub(crate) struct HostFilter {
    counted: Vec<Pair>,
}

impl HostFilter {
    /// Runs `filter` (which clears its list and keeps the touching candidates in their order)
    /// into the caller's list or the kept one, then puts the list in canonical order (the
    /// stages `stage`, the filter's name, and `order`).
    pub(crate) fn run(
        &mut self,
        stage: &'static str,
        tests: usize,
        out: Option<&mut Vec<Pair>>,
        filter: impl FnOnce(&mut Vec<Pair>) -> Result<()>,
    ) -> Result<Stats> {
        let start = Instant::now();
        let counting = out.is_none();
        let list = match out {
            Some(list) => list,
            None => &mut self.counted,
        };
        if let Err(e) = filter(list) {
            list.clear();
            return Err(e);
        }
        let mut stats = Stats {
            tests: tests as u64,
            pairs: list.len() as u64,
            ..Stats::default()
        };
        stats.stage(stage, start.elapsed().as_secs_f64(), Clock::Wall);
        if counting {
            list.clear();
        } else {
            let start = Instant::now();
            orient_and_canonicalize(list);
            stats.stage("order", start.elapsed().as_secs_f64(), Clock::Wall);
        }
        Ok(stats)
    }
}

/// The candidates whose spheres touch (exactly, `Sphere::touches`), in their order, into `out`
/// (cleared first): the spheres validated and the candidates checked first.
pub(crate) fn sphere_pairs_unordered(
    spheres: &[Sphere],
    candidates: &[Pair],
    out: &mut Vec<Pair>,
) -> Result<()> {
    validate_spheres(spheres)?;
    check_candidates(spheres.len(), candidates)?;
    out.clear();
    filter_in_chunks(candidates, out, |p| {
        spheres[p[0] as usize].touches(&spheres[p[1] as usize])
    })
}

/// Appends to `out`, in candidate order, the candidates that pass `keep`, in parallel. Large
/// fixed chunks (one sequential filter each, then one copy) cost far less than rayon's per-item
/// splitting when a test takes tens of nanoseconds. The caller's cancellation is looked at every
/// [`cancel::PAIRS_PER_LOOK`] pairs (a pair of polygons with thousands of vertices takes
/// milliseconds): `Err(Error::Interrupted)`, `out` unfinished, once it is set.
pub(crate) fn filter_in_chunks(
    candidates: &[Pair],
    out: &mut Vec<Pair>,
    keep: impl Fn(&Pair) -> bool + Sync,
) -> Result<()> {
    const CHUNK: usize = 1 << 13;
    let token = cancel::current();
    let filter = |chunk: &[Pair], kept: &mut Vec<Pair>| {
        for block in chunk.chunks(cancel::PAIRS_PER_LOOK) {
            if cancel::stopped(&token) {
                return;
            }
            kept.extend(block.iter().filter(|p| keep(p)));
        }
    };
    if candidates.len() <= CHUNK {
        filter(candidates, out);
    } else {
        let parts: Vec<Vec<Pair>> = candidates
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut kept = Vec::new();
                filter(chunk, &mut kept);
                kept
            })
            .collect();
        out.reserve(parts.iter().map(Vec::len).sum());
        for part in parts {
            out.extend_from_slice(&part);
        }
    }
    cancel::check(&token)
}

/// A backend's filter (an implementation of [`NarrowPhase::pairs`]): `run` into `out`, cleared
/// first (`None` only counts), the list left empty where it fails (the trait's promise: nothing
/// half written).
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

/// A backend's contacts (an implementation of [`NarrowPhase::contacts`]): `run` into `out`,
/// cleared first, left empty where it fails.
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
