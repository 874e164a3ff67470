//! What reads the SAT stage's output list on the device, in the frame's one submission: the
//! frame events (`GpuEvents`) and the contacts (`GpuContacts`), and the settling of the pairs
//! the device left unsure together with their contacts (docs/design.md §4.8).

use crate::broadphase::Pair;
use crate::error::Result;
use crate::geom::contact::Contact;
use crate::gpu::boxes::sat::{Exact, GpuSat, SatCandidates, SatOutput, SatReadback, SatShapes};
use crate::gpu::contacts::{ContactsReadback, GpuContacts};
use crate::gpu::context::GpuContext;
use crate::gpu::events::{EventsReadback, GpuEvents, PartialEvents};
use crate::gpu::readback::Readback;

/// The stages after the SAT stage, each present when asked for.
#[derive(Default)]
pub(crate) struct AfterSat {
    /// Frame events of the overlapping pairs, when tracked.
    pub events: Option<Box<GpuEvents>>,
    /// The contact kernels, made by the first frame that asks for contacts.
    pub contacts: Option<Box<GpuContacts>>,
}

/// One SAT run to record: its shapes and candidates, the shape count, whether the overlapping
/// pairs are stored and whether their contacts are computed.
pub(crate) struct SatRun<'a> {
    pub shapes: SatShapes<'a>,
    pub candidates: SatCandidates<'a>,
    pub n: u32,
    pub store: bool,
    pub contacts: bool,
}

/// Where a SAT run and its followers put their results in the readback.
pub(crate) struct SatPlans {
    pub sat: SatReadback,
    events: Option<EventsReadback>,
    contacts: Option<ContactsReadback>,
}

/// What the followers left in the readback: events and contacts as far as planned.
#[derive(Default)]
pub(crate) struct Followed {
    pub events: Option<PartialEvents>,
    pub contacts: Option<Vec<Contact>>,
}

impl AfterSat {
    /// Records the SAT stage over `run.candidates` into `enc`, then the events (when tracked
    /// and the pairs stored) and the contacts (when asked for) of its output list, and plans
    /// the readback of all three into `rb`.
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        rb: &mut Readback,
        sat: &mut GpuSat,
        run: SatRun<'_>,
    ) -> Result<SatPlans> {
        sat.encode(ctx, enc, run.shapes, run.candidates, run.store)?;
        let events = match (&mut self.events, run.store) {
            (Some(ev), true) => {
                ev.encode(ctx, enc, &sat.output_list(), run.n, true)?;
                Some(ev.plan_readback(rb, true))
            }
            _ => None,
        };
        let contacts = if run.contacts && run.store {
            let kernel = match &mut self.contacts {
                Some(k) => k,
                slot => slot.insert(Box::new(GpuContacts::new(ctx)?)),
            };
            kernel.encode_resident(ctx, enc, run.shapes, &sat.output_list())?;
            Some(kernel.plan_readback(rb))
        } else {
            None
        };
        Ok(SatPlans {
            sat: sat.plan_readback(rb, run.store),
            events,
            contacts,
        })
    }

    /// The followers' results from the mapped bytes, for a SAT `output` whose list fit (else
    /// none: the run is repeated, larger).
    pub fn read(&self, bytes: &[u8], plans: &SatPlans, output: &SatOutput) -> Result<Followed> {
        if !output.fits() {
            return Ok(Followed::default());
        }
        Ok(Followed {
            events: match (&self.events, &plans.events) {
                (Some(ev), Some(plan)) => Some(ev.events_from(bytes, plan)),
                _ => None,
            },
            contacts: match (&self.contacts, &plans.contacts) {
                (Some(k), Some(plan)) => Some(k.contacts_from(bytes, plan, output.listed)?),
                _ => None,
            },
        })
    }
}

/// Settles a finished SAT `output` (its whole list read) with the `contacts` of its list, in
/// the list's order: an unsure pair, listed reversed, is kept in canonical order with its
/// contact when it overlaps on the host's exact test and dropped with it when not. The pairs
/// and contacts come back sorted by pair, in the lists they came in. `None` when the list did
/// not fit.
pub(crate) fn settle_with_contacts(
    output: SatOutput,
    mut contacts: Vec<Contact>,
    exact: Exact,
) -> Option<Result<(Vec<Pair>, Vec<Contact>)>> {
    let mut pairs = output.pairs?;
    if pairs.len() != contacts.len() {
        return Some(Err(crate::error::Error::gpu(
            crate::error::GpuFailure::Inconsistent,
            format!(
                "{} SAT pairs read with {} contacts",
                pairs.len(),
                contacts.len()
            ),
        )));
    }
    let mut kept = 0;
    for at in 0..pairs.len() {
        let [i, j] = pairs[at];
        let pair = if i < j {
            [i, j]
        } else if exact.overlaps(j as usize, i as usize) {
            // Unsure (docs/design.md §4.2), listed reversed; the kernel took it as (j, i).
            [j, i]
        } else {
            continue;
        };
        (pairs[kept], contacts[kept]) = (pair, contacts[at]);
        kept += 1;
    }
    pairs.truncate(kept);
    contacts.truncate(kept);
    let sorted = crate::gpu::contacts::sort_with_contacts(&mut pairs, &mut contacts);
    Some(sorted.map(|()| (pairs, contacts)))
}
