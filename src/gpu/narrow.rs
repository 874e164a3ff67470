//! [`NarrowPhase`] on the GPU: [`GpuSat`]'s host-fed candidates and [`GpuContacts`] behind the
//! trait the CPU implements too (docs/design.md §4.9). The stages are made on first use: a
//! caller that only wants contacts compiles no SAT kernel.

use crate::broadphase::narrow::{
    HostFilter, NarrowPhase, TOUCH, contacts_into, pairs_into, sphere_pairs_unordered,
};
use crate::broadphase::{Pair, Stats};
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::geom::obb::validate_obbs;
use crate::geom::polygon::PolygonSet;
use crate::geom::shapes::Shapes;
use crate::gpu::boxes::sat::GpuSat;
use crate::gpu::contacts::GpuContacts;
use crate::gpu::context::GpuContext;
use std::sync::Arc;

/// The GPU's narrow phase on one device: the same pairs as `cpu::CpuNarrowPhase`
/// (exact: the device's unsure pairs settled on the host; spheres' pairs by the exact touch
/// test on the host, which costs less than a dispatch), contacts within the tolerance of
/// docs/design.md §4.8. Its device calls block on the device: natively only (in a browser's
/// page, where no call may block, they fail with [`crate::Error::Unsupported`]; the page uses
/// [`crate::gpu::GpuContacts`]' and the box pipeline's async forms).
pub struct GpuNarrowPhase {
    ctx: Arc<GpuContext>,
    sat: Option<GpuSat>,
    contacts: Option<GpuContacts>,
    host: HostFilter,
}

impl GpuNarrowPhase {
    /// A narrow phase on `ctx`'s device.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        Self {
            ctx,
            sat: None,
            contacts: None,
            host: HostFilter::default(),
        }
    }

    /// The device it runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    fn sat(&mut self) -> Result<&mut GpuSat> {
        if self.sat.is_none() {
            self.sat = Some(GpuSat::new(&self.ctx)?);
        }
        Ok(self.sat.as_mut().expect("made above"))
    }

    fn contact_stage(&mut self) -> Result<&mut GpuContacts> {
        if self.contacts.is_none() {
            self.contacts = Some(GpuContacts::new(&self.ctx)?);
        }
        Ok(self.contacts.as_mut().expect("made above"))
    }
}

impl NarrowPhase for GpuNarrowPhase {
    fn pairs(
        &mut self,
        shapes: Shapes<'_>,
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            let ctx = self.ctx.clone();
            // GpuSat checks the candidates and sorts its list (its stage `order`).
            match shapes {
                Shapes::Obbs(boxes) => {
                    validate_obbs(boxes)?;
                    self.sat()?.obb_pairs(&ctx, boxes, candidates, out)
                }
                Shapes::Polygons(polygons) => {
                    let set = PolygonSet::new(polygons)?;
                    self.sat()?.polygon_pairs(&ctx, &set, candidates, out)
                }
                // The exact touch test costs less than a dispatch: on the host, as the CPU's.
                Shapes::Spheres(spheres) => self.host.run(TOUCH, candidates.len(), out, |list| {
                    sphere_pairs_unordered(spheres, candidates, list)
                }),
            }
        })
    }

    fn contacts(
        &mut self,
        shapes: Shapes<'_>,
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        let ctx = self.ctx.clone();
        contacts_into(out, |out| {
            self.contact_stage()?.contacts(&ctx, shapes, pairs, out)
        })
    }
}
