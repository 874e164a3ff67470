//! Plumbing shared by the broad-phase stages: the per-dispatch parameter block (`Params` in
//! `shaders/frame.wgsl`), an arena of parameter slots in one uniform buffer (every dispatch of a
//! frame gets its own slot, written once before the submission), bind-group building and 2D
//! dispatch.

use crate::error::{Error, Exceeds, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::context::Uniform;

/// Workgroup size of every broad-phase kernel (`WG` in `frame.wgsl`).
pub const WG: u32 = 256;

crate::gpu::shader::uniform_struct! {
    /// The per-dispatch parameters of every broad-phase kernel (`frame.wgsl` imports their
    /// declaration, `frame_params.wgsl`).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Params {
        pub n: u32,
        /// Padded length of the key/value arrays (a power of two for the bitonic sort).
        pub pad: u32,
        pub axis: u32,
        pub mode: u32,
        /// Bitonic sort: compare distance j inside merge size k.
        pub j: u32,
        pub k: u32,
        /// Pair list capacity (pairs, not bytes).
        pub cap: u32,
        pub flags: u32,
        /// Grid: number of hash buckets (a power of two).
        pub buckets: u32,
        /// Always 0, unknown to the compiler: the shaders OR it into products they must not
        /// let a driver fuse (`unfused`, docs/design.md §9.13).
        pub zero_bits: u32,
        /// Many worlds ([`FLAG_WORLDS`], docs/design.md §2.13): the first sorted position of
        /// the shared objects (`n` or NONE when there are none); in the grid's keys and walks,
        /// the shared objects' world rank (NONE when there are none).
        pub shared_from: u32,
    }
}

impl Params {
    /// Parameters with only the object count set.
    pub fn n(n: u32) -> Self {
        Self {
            n,
            ..Default::default()
        }
    }
}

pub const FLAG_MARK: u32 = 1;
pub const FLAG_STORE: u32 = 2;
/// The sweep runs many worlds (docs/design.md §2.13): keys are world ranks.
pub const FLAG_WORLDS: u32 = 4;

/// Parameter slots of one frame. Slots are collected while encoding and uploaded with one
/// `write_buffer` before the submission, so each dispatch sees its own values.
pub struct ParamArena {
    buffer: wgpu::Buffer,
    stride: u64,
    capacity: usize,
    slots: Vec<u8>,
}

impl ParamArena {
    /// Room for `capacity` dispatches per frame.
    pub fn new(ctx: &GpuContext, capacity: usize) -> Result<Self> {
        let stride = (Params::uniform_size())
            .next_multiple_of(ctx.limits.min_uniform_buffer_offset_alignment as u64);
        let buffer = ctx.uniform_buffer("broad-phase params", stride * capacity as u64)?;
        Ok(Self {
            buffer,
            stride,
            capacity,
            slots: Vec::new(),
        })
    }

    pub fn reset(&mut self) {
        self.slots.clear();
    }

    /// Reserves a slot holding `p`; returns its byte offset.
    pub fn push(&mut self, p: Params) -> Result<u64> {
        let index = self.slots.len() as u64 / self.stride;
        if index as usize >= self.capacity {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!("a frame needs more than {} dispatches", self.capacity),
            ));
        }
        let offset = index * self.stride;
        self.slots.resize(((index + 1) * self.stride) as usize, 0);
        p.write_to(&mut self.slots[offset as usize..])?;
        Ok(offset)
    }

    pub fn binding(&self, offset: u64) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset,
            size: wgpu::BufferSize::new(Params::uniform_size()),
        })
    }

    /// Uploads the slots of this frame (call before submitting).
    pub fn flush(&self, ctx: &GpuContext) {
        if !self.slots.is_empty() {
            ctx.write_buffer(&self.buffer, 0, &self.slots);
        }
    }
}

