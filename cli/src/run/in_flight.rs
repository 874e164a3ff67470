//! `bench --in-flight` (docs/design.md §9.16, "Frames in flight"): the scene's frames go up
//! from host memory as in `bench`, but two at a time: frame k + 1 is moved and submitted while
//! frame k runs on the device, then frame k is finished. A frame's time is the wall time from
//! one finish to the next (the rate a caller gets), less the scene's motion and the checks
//! that run between them (as `bench` leaves them out). Where a driver's submission blocks
//! while the queue is busy (lavapipe), one interval can hold two frames and the next almost
//! none; the median holds. A frame's device counts are its submission's and its finish's.
//!
//! The frames are `bench`'s: frame k is the scene after k steps (two copies of the scene, each
//! stepped twice a turn). The first and the last frame are verified against the CPU reference.

use crate::run::bench::Measurement;
use crate::run::gpu::LazyGpu;
use crate::run::resident::{Check, GpuBench, GpuMode, measure_gpu_mode};
use crate::run::row::Row;
use crate::run::verify::{Comparison, compare_pairs};
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use sweepfan::broadphase::DeviceCounts;
use sweepfan::broadphase::{BroadPhase, Diagnostics, Pair, Stats, canonicalize};
use sweepfan::error::Result;
use sweepfan::gpu::{GpuBroadPhase, SubmittedFrame};
use sweepfan_scenes::Scene;

/// Measures `bench` with two frames in flight (counting pairs only, or storing them); returns
/// the rows and whether every verified frame matched.
pub fn measure_in_flight(
    bench: &GpuBench,
    count_only: bool,
    gpu: &mut LazyGpu,
) -> Result<(Vec<Row>, bool)> {
    let (scene, frames) = (bench.scene, bench.frames);
    let mode = GpuMode::InFlight { count_only };
    measure_gpu_mode(bench, gpu, mode, |_, bp, reference| {
        let (m, comparison) = run_in_flight(bp, scene, frames, count_only, reference)?;
        let check = comparison.map(|comparison| Check {
            comparison,
            moved_apart: None,
        });
        Ok((m, check))
    })
}

/// The two copies of the scene: frame k is `even` or `odd` as k is, stepped twice after its
/// finish to become frame k + 2.
fn run_in_flight(
    bp: &mut GpuBroadPhase,
    scene: &Scene,
    frames: usize,
    count_only: bool,
    reference: Option<&mut dyn BroadPhase>,
) -> Result<(Measurement, Option<Comparison>)> {
    let mut even = scene.clone();
    let mut odd = scene.clone();
    odd.step();
    crate::run::check_frames(frames)?;
    let store = !count_only;
    let mut turn = Turn {
        last: frames.max(1) - 1,
        count_only,
        store,
        frame: 0,
        // Each of the two slots sizes its readback on its first two frames.
        m: Measurement {
            warm_frames: 4,
            ..Default::default()
        },
        comparison: None,
        pairs: Vec::new(),
        submitted: VecDeque::new(),
        reference,
        last_end: Instant::now(),
        excluded: Duration::ZERO,
    };
    // Two frames a round, each finished once the next is submitted: the ticket of a frame
    // borrows its scene until its finish, so the rounds name each copy.
    let mut on_even = Some(turn.submit(bp, &even.spheres)?);
    while let Some(current) = on_even.take() {
        crate::run::stop_if_interrupted()?;
        let on_odd = turn.more().then(|| turn.submit(bp, &odd.spheres));
        let on_odd = on_odd.transpose()?;
        let stats = turn.finish(bp, current)?;
        turn.check_and_step(&stats, &mut even)?;
        let Some(current) = on_odd else { break };
        let next = turn.more().then(|| turn.submit(bp, &even.spheres));
        on_even = next.transpose()?;
        let stats = turn.finish(bp, current)?;
        turn.check_and_step(&stats, &mut odd)?;
    }
    Ok((turn.m, turn.comparison))
}

/// What the frames of one run share.
struct Turn<'r> {
    last: usize,
    count_only: bool,
    store: bool,
    /// The frame finished next.
    frame: usize,
    m: Measurement,
    comparison: Option<Comparison>,
    pairs: Vec<Pair>,
    /// The device counts of each frame's submission, until its finish adds its own.
    submitted: VecDeque<Option<DeviceCounts>>,
    reference: Option<&'r mut dyn BroadPhase>,
    /// A frame's time: from the last finish to its own, less what ran between them that is
    /// not the frames' (the check, the scene's motion).
    last_end: Instant,
    excluded: Duration,
}

impl Turn<'_> {
    /// Whether a frame follows the one finished next.
    fn more(&self) -> bool {
        self.frame < self.last
    }

    /// Submits the frame of `spheres`, keeping what its submission counted.
    fn submit<'s>(
        &mut self,
        bp: &mut GpuBroadPhase,
        spheres: &'s [sweepfan::Sphere],
    ) -> Result<SubmittedFrame<'s>> {
        let before = bp.device_counts();
        let frame = bp.submit_frame(spheres, self.store)?;
        let counts = before.zip(bp.device_counts()).map(|(b, a)| a.since(b));
        self.submitted.push_back(counts);
        Ok(frame)
    }

    /// Finishes frame `self.frame`: its time and counts (its submission's and its finish's).
    fn finish(&mut self, bp: &mut GpuBroadPhase, current: SubmittedFrame<'_>) -> Result<Stats> {
        let before = bp.device_counts();
        let stats = bp.finish_frame(current, self.store.then_some(&mut self.pairs))?;
        let (tests, pairs) = (stats.tests, stats.pairs);
        self.m
            .record(self.last_end + self.excluded, tests, pairs, &stats.stages);
        self.last_end = Instant::now();
        let finished = before.zip(bp.device_counts()).map(|(b, a)| a.since(b));
        if let (Some(Some(s)), Some(f)) = (self.submitted.pop_front(), finished) {
            self.m.device.push(s.plus(f));
        }
        Ok(stats)
    }

    /// After frame `self.frame`'s finish: its check, then `scene` (its copy) stepped twice, to
    /// the frame after next; neither counted in the frames' time.
    fn check_and_step(&mut self, stats: &Stats, scene: &mut Scene) -> Result<()> {
        let frame = self.frame;
        if (frame == 0 || frame == self.last)
            && let Some(reference) = self.reference.as_deref_mut()
        {
            let mut this = check(
                reference,
                &scene.spheres,
                &mut self.pairs,
                self.count_only,
                stats,
            )?;
            this.frame = frame;
            if self
                .comparison
                .as_ref()
                .is_none_or(|c| c.is_ok() && !this.is_ok())
            {
                self.comparison = Some(this);
            }
        }
        if frame + 2 <= self.last {
            scene.step();
            scene.step();
        }
        self.excluded = self.last_end.elapsed();
        self.frame += 1;
        Ok(())
    }
}

/// The frame's pairs (or, counting only, its count) against the reference's on its spheres.
fn check(
    reference: &mut dyn BroadPhase,
    spheres: &[sweepfan::Sphere],
    got: &mut [Pair],
    count_only: bool,
    stats: &Stats,
) -> Result<Comparison> {
    if count_only {
        let expected = reference.find_pairs(spheres, None)?;
        return Ok(Comparison::of_counts(expected.pairs, stats.pairs));
    }
    let mut expected = Vec::new();
    reference.find_pairs(spheres, Some(&mut expected))?;
    canonicalize(&mut expected);
    canonicalize(got);
    Ok(compare_pairs(spheres, &expected, got))
}
