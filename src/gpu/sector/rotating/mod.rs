//! Scene `rotating` on the GPU (docs/design.md §5.7), `shaders/sector/rotating.wgsl`: sphere keys (grid cell) ->
//! radix sort -> gather -> cell-start table; per proxy: count candidates per box -> `ExclusiveScan` ->
//! write candidates -> the exact test's dispatch from the device's own total -> exact
//! conservative-sector vs sphere test with its hit count (and hit list when asked). Every pass
//! of every proxy goes in one submission with one host wait (§9.7).
//!
//! Never loses a candidate: the count is exact (64-bit total); a proxy whose candidates or hits
//! outgrew the lists sized from earlier frames runs again alone (`chunked`), in chunks of boxes
//! whose candidates fit one buffer when one binding cannot hold them; one box with more
//! candidates than fit is an [`Error::TooLarge`]. Proxy AABBs and sectors are built on the CPU
//! (rayon) and uploaded: 96 bytes per box.

use crate::broadphase::ProxyFrame;
use crate::broadphase::{Clock, StageTime};
use crate::error::{Error, Result};
use crate::geom::sector::proxy::validate_frame_input;
use crate::geom::sector::proxy::{Proxy, Swept, proxy_aabb};
use crate::geom::sphere::Sphere;
use crate::geom::sphere_grid::SphereGrid;
use crate::gpu::context::Uniform;
use crate::gpu::context::block::blocking;
use crate::gpu::context::{GpuContext, count_u32, dispatch_2d};
use crate::gpu::readback::{self, Readback};
use crate::gpu::sector::sector_sphere::GpuSector;
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::sort::scan::ExclusiveScan;
use crate::gpu::timer::PassTimer;
use encase::ShaderType;
use glam::{UVec4, Vec4};
use rayon::prelude::*;
use std::ops::Range;
use web_time::Instant;

mod chunked;

/// `WG` in the shader.
const WORKGROUP: u32 = 64;
/// Timed passes per submission (the sort alone has 4 x (histogram + scan levels + scatter)).
const TIMER_PASSES: u32 = 64;
/// Timed passes of one proxy in the one-submission frame.
const PROXY_TIMER_PASSES: u32 = 8;
/// The first frame's candidate list: this many per box (a frame needing more runs again).
const FIRST_CANDIDATES_PER_BOX: u64 = 16;

#[derive(Clone, Copy, Default, ShaderType)]
struct Params {
    grid_origin: Vec4,
    grid_dims: UVec4,
    boxes: UVec4,
    chunk: UVec4,
    reach: Vec4,
    cells: UVec4,
}

/// A storage buffer kept across calls, replaced when too small.
#[derive(Default)]
struct Scratch(Option<wgpu::Buffer>);

impl Scratch {
    fn get(&mut self, ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        if let Some(b) = &self.0
            && b.size() >= bytes
        {
            return Ok(b.clone());
        }
        let b = ctx.storage_buffer(label, bytes)?;
        self.0 = Some(b.clone());
        Ok(b)
    }
}

/// Pipelines, sort, scan and scratch buffers of the rotating-scene pipeline.
pub struct RotatingGpu {
    keys: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
    starts_pipeline: wgpu::ComputePipeline,
    count: wgpu::ComputePipeline,
    write: wgpu::ComputePipeline,
    test: wgpu::ComputePipeline,
    sort: RadixSort,
    scan: ExclusiveScan,
    params: wgpu::Buffer,
    totals: wgpu::Buffer,
    scan_total: wgpu::Buffer,
    in_spheres: Scratch,
    sort_keys: Scratch,
    sort_values: Scratch,
    sorted: Scratch,
    starts: Scratch,
    aabbs: Scratch,
    sectors: Scratch,
    counts: Scratch,
    hit_pairs: Scratch,
    /// Candidates per chunk; `None`: as many as one binding holds.
    capacity_override: Option<u32>,
    max_groups_per_dim: u32,
    prepare: wgpu::ComputePipeline,
    /// One per proxy of a frame, so every proxy's passes go in the frame's one submission.
    slots: Vec<ProxySlot>,
    /// The candidate list (shared by the proxies, one after another; the chunked path's too) and
    /// its size in candidates for the next frame: the largest need seen and an eighth.
    candidates_resident: Scratch,
    candidate_room: u64,
    /// Hit pairs each proxy's hit list holds: the most hits seen in a frame and an eighth.
    hit_room: u64,
    timer: PassTimer,
    readback: Readback,
}

