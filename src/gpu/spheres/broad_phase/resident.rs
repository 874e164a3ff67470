//! The broad phase's resident path (docs/design.md §6.5, §10): the pair list left on the device
//! for a following stage (the box pipeline's SAT, frame events), spheres read from a caller's
//! buffer, the deterministic order option, and the checks a GPU-resident caller runs when it
//! wants them.

use super::{COUNTER_WORDS, GpuBroadPhase, Source};
use crate::error::{Error, Exceeds, Result};
use crate::geom::sphere::Sphere;
use crate::gpu::context::block::blocking;
use crate::gpu::events::GpuEvents;
use crate::gpu::readback::{self, Readback};
use crate::gpu::slots;
use crate::gpu::spheres::dispatch_args::PairDispatch;

impl GpuBroadPhase {
    /// Largest pair list one binding can hold on this adapter.
    fn max_list_pairs(&self) -> u64 {
        self.ctx.max_binding_bytes() / 8
    }

    /// Sets the most pairs one call may store (default
    /// [`crate::broadphase::MAX_STORED_PAIRS`], the CPU's): a frame that finds more fails with
    /// [`crate::error::Error::TooLarge`] after its first run, whose count is exact past the list.
    /// The broad phases of the context's other devices (frames in parts) take it too.
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.pair_limit = limit;
        if let Some(parts) = &mut self.parts {
            parts.set_pair_limit(limit);
        }
    }

    /// Forgets an overflow of the events' and the canonical sort's lists (a frame that runs
    /// again, or fails).
    pub(super) fn clear_event_overflow(&self) {
        for ev in [&self.events, &self.canonical].into_iter().flatten() {
            ev.clear_overflow(&self.ctx);
        }
    }

    /// Sets the pair list's capacity (pairs). The list still grows when a frame finds more; a
    /// tiny capacity exercises that path.
    pub fn set_pair_capacity(&mut self, pairs: u64) -> Result<()> {
        // Past u64's bytes is past any binding: the binding's error, not an overflow.
        let pairs = pairs.clamp(1, u64::MAX / 16);
        self.pair_list = self.ctx.storage_buffer("pair list", pairs * 8)?;
        self.pair_capacity = pairs;
        Ok(())
    }

    /// Pairs the pair list holds now.
    pub fn pair_capacity(&self) -> u64 {
        self.pair_capacity
    }

    /// Grows the pair list to hold `need` pairs (plus headroom for the next frames), or fails
    /// with [`Error::TooLarge`] beyond the stored-pair limit or the binding limit.
    pub fn grow_pair_list(&mut self, need: u64) -> Result<()> {
        // Past the stored-pair limit, the error every path gives ([`Self::set_pair_limit`]).
        if need > self.pair_limit {
            return Err(crate::broadphase::stored_pairs_past_limit(
                need,
                self.pair_limit,
            ));
        }
        let max_pairs = self.max_list_pairs();
        if need > max_pairs || need > u32::MAX as u64 {
            return Err(Error::too_large(
                Exceeds::Binding {
                    needed: need.saturating_mul(8),
                    allowed: max_pairs.min(u32::MAX as u64) * 8,
                },
                format!(
                    "{need} touching pairs: a list of {} bytes exceeds one binding ({max_pairs} \
                     pairs): {}; ask for their count alone (no pair list) instead",
                    need * 8,
                    self.ctx.whose_binding_limit()
                ),
            ));
        }
        self.set_pair_capacity((need + need / 8).min(max_pairs))
    }

    /// Records one frame that stores its pairs into a new encoder and returns it, without
    /// submitting: a following GPU stage appends its passes reading [`Self::resident_pairs`],
    /// then the caller plans its readback ([`Self::plan_resident_readback`]), submits and
    /// reads the totals with [`Self::resident_totals_from`]. When the returned totals
    /// exceed `ResidentPairs::capacity` the list lost pairs: call [`Self::grow_pair_list`]
    /// and record the frame again. No spheres: [`Error::EmptyScene`] (nothing to record;
    /// `find_pairs` takes an empty frame).
    pub fn encode_resident(&mut self, spheres: &[Sphere]) -> Result<wgpu::CommandEncoder> {
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        if spheres.is_empty() {
            return Err(Error::EmptyScene);
        }
        self.check_resident_before_host_frame_blocking();
        let mut enc = self.record_frame(spheres, true)?;
        self.encode_dispatch_args(&mut enc)?;
        Ok(enc)
    }

    /// Records the indirect-dispatch arguments of the resident pairs at the end of `enc`, when
    /// asked for ([`Self::enable_dispatch_args`]).
    fn encode_dispatch_args(&mut self, enc: &mut wgpu::CommandEncoder) -> Result<()> {
        let Some(dispatch) = self.pair_dispatch.as_mut() else {
            return Ok(());
        };
        let list = ResidentPairs {
            pairs: &self.pair_list,
            capacity: self.pair_capacity.min(u32::MAX as u64) as u32,
            counters: &self.counters,
            count_index: slots::SPHERE_APPEND,
        };
        dispatch.encode(&self.ctx, enc, &list, self.dispatch_workgroup)
    }

    /// From the next resident frame on ([`Self::encode_resident`], [`Self::encode_from_buffer`]),
    /// writes indirect-dispatch arguments over its pairs for a caller's kernel of `workgroup`
    /// threads ([`Self::resident_dispatch_args`]).
    pub fn enable_dispatch_args(&mut self, workgroup: u32) -> Result<()> {
        if self.pair_dispatch.is_none() {
            self.pair_dispatch = Some(PairDispatch::new(&self.ctx)?);
        }
        self.dispatch_workgroup = workgroup.max(1);
        Ok(())
    }

    /// Indirect-dispatch arguments over the resident pairs, written on the device at the end
    /// of every resident frame once [`Self::enable_dispatch_args`] asked for them
    /// (docs/design.md §10): `[x, y, 1, pairs]`, one thread per pair in workgroups of the
    /// size given there, `pairs` the list's count clamped to its capacity. Dispatch a pass with
    /// `dispatch_workgroups_indirect(args, 0)` and bind the buffer as read-only storage: pair
    /// `(group.y * x + group.x) * workgroup + local` is live when below `args[3]`. No count
    /// comes back to the host. `None` until enabled.
    pub fn resident_dispatch_args(&self) -> Option<&wgpu::Buffer> {
        self.pair_dispatch.as_ref().map(PairDispatch::args)
    }

    /// GPU-resident input (docs/design.md §10): the frame of the `n` spheres in the caller's
    /// `spheres` buffer (`[f32; 4]` each: x, y, z, radius; 16 bytes from byte 0; `COPY_SRC`
    /// usage), recorded into a new encoder and returned unsubmitted, with the frame events when
    /// tracked ([`crate::BroadPhase::track_events`]). Nothing comes back to the host: the pairs stay
    /// in [`Self::resident_pairs`], the events in [`Self::resident_events`], for the caller's
    /// next passes. The events compare with the frame recorded before this one: submit each
    /// encoder, in the order recorded, before recording the next or calling `find_pairs`
    /// (an encoder dropped unsubmitted leaves the next frame's events against a frame that
    /// never ran). Spheres the host would reject (non-finite, negative radius, magnitude
    /// outside 1e-30..1e18) are counted on the device, and a pair list too small for a frame
    /// marks that frame; [`Self::check_resident`] reads both (one wait) and turns them into
    /// errors. Size the list for the scene first ([`Self::set_pair_capacity`]). `n = 0`:
    /// [`Error::EmptyScene`], as [`Self::encode_resident`].
    pub fn encode_from_buffer(
        &mut self,
        spheres: &wgpu::Buffer,
        n: u32,
    ) -> Result<wgpu::CommandEncoder> {
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        if n == 0 {
            return Err(Error::EmptyScene);
        }
        if !spheres.usage().contains(wgpu::BufferUsages::COPY_SRC) {
            return Err(Error::invalid_argument(
                "spheres",
                "the spheres buffer needs COPY_SRC usage (the frame copies it in)",
            ));
        }
        if spheres.size() < n as u64 * 16 {
            return Err(Error::invalid_argument(
                "spheres",
                format!(
                    "{n} spheres need {} bytes; the buffer has {}",
                    n as u64 * 16,
                    spheres.size()
                ),
            ));
        }
        self.hand_events_to_device()?;
        let mut enc = self.record_frame_from(Source::Device(spheres), n, true)?;
        let list = ResidentPairs {
            pairs: &self.pair_list,
            capacity: self.pair_capacity.min(u32::MAX as u64) as u32,
            counters: &self.counters,
            count_index: slots::SPHERE_APPEND,
        };
        if let Some(ev) = &mut self.events {
            ev.encode(&self.ctx, &mut enc, &list, n, true)?;
            ev.commit();
        }
        self.last_n = n;
        self.resident_capacity = self.pair_capacity;
        self.resident_unchecked = true;
        self.encode_dispatch_args(&mut enc)?;
        Ok(enc)
    }

    /// Deterministic output: with `true`, every frame's pairs come back in canonical order
    /// (`i < j`, lexicographic), sorted on the device, so the bytes are the same run to run and
    /// equal the CPU's canonicalised list (docs/design.md §10). Costs two radix sorts of the
    /// pair list per frame (shared with the frame events when those are tracked).
    pub fn set_canonical(&mut self, on: bool) -> Result<()> {
        self.canonical = if on {
            Some(Box::new(GpuEvents::new(&self.ctx)?))
        } else {
            None
        };
        Ok(())
    }

    /// The frame events of the last [`Self::encode_from_buffer`] on the device, when tracked.
    pub fn resident_events(&self) -> Option<&GpuEvents> {
        self.events.as_deref()
    }

    blocking! {
        /// After frames from [`Self::encode_from_buffer`] (since the last check): an error when a
        /// frame had spheres the host would reject, or more pairs than the list holds (with events
        /// tracked every such frame is counted; without, the last frame's count is checked). One
        /// wait. With events tracked, a list cut short in the last frame alone stops being the
        /// previous frame's (a frame recorded again, or the next, compares with the whole frame
        /// before it); cut short in several frames, the next frame's events start over.
        pub fn check_resident = "a resident check";
        pub async fn check_resident_async(&mut self) -> Result<()> {
            // Frames a host frame after them checked come first, one refusal a call, oldest
            // first; the frames recorded since are checked now, their refusal kept behind.
            if self.resident_unchecked || self.resident_refusals.is_empty() {
                self.keep_resident_refusal().await?;
            }
            match self.resident_refusals.pop_front() {
                Some(refusal) => Err(refusal),
                None => Ok(()),
            }
        }
    }

    /// Before a host frame: the frames from the caller's buffer since the last check, checked
    /// as [`Self::check_resident`] checks them (a list cut short stops being the previous
    /// frame's, so this frame's events compare with a whole one), the refusal kept for the next
    /// check. Natively one wait, only after such frames; a browser's synchronous path checks
    /// nothing here (it cannot wait). A failure of the device itself is no refusal of the
    /// frames: it is returned (a host frame meets it anyway).
    pub(super) async fn check_resident_before_host_frame(&mut self) -> Result<()> {
        match self.resident_unchecked {
            true => self.keep_resident_refusal().await,
            false => Ok(()),
        }
    }

    /// The resident check read now ([`Self::read_resident_check`]), its refusal of the frames
    /// queued for [`Self::check_resident`]; a failure of the device returned.
    async fn keep_resident_refusal(&mut self) -> Result<()> {
        match self.read_resident_check().await {
            Err(e) if is_refusal(&e) => self.resident_refusals.push_back(e),
            result => result?,
        }
        Ok(())
    }

    /// [`Self::check_resident_before_host_frame`] where the caller cannot await (in a browser
    /// build, [`block_on`](crate::gpu::context::block::block_on) refuses to wait: nothing is
    /// checked).
    pub(super) fn check_resident_before_host_frame_blocking(&mut self) {
        if self.resident_unchecked {
            let what = "a resident check before a host frame";
            let future = self.check_resident_before_host_frame();
            let _ = crate::gpu::context::block::block_on(what, future);
        }
    }

    /// The check itself: one readback of the invalid-sphere count, the pair count and the
    /// events' count of lists cut short, then both counts cleared.
    async fn read_resident_check(&mut self) -> Result<()> {
        self.resident_unchecked = false;
        let mut rb = Readback::new("resident check");
        let invalid_at = rb.add(&self.ext, 28, 4);
        let counters_at = rb.add(&self.counters, 0, COUNTER_WORDS * 4);
        let overflow_at = self
            .events
            .as_ref()
            .map(|ev| rb.add(ev.overflow_buffer(), 0, 4));
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        rb.record(&self.ctx, &mut enc)?;
        self.ctx.submit(enc);
        let (invalid, pairs, overflowed) = rb
            .map_async(&self.ctx, |bytes| {
                let w = readback::words(&bytes[counters_at]);
                (
                    readback::words(&bytes[invalid_at])[0],
                    w[2] as u64 | (w[3] as u64) << 32,
                    overflow_at.map_or(0, |r| readback::words(&bytes[r])[0]),
                )
            })
            .await?;
        self.ctx.write_buffer(&self.ext, 28, &[0; 4]);
        if let Some(ev) = &self.events {
            ev.clear_overflow(&self.ctx);
        }
        if invalid > 0 {
            return Err(Error::invalid_argument(
                "spheres",
                format!(
                    "{invalid} spheres in the caller's buffer are not valid spheres \
                         (non-finite, negative radius, or a magnitude outside 1e-30..1e18)"
                ),
            ));
        }
        // Against the list the last frame was recorded with: grown since, the frame was
        // still cut short (the check after `grow_pair_list` said nothing).
        let capacity = self.resident_capacity;
        if overflowed > 0 || pairs > capacity {
            // The frames' events compare with the last whole frame: where the frame cut
            // short is the last and only one, its list stops being the previous one (a
            // frame recorded again after `grow_pair_list`, or the next, compares with the
            // one before it); where several were cut short, the lists between are lost
            // and the next frame's pairs are all found.
            let last_cut_short = pairs > capacity;
            let mut events = "";
            if let Some(ev) = &mut self.events {
                if overflowed == 1 && last_cut_short {
                    ev.uncommit();
                    events = " (the next frame's events compare with the frame before it)";
                } else if overflowed > 1 && last_cut_short {
                    ev.reset(&self.ctx);
                    events = " (the next frame's events start over: all its pairs found)";
                }
            }
            return Err(Error::too_large(
                Exceeds::PairList {
                    pairs,
                    allowed: capacity,
                },
                format!(
                    "{} frames found more pairs than the list's {capacity} slots (the last \
                         frame: {pairs}): their pairs and events are incomplete{events}; raise \
                         set_pair_capacity (grow_pair_list)",
                    overflowed.max(1),
                ),
            ));
        }
        Ok(())
    }

    /// The last recorded frame's spheres on the device, in the caller's order (16 bytes each:
    /// centre and radius), for a stage recorded after [`Self::encode_resident`].
    pub(crate) fn resident_spheres(&self) -> Option<&wgpu::Buffer> {
        self.resident.as_ref().map(|r| &r.spheres)
    }

    /// The device the frames run on, for a stage recorded after [`Self::encode_resident`].
    pub(crate) fn context(&self) -> &std::sync::Arc<crate::gpu::context::GpuContext> {
        &self.ctx
    }

    /// The pair list and where its count lives, for a stage recorded after
    /// [`Self::encode_resident`]. The count word is the append slot, which counts past the
    /// capacity: readers must clamp it to `capacity`. The pairs are in append order, with
    /// [`Self::set_canonical`] too (it orders the list a frame reads back).
    pub fn resident_pairs(&self) -> ResidentPairs<'_> {
        ResidentPairs {
            pairs: &self.pair_list,
            capacity: self.pair_capacity.min(u32::MAX as u64) as u32,
            counters: &self.counters,
            count_index: slots::SPHERE_APPEND,
        }
    }

    /// Plans the readback of the frame recorded by [`Self::encode_resident`] (its totals and
    /// timestamps) into the caller's `rb`, read with the caller's own results in one wait.
    pub fn plan_resident_readback(&self, rb: &mut Readback) -> ResidentReadback {
        ResidentReadback {
            counters: rb.add(&self.counters, 0, COUNTER_WORDS * 4),
            times: rb.add_timer(&self.timer),
        }
    }

    /// From the bytes planned by [`Self::plan_resident_readback`]: the frame's exact totals
    /// and its per-pass GPU times (empty without timestamp queries).
    pub fn resident_totals_from(
        &mut self,
        n: u32,
        bytes: &[u8],
        plan: &ResidentReadback,
    ) -> Result<ResidentTotals> {
        let totals = self.totals_from(n, &readback::words(&bytes[plan.counters.clone()]))?;
        self.note_counted(&totals, n);
        Ok(ResidentTotals {
            tests: totals.tests,
            pairs: totals.pairs,
            pass_times: self.timer.times_from(&self.ctx, &bytes[plan.times.clone()]),
        })
    }
}

