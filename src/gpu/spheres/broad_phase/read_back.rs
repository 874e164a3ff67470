//! One frame with one host wait (docs/design.md §9.7): its totals, timestamps and pair list
//! come back through one readback buffer, as far as the last frame's counts with headroom, the
//! rest of a list that grew in one more map (§9.16).

use super::{COUNTER_WORDS, GpuBroadPhase, Totals};
use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::sphere::Sphere;
use crate::gpu::context::count_u32;
use crate::gpu::events::GpuEvents;
use crate::gpu::readback::{self, append_pairs};
use crate::gpu::slots;
use crate::gpu::spheres::broad_phase::ResidentPairs;

impl GpuBroadPhase {
    /// Slots of the pair list the events' and the canonical order's sorts walk
    /// (docs/design.md §9.16): the whole list before a frame's count is known.
    pub(super) fn sorted_slots(&self) -> u64 {
        self.sorted_slots
            .map_or(self.pair_capacity, |s| s.min(self.pair_capacity))
    }

    /// Sizes the sorts from the last frame's count: the pairs the readback plans for (the count
    /// with headroom) up to a power of two, grown at once and shrunk only past a factor of 4,
    /// so a count that wanders keeps one size, and the sorts' bind groups with it.
    fn plan_sorted_slots(&mut self) {
        let want = self
            .pair_hint
            .planned(self.pair_capacity)
            .next_power_of_two()
            .min(self.pair_capacity);
        let now = self.sorted_slots();
        if self.sorted_slots.is_none() || want > now || want * 4 <= now {
            self.sorted_slots = Some(want);
        }
    }

