//! GPU exclusive prefix sum of u32 (wrapping), reduce-then-scan: one dispatch per level, so no
//! workgroup ever waits on another (portable to devices without forward-progress guarantees).

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::timer::PassTimer;
use std::num::NonZeroU64;

/// Invocations per workgroup; must match `WG` in `shaders/sort/scan.wgsl`.
const WORKGROUP: u32 = 256;
/// Largest `ITEMS` the shader's tile holds (`MAX_BLOCK / WG`).
const MAX_ITEMS: u32 = 8;
/// Default elements per invocation: 1,024 per block, so 2^20 inputs need only two levels.
const DEFAULT_ITEMS: u32 = 4;

/// In-place exclusive scan. Pipelines are built once; the block-sum levels are scratch owned here
/// and grown when a larger `n` arrives.
pub struct ExclusiveScan {
    reduce: wgpu::ComputePipeline,
    downsweep: wgpu::ComputePipeline,
    top: wgpu::ComputePipeline,
    /// Elements per workgroup (`WORKGROUP * items`).
    block: u32,
    /// Block sums of level 1, 2, ... (level 0 is the caller's data).
    levels: Vec<wgpu::Buffer>,
    /// The top block's total, copied to the caller's `total` buffer.
    total_scratch: wgpu::Buffer,
    /// Overrides the device's groups-per-dimension limit (tests reach the 2D path cheaply).
    max_groups_per_dim: u32,
}