/// A bind group for `pipeline` (group 0) with exactly the bindings its entry point uses.
pub fn bind(
    ctx: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    entries: &[(u32, wgpu::BindingResource<'_>)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
        .iter()
        .map(|(binding, resource)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: resource.clone(),
        })
        .collect();
    ctx.bind_group_for("kernel", pipeline, &entries)
}

/// One kernel launch: `params` in its own slot at binding 0, each buffer whole at its binding,
/// enough workgroups for `threads` threads.
pub fn launch(
    ctx: &GpuContext,
    pass: &mut wgpu::ComputePass<'_>,
    arena: &mut ParamArena,
    pipeline: &wgpu::ComputePipeline,
    params: Params,
    buffers: &[(u32, &wgpu::Buffer)],
    threads: u64,
) -> Result<()> {
    let off = arena.push(params)?;
    let mut entries = vec![(0, arena.binding(off))];
    entries.extend(buffers.iter().map(|&(b, buf)| (b, buf.as_entire_binding())));
    let bg = bind(ctx, pipeline, &entries);
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, &bg, &[]);
    dispatch(ctx, pass, threads);
    Ok(())
}

/// One timed compute pass of a frame with the frame's parameter arena: what the stages' kernel
/// methods record into, so each takes one argument instead of device, pass and arena.
pub struct Recorder<'f, 'e> {
    ctx: &'f GpuContext,
    pass: wgpu::ComputePass<'e>,
    arena: &'f mut ParamArena,
}

impl<'f, 'e> Recorder<'f, 'e> {
    /// Opens a compute pass timed as `label` (when the device has timestamps).
    pub fn begin(
        ctx: &'f GpuContext,
        encoder: &'e mut wgpu::CommandEncoder,
        timer: &mut crate::gpu::timer::PassTimer,
        arena: &'f mut ParamArena,
        label: &'static str,
    ) -> Self {
        Self {
            ctx,
            pass: begin(ctx, encoder, timer, label),
            arena,
        }
    }

    /// Runs `f` on this pass and ends the pass.
    pub fn record<T>(mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        f(&mut self)
    }

    /// [`launch`] in this pass.
    pub fn launch(
        &mut self,
        pipeline: &wgpu::ComputePipeline,
        params: Params,
        buffers: &[(u32, &wgpu::Buffer)],
        threads: u64,
    ) -> Result<()> {
        launch(
            self.ctx,
            &mut self.pass,
            self.arena,
            pipeline,
            params,
            buffers,
            threads,
        )
    }
}

/// Dispatches enough workgroups of [`WG`] threads for `threads` threads (2D when needed).
pub fn dispatch(ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>, threads: u64) {
    dispatch_groups(ctx, pass, threads.div_ceil(WG as u64));
}

pub fn dispatch_groups(ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>, groups: u64) {
    // n < 2^32 objects, so groups < 2^25 and fits (dispatch_2d keeps each dimension legal).
    let groups = groups.clamp(1, u32::MAX as u64) as u32;
    let (x, y) = ctx.dispatch_2d(groups);
    ctx.note_dispatch();
    pass.dispatch_workgroups(x, y, 1);
}

/// Records `f` into one compute pass with a parameter arena of `params` slots, submits it, and
/// returns what `f` returned (tests of single stages).
#[cfg(test)]
pub fn run_stage(
    ctx: &GpuContext,
    params: usize,
    f: impl FnOnce(&mut Recorder<'_, '_>) -> Result<()>,
) -> Result<()> {
    let mut arena = ParamArena::new(ctx, params)?;
    let mut timer = crate::gpu::timer::PassTimer::new(ctx, 1);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    Recorder::begin(ctx, &mut enc, &mut timer, &mut arena, "test stage").record(f)?;
    arena.flush(ctx);
    ctx.submit(enc);
    Ok(())
}

/// Builds a compute module from the frame prelude (`shaders/frame.wgsl`) plus `stage` (tests'
/// own kernels).
#[cfg(test)]
pub fn module(ctx: &GpuContext, label: &str, stage: &str) -> Result<wgpu::ShaderModule> {
    let text = format!("// #import frame.wgsl\n{stage}");
    let source = crate::gpu::shader::compose_text(&text, ctx.math())?;
    ctx.shader(label, &source)
}

