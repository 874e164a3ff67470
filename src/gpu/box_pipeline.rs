//! [`GpuBoxPipeline`]: oriented boxes (or convex polygons) from upload to overlapping pairs on
//! the GPU in one submission, with no readback between the stages (SPEC 3).
//!
//! Broad phase: each shape's bounding sphere (centre = box centre, radius = |half extents|;
//! polygons: a circle in z = 0 around the vertex AABB centre), widened by [`PROXY_WIDENING`], goes
//! through [`GpuBroadPhase`] (grid by default), whose pair list stays on the device. Narrow phase:
//! [`GpuSat`] reads that list and the broad phase's append counter directly (indirect dispatch).
//! Only the totals and the overlapping pairs come back. When either list overflows it grows to
//! the exact count and the frame runs again: no pair is lost.
//!
//! The proxy is a sphere, not the shape's AABB: sound (a box lies inside its bounding sphere)
//! but looser, so `Stats::tests` (SAT tests = candidates) is larger than the CPU pipeline's.

use crate::broadphase::{Clock, Method, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet};
use crate::geom::sphere::Sphere;
use crate::gpu::broad_phase::{GpuBroadPhase, ResidentPairs};
use crate::gpu::context::GpuContext;
use crate::gpu::sat::{GpuSat, SatCandidates, SatShapes};
use glam::{Vec2, Vec3};
use std::sync::Arc;
use std::time::Instant;

/// Relative widening of the proxy radii: covers the rounding of `length` and of the sphere
/// test, so an overlapping (or touching) pair is always a candidate.
pub const PROXY_WIDENING: f32 = 1e-5;

/// Frames tried before giving up: the first run sizes the candidate list, the second fits.
const MAX_RUNS: usize = 4;

/// The GPU box / polygon pipeline; buffers stay resident across calls.
pub struct GpuBoxPipeline {
    ctx: Arc<GpuContext>,
    broad: GpuBroadPhase,
    sat: GpuSat,
    frames: Option<wgpu::Buffer>,
    vertices: Option<wgpu::Buffer>,
    offsets: Option<wgpu::Buffer>,
    proxies: Vec<Sphere>,
}

/// Shapes as uploaded for one call.
enum Uploaded {
    Obbs,
    Polygons,
}

impl GpuBoxPipeline {
    /// `method`: the sphere broad phase run over the proxies (`Method::Grid` is the usual one).
    pub fn new(ctx: Arc<GpuContext>, method: Method) -> Result<Self> {
        let sat = GpuSat::new(&ctx)?;
        let broad = GpuBroadPhase::new(ctx.clone(), method)?;
        Ok(Self {
            ctx,
            broad,
            sat,
            frames: None,
            vertices: None,
            offsets: None,
            proxies: Vec::new(),
        })
    }

    /// Sets the candidate list's capacity (pairs); it still grows on demand. Tiny values
    /// exercise the overflow path.
    pub fn set_candidate_capacity(&mut self, pairs: u64) -> Result<()> {
        self.broad.set_pair_capacity(pairs)
    }

    /// Every overlapping (or touching) pair of boxes, `(i, j)` with `i < j`, in no particular
    /// order, into `out` (cleared first); `None` only counts. `Stats::tests` = SAT tests.
    pub fn obb_overlaps(&mut self, boxes: &[Obb], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let start = Instant::now();
        validate_obbs(boxes)?;
        let frames = obb_frames(boxes);
        upload(
            &self.ctx,
            &mut self.frames,
            "box frames",
            bytemuck::cast_slice::<ObbFrame, u8>(&frames),
        )?;
        self.proxies.clear();
        self.proxies.extend(boxes.iter().map(|b| Sphere {
            center: b.center,
            radius: b.half_extents.length() * (1.0 + PROXY_WIDENING),
        }));
        self.run(Uploaded::Obbs, out, start)
    }

    /// The polygon equivalent of [`Self::obb_overlaps`] (2D; bounding circles at z = 0).
    pub fn polygon_overlaps(
        &mut self,
        polygons: &[Polygon],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        let start = Instant::now();
        let set = PolygonSet::new(polygons)?;
        if set.is_empty() {
            return Err(Error::EmptyScene);
        }
        upload(
            &self.ctx,
            &mut self.vertices,
            "polygon vertices",
            bytemuck::cast_slice(&set.vertices),
        )?;
        upload(
            &self.ctx,
            &mut self.offsets,
            "polygon offsets",
            bytemuck::cast_slice(&set.offsets),
        )?;
        self.proxies.clear();
        self.proxies
            .extend(polygons.iter().map(|p| bounding_circle(p.vertices())));
        self.run(Uploaded::Polygons, out, start)
    }

