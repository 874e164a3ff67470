//! Contacts of box pairs on the GPU (docs/design.md §4.8): one thread per pair, the steps of
//! `geom::contact::obb_contact` in `shaders/boxes/contact.wgsl`; the CPU's contacts are the
//! oracle (`tests/suite/gpu_contacts.rs`). Pairs in, one [`Contact`] per pair out, in order.

use crate::broadphase::Pair;
use crate::error::{Error, Exceeds, Result};
use crate::geom::contact::Contact;
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::gpu::context::Uniform;
use crate::gpu::context::{GpuContext, count_u32};
use bytemuck::{Pod, Zeroable};
use encase::ShaderType;
use glam::Vec3;

/// Threads per workgroup (`WG` in the shader), one pair each.
const WORKGROUP: u32 = 64;

/// A contact as the shader writes it (96 bytes): normal and depth, four points with their
/// depths in w, the count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct GpuContact {
    normal: [f32; 4],
    points: [[f32; 4]; 4],
    count: [u32; 4],
}

const _: () = assert!(std::mem::size_of::<GpuContact>() == 96);
const _: () = assert!(std::mem::size_of::<ObbFrame>() == 64);

impl From<&GpuContact> for Contact {
    fn from(g: &GpuContact) -> Self {
        let count = g.count[0].min(4);
        Contact {
            normal: Vec3::new(g.normal[0], g.normal[1], g.normal[2]),
            depth: g.normal[3],
            count,
            points: g.points.map(|p| Vec3::new(p[0], p[1], p[2])),
            depths: g.points.map(|p| p[3]),
        }
    }
}

#[derive(Clone, Copy, ShaderType)]
struct Params {
    pair_count: u32,
    box_count: u32,
}

/// The box contact kernel and its buffers (grown on demand, reused across calls).
pub struct GpuContacts {
    pipeline: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    buffers: Option<[wgpu::Buffer; 3]>,
    /// Capacities in elements: boxes, pairs.
    capacity: [usize; 2],
}

impl GpuContacts {
    /// Compiles the kernel on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the box contacts", WORKGROUP)?;
        let module = ctx.shader_file("boxes/contact.wgsl")?;
        let pipeline = ctx.pipeline(&module, "box_contacts", &[])?;
        let params = ctx.uniform_buffer("box contact params", Params::uniform_size());
        ctx.check()?;
        Ok(Self {
            pipeline,
            params,
            buffers: None,
            capacity: [0; 2],
        })
    }

    fn ensure_capacity(&mut self, ctx: &GpuContext, boxes: usize, pairs: usize) -> Result<()> {
        if self.buffers.is_some() && boxes <= self.capacity[0] && pairs <= self.capacity[1] {
            return Ok(());
        }
        let cap = [boxes.max(self.capacity[0]), pairs.max(self.capacity[1])];
        ctx.check_binding("the box contacts' frames", cap[0] as u64 * 64)?;
        ctx.check_binding("the box contacts", cap[1] as u64 * 96)?;
        self.buffers = Some([
            ctx.storage_buffer("contact frames", (cap[0] * 64) as u64)?,
            ctx.storage_buffer("contact pairs", (cap[1] * 8) as u64)?,
            ctx.storage_buffer("contacts", (cap[1] * 96) as u64)?,
        ]);
        self.capacity = cap;
        Ok(())
    }

    /// The contacts of `pairs` of `boxes` into `out` (cleared first), one per pair in order, as
    /// `cpu::contacts::obb_contacts` gives them (within the tolerance of docs/design.md §4.8).
    /// Boxes are validated; a pair past the boxes is an error; so is a batch past one binding
    /// or dispatch ([`Error::TooLarge`]: split it).
    pub fn obb_contacts(
        &mut self,
        ctx: &GpuContext,
        boxes: &[Obb],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        crate::gpu::context::block::block_on(
            "the box contacts",
            self.obb_contacts_async(ctx, boxes, pairs, out),
        )?
    }

    /// [`Self::obb_contacts`] as a future, for a browser's page (docs/design.md §8.5).
    pub async fn obb_contacts_async(
        &mut self,
        ctx: &GpuContext,
        boxes: &[Obb],
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        out.clear();
        if !self.submit(ctx, boxes, pairs)? {
            return Ok(());
        }
        let Some([_, _, contact_buf]) = &self.buffers else {
            return Err(Error::Gpu("box contact buffers missing".into()));
        };
        let read: Vec<GpuContact> = ctx.read_async(contact_buf, pairs.len()).await?;
        out.extend(read.iter().map(Contact::from));
        Ok(())
    }

    /// Checks the input, uploads it and submits the kernel; `false` when there are no pairs.
    fn submit(&mut self, ctx: &GpuContext, boxes: &[Obb], pairs: &[Pair]) -> Result<bool> {
        if !boxes.is_empty() {
            validate_obbs(boxes)?;
        }
        crate::broadphase::check_candidates(boxes.len(), pairs)?;
        if pairs.is_empty() {
            return Ok(false);
        }
        let groups = pairs.len().div_ceil(WORKGROUP as usize);
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as usize;
        if groups > max_dim * max_dim {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!("{} box pairs exceed one dispatch; split the batch", pairs.len()),
            ));
        }
        self.ensure_capacity(ctx, boxes.len(), pairs.len())?;
        let Some([frame_buf, pair_buf, contact_buf]) = &self.buffers else {
            return Err(Error::Gpu("box contact buffers missing".into()));
        };
        ctx.write_buffer(frame_buf, 0, bytemuck::cast_slice(&obb_frames(boxes)));
        ctx.write_buffer(pair_buf, 0, bytemuck::cast_slice(pairs));
        let p = Params {
            pair_count: count_u32("box pairs", pairs.len())?,
            box_count: count_u32("boxes", boxes.len())?,
        };
        ctx.write_buffer(&self.params, 0, &p.to_bytes()?);
        let buffers = [
            (0, frame_buf),
            (1, pair_buf),
            (2, contact_buf),
            (3, &self.params),
        ];
        let bind = ctx.bind_buffers("box contacts", &self.pipeline, &buffers);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let (x, y) = ctx.dispatch_2d(groups as u32);
        ctx.dispatch_pass(&mut enc, "box contacts", None, &self.pipeline, &bind, [x, y, 1]);
        ctx.queue.submit([enc.finish()]);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::Params;

    crate::gpu::shader::uniform_layout_test!(Params, "boxes/contact.wgsl", "params");
}
