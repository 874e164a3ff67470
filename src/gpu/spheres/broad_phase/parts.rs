//! Frames in parts (docs/design.md §2.10): a frame past a size limit of the device (a binding,
//! a read-back buffer), or spread over several devices ([`GpuContext::peers`]), runs through
//! [`crate::partition`] with this broad phase (and one per other device) running the parts.
//! Once a broad phase has split a frame it keeps splitting (its events then live on the host,
//! in an [`EventTracker`] seeded with the device's last list), so the events of consecutive
//! frames always compare like with like.

use super::GpuBroadPhase;
use crate::broadphase::{Clock, Pair, PartsReport, Stats, canonicalize};
use crate::error::{Error, Result};
use crate::events::EventTracker;
use crate::geom::sphere::Sphere;
use crate::gpu::context::is_size_limit;
use crate::partition::{self, PartRunner, RunsParts};
use web_time::Instant;

/// Bytes per object of the sphere buffer: the first plan's part size is a binding over this
/// (a method whose largest array is wider splits its first parts once, then remembers).
const SPHERE_BYTES: u64 = 16;
/// With several devices, at least this many parts per device, so that none waits long for
/// another's last part.
const PARTS_PER_DEVICE: usize = 4;

/// What a broad phase keeps for frames in parts.
#[derive(Default)]
pub(super) struct Parts {
    /// Broad phases on the other devices.
    helpers: Vec<GpuBroadPhase>,
    /// Frames run in parts from now on.
    active: bool,
    /// The events, on the host, while frames run in parts.
    pub(super) tracker: Option<EventTracker>,
    /// Objects of the largest part of the last frame that had to split one: the next frames'
    /// plan starts there.
    learned: Option<usize>,
    pub(super) last: Option<PartsReport>,
}

impl Parts {
    /// The broad phases of `method` on each of the context's peers.
    /// The helpers' pair limit (a part on another device meets the caller's, as one here does).
    pub(super) fn set_pair_limit(&mut self, limit: u64) {
        for helper in &mut self.helpers {
            helper.set_pair_limit(limit);
        }
    }

    pub(super) fn with_helpers(helpers: Vec<GpuBroadPhase>) -> Self {
        Parts {
            active: !helpers.is_empty(),
            helpers,
            ..Default::default()
        }
    }
}

impl GpuBroadPhase {
    /// Whether this frame runs in parts.
    pub(super) fn in_parts(&self) -> bool {
        self.parts.as_ref().is_some_and(|p| p.active)
    }

    /// How the last frame was split (`None`: it was not).
    pub(super) fn last_parts(&self) -> Option<PartsReport> {
        self.parts.as_ref().and_then(|p| p.last)
    }

    /// Events turned on or off ([`crate::broadphase::BroadPhase::track_events`]): in parts,
    /// the next frame's pairs are all found, as on the device.
    pub(super) fn reset_host_events(&mut self, on: bool) {
        if let Some(p) = &mut self.parts {
            p.tracker = on.then(EventTracker::new);
        }
    }

    /// Before a frame on the device (`encode_from_buffer`) after frames in parts, whose events
    /// lived on the host: the device's events continue from the host's last list, and the next
    /// frame in parts from the device's ([`Self::take_events_from_device`]). A list the device
    /// cannot hold (the frames ran in parts for the size of their lists) is an error after
    /// which the events start over, all the next frame's pairs found (refusing every later
    /// frame would leave the caller no way on).
    pub(super) fn hand_events_to_device(&mut self) -> Result<()> {
        let Some(parts) = self.parts.as_mut().filter(|p| p.active) else {
            return Ok(());
        };
        let (Some(ev), Some(tracker)) = (self.events.as_mut(), parts.tracker.take()) else {
            return Ok(());
        };
        if let Err(e) = ev.seed_previous(&self.ctx, tracker.pairs()) {
            ev.reset(&self.ctx);
            return Err(Error::Context {
                context: format!(
                    "the {} pairs of the last frame in parts as the device's previous frame \
                     (the events start over: the next frame's pairs are all found)",
                    tracker.pairs().len()
                ),
                source: Box::new(e),
            });
        }
        Ok(())
    }

    /// Before a frame in parts after frames on the device (`encode_from_buffer`): the host's
    /// events continue from the device's last list.
    pub(super) fn take_events_from_device(&mut self) -> Result<()> {
        let Some(parts) = self.parts.as_mut() else {
            return Ok(());
        };
        if parts.tracker.is_none()
            && let Some(ev) = &self.events
        {
            let mut tracker = EventTracker::new();
            tracker.update(ev.previous_pairs(&self.ctx)?);
            parts.tracker = Some(tracker);
        }
        Ok(())
    }

    /// Forgets the last split (a frame ran whole).
    pub(super) fn ran_whole(&mut self) {
        if let Some(p) = &mut self.parts {
            p.last = None;
        }
    }

    /// From now on frames run in parts: the events move to the host, starting from the
    /// device's last list.
    pub(super) fn start_parts(&mut self) -> Result<()> {
        let tracker = match &self.events {
            Some(ev) => {
                let mut tracker = EventTracker::new();
                tracker.update(ev.previous_pairs(&self.ctx)?);
                Some(tracker)
            }
            None => None,
        };
        let parts = self.parts.get_or_insert_with(Default::default);
        parts.active = true;
        parts.tracker = tracker;
        Ok(())
    }

