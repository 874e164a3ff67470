//! [`GpuBoxPipeline`]: oriented boxes (or convex polygons) from upload to overlapping pairs on
//! the GPU in one submission, with no readback between the stages (docs/design.md §4.5, docs/design.md §4.5).
//!
//! Broad phase ([`Proxy::Aabb`], the default): [`GpuAabbSap`] computes each shape's AABB on the
//! GPU from the uploaded shapes (the CPU pipeline's formula, see its module docs), sorts by
//! (column across y and z, min.x) and sweeps along x (columns sized on the host from the
//! shapes, the few far wider than the rest tested apart: [`SweepLayout`]), leaving the candidate
//! pairs and their count on the device. Narrow phase:
//! [`GpuSat`] reads that list and count directly (indirect dispatch). Only the totals and the
//! overlapping pairs come back. When either list overflows it grows to the exact count and the
//! frame runs again: no pair is lost. `Stats::tests` = SAT tests = candidates, the same count as
//! the CPU pipeline's up to pairs whose AABBs are within about an ulp of touching.
//!
//! [`Proxy::Sphere`] keeps the older route for comparison: each shape's bounding sphere (box:
//! radius |half extents|; polygon: a circle at z = 0 around the vertex AABB centre), widened by
//! [`PROXY_WIDENING`], through a sphere [`GpuBroadPhase`]. Sound but looser (more SAT tests),
//! especially for elongated shapes.

use crate::broadphase::{Clock, FrameEvents, Method, Pair, Stats, canonicalize};
use crate::error::{Error, Result};
use crate::geom::contact::Contact;
use crate::geom::obb::Obb;
use crate::geom::polygon::Polygon;
use crate::geom::sphere::Sphere;
use crate::gpu::boxes::aabb_sap::{GpuAabbSap, SapReadback, SweepLayout, SweepShapes};
use crate::gpu::boxes::after_sat::{AfterSat, Followed, SatPlans, SatRun, settle_with_contacts};
use crate::gpu::boxes::sat::{Exact, GpuSat, SatCandidates, SatOutput};
use crate::gpu::boxes::uploads::{ShapeBuffers, ShapeUploads};
use crate::gpu::context::block::blocking;
use crate::gpu::context::{GpuContext, block_on};
use crate::gpu::events::GpuEvents;
use crate::gpu::readback::{self, ListHint, Readback, read_tails_async};
use crate::gpu::spheres::broad_phase::{GpuBroadPhase, ResidentPairs, ResidentReadback};
use std::sync::Arc;
use web_time::Instant;

mod aabb;
mod contacts;
mod upload;

/// Relative widening of the sphere proxies' radii: covers the rounding of `length` and of the
/// sphere test, so an overlapping (or touching) pair is always a candidate.
pub const PROXY_WIDENING: f32 = 1e-5;

/// Frames tried before giving up: the first run sizes the candidate list, the second fits.
const MAX_RUNS: usize = 4;

/// Which bounding volume feeds the broad phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proxy {
    /// Each shape's AABB, computed on the GPU, through `GpuAabbSap`.
    Aabb,
    /// Each shape's bounding sphere through the sphere broad phase `Method`.
    Sphere(Method),
}

impl Proxy {
    /// Short name for reports: `aabb_sap` or `sphere_<method>`.
    pub fn name(&self) -> String {
        match self {
            Proxy::Aabb => "aabb_sap".into(),
            Proxy::Sphere(m) => format!("sphere_{}", m.name()),
        }
    }
}

enum Broad {
    Aabb(Box<GpuAabbSap>),
    Sphere {
        broad: Box<GpuBroadPhase>,
        proxies: Vec<Sphere>,
    },
}

/// The GPU box / polygon pipeline; buffers stay resident across calls.
pub struct GpuBoxPipeline {
    ctx: Arc<GpuContext>,
    broad: Broad,
    sat: GpuSat,
    shapes: ShapeBuffers,
    /// The caller's boxes ([`Self::aabb_overlaps`]).
    aabbs: Option<wgpu::Buffer>,
    /// The shapes' bytes for the next frame and their kept staging buffers.
    uploads: ShapeUploads,
    /// Sweep columns and wide shapes of the uploaded shapes (AABB proxies).
    layout: SweepLayout,
    use_columns: bool,
    /// The frame's one readback (docs/design.md §9.7).
    readback: Readback,
    /// The rest of event lists longer than planned (`GpuEvents::finish`), kept across frames.
    tail_readback: Readback,
    /// The last candidate-list frame's count: the next one copies that much with headroom.
    candidate_hint: ListHint,
    /// Frame events and contacts of the overlapping pairs on the device, when asked for.
    after: AfterSat,
    last_events: Option<FrameEvents>,
    /// The last contacts frame's contacts, in the order of its pairs.
    last_contacts: Vec<Contact>,
}

