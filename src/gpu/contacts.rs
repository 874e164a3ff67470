//! Contacts of touching pairs on the GPU (docs/design.md §4.8): one thread per pair, the steps
//! of `geom::contact`'s `obb_contact`, `sphere_contact` and `polygon_contact` in
//! `shaders/contacts.wgsl`; the CPU's contacts are the oracle (`tests/suite/gpu_contacts.rs`).
//!
//! Three ways in: pairs from the host ([`GpuContacts::contacts`]: one [`Contact`] per pair out,
//! in order), or the SAT
//! stage's output list on the device, in the same submission as the broad phase and the SAT
//! stage (`encode_resident`, used by [`crate::gpu::GpuBoxPipeline::obb_contacts`]): the kernel
//! reads the list's count word (indirect dispatch) and the readback copies as many contacts as
//! the list has pairs; or the sphere broad phase's resident pair list, likewise
//! ([`GpuContacts::sphere_frame`]).

use crate::broadphase::Pair;
use crate::error::{Error, Exceeds, Result};
use crate::geom::contact::{
    Contact, obb_contact_unsettled, polygon_contact, settle, settle_device_contacts, sphere_contact,
};
use crate::geom::obb::{ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::PolygonSet;
use crate::geom::shapes::Shapes;
use crate::geom::sphere::{Sphere, validate_spheres};
use crate::gpu::boxes::sat::SatShapes;
use crate::gpu::context::Uniform;
use crate::gpu::context::block::blocking;
use crate::gpu::context::{GpuContext, count_u32};
use crate::gpu::readback::{self, ListHint, Readback};
use crate::gpu::spheres::broad_phase::ResidentPairs;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use std::ops::Range;

mod sphere_frame;

/// Threads per workgroup (`WG` in the shader), one pair each.
const WORKGROUP: u32 = 64;

/// Bytes of one contact as the device writes it.
const CONTACT_BYTES: u64 = 96;

/// A contact as the shader writes it (96 bytes): normal and depth, four points with their
/// depths in w, the count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct GpuContact {
    normal: [f32; 4],
    points: [[f32; 4]; 4],
    count: [u32; 4],
}

const _: () = assert!(std::mem::size_of::<GpuContact>() == CONTACT_BYTES as usize);
const _: () = assert!(std::mem::size_of::<ObbFrame>() == 64);
const _: () = assert!(std::mem::size_of::<Sphere>() == 16);

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

/// Sorts `pairs` and their `contacts` (the same length, in the same order) by pair, in place:
/// one index per pair beside them (within the memory budget), no second copy of either list.
pub(crate) fn sort_with_contacts(pairs: &mut [Pair], contacts: &mut [Contact]) -> Result<()> {
    use rayon::prelude::*;
    debug_assert_eq!(pairs.len(), contacts.len());
    if pairs.is_sorted() {
        return Ok(());
    }
    let mut order: Vec<u32> = Vec::new();
    let what = format!("the order of {} contacts", pairs.len());
    crate::broadphase::memory::reserve(&mut order, pairs.len(), &what)?;
    order.extend(0..count_u32("contacts", pairs.len())?);
    order.par_sort_unstable_by_key(|&k| pairs[k as usize]);
    // Position `at` takes the item at `order[at]`: each cycle of the permutation once, an
    // entry marked done as `order[at] = at`.
    for start in 0..order.len() {
        if order[start] as usize == start {
            continue;
        }
        let (pair, contact) = (pairs[start], contacts[start]);
        let mut at = start;
        loop {
            let from = order[at] as usize;
            order[at] = at as u32;
            if from == start {
                (pairs[at], contacts[at]) = (pair, contact);
                break;
            }
            (pairs[at], contacts[at]) = (pairs[from], contacts[from]);
            at = from;
        }
    }
    Ok(())
}

/// Contacts from the mapped bytes of a readback.
fn contacts_of(bytes: &[u8]) -> impl Iterator<Item = Contact> + '_ {
    bytes
        .chunks_exact(CONTACT_BYTES as usize)
        .map(|b| Contact::from(&bytemuck::pod_read_unaligned::<GpuContact>(b)))
}

