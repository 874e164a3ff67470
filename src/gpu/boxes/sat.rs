//! Separating-axis narrow phase on the GPU (`shaders/boxes/sat.wgsl`): oriented boxes and convex
//! polygons, batched over a candidate-pair buffer that stays on the device.
//!
//! [`GpuSat::encode`] records the whole stage into a caller's encoder from buffers the caller
//! owns (e.g. the GPU broad phase's pair buffer and its count), with no readback in between: a
//! one-thread pass turns the candidate count into indirect dispatch arguments. Overlapping pairs
//! are appended with an atomic counter that keeps counting past the output capacity;
//! [`GpuSat::read_output`] (or [`GpuSat::plan_readback`], into the caller's one readback per
//! frame) returns the exact count, and the pairs only when they all fit, so the
//! caller grows the output ([`GpuSat::reserve_output`]) and re-runs instead of losing pairs.
//! [`GpuSat::obb_pairs`] and [`GpuSat::polygon_pairs`] do all of that for candidates on the host.

pub use super::sat_exact::Exact;
use super::sat_exact::oriented;
use crate::broadphase::{Clock, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::obb::{Obb, ObbFrame, obb_frames};
use crate::geom::polygon::PolygonSet;
use crate::gpu::boxes::uploads::ShapeBuffers;
use crate::gpu::context::GpuContext;
use crate::gpu::context::Uniform;
use crate::gpu::context::block::blocking;
use crate::gpu::readback::{self, Readback};
use crate::gpu::timer::PassTimer;
use crate::gpu::upload::Upload;
use std::ops::Range;
use web_time::Instant;

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/boxes/sat.wgsl` (its import `boxes/sat_params.wgsl`).
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct Params {
        n_objects: u32,
        /// Candidates in `candidates` that may be valid (the count is clamped to it).
        candidate_capacity: u32,
        /// Pairs `out_pairs` can hold.
        out_capacity: u32,
        /// Index of the candidate count inside `candidate_count`.
        count_index: u32,
        max_groups_x: u32,
        /// 1: append the sure overlapping pairs too; 0: count them only.
        store_sure: u32,
    }
}

/// The shapes to test, in buffers the caller owns.
#[derive(Clone, Copy)]
pub enum SatShapes<'a> {
    /// `frames`: `n` [`ObbFrame`]s (64 bytes each).
    Obbs {
        /// The box frames.
        frames: &'a wgpu::Buffer,
        /// Number of boxes.
        n: u32,
    },
    /// `vertices`: `vec2<f32>` per vertex; `offsets`: `n + 1` u32, polygon `i` being
    /// `vertices[offsets[i]..offsets[i + 1]]`, counter-clockwise (as [`PolygonSet`] holds them).
    Polygons {
        /// Every polygon's vertices, one `vec2<f32>` each.
        vertices: &'a wgpu::Buffer,
        /// `n + 1` u32: where each polygon's vertices start, then the end of the last.
        offsets: &'a wgpu::Buffer,
        /// Number of polygons.
        n: u32,
    },
}

/// The candidate pairs, in buffers the caller owns: `pairs` holds up to `capacity` `[u32; 2]`;
/// the number of valid ones is the u32 at index `count_index` of `count` (clamped to
/// `capacity`), typically written by the broad phase in the same submission.
#[derive(Clone, Copy)]
pub struct SatCandidates<'a> {
    /// The candidate pairs, `[u32; 2]` each.
    pub pairs: &'a wgpu::Buffer,
    /// Pairs `pairs` holds at most.
    pub capacity: u32,
    /// The buffer holding the number of valid pairs.
    pub count: &'a wgpu::Buffer,
    /// Index of that number among the u32s of `count`.
    pub count_index: u32,
}

/// Appends listed SAT pairs (`listed` in all, `unsure` of them) to `list`, within the memory
/// budget: a list of unsure pairs alone is what a count settles too, so its refusal is the
/// host's memory (`Exceeds::HostMemory`), not the pair list's, which counting would avoid.
fn append_listed(list: &mut Vec<Pair>, bytes: &[u8], listed: u32, unsure: u32) -> Result<()> {
    if listed == unsure {
        let what = format!("{unsure} pairs the device left unsure, settled on the host");
        crate::broadphase::memory::reserve(list, bytes.len() / 8, &what)?;
    }
    readback::append_pairs(list, bytes, u64::from(listed))
}

/// What one run found, before the unsure pairs are settled ([`SatOutput::settle`]).
#[derive(Clone, Debug, Default)]
pub struct SatOutput {
    /// Overlapping candidate pairs the device was sure of (also when they did not all fit).
    pub sure: u32,
    /// Box pairs within the error bound of touching (docs/design.md §4.2), listed reversed,
    /// `(j, i)`, for the host to settle.
    pub unsure: u32,
    /// Pairs the device appended to its list: the sure ones when stored, and the unsure ones.
    pub listed: u32,
    /// The appended pairs, in no particular order, when `listed <= capacity`. From
    /// `GpuSat::output_from` only as far as the planned copy reached (the last output's count
    /// with headroom): `GpuSat::finish_output` reads the rest; every other way returns them
    /// whole.
    pub pairs: Option<Vec<Pair>>,
}

impl SatOutput {
    /// Whether the list held every appended pair (else the stage runs again, larger).
    pub fn fits(&self) -> bool {
        self.pairs.is_some()
    }

    /// Settles the unsure pairs exactly on the host (`exact`: the frame's shapes, by the
    /// candidates' indices; unused when there are none): the number of overlapping pairs, and
    /// the list with each unsure pair replaced by its canonical self when it overlaps and
    /// dropped when not (the sure pairs alone when they were not stored). `None` when the list
    /// did not fit.
    pub fn settle(self, exact: Exact) -> Option<(u64, Vec<Pair>)> {
        use rayon::prelude::*;
        let mut pairs = self.pairs?;
        if self.unsure == 0 {
            return Some((self.sure as u64, pairs));
        }
        let flagged = |p: &Pair| p[0] > p[1];
        let settled: Vec<Pair> = pairs
            .par_iter()
            .filter(|p| flagged(p))
            .map(|&[j, i]| [i, j])
            // The host's own filtered test, then the exact settlement of what it leaves.
            .filter(|&[i, j]| exact.overlaps(i as usize, j as usize))
            .collect();
        pairs.retain(|p| !flagged(p));
        let found = self.sure as u64 + settled.len() as u64;
        pairs.extend(settled);
        Some((found, pairs))
    }
}

/// The GPU stage with its pipelines and its own reusable buffers (grown when needed).
pub struct GpuSat {
    prepare: wgpu::ComputePipeline,
    obb: wgpu::ComputePipeline,
    polygon: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    dispatch_args: wgpu::Buffer,
    out_count: wgpu::Buffer,
    out_pairs: wgpu::Buffer,
    out_capacity: u32,
    /// Capacity actually bound by the last `encode` (0 when counting only).
    encoded_capacity: u32,
    // Uploads for the host-fed entry points.
    shapes: ShapeBuffers,
    candidates: Option<wgpu::Buffer>,
    candidate_count: wgpu::Buffer,
    /// Staging kept across calls for what the host-fed entry points upload (docs/design.md
    /// §9.16): box frames, polygon vertices, polygon offsets, candidates, candidate count.
    uploads: [Upload; 5],
    timer: PassTimer,
    /// For the host-fed entry points and [`Self::read_output`].
    readback: Readback,
    /// The last output's count: how much of the list the next readback copies
    /// (docs/design.md §9.7); the rest of a longer list through `tail_readback`.
    pair_hint: readback::ListHint,
    tail_readback: Readback,
}

/// Where `GpuSat::plan_readback` put the stage's results in the mapped bytes.
pub struct SatReadback {
    counts: Range<usize>,
    pairs: Range<usize>,
    times: Range<usize>,
}

impl GpuSat {
    /// Compiles the stage's pipelines on `ctx` and allocates its first buffers.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        let module = ctx.shader_file("boxes/sat.wgsl")?;
        let [prepare, obb, polygon] =
            ctx.pipelines("sat", &module, ["prepare", "obb_main", "polygon_main"])?;
        let params = ctx.uniform_buffer("sat params", Params::uniform_size())?;
        let dispatch_args =
            ctx.storage_buffer_with("sat dispatch args", 12, wgpu::BufferUsages::INDIRECT)?;
        let out_count = ctx.storage_buffer("sat out count", 16)?;
        let out_pairs = ctx.storage_buffer("sat out pairs", 8)?;
        let candidate_count = ctx.storage_buffer("sat candidate count", 4)?;
        Ok(Self {
            prepare,
            obb,
            polygon,
            params,
            dispatch_args,
            out_count,
            out_pairs,
            out_capacity: 1,
            encoded_capacity: 0,
            shapes: ShapeBuffers::new([
                "SAT box frames",
                "SAT polygon vertices",
                "SAT polygon offsets",
            ]),
            candidates: None,
            candidate_count,
            uploads: [
                Upload::new("SAT box frames upload"),
                Upload::new("SAT polygon vertices upload"),
                Upload::new("SAT polygon offsets upload"),
                Upload::new("SAT candidates upload"),
                Upload::new("SAT candidate count upload"),
            ],
            timer: PassTimer::new(ctx, 2),
            readback: Readback::new("sat readback"),
            pair_hint: Default::default(),
            tail_readback: Readback::new("sat readback, the rest"),
        })
    }

    /// Grows the output buffer to hold at least `pairs` pairs (errors beyond the binding limit).
    pub fn reserve_output(&mut self, ctx: &GpuContext, pairs: u32) -> Result<()> {
        if pairs > self.out_capacity {
            let bytes = 8 * pairs as u64;
            ctx.check_binding("SAT output pairs", bytes)?;
            self.out_pairs = ctx.storage_buffer("sat out pairs", bytes)?;
            self.out_capacity = pairs;
        }
        Ok(())
    }

    /// Records the stage into `encoder`: clear the counters, compute the dispatch size from the
    /// candidate count, test every candidate. With `write_pairs = false` the sure pairs are only
    /// counted (the unsure ones are listed either way). Submit the encoder, then call [`Self::read_output`]. The parameters go through
    /// `queue.write_buffer`, so encode at most one SAT run per submission.
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        shapes: SatShapes<'_>,
        candidates: SatCandidates<'_>,
        write_pairs: bool,
    ) -> Result<()> {
        let n_objects = match shapes {
            SatShapes::Obbs { n, .. } | SatShapes::Polygons { n, .. } => n,
        };
        if (candidates.count_index as u64 + 1) * 4 > candidates.count.size() {
            return Err(Error::invalid_argument(
                "candidates",
                format!(
                    "candidate count index {} lies beyond its {}-byte buffer",
                    candidates.count_index,
                    candidates.count.size()
                ),
            ));
        }
        self.encoded_capacity = self.out_capacity;
        let params = Params {
            n_objects,
            candidate_capacity: candidates.capacity,
            out_capacity: self.encoded_capacity,
            count_index: candidates.count_index,
            max_groups_x: ctx.limits.max_compute_workgroups_per_dimension,
            store_sure: write_pairs as u32,
        };
        ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
        encoder.clear_buffer(&self.out_count, 0, None);

        let mut common = vec![
            (0, &self.params),
            (1, candidates.pairs),
            (2, candidates.count),
            (3, &self.out_pairs),
            (4, &self.out_count),
        ];
        let (pipeline, label) = match shapes {
            SatShapes::Obbs { frames, .. } => {
                common.push((6, frames));
                (&self.obb, "sat_obb")
            }
            SatShapes::Polygons {
                vertices, offsets, ..
            } => {
                common.push((7, vertices));
                common.push((8, offsets));
                (&self.polygon, "sat_polygon")
            }
        };
        let prepare = [
            (0, &self.params),
            (1, candidates.pairs),
            (2, candidates.count),
            (5, &self.dispatch_args),
        ];

        self.timer.reset();
        ctx.dispatch_prepared(
            encoder,
            ("sat prepare", &self.prepare, &prepare),
            (label, pipeline, &common),
            self.timer.pass(label),
            &self.dispatch_args,
        );
        self.timer.resolve(encoder);
        Ok(())
    }

    /// The last [`Self::encode`]'s output list and its count word, for a following stage in
    /// the same submission (frame events). Unsure pairs are in it reversed: a frame that has
    /// any computes its events again from the settled list ([`Self::replace_output`]).
    pub(crate) fn output_list(&self) -> crate::gpu::spheres::broad_phase::ResidentPairs<'_> {
        crate::gpu::spheres::broad_phase::ResidentPairs {
            pairs: &self.out_pairs,
            capacity: self.encoded_capacity,
            counters: &self.out_count,
            count_index: 0,
        }
    }

    /// Writes `pairs` over the last [`Self::encode`]'s output list and its count word (the
    /// settled list of a frame that had unsure pairs, for a following stage such as events).
    pub(crate) fn replace_output(&self, ctx: &GpuContext, pairs: &[Pair]) -> Result<()> {
        if pairs.len() as u64 > self.encoded_capacity as u64 {
            return Err(Error::gpu(
                crate::error::GpuFailure::Inconsistent,
                format!(
                    "{} settled pairs do not fit the SAT list of {}",
                    pairs.len(),
                    self.encoded_capacity
                ),
            ));
        }
        if !pairs.is_empty() {
            ctx.write_buffer(&self.out_pairs, 0, bytemuck::cast_slice(pairs));
        }
        let count = [pairs.len() as u32, 0, 0, 0];
        ctx.write_buffer(&self.out_count, 0, bytemuck::cast_slice(&count));
        Ok(())
    }

    /// Plans the readback of the last [`Self::encode`]'s results into `rb`: the count words, the
    /// output list when `read_pairs` (as far as the last count with headroom: the count is not
    /// known before the wait) and the timestamps. Unsure pairs of a frame that stores none are
    /// read by [`Self::finish_output`].
    pub(crate) fn plan_readback(&self, rb: &mut Readback, read_pairs: bool) -> SatReadback {
        let pair_bytes = if read_pairs {
            8 * self.pair_hint.planned(self.encoded_capacity as u64)
        } else {
            0
        };
        SatReadback {
            counts: rb.add(&self.out_count, 0, 16),
            pairs: rb.add(&self.out_pairs, 0, pair_bytes),
            times: rb.add_timer(&self.timer),
        }
    }

    /// The results planned by [`Self::plan_readback`], from the mapped bytes: the exact counts,
    /// the listed pairs when they all fit, and the pass times. Candidates naming objects
    /// that do not exist are an error (the kernel skips and counts them rather than reading out
    /// of bounds).
    pub(crate) fn output_from(
        &self,
        ctx: &GpuContext,
        bytes: &[u8],
        plan: &SatReadback,
    ) -> Result<(SatOutput, Vec<(&'static str, f64)>)> {
        let counts = readback::words(&bytes[plan.counts.clone()]);
        let [listed, invalid, unsure, counted] = [counts[0], counts[1], counts[2], counts[3]];
        if invalid > 0 {
            return Err(Error::invalid_argument(
                "candidates",
                format!(
                    "{invalid} SAT candidate pairs name objects that do not exist (or malformed \
                 polygon offsets)"
                ),
            ));
        }
        // As far as the planned copy reaches; [`Self::finish_output`] reads the rest.
        let pairs = (listed <= self.encoded_capacity)
            .then(|| {
                let at = plan.pairs.start;
                let have = (listed as usize).min(plan.pairs.len() / 8);
                let mut list = Vec::new();
                append_listed(&mut list, &bytes[at..at + 8 * have], listed, unsure)?;
                Ok::<_, Error>(list)
            })
            .transpose()?;
        let times = self.timer.times_from(ctx, &bytes[plan.times.clone()]);
        let sure = listed - unsure + counted;
        let output = SatOutput {
            sure,
            unsure,
            listed,
            pairs,
        };
        Ok((output, times))
    }

    /// The frame events of a frame whose SAT list held unsure pairs: the settled list written over
    /// the device's, its events computed again (one more submission and wait).
    pub(crate) async fn events_of_settled(
        &self,
        ctx: &GpuContext,
        rb: &mut Readback,
        ev: &mut crate::gpu::events::GpuEvents,
        pairs: &[Pair],
        n: u32,
    ) -> Result<crate::gpu::events::PartialEvents> {
        self.replace_output(ctx, pairs)?;
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        rb.clear();
        ev.encode(ctx, &mut enc, &self.output_list(), n, true)?;
        let plan = ev.plan_readback(rb, true);
        rb.record(ctx, &mut enc)?;
        ctx.submit(enc);
        let partial = rb
            .map_async(ctx, |bytes| ev.events_from(bytes, &plan))
            .await?;
        ev.clear_overflow(ctx);
        Ok(partial)
    }

    blocking! {
        /// Completes an output of `Self::output_from`: the pairs past the planned copy, read in
        /// one more map (only when the list outgrew the last count with headroom); notes the count
        /// for the next plan.
        pub(crate) fn finish_output = "the SAT pairs' tail";
        pub(crate) async fn finish_output_async(
            &mut self,
            ctx: &GpuContext,
            output: SatOutput,
        ) -> Result<SatOutput> {
            let mut output = output;
            self.pair_hint.saw(output.listed as u64);
            if let Some(pairs) = &mut output.pairs
                && (pairs.len() as u64) < output.listed as u64
            {
                let tail = [(
                    self.out_pairs.clone(),
                    pairs.len() as u64,
                    output.listed as u64,
                )];
                let rest = readback::read_tails_async(ctx, &mut self.tail_readback, &tail).await?;
                append_listed(pairs, &rest[0], output.listed, output.unsure)?;
            }
            Ok(output)
        }
    }

    /// After the submission of [`Self::encode`] (which did not plan a readback): the exact
    /// count, and the pairs when requested, written by that run, and all fit. One host wait.
    pub fn read_output(&mut self, ctx: &GpuContext, read_pairs: bool) -> Result<SatOutput> {
        Ok(self.read_back(ctx, read_pairs)?.0)
    }

    /// [`Self::read_output`] with the pass times.
    fn read_back(
        &mut self,
        ctx: &GpuContext,
        read_pairs: bool,
    ) -> Result<(SatOutput, Vec<(&'static str, f64)>)> {
        let mut rb = std::mem::replace(&mut self.readback, Readback::new("sat readback"));
        rb.clear();
        let plan = self.plan_readback(&mut rb, read_pairs);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        rb.record(ctx, &mut enc)?;
        ctx.submit(enc);
        let out = rb.map(ctx, |bytes| self.output_from(ctx, bytes, &plan));
        self.readback = rb;
        let (output, times) = out??;
        Ok((self.finish_output(ctx, output)?, times))
    }

    /// Host-fed boxes: uploads frames and candidates, runs, reads back, settles the unsure pairs
    /// on the host. Appends to `out` (after clearing it) the overlapping candidate pairs in
    /// canonical order, each as `(min, max)`; with `out = None` only counts. Boxes are assumed
    /// validated (see `validate_obbs`); a candidate past the boxes, or naming one box twice, is
    /// an error. [`crate::gpu::GpuNarrowPhase`] validates the boxes too.
    pub fn obb_pairs(
        &mut self,
        ctx: &GpuContext,
        boxes: &[Obb],
        candidates: &[Pair],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let start = host_fed_start(boxes.len(), candidates, &mut out)?;
        let oriented = oriented(candidates);
        let frames = obb_frames(boxes);
        let n = crate::gpu::context::count_u32("boxes", boxes.len())?;
        let bytes = std::mem::size_of_val(frames.as_slice()) as u64;
        let buf = self.shapes.frames(ctx, bytes)?.clone();
        let bytes = [(FRAMES, &buf, bytemuck::cast_slice::<ObbFrame, u8>(&frames))];
        let kind = SatKind::Obbs(buf.clone(), n);
        let exact = Exact::Boxes(boxes);
        self.run_host_candidates(ctx, kind, &bytes, &oriented, exact, out, start)
    }

    /// Host-fed polygons; see [`Self::obb_pairs`].
    pub fn polygon_pairs(
        &mut self,
        ctx: &GpuContext,
        set: &PolygonSet,
        candidates: &[Pair],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let start = host_fed_start(set.len(), candidates, &mut out)?;
        let sizes = set
            .offsets
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]) as usize);
        crate::gpu::adapter_check::check_polygon_loops(ctx, sizes)?;
        let n = crate::gpu::context::count_u32("polygons", set.len())?;
        let vb = std::mem::size_of_val(set.vertices.as_slice()) as u64;
        let ob = 4 * set.offsets.len() as u64;
        let [vertices, offsets] = self.shapes.polygons(ctx, vb, ob)?.map(Clone::clone);
        let bytes = [
            (VERTICES, &vertices, bytemuck::cast_slice(&set.vertices)),
            (OFFSETS, &offsets, bytemuck::cast_slice(&set.offsets)),
        ];
        let kind = SatKind::Polygons(vertices.clone(), offsets.clone(), n);
        let (oriented, exact) = (oriented(candidates), Exact::PolygonSet(set));
        self.run_host_candidates(ctx, kind, &bytes, &oriented, exact, out, start)
    }

    /// `shape_bytes`: (upload slot, target, bytes) of what the first chunk's encoder copies;
    /// `exact`: the shapes to settle unsure pairs with.
    #[allow(clippy::too_many_arguments)]
    fn run_host_candidates(
        &mut self,
        ctx: &GpuContext,
        kind: SatKind,
        shape_bytes: &[(usize, &wgpu::Buffer, &[u8])],
        candidates: &[Pair],
        exact: Exact<'_>,
        mut out: Option<&mut Vec<Pair>>,
        start: Instant,
    ) -> Result<Stats> {
        // Bind groups kept across frames (docs/design.md §9.16).
        let _frame = ctx.frame();
        ctx.settle()?;
        if let Some(o) = out.as_deref_mut() {
            o.clear();
        }
        let max_binding = ctx.max_binding_bytes();
        // Candidate chunks that fit one binding (and whose output, at most as long, too).
        let chunk_len = ((max_binding / 8) as usize).clamp(1, u32::MAX as usize);
        let mut stats = Stats {
            tests: candidates.len() as u64,
            ..Stats::default()
        };
        let mut gpu_seconds = 0.0;
        for (c, chunk) in candidates.chunks(chunk_len.max(1)).enumerate() {
            let bytes = 8 * chunk.len() as u64;
            let cand = ctx
                .ensure_storage(&mut self.candidates, "SAT candidates", bytes)?
                .clone();
            // The uploads are the encoder's first commands: the shapes with the first chunk.
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            if c == 0 {
                for &(slot, target, bytes) in shape_bytes {
                    self.uploads[slot].write(ctx, &mut encoder, target, 0, bytes)?;
                }
            }
            self.uploads[CANDIDATES].write(
                ctx,
                &mut encoder,
                &cand,
                0,
                bytemuck::cast_slice(chunk),
            )?;
            let len = chunk.len() as u32;
            let len = bytemuck::bytes_of(&len);
            self.uploads[COUNT].write(ctx, &mut encoder, &self.candidate_count, 0, len)?;
            let want_pairs = out.is_some();
            // Every candidate may overlap (or be unsure): then no re-run is ever needed.
            self.reserve_output(ctx, chunk.len() as u32)?;
            let count = self.candidate_count.clone();
            let shapes = match &kind {
                SatKind::Obbs(frames, n) => SatShapes::Obbs { frames, n: *n },
                SatKind::Polygons(vertices, offsets, n) => SatShapes::Polygons {
                    vertices,
                    offsets,
                    n: *n,
                },
            };
            self.encode(
                ctx,
                &mut encoder,
                shapes,
                SatCandidates {
                    pairs: &cand,
                    capacity: chunk.len() as u32,
                    count: &count,
                    count_index: 0,
                },
                want_pairs,
            )?;
            // The results come back with the same submission: one host wait per chunk.
            let mut rb = std::mem::replace(&mut self.readback, Readback::new("sat readback"));
            rb.clear();
            let plan = self.plan_readback(&mut rb, want_pairs);
            rb.record(ctx, &mut encoder)?;
            ctx.submit(encoder);
            for upload in &mut self.uploads {
                upload.after_submit();
            }
            let read = rb.map(ctx, |bytes| self.output_from(ctx, bytes, &plan));
            self.readback = rb;
            let (result, times) = read??;
            let result = self.finish_output(ctx, result)?;
            gpu_seconds += times.iter().map(|(_, s)| s).sum::<f64>();
            let listed = result.listed;
            let (found, pairs) = result.settle(exact).ok_or_else(|| {
                Error::gpu(
                    crate::error::GpuFailure::Inconsistent,
                    format!(
                        "SAT output overflow: {listed} pairs listed for {} slots",
                        self.encoded_capacity
                    ),
                )
            })?;
            stats.pairs += found;
            if let Some(o) = out.as_deref_mut() {
                crate::broadphase::memory::reserve_pairs(o, pairs.len(), stats.pairs)?;
                o.extend_from_slice(&pairs);
            }
        }
        if ctx.has_timestamps() {
            stats.stage("sat", gpu_seconds, Clock::GpuTimestamp);
        }
        stats.stage("sat_total", start.elapsed().as_secs_f64(), Clock::Wall);
        crate::broadphase::order_pairs(out, &mut stats);
        Ok(stats)
    }
}

/// Slots of [`GpuSat`]'s kept uploads.
const FRAMES: usize = 0;
const VERTICES: usize = 1;
const OFFSETS: usize = 2;
const CANDIDATES: usize = 3;
const COUNT: usize = 4;

impl GpuSat {
    /// Host-fed uploads so far through the kept staging buffers and through
    /// `queue.write_buffer` (a map not resolved in time).
    pub fn upload_counts(&self) -> (u64, u64) {
        self.uploads
            .iter()
            .fold((0, 0), |(a, b), u| (a + u.kept, b + u.direct))
    }
}

/// Shapes uploaded by the host-fed entry points (owned handles, so `self` can be borrowed).
enum SatKind {
    Obbs(wgpu::Buffer, u32),
    Polygons(wgpu::Buffer, wgpu::Buffer, u32),
}

/// The start of a host-fed call ([`GpuSat::obb_pairs`], [`GpuSat::polygon_pairs`]): its clock,
/// `out` cleared (so an error before the run leaves it empty), the candidates checked against
/// the `shapes`.
fn host_fed_start(
    shapes: usize,
    candidates: &[Pair],
    out: &mut Option<&mut Vec<Pair>>,
) -> Result<Instant> {
    let start = Instant::now();
    if let Some(o) = out.as_deref_mut() {
        o.clear();
    }
    crate::broadphase::check_candidates(shapes, candidates)?;
    Ok(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "boxes/sat.wgsl", "params");

    /// The kernel's error bound is the CPU filter's (docs/design.md §4.2).
    #[test]
    fn the_error_bound_is_the_cpus() {
        use crate::geom::sat::{OBB_ERROR_ABS, OBB_ERROR_REL};
        let constant = |name| crate::gpu::shader::wgsl_constant("boxes/sat.wgsl", name) as f32;
        assert_eq!(constant("OBB_ERROR_REL"), OBB_ERROR_REL);
        assert_eq!(constant("OBB_ERROR_ABS"), OBB_ERROR_ABS);
        use crate::geom::sat::{POLYGON_ERROR_ABS, POLYGON_ERROR_REL};
        assert_eq!(constant("POLYGON_ERROR_REL"), POLYGON_ERROR_REL);
        assert_eq!(constant("POLYGON_ERROR_ABS"), POLYGON_ERROR_ABS);
    }
}