/// Where [`GpuBroadPhase::plan_resident_readback`] put the frame's results.
pub struct ResidentReadback {
    counters: std::ops::Range<usize>,
    times: std::ops::Range<usize>,
}

/// The broad phase's resident pair list (see [`GpuBroadPhase::resident_pairs`]).
pub struct ResidentPairs<'a> {
    /// `[u32; 2]` pairs (min, max), in no particular order.
    pub pairs: &'a wgpu::Buffer,
    /// Pairs the list holds.
    pub capacity: u32,
    /// The totals buffer; the u32 at `count_index` is the number of pairs appended.
    pub counters: &'a wgpu::Buffer,
    /// Index of the pair count among the u32s of `counters`.
    pub count_index: u32,
}

/// Totals of a frame recorded with [`GpuBroadPhase::encode_resident`].
pub struct ResidentTotals {
    /// Narrow-phase (sphere-sphere) tests performed.
    pub tests: u64,
    /// Touching pairs found (also when they did not all fit in the list).
    pub pairs: u64,
    /// Seconds per timed pass, by label (empty without timestamp queries).
    pub pass_times: Vec<(&'static str, f64)>,
}

/// Whether `e` is a resident check's refusal of the frames (spheres the host would reject, a
/// list cut short), not a failure of the device or the readback.
fn is_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidArgument { .. }
            | Error::TooLarge {
                exceeds: Exceeds::PairList { .. },
                ..
            }
    )
}