/// A proxy's own buffers in the one-submission frame.
struct ProxySlot {
    params: wgpu::Buffer,
    /// As `RotatingGpu::totals`: hits, candidates (2 words), walks cut short.
    totals: wgpu::Buffer,
    dispatch: wgpu::Buffer,
    aabbs: Scratch,
    sectors: Scratch,
    counts: Scratch,
    hits: Scratch,
    timer: PassTimer,
}

impl ProxySlot {
    fn new(ctx: &GpuContext) -> Result<Self> {
        Ok(Self {
            params: ctx.uniform_buffer("rotating proxy params", Params::uniform_size())?,
            totals: ctx.storage_buffer("rotating proxy totals", 16)?,
            dispatch: ctx.storage_buffer_with(
                "rotating test dispatch",
                12,
                wgpu::BufferUsages::INDIRECT,
            )?,
            aabbs: Scratch::default(),
            sectors: Scratch::default(),
            counts: Scratch::default(),
            hits: Scratch::default(),
            timer: PassTimer::new(ctx, PROXY_TIMER_PASSES),
        })
    }
}

/// Where a proxy's results lie in the frame's readback.
struct SlotPlan {
    totals: Range<usize>,
    hits: Range<usize>,
    times: Range<usize>,
}

impl RotatingGpu {
    /// Compiles the frame's pipelines on `ctx` and allocates its small fixed buffers.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        ctx.check_workgroup("the rotating-box frame", WORKGROUP)?;
        let module = ctx.shader_file("sector/rotating.wgsl")?;
        let small = |label| {
            ctx.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let gpu = Self {
            keys: ctx.pipeline(&module, "sphere_keys", &[])?,
            gather: ctx.pipeline(&module, "gather_spheres", &[])?,
            starts_pipeline: ctx.pipeline(&module, "find_cell_starts", &[])?,
            count: ctx.pipeline(&module, "count_candidates", &[])?,
            write: ctx.pipeline(&module, "write_candidates", &[])?,
            test: ctx.pipeline(&module, "test_candidates", &[])?,
            sort: RadixSort::new(ctx)?,
            scan: ExclusiveScan::new(ctx)?,
            params: ctx.uniform_buffer("rotating params", Params::uniform_size())?,
            totals: small("rotating totals")?,
            scan_total: small("rotating scan total")?,
            in_spheres: Scratch::default(),
            sort_keys: Scratch::default(),
            sort_values: Scratch::default(),
            sorted: Scratch::default(),
            starts: Scratch::default(),
            aabbs: Scratch::default(),
            sectors: Scratch::default(),
            counts: Scratch::default(),
            hit_pairs: Scratch::default(),
            capacity_override: None,
            max_groups_per_dim: ctx.limits.max_compute_workgroups_per_dimension,
            prepare: ctx.pipeline(&module, "prepare_test", &[])?,
            slots: Vec::new(),
            candidates_resident: Scratch::default(),
            candidate_room: 0,
            hit_room: 1024,
            timer: PassTimer::new(ctx, TIMER_PASSES),
            readback: Readback::new("rotating frame readback"),
        };
        ctx.check()?;
        Ok(gpu)
    }

    /// Caps the candidates per chunk (`None`: planned from the scene): a test knob that forces
    /// several chunks with small scenes. The results are the same.
    pub fn set_candidate_capacity(&mut self, capacity: Option<u32>) {
        self.capacity_override = capacity.map(|c| c.max(1));
    }