    /// One frame in parts over this device and the helpers.
    pub(super) fn find_pairs_in_parts(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let start = Instant::now();
        // A failed frame leaves no events of an earlier one to take.
        self.last_events = None;
        self.check_resident_before_host_frame_blocking();
        self.take_events_from_device()?;
        let mut parts = self.parts.take().unwrap_or_default();
        if self.events.is_some() && parts.tracker.is_none() {
            parts.tracker = Some(EventTracker::new());
        }
        let with_events = out.is_some() && parts.tracker.is_some();
        let devices = 1 + parts.helpers.len();
        let binding = parts
            .helpers
            .iter()
            .map(|h| h.ctx.max_binding_bytes())
            .fold(self.ctx.max_binding_bytes(), u64::min);
        let cap = (binding / SPHERE_BYTES) as usize;
        let mut max_objects = cap;
        if let Some(learned) = parts.learned {
            max_objects = max_objects.min(learned);
        }
        if devices > 1 {
            // Blocks of half a part: enough parts for every device.
            max_objects = max_objects.min((2 * spheres.len()).div_ceil(PARTS_PER_DEVICE * devices));
        }
        // The parts run as whole frames without events or the canonical sort (the merged list
        // is the frame's; its events come from the tracker).
        let (events, canonical) = (self.events.take(), self.canonical.take());
        let mut pairs = Vec::new();
        // The caller's limit on the merged list (a list kept only for the events is not theirs),
        // checked by the partition on the frame's exact count. The parts store whatever they
        // find (within the memory budget): under the caller's limit each, a count alone was
        // refused and a stored frame named one part's pairs.
        let limit = match out.is_some() {
            true => self.pair_limit,
            false => u64::MAX,
        };
        let own_limit = std::mem::replace(&mut self.pair_limit, u64::MAX);
        parts.set_pair_limit(u64::MAX);
        let result = {
            let mut runners: Vec<Box<PartRunner<'_>>> = Vec::with_capacity(devices);
            runners.push(Box::new(PartsOn::new(self)));
            for helper in parts.helpers.iter_mut() {
                runners.push(Box::new(PartsOn::new(helper)));
            }
            let mut refs: Vec<&mut PartRunner<'_>> = runners.iter_mut().map(|r| &mut **r).collect();
            let store = out.is_some() || with_events;
            partition::find_pairs_unordered(
                spheres,
                store.then_some(&mut pairs),
                max_objects,
                limit,
                &mut refs,
            )
        };
        self.events = events;
        self.canonical = canonical;
        self.pair_limit = own_limit;
        parts.set_pair_limit(own_limit);
        let outcome = result.map(|(mut stats, report)| {
            // A frame that split teaches the next frames its largest part; one that did not
            // lets them try parts twice as large again (a dense moment must not cap every
            // later frame).
            parts.learned = if report.splits > 0 {
                Some(report.largest as usize)
            } else {
                parts
                    .learned
                    .map(|l| l.saturating_mul(2))
                    .filter(|&l| l < cap)
            };
            parts.last = Some(report);
            if with_events {
                let tracker = parts.tracker.as_mut().expect("with_events");
                self.last_events = Some(tracker.update(pairs.clone()));
            }
            if let Some(out) = out {
                if self.canonical.is_some() {
                    canonicalize(&mut pairs);
                }
                // Into the caller's own vector where it holds them (its allocation kept, as a
                // frame run whole keeps it), else the merged list itself.
                if out.capacity() >= pairs.len() {
                    out.clear();
                    out.extend_from_slice(&pairs);
                } else {
                    *out = pairs;
                }
            }
            stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
            stats
        });
        parts.active = true;
        self.parts = Some(parts);
        outcome
    }
}

/// The parts of a frame on one device, each a whole frame of its broad phase, started and
/// finished as frames in flight ([`GpuBroadPhase::submit_frame`]): the next part goes up while
/// the device runs one, the last one's pairs are kept while it runs the next.
struct PartsOn<'a> {
    broad: &'a mut GpuBroadPhase,
    /// The parts started, oldest first.
    started: std::collections::VecDeque<u64>,
}

impl<'a> PartsOn<'a> {
    fn new(broad: &'a mut GpuBroadPhase) -> Self {
        Self {
            broad,
            started: Default::default(),
        }
    }
}

impl RunsParts for PartsOn<'_> {
    fn run(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        let result = self.broad.find_pairs_whole(part, Some(out));
        result.map_err(|e| part_error(e, part))
    }

    fn start(&mut self, part: &[Sphere]) -> Result<bool> {
        let seq = self.broad.submit_part(part, true, true);
        match seq.map_err(|e| part_error(e, part))? {
            Some(seq) => {
                self.started.push_back(seq);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn finish(&mut self, part: &[Sphere], out: &mut Vec<Pair>) -> Result<Stats> {
        let Some(seq) = self.started.pop_front() else {
            return Err(Error::OutOfOrder(
                "a part finished that was not started".into(),
            ));
        };
        let result = self.broad.finish_part(seq, part, Some(out), true);
        result.map_err(|e| part_error(e, part))
    }
}

/// A part's error: a size limit asks the partition for smaller parts; any other `TooLarge`
/// (host memory) is no size limit of the device, so it ends the frame rather than splitting
/// parts that no split would make fit.
fn part_error(e: Error, part: &[Sphere]) -> Error {
    if matches!(e, Error::TooLarge { .. }) && !is_size_limit(&e) {
        Error::Context {
            context: format!("a part of {} spheres", part.len()),
            source: Box::new(e),
        }
    } else {
        e
    }
}
