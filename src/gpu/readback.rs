//! One readback buffer per pipeline, kept across frames (docs/design.md §9.7): everything a frame
//! returns (counters, timestamps, pair lists) is copied into it at the end of the frame's
//! encoder, and the host maps it once. One host wait per frame, and no buffer created per frame.

use crate::broadphase::Pair;
use crate::error::{Error, Exceeds, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::timer::PassTimer;
use std::ops::Range;

/// Where copies land in the readback buffer: multiples of 8 bytes (u64 timestamps and counters).
const REGION_ALIGN: u64 = 8;

/// A copy recorded by [`Readback::record`].
struct Copy {
    src: wgpu::Buffer,
    src_offset: u64,
    dst_offset: u64,
    bytes: u64,
}

/// The frame's readback plan and its persistent `MAP_READ` buffer. Per frame: [`Self::clear`],
/// [`Self::add`] each result (the returned range indexes the mapped bytes), [`Self::record`]
/// the copies at the end of the encoder, submit, then [`Self::map`] once.
pub struct Readback {
    label: &'static str,
    staging: Option<wgpu::Buffer>,
    copies: Vec<Copy>,
    size: u64,
}

impl Readback {
    /// An empty plan; `label` names the buffer, created on first use.
    pub fn new(label: &'static str) -> Self {
        Self {
            label,
            staging: None,
            copies: Vec::new(),
            size: 0,
        }
    }

    /// Forgets the previous frame's plan (the buffer is kept).
    pub fn clear(&mut self) {
        self.copies.clear();
        self.size = 0;
    }

    /// Plans the copy of `bytes` (a multiple of 4) of `src` from `src_offset`; returns where
    /// they will lie in the mapped bytes. Zero bytes plan nothing and give an empty range.
    pub fn add(&mut self, src: &wgpu::Buffer, src_offset: u64, bytes: u64) -> Range<usize> {
        debug_assert!(bytes.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT));
        let at = self.size;
        if bytes > 0 {
            self.copies.push(Copy {
                src: src.clone(),
                src_offset,
                dst_offset: at,
                bytes,
            });
            self.size = (at + bytes).next_multiple_of(REGION_ALIGN);
        }
        at as usize..(at + bytes) as usize
    }

    /// Plans the copy of `timer`'s resolved timestamps (recorded after [`PassTimer::resolve`]).
    pub fn add_timer(&mut self, timer: &PassTimer) -> Range<usize> {
        match timer.resolved_buffer() {
            Some(buffer) => self.add(buffer, 0, timer.resolved_bytes()),
            None => self.size as usize..self.size as usize,
        }
    }

    /// Records every planned copy at the end of `encoder`, growing the buffer first when the
    /// plan outgrew it (by a quarter more, so a slowly growing list is not re-made every frame).
    pub fn record(&mut self, ctx: &GpuContext, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let need = self.size.max(REGION_ALIGN);
        if self.staging.as_ref().is_none_or(|b| b.size() < need) {
            let max = ctx.limits.max_buffer_size;
            if need > max {
                return Err(Error::too_large(
                    Exceeds::Buffer {
                        needed: need,
                        allowed: max,
                    },
                    format!(
                        "{}: {need} bytes to read back exceed the adapter '{}' buffer limit of \
                         {max}",
                        self.label, ctx.info.name,
                    ),
                ));
            }
            let grown = (need + need / 4)
                .min(max)
                .next_multiple_of(REGION_ALIGN)
                .min(max / REGION_ALIGN * REGION_ALIGN)
                .max(need);
            self.staging = Some(ctx.create_buffer(&wgpu::BufferDescriptor {
                label: Some(self.label),
                size: grown,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })?);
        }
        let staging = self.staging.as_ref().expect("made above");
        for c in &self.copies {
            encoder.copy_buffer_to_buffer(&c.src, c.src_offset, staging, c.dst_offset, c.bytes);
        }
        Ok(())
    }

    /// After the submission of the recorded copies: waits once, maps the planned bytes and
    /// hands them to `read`.
    pub fn map<T>(&self, ctx: &GpuContext, read: impl FnOnce(&[u8]) -> T) -> Result<T> {
        ctx.map_read(self.staging()?, self.mapped_bytes(), self.label, None, read)
    }

    /// [`Self::map`] waiting only for the submission `after` (frames in flight).
    pub fn map_after<T>(
        &self,
        ctx: &GpuContext,
        after: wgpu::SubmissionIndex,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        ctx.map_read(
            self.staging()?,
            self.mapped_bytes(),
            self.label,
            Some(after),
            read,
        )
    }

    /// [`Self::map`] as a future, for a browser's page (the context's own asynchronous map).
    pub async fn map_async<T>(&self, ctx: &GpuContext, read: impl FnOnce(&[u8]) -> T) -> Result<T> {
        ctx.map_read_async(self.staging()?, self.mapped_bytes(), self.label, read)
            .await
    }

    fn staging(&self) -> Result<&wgpu::Buffer> {
        self.staging.as_ref().ok_or_else(|| {
            Error::gpu(
                crate::error::GpuFailure::ReadBack,
                format!("{}: mapped before it was recorded", self.label),
            )
        })
    }

    fn mapped_bytes(&self) -> u64 {
        self.size.max(REGION_ALIGN)
    }
}