    /// Caps the groups per grid dimension (also in the sort and scan), so tests reach the 2D
    /// dispatch of every kernel with small scenes. The results are the same.
    pub fn set_max_groups_per_dim(&mut self, max: u32) {
        self.max_groups_per_dim = max.max(1);
        self.sort.set_max_groups_per_dim(max);
        self.scan.set_max_groups_per_dim(max);
    }

    fn candidate_capacity(&self, ctx: &GpuContext) -> u32 {
        let max = ctx.max_binding_bytes();
        let by_binding = (max / 8).min(u32::MAX as u64) as u32;
        self.capacity_override
            .map_or(by_binding, |c| c.min(by_binding))
    }

    /// Records `pipeline` over `threads` invocations in its own pass, timed as `stage`, each
    /// buffer bound whole.
    #[allow(clippy::too_many_arguments)]
    fn run_pass(
        &self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        timer: &mut PassTimer,
        stage: &'static str,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
        threads: u32,
    ) {
        let bg = ctx.bind_buffers("rotating", pipeline, buffers);
        let (x, y) = dispatch_2d(threads.div_ceil(WORKGROUP), self.max_groups_per_dim);
        ctx.dispatch_pass(enc, stage, timer.pass(stage), pipeline, &bg, [x, y, 1]);
    }

