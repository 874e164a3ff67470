//! The rotating scene's fallback (docs/design.md §9.7): one proxy run alone, its candidates in
//! chunks of boxes that fit one candidate buffer. Taken when a proxy's candidates or hits
//! outgrew the lists sized from earlier frames, or exceed one binding; several host waits.

use super::{Params, RotatingGpu, TIMER_PASSES, add_gpu_times, cut_short, proxy_data};
use crate::broadphase::{Clock, ProxyFrame, StageTime};
use crate::error::{Error, Exceeds, Result};
use crate::geom::sector::proxy::{Proxy, Swept};
use crate::gpu::context::{GpuContext, Uniform, count_u32};
use crate::gpu::timer::PassTimer;
use glam::UVec4;
use web_time::Instant;

impl RotatingGpu {
    pub(super) async fn proxy_frame(
        &mut self,
        ctx: &GpuContext,
        boxes: &[impl Swept],
        proxy: Proxy,
        params: &mut Params,
        want_hits: bool,
        [starts, values, sorted]: [&wgpu::Buffer; 3],
    ) -> Result<ProxyFrame> {
        let k = count_u32("boxes", boxes.len())?;
        let mut stages = Vec::new();
        let mut wall = |stage, t: Instant| {
            stages.push(StageTime {
                stage,
                seconds: t.elapsed().as_secs_f64(),
                clock: Clock::Wall,
            })
        };
        let t = Instant::now();
        let (aabbs, sectors) = proxy_data(boxes, proxy);
        wall("proxies + sectors (cpu)", t);
        let t = Instant::now();
        let aabb_buf = self.aabbs.get(ctx, "rotating box aabbs", k as u64 * 32)?;
        let sector_buf = self.sectors.get(ctx, "rotating sectors", k as u64 * 64)?;
        let counts = self.counts.get(ctx, "rotating counts", k as u64 * 4)?;
        ctx.write_buffer(&aabb_buf, 0, bytemuck::cast_slice(&aabbs));
        ctx.write_buffer(&sector_buf, 0, bytemuck::cast_slice(&sectors));
        ctx.write_buffer(&self.totals, 0, &[0u8; 16]);
        params.boxes = UVec4::new(k, 0, k, 0);
        params.chunk = UVec4::ZERO;
        ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
        // The count pass binds the candidate buffer too (the shared box visitor can write).
        let capacity = self.candidate_capacity(ctx);
        let candidates = self
            .candidates_resident
            .get(ctx, "rotating candidates", 8)?;
        let mut timer = PassTimer::new(ctx, TIMER_PASSES);
        // The shared box visitor's bindings: the count pass's, and each chunk's write pass's
        // (there with the candidate list sized for the chunks).
        let mut visitor = [
            (16, &self.params),
            (20, sorted),
            (27, starts),
            (21, &aabb_buf),
            (23, &counts),
            (24, &candidates),
        ];
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.run_pass(
            ctx,
            &mut enc,
            &mut timer,
            "count candidates",
            &self.count,
            &[visitor.as_slice(), &[(25, &self.totals)]].concat(),
            k,
        );
        self.scan.encode(
            ctx,
            &mut enc,
            &counts,
            k,
            &self.scan_total,
            0,
            Some(&mut timer),
        )?;
        timer.resolve(&mut enc);
        ctx.submit(enc);
        let totals: Vec<u32> = ctx.read_async(&self.totals, 4).await?;
        if totals[3] > 0 {
            return Err(cut_short(ctx, totals[3]));
        }
        let total = totals[1] as u64 | (totals[2] as u64) << 32;
        let mut gpu_times = timer.read_async(ctx).await?;

        // Chunks of boxes whose candidates fit the buffer: (first, end, base, count).
        let chunks: Vec<(u32, u32, u64, u64)> = if total <= capacity as u64 {
            vec![(0, k, 0, total)]
        } else {
            let offsets: Vec<u32> = ctx.read_async(&counts, k as usize).await?;
            let count_of = |b: usize| {
                let next = if b + 1 < k as usize {
                    offsets[b + 1]
                } else {
                    totals[1]
                };
                next.wrapping_sub(offsets[b]) as u64
            };
            let mut chunks = Vec::new();
            let (mut first, mut base, mut in_chunk) = (0usize, 0u64, 0u64);
            for b in 0..k as usize {
                let c = count_of(b);
                if c > capacity as u64 {
                    // Candidates are (box, sphere) u32 pairs, 8 bytes (`candidate_capacity`).
                    return Err(Error::too_large(
                        Exceeds::Binding {
                            needed: c.saturating_mul(8),
                            allowed: u64::from(capacity) * 8,
                        },
                        format!(
                            "rotating box {b} has {c} candidates; one candidate buffer holds \
                             {capacity} on adapter '{}'",
                            ctx.info.name
                        ),
                    ));
                }
                if in_chunk + c > capacity as u64 {
                    chunks.push((first as u32, b as u32, base, in_chunk));
                    first = b;
                    base += in_chunk;
                    in_chunk = 0;
                }
                in_chunk += c;
            }
            chunks.push((first as u32, k, base, in_chunk));
            chunks
        };
        let largest = chunks.iter().map(|c| c.3).max().unwrap_or(0).max(1);
        let candidates = self
            .candidates_resident
            .get(ctx, "rotating candidates", largest * 8)?;
        visitor[5] = (24, &candidates);
        let hit_room = if want_hits { largest } else { 1 };
        let hit_buf = self
            .hit_pairs
            .get(ctx, "rotating hit pairs", hit_room * 8)?;
        let mut hits = 0u64;
        let mut hit_pairs = want_hits.then(Vec::new);
        for &(first, end, base, count) in &chunks {
            if count == 0 {
                continue;
            }
            params.boxes = UVec4::new(k, first, end, base as u32);
            params.chunk = UVec4::new(
                count as u32,
                largest as u32,
                hit_room as u32,
                want_hits as u32,
            );
            ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
            ctx.write_buffer(&self.totals, 0, &[0u8; 4]);
            let mut timer = PassTimer::new(ctx, 2);
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            self.run_pass(
                ctx,
                &mut enc,
                &mut timer,
                "write candidates",
                &self.write,
                &visitor,
                end - first,
            );
            self.run_pass(
                ctx,
                &mut enc,
                &mut timer,
                "exact test",
                &self.test,
                &[
                    (16, &self.params),
                    (19, values),
                    (20, sorted),
                    (22, &sector_buf),
                    (24, &candidates),
                    (25, &self.totals),
                    (26, &hit_buf),
                ],
                count as u32,
            );
            timer.resolve(&mut enc);
            ctx.submit(enc);
            let chunk_hits = ctx.read_async::<u32>(&self.totals, 1).await?[0] as u64;
            hits += chunk_hits;
            if let Some(list) = &mut hit_pairs {
                list.extend(
                    ctx.read_async::<[u32; 2]>(&hit_buf, chunk_hits as usize)
                        .await?,
                );
            }
            for (stage, s) in timer.read_async(ctx).await? {
                gpu_times.push((stage, s));
            }
        }
        if let Some(list) = &mut hit_pairs {
            list.sort_unstable();
        }
        wall("chunked proxy frame (wall)", t);
        add_gpu_times(&mut stages, gpu_times);
        Ok(ProxyFrame {
            candidates: total,
            hits,
            hit_pairs,
            stages,
        })
    }
}
