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
use crate::broadphase::cancel;
use crate::broadphase::check_candidates;
use crate::error::Result;
use crate::geom::contact::{
    Contact, ContactShape, obb_contact_unsettled, polygon_contact, settle, sphere_contact,
};
use crate::geom::obb::{Obb, obb_frames, validate_obbs};
use crate::geom::polygon::Polygon;
use crate::geom::sphere::{Sphere, validate_spheres};
use rayon::prelude::*;

/// Pairs per parallel task: a contact takes tens to hundreds of nanoseconds.
const CHUNK: usize = 1 << 10;

/// Replaces `out` with `contact(i, j)` for each pair `[i, j]`, in order, in parallel; the
/// caller's cancellation looked at before each pair (`Err(Error::Interrupted)`, `out`
/// unfinished, once it is set).
fn each_pair(
    pairs: &[Pair],
    out: &mut Vec<Contact>,
    contact: impl Fn(usize, usize) -> Contact + Sync,
) -> Result<()> {
    let token = cancel::current();
    out.clear();
    let what = format!("the contacts of {} pairs", pairs.len());
    crate::broadphase::memory::reserve(out, pairs.len(), &what)?;
    // Written in place in parallel (a serial `resize` first filled 390 MB of 4.7M contacts on
    // one thread, a third of the call); once cancelled, the rest are defaults, then the error.
    out.par_extend(pairs.par_iter().with_min_len(CHUNK).map(|p| {
        if cancel::stopped(&token) {
            Contact::default()
        } else {
            contact(p[0] as usize, p[1] as usize)
        }
    }));
    cancel::check(&token)
}

/// The contacts of sphere pairs (each `[i, j]`: the normal from `i` towards `j`), into `out`
/// (cleared first), one per pair in order. Spheres are validated; a pair naming an object past
/// the slice is an error.
pub fn sphere_contacts(spheres: &[Sphere], pairs: &[Pair], out: &mut Vec<Contact>) -> Result<()> {
    validate_spheres(spheres)?;
    check_candidates(spheres.len(), pairs)?;
    each_pair(pairs, out, |i, j| sphere_contact(&spheres[i], &spheres[j]))
}

/// The contacts of oriented-box pairs, as [`sphere_contacts`]: boxes are validated
/// ([`crate::geom::obb::validate_obbs`]: a non-unit quaternion, NaN or a negative extent is an
/// error naming the box).
pub fn obb_contacts(boxes: &[Obb], pairs: &[Pair], out: &mut Vec<Contact>) -> Result<()> {
    validate_obbs(boxes)?;
    check_candidates(boxes.len(), pairs)?;
    let frames = obb_frames(boxes);
    each_pair(pairs, out, |i, j| {
        let unsettled = obb_contact_unsettled(&frames[i], &frames[j]);
        settle(unsettled, || boxes[i].overlaps(&boxes[j]))
    })
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
        polygon_contact(&polygons[i], &polygons[j])
    })
}

pub use crate::geom::contact::CONTACT_REL;

/// How a device's contacts compare with the CPU's ([`compare_contacts`]).
#[derive(Clone, Debug, Default)]
pub struct ContactCheck {
    /// Pairs compared.
    pub pairs: usize,
    /// Pairs whose depths differ by more than [`CONTACT_REL`] of the extent, or whose point
    /// counts lie outside 1..=4 on a touching pair (wrong), with the first such.
    pub wrong: usize,
    /// The first wrong pair, both contacts shown.
    pub first_wrong: Option<String>,
    /// Largest depth difference relative to the pair's extent.
    pub worst_depth: f32,
    /// Pairs with another normal at the same depth: two axes tied within rounding. A device's
    /// normal that differs from the CPU's is a tie only where it is a unit vector along which
    /// the pair's depth (from its first shape towards its second) is the CPU's within
    /// [`CONTACT_REL`]; any other differing normal (flipped, off any least axis) is wrong.
    pub ties: usize,
}