    blocking! {
        /// One frame for each proxy in `proxies` (the sphere sort is shared): candidates, hits
        /// and, with `want_hits`, the sorted hit pairs (box, sphere). Every pass of every proxy
        /// goes in one submission with one host wait (docs/design.md §9.7); a proxy whose
        /// candidates or hits outgrew the lists sized from the last frame runs again on its own
        /// (chunked when one binding cannot hold its candidates), so nothing is ever lost.
        pub fn frame = "a rotating frame";
        pub async fn frame_async(
            &mut self,
            ctx: &GpuContext,
            boxes: &[impl Swept],
            spheres: &[Sphere],
            proxies: &[Proxy],
            want_hits: bool,
        ) -> Result<Vec<ProxyFrame>> {
            let _frame = ctx.frame();
            ctx.settle()?;
            validate_frame_input(boxes, spheres)?;
            if spheres.is_empty() || boxes.is_empty() {
                return Ok(ProxyFrame::nothing_for(proxies.len(), want_hits));
            }
            let n = count_u32("spheres", spheres.len())?;
            let k = count_u32("boxes", boxes.len())?;
            let t_frame = Instant::now();
            let grid = SphereGrid::new(spheres);
            // At most 4 n + 64 cells (see `SphereGrid::new`), so this fits u32.
            let cells = u32::try_from(grid.cell_count()).map_err(|_| {
                Error::past_u32(
                    grid.cell_count(),
                    format!("{} grid cells", grid.cell_count()),
                )
            })?;
            let mut params = Params {
                grid_origin: grid.origin.extend(grid.inv_cell),
                grid_dims: UVec4::new(grid.dims[0], grid.dims[1], grid.dims[2], n),
                boxes: UVec4::new(k, 0, 0, 0),
                chunk: UVec4::ZERO,
                reach: Vec4::new(grid.reach, 0.0, 0.0, 0.0),
                cells: UVec4::new(cells, self.max_groups_per_dim, 0, 0),
            };
            let in_spheres = self
                .in_spheres
                .get(ctx, "rotating spheres", n as u64 * 16)?;
            let keys = self.sort_keys.get(ctx, "rotating keys", n as u64 * 4)?;
            let values = self.sort_values.get(ctx, "rotating values", n as u64 * 4)?;
            let sorted = self
                .sorted
                .get(ctx, "rotating sorted spheres", n as u64 * 16)?;
            let starts = self
                .starts
                .get(ctx, "rotating cell starts", (cells as u64 + 1) * 4)?;
            ctx.write_buffer(&in_spheres, 0, bytemuck::cast_slice(spheres));
            ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
            // Every fallible step before the timer is taken: one that failed after it left the
            // frames that followed without their stage times.
            let max_room = self.candidate_capacity(ctx) as u64;
            let first = FIRST_CANDIDATES_PER_BOX * k as u64;
            let room = match self.candidate_room {
                0 => first,
                r => r,
            }
            .clamp(1, max_room);
            let candidates = self
                .candidates_resident
                .get(ctx, "rotating candidates", room * 8)?;
            while self.slots.len() < proxies.len() {
                self.slots.push(ProxySlot::new(ctx)?);
            }
            let mut timer = std::mem::replace(&mut self.timer, PassTimer::new(ctx, 0));
            timer.reset();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            let shared = self.encode_sphere_sort(
                ctx,
                &mut enc,
                &mut timer,
                [&in_spheres, &keys, &values, &sorted, &starts],
                n,
                cells,
                grid.key_bits(),
            );
            timer.resolve(&mut enc);
            let mut slots = std::mem::take(&mut self.slots);
            let mut rb = std::mem::replace(&mut self.readback, Readback::new("rotating readback"));
            rb.clear();
            let shared_times = rb.add_timer(&timer);
            let mut plans = Vec::with_capacity(proxies.len());
            let mut cpu_seconds = Vec::with_capacity(proxies.len());
            let encoded = (|| -> Result<()> {
                shared?;
                for (slot, &proxy) in slots.iter_mut().zip(proxies) {
                    let t = Instant::now();
                    let (aabbs, sectors) = proxy_data(boxes, proxy);
                    cpu_seconds.push(t.elapsed().as_secs_f64());
                    let room_hits = if want_hits {
                        self.hit_room.clamp(1, max_room)
                    } else {
                        1
                    };
                    let mut p = params;
                    p.boxes = UVec4::new(k, 0, k, 0);
                    p.chunk = UVec4::new(u32::MAX, room as u32, room_hits as u32, want_hits as u32);
                    let hits = self.encode_proxy(
                        ctx,
                        &mut enc,
                        slot,
                        &p,
                        (&aabbs, &sectors),
                        [&values, &sorted, &starts, &candidates],
                        room_hits,
                    )?;
                    plans.push(SlotPlan {
                        totals: rb.add(&slot.totals, 0, 16),
                        hits: rb.add(&hits, 0, if want_hits { room_hits * 8 } else { 0 }),
                        times: rb.add_timer(&slot.timer),
                    });
                }
                rb.record(ctx, &mut enc)
            })();
            let read = match encoded {
                Err(e) => Err(e),
                Ok(()) => {
                    ctx.submit(enc);
                    rb.map_async(ctx, |bytes| {
                        let shared = timer.times_from(ctx, &bytes[shared_times.clone()]);
                        let per: Vec<_> = plans
                            .iter()
                            .zip(&slots)
                            .map(|(plan, slot)| {
                                let words = readback::words(&bytes[plan.totals.clone()]);
                                let hits = want_hits.then(|| {
                                    let h = (words[0] as usize).min(plan.hits.len() / 8);
                                    let at = plan.hits.start;
                                    bytemuck::pod_collect_to_vec::<u8, [u32; 2]>(
                                        &bytes[at..at + 8 * h],
                                    )
                                });
                                (
                                    words,
                                    hits,
                                    slot.timer.times_from(ctx, &bytes[plan.times.clone()]),
                                )
                            })
                            .collect();
                        (shared, per)
                    })
                    .await
                }
            };
            self.readback = rb;
            self.timer = timer;
            self.slots = slots;
            let (shared_times, per) = read?;
            let wall = t_frame.elapsed().as_secs_f64();
            let shared_stages: Vec<StageTime> = shared_times
                .into_iter()
                .map(|(stage, seconds)| StageTime {
                    stage,
                    seconds,
                    clock: Clock::GpuTimestamp,
                })
                .collect();
            let mut out = Vec::with_capacity(proxies.len());
            let mut need_room = 0u64;
            for (p, ((words, hit_list, times), &proxy)) in
                per.into_iter().zip(proxies).enumerate()
            {
                if words[3] > 0 {
                    return Err(cut_short(ctx, words[3]));
                }
                let total = words[1] as u64 | (words[2] as u64) << 32;
                let hits = words[0] as u64;
                need_room = need_room.max(total);
                if want_hits {
                    self.hit_room = self.hit_room.max(hits + hits / 8);
                }
                let fits =
                    total <= room && hit_list.as_ref().is_none_or(|l| l.len() as u64 == hits);
                let mut frame = if fits {
                    let mut stages = vec![StageTime {
                        stage: "proxies + sectors (cpu)",
                        seconds: cpu_seconds[p],
                        clock: Clock::Wall,
                    }];
                    add_gpu_times(&mut stages, times);
                    ProxyFrame {
                        candidates: total,
                        hits,
                        hit_pairs: hit_list.map(|mut l| {
                            l.sort_unstable();
                            l
                        }),
                        stages,
                    }
                } else {
                    // Outgrew the lists: this proxy again, alone, sized exactly (more waits).
                    self.proxy_frame(
                        ctx,
                        boxes,
                        proxy,
                        &mut params,
                        want_hits,
                        [&starts, &values, &sorted],
                    )
                    .await?
                };
                let mut stages = shared_stages.clone();
                stages.append(&mut frame.stages);
                stages.push(StageTime {
                    stage: "gpu frame (wall)",
                    seconds: wall,
                    clock: Clock::Wall,
                });
                frame.stages = stages;
                out.push(frame);
            }
            // Lists only grow (as the sphere pair list), so proxies taking turns do not re-run.
            self.candidate_room = self.candidate_room.max(need_room + need_room / 8);
            Ok(out)
        }
    }

