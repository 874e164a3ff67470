//! Per-pass GPU times from timestamp queries (no-op on a device without them), and the host
//! side of a frame by step ([`HostSteps`]).

use crate::error::Result;
use crate::gpu::context::GpuContext;

/// Per-pass GPU timing with timestamp queries, when the device has them; a no-op otherwise.
/// Usage: `let tw = timer.pass("keys");` then `begin_compute_pass(&ComputePassDescriptor {
/// timestamp_writes: tw, .. })`; after the last pass `timer.resolve(&mut encoder)`; after the
/// submission `timer.read(ctx)` gives `(label, seconds)` per pass.
pub struct PassTimer {
    query_set: Option<wgpu::QuerySet>,
    resolve: Option<wgpu::Buffer>,
    capacity: u32,
    labels: Vec<&'static str>,
}

impl PassTimer {
    /// Room for `capacity` passes.
    pub fn new(ctx: &GpuContext, capacity: u32) -> Self {
        if !ctx.has_timestamps() || capacity == 0 {
            return Self {
                query_set: None,
                resolve: None,
                capacity: 0,
                labels: Vec::new(),
            };
        }
        let count = 2 * capacity;
        let query_set = ctx.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timer"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        // A device without memory for the resolve buffer times nothing (the frame still runs).
        let resolve = ctx
            .create_buffer(&wgpu::BufferDescriptor {
                label: Some("pass timer resolve"),
                size: 8 * count as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
            .ok();
        Self {
            query_set: resolve.as_ref().map(|_| query_set),
            resolve,
            capacity,
            labels: Vec::new(),
        }
    }

    /// Forgets the labels of the previous frame (the query set is reused).
    pub fn reset(&mut self) {
        self.labels.clear();
    }

    /// Timestamp writes for the next pass, or `None` (no timestamps, or out of room: that pass
    /// is simply not timed).
    pub fn pass(&mut self, label: &'static str) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let qs = self.query_set.as_ref()?;
        let i = self.labels.len() as u32;
        if i >= self.capacity {
            return None;
        }
        self.labels.push(label);
        Some(wgpu::ComputePassTimestampWrites {
            query_set: qs,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        })
    }

    /// Records the copy of the timestamps into the resolve buffer.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if let (Some(qs), Some(buf)) = (&self.query_set, &self.resolve)
            && !self.labels.is_empty()
        {
            encoder.resolve_query_set(qs, 0..2 * self.labels.len() as u32, buf, 0);
        }
    }

    /// Bytes the resolved timestamps of this frame take (0 without timestamps).
    pub fn resolved_bytes(&self) -> u64 {
        if self.resolve.is_some() {
            16 * self.labels.len() as u64
        } else {
            0
        }
    }

    /// Bytes the resolved timestamps can take at most.
    pub fn capacity_bytes(&self) -> u64 {
        16 * self.capacity as u64
    }

    /// The buffer [`Self::resolve`] fills (its first [`Self::resolved_bytes`]), so a frame's
    /// readback can copy the timestamps with everything else; `None` without timestamps.
    pub fn resolved_buffer(&self) -> Option<&wgpu::Buffer> {
        self.resolve.as_ref().filter(|_| !self.labels.is_empty())
    }

    /// Seconds per timed pass, summed by label (a stage may span several passes), in first-seen
    /// order. Empty without timestamps.
    pub fn read(&self, ctx: &GpuContext) -> Result<Vec<(&'static str, f64)>> {
        crate::gpu::context::block_on("the pass times", self.read_async(ctx))?
    }

    /// [`Self::read`] as a future, for a browser's page (docs/design.md §8.5).
    pub async fn read_async(&self, ctx: &GpuContext) -> Result<Vec<(&'static str, f64)>> {
        let Some(buf) = &self.resolve else {
            return Ok(Vec::new());
        };
        if self.labels.is_empty() {
            return Ok(Vec::new());
        }
        let ticks: Vec<u64> = ctx.read_async(buf, 2 * self.labels.len()).await?;
        Ok(Self::times(ctx, &self.labels, &ticks))
    }

    /// [`Self::read`] from resolved bytes copied elsewhere ([`Self::resolved_buffer`]).
    pub fn times_from(&self, ctx: &GpuContext, bytes: &[u8]) -> Vec<(&'static str, f64)> {
        self.times_of(ctx, &self.labels, bytes)
    }

    /// The labels of this frame's timed passes: with [`Self::times_of`], the times of a frame
    /// read after the timer recorded another (frames in flight).
    pub fn labels(&self) -> Vec<&'static str> {
        self.labels.clone()
    }

    /// [`Self::times_from`] for the passes `labels` (a frame's [`Self::labels`]).
    pub fn times_of(
        &self,
        ctx: &GpuContext,
        labels: &[&'static str],
        bytes: &[u8],
    ) -> Vec<(&'static str, f64)> {
        if self.resolve.is_none() || labels.is_empty() {
            return Vec::new();
        }
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes[..16 * labels.len()]);
        Self::times(ctx, labels, &ticks)
    }

    fn times(ctx: &GpuContext, labels: &[&'static str], ticks: &[u64]) -> Vec<(&'static str, f64)> {
        let mut out: Vec<(&'static str, f64)> = Vec::new();
        for (i, label) in labels.iter().enumerate() {
            let dt = ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64
                * ctx.timestamp_period_ns as f64
                * 1e-9;
            match out.iter_mut().find(|(l, _)| l == label) {
                Some(e) => e.1 += dt,
                None => out.push((label, dt)),
            }
        }
        out
    }
}

/// The host side of a GPU frame by step (docs/design.md §9.16): wall time accumulated per
/// named step since [`HostSteps::start`] (a frame that runs twice, its list having grown, adds
/// both runs to the same steps), reported as [`Clock::Host`](crate::broadphase::Clock::Host)
/// stages.
#[derive(Debug)]
pub struct HostSteps {
    last: web_time::Instant,
    steps: Vec<(&'static str, f64)>,
}

impl Default for HostSteps {
    fn default() -> Self {
        Self {
            last: web_time::Instant::now(),
            steps: Vec::new(),
        }
    }
}

impl HostSteps {
    /// Forgets the steps and starts the clock.
    pub fn start(&mut self) {
        self.steps.clear();
        self.last = web_time::Instant::now();
    }

    /// Starts the clock again without counting the time since the last lap (a frame in
    /// flight: the caller's time between its submission and its finish is not the frame's).
    pub fn resume(&mut self) {
        self.last = web_time::Instant::now();
    }

    /// Adds the time since the last lap (or the start) to `step`.
    pub fn lap(&mut self, step: &'static str) {
        let now = web_time::Instant::now();
        let seconds = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        match self.steps.iter_mut().find(|(s, _)| *s == step) {
            Some((_, t)) => *t += seconds,
            None => self.steps.push((step, seconds)),
        }
    }

    /// Each step and its seconds, in the order they first ran.
    pub fn steps(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.steps.iter().copied()
    }

    /// The steps into `stats`, in the order they first ran.
    pub fn report(&self, stats: &mut crate::broadphase::Stats) {
        for &(step, seconds) in &self.steps {
            stats.stage(step, seconds, crate::broadphase::Clock::Host);
        }
    }
}
