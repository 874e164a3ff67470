//! Frames in flight (docs/design.md §9.16, "Frames in flight"): a frame is submitted
//! ([`GpuBroadPhase::submit_frame`]) and finished later ([`GpuBroadPhase::finish_frame`]), so
//! the host writes the next frame's spheres into staging memory, and reads the last frame's
//! pairs, while the device runs another frame. At most [`MAX_IN_FLIGHT`] frames are in flight.
//!
//! Each frame in flight has its own *slot*: the staging buffer its spheres went up through and
//! the readback buffer its results come back in. Everything else (the resident buffers, the pair
//! list, the counters) is shared: the device runs submissions in order and each frame copies its
//! results into its own readback buffer in its own submission, so a later frame overwriting them
//! changes nothing already copied. What is not copied by then is a list longer than the frame
//! planned to read: such a frame, and one whose list overflowed, runs again, whole, at its
//! finish (the caller still holds its spheres). A part of a frame in parts copies the list's
//! whole capacity, so only an overflow runs it again.
//!
//! A frame runs whole at its finish instead (not in flight) while events or the canonical order
//! are on (their lists live from frame to frame), while frames run in parts, with
//! [`MAX_IN_FLIGHT`] frames already in flight, or when it meets a size limit of the device.

use super::{COUNTER_WORDS, GpuBroadPhase};
use crate::broadphase::{Clock, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::sphere::Sphere;
use crate::gpu::readback::{self, Readback};
use crate::gpu::slots;
use crate::gpu::timer::HostSteps;
use crate::gpu::upload::Upload;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use web_time::Instant;

/// Frames a broad phase keeps in flight at most: one running, the next queued behind it.
pub const MAX_IN_FLIGHT: usize = 2;

/// The host memory a frame's transfers go through.
pub(super) struct Slot {
    pub upload: Upload,
    pub readback: Readback,
}

impl Slot {
    pub fn new() -> Self {
        Slot {
            upload: Upload::new("sphere upload"),
            readback: Readback::new("sphere frame readback"),
        }
    }
}

/// A submitted frame, until its finish.
struct Submitted {
    seq: u64,
    slot: Slot,
    index: wgpu::SubmissionIndex,
    n: u32,
    store: bool,
    /// Pairs its readback copies (the rest of a longer list is gone by its finish).
    planned: u64,
    capacity: u64,
    counters: Range<usize>,
    times: Range<usize>,
    labels: Vec<&'static str>,
    pairs: Range<usize>,
    host: HostSteps,
    start: Instant,
    /// Shared with the caller's [`SubmittedFrame`]: held here alone, the caller dropped it
    /// unfinished, and the next submission frees the slot (else two dropped frames would keep
    /// every later one from flight). (A count, not a `Drop` of the frame, which would hold the
    /// caller's spheres borrowed until the end of their scope.)
    ticket: Arc<()>,
    /// A part of a frame in parts (finished by its call, never by a caller's ticket).
    part: bool,
}

/// The frames in flight and the slots free for the next.
#[derive(Default)]
pub(super) struct InFlight {
    frames: VecDeque<Submitted>,
    free: Vec<Slot>,
    /// This broad phase's mark on the frames it hands out (one allocation each, compared by
    /// address): a frame finished on another is refused.
    owner: Arc<()>,
}

/// A frame on its way ([`GpuBroadPhase::submit_frame`]), holding the caller's spheres until
/// [`GpuBroadPhase::finish_frame`] (a frame that must run again reads them again).
#[must_use = "a submitted frame is finished by GpuBroadPhase::finish_frame"]
pub struct SubmittedFrame<'s> {
    spheres: &'s [Sphere],
    store: bool,
    /// Its place in the queue; `None`: it runs whole at its finish.
    seq: Option<u64>,
    /// Its queue entry's ticket, while it is in flight.
    _ticket: Option<Arc<()>>,
    /// The broad phase that submitted it ([`InFlight`]'s mark).
    owner: Arc<()>,
}

impl SubmittedFrame<'_> {
    /// Whether the frame is on the device's queue (else it runs whole at its finish: see the
    /// module docs).
    pub fn in_flight(&self) -> bool {
        self.seq.is_some()
    }
}