    /// Records the shared sphere passes: keys, sort, gather, cell starts.
    #[allow(clippy::too_many_arguments)]
    fn encode_sphere_sort(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        timer: &mut PassTimer,
        [in_spheres, keys, values, sorted, starts]: [&wgpu::Buffer; 5],
        n: u32,
        cells: u32,
        key_bits: u32,
    ) -> Result<()> {
        self.run_pass(
            ctx,
            enc,
            timer,
            "keys",
            &self.keys,
            &[
                (16, &self.params),
                (17, in_spheres),
                (18, keys),
                (19, values),
            ],
            n,
        );
        self.sort
            .encode(ctx, enc, keys, values, n, key_bits, Some(&mut *timer))?;
        self.run_pass(
            ctx,
            enc,
            timer,
            "gather",
            &self.gather,
            &[
                (16, &self.params),
                (17, in_spheres),
                (19, values),
                (20, sorted),
            ],
            n,
        );
        self.run_pass(
            ctx,
            enc,
            timer,
            "cell starts",
            &self.starts_pipeline,
            &[(16, &self.params), (18, keys), (27, starts)],
            cells + 1,
        );
        Ok(())
    }

    /// Records one proxy's passes with no host round trip: count, scan, write (the whole list,
    /// never past its capacity), the test's dispatch from the device's total, the exact test.
    /// Returns the hit list it writes.
    #[allow(clippy::too_many_arguments)]
    fn encode_proxy(
        &mut self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        slot: &mut ProxySlot,
        params: &Params,
        (aabbs, sectors): (&[[[f32; 4]; 2]], &[GpuSector]),
        [values, sorted, starts, candidates]: [&wgpu::Buffer; 4],
        hit_room: u64,
    ) -> Result<wgpu::Buffer> {
        let k = params.boxes.x;
        let aabb_buf = slot.aabbs.get(ctx, "rotating box aabbs", k as u64 * 32)?;
        let sector_buf = slot.sectors.get(ctx, "rotating sectors", k as u64 * 64)?;
        let counts = slot.counts.get(ctx, "rotating counts", k as u64 * 4)?;
        let hits = slot.hits.get(ctx, "rotating hit pairs", hit_room * 8)?;
        ctx.write_buffer(&aabb_buf, 0, bytemuck::cast_slice(aabbs));
        ctx.write_buffer(&sector_buf, 0, bytemuck::cast_slice(sectors));
        ctx.write_buffer(&slot.params, 0, &params.to_bytes()?);
        enc.clear_buffer(&slot.totals, 0, None);
        let timer = &mut slot.timer;
        timer.reset();
        let walk = [
            (16, &slot.params),
            (20, sorted),
            (27, starts),
            (21, &aabb_buf),
            (23, &counts),
            (24, candidates),
        ];
        let mut count_bindings = walk.to_vec();
        count_bindings.push((25, &slot.totals));
        self.run_pass(
            ctx,
            enc,
            timer,
            "count candidates",
            &self.count,
            &count_bindings,
            k,
        );
        self.scan
            .encode(ctx, enc, &counts, k, &self.scan_total, 0, Some(&mut *timer))?;
        self.run_pass(ctx, enc, timer, "write candidates", &self.write, &walk, k);
        self.run_pass(
            ctx,
            enc,
            timer,
            "test dispatch",
            &self.prepare,
            &[(16, &slot.params), (25, &slot.totals), (28, &slot.dispatch)],
            1,
        );
        let bg = ctx.bind_buffers(
            "rotating test",
            &self.test,
            &[
                (16, &slot.params),
                (19, values),
                (20, sorted),
                (22, &sector_buf),
                (24, candidates),
                (25, &slot.totals),
                (26, &hits),
            ],
        );
        {
            let mut pass = ctx.compute_pass(
                enc,
                &wgpu::ComputePassDescriptor {
                    label: Some("exact test"),
                    timestamp_writes: timer.pass("exact test"),
                },
            );
            pass.set_pipeline(&self.test);
            pass.set_bind_group(0, &bg, &[]);
            ctx.note_dispatch();
            pass.dispatch_workgroups_indirect(&slot.dispatch, 0);
        }
        timer.resolve(enc);
        Ok(hits)
    }
}