/// Shapes as uploaded for one call.
#[derive(Clone, Copy)]
enum Uploaded {
    Obbs(u32),
    Polygons(u32),
    Aabbs(u32),
}

/// What a call runs after the broad phase.
#[derive(Clone, Copy, PartialEq)]
enum Until {
    /// SAT; store the overlapping pairs or only count them; with `contacts` (and `store`),
    /// their contacts too, the pairs sorted.
    Sat { store: bool, contacts: bool },
    /// Nothing: read the candidate pairs back.
    Candidates,
}

/// Where a frame's broad phase put its results in the readback.
enum BroadPlan {
    Aabb(SapReadback),
    Sphere(ResidentReadback),
}

/// What a frame reads back after the broad phase.
enum Tail {
    /// The SAT results, and the frame events and contacts when asked for.
    Sat(SatPlans),
    /// The candidate list as far as planned from the last such frame (elements), and the
    /// list's buffer for the rest.
    Candidates(std::ops::Range<usize>, u64, wgpu::Buffer),
}

/// A frame's results after the broad phase.
enum FrameOut {
    Sat((SatOutput, Vec<(&'static str, f64)>), Followed),
    Candidates(Vec<Pair>),
}

/// Totals of the broad phase of one frame.
struct BroadTotals {
    candidates: u64,
    pass_times: Vec<(&'static str, f64)>,
}

impl GpuBoxPipeline {
    /// The pipeline on `ctx`'s device, with `proxy` as its broad phase.
    pub fn new(ctx: Arc<GpuContext>, proxy: Proxy) -> Result<Self> {
        let sat = GpuSat::new(&ctx)?;
        let broad = match proxy {
            Proxy::Aabb => Broad::Aabb(Box::new(GpuAabbSap::new(&ctx)?)),
            Proxy::Sphere(method) => Broad::Sphere {
                broad: Box::new(GpuBroadPhase::new(ctx.clone(), method)?),
                proxies: Vec::new(),
            },
        };
        Ok(Self {
            ctx,
            broad,
            sat,
            shapes: ShapeBuffers::new(["box frames", "polygon vertices", "polygon offsets"]),
            aabbs: None,
            uploads: ShapeUploads::new(),
            layout: SweepLayout::single(),
            use_columns: true,
            readback: Readback::new("box frame readback"),
            tail_readback: Readback::new("box frame readback, the rest"),
            candidate_hint: ListHint::default(),
            after: AfterSat::default(),
            last_events: None,
            last_contacts: Vec::new(),
        })
    }

    /// Computes the frame events of the overlapping pairs on the device for every following
    /// call that stores its pairs (docs/design.md §10); `take_events` returns them.
    pub fn track_events(&mut self, on: bool) -> Result<()> {
        self.after.events = if on {
            Some(Box::new(GpuEvents::new(&self.ctx)?))
        } else {
            None
        };
        self.last_events = None;
        Ok(())
    }

    /// The last call's frame events, when tracked.
    pub fn take_events(&mut self) -> Option<FrameEvents> {
        self.last_events.take()
    }

    /// The broad phase's proxy.
    pub fn proxy(&self) -> Proxy {
        match &self.broad {
            Broad::Aabb(_) => Proxy::Aabb,
            Broad::Sphere { broad, .. } => Proxy::Sphere(broad.method()),
        }
    }

    /// Sets the candidate list's capacity (pairs); it still grows on demand. Tiny values
    /// exercise the overflow path.
    pub fn set_candidate_capacity(&mut self, pairs: u64) -> Result<()> {
        match &mut self.broad {
            Broad::Aabb(sap) => sap.set_candidate_capacity(&self.ctx, pairs),
            Broad::Sphere { broad, .. } => broad.set_pair_capacity(pairs),
        }
    }

    /// Caps workgroups per dispatch dimension of the AABB broad phase (see
    /// `GpuAabbSap::set_max_groups_per_dim`); no effect with sphere proxies.
    pub fn set_max_groups_per_dim(&mut self, max: u32) {
        if let Broad::Aabb(sap) = &mut self.broad {
            sap.set_max_groups_per_dim(max);
        }
    }

    /// With `false`, the AABB broad phase sweeps along x in one column (the plain sweep and
    /// prune; same candidates, more steps); `true` (the default) cuts the (y, z) plane into
    /// columns, with the few shapes far wider than the rest tested apart ([`SweepLayout`]).
    pub fn set_sweep_columns(&mut self, on: bool) {
        self.use_columns = on;
    }

    blocking! {
        /// Every overlapping (or touching) pair of boxes, `(i, j)` with `i < j`, in canonical
        /// order (sorted on the host: the stage `order`), into `out` (cleared first); `None`
        /// only counts. `Stats::tests` = SAT tests.
        pub fn obb_overlaps = "a box frame";
        pub async fn obb_overlaps_async(
            &mut self,
            boxes: &[Obb],
            out: Option<&mut Vec<Pair>>,
        ) -> Result<Stats> {
            // No boxes: no pairs, as every broad phase's empty frame (docs/design.md §1).
            if boxes.is_empty() {
                return self.empty_frame(out).await;
            }
            let mut out = out;
            // Cleared first: a frame refused (a bad box) leaves no list of the frame before.
            if let Some(out) = out.as_deref_mut() {
                out.clear();
            }
            let start = Instant::now();
            let kind = self.upload_obbs(boxes)?;
            self.sat_frame(kind, Exact::Boxes(boxes), out, start).await
        }
    }

    blocking! {
        /// The polygon equivalent of [`Self::obb_overlaps`] (2D; AABBs or circles at z = 0).
        pub fn polygon_overlaps = "a polygon frame";
        pub async fn polygon_overlaps_async(
            &mut self,
            polygons: &[Polygon],
            out: Option<&mut Vec<Pair>>,
        ) -> Result<Stats> {
            if polygons.is_empty() {
                return self.empty_frame(out).await;
            }
            let mut out = out;
            if let Some(out) = out.as_deref_mut() {
                out.clear();
            }
            let start = Instant::now();
            let kind = self.upload_polygons(polygons)?;
            self.sat_frame(kind, Exact::Polygons(polygons), out, start)
                .await
        }
    }

    /// A frame without shapes: no pairs. With events tracked and the pairs stored, it loses
    /// every pair of the frame before (read back from the device's last list) and the next
    /// frame finds them again, as the sphere broad phase's empty frame does.
    pub(super) async fn empty_frame(&mut self, out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let stored = out.is_some();
        let stats = crate::broadphase::no_pairs(out);
        self.last_events = None;
        self.last_contacts.clear();
        if let (Some(ev), true) = (&mut self.after.events, stored) {
            let ctx = &*self.ctx;
            let _frame = ctx.frame();
            ctx.settle()?;
            let lost = ev.previous_pairs_async(ctx).await?;
            ev.reset(ctx);
            ctx.check()?;
            self.last_events = Some(FrameEvents {
                found: Vec::new(),
                lost,
                persisting: 0,
            });
        }
        Ok(stats)
    }

    /// A frame of the uploaded shapes through the SAT stage, storing the pairs when `out` is
    /// given.
    async fn sat_frame(
        &mut self,
        kind: Uploaded,
        exact: Exact<'_>,
        out: Option<&mut Vec<Pair>>,
        start: Instant,
    ) -> Result<Stats> {
        let until = Until::Sat {
            store: out.is_some(),
            contacts: false,
        };
        let mut out = out;
        let mut stats = self
            .run(kind, until, exact, out.as_deref_mut(), start)
            .await?;
        crate::broadphase::order_pairs(out, &mut stats);
        Ok(stats)
    }

    /// The broad phase alone: every candidate pair (i < j, in canonical order) into `out`;
    /// returns the count. For tests and for measuring the proxies. No boxes: none.
    pub fn obb_candidates(&mut self, boxes: &[Obb], out: &mut Vec<Pair>) -> Result<u64> {
        let upload = |pipeline: &mut Self| pipeline.upload_obbs(boxes);
        self.candidates_frame(boxes.len(), upload, "a box frame", out)
    }

    /// The polygon equivalent of [`Self::obb_candidates`].
    pub fn polygon_candidates(&mut self, polygons: &[Polygon], out: &mut Vec<Pair>) -> Result<u64> {
        let upload = |pipeline: &mut Self| pipeline.upload_polygons(polygons);
        self.candidates_frame(polygons.len(), upload, "a polygon frame", out)
    }

    /// [`Self::obb_candidates`] of `shapes` shapes that `upload` uploads (`what`: the frame,
    /// for the error of a page that cannot block).
    fn candidates_frame(
        &mut self,
        shapes: usize,
        upload: impl FnOnce(&mut Self) -> Result<Uploaded>,
        what: &str,
        out: &mut Vec<Pair>,
    ) -> Result<u64> {
        if shapes == 0 {
            self.last_events = None;
            return Ok(crate::broadphase::no_pairs(Some(out)).tests);
        }
        out.clear();
        let start = Instant::now();
        let kind = upload(self)?;
        let run = self.run(kind, Until::Candidates, Exact::NONE, Some(&mut *out), start);
        let tests = block_on(what, run)??.tests;
        canonicalize(out);
        Ok(tests)
    }

    /// One frame of the uploaded shapes; `exact`: the shapes, to settle the pairs the device
    /// left unsure. Every wait is awaited: natively
    /// the callers block on it, in a browser the page awaits it (docs/design.md §8.5).
    async fn run(
        &mut self,
        kind: Uploaded,
        until: Until,
        exact: Exact<'_>,
        mut out: Option<&mut Vec<Pair>>,
        start: Instant,
    ) -> Result<Stats> {
        // A frame that fails, or lists candidates only, leaves no events of an earlier one.
        self.last_events = None;
        let ctx = &*self.ctx;
        // A frame: its bind groups are kept across frames (docs/design.md §9.16).
        let _frame = ctx.frame();
        ctx.settle()?;
        if let Broad::Sphere { proxies, .. } = &self.broad {
            // Bounds of finite but enormous shapes can overflow to infinity, or pass the
            // spheres' limit by the widening: a clear error, naming the shape and the way out.
            crate::geom::sphere::validate_spheres(proxies).map_err(|e| match e {
                Error::InvalidObject { index, problem } => Error::InvalidObject {
                    index,
                    problem: format!(
                        "its bounding sphere, the sphere proxy's: {problem}; the AABB proxy \
                         (Proxy::Aabb) takes every valid shape"
                    ),
                },
                e => e,
            })?;
        }
        let (shapes, n) = match kind {
            Uploaded::Obbs(n) => (SweepShapes::Shapes(self.shapes.obbs(n)), n),
            Uploaded::Polygons(n) => (SweepShapes::Shapes(self.shapes.polygon_shapes(n)), n),
            Uploaded::Aabbs(n) => (
                SweepShapes::Aabbs {
                    boxes: self.aabbs.as_ref().expect("uploaded"),
                    n,
                },
                n,
            ),
        };
        // The SAT stage's view of the shapes (none for the caller's boxes: no SAT there).
        let sat_shapes = match shapes {
            SweepShapes::Shapes(s) => Some(s),
            SweepShapes::Aabbs { .. } => None,
        };
        let sat_input = || {
            sat_shapes
                .ok_or_else(|| Error::OutOfOrder("the caller's boxes have no SAT stage".into()))
        };
        let (store, with_contacts) = match until {
            Until::Sat { store, contacts } => (store, store && contacts),
            Until::Candidates => (false, false),
        };
        let mut runs = 0;
        // One submission and one host wait per frame: the broad phase's counters and times,
        // then the SAT count, pairs and times (or the candidate list) in one readback.
        let (totals, frame, tail) = loop {
            runs += 1;
            let rb = &mut self.readback;
            rb.clear();
            let [frames, vertices, offsets] = self.shapes.targets();
            let targets = [frames, vertices, offsets, self.aabbs.as_ref()];
            let (mut enc, list, broad_plan) = match &mut self.broad {
                Broad::Aabb(sap) => {
                    let mut enc = ctx.device.create_command_encoder(&Default::default());
                    // The shapes first: the sweep reads them.
                    self.uploads.encode(ctx, &mut enc, targets)?;
                    sap.encode(ctx, &mut enc, shapes, &self.layout)?;
                    let plan = BroadPlan::Aabb(sap.plan_readback(rb));
                    (enc, sap.candidates(), plan)
                }
                Broad::Sphere { broad, proxies } => {
                    let mut enc = broad.encode_resident(proxies)?;
                    // Before the SAT stage, the first to read the shapes.
                    self.uploads.encode(ctx, &mut enc, targets)?;
                    let plan = BroadPlan::Sphere(broad.plan_resident_readback(rb));
                    (enc, candidates(&broad.resident_pairs()), plan)
                }
            };
            let capacity = list.capacity;
            let tail = match until {
                Until::Sat { .. } => {
                    let run = SatRun {
                        shapes: sat_input()?,
                        candidates: list,
                        n,
                        store,
                        contacts: with_contacts,
                    };
                    Tail::Sat(self.after.encode(ctx, &mut enc, rb, &mut self.sat, run)?)
                }
                Until::Candidates => {
                    // By the last frame's count (docs/design.md §9.7): the rest, if the list
                    // grew past it, in one more map below.
                    let planned = self.candidate_hint.planned(capacity as u64);
                    let at = rb.add(list.pairs, 0, 8 * planned);
                    Tail::Candidates(at, planned, list.pairs.clone())
                }
            };
            rb.record(ctx, &mut enc)?;
            ctx.submit(enc);
            self.uploads.after_submit();
            let (broad, sat, after) = (&mut self.broad, &self.sat, &self.after);
            let (totals, frame) = self
                .readback
                .map_async(ctx, |bytes| -> Result<_> {
                    let totals = match (broad, &broad_plan) {
                        (Broad::Aabb(sap), BroadPlan::Aabb(plan)) => {
                            let t = sap.totals_from(ctx, bytes, plan)?;
                            BroadTotals {
                                candidates: t.candidates,
                                pass_times: t.pass_times,
                            }
                        }
                        (Broad::Sphere { broad, .. }, BroadPlan::Sphere(plan)) => {
                            let t = broad.resident_totals_from(n, bytes, plan)?;
                            BroadTotals {
                                candidates: t.pairs,
                                pass_times: t.pass_times,
                            }
                        }
                        _ => unreachable!("the plan follows the broad phase"),
                    };
                    if totals.candidates > capacity as u64 {
                        // The SAT stage saw a truncated list: its results are not read.
                        return Ok((totals, None));
                    }
                    let frame = match &tail {
                        Tail::Sat(plans) => {
                            let read = sat.output_from(ctx, bytes, &plans.sat)?;
                            let followed = after.read(bytes, plans, &read.0)?;
                            FrameOut::Sat(read, followed)
                        }
                        Tail::Candidates(at, planned, _) => {
                            let have = totals.candidates.min(*planned) as usize;
                            let read = &bytes[at.start..at.start + 8 * have];
                            // Candidates, which no count avoids: host memory, the whole list's.
                            let mut list = Vec::new();
                            let what = format!("{} candidate pairs", totals.candidates);
                            let all = totals.candidates as usize;
                            crate::broadphase::memory::reserve(&mut list, all, &what)?;
                            readback::append_pairs(&mut list, read, totals.candidates)?;
                            FrameOut::Candidates(list)
                        }
                    };
                    Ok((totals, Some(frame)))
                })
                .await??;
            if let Some(frame) = frame {
                break (totals, frame, tail);
            }
            if runs == MAX_RUNS {
                return Err(Error::gpu(
                    crate::error::GpuFailure::Inconsistent,
                    format!(
                        "box pipeline: the candidate count kept changing over {MAX_RUNS} runs of the \
                     same frame"
                    ),
                ));
            }
            match &mut self.broad {
                Broad::Aabb(sap) => sap.grow_candidates(ctx, totals.candidates)?,
                Broad::Sphere { broad, .. } => broad.grow_pair_list(totals.candidates)?,
            }
        };
        let mut stats = Stats {
            tests: totals.candidates,
            pairs: 0,
            stages: Vec::new(),
            chosen: None,
        };
        for (label, seconds) in totals.pass_times {
            stats.stage(label, seconds, Clock::GpuTimestamp);
        }
        let ((mut result, mut sat_times), mut followed) = match frame {
            FrameOut::Sat(read, followed) => (read, followed),
            FrameOut::Candidates(mut pairs) => {
                self.candidate_hint.saw(totals.candidates);
                if let (Tail::Candidates(_, _, buffer), true) =
                    (&tail, (pairs.len() as u64) < totals.candidates)
                {
                    let rest = [(buffer.clone(), pairs.len() as u64, totals.candidates)];
                    let bytes = read_tails_async(ctx, &mut self.tail_readback, &rest).await?;
                    for b in bytes {
                        readback::append_pairs(&mut pairs, &b, totals.candidates)?;
                    }
                }
                if let Some(o) = out {
                    *o = pairs;
                }
                stats.pairs = totals.candidates;
                stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
                return Ok(stats);
            }
        };
        if !result.fits() {
            // The candidates are still resident: only the SAT stage and its followers run again
            // (a second wait), sized for every candidate overlapping or unsure, so it fits.
            let list = match &self.broad {
                Broad::Aabb(sap) => sap.candidates(),
                Broad::Sphere { broad, .. } => candidates(&broad.resident_pairs()),
            };
            let need = result
                .listed
                .max(totals.candidates.min(u32::MAX as u64) as u32);
            self.sat.reserve_output(ctx, need)?;
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            let rb = &mut self.readback;
            rb.clear();
            let run = SatRun {
                shapes: sat_input()?,
                candidates: list,
                n,
                store,
                contacts: with_contacts,
            };
            let plans = self.after.encode(ctx, &mut enc, rb, &mut self.sat, run)?;
            rb.record(ctx, &mut enc)?;
            ctx.submit(enc);
            let (sat, after) = (&self.sat, &self.after);
            let read = self
                .readback
                .map_async(ctx, |bytes| {
                    let read = sat.output_from(ctx, bytes, &plans.sat)?;
                    let followed = after.read(bytes, &plans, &read.0)?;
                    Ok::<_, Error>((read, followed))
                })
                .await??;
            ((result, sat_times), followed) = read;
            if let (Some(ev), true) = (&self.after.events, store) {
                // The first run's overflow is not the caller's: this run is whole.
                ev.clear_overflow(ctx);
            }
        }
        result = self.sat.finish_output_async(ctx, result).await?;
        let (unsure, listed) = (result.unsure, result.listed);
        let settled = match (followed.contacts, &mut self.after.contacts) {
            (Some(partial), Some(kernel)) => {
                let contacts = kernel.finish_async(ctx, partial, listed).await?;
                let settled = settle_with_contacts(result, contacts, exact).transpose()?;
                settled.map(|(pairs, contacts)| {
                    self.last_contacts = contacts;
                    (pairs.len() as u64, pairs)
                })
            }
            _ => result.settle(exact),
        };
        let Some((found, pairs)) = settled else {
            return Err(Error::gpu(
                crate::error::GpuFailure::Inconsistent,
                format!("SAT output overflow after resizing: {listed} pairs listed"),
            ));
        };
        // Room for the caller's copy before the frame's events are kept.
        if let Some(o) = out.as_deref_mut() {
            o.clear();
            crate::broadphase::memory::reserve_pairs(o, pairs.len(), found)?;
        }
        let mut frame_events = followed.events;
        if unsure > 0
            && store
            && let Some(ev) = &mut self.after.events
        {
            // The device's events saw the unsure pairs reversed: again, from the settled list.
            let settled = self
                .sat
                .events_of_settled(ctx, &mut self.readback, ev, &pairs, n);
            frame_events = Some(settled.await?);
        }
        let frame_events = match (&mut self.after.events, frame_events) {
            (Some(ev), Some(partial)) => {
                let events = ev.finish(ctx, &mut self.tail_readback, partial).await?;
                ev.commit();
                Some(events)
            }
            _ => None,
        };
        self.last_events = frame_events;
        stats.pairs = found;
        for (label, seconds) in sat_times {
            stats.stage(label, seconds, Clock::GpuTimestamp);
        }
        if let Some(o) = out {
            o.extend_from_slice(&pairs);
        }
        stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}

fn shape_count(n: usize) -> Result<u32> {
    if n == 0 {
        return Err(Error::EmptyScene);
    }
    crate::gpu::context::count_u32("shapes", n)
}

/// The sphere broad phase's resident list as SAT candidates.
fn candidates<'a>(list: &ResidentPairs<'a>) -> SatCandidates<'a> {
    SatCandidates {
        pairs: list.pairs,
        capacity: list.capacity,
        count: list.counters,
        count_index: list.count_index,
    }
}

impl GpuBoxPipeline {
    /// Shape uploads so far through the kept staging buffers and through `queue.write_buffer`
    /// (the first of each size, or a map not resolved in time).
    pub fn upload_counts(&self) -> (u64, u64) {
        self.uploads.counts()
    }
}