crate::gpu::shader::uniform_struct! {
    /// The uniform of `shaders/contacts.wgsl` (its import `contacts_params.wgsl`).
    #[derive(Clone, Copy)]
    pub(crate) struct Params {
        /// Pairs `pairs` may hold (the count is clamped to it).
        pair_capacity: u32,
        /// Shapes in the bound shape buffer.
        shape_count: u32,
        /// Index of the pair count among the words of `pair_count`.
        count_index: u32,
        max_groups_x: u32,
        /// 1: a pair listed (j, i) with j > i is taken as (i, j).
        canonical: u32,
    }
}

/// The shapes a run reads, in device buffers.
#[derive(Clone, Copy)]
enum DeviceShapes<'a> {
    Obbs(&'a wgpu::Buffer),
    Spheres(&'a wgpu::Buffer),
    Polygons(&'a wgpu::Buffer, &'a wgpu::Buffer),
}

/// The contact kernels and their buffers (grown on demand, reused across calls).
pub struct GpuContacts {
    prepare: wgpu::ComputePipeline,
    /// Boxes, spheres, polygons.
    kernels: [wgpu::ComputePipeline; 3],
    params: wgpu::Buffer,
    dispatch_args: wgpu::Buffer,
    contacts: Option<wgpu::Buffer>,
    /// Contacts `contacts` holds.
    capacity: u64,
    /// The host's shapes (frames or spheres; vertices; offsets), pairs and pair count.
    uploads: [Option<wgpu::Buffer>; 4],
    pair_count: wgpu::Buffer,
    /// The last resident run's pair count: how many contacts the next readback copies
    /// (docs/design.md §9.7); the rest of a longer list through `tail`.
    hint: ListHint,
    tail: Readback,
    /// The one readback of a sphere frame ([`Self::sphere_frame`]).
    frame_readback: Readback,
}

/// Where [`GpuContacts::plan_readback`] put a resident run's contacts in the mapped bytes.
pub(crate) struct ContactsReadback {
    contacts: Range<usize>,
}

impl GpuContacts {
    /// Compiles the kernels on `ctx`; buffers come with the first call.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the contacts", WORKGROUP)?;
        let module = ctx.shader_file("contacts.wgsl")?;
        let [prepare, boxes, spheres, polygons] = ctx.pipelines(
            "contacts",
            &module,
            [
                "prepare",
                "box_contacts",
                "sphere_contacts",
                "polygon_contacts",
            ],
        )?;
        let params = ctx.uniform_buffer("contact params", Params::uniform_size())?;
        let dispatch_args =
            ctx.storage_buffer_with("contact dispatch args", 12, wgpu::BufferUsages::INDIRECT)?;
        let pair_count = ctx.storage_buffer("contact pair count", 4)?;
        ctx.check()?;
        Ok(Self {
            prepare,
            kernels: [boxes, spheres, polygons],
            params,
            dispatch_args,
            contacts: None,
            capacity: 0,
            uploads: [None, None, None, None],
            pair_count,
            hint: ListHint::default(),
            tail: Readback::new("contacts readback, the rest"),
            frame_readback: Readback::new("sphere contacts frame readback"),
        })
    }

    blocking! {
        /// The contacts of `pairs` of `shapes` into `out` (cleared first), one per pair in
        /// order, as `cpu::contacts` gives them (within the tolerance of docs/design.md §4.8;
        /// whether a pair touches is exact: the kernel's pairs within its tolerance of touching
        /// take the CPU's contact). The shapes are validated; a pair past them is an error; so
        /// is a batch past one binding or dispatch ([`Error::TooLarge`]: split it).
        pub fn contacts = &format!("the {} contacts", shapes.kind());
        pub async fn contacts_async(
            &mut self,
            ctx: &GpuContext,
            shapes: Shapes<'_>,
            pairs: &[Pair],
            out: &mut Vec<Contact>,
        ) -> Result<()> {
            match shapes {
                Shapes::Obbs(boxes) => {
                    validate_obbs(boxes)?;
                    let frames = obb_frames(boxes);
                    let bytes = [bytemuck::cast_slice::<ObbFrame, u8>(&frames)];
                    self.host_run(ctx, 0, &bytes, boxes.len(), pairs, out)
                        .await?;
                    // Pairs the caller gave may lie just apart: those near touching are settled
                    // exactly.
                    settle_device_contacts(out, pairs, boxes, |i, j| {
                        let unsettled = obb_contact_unsettled(&frames[i], &frames[j]);
                        settle(unsettled, || boxes[i].overlaps(&boxes[j]))
                    });
                }
                Shapes::Spheres(spheres) => {
                    validate_spheres(spheres)?;
                    let bytes = [bytemuck::cast_slice::<Sphere, u8>(spheres)];
                    self.host_run(ctx, 1, &bytes, spheres.len(), pairs, out)
                        .await?;
                    settle_device_contacts(out, pairs, spheres, |i, j| {
                        sphere_contact(&spheres[i], &spheres[j])
                    });
                }
                Shapes::Polygons(polygons) => {
                    let sizes = polygons.iter().map(|p| p.vertices().len());
                    crate::gpu::adapter_check::check_polygon_loops(ctx, sizes)?;
                    let set = PolygonSet::new(polygons)?;
                    let bytes = [
                        bytemuck::cast_slice::<glam::Vec2, u8>(&set.vertices),
                        bytemuck::cast_slice::<u32, u8>(&set.offsets),
                    ];
                    self.host_run(ctx, 2, &bytes, polygons.len(), pairs, out)
                        .await?;
                    settle_device_contacts(out, pairs, polygons, |i, j| {
                        polygon_contact(&polygons[i], &polygons[j])
                    });
                }
            }
            Ok(())
        }
    }

    /// Uploads the host's shapes (`kernel`: 0 boxes, 1 spheres, 2 polygons) and pairs, runs the
    /// kernel and reads the contacts into `out`.
    async fn host_run(
        &mut self,
        ctx: &GpuContext,
        kernel: usize,
        shapes: &[&[u8]],
        n: usize,
        pairs: &[Pair],
        out: &mut Vec<Contact>,
    ) -> Result<()> {
        out.clear();
        crate::broadphase::check_candidates(n, pairs)?;
        if pairs.is_empty() {
            return Ok(());
        }
        let what = format!("the contacts of {} pairs", pairs.len());
        // The device's copy is read whole (mapped, copied out, then cast: twice its size) before
        // it is converted into `out`: all of it at once in the budget.
        let per_pair = 2 * CONTACT_BYTES + std::mem::size_of::<Contact>() as u64;
        crate::broadphase::memory::check_fits(&what, pairs.len() as u64 * per_pair)?;
        crate::broadphase::memory::reserve(out, pairs.len(), &what)?;
        let groups = pairs.len().div_ceil(WORKGROUP as usize);
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as usize;
        if groups > max_dim * max_dim {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!("{} pairs exceed one dispatch; split the batch", pairs.len()),
            ));
        }
        let labels = ["contact shapes", "contact polygon offsets"];
        for (k, bytes) in shapes.iter().enumerate() {
            let buf = ctx.ensure_storage(&mut self.uploads[k], labels[k], bytes.len() as u64)?;
            if !bytes.is_empty() {
                ctx.write_buffer(buf, 0, bytes);
            }
        }
        let pair_bytes = bytemuck::cast_slice::<Pair, u8>(pairs);
        let pair_buf = ctx
            .ensure_storage(
                &mut self.uploads[3],
                "contact pairs",
                pair_bytes.len() as u64,
            )?
            .clone();
        ctx.write_buffer(&pair_buf, 0, pair_bytes);
        let count = count_u32("pairs", pairs.len())?;
        ctx.write_buffer(&self.pair_count, 0, bytemuck::bytes_of(&count));
        let shape_count = count_u32("shapes", n)?;
        let [first, second, ..] = self.uploads.clone();
        let first = first.expect("uploaded");
        let second = second.unwrap_or_else(|| first.clone());
        let shapes = match kernel {
            0 => DeviceShapes::Obbs(&first),
            1 => DeviceShapes::Spheres(&first),
            _ => DeviceShapes::Polygons(&first, &second),
        };
        let counters = self.pair_count.clone();
        let list = ResidentPairs {
            pairs: &pair_buf,
            capacity: count,
            counters: &counters,
            count_index: 0,
        };
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.encode(ctx, &mut enc, shapes, shape_count, &list, false)?;
        ctx.submit(enc);
        let contacts = self.contacts.as_ref().expect("sized by encode");
        let read: Vec<GpuContact> = ctx.read_async(contacts, pairs.len()).await?;
        out.extend(read.iter().map(Contact::from));
        Ok(())
    }

    /// Records a run over `list` into `encoder`: the dispatch size from its count word, one
    /// thread per pair; with `canonical`, a pair listed `(j, i)` with `j > i` (the SAT stage's
    /// unsure pairs) is taken as `(i, j)`. The parameters go through `queue.write_buffer`: one
    /// run per submission.
    fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        shapes: DeviceShapes<'_>,
        shape_count: u32,
        list: &ResidentPairs<'_>,
        canonical: bool,
    ) -> Result<()> {
        let capacity = (list.capacity as u64).min(ctx.max_binding_bytes() / CONTACT_BYTES);
        let bytes = CONTACT_BYTES * capacity.max(1);
        let contacts = ctx
            .ensure_storage(&mut self.contacts, "contacts", bytes)?
            .clone();
        self.capacity = contacts.size() / CONTACT_BYTES;
        let params = Params {
            pair_capacity: list.capacity,
            shape_count,
            count_index: list.count_index,
            max_groups_x: ctx.limits.max_compute_workgroups_per_dimension,
            canonical: canonical as u32,
        };
        ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
        let mut bound = vec![
            (0, &self.params),
            (1, list.pairs),
            (2, list.counters),
            (3, &contacts),
        ];
        let (kernel, label) = match shapes {
            DeviceShapes::Obbs(frames) => {
                bound.push((5, frames));
                (&self.kernels[0], "box contacts")
            }
            DeviceShapes::Spheres(spheres) => {
                bound.push((6, spheres));
                (&self.kernels[1], "sphere contacts")
            }
            DeviceShapes::Polygons(vertices, offsets) => {
                bound.push((7, vertices));
                bound.push((8, offsets));
                (&self.kernels[2], "polygon contacts")
            }
        };
        let prepare = [
            (0, &self.params),
            (1, list.pairs),
            (2, list.counters),
            (3, &contacts),
            (4, &self.dispatch_args),
        ];
        ctx.dispatch_prepared(
            encoder,
            ("contacts prepare", &self.prepare, &prepare),
            (label, kernel, &bound),
            None,
            &self.dispatch_args,
        );
        Ok(())
    }

    /// Records the contacts of the SAT stage's output `list` of `shapes` (boxes or polygons)
    /// into `encoder`, after the SAT stage, in the same submission; its unsure pairs, listed
    /// reversed, are taken in canonical order.
    pub(crate) fn encode_resident(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        shapes: SatShapes<'_>,
        list: &ResidentPairs<'_>,
    ) -> Result<()> {
        let (shapes, n) = match shapes {
            SatShapes::Obbs { frames, n } => (DeviceShapes::Obbs(frames), n),
            SatShapes::Polygons {
                vertices,
                offsets,
                n,
            } => (DeviceShapes::Polygons(vertices, offsets), n),
        };
        self.encode(ctx, encoder, shapes, n, list, true)
    }

    /// Plans the readback of the last resident run's contacts into `rb`: as many as the last
    /// run's list had pairs, with headroom (the rest by [`Self::finish_async`]).
    pub(crate) fn plan_readback(&self, rb: &mut Readback) -> ContactsReadback {
        let contacts = self.contacts.as_ref().expect("encoded before planned");
        let planned = self.hint.planned(self.capacity);
        ContactsReadback {
            contacts: rb.add(contacts, 0, CONTACT_BYTES * planned),
        }
    }

    /// The contacts of the first `listed` pairs of the list, as far as the planned copy reached,
    /// in a list with room for all `listed` (within the caller's memory budget, docs/design.md
    /// §9.14: a refusal is an error, never an abort).
    pub(crate) fn contacts_from(
        &self,
        bytes: &[u8],
        plan: &ContactsReadback,
        listed: u32,
    ) -> Result<Vec<Contact>> {
        let have = (listed as usize).min(plan.contacts.len() / CONTACT_BYTES as usize);
        let at = plan.contacts.start;
        let mut contacts = Vec::new();
        let what = format!("the contacts of {listed} touching pairs");
        crate::broadphase::memory::reserve(&mut contacts, listed as usize, &what)?;
        contacts.extend(contacts_of(&bytes[at..at + CONTACT_BYTES as usize * have]));
        Ok(contacts)
    }

    /// Completes [`Self::contacts_from`] to `listed` contacts (one more map when the list
    /// outgrew the plan); notes the count for the next plan. A list longer than the contacts
    /// one binding holds is an error ([`Error::TooLarge`]).
    pub(crate) async fn finish_async(
        &mut self,
        ctx: &GpuContext,
        mut partial: Vec<Contact>,
        listed: u32,
    ) -> Result<Vec<Contact>> {
        self.hint.saw(listed as u64);
        if listed as u64 > self.capacity {
            let (needed, allowed) = (listed as u64 * CONTACT_BYTES, ctx.max_binding_bytes());
            return Err(Error::too_large(
                Exceeds::Binding { needed, allowed },
                format!(
                    "{listed} touching pairs need {needed} bytes of contacts, past one binding \
                     of {allowed}; split the scene"
                ),
            ));
        }
        if (partial.len() as u64) < listed as u64 {
            let contacts = self.contacts.clone().expect("encoded");
            // read_tails counts 8-byte elements: 12 a contact.
            let per = CONTACT_BYTES / 8;
            let tail = [(contacts, partial.len() as u64 * per, listed as u64 * per)];
            let rest = readback::read_tails_async(ctx, &mut self.tail, &tail).await?;
            partial.extend(contacts_of(&rest[0]));
        }
        Ok(partial)
    }
}