/// Compares `device` contacts of `pairs` of `shapes` with the CPU's `cpu`: every depth within
/// [`CONTACT_REL`] of the pair's extent ([`ContactShape::pair_extent`]); a touching pair (on the
/// CPU) needs 1 to 4 points on the device, unless its depth lies within the tolerance of 0 (the
/// device may call it touching or not); a normal may differ only where the depths tie: the
/// shapes reach as deep along the device's normal as the CPU's depth ([`ContactCheck::ties`]).
pub fn compare_contacts<S: ContactShape>(
    shapes: &[S],
    pairs: &[Pair],
    device: &[Contact],
    cpu: &[Contact],
) -> ContactCheck {
    let mut check = ContactCheck {
        pairs: pairs.len(),
        ..Default::default()
    };
    for ((p, g), c) in pairs.iter().zip(device).zip(cpu) {
        let (a, b) = (&shapes[p[0] as usize], &shapes[p[1] as usize]);
        let (extent, along) = (a.pair_extent(b), a.depth_along(b, g.normal));
        let extent = extent.max(f32::MIN_POSITIVE);
        let off = (g.depth - c.depth).abs() / extent;
        check.worst_depth = check.worst_depth.max(off);
        let edge = c.depth.abs() <= CONTACT_REL * extent;
        let bad_count = c.count > 0 && !edge && !(1..=4).contains(&g.count);
        // A NaN anywhere (a normal, a depth) fails the comparisons.
        let same_normal = g.normal.dot(c.normal) >= 1.0 - 1e-4;
        let other_normal = !same_normal;
        // Another normal ties only as a unit vector along which the pair is as deep.
        let tie = (g.normal.length() - 1.0).abs() <= 1e-4
            && (along - f64::from(c.depth)).abs() <= f64::from(CONTACT_REL * extent);
        let depth_ok = off <= CONTACT_REL;
        if !depth_ok || bad_count || (other_normal && !tie) {
            check.wrong += 1;
            if check.first_wrong.is_none() {
                check.first_wrong = Some(format!("pair {p:?}: device {g:?}, cpu {c:?}"));
            }
        } else if other_normal {
            check.ties += 1;
        }
    }
    if device.len() != cpu.len() {
        check.wrong = check.wrong.max(1);
        check.first_wrong.get_or_insert_with(|| {
            format!(
                "{} contacts from the device, {} from the CPU",
                device.len(),
                cpu.len()
            )
        });
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// A device's contact with `normal` in place of the CPU's, the depth kept.
    fn with_normal(cpu: &Contact, normal: Vec3) -> Contact {
        Contact { normal, ..*cpu }
    }

    /// Two unit cubes offset by 1.5 in x and y: 0.5 deep along both x and y (a true tie), 2
    /// along z. Only the other least axis passes as a tie; a flipped normal, the z axis and a
    /// normal that is not a unit vector are wrong, though the depth is the CPU's.
    #[test]
    fn a_different_normal_passes_only_as_a_real_tie() {
        let boxes = [
            Obb::axis_aligned(Vec3::ZERO, Vec3::ONE),
            Obb::axis_aligned(Vec3::new(1.5, 1.5, 0.0), Vec3::ONE),
        ];
        let pairs = [[0, 1]];
        let mut cpu = Vec::new();
        obb_contacts(&boxes, &pairs, &mut cpu).unwrap();
        assert_eq!(cpu[0].depth, 0.5);
        let least = [Vec3::X, Vec3::Y];
        assert!(least.contains(&cpu[0].normal), "{:?}", cpu[0]);
        let other = if cpu[0].normal == Vec3::X {
            Vec3::Y
        } else {
            Vec3::X
        };
        let check = compare_contacts(&boxes, &pairs, &[with_normal(&cpu[0], other)], &cpu);
        assert_eq!((check.wrong, check.ties), (0, 1), "{check:?}");
        for bad in [-cpu[0].normal, -other, Vec3::Z, 2.0 * other] {
            let check = compare_contacts(&boxes, &pairs, &[with_normal(&cpu[0], bad)], &cpu);
            assert_eq!((check.wrong, check.ties), (1, 0), "{bad}: {check:?}");
        }
        let same = compare_contacts(&boxes, &pairs, &cpu, &cpu);
        assert_eq!((same.wrong, same.ties), (0, 0));
    }

    /// A real tie 1e5 from the origin, where f32 corners are 6e-3 off: still a tie (the depth
    /// along a normal is taken from the centres and the projected radii in f64).
    #[test]
    fn a_tie_far_from_the_origin_is_a_tie() {
        let at = Vec3::new(1e5, 1e5, 0.0);
        let boxes = [
            Obb::axis_aligned(at, Vec3::splat(0.3)),
            Obb::axis_aligned(at + Vec3::new(0.4453125, 0.4453125, 0.0), Vec3::splat(0.3)),
        ];
        let pairs = [[0, 1]];
        let mut cpu = Vec::new();
        obb_contacts(&boxes, &pairs, &mut cpu).unwrap();
        let other = if cpu[0].normal == Vec3::X {
            Vec3::Y
        } else {
            Vec3::X
        };
        let check = compare_contacts(&boxes, &pairs, &[with_normal(&cpu[0], other)], &cpu);
        assert_eq!((check.wrong, check.ties), (0, 1), "{:?} {check:?}", cpu[0]);
        let nan = with_normal(&cpu[0], Vec3::NAN);
        let check = compare_contacts(&boxes, &pairs, &[nan], &cpu);
        assert_eq!(check.wrong, 1, "a NaN normal is wrong");
    }

    /// Spheres have one least axis: any other normal at the CPU's depth is wrong.
    #[test]
    fn a_sphere_contact_has_no_ties() {
        let spheres = [
            Sphere::new(Vec3::ZERO, 1.0),
            Sphere::new(Vec3::new(1.5, 0.0, 0.0), 1.0),
        ];
        let pairs = [[0, 1]];
        let mut cpu = Vec::new();
        sphere_contacts(&spheres, &pairs, &mut cpu).unwrap();
        assert_eq!((cpu[0].normal, cpu[0].depth), (Vec3::X, 0.5));
        for bad in [Vec3::Y, -Vec3::X] {
            let device = [with_normal(&cpu[0], bad)];
            let check = compare_contacts(&spheres, &pairs, &device, &cpu);
            assert_eq!((check.wrong, check.ties), (1, 0), "{bad}: {check:?}");
        }
    }
}
