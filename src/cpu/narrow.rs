//! [`NarrowPhase`] on the CPU: the exact separating-axis filters of [`crate::cpu::sat`] and the
//! contacts of [`crate::cpu::contacts`] behind the trait the GPU implements too
//! (docs/design.md §4.9).

use crate::broadphase::narrow::{NarrowPhase, contacts_into, pairs_into};
use crate::broadphase::{Clock, Pair, Stats, orient_and_canonicalize};
use crate::cpu::{contacts, sat};
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::geom::obb::{Obb, validate_obbs};
use crate::geom::polygon::Polygon;
use crate::geom::sphere::Sphere;
use web_time::Instant;

/// The CPU's narrow phase: exact, on the calling thread's rayon pool. Keeps a list between
/// calls for counting (`out = None`).
#[derive(Default)]
pub struct CpuNarrowPhase {
    counted: Vec<Pair>,
}

impl CpuNarrowPhase {
    /// Runs `filter` (which clears its list and keeps the touching candidates in their order)
    /// into the caller's list or the kept one, then puts the list in canonical order.
    fn filtered(
        &mut self,
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
        stats.stage("sat", start.elapsed().as_secs_f64(), Clock::Wall);
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

impl NarrowPhase for CpuNarrowPhase {
    fn obb_pairs(
        &mut self,
        boxes: &[Obb],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            // No boxes: no candidate can name one (the check below says so), no pairs.
            validate_obbs(boxes)?;
            self.filtered(candidates.len(), out, |list| {
                sat::obb_pairs_unordered(boxes, candidates, list)
            })
        })
    }

    fn polygon_pairs(
        &mut self,
        polygons: &[Polygon],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            self.filtered(candidates.len(), out, |list| {
                sat::polygon_pairs_unordered(polygons, candidates, list)
            })
        })
    }

    fn sphere_contacts(
        &mut self,
        spheres: &[Sphere],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_into(out, |out| contacts::sphere_contacts(spheres, pairs, out))
    }

    fn obb_contacts(
        &mut self,
        boxes: &[Obb],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_into(out, |out| contacts::obb_contacts(boxes, pairs, out))
    }

    fn polygon_contacts(
        &mut self,
        polygons: &[Polygon],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        contacts_into(out, |out| contacts::polygon_contacts(polygons, pairs, out))
    }
}