    fn run(
        &mut self,
        kind: Uploaded,
        out: Option<&mut Vec<Pair>>,
        start: Instant,
    ) -> Result<Stats> {
        let ctx = &*self.ctx;
        let n = u32::try_from(self.proxies.len()).map_err(|_| {
            Error::TooLarge(format!("{} shapes: indices are u32", self.proxies.len()))
        })?;
        // Bounds of finite but enormous shapes can overflow to infinity: a clear error.
        crate::geom::sphere::validate_spheres(&self.proxies)?;
        let want_pairs = out.is_some();
        let shapes = match kind {
            Uploaded::Obbs => SatShapes::Obbs {
                frames: self.frames.as_ref().expect("uploaded"),
                n,
            },
            Uploaded::Polygons => SatShapes::Polygons {
                vertices: self.vertices.as_ref().expect("uploaded"),
                offsets: self.offsets.as_ref().expect("uploaded"),
                n,
            },
        };
        let mut runs = 0;
        let totals = loop {
            runs += 1;
            let mut enc = self.broad.encode_resident(&self.proxies)?;
            let list = self.broad.resident_pairs();
            let capacity = list.capacity;
            self.sat
                .encode(ctx, &mut enc, shapes, candidates(&list), want_pairs)?;
            ctx.queue.submit([enc.finish()]);
            let totals = self.broad.finish_resident(n)?;
            if totals.pairs <= capacity as u64 {
                break totals;
            }
            if runs == MAX_RUNS {
                return Err(Error::Gpu(format!(
                    "box pipeline: the candidate count kept changing over {MAX_RUNS} runs of the \
                     same frame"
                )));
            }
            // The SAT stage saw a truncated list: grow it and run the frame again.
            self.broad.grow_pair_list(totals.pairs)?;
        };
        let mut result = self.sat.read_output(ctx, want_pairs)?;
        if want_pairs && result.pairs.is_none() {
            // The candidates are still resident: only the SAT stage runs again, sized for every
            // candidate overlapping, so it fits.
            let need = result.found.max(totals.pairs.min(u32::MAX as u64) as u32);
            self.sat.reserve_output(ctx, need)?;
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            let list = self.broad.resident_pairs();
            self.sat
                .encode(ctx, &mut enc, shapes, candidates(&list), want_pairs)?;
            ctx.queue.submit([enc.finish()]);
            ctx.wait()?;
            result = self.sat.read_output(ctx, want_pairs)?;
        }
        let Some(pairs) = result.pairs.or((!want_pairs).then(Vec::new)) else {
            return Err(Error::Gpu(format!(
                "SAT output overflow after resizing: {} pairs found",
                result.found
            )));
        };
        let mut stats = Stats {
            tests: totals.pairs,
            pairs: result.found as u64,
            stages: Vec::new(),
        };
        for (label, seconds) in totals.pass_times {
            stats.stage(label, seconds, Clock::GpuTimestamp);
        }
        for (label, seconds) in self.sat.last_pass_times(ctx)? {
            stats.stage(label, seconds, Clock::GpuTimestamp);
        }
        if let Some(o) = out {
            o.clear();
            o.extend_from_slice(&pairs);
        }
        stats.stage("total", start.elapsed().as_secs_f64(), Clock::Wall);
        Ok(stats)
    }
}

/// The broad phase's resident list as SAT candidates.
fn candidates<'a>(list: &ResidentPairs<'a>) -> SatCandidates<'a> {
    SatCandidates {
        pairs: list.pairs,
        capacity: list.capacity,
        count: list.counters,
        count_index: list.count_index,
    }
}

/// A circle (as a sphere at z = 0) around every vertex: centred on the vertex AABB, radius the
/// farthest vertex, widened.
fn bounding_circle(vertices: &[Vec2]) -> Sphere {
    let lo = vertices
        .iter()
        .fold(Vec2::splat(f32::INFINITY), |a, &v| a.min(v));
    let hi = vertices
        .iter()
        .fold(Vec2::splat(f32::NEG_INFINITY), |a, &v| a.max(v));
    let c = (lo + hi) * 0.5;
    let r = vertices
        .iter()
        .map(|&v| (v - c).length())
        .fold(0.0f32, f32::max);
    Sphere {
        center: Vec3::new(c.x, c.y, 0.0),
        radius: r * (1.0 + PROXY_WIDENING),
    }
}

/// Writes `bytes` into `slot`, growing it (by half again) when too small.
fn upload(
    ctx: &GpuContext,
    slot: &mut Option<wgpu::Buffer>,
    label: &str,
    bytes: &[u8],
) -> Result<()> {
    let need = (bytes.len() as u64).max(4);
    if slot.as_ref().is_none_or(|b| b.size() < need) {
        ctx.check_binding(label, need)?;
        let max = ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size);
        let size = ((need + need / 2).min(max).max(need) + 3) & !3;
        *slot = Some(ctx.storage_buffer(label, size, wgpu::BufferUsages::empty())?);
    }
    ctx.queue
        .write_buffer(slot.as_ref().expect("just filled"), 0, bytes);
    Ok(())
}
