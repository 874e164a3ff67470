//! [`NarrowPhase`] on the CPU: the exact separating-axis filters of [`crate::cpu::sat`] (boxes,
//! polygons), the exact touch test (spheres) and the contacts of [`crate::cpu::contacts`]
//! behind the trait the GPU implements too (docs/design.md §4.9).

use crate::broadphase::narrow::{
    HostFilter, NarrowPhase, TOUCH, contacts_into, pairs_into, sphere_pairs_unordered,
};
use crate::broadphase::{Pair, Stats};
use crate::cpu::{contacts, sat};
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::geom::obb::validate_obbs;
use crate::geom::shapes::Shapes;

/// The CPU's narrow phase: exact, on the calling thread's rayon pool. Keeps a list between
/// calls for counting (`out = None`).
#[derive(Default)]
pub struct CpuNarrowPhase {
    filter: HostFilter,
}

impl NarrowPhase for CpuNarrowPhase {
    fn pairs(
        &mut self,
        shapes: Shapes<'_>,
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            if let Shapes::Obbs(boxes) = shapes {
                // No boxes: no candidate can name one (the check below says so), no pairs.
                validate_obbs(boxes)?;
            }
            let stage = if let Shapes::Spheres(_) = shapes {
                TOUCH
            } else {
                "sat"
            };
            self.filter
                .run(stage, candidates.len(), out, |list| match shapes {
                    Shapes::Spheres(spheres) => sphere_pairs_unordered(spheres, candidates, list),
                    Shapes::Obbs(boxes) => sat::obb_pairs_unordered(boxes, candidates, list),
                    Shapes::Polygons(polygons) => {
                        sat::polygon_pairs_unordered(polygons, candidates, list)
                    }
                })
        })
    }

    fn contacts(
        &mut self,
        shapes: Shapes<'_>,
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_into(out, |out| match shapes {
            Shapes::Spheres(spheres) => contacts::sphere_contacts(spheres, pairs, out),
            Shapes::Obbs(boxes) => contacts::obb_contacts(boxes, pairs, out),
            Shapes::Polygons(polygons) => contacts::polygon_contacts(polygons, pairs, out),
        })
    }
}
