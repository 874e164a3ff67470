//! `bench --resident` (docs/design.md §10): the scene lives on the device, a compute pass moves
//! it each frame ([`DeviceScene`]) and the broad phase reads it there
//! ([`GpuBroadPhase::encode_from_buffer`]): nothing is uploaded per frame, only the totals come
//! back. The frame an embedded simulation pays; its `ms_per_frame` against the device stages'
//! sum says what the host still costs.
//!
//! Verified on the first and the last frame: the spheres and the pair list are read back (not
//! timed), the pairs compared with the CPU reference's on those spheres, and the spheres with
//! the CPU's own motion of the scene, bit for bit.
//!
//! The loop over the methods that both GPU modes of `bench` share (this one and `--in-flight`,
//! `run::in_flight`) is here too (`measure_gpu_mode`).

use super::count_u32;
use crate::run::bench::{Measurement, reference_method};
use crate::run::gpu::LazyGpu;
use crate::run::row::{Row, traffic_fields};
use crate::run::verify::{Comparison, compare_pairs};
use std::time::Instant;
use sweepfan::broadphase::Diagnostics;
use sweepfan::broadphase::{Backend, BroadPhase, Clock, Method, Pair, StageTime, canonicalize};
use sweepfan::error::{Error, Result};
use sweepfan::gpu::DeviceScene;
use sweepfan::gpu::GpuBroadPhase;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::instrument::PassTimer;
use sweepfan::gpu::instrument::Readback;
use sweepfan::registry;
use sweepfan_scenes::Scene;

/// What a run found on a verified frame.
pub(crate) struct Check {
    pub(crate) comparison: Comparison,
    /// Spheres whose device motion differs from the CPU's `Scene::step`, bit for bit (`None`
    /// where the device does not move them).
    pub(crate) moved_apart: Option<usize>,
}

impl Check {
    /// The pairs matched and no sphere moved apart.
    fn is_ok(&self) -> bool {
        self.comparison.is_ok() && self.moved_apart.is_none_or(|k| k == 0)
    }

    /// One-line summary for the mismatch message.
    fn summary(&self) -> String {
        match self.moved_apart {
            Some(k) => format!(
                "{}; {k} spheres moved otherwise than the CPU's step",
                self.comparison.summary()
            ),
            None => self.comparison.summary(),
        }
    }
}

/// A GPU mode of `bench`: `--resident`, or `--in-flight` (counting pairs only, or storing them).
#[derive(Clone, Copy)]
pub(crate) enum GpuMode {
    Resident,
    InFlight { count_only: bool },
}

impl GpuMode {
    /// Its name in the rows' device and in messages.
    fn name(self) -> &'static str {
        match self {
            GpuMode::Resident => "resident",
            GpuMode::InFlight { .. } => "in flight",
        }
    }

    /// Whether its frames store their pairs (for the traffic model).
    fn stored(self) -> bool {
        match self {
            GpuMode::Resident => true,
            GpuMode::InFlight { count_only } => !count_only,
        }
    }

    /// Whether its rows say how a frame was split.
    fn parts(self) -> bool {
        matches!(self, GpuMode::InFlight { .. })
    }
}

/// What a GPU mode of `bench` measures: each of `methods` on `scene` over `frames` frames, the
/// frames checked against the CPU reference when `verify`.
pub struct GpuBench<'a> {
    pub scene: &'a Scene,
    pub methods: &'a [String],
    pub frames: usize,
    pub verify: bool,
}

