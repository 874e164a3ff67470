//! Contacts of touching pairs on the CPU, batched: one [`Contact`] per given pair, in the pairs'
//! order, in parallel (docs/design.md §4.8; the one-pair functions and the conventions are
//! [`crate::geom::contact`]'s).
//!
//! ```
//! use glam::{Quat, Vec3};
//! use sweepfan::{Obb, cpu};
//!
//! let floor = Obb::axis_aligned(Vec3::ZERO, Vec3::new(10.0, 10.0, 1.0));
//! let crate_ = Obb::axis_aligned(Vec3::new(0.0, 0.0, 1.45), Vec3::splat(0.5));
//! let boxes = [floor, crate_];
//! let (pairs, _) = cpu::sat::obb_overlaps(&boxes)?;
//! let mut contacts = Vec::new();
//! cpu::contacts::obb_contacts(&boxes, &pairs, &mut contacts)?;
//! let c = &contacts[0];
//! assert_eq!(c.normal, Vec3::Z); // from box 0 towards box 1
//! assert!((c.depth - 0.05).abs() < 1e-6);
//! assert_eq!(c.points().len(), 4); // the crate's bottom corners
//! # Ok::<(), sweepfan::Error>(())
//! ```

use crate::broadphase::Pair;
use crate::cpu::sat::check_candidates;
use crate::error::Result;
use crate::geom::contact::{Contact, obb_contact, polygon_contact, sphere_contact};
use crate::geom::obb::{Obb, obb_frames, validate_obbs};
use crate::geom::polygon::Polygon;
use crate::geom::sphere::{Sphere, validate_spheres};
use rayon::prelude::*;

/// Pairs per parallel task: a contact takes tens to hundreds of nanoseconds.
const CHUNK: usize = 1 << 10;

/// Replaces `out` with `contact(i, j)` for each pair `[i, j]`, in order, in parallel.
fn each_pair(
    pairs: &[Pair],
    out: &mut Vec<Contact>,
    contact: impl Fn(usize, usize) -> Contact + Sync,
) {
    out.clear();
    out.resize(pairs.len(), Contact::default());
    out.par_chunks_mut(CHUNK)
        .zip(pairs.par_chunks(CHUNK))
        .for_each(|(out, pairs)| {
            for (c, p) in out.iter_mut().zip(pairs) {
                *c = contact(p[0] as usize, p[1] as usize);
            }
        });
}

/// The contacts of sphere pairs (each `[i, j]`: the normal from `i` towards `j`), into `out`
/// (cleared first), one per pair in order. Spheres are validated; a pair naming an object past
/// the slice is an error.
pub fn sphere_contacts(spheres: &[Sphere], pairs: &[Pair], out: &mut Vec<Contact>) -> Result<()> {
    if !spheres.is_empty() {
        validate_spheres(spheres)?;
    }
    check_candidates(spheres.len(), pairs)?;
    each_pair(pairs, out, |i, j| sphere_contact(&spheres[i], &spheres[j]));
    Ok(())
}

/// The contacts of oriented-box pairs, as [`sphere_contacts`]: boxes are validated
/// ([`crate::geom::obb::validate_obbs`]: a non-unit quaternion, NaN or a negative extent is an
/// error naming the box).
pub fn obb_contacts(boxes: &[Obb], pairs: &[Pair], out: &mut Vec<Contact>) -> Result<()> {
    if !boxes.is_empty() {
        validate_obbs(boxes)?;
    }
    check_candidates(boxes.len(), pairs)?;
    let frames = obb_frames(boxes);
    each_pair(pairs, out, |i, j| obb_contact(&frames[i], &frames[j]));
    Ok(())
}

/// The contacts of convex-polygon pairs (validated when made: [`Polygon::new`]), as
/// [`sphere_contacts`], in the plane z = 0.
pub fn polygon_contacts(
    polygons: &[Polygon],
    pairs: &[Pair],
    out: &mut Vec<Contact>,
) -> Result<()> {
    check_candidates(polygons.len(), pairs)?;
    each_pair(pairs, out, |i, j| {
        polygon_contact(polygons[i].vertices(), polygons[j].vertices())
    });
    Ok(())
}