impl ExclusiveScan {
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        Self::with_items(ctx, DEFAULT_ITEMS)
    }

    /// Like [`Self::new`] with `items` elements per invocation (1..=8). Smaller blocks mean more
    /// workgroups: tests use 1 to pass 65,535 groups while staying under the binding limit.
    pub fn with_items(ctx: &GpuContext, items: u32) -> Result<Self> {
        if !(1..=MAX_ITEMS).contains(&items) {
            return Err(Error::invalid_argument(
                "items",
                format!("scan: items per invocation must be 1..={MAX_ITEMS}, got {items}"),
            ));
        }
        ctx.check_workgroup("scan", WORKGROUP)?;
        let module = ctx.shader_file("sort/scan.wgsl")?;
        let constants = [("ITEMS", items as f64)];
        let total_scratch = ctx.storage_buffer("scan total", 4)?;
        let scan = Self {
            reduce: ctx.pipeline(&module, "reduce", &constants)?,
            downsweep: ctx.pipeline(&module, "downsweep", &constants)?,
            top: ctx.pipeline(&module, "top", &constants)?,
            block: WORKGROUP * items,
            levels: Vec::new(),
            total_scratch,
            max_groups_per_dim: ctx.limits.max_compute_workgroups_per_dimension,
        };
        ctx.check()?;
        Ok(scan)
    }

    /// Caps the groups per grid dimension below the device limit, so tests exercise the 2D
    /// dispatch path without huge inputs.
    pub fn set_max_groups_per_dim(&mut self, max: u32) {
        self.max_groups_per_dim = max.clamp(1, u32::MAX);
    }

    /// Records an in-place exclusive prefix sum of `data[0..n]` (u32, wrapping) into `encoder`,
    /// and writes the total (u32) of the n inputs to `total` at byte offset `total_offset`.
    /// Reduce-then-scan, any n up to the binding limit, 2D dispatch past 65,535 groups.
    ///
    /// `data` needs `STORAGE`; `total` needs `COPY_DST` (the total is copied there, so any
    /// 4-byte-aligned offset works). Elements of `data` past `n` are untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        data: &wgpu::Buffer,
        n: u32,
        total: &wgpu::Buffer,
        total_offset: u64,
        timer: Option<&mut PassTimer>,
    ) -> Result<()> {
        if !total_offset.is_multiple_of(4)
            || total_offset
                .checked_add(4)
                .is_none_or(|end| end > total.size())
        {
            return Err(Error::invalid_argument(
                "total_offset",
                format!(
                    "scan: total offset {total_offset} must be a multiple of 4 with 4 bytes room in a \
                 {}-byte buffer",
                    total.size()
                ),
            ));
        }
        if n == 0 {
            encoder.clear_buffer(total, total_offset, Some(4));
            return Ok(());
        }
        let mut pass = ctx.compute_pass(
            encoder,
            &wgpu::ComputePassDescriptor {
                label: Some("scan"),
                timestamp_writes: timer.and_then(|t| t.pass("scan")),
            },
        );
        self.record(ctx, &mut pass, data, n, None)?;
        drop(pass);
        encoder.copy_buffer_to_buffer(&self.total_scratch, 0, total, total_offset, Some(4));
        Ok(())
    }

    /// Records the in-place exclusive prefix sum of `data[0..n]` (n >= 1) into an open compute
    /// pass, beside the caller's own dispatches (the radix sort, the frame events). The total
    /// goes to the first word of `total` (a `STORAGE` buffer), or stays in the scan's scratch.
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        data: &wgpu::Buffer,
        n: u32,
        total: Option<&wgpu::Buffer>,
    ) -> Result<()> {
        if n == 0 {
            return Err(Error::invalid_argument(
                "n",
                "scan: a recorded scan needs n >= 1",
            ));
        }
        let bytes = n as u64 * 4;
        super::check_holds(data, bytes, |size| {
            format!("scan: {n} elements need {bytes} bytes; the data buffer has {size}")
        })?;
        ctx.check_binding("scan input", bytes)?;

        // Level sizes: n, then one sum per block until one block holds the whole level.
        let mut sizes = vec![n];
        while *sizes.last().unwrap() > self.block {
            let next = sizes.last().unwrap().div_ceil(self.block);
            sizes.push(next);
        }
        self.grow_levels(ctx, &sizes[1..])?;

        let bind = |pipeline: &wgpu::ComputePipeline,
                    a: &wgpu::Buffer,
                    a_len: u32,
                    b: &wgpu::Buffer,
                    b_len: u32| {
            ctx.bind_group_for(
                "scan",
                pipeline,
                &[exact_binding(0, a, a_len), exact_binding(1, b, b_len)],
            )
        };
        let level_buf = |i: usize| if i == 0 { data } else { &self.levels[i - 1] };
        let top = sizes.len() - 1;
        let max_dim = self.max_groups_per_dim;

        // One step between level i and level i + 1: up (reduce) or down (downsweep).
        let step =
            |pass: &mut wgpu::ComputePass<'_>, pipeline: &wgpu::ComputePipeline, i: usize| {
                let bg = bind(
                    pipeline,
                    level_buf(i),
                    sizes[i],
                    level_buf(i + 1),
                    sizes[i + 1],
                );
                let (x, y) = crate::gpu::context::dispatch_2d(sizes[i + 1], max_dim);
                ctx.dispatch_in(pass, pipeline, &bg, [x, y, 1]);
            };
        for i in 0..top {
            step(pass, &self.reduce, i);
        }
        let bg = bind(
            &self.top,
            level_buf(top),
            sizes[top],
            total.unwrap_or(&self.total_scratch),
            1,
        );
        ctx.dispatch_in(pass, &self.top, &bg, [1, 1, 1]);
        for i in (0..top).rev() {
            step(pass, &self.downsweep, i);
        }
        Ok(())
    }

    /// Makes sure level `i + 1` holds `sizes[i]` elements (buffers only grow).
    fn grow_levels(&mut self, ctx: &GpuContext, sizes: &[u32]) -> Result<()> {
        for (i, &len) in sizes.iter().enumerate() {
            let bytes = len as u64 * 4;
            if self.levels.get(i).is_none_or(|b| b.size() < bytes) {
                let buf = ctx.storage_buffer("scan block sums", bytes)?;
                if i < self.levels.len() {
                    self.levels[i] = buf;
                } else {
                    self.levels.push(buf);
                }
            }
        }
        Ok(())
    }
}