/// Measures `bench` on the GPU as `mode` runs it: `run` runs the frames on a fresh broad phase
/// of each method, checked against the CPU reference it is given (when `bench.verify`). Returns
/// the rows and whether every verified frame matched.
pub(crate) fn measure_gpu_mode(
    bench: &GpuBench,
    gpu: &mut LazyGpu,
    mode: GpuMode,
    mut run: impl FnMut(
        &GpuContext,
        &mut GpuBroadPhase,
        Option<&mut dyn BroadPhase>,
    ) -> Result<(Measurement, Option<Check>)>,
) -> Result<(Vec<Row>, bool)> {
    let GpuBench {
        scene,
        methods,
        frames,
        verify,
    } = *bench;
    if scene.is_empty() {
        return Err(Error::EmptyScene);
    }
    let ctx = gpu.get()?;
    let (mut rows, mut all_ok) = (Vec::new(), true);
    for name in methods {
        let (chosen, method, reference_name, mut reference) =
            gpu_method(name, scene, &ctx, verify)?;
        let mut bp = GpuBroadPhase::new(ctx.clone(), method)?;
        let reference = reference.as_deref_mut().map(|r| r as &mut dyn BroadPhase);
        let (mut m, check) = run(&ctx, &mut bp, reference)?;
        m.chosen = chosen;
        let verified = check.as_ref().map(Check::is_ok);
        if let Some(c) = check.as_ref().filter(|c| !c.is_ok()) {
            all_ok = false;
            eprintln!(
                "MISMATCH {name} [gpu, {}] vs {reference_name}: {}",
                mode.name(),
                c.summary()
            );
        }
        let (tests, pairs) = (m.tests_per_frame(frames), m.pairs_per_frame(frames));
        let (device_bytes_per_object, device_traffic) =
            traffic_fields(bp.device_traffic(scene.len(), tests, pairs, mode.stored()));
        let device = (Backend::Gpu, format!("{} ({})", gpu.device(), mode.name()));
        rows.push(Row {
            verified,
            verified_against: check.as_ref().map(|_| reference_name.to_string()),
            near_touching_differences: check.as_ref().map(|c| c.comparison.near_touching.len()),
            gpu_bytes_per_object: Some(bp.resident_bytes_per_object()),
            device_bytes_per_object,
            device_traffic,
            parts: if mode.parts() { bp.parts() } else { None },
            ..Row::measured(&scene.name, scene.len(), name, device, &m, frames)
        });
    }
    Ok((rows, all_ok))
}

/// Measures `bench` with the scene resident on the GPU; returns the rows and whether every
/// verified frame matched.
pub fn measure_resident(bench: &GpuBench, gpu: &mut LazyGpu) -> Result<(Vec<Row>, bool)> {
    measure_gpu_mode(bench, gpu, GpuMode::Resident, |ctx, bp, reference| {
        run_resident_frames(ctx, bp, bench.scene, bench.frames, reference)
    })
}

/// What a GPU run of `name` on `scene` runs: `auto`'s choice (from the scene as it starts,
/// docs/design.md §2.12), the method, and the CPU reference it is checked against (when
/// `verify`).
#[allow(clippy::type_complexity)]
fn gpu_method(
    name: &str,
    scene: &Scene,
    ctx: &GpuContext,
    verify: bool,
) -> Result<(
    Option<sweepfan::broadphase::auto::Choice>,
    Method,
    &'static str,
    Option<Box<dyn BroadPhase + Send>>,
)> {
    let chosen = (name == registry::AUTO).then(|| {
        sweepfan::broadphase::auto::choose(&scene.spheres, Backend::Gpu, ctx.is_software())
    });
    let method = match &chosen {
        Some(c) => c.method,
        None => Method::parse(name)?,
    };
    let reference_name = reference_method(&scene.spheres, method.name(), Backend::Gpu);
    let reference = match verify {
        true => Some(registry::broad_phase(reference_name, Backend::Cpu, None)?),
        false => None,
    };
    Ok((chosen, method, reference_name, reference))
}