/// Opens a compute pass timed as `label` (when the device has timestamps).
pub fn begin<'e>(
    ctx: &GpuContext,
    encoder: &'e mut wgpu::CommandEncoder,
    timer: &mut crate::gpu::timer::PassTimer,
    label: &'static str,
) -> wgpu::ComputePass<'e> {
    ctx.compute_pass(
        encoder,
        &wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: timer.pass(label),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::test_gpu;

    /// The pipeline of `entry` in `stage` (with `frame.wgsl`, [`module`]), for a test.
    fn stage_pipeline(
        ctx: &GpuContext,
        label: &str,
        stage: &str,
        entry: &str,
    ) -> wgpu::ComputePipeline {
        let m = module(ctx, label, stage).unwrap();
        ctx.pipeline(&m, entry, &[]).unwrap()
    }

    #[test]
    fn params_layout_is_the_shaders() {
        use crate::gpu::shader::wgsl_uniform_size;
        for path in [
            "sort/keys.wgsl",
            "spheres/pairs.wgsl",
            "spheres/cascade.wgsl",
            "spheres/min_axis.wgsl",
        ] {
            assert_eq!(
                Params::uniform_size(),
                wgsl_uniform_size(path, "params"),
                "{path}"
            );
        }
    }

    /// The u64 totals of `frame.wgsl` (`flush_counts`): every thread adds a per-thread count;
    /// totals far past u32 must come out exact (the carry path), with no long-running kernel.
    #[test]
    fn workgroup_u64_totals_carry_past_u32() {
        let Some(ctx) = test_gpu() else { return };
        let pipe = stage_pipeline(
            &ctx,
            "flush test",
            "@compute @workgroup_size(256)
             fn add_counts(inv: Invocation) {
                 let t = flat_id(inv);
                 var a = 0u;
                 var b = 0u;
                 if t < params.n {
                     a = params.j;
                     b = params.k - (t % 7u);
                 }
                 flush_counts(inv.lid, 0u, a, 2u, b);
             }",
            "add_counts",
        );
        let counters = ctx.storage_buffer("counters", 32).unwrap();
        let mut arena = ParamArena::new(&ctx, 4).unwrap();
        for (n, j, k) in [
            (1000u32, 7u32, 9u32),
            (300_000, u32::MAX, u32::MAX),
            (70_001, 2_000_000_000, 123_456_789),
        ] {
            arena.reset();
            let off = arena
                .push(Params {
                    n,
                    j,
                    k,
                    ..Default::default()
                })
                .unwrap();
            let bg = bind(
                &ctx,
                &pipe,
                &[(0, arena.binding(off)), (1, counters.as_entire_binding())],
            );
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.clear_buffer(&counters, 0, None);
            {
                let mut pass = ctx.compute_pass(&mut enc, &Default::default());
                pass.set_pipeline(&pipe);
                pass.set_bind_group(0, &bg, &[]);
                dispatch(&ctx, &mut pass, n as u64 + 300);
            }
            arena.flush(&ctx);
            ctx.submit(enc);
            let w: Vec<u32> = ctx.read(&counters, 4).unwrap();
            let got_a = w[0] as u64 | (w[1] as u64) << 32;
            let got_b = w[2] as u64 | (w[3] as u64) << 32;
            let want_a = n as u64 * j as u64;
            let want_b: u64 = (0..n as u64).map(|t| k as u64 - t % 7).sum();
            assert_eq!((got_a, got_b), (want_a, want_b), "n = {n}");
        }
    }

    /// `cell_axis` of `frame.wgsl` is the floor of the real quotient below 2^24 cells, for both
    /// signs, for centres one or two ULP either side of cell walls and large exponent gaps, and
    /// the f32-value index beyond (docs/design.md §9.2). The expected floor is an exact product
    /// search in f64 (k s is exact there for k < 2^29), not the Rust grid's own formula (the
    /// suite checks the Rust grid on the same walls).
    #[test]
    fn wgsl_grid_cells_are_the_real_floor() {
        use rand::{Rng, SeedableRng};
        let Some(ctx) = test_gpu() else { return };
        let expected = |c: f32, s: f32| -> i64 {
            let far = s.to_bits() + (24 << 23);
            if c.abs().to_bits() >= far {
                let magnitude = (1i64 << 24) + i64::from(c.abs().to_bits() - far);
                return if c < 0.0 { -magnitude } else { magnitude };
            }
            crate::geom::test_util::real_floor(c, s)
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut cases: Vec<(f32, f32)> = Vec::new();
        while cases.len() < 80_000 {
            let s = 10f32.powf(rng.random_range(-30.0..30.0)) * rng.random_range(1.0..2.0);
            let k = match rng.random_range(0..5) {
                0 => rng.random_range(0..4u32),
                1 => rng.random_range(0..1u32 << 20),
                2 => (1 << 20) - rng.random_range(0..3u32),
                3 => (1 << 24) - rng.random_range(0..3u32),
                _ => rng.random_range(0..1u32 << 26),
            };
            let wall = (k as f64 * s as f64) as f32;
            let ulps: i32 = rng.random_range(-2..=2);
            let mut c = f32::from_bits((wall.to_bits() as i64 + ulps as i64).max(0) as u32);
            if rng.random_bool(0.5) {
                c = -c;
            }
            // Premise on any device: no subnormal centre (a GPU may flush it to 0, and scenes
            // reject nonzero coordinates below 1e-30, docs/design.md §9.6).
            if c.is_finite() && s.is_normal() && (c == 0.0 || c.abs() >= 1e-30) {
                cases.push((c, s));
            }
        }
        cases.extend([
            (0.0, 1.0),
            (-0.0, 1.0),
            (0.5, 1.0),
            (-0.5, 1.0),
            (1.0, 1.0),
            (-1.0, 1.0),
            (3.0, 0.3),
            (-3.0, 0.3),
            (f32::MAX, 1e-30),
            (-f32::MAX, 1e-30),
            (16_777_216.0, 1.0),
            (-16_777_216.0, 1.0),
            (16_777_215.0, 1.0),
            (-16_777_215.5, 1.0),
        ]);
        let words: Vec<u32> = cases
            .iter()
            .flat_map(|&(d, s)| [d.to_bits(), s.to_bits()])
            .collect();
        let io = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cells io"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let pipe = stage_pipeline(
            &ctx,
            "cell test",
            "@group(0) @binding(3) var<storage, read_write> io: array<vec2<u32>>;
             @compute @workgroup_size(256)
             fn cells(inv: Invocation) {
                 let t = flat_id(inv);
                 if t < arrayLength(&io) {
                     let v = io[t];
                     io[t] = vec2<u32>(bitcast<u32>(cell_axis(bitcast<f32>(v.x),
                         bitcast<f32>(v.y))), 0u);
                 }
             }",
            "cells",
        );
        let bg = bind(&ctx, &pipe, &[(3, io.as_entire_binding())]);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = ctx.compute_pass(&mut enc, &Default::default());
            pass.set_pipeline(&pipe);
            pass.set_bind_group(0, &bg, &[]);
            dispatch(&ctx, &mut pass, cases.len() as u64);
        }
        ctx.submit(enc);
        let got: Vec<u32> = ctx.read(&io, words.len()).unwrap();
        let mut f32_division_differs = 0;
        for (t, &(c, s)) in cases.iter().enumerate() {
            let want = expected(c, s);
            assert_eq!(got[2 * t] as i32 as i64, want, "c = {c:e}, s = {s:e}");
            f32_division_differs +=
                usize::from(c.abs() < s * 16_777_216.0 && (c / s).floor() as i64 != want);
        }
        assert!(f32_division_differs > 100, "{f32_division_differs}");
    }
}
