//! The exact settling of what the SAT stage leaves unsure (docs/design.md §4.2, §4.6): the
//! frame's shapes, and the candidates oriented so that an unsure pair comes back reversed.

use crate::broadphase::Pair;
use crate::geom::obb::Obb;
use crate::geom::polygon::{Polygon, PolygonSet};
use crate::geom::sat::polygons_overlap;

/// The shapes a frame's unsure pairs are settled on, exactly, on the host (docs/design.md §4.2,
/// §4.6).
#[derive(Clone, Copy)]
pub enum Exact<'a> {
    /// Oriented boxes.
    Boxes(&'a [Obb]),
    /// Convex polygons.
    Polygons(&'a [Polygon]),
    /// Convex polygons as one flat set.
    PolygonSet(&'a PolygonSet),
}

impl Exact<'_> {
    /// No shapes: for stages that list no unsure pairs (the broad phase alone, axis-aligned
    /// boxes).
    pub const NONE: Exact<'static> = Exact::Boxes(&[]);

    /// Whether shapes `i` and `j` overlap, exactly.
    pub fn overlaps(self, i: usize, j: usize) -> bool {
        match self {
            Exact::Boxes(b) => b[i].overlaps(&b[j]),
            Exact::Polygons(p) => p[i].overlaps(&p[j]),
            Exact::PolygonSet(s) => polygons_overlap(s.polygon(i), s.polygon(j)),
        }
    }
}

/// `candidates`, each as `(min, max)`: unsure pairs come back reversed.
pub(super) fn oriented(candidates: &[Pair]) -> std::borrow::Cow<'_, [Pair]> {
    if candidates.iter().any(|p| p[0] > p[1]) {
        candidates
            .iter()
            .map(|p| [p[0].min(p[1]), p[0].max(p[1])])
            .collect()
    } else {
        candidates.into()
    }
}