impl GpuBroadPhase {
    /// Frames submitted and not yet finished.
    pub fn frames_in_flight(&self) -> usize {
        self.in_flight.frames.len()
    }

    /// Submits a frame without waiting for it: the spheres are copied once into staging
    /// memory and the frame's work is queued behind any frame in flight. Finish it with
    /// [`Self::finish_frame`] (frames in any order); pairs are stored when `store`.
    /// Meanwhile the host is free: to move the next frame's spheres and submit it, so that its
    /// upload overlaps this frame's work on the device.
    ///
    /// ```
    /// use glam::Vec3;
    /// use std::sync::Arc;
    /// use sweepfan::{GpuBroadPhase, GpuContext, Method, Sphere};
    ///
    /// let Ok(ctx) = GpuContext::default_adapter() else { return Ok(()) };
    /// let mut grid = GpuBroadPhase::new(Arc::new(ctx), Method::Grid)?;
    /// let line = |gap: f32| -> Vec<Sphere> {
    ///     (0..100).map(|i| Sphere::new(Vec3::new(i as f32 * gap, 0.0, 0.0), 1.0)).collect()
    /// };
    /// let (a, b) = (line(1.5), line(3.0));
    /// let first = grid.submit_frame(&a, true)?;
    /// let second = grid.submit_frame(&b, true)?; // queued behind the first
    /// let (mut pairs_a, mut pairs_b) = (Vec::new(), Vec::new());
    /// grid.finish_frame(first, Some(&mut pairs_a))?;
    /// grid.finish_frame(second, Some(&mut pairs_b))?;
    /// assert_eq!((pairs_a.len(), pairs_b.len()), (99, 0));
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn submit_frame<'s>(
        &mut self,
        spheres: &'s [Sphere],
        store: bool,
    ) -> Result<SubmittedFrame<'s>> {
        // An empty frame has no pairs: it runs (as `find_pairs`) at its finish.
        crate::geom::sphere::validate_spheres(spheres)?;
        let seq = match spheres.is_empty() {
            true => Ok(None),
            false => self.submit_part(spheres, store, false),
        };
        let seq = match seq {
            Ok(seq) => seq,
            // Too large to run whole: at its finish it runs as `find_pairs` would, in parts.
            Err(e) if crate::gpu::context::is_size_limit(&e) => None,
            Err(e) => return Err(e),
        };
        let ticket = seq.and_then(|seq| {
            let entry = self.in_flight.frames.iter().find(|f| f.seq == seq)?;
            Some(entry.ticket.clone())
        });
        Ok(SubmittedFrame {
            spheres,
            store,
            seq,
            _ticket: ticket,
            owner: self.in_flight.owner.clone(),
        })
    }

    /// Waits for `frame` (its own submission, not those queued after it) and returns its pairs
    /// (when it was submitted to store them) and its stats, as [`crate::BroadPhase::find_pairs`]
    /// does for a frame run whole. `total` is the wall time from its submission. A frame
    /// submitted to count only leaves `out` empty; so does one that fails.
    pub fn finish_frame(
        &mut self,
        frame: SubmittedFrame<'_>,
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let mut discard = Vec::new();
        let mut out = match (frame.store, out) {
            (true, Some(out)) => Some(out),
            (true, None) => Some(&mut discard),
            (false, out) => {
                crate::broadphase::no_pairs(out);
                None
            }
        };
        let result = match frame.seq {
            // A frame that runs whole at its finish too: it would have run as another broad
            // phase's frame, under its settings and in its events.
            _ if !Arc::ptr_eq(&frame.owner, &self.in_flight.owner) => Err(Error::OutOfOrder(
                "the frame was submitted to another broad phase: finish it there".into(),
            )),
            Some(seq) => self.finish_part(seq, frame.spheres, out.as_deref_mut(), false),
            None => {
                crate::broadphase::BroadPhase::find_pairs(self, frame.spheres, out.as_deref_mut())
            }
        };
        let mut stats = crate::broadphase::cleared_on_error(out.as_deref_mut(), result)?;
        if frame.seq.is_some() {
            self.ran_whole();
            // In canonical order, as find_pairs gives them (the device appends them as found).
            crate::broadphase::order_pairs(out, &mut stats);
        }
        Ok(stats)
    }

    /// Submits a frame of validated spheres (`as_part`: a part of a frame in parts); its
    /// sequence number, or `None` where it is to run whole at its finish. A size limit of the
    /// device is the error (a part is then split).
    pub(super) fn submit_part(
        &mut self,
        spheres: &[Sphere],
        store: bool,
        as_part: bool,
    ) -> Result<Option<u64>> {
        self.free_dropped_frames();
        let whole_only = self.events.is_some()
            || self.canonical.is_some()
            || (self.in_parts() && !as_part)
            || self.in_flight.frames.len() >= MAX_IN_FLIGHT
            || cfg!(target_arch = "wasm32");
        if whole_only {
            return Ok(None);
        }
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        let start = Instant::now();
        self.host.start();
        // The frame records through a slot of its own, swapped in for the broad phase's.
        let mut slot = self.in_flight.free.pop().unwrap_or_else(Slot::new);
        self.swap_slot(&mut slot);
        let submitted = self.record_and_submit(spheres, store, as_part);
        self.swap_slot(&mut slot);
        let (index, plan) = match submitted {
            Ok(s) => s,
            Err(e) => {
                self.in_flight.free.push(slot);
                return Err(e);
            }
        };
        // Numbered across broad phases: a frame finished on another one is an error.
        static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);
        let seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
        self.in_flight.frames.push_back(Submitted {
            seq,
            slot,
            index,
            n: spheres.len() as u32,
            store,
            planned: plan.planned,
            capacity: self.pair_capacity,
            counters: plan.counters,
            times: plan.times,
            labels: self.timer.labels(),
            pairs: plan.pairs,
            host: std::mem::take(&mut self.host),
            start,
            ticket: Arc::new(()),
            part: as_part,
        });
        Ok(Some(seq))
    }

    /// Frees the slots of frames the caller dropped unfinished (their results are never read).
    fn free_dropped_frames(&mut self) {
        let frames = std::mem::take(&mut self.in_flight.frames);
        for f in frames {
            // A part's ticket is held here alone too: parts finish within their call.
            match Arc::strong_count(&f.ticket) == 1 && !f.part {
                true => self.in_flight.free.push(f.slot),
                false => self.in_flight.frames.push_back(f),
            }
        }
    }

    fn swap_slot(&mut self, slot: &mut Slot) {
        std::mem::swap(&mut self.upload, &mut slot.upload);
        std::mem::swap(&mut self.readback, &mut slot.readback);
    }

    /// Records the frame with its readback (counters, timestamps, the pairs as far as the last
    /// count planned) and submits it.
    fn record_and_submit(
        &mut self,
        spheres: &[Sphere],
        store: bool,
        as_part: bool,
    ) -> Result<(wgpu::SubmissionIndex, Plan)> {
        self.check_resident_before_host_frame_blocking();
        let mut enc = self.record_frame(spheres, store)?;
        let rb = &mut self.readback;
        rb.clear();
        let counters = rb.add(&self.counters, 0, COUNTER_WORDS * 4);
        let times = rb.add_timer(&self.timer);
        // A part copies the whole list (its capacity: the largest count so far and an eighth):
        // consecutive parts' counts differ more than consecutive frames', and a part whose list
        // outgrew its plan would run again, where a frame alone reads the rest. So does a frame
        // submitted before any count is known (the second of a stream, the first still on the
        // device): the list's first capacity is 64 Ki pairs.
        let whole_list = as_part || !self.pair_hint.seen();
        let planned = match (store, whole_list) {
            (false, _) => 0,
            (true, true) => self.pair_capacity,
            (true, false) => self.pair_hint.planned(self.pair_capacity),
        };
        let pairs = rb.add(&self.pair_list, 0, planned * 8);
        rb.record(&self.ctx, &mut enc)?;
        self.host.lap("encode");
        let index = self.ctx.submit(enc);
        self.upload.after_submit();
        self.host.lap("submit");
        Ok((
            index,
            Plan {
                planned,
                counters,
                times,
                pairs,
            },
        ))
    }

    /// Finishes the frame `seq`, waiting for its submission only. A frame whose list
    /// overflowed, or grew past what its readback planned, runs again whole: `whole_only` as a
    /// part does (a size limit is the error), else as `find_pairs` does (in parts past a size
    /// limit).
    pub(super) fn finish_part(
        &mut self,
        seq: u64,
        spheres: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
        whole_only: bool,
    ) -> Result<Stats> {
        let Some(at) = self.in_flight.frames.iter().position(|f| f.seq == seq) else {
            return Err(Error::OutOfOrder(format!(
                "frame {seq} is not in flight on this broad phase (finished already, or \
                 submitted to another)"
            )));
        };
        let mut f = self.in_flight.frames.remove(at).expect("found above");
        let ctx = self.ctx.clone();
        let _frame = ctx.frame();
        ctx.settle()?;
        f.host.resume();
        let (timer, host) = (&self.timer, &mut f.host);
        // The pairs go into the caller's own vector, its allocation kept (update_into's promise).
        let mut list = out.as_deref_mut().map(std::mem::take).unwrap_or_default();
        let read = f.slot.readback.map_after(&ctx, f.index.clone(), |bytes| {
            host.lap("wait");
            let words = readback::words(&bytes[f.counters.clone()]);
            let at = slots::SPHERE_PAIRS as usize;
            let found = words[at] as u64 | (words[at + 1] as u64) << 32;
            let stored = (f.store && found <= f.capacity && found <= f.planned).then(|| {
                let at = f.pairs.start;
                list.clear();
                readback::append_pairs(&mut list, &bytes[at..at + 8 * found as usize], found)
            });
            let times = timer.times_of(&ctx, &f.labels, &bytes[f.times.clone()]);
            host.lap("read-back");
            (words, found, stored, times)
        });
        self.in_flight.free.push(f.slot);
        if let Some(out) = out.as_deref_mut() {
            *out = list;
        }
        let (words, found, stored, times) = read?;
        self.pair_hint.saw(found);
        // The count is exact past the list: more pairs than a call may store fail now, as in
        // `find_pairs`, not after the frame runs again.
        if f.store && found > self.pair_limit {
            self.clear_event_overflow();
            return Err(crate::broadphase::stored_pairs_past_limit(
                found,
                self.pair_limit,
            ));
        }
        // Stored, or not (the list overflowed); a list past the memory left fails as above.
        let stored = match stored {
            Some(Err(e)) => {
                self.clear_event_overflow();
                return Err(e);
            }
            Some(Ok(())) => true,
            None => false,
        };
        if f.store && !stored {
            // The list overflowed, or the rest of it is overwritten by now: the frame again,
            // whole, with a list that holds it. A list past what a binding holds is no error
            // here: `find_pairs` runs the frame in parts, as it would have from the start.
            if found > self.pair_capacity {
                match self.grow_pair_list(found) {
                    Err(e) if whole_only || !crate::gpu::context::is_size_limit(&e) => {
                        return Err(e);
                    }
                    _ => {}
                }
            }
            // The frame was in flight, so without events or the canonical order: it runs again
            // as it was submitted, whatever was turned on since (else an overflow alone would
            // decide whether the next frame's events compare with this one).
            let (events, canonical) = (self.events.take(), self.canonical.take());
            let tracker = self.parts.as_mut().and_then(|p| p.tracker.take());
            let again = if whole_only {
                self.find_pairs_whole(spheres, out)
            } else {
                crate::broadphase::BroadPhase::find_pairs(self, spheres, out)
            };
            (self.events, self.canonical) = (events, canonical);
            if let Some(p) = self.parts.as_mut() {
                p.tracker = tracker;
            }
            self.last_events = None;
            return again;
        }
        let totals = self.totals_from(f.n, &words)?;
        let mut stats = self.frame_stats(&totals, f.n, times);
        f.host.lap("finish");
        f.host.report(&mut stats);
        stats.stage("total", f.start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}

/// Where a submitted frame's results lie in its readback.
struct Plan {
    planned: u64,
    counters: Range<usize>,
    times: Range<usize>,
    pairs: Range<usize>,
}
