//! Sorting building blocks: exclusive scan, the radix sorts (tiled, portable, subgroup), and the
//! key kernels of the sphere broad phase.

pub(crate) mod keys;
pub mod radix_sort;
pub mod radix_sort_subgroup;
pub mod radix_tiles;
pub(crate) mod scan;

/// An [`Error::InvalidArgument`](crate::Error::InvalidArgument) of `n` unless `buffer` holds
/// `bytes` (its `n` elements); `message(size)`, `size` the buffer's, says so for people.
pub(crate) fn check_holds(
    buffer: &wgpu::Buffer,
    bytes: u64,
    message: impl FnOnce(u64) -> String,
) -> crate::error::Result<()> {
    if buffer.size() < bytes {
        return Err(crate::error::Error::invalid_argument(
            "n",
            message(buffer.size()),
        ));
    }
    Ok(())
}

/// The scratch a radix sort grows with n: the ping-pong keys and values, and its histogram
/// (the digit counts of each block, or of each share).
#[derive(Default)]
pub(crate) struct Scratch {
    keys: Option<wgpu::Buffer>,
    values: Option<wgpu::Buffer>,
    hist: Option<wgpu::Buffer>,
}

impl Scratch {
    /// Clones of the keys, values and histogram scratch (`labels` in that order), each replaced
    /// first when smaller than `bytes` (keys and values) or `hist_bytes`.
    pub(crate) fn grow(
        &mut self,
        ctx: &crate::gpu::context::GpuContext,
        labels: [&str; 3],
        bytes: u64,
        hist_bytes: u64,
    ) -> crate::error::Result<[wgpu::Buffer; 3]> {
        Ok([
            grow(ctx, &mut self.keys, labels[0], bytes)?,
            grow(ctx, &mut self.values, labels[1], bytes)?,
            grow(ctx, &mut self.hist, labels[2], hist_bytes)?,
        ])
    }
}

/// Returns a clone of the scratch buffer in `slot`, replaced first when smaller than `bytes`.
fn grow(
    ctx: &crate::gpu::context::GpuContext,
    slot: &mut Option<wgpu::Buffer>,
    label: &str,
    bytes: u64,
) -> crate::error::Result<wgpu::Buffer> {
    if let Some(b) = slot
        && b.size() >= bytes
    {
        return Ok(b.clone());
    }
    let b = ctx.storage_buffer(label, bytes)?;
    *slot = Some(b.clone());
    Ok(b)
}

/// A sort's parameters per digit pass: one uniform slot each, `stride` bytes apart (the
/// adapter's uniform offset alignment, at least the slot's size), bound one slot at a time.
pub(crate) struct ParamTable {
    buffer: wgpu::Buffer,
    stride: u64,
}

impl ParamTable {
    /// A buffer `label` of `slots` slots of at least `min_stride` bytes, `words` giving each
    /// filled slot's index and its first words (the rest zero).
    pub(crate) fn new<const W: usize>(
        ctx: &crate::gpu::context::GpuContext,
        label: &str,
        min_stride: u64,
        slots: u64,
        words: impl IntoIterator<Item = (u64, [u32; W])>,
    ) -> Self {
        let stride = (ctx.limits.min_uniform_buffer_offset_alignment as u64).max(min_stride);
        let mut table = vec![0u8; (stride * slots) as usize];
        for (slot, w) in words {
            let at = (slot * stride) as usize;
            table[at..at + 4 * W].copy_from_slice(bytemuck::cast_slice(&w));
        }
        let buffer = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &table,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        Self { buffer, stride }
    }

    /// Binding 0 on the first `size` bytes of slot `slot`.
    pub(crate) fn entry(&self, slot: u64, size: u64) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.buffer,
                offset: slot * self.stride,
                size: wgpu::BufferSize::new(size),
            }),
        }
    }
}