/// How many elements of a list whose length the device decides to copy in a frame's one
/// readback (docs/design.md §9.7): the last frame's count and a quarter more, at least 1024,
/// at most the list's capacity. A longer list is read to its end by [`read_tails_async`] (one more
/// host wait), and the next frame plans for it: the traffic follows the results, not the
/// capacities.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListHint {
    last: u64,
    /// Whether a count was seen at all.
    seen: bool,
}

impl ListHint {
    /// Elements to copy of a list of `capacity`.
    pub fn planned(&self, capacity: u64) -> u64 {
        (self.last + self.last / 4 + 1024).min(capacity)
    }

    /// The length the last frame's list had.
    pub fn last(&self) -> u64 {
        self.last
    }

    /// The length the frame's list had.
    pub fn saw(&mut self, count: u64) {
        self.last = count;
        self.seen = true;
    }

    /// Whether any frame's length was seen yet.
    pub fn seen(&self) -> bool {
        self.seen
    }
}

/// The rest of lists that were longer than planned, as a future (a browser's page waits on
/// it, [`GpuContext::map_read_async`]): for each `(buffer, from, to)`, elements `from..to` of 8
/// bytes, copied into `rb` (kept across frames) and mapped with one wait.
pub async fn read_tails_async(
    ctx: &GpuContext,
    rb: &mut Readback,
    tails: &[(wgpu::Buffer, u64, u64)],
) -> Result<Vec<Vec<u8>>> {
    let ranges = record_tails(ctx, rb, tails)?;
    rb.map_async(ctx, |bytes| cut(bytes, &ranges)).await
}

/// Copies the tails into `rb` and submits the copies; their ranges in its mapping.
fn record_tails(
    ctx: &GpuContext,
    rb: &mut Readback,
    tails: &[(wgpu::Buffer, u64, u64)],
) -> Result<Vec<Range<usize>>> {
    rb.clear();
    let ranges = tails
        .iter()
        .map(|(buffer, from, to)| rb.add(buffer, from * 8, (to - from) * 8))
        .collect();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    rb.record(ctx, &mut enc)?;
    ctx.submit(enc);
    Ok(ranges)
}

fn cut(bytes: &[u8], ranges: &[Range<usize>]) -> Vec<Vec<u8>> {
    ranges.iter().map(|r| bytes[r.clone()].to_vec()).collect()
}

/// Little-endian u32 words of `bytes`.
pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// Appends the pairs `bytes` holds to `list`, `pairs` found in all: the list grows within the
/// caller's memory budget, a refusal an error, never an abort (docs/design.md §9.14); in place
/// where the bytes are aligned for pairs (a mapped buffer's are), else through one pair each.
pub fn append_pairs(list: &mut Vec<Pair>, bytes: &[u8], pairs: u64) -> Result<()> {
    let more = bytes.len() / std::mem::size_of::<Pair>();
    crate::broadphase::memory::reserve_pairs(list, more, pairs)?;
    match bytemuck::try_cast_slice::<u8, Pair>(bytes) {
        Ok(read) => list.extend_from_slice(read),
        Err(_) => list.extend(
            bytes
                .chunks_exact(8)
                .map(bytemuck::pod_read_unaligned::<Pair>),
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_from_several_buffers_come_back_in_one_wait() {
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        let a: Vec<u32> = (0..5).collect();
        let b: Vec<u32> = (100..103).collect();
        let ba = ctx.storage_buffer("a", 20).unwrap();
        let bb = ctx.storage_buffer("b", 12).unwrap();
        ctx.write_buffer(&ba, 0, bytemuck::cast_slice(&a));
        ctx.write_buffer(&bb, 0, bytemuck::cast_slice(&b));
        let mut rb = Readback::new("test readback");
        for round in 0..2 {
            rb.clear();
            let ra = rb.add(&ba, 4, 16);
            let empty = rb.add(&bb, 0, 0);
            let rb_ = rb.add(&bb, 0, 12);
            assert_eq!(ra.start % 8, 0);
            assert_eq!(rb_.start % 8, 0);
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            rb.record(&ctx, &mut enc).unwrap();
            ctx.submit(enc);
            let before = ctx.counts();
            let (got_a, got_b, got_empty) = rb
                .map(&ctx, |bytes| {
                    (
                        words(&bytes[ra.clone()]),
                        words(&bytes[rb_.clone()]),
                        bytes[empty.clone()].len(),
                    )
                })
                .unwrap();
            assert_eq!(got_a, vec![1, 2, 3, 4], "round {round}");
            assert_eq!(got_b, vec![100, 101, 102], "round {round}");
            assert_eq!(got_empty, 0);
            assert_eq!(ctx.counts().since(before).host_waits, 1);
        }
    }
}