    /// Runs one frame with a single host wait: its totals, timestamps and (when `store`) the
    /// pair list come back through one readback buffer. The pairs are `None` when the list
    /// overflowed (the caller grows it and runs the frame again) or, with events or the
    /// canonical order, outgrew the slots their sorts walked ([`Self::sorted_slots`]; the caller
    /// runs the frame again, sized by its count).
    #[allow(clippy::type_complexity)]
    pub(super) async fn run_frame_read_back(
        &mut self,
        spheres: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Result<(Totals, bool, Vec<(&'static str, f64)>)> {
        let store = out.is_some();
        let n = count_u32("spheres", spheres.len())?;
        // A device error here is the frame's (it would meet it recording).
        self.check_resident_before_host_frame().await?;
        let mut enc = self.record_frame(spheres, store)?;
        // The sorts walk as many slots as the readback plans for, not the list's capacity
        // (docs/design.md §9.16): sized by counts, as the readback is (planned here, after any
        // growth of the list).
        if self.sorted_slots.is_some() {
            self.plan_sorted_slots();
        }
        let sorted_slots = self.sorted_slots().min(u32::MAX as u64);
        let list = ResidentPairs {
            pairs: &self.pair_list,
            capacity: sorted_slots as u32,
            counters: &self.counters,
            count_index: slots::SPHERE_APPEND,
        };
        let sorts = store && (self.events.is_some() || self.canonical.is_some());
        let rb = &mut self.readback;
        rb.clear();
        let events_plan = match (&mut self.events, store) {
            (Some(ev), true) => {
                ev.encode(&self.ctx, &mut enc, &list, n, true)?;
                Some(ev.plan_readback(rb, true))
            }
            _ => None,
        };
        // With the canonical order asked for, the sorted list comes back instead of the list
        // in append order (the events' sort when they are tracked, else the sort alone).
        if let (Some(c), true, None) = (&mut self.canonical, store, &self.events) {
            c.encode(&self.ctx, &mut enc, &list, n, false)?;
        }
        let source = match (&self.events, &self.canonical) {
            (Some(ev), Some(_)) if store => ev.sorted_list(),
            (None, Some(c)) if store => c.sorted_list(),
            _ => &self.pair_list,
        };
        let counters = rb.add(&self.counters, 0, COUNTER_WORDS * 4);
        let times_at = rb.add_timer(&self.timer);
        // The pairs as far as the last frame's count with headroom; the rest, if the list
        // grew past that, in a second map below (docs/design.md §9.7).
        let planned = if store {
            self.pair_hint.planned(self.pair_capacity)
        } else {
            0
        };
        let pairs_at = rb.add(source, 0, planned * 8);
        let source = source.clone();
        rb.record(&self.ctx, &mut enc)?;
        self.host.lap("encode");
        self.ctx.submit(enc);
        // The staging buffer maps again for the next frame; this frame's wait resolves it.
        self.upload.after_submit();
        self.host.lap("submit");
        let (ctx, timer, capacity) = (&self.ctx, &self.timer, self.pair_capacity);
        let events = self.events.as_deref();
        let host = &mut self.host;
        let read = self.readback.map_async(ctx, |bytes| {
            host.lap("wait");
            let words = readback::words(&bytes[counters]);
            let at = slots::SPHERE_PAIRS as usize;
            let found = words[at] as u64 | (words[at + 1] as u64) << 32;
            // A list the sorts walked only in part is run again, as one that overflowed.
            let whole = found <= capacity && (!sorts || found <= sorted_slots);
            // Into the caller's own vector, its allocation kept (update_into's promise).
            let pairs = match (whole, out.as_deref_mut()) {
                (true, Some(list)) => {
                    let at = pairs_at.start;
                    let have = found.min(planned) as usize;
                    list.clear();
                    // Room for the whole list at once: a tail past the memory is refused
                    // before any pair is copied, not with the list half made.
                    let whole =
                        crate::broadphase::memory::reserve_pairs(list, found as usize, found);
                    let stored =
                        whole.and_then(|()| append_pairs(list, &bytes[at..at + 8 * have], found));
                    Some(stored.map(|()| list.len()))
                }
                _ => None,
            };
            let times = timer.times_from(ctx, &bytes[times_at]);
            let partial = match (events, &events_plan) {
                (Some(ev), Some(plan)) if whole => Some(ev.events_from(bytes, plan)),
                _ => None,
            };
            host.lap("read-back");
            (words, found, pairs, times, partial)
        });
        let (words, found, pairs, times, partial) = read.await?;
        // An overflowed frame runs again with a list of `found`: the plan follows it too.
        self.pair_hint.saw(found);
        if self.sorted_slots.is_none() {
            self.plan_sorted_slots();
        }
        // A frame that fails (cut short, more pairs than a call may store or the memory holds)
        // does so before its events are kept: no events for it, and the next frame compares
        // with the last one that succeeded.
        let (pairs, stored) = match pairs.transpose() {
            Ok(pairs) => (pairs, Ok(())),
            Err(e) => (None, Err(e)),
        };
        let totals = self.totals_from(n, &words).and_then(|t| stored.map(|()| t));
        let failed = match &totals {
            Ok(t) => out.is_some() && t.pairs > self.pair_limit,
            Err(_) => true,
        };
        if failed {
            self.last_events = None;
            self.clear_event_overflow();
            return Ok((totals?, false, times));
        }
        let totals = totals?;
        // Lists longer than planned: their rest in one more map.
        let pair_tail = pairs
            .filter(|&have| (have as u64) < found)
            .map(|have| (source, have as u64, found));
        let event_tails = match (&mut self.events, &partial) {
            (Some(ev), Some(p)) => ev.tails(p),
            _ => [None, None],
        };
        let wanted = [pair_tail, event_tails[0].clone(), event_tails[1].clone()];
        let list: Vec<_> = wanted.iter().flatten().cloned().collect();
        let mut rest = if list.is_empty() {
            Vec::new()
        } else {
            readback::read_tails_async(&self.ctx, &mut self.tail_readback, &list).await?
        }
        .into_iter();
        let [pair_rest, found_rest, lost_rest] = wanted.map(|w| w.and_then(|_| rest.next()));
        if let (Some(list), Some(bytes)) = (out, pair_rest)
            && let Err(e) = append_pairs(list, &bytes, found)
        {
            self.last_events = None;
            self.clear_event_overflow();
            return Err(e);
        }
        let frame_events = partial.map(|p| GpuEvents::completed(p, [found_rest, lost_rest]));
        if let (Some(ev), Some(_)) = (&mut self.events, &frame_events) {
            // A whole frame: its list becomes the previous one (an overflowed frame runs again).
            ev.commit();
        }
        self.last_events = frame_events;
        Ok((totals, pairs.is_some(), times))
    }

    /// A frame's stats from its totals and pass times, keeping what a frame of `n` spheres
    /// counted beyond its tests and pairs; the caller adds its host steps and total.
    pub(super) fn frame_stats(
        &mut self,
        totals: &Totals,
        n: u32,
        times: Vec<(&'static str, f64)>,
    ) -> Stats {
        self.note_counted(totals, n);
        let mut stats = Stats {
            tests: totals.tests,
            pairs: totals.pairs,
            stages: Vec::new(),
            chosen: None,
        };
        for (label, seconds) in times {
            stats.stage(label, seconds, Clock::GpuTimestamp);
        }
        stats
    }

    /// Keeps what a frame of `n` spheres counted beyond its tests and pairs (the paper's
    /// min_axis tests, the grid's bucket lookups for the traffic model), for every frame read
    /// back, resident ones too.
    pub(super) fn note_counted(&mut self, totals: &Totals, n: u32) {
        self.paper_min_axis_tests =
            (self.method == Method::MinAxis).then_some(totals.paper_min_axis);
        self.grid_lookups_per_object =
            (self.method == Method::Grid).then(|| totals.grid_lookups as f64 / n.max(1) as f64);
    }

    /// Totals from the counter words of a frame; a walk the device cut short is an error.
    pub(super) fn totals_from(&mut self, n: u32, words: &[u32]) -> Result<Totals> {
        let word64 = |slot: u32| {
            let i = slot as usize;
            words[i] as u64 | (words[i + 1] as u64) << 32
        };
        let cut_short = words[slots::SPHERE_CUT_SHORT as usize];
        if cut_short > 0 {
            return Err(Error::gpu(
                crate::error::GpuFailure::CutShort,
                format!(
                    "the device '{}' cut {} candidate walks of {} short (lavapipe stops an \
                 invocation after 65,535 loop iterations): the pair list would be incomplete",
                    self.ctx.info.name, cut_short, self.method
                ),
            ));
        }
        self.last_n = n;
        Ok(Totals {
            tests: word64(slots::SPHERE_TESTS),
            pairs: word64(slots::SPHERE_PAIRS),
            paper_min_axis: word64(slots::SPHERE_PAPER_MIN_AXIS),
            grid_lookups: word64(slots::SPHERE_GRID_LOOKUPS),
        })
    }
}