/// Runs `frames` resident frames of `scene` with `bp`: frame 0 on the scene as it is, each
/// later one after a motion pass. Each frame is one submission (motion, broad phase, the copy
/// of its totals and timestamps) and one wait. With `reference`, the first and the last frame
/// are checked (the check is not timed); the check returned is the first that failed, else the
/// first frame's.
fn run_resident_frames(
    ctx: &GpuContext,
    bp: &mut GpuBroadPhase,
    scene: &Scene,
    frames: usize,
    mut reference: Option<&mut dyn BroadPhase>,
) -> Result<(Measurement, Option<Check>)> {
    let n = count_u32("spheres", scene.len())?;
    let device = DeviceScene::upload(ctx, &scene.spheres, &scene.velocities, scene.half_extent)?;
    // The CPU's own motion of the scene, to check the device's against (verified runs only).
    let mut cpu_scene = reference.is_some().then(|| scene.clone());
    let mut timer = PassTimer::new(ctx, 1);
    let mut rb = Readback::new("resident frame totals");
    crate::run::check_frames(frames)?;
    let mut m = Measurement::default();
    let mut check: Option<Check> = None;
    let last = frames.max(1) - 1;
    for frame in 0..=last {
        crate::run::stop_if_interrupted()?;
        let before = ctx.counts();
        let start = Instant::now();
        // Bind groups made in a frame are kept for the next (docs/design.md §9.16).
        let _frame = ctx.frame();
        let mut host = sweepfan::gpu::instrument::HostSteps::default();
        host.start();
        timer.reset();
        let mut motion = ctx.device().create_command_encoder(&Default::default());
        if frame > 0 {
            device.encode_step(ctx, &mut motion, &mut timer);
            timer.resolve(&mut motion);
        }
        let mut stages: Vec<StageTime> = Vec::new();
        // A list too small for the frame's pairs grows and the broad phase runs again on the
        // same spheres (the motion is not repeated).
        let mut motion = Some(motion);
        let totals = loop {
            let mut enc = bp.encode_from_buffer(device.spheres(), n)?;
            rb.clear();
            let plan = bp.plan_resident_readback(&mut rb);
            let motion_at = rb.add_timer(&timer);
            rb.record(ctx, &mut enc)?;
            host.lap("encode");
            let buffers: Vec<wgpu::CommandBuffer> = motion
                .take()
                .map(|m| m.finish())
                .into_iter()
                .chain([enc.finish()])
                .collect();
            ctx.queue().submit(buffers);
            host.lap("submit");
            let (totals, motion_times) = rb.map(ctx, |bytes| {
                host.lap("wait");
                let totals = bp.resident_totals_from(n, bytes, &plan);
                (totals, timer.times_from(ctx, &bytes[motion_at]))
            })?;
            host.lap("read-back");
            let totals = totals?;
            for (label, seconds) in motion_times.into_iter().chain(totals.pass_times.clone()) {
                stages.push(StageTime {
                    stage: label,
                    seconds,
                    clock: Clock::GpuTimestamp,
                });
            }
            if totals.pairs <= bp.pair_capacity() {
                break totals;
            }
            bp.grow_pair_list(totals.pairs)?;
            stages.clear();
            timer.reset();
        };
        for (step, seconds) in host.steps() {
            stages.push(StageTime {
                stage: step,
                seconds,
                clock: Clock::Host,
            });
        }
        m.record(start, totals.tests, totals.pairs, &stages);
        m.device.push(ctx.counts().since(before));
        if let Some(cpu) = cpu_scene.as_mut() {
            if frame > 0 {
                cpu.step();
            }
            if let Some(reference) = reference.as_deref_mut()
                && (frame == 0 || frame == last)
            {
                let this = check_frame(ctx, bp, &device, totals.pairs, cpu, reference)?;
                if check.as_ref().is_none_or(|c| c.is_ok() && !this.is_ok()) {
                    check = Some(this);
                }
            }
        }
    }
    Ok((m, check))
}

/// Reads back the device's spheres and pairs (`pairs` of them) and compares them with the CPU:
/// the reference's pairs on the device's spheres, and the spheres with `cpu`'s motion.
fn check_frame(
    ctx: &GpuContext,
    bp: &GpuBroadPhase,
    device: &DeviceScene,
    pairs: u64,
    cpu: &Scene,
    reference: &mut dyn BroadPhase,
) -> Result<Check> {
    let spheres = device.read_spheres(ctx)?;
    let moved_apart = spheres
        .iter()
        .zip(&cpu.spheres)
        .filter(|(a, b)| bytemuck::bytes_of(*a) != bytemuck::bytes_of(*b))
        .count();
    let list = bp.resident_pairs();
    let mut got: Vec<Pair> = ctx.read(list.pairs, pairs as usize)?;
    let mut expected = Vec::new();
    reference.find_pairs(&spheres, Some(&mut expected))?;
    canonicalize(&mut got);
    canonicalize(&mut expected);
    Ok(Check {
        comparison: compare_pairs(&spheres, &expected, &got),
        moved_apart: Some(moved_apart),
    })
}
