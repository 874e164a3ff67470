//! Spheres from the upload to their contacts in one submission (docs/design.md §4.8): the
//! sphere broad phase's resident frame, then the contact kernel over its pair list, then one
//! readback of the totals, the pairs and the contacts.

use super::{DeviceShapes, GpuContacts};
use crate::broadphase::{Clock, Pair, Stats, memory};
use crate::error::{Error, Result};
use crate::geom::contact::Contact;
use crate::geom::sphere::{Sphere, validate_spheres};
use crate::gpu::context::block::blocking;
use crate::gpu::context::{GpuContext, count_u32};
use crate::gpu::readback::{self, Readback};
use crate::gpu::spheres::broad_phase::{GpuBroadPhase, ResidentPairs};
use web_time::Instant;

/// Frames tried before giving up: the first sizes the pair list, the second fits.
const MAX_RUNS: usize = 4;

impl GpuContacts {
    blocking! {
        /// Every touching pair of `spheres` through `broad` (any method) and each pair's contact,
        /// in one submission from the upload to the contacts: the pairs `(i, j)`, `i < j`, sorted,
        /// into `pairs` and their contacts in the same order into `contacts` (both cleared first;
        /// no spheres give no pairs). Spheres are validated. A list that outgrows the broad
        /// phase's runs the frame again, larger (a second wait).
        pub fn sphere_frame = "a sphere contacts frame";
        pub async fn sphere_frame_async(
            &mut self,
            broad: &mut GpuBroadPhase,
            spheres: &[Sphere],
            pairs: &mut Vec<Pair>,
            contacts: &mut Vec<Contact>,
        ) -> Result<Stats> {
            let start = Instant::now();
            pairs.clear();
            contacts.clear();
            if spheres.is_empty() {
                return Ok(Stats::default());
            }
            validate_spheres(spheres)?;
            let n = count_u32("spheres", spheres.len())?;
            let ctx = broad.context().clone();
            let mut rb = std::mem::replace(&mut self.frame_readback, Readback::new("unused"));
            let read = self
                .sphere_frame_runs(&ctx, broad, spheres, n, &mut rb)
                .await;
            self.frame_readback = rb;
            let (totals, listed, partial_pairs, partial_contacts, pair_buf) = read?;
            // The rest of lists longer than planned, one more wait each.
            let mut found = partial_pairs;
            if (found.len() as u64) < listed as u64 {
                let tail = [(pair_buf, found.len() as u64, listed as u64)];
                let rest = readback::read_tails_async(&ctx, &mut self.tail, &tail).await?;
                readback::append_pairs(&mut found, &rest[0], listed as u64)?;
            }
            let mut found_contacts = self.finish_async(&ctx, partial_contacts, listed).await?;
            super::sort_with_contacts(&mut found, &mut found_contacts)?;
            (*pairs, *contacts) = (found, found_contacts);
            let mut stats = Stats {
                tests: totals.tests,
                pairs: pairs.len() as u64,
                ..Stats::default()
            };
            for (label, seconds) in totals.pass_times {
                stats.stage(label, seconds, Clock::GpuTimestamp);
            }
            stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
            Ok(stats)
        }
    }

    /// The frame's runs until its pair list holds every pair: the totals, the pair count, the
    /// pairs and contacts as far as the readback reached, and the list's buffer for the rest.
    #[allow(clippy::type_complexity)]
    async fn sphere_frame_runs(
        &mut self,
        ctx: &GpuContext,
        broad: &mut GpuBroadPhase,
        spheres: &[Sphere],
        n: u32,
        rb: &mut Readback,
    ) -> Result<(
        crate::gpu::spheres::broad_phase::ResidentTotals,
        u32,
        Vec<Pair>,
        Vec<Contact>,
        wgpu::Buffer,
    )> {
        for _ in 0..MAX_RUNS {
            let mut enc = broad.encode_resident(spheres)?;
            // The broad phase's own upload, read in place: the spheres cross once.
            let sphere_buf = broad
                .resident_spheres()
                .ok_or_else(|| Error::OutOfOrder("the resident frame holds no spheres".into()))?
                .clone();
            let list = broad.resident_pairs();
            let (pair_buf, capacity) = (list.pairs.clone(), list.capacity);
            let counters = list.counters.clone();
            let list = ResidentPairs {
                pairs: &pair_buf,
                capacity,
                counters: &counters,
                count_index: list.count_index,
            };
            self.encode(
                ctx,
                &mut enc,
                DeviceShapes::Spheres(&sphere_buf),
                n,
                &list,
                true,
            )?;
            rb.clear();
            let broad_plan = broad.plan_resident_readback(rb);
            let planned = self.hint.planned(capacity as u64);
            let pairs_at = rb.add(&pair_buf, 0, 8 * planned);
            let contacts_plan = self.plan_readback(rb);
            rb.record(ctx, &mut enc)?;
            ctx.submit(enc);
            let this = &*self;
            let (totals, read) = rb
                .map_async(ctx, |bytes| -> Result<_> {
                    let totals = broad.resident_totals_from(n, bytes, &broad_plan)?;
                    if totals.pairs > capacity as u64 {
                        return Ok((totals, None));
                    }
                    let listed = totals.pairs as u32;
                    let have = (listed as usize).min(pairs_at.len() / 8);
                    let at = pairs_at.start;
                    // Room for the whole list before the first copy (the tail joins it).
                    let mut pairs = Vec::new();
                    memory::reserve_pairs(&mut pairs, listed as usize, totals.pairs)?;
                    readback::append_pairs(&mut pairs, &bytes[at..at + 8 * have], totals.pairs)?;
                    let contacts = this.contacts_from(bytes, &contacts_plan, listed)?;
                    Ok((totals, Some((listed, pairs, contacts))))
                })
                .await??;
            match read {
                Some((listed, pairs, contacts)) => {
                    return Ok((totals, listed, pairs, contacts, pair_buf));
                }
                None => broad.grow_pair_list(totals.pairs)?,
            }
        }
        Err(Error::gpu(
            crate::error::GpuFailure::Inconsistent,
            format!(
                "sphere contacts: the pair count kept changing over {MAX_RUNS} runs of the same frame"
            ),
        ))
    }
}