/// Proxy AABBs (min, max) and conservative sectors of every box, built on the CPU (rayon).
#[allow(clippy::type_complexity)]
fn proxy_data(boxes: &[impl Swept], proxy: Proxy) -> (Vec<[[f32; 4]; 2]>, Vec<GpuSector>) {
    boxes
        .par_iter()
        .map(|b| {
            let a = proxy_aabb(b, proxy);
            (
                [a.min.extend(0.0).to_array(), a.max.extend(0.0).to_array()],
                GpuSector::from(&b.conservative_sector()),
            )
        })
        .unzip()
}

/// Adds GPU pass times to `stages`, summed by stage name.
fn add_gpu_times(stages: &mut Vec<StageTime>, times: Vec<(&'static str, f64)>) {
    for (stage, seconds) in times {
        match stages.iter_mut().find(|s| s.stage == stage) {
            Some(s) => s.seconds += seconds,
            None => stages.push(StageTime {
                stage,
                seconds,
                clock: Clock::GpuTimestamp,
            }),
        }
    }
}

/// The error for candidate walks the device ended early.
fn cut_short(ctx: &GpuContext, walks: u32) -> Error {
    Error::gpu(
        crate::error::GpuFailure::CutShort,
        format!(
            "the device '{}' cut {walks} candidate walks of the rotating scene short (lavapipe \
         stops an invocation after 65,535 loop iterations): candidates would be lost",
            ctx.info.name
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::gpu::shader::uniform_layout_test!(Params, "sector/rotating.wgsl", "rot");
}
