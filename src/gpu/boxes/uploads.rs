//! The shapes' uploads of [`GpuBoxPipeline`](super::pipeline::GpuBoxPipeline): bytes staged by
//! an upload call, copied by the next frame's encoder.

use crate::error::Result;
use crate::geom::sphere::Sphere;
use crate::gpu::boxes::sat::SatShapes;
use crate::gpu::context::GpuContext;
use crate::gpu::upload::Upload;
use glam::{Vec2, Vec3};

/// Indices of [`ShapeUploads`]' targets.
pub(super) const FRAMES: usize = 0;
pub(super) const VERTICES: usize = 1;
pub(super) const OFFSETS: usize = 2;
pub(super) const AABBS: usize = 3;

/// The shapes' bytes staged by an upload call, copied by the next frame's encoder through
/// staging buffers kept across frames (`gpu::upload`, docs/design.md §9.16): box frames,
/// polygon vertices, polygon offsets, the caller's AABBs.
pub(super) struct ShapeUploads {
    kept: [Upload; 4],
    pending: [Vec<u8>; 4],
    staged: [bool; 4],
}

impl ShapeUploads {
    pub(super) fn new() -> Self {
        Self {
            kept: [
                Upload::new("box frames upload"),
                Upload::new("polygon vertices upload"),
                Upload::new("polygon offsets upload"),
                Upload::new("boxes upload"),
            ],
            pending: Default::default(),
            staged: [false; 4],
        }
    }

    /// Keeps `bytes` for target `i` until the next frame's encoder.
    pub(super) fn stage(&mut self, i: usize, bytes: &[u8]) {
        self.pending[i].clear();
        self.pending[i].extend_from_slice(bytes);
        self.staged[i] = true;
    }

    /// Copies what is staged into its target as commands of `enc`.
    pub(super) fn encode(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        targets: [Option<&wgpu::Buffer>; 4],
    ) -> Result<()> {
        let slots = self
            .kept
            .iter_mut()
            .zip(&self.pending)
            .zip(&mut self.staged);
        for (((kept, bytes), staged), target) in slots.zip(targets) {
            if let (true, Some(target)) = (*staged, target) {
                kept.write(ctx, enc, target, 0, bytes)?;
                *staged = false;
            }
        }
        Ok(())
    }

    /// After the submission that copied: the kept buffers are mapped again.
    pub(super) fn after_submit(&mut self) {
        for k in &mut self.kept {
            k.after_submit();
        }
    }

    /// Uploads through kept buffers and through `queue.write_buffer`, all targets together.
    pub(super) fn counts(&self) -> (u64, u64) {
        self.kept
            .iter()
            .fold((0, 0), |(a, b), k| (a + k.kept, b + k.direct))
    }
}

/// The device buffers of uploaded shapes, grown when needed: box frames, polygon vertices,
/// polygon offsets (the box pipeline's, and the SAT stage's host-fed entry points').
pub(super) struct ShapeBuffers {
    labels: [&'static str; 3],
    frames: Option<wgpu::Buffer>,
    vertices: Option<wgpu::Buffer>,
    offsets: Option<wgpu::Buffer>,
}

impl ShapeBuffers {
    /// None yet; `labels` name the frames, vertices and offsets buffers once made.
    pub(super) fn new(labels: [&'static str; 3]) -> Self {
        Self {
            labels,
            frames: None,
            vertices: None,
            offsets: None,
        }
    }

    /// The frames buffer, holding at least `bytes`.
    pub(super) fn frames(&mut self, ctx: &GpuContext, bytes: u64) -> Result<&wgpu::Buffer> {
        ctx.ensure_storage(&mut self.frames, self.labels[0], bytes)
    }

    /// The vertices and offsets buffers, holding at least `vertices` and `offsets` bytes.
    pub(super) fn polygons(
        &mut self,
        ctx: &GpuContext,
        vertices: u64,
        offsets: u64,
    ) -> Result<[&wgpu::Buffer; 2]> {
        ctx.ensure_storage(&mut self.vertices, self.labels[1], vertices)?;
        ctx.ensure_storage(&mut self.offsets, self.labels[2], offsets)?;
        Ok([&self.vertices, &self.offsets].map(|b| b.as_ref().expect("just grown")))
    }

    /// The `n` boxes last uploaded ([`Self::frames`]).
    pub(super) fn obbs(&self, n: u32) -> SatShapes<'_> {
        SatShapes::Obbs {
            frames: self.frames.as_ref().expect("uploaded"),
            n,
        }
    }

    /// The `n` polygons last uploaded ([`Self::polygons`]).
    pub(super) fn polygon_shapes(&self, n: u32) -> SatShapes<'_> {
        SatShapes::Polygons {
            vertices: self.vertices.as_ref().expect("uploaded"),
            offsets: self.offsets.as_ref().expect("uploaded"),
            n,
        }
    }

    /// The frames, vertices and offsets buffers, those made.
    pub(super) fn targets(&self) -> [Option<&wgpu::Buffer>; 3] {
        [&self.frames, &self.vertices, &self.offsets].map(Option::as_ref)
    }
}

/// A circle (as a sphere at z = 0) around every vertex: centred on the vertex AABB, radius the
/// farthest vertex, widened by `widening` (relative): the sphere proxy of an uploaded polygon.
pub(super) fn bounding_circle(vertices: &[Vec2], widening: f32) -> Sphere {
    let lo = vertices
        .iter()
        .fold(Vec2::splat(f32::INFINITY), |a, &v| a.min(v));
    let hi = vertices
        .iter()
        .fold(Vec2::splat(f32::NEG_INFINITY), |a, &v| a.max(v));
    let c = (lo + hi) * 0.5;
    let r = vertices
        .iter()
        .map(|&v| widened_length((v - c).extend(0.0), widening))
        .fold(0.0f32, f32::max);
    Sphere {
        center: Vec3::new(c.x, c.y, 0.0),
        radius: r,
    }
}

/// `|v|` widened by `widening` (relative: it covers the rounding of the length), computed on
/// `v` scaled by its largest component, so that no square underflows: a box of half-extent
/// 2^-76 once had a proxy of radius 0 (squares below 2^-149 vanish in f32), and missed every
/// pair.
pub(super) fn widened_length(v: Vec3, widening: f32) -> f32 {
    let largest = v.abs().max_element();
    if largest == 0.0 {
        return 0.0;
    }
    largest * (v / largest).length() * (1.0 + widening)
}