/// Binds the first `len` u32 of `buffer` (len >= 1), so the shader's `arrayLength` is `len`.
pub(crate) fn exact_binding(
    binding: u32,
    buffer: &wgpu::Buffer,
    len: u32,
) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: 0,
            size: NonZeroU64::new(len.max(1) as u64 * 4),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::test_gpu;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Independent oracle: sequential wrapping exclusive scan.
    fn cpu_exclusive_scan(input: &[u32]) -> (Vec<u32>, u32) {
        let mut out = Vec::with_capacity(input.len());
        let mut acc = 0u32;
        for &v in input {
            out.push(acc);
            acc = acc.wrapping_add(v);
        }
        (out, acc)
    }

    /// Scans `input` on the GPU (with a sentinel after it that must stay untouched) and returns
    /// (scanned, total).
    fn gpu_scan(ctx: &GpuContext, scan: &mut ExclusiveScan, input: &[u32]) -> (Vec<u32>, u32) {
        let n = input.len();
        let mut padded = input.to_vec();
        padded.push(0xDEAD_BEEF);
        let data = ctx.storage_buffer("data", padded.len() as u64 * 4).unwrap();
        ctx.write_buffer(&data, 0, bytemuck::cast_slice(&padded));
        // Total at an offset that is not binding-aligned, next to a value that must survive.
        let total = ctx.storage_buffer("total", 16).unwrap();
        ctx.write_buffer(&total, 0, bytemuck::cast_slice(&[7u32, 0xFFFF_FFFF, 9, 9]));
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        scan.encode(ctx, &mut enc, &data, n as u32, &total, 4, None)
            .unwrap();
        ctx.submit(enc);
        ctx.wait().unwrap();
        let mut out: Vec<u32> = ctx.read(&data, n + 1).unwrap();
        assert_eq!(out.pop(), Some(0xDEAD_BEEF), "element past n was written");
        let t: Vec<u32> = ctx.read(&total, 4).unwrap();
        assert_eq!((t[0], t[2]), (7, 9), "bytes next to the total were written");
        (out, t[1])
    }

    /// `input` scanned on the GPU equals [`cpu_exclusive_scan`] (`case` names it on failure).
    fn assert_scans_as_cpu(ctx: &GpuContext, scan: &mut ExclusiveScan, input: &[u32], case: &str) {
        assert_eq!(
            gpu_scan(ctx, scan, input),
            cpu_exclusive_scan(input),
            "{case}"
        );
    }

    fn random_input(n: usize, seed: u64, max: u32) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n).map(|_| rng.random_range(0..=max)).collect()
    }

    #[test]
    fn matches_cpu_scan_across_block_boundaries() {
        let Some(ctx) = test_gpu() else { return };
        let mut scan = ExclusiveScan::new(&ctx).unwrap();
        for (i, &n) in [
            0usize,
            1,
            255,
            256,
            257,
            1023,
            1024,
            1025,
            65_537,
            (1 << 20) + 3,
        ]
        .iter()
        .enumerate()
        {
            let input = random_input(n, i as u64, 1000);
            assert_scans_as_cpu(&ctx, &mut scan, &input, &format!("n = {n}"));
        }
    }

    #[test]
    fn sums_wrap_modulo_2_pow_32() {
        let Some(ctx) = test_gpu() else { return };
        let mut scan = ExclusiveScan::new(&ctx).unwrap();
        let input = random_input(5000, 42, u32::MAX);
        assert!(input.iter().map(|&v| v as u64).sum::<u64>() > u32::MAX as u64);
        assert_scans_as_cpu(&ctx, &mut scan, &input, "sums past u32::MAX");
    }

    #[test]
    fn three_levels_and_forced_2d_grid() {
        let Some(ctx) = test_gpu() else { return };
        // One element per invocation: 300,001 inputs -> 1,172 blocks -> 5 -> 1 (three levels);
        // a row of at most 7 groups forces tall 2D grids, with overshoot groups at level 0.
        let mut scan = ExclusiveScan::with_items(&ctx, 1).unwrap();
        scan.set_max_groups_per_dim(7);
        let input = random_input(300_001, 3, 1 << 20);
        assert_scans_as_cpu(&ctx, &mut scan, &input, "three levels, 2D grid");
    }

    #[test]
    fn more_than_65535_workgroups() {
        let Some(ctx) = test_gpu() else { return };
        let mut scan = ExclusiveScan::with_items(&ctx, 1).unwrap();
        let max = ctx.limits.max_compute_workgroups_per_dimension as usize;
        let n = max * 256 + 1; // one group past the per-dimension limit
        let input = random_input(n, 5, 3);
        assert_scans_as_cpu(&ctx, &mut scan, &input, &format!("n = {n}"));
    }

    #[test]
    fn bad_arguments_are_errors() {
        let Some(ctx) = test_gpu() else { return };
        let mut scan = ExclusiveScan::new(&ctx).unwrap();
        let data = ctx.storage_buffer("d", 16).unwrap();
        let total = ctx.storage_buffer("t", 8).unwrap();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let e = scan
            .encode(&ctx, &mut enc, &data, 5, &total, 0, None)
            .unwrap_err();
        assert!(e.to_string().contains("5 elements"), "{e}");
        let e = scan
            .encode(&ctx, &mut enc, &data, 4, &total, 6, None)
            .unwrap_err();
        assert!(e.to_string().contains("offset 6"), "{e}");
        let e = scan
            .encode(&ctx, &mut enc, &data, 4, &total, 8, None)
            .unwrap_err();
        assert!(e.to_string().contains("offset 8"), "{e}");
        assert!(ExclusiveScan::with_items(&ctx, 9).is_err());
    }
}