#[cfg(test)]
mod tests {
    use super::{Contact, Params, sort_with_contacts};

    crate::gpu::shader::uniform_layout_test!(Params, "contacts.wgsl", "params");

    /// Pairs in an order of several cycles (a scrambled 1,000 by a multiplier, and a swap) come
    /// back sorted, each with its own contact (its depth names it): the permutation in place.
    #[test]
    fn contacts_sort_with_their_pairs() {
        for n in [0u32, 1, 2, 7, 1000] {
            let mut pairs: Vec<[u32; 2]> = (0..n).map(|k| [(k * 7919) % n.max(1), k]).collect();
            if n >= 2 {
                pairs.swap(0, (n - 1) as usize);
            }
            let contact = |p: [u32; 2]| Contact {
                depth: (p[0] * 100_000 + p[1]) as f32,
                count: p[1],
                ..Contact::default()
            };
            let mut contacts: Vec<Contact> = pairs.iter().map(|&p| contact(p)).collect();
            sort_with_contacts(&mut pairs, &mut contacts).unwrap();
            assert!(pairs.is_sorted(), "{n}");
            for (p, c) in pairs.iter().zip(&contacts) {
                assert_eq!(c.count, p[1], "{n}: {p:?}");
                assert_eq!(c.depth, contact(*p).depth, "{n}: {p:?}");
            }
        }
    }
}
