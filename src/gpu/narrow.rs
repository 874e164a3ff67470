//! [`NarrowPhase`] on the GPU: [`GpuSat`]'s host-fed candidates and [`GpuContacts`] behind the
//! trait the CPU implements too (docs/design.md §4.9). The stages are made on first use: a
//! caller that only wants contacts compiles no SAT kernel.

use crate::broadphase::narrow::{NarrowPhase, contacts_into, pairs_into};
use crate::broadphase::{Pair, Stats};
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::geom::obb::{Obb, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet};
use crate::geom::sphere::Sphere;
use crate::gpu::boxes::sat::GpuSat;
use crate::gpu::contacts::GpuContacts;
use crate::gpu::context::GpuContext;
use std::sync::Arc;

/// The GPU's narrow phase on one device: the same pairs as `cpu::CpuNarrowPhase`
/// (exact: the device's unsure pairs settled on the host), contacts within the tolerance of
/// docs/design.md §4.8. Its calls block on the device: natively only (in a browser's page,
/// where no call may block, they fail with [`crate::Error::Unsupported`]; the page uses
/// [`crate::gpu::GpuContacts`]' and the box pipeline's async forms).
pub struct GpuNarrowPhase {
    ctx: Arc<GpuContext>,
    sat: Option<GpuSat>,
    contacts: Option<GpuContacts>,
}

impl GpuNarrowPhase {
    /// A narrow phase on `ctx`'s device.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        Self {
            ctx,
            sat: None,
            contacts: None,
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

    /// `run` on the contact stage into `out` (cleared first), left empty where it fails.
    fn with_contacts(
        &mut self,
        out: &mut Vec<Contact>,
        run: impl FnOnce(&mut GpuContacts, &GpuContext, &mut Vec<Contact>) -> Result<()>,
    ) -> Result<()> {
        let ctx = self.ctx.clone();
        contacts_into(out, |out| run(self.contacts()?, &ctx, out))
    }

    fn contacts(&mut self) -> Result<&mut GpuContacts> {
        if self.contacts.is_none() {
            self.contacts = Some(GpuContacts::new(&self.ctx)?);
        }
        Ok(self.contacts.as_mut().expect("made above"))
    }
}

impl NarrowPhase for GpuNarrowPhase {
    fn obb_pairs(
        &mut self,
        boxes: &[Obb],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            validate_obbs(boxes)?;
            let ctx = self.ctx.clone();
            // GpuSat checks the candidates and sorts its list (its stage `order`).
            self.sat()?.obb_pairs(&ctx, boxes, candidates, out)
        })
    }

    fn polygon_pairs(
        &mut self,
        polygons: &[Polygon],
        candidates: &[Pair],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        pairs_into(out, |out| {
            let set = PolygonSet::new(polygons)?;
            let ctx = self.ctx.clone();
            self.sat()?.polygon_pairs(&ctx, &set, candidates, out)
        })
    }

    fn sphere_contacts(
        &mut self,
        spheres: &[Sphere],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        self.with_contacts(out, |contacts, ctx, out| {
            contacts.sphere_contacts(ctx, spheres, pairs, out)
        })
    }

    fn obb_contacts(
        &mut self,
        boxes: &[Obb],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        self.with_contacts(out, |contacts, ctx, out| {
            contacts.obb_contacts(ctx, boxes, pairs, out)
        })
    }

    fn polygon_contacts(
        &mut self,
        polygons: &[Polygon],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        self.with_contacts(out, |contacts, ctx, out| {
            contacts.polygon_contacts(ctx, polygons, pairs, out)
        })
    }
}
