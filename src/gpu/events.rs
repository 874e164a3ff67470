//! Frame events on the device (`shaders/events.wgsl`, docs/design.md §10): the contacts found
//! and lost between the previous frame's pair list and this one's, computed where the pairs
//! are. The pair list (any order) is sorted canonically by two stable radix sorts (by j, then by
//! i); each pair is looked up in the other frame's sorted list by binary search; the found and
//! lost pairs are compacted in canonical order through an exclusive scan. The output equals
//! [`crate::events::EventTracker`]'s, byte for byte, and stays on the device for the caller's
//! passes until read ([`GpuEvents::plan_readback`]).
//!
//! Two sorted lists alternate between frames. [`GpuEvents::encode`] writes this frame's into one
//! of them; [`GpuEvents::commit`] makes it the previous frame's once the frame is known to be
//! whole (a pair list that overflowed is recorded again, and its events with it).

use crate::error::{Error, Result};
use crate::events::FrameEvents;
use crate::gpu::context::{GpuContext, Uniform, dispatch_2d};
use crate::gpu::readback::{self, ListHint, Readback};
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::sort::scan::ExclusiveScan;
use crate::gpu::spheres::broad_phase::ResidentPairs;
use std::ops::Range;

/// `WG` in the shader.
const WORKGROUP: u32 = 256;

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/events.wgsl` (its import `events_params.wgsl`).
    #[derive(Clone, Copy)]
    pub(crate) struct EventParams {
        /// Slots of this frame's pair list (sorted and searched up to its count).
        cap: u32,
        /// Slots of the previous frame's sorted list.
        prev_cap: u32,
        /// Sort key of an empty slot: larger than every object index.
        pad: u32,
        /// Index of the pair count in `pair_count`.
        count_index: u32,
    }
}

/// One frame's canonical list: `list` (pairs) and its count (one u32).
struct Sorted {
    list: wgpu::Buffer,
    count: wgpu::Buffer,
    cap: u32,
    /// Slots the last encode into it sorted (at most `cap`): what the next frame's lost pairs
    /// walk, sized like this frame's found pairs, not by the buffer.
    len: u32,
}

crate::gpu::context::entry_pipelines! {
    /// The event pipelines.
    struct EventKernels = "events.wgsl" [
        keys_by_j, keys_by_i, gather_sorted, mark_found, mark_lost, scatter_found, scatter_lost
    ]
}

/// The event pipelines, the sort and scan, and the alternating sorted lists.
pub struct GpuEvents {
    kernels: EventKernels,
    sort: RadixSort,
    scan: ExclusiveScan,
    params: wgpu::Buffer,
    keys: Option<wgpu::Buffer>,
    values: Option<wgpu::Buffer>,
    flags: Option<wgpu::Buffer>,
    /// Frames whose pair list overflowed since the last [`Self::clear_overflow`].
    overflow: wgpu::Buffer,
    /// The scans' totals: found, lost (one u32 each).
    totals: [wgpu::Buffer; 2],
    found: Option<wgpu::Buffer>,
    lost: Option<wgpu::Buffer>,
    /// `sorted[now]` is this frame's list, the other the previous frame's.
    sorted: [Sorted; 2],
    now: usize,
    /// Capacities of the lists the last `encode` wrote (pairs).
    encoded: (u32, u32),
    /// The last frame's found and lost counts: how much of each list the next readback copies.
    hints: [ListHint; 2],
}

/// Where [`GpuEvents::plan_readback`] put the events.
pub struct EventsReadback {
    totals: [Range<usize>; 2],
    count: Range<usize>,
    found: Range<usize>,
    lost: Range<usize>,
}

/// The events of a frame as far as its one readback held them: the lists may stop short of
/// `totals` (found, lost), whose rest `GpuEvents::tails` names.
pub struct PartialEvents {
    /// The events the readback held (the lists possibly cut short).
    pub events: FrameEvents,
    /// The frame's true found and lost counts.
    pub totals: [u32; 2],
}

impl GpuEvents {
    /// Compiles the event pipelines on `ctx` and allocates their first buffers.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("frame events", WORKGROUP)?;
        let empty = || -> Result<Sorted> {
            Ok(Sorted {
                list: ctx.storage_buffer("events sorted", 8)?,
                count: ctx.storage_buffer("events count", 4)?,
                cap: 1,
                len: 1,
            })
        };
        let events = Self {
            kernels: EventKernels::new(ctx)?,
            sort: RadixSort::new(ctx)?,
            scan: ExclusiveScan::new(ctx)?,
            params: ctx.uniform_buffer("events params", EventParams::uniform_size())?,
            keys: None,
            values: None,
            flags: None,
            overflow: ctx.storage_buffer("events overflow", 4)?,
            totals: [
                ctx.storage_buffer("events found total", 4)?,
                ctx.storage_buffer("events lost total", 4)?,
            ],
            found: None,
            lost: None,
            sorted: [empty()?, empty()?],
            now: 0,
            encoded: (0, 0),
            hints: [ListHint::default(); 2],
        };
        ctx.check()?;
        Ok(events)
    }

    /// This frame's canonical list after [`Self::encode`] (and before [`Self::commit`]): its
    /// first `count` slots.
    pub(crate) fn sorted_list(&self) -> &wgpu::Buffer {
        &self.sorted[self.now].list
    }

    /// Records the canonical sort of this frame's pairs and, with `events`, its events against
    /// the previous frame's list, for the frame whose pairs `pairs` holds (its count clamped to
    /// its capacity: check the frame did not overflow before [`Self::commit`]). Without
    /// `events` (the deterministic pair order option, docs/design.md §10) only
    /// `Self::sorted_list` is written, nothing to commit. `n_objects` bounds the indices. One
    /// [`GpuEvents::encode`] per submission (the parameters go through `queue.write_buffer`).
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        pairs: &ResidentPairs<'_>,
        n_objects: u32,
        events: bool,
    ) -> Result<()> {
        let cap = pairs.capacity.max(1);
        let prev = 1 - self.now;
        let prev_cap = self.sorted[prev].len;
        let bits = (32 - n_objects.leading_zeros()).clamp(1, 32);
        let pad = if bits == 32 {
            u32::MAX
        } else {
            (1 << bits) - 1
        };
        let params = EventParams {
            cap,
            prev_cap,
            pad,
            count_index: pairs.count_index,
        };
        ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
        let bytes = cap as u64 * 4;
        let keys = ctx
            .ensure_storage(&mut self.keys, "events keys", bytes)?
            .clone();
        let values = ctx
            .ensure_storage(&mut self.values, "events values", bytes)?
            .clone();
        if self.sorted[self.now].cap < cap {
            ctx.check_binding("events sorted list", cap as u64 * 8)?;
            self.sorted[self.now].list = ctx.storage_buffer("events sorted", cap as u64 * 8)?;
            self.sorted[self.now].cap = cap;
        }
        self.sorted[self.now].len = cap;
        let (now, before) = (&self.sorted[self.now], &self.sorted[prev]);
        // The whole stage in one compute pass: its sorts and scans record into it too.
        let mut p = ctx.compute_pass(
            enc,
            &wgpu::ComputePassDescriptor {
                label: Some("events"),
                timestamp_writes: None,
            },
        );
        let run = |p: &mut wgpu::ComputePass<'_>,
                   pipeline: &wgpu::ComputePipeline,
                   buffers: &[(u32, &wgpu::Buffer)],
                   threads: u32| {
            let bg = ctx.bind_buffers("events", pipeline, buffers);
            let (x, y) = dispatch_2d(
                threads.div_ceil(WORKGROUP),
                ctx.limits.max_compute_workgroups_per_dimension,
            );
            ctx.dispatch_in(p, pipeline, &bg, [x, y, 1]);
        };
        let source = [(0, &self.params), (1, pairs.pairs), (2, pairs.counters)];
        let kv = [(3, &keys), (4, &values)];
        // Least significant first: by j, then stably by i.
        for keys_of in [&self.kernels.keys_by_j, &self.kernels.keys_by_i] {
            run(&mut p, keys_of, &[source.as_slice(), &kv].concat(), cap);
            self.sort.record(ctx, &mut p, &keys, &values, cap, bits)?;
        }
        run(
            &mut p,
            &self.kernels.gather_sorted,
            &[
                source.as_slice(),
                &[
                    (4, &values),
                    (5, &now.list),
                    (6, &now.count),
                    (12, &self.overflow),
                ],
            ]
            .concat(),
            cap,
        );
        if !events {
            return Ok(());
        }
        // The events' own buffers (the canonical sort alone needs none of them).
        let longest = cap.max(prev_cap) as u64;
        let flags = ctx
            .ensure_storage(&mut self.flags, "events flags", longest * 4)?
            .clone();
        let found = ctx
            .ensure_storage(&mut self.found, "events found", cap as u64 * 8)?
            .clone();
        let lost = ctx
            .ensure_storage(&mut self.lost, "events lost", prev_cap as u64 * 8)?
            .clone();
        let lists = [
            (0, &self.params),
            (5, &now.list),
            (6, &now.count),
            (7, &before.list),
            (8, &before.count),
            (9, &flags),
        ];
        // Found, then lost: mark, scan, scatter (in the list's canonical order).
        let steps = [
            (
                &self.kernels.mark_found,
                &self.kernels.scatter_found,
                cap,
                &found,
            ),
            (
                &self.kernels.mark_lost,
                &self.kernels.scatter_lost,
                prev_cap,
                &lost,
            ),
        ];
        for (k, (mark, scatter, len, out)) in steps.into_iter().enumerate() {
            run(&mut p, mark, &lists, len);
            self.scan
                .record(ctx, &mut p, &flags, len, Some(&self.totals[k]))?;
            let b = [
                (0, &self.params),
                (5, &now.list),
                (7, &before.list),
                (9, &flags),
                (10, &self.totals[k]),
                (11, out),
            ];
            run(&mut p, scatter, &b, len);
        }
        drop(p);
        self.encoded = (cap, prev_cap);
        Ok(())
    }

    /// Pairs found and lost in the last frame read back (what the next readback plans for).
    pub fn last_counts(&self) -> [u64; 2] {
        self.hints.map(|h| h.last())
    }

    /// Frames whose pair list overflowed (their events incomplete) since the last
    /// [`Self::clear_overflow`], as a device word (a GPU-resident caller reads it).
    pub fn overflow_buffer(&self) -> &wgpu::Buffer {
        &self.overflow
    }

    /// Zeroes the overflow count.
    pub fn clear_overflow(&self, ctx: &GpuContext) {
        ctx.write_buffer(&self.overflow, 0, &[0; 4]);
    }

    /// Makes this frame's list the previous one (after a frame whose pair list was whole).
    pub fn commit(&mut self) {
        self.now = 1 - self.now;
    }

    /// The last committed frame's canonical pair list, read back (two host waits): where a
    /// broad phase moves its events to the host (a frame in parts, docs/design.md §2.10).
    pub(crate) fn previous_pairs(&self, ctx: &GpuContext) -> Result<Vec<[u32; 2]>> {
        let last = &self.sorted[1 - self.now];
        let count = ctx.read::<u32>(&last.count, 1)?[0].min(last.cap) as usize;
        ctx.read::<[u32; 2]>(&last.list, count)
    }

    /// `Self::previous_pairs` as a future (two device reads awaited), for a frame that has
    /// nothing to run on the device (a box frame without boxes loses them all).
    pub async fn previous_pairs_async(&self, ctx: &GpuContext) -> Result<Vec<[u32; 2]>> {
        let last = &self.sorted[1 - self.now];
        let count = ctx.read_async::<u32>(&last.count, 1).await?[0].min(last.cap) as usize;
        if count == 0 {
            return Ok(Vec::new());
        }
        ctx.read_async::<[u32; 2]>(&last.list, count).await
    }

    /// Takes back the last [`Self::commit`] (its frame's list turned out cut short): the
    /// previous frame is again the one before it, whose list is whole.
    pub(crate) fn uncommit(&mut self) {
        self.now = 1 - self.now;
    }

    /// Makes `pairs` (canonical) the previous frame's list: the frames that ran elsewhere
    /// (in parts, their events on the host) hand their last list back to the device.
    pub(crate) fn seed_previous(&mut self, ctx: &GpuContext, pairs: &[[u32; 2]]) -> Result<()> {
        let len = u32::try_from(pairs.len()).map_err(|_| {
            Error::invalid_argument("pairs", format!("{} pairs exceed u32", pairs.len()))
        })?;
        let prev = 1 - self.now;
        let slot = &mut self.sorted[prev];
        if slot.cap < len {
            ctx.check_binding("events sorted list", len as u64 * 8)?;
            slot.list = ctx.storage_buffer("events sorted", len as u64 * 8)?;
            slot.cap = len;
        }
        if len > 0 {
            ctx.write_buffer(&slot.list, 0, bytemuck::cast_slice(pairs));
        }
        ctx.write_buffer(&slot.count, 0, &len.to_le_bytes());
        slot.len = len.max(1);
        Ok(())
    }

    /// Forgets the previous frame: the next frame's pairs are all found.
    pub fn reset(&mut self, ctx: &GpuContext) {
        for s in &self.sorted {
            ctx.write_buffer(&s.count, 0, &[0; 4]);
        }
    }

    /// Plans the readback of the last [`Self::encode`]'s counts and, with `lists`, its found
    /// and lost pairs: as many as the last frame's counts with headroom (`ListHint`), the
    /// rest, if any, by `Self::tails` after the wait.
    pub fn plan_readback(&self, rb: &mut Readback, lists: bool) -> EventsReadback {
        let (cap, prev_cap) = self.encoded;
        let list_bytes = |hint: &ListHint, n: u32| {
            if lists { hint.planned(n as u64) * 8 } else { 0 }
        };
        EventsReadback {
            totals: [rb.add(&self.totals[0], 0, 4), rb.add(&self.totals[1], 0, 4)],
            count: rb.add(&self.sorted[self.now].count, 0, 4),
            found: self
                .found
                .as_ref()
                .map_or(0..0, |b| rb.add(b, 0, list_bytes(&self.hints[0], cap))),
            lost: self
                .lost
                .as_ref()
                .map_or(0..0, |b| rb.add(b, 0, list_bytes(&self.hints[1], prev_cap))),
        }
    }

    /// The events planned by [`Self::plan_readback`] (lists empty when not planned), as far
    /// as the planned copies reach: complete them with [`Self::finish`] (or `Self::tails`
    /// and `Self::completed`) before use.
    pub fn events_from(&self, bytes: &[u8], plan: &EventsReadback) -> PartialEvents {
        let totals = plan.totals.clone().map(|r| readback::words(&bytes[r])[0]);
        let now = readback::words(&bytes[plan.count.clone()])[0] as u64;
        let list = |r: &Range<usize>, n: u32| -> Vec<[u32; 2]> {
            let n = (n as usize).min(r.len() / 8);
            bytemuck::pod_collect_to_vec(&bytes[r.start..r.start + 8 * n])
        };
        PartialEvents {
            events: FrameEvents {
                found: list(&plan.found, totals[0]),
                lost: list(&plan.lost, totals[1]),
                persisting: now - totals[0] as u64,
            },
            totals,
        }
    }

    /// What [`Self::events_from`] left unread of the found and lost lists, each as
    /// `(list, from, to)` for `readback::read_tails_async`; notes the counts for the next frame's
    /// plan. `None` where the list was not planned or came back whole.
    pub(crate) fn tails(
        &mut self,
        partial: &PartialEvents,
    ) -> [Option<(wgpu::Buffer, u64, u64)>; 2] {
        self.hints[0].saw(partial.totals[0] as u64);
        self.hints[1].saw(partial.totals[1] as u64);
        let rest = |buffer: &Option<wgpu::Buffer>, have: usize, total: u32| {
            buffer
                .as_ref()
                .filter(|_| (have as u64) < total as u64)
                .map(|b| (b.clone(), have as u64, total as u64))
        };
        [
            rest(&self.found, partial.events.found.len(), partial.totals[0]),
            rest(&self.lost, partial.events.lost.len(), partial.totals[1]),
        ]
    }

    /// Completes `partial` with the tails [`Self::tails`] named (`rest`, in the same order,
    /// `None` skipped) and returns the frame's events.
    pub(crate) fn completed(partial: PartialEvents, rest: [Option<Vec<u8>>; 2]) -> FrameEvents {
        let mut events = partial.events;
        let [found, lost] = rest;
        if let Some(bytes) = found {
            events
                .found
                .extend(bytemuck::pod_collect_to_vec::<u8, [u32; 2]>(&bytes));
        }
        if let Some(bytes) = lost {
            events
                .lost
                .extend(bytemuck::pod_collect_to_vec::<u8, [u32; 2]>(&bytes));
        }
        events
    }

    /// `Self::tails` and `Self::completed` with their own map (one more host wait, only
    /// when a list outgrew its plan): the frame's whole events. Awaited (docs/design.md §8.5).
    pub async fn finish(
        &mut self,
        ctx: &GpuContext,
        tail_readback: &mut Readback,
        partial: PartialEvents,
    ) -> Result<FrameEvents> {
        let wanted = self.tails(&partial);
        let list: Vec<_> = wanted.iter().flatten().cloned().collect();
        if list.is_empty() {
            return Ok(partial.events);
        }
        let mut rest = readback::read_tails_async(ctx, tail_readback, &list)
            .await?
            .into_iter();
        let rest = wanted.map(|w| w.and_then(|_| rest.next()));
        Ok(Self::completed(partial, rest))
    }

    /// The device lists of the last frame's events, for the caller's own passes: found pairs,
    /// lost pairs (each canonical, `[u32; 2]`), and their counts (one u32 each).
    #[allow(clippy::type_complexity)]
    pub fn buffers(
        &self,
    ) -> (
        Option<&wgpu::Buffer>,
        Option<&wgpu::Buffer>,
        &wgpu::Buffer,
        &wgpu::Buffer,
    ) {
        (
            self.found.as_ref(),
            self.lost.as_ref(),
            &self.totals[0],
            &self.totals[1],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(EventParams, "events.wgsl", "ev");
}
