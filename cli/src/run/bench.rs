//! Running a broad phase over frames of a moving scene and summarising what it did.
//!
//! Every method sees the same frames: each run starts from its own copy of the initial scene.
//! Scene stepping is not timed; each frame's time is the wall time of one `find_pairs` call
//! (for GPU methods that includes upload and readback; per-pass GPU time is in the stages).

use crate::run::gpu::LazyGpu;
use crate::run::row::{
    CreatedPerFrame, FrameEventCounts, Row, SteadyCounts, cpu_device, fill_speedups, traffic_fields,
};
use crate::run::verify::{Comparison, compare_pairs};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::time::Instant;
use sweepfan::broadphase::Backend;
use sweepfan::broadphase::{BroadPhase, Clock, DeviceCounts, Pair, StageTime, canonicalize};
use sweepfan::error::{Error, Result};
use sweepfan::events::EventTracker;
use sweepfan::registry;
use sweepfan_scenes::Scene;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct FrameRun {
    /// Frames to run (and time).
    pub frames: usize,
    /// Tests and pairs are averaged over the first `count_frames` frames (the paper: 10).
    pub count_frames: usize,
    /// Count pairs without storing them.
    pub count_only: bool,
    /// Track frame events (found and lost pairs per frame; needs the pairs stored).
    pub events: bool,
    /// Frames run first, untimed, on the first frame's scene (without events): a fresh
    /// instance's set-up (first allocations, `auto`'s survey) left out of the times.
    pub untimed: usize,
}

impl FrameRun {
    /// `frames` frames, each timed and counted, the pairs stored; no events, no untimed frame.
    pub fn new(frames: usize) -> FrameRun {
        FrameRun {
            frames,
            count_frames: frames,
            count_only: false,
            events: false,
            untimed: 0,
        }
    }
}

impl Row {
    /// The row of `method` on `scene` (`n` objects) from what `m` measured over `count_frames`
    /// counted frames: times, counts, stages, device counts, events, `auto`'s choice. The
    /// checks and the device's diagnostics are the caller's (`..Row::measured(..)`).
    pub fn measured(
        scene: &str,
        n: usize,
        method: &str,
        (backend, device): (Backend, String),
        m: &Measurement,
        count_frames: usize,
    ) -> Row {
        let (host_waits_per_frame, dispatches_per_frame) = m.device_per_frame();
        Row {
            scene: scene.to_string(),
            n,
            method: method.to_string(),
            backend,
            device,
            frames: m.frame_ms.len(),
            tests_per_frame: m.tests_per_frame(count_frames),
            pairs_per_frame: m.pairs_per_frame(count_frames),
            ms_per_frame: m.median_ms(),
            ms_per_frame_min: m.min_ms(),
            stage_ms: m.stage_ms(),
            host_ms: m.host_ms(),
            speedup_vs_brute_force: None,
            verified: None,
            verified_against: None,
            near_touching_differences: None,
            gpu_bytes_per_object: None,
            host_bytes_per_object: None,
            device_bytes_per_object: None,
            device_traffic: None,
            events: FrameEventCounts::of(m),
            host_waits_per_frame,
            dispatches_per_frame,
            steady: m.steady_counts(),
            shape: None,
            parts: None,
            chosen: m.chosen.clone(),
        }
    }
}

/// Per-frame results and their summaries.
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    pub frame_ms: Vec<f64>,
    pub frame_tests: Vec<u64>,
    pub frame_pairs: Vec<u64>,
    /// Stage -> (clock, per-frame seconds).
    pub stages: BTreeMap<String, (Clock, Vec<f64>)>,
    /// Per frame, GPU backends: host waits and dispatches (see [`DeviceCounts`]).
    pub device: Vec<DeviceCounts>,
    /// Per frame, with [`FrameRun::events`]: pairs found and lost against the previous frame.
    pub events: Vec<[u64; 2]>,
    /// `auto`: the last frame's choice.
    pub chosen: Option<sweepfan::broadphase::auto::Choice>,
    /// Frames that size the lists, left out of [`Self::steady_counts`] (0: the usual 2).
    pub warm_frames: usize,
}

impl Measurement {
    /// Records one frame: its wall time since `start`, its counts and its stage times.
    pub fn record(&mut self, start: Instant, tests: u64, pairs: u64, stages: &[StageTime]) {
        self.frame_ms.push(1e3 * start.elapsed().as_secs_f64());
        self.frame_tests.push(tests);
        self.frame_pairs.push(pairs);
        for s in stages {
            self.stages
                .entry(s.stage.to_string())
                .or_insert_with(|| (s.clock, Vec::new()))
                .1
                .push(s.seconds);
        }
    }

    /// Host waits and dispatches per frame, when the backend counts them: the median over the
    /// frames, as the times (the first frame also grows lists sized by no earlier frame, and
    /// may run again once for that).
    pub fn device_per_frame(&self) -> (Option<f64>, Option<f64>) {
        if self.device.is_empty() {
            return (None, None);
        }
        let per = |f: fn(&DeviceCounts) -> u64| {
            median(&self.device.iter().map(|d| f(d) as f64).collect::<Vec<_>>())
        };
        (Some(per(|d| d.host_waits)), Some(per(|d| d.dispatches)))
    }

    /// Creations and host traffic per frame once sizes are stable: medians over the frames
    /// after the first two (four with frames in flight, whose two slots each size their
    /// readback; the last frame alone when there are no more), when the backend counts them
    /// (docs/design.md §9.16).
    pub fn steady_counts(&self) -> Option<SteadyCounts> {
        let warm = if self.warm_frames == 0 {
            2
        } else {
            self.warm_frames
        };
        let frames = match self.device.len() {
            0 => return None,
            len if len <= warm => &self.device[len - 1..],
            _ => &self.device[warm..],
        };
        let per = |f: fn(&DeviceCounts) -> u64| {
            median(&frames.iter().map(|d| f(d) as f64).collect::<Vec<_>>())
        };
        Some(SteadyCounts {
            created_per_frame: CreatedPerFrame {
                bind_groups: per(|d| d.bind_groups),
                buffers: per(|d| d.buffers),
                query_sets: per(|d| d.query_sets),
                pipelines: per(|d| d.pipelines),
            },
            bytes_to_host_per_frame: per(|d| d.bytes_to_host),
            bytes_from_host_per_frame: per(|d| d.bytes_from_host),
            compute_passes_per_frame: per(|d| d.compute_passes),
        })
    }

    pub fn median_ms(&self) -> f64 {
        median(&self.frame_ms)
    }

    pub fn min_ms(&self) -> f64 {
        self.frame_ms.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn total_ms(&self) -> f64 {
        self.frame_ms.iter().sum()
    }

    fn mean_of(v: &[u64], count: usize) -> f64 {
        let k = count.clamp(1, v.len().max(1)).min(v.len());
        if k == 0 {
            return 0.0;
        }
        v[..k].iter().map(|&x| x as f64).sum::<f64>() / k as f64
    }

    pub fn tests_per_frame(&self, count_frames: usize) -> f64 {
        Self::mean_of(&self.frame_tests, count_frames)
    }

    pub fn pairs_per_frame(&self, count_frames: usize) -> f64 {
        Self::mean_of(&self.frame_pairs, count_frames)
    }

    /// Median milliseconds per stage (the host steps apart: [`Self::host_ms`]).
    pub fn stage_ms(&self) -> BTreeMap<String, f64> {
        self.stages
            .iter()
            .filter_map(|(k, (clock, v))| {
                let suffix = match clock {
                    Clock::Wall => "",
                    Clock::GpuTimestamp => " (gpu)",
                    Clock::Host => return None,
                };
                Some((format!("{k}{suffix}"), 1e3 * median(v)))
            })
            .collect()
    }

    /// Median milliseconds per host step of a GPU frame ([`Clock::Host`]), with `other`: the
    /// median of what the frame's wall time has beyond its steps (the caller's loop, the
    /// backend's own bookkeeping); `None` when no step was timed (CPU methods).
    pub fn host_ms(&self) -> Option<BTreeMap<String, f64>> {
        let steps: Vec<(&String, &Vec<f64>)> = self
            .stages
            .iter()
            .filter(|(_, (clock, _))| *clock == Clock::Host)
            .map(|(k, (_, v))| (k, v))
            .collect();
        if steps.is_empty() {
            return None;
        }
        let mut out: BTreeMap<String, f64> = steps
            .iter()
            .map(|(k, v)| ((*k).clone(), 1e3 * median(v)))
            .collect();
        // Frames whose every step was timed (the per-frame sums line up with the frames).
        let frames = self.frame_ms.len();
        if steps.iter().all(|(_, v)| v.len() == frames) {
            let other: Vec<f64> = (0..frames)
                .map(|f| {
                    let timed: f64 = steps.iter().map(|(_, v)| 1e3 * v[f]).sum();
                    (self.frame_ms[f] - timed).max(0.0)
                })
                .collect();
            out.insert("other".into(), median(&other));
        }
        Some(out)
    }
}

/// Runs `f` on a rayon pool of `threads` threads: every CPU method (and `cpu_device()` in the
/// rows) then uses that many, so a table can show the lead on one thread and on all.
pub fn with_threads<T: Send>(threads: u32, f: impl FnOnce() -> T + Send) -> Result<T> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads as usize)
        .build()
        .map_err(|e| Error::Config(format!("a pool of {threads} threads: {e}")))?;
    Ok(pool.install(f))
}

/// Median of a slice (0 when empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    }
}

/// Runs `bp` over `run.frames` frames of a copy of `scene`. With `verify_with`, the first and the
/// last frame's pairs are also compared with that reference method's pairs (what a method keeps
/// from frame to frame, its buffers and orders, is only exercised after the first); the
/// comparison returned is the first that failed, else the first frame's.
pub fn run_frames(
    bp: &mut dyn BroadPhase,
    scene: &Scene,
    run: FrameRun,
    mut verify_with: Option<&mut dyn BroadPhase>,
) -> Result<(Measurement, Option<Comparison>)> {
    if run.events && run.count_only {
        return Err(Error::Config(
            "frame events need the pairs: --events cannot go with --count-only".into(),
        ));
    }
    crate::run::check_frames(run.frames)?;
    let mut scene = scene.clone();
    let mut m = Measurement::default();
    let mut pairs: Vec<Pair> = Vec::new();
    let mut comparison = None;
    // Backends that compute events themselves (the GPU, on the device) report them; for the
    // others the pairs go through a tracker here.
    let own_events = run.events && bp.track_events(true)?;
    let mut tracker = (run.events && !own_events).then(EventTracker::new);
    if run.events && run.untimed > 0 {
        return Err(Error::Config(
            "untimed frames would count as events: none with --events".into(),
        ));
    }
    for _ in 0..run.untimed {
        crate::run::stop_if_interrupted()?;
        let out = (!run.count_only).then_some(&mut pairs);
        bp.find_pairs(&scene.spheres, out)?;
    }
    let last = run.frames.max(1) - 1;
    for frame in 0..=last {
        crate::run::stop_if_interrupted()?;
        let out = if run.count_only {
            None
        } else {
            Some(&mut pairs)
        };
        let before = bp.diagnostics().and_then(|d| d.device_counts());
        let t = Instant::now();
        let stats = bp.find_pairs(&scene.spheres, out)?;
        m.record(t, stats.tests, stats.pairs, &stats.stages);
        if stats.chosen.is_some() {
            m.chosen = stats.chosen.clone();
        }
        if let (Some(b), Some(a)) = (before, bp.diagnostics().and_then(|d| d.device_counts())) {
            m.device.push(a.since(b));
        }
        if (frame == 0 || frame == last)
            && let Some(reference) = verify_with.as_deref_mut()
        {
            let mut this = compare_with(reference, &scene, &mut pairs, run.count_only, bp)?;
            this.frame = frame;
            if comparison
                .as_ref()
                .is_none_or(|c: &Comparison| c.is_ok() && !this.is_ok())
            {
                comparison = Some(this);
            }
        }
        let events = match tracker.as_mut() {
            // Within the run's memory budget: a dense frame's copy and events are refused, not
            // an abort.
            Some(t) => Some(t.try_update(&pairs)?),
            None if own_events => Some(bp.take_events().ok_or_else(|| {
                Error::gpu(
                    sweepfan::GpuFailure::Inconsistent,
                    format!("{}: no frame events after frame {frame}", bp.name()),
                )
            })?),
            None => None,
        };
        if let Some(e) = events {
            if e.pairs_now() != stats.pairs {
                return Err(Error::gpu(
                    sweepfan::GpuFailure::Inconsistent,
                    format!(
                        "{}: frame {frame} has {} pairs but its events imply {}",
                        bp.name(),
                        stats.pairs,
                        e.pairs_now()
                    ),
                ));
            }
            m.events.push([e.found.len() as u64, e.lost.len() as u64]);
        }
        scene.step();
    }
    Ok((m, comparison))
}

/// Compares the candidate's pairs for the current frame with a reference method's.
fn compare_with(
    reference: &mut dyn BroadPhase,
    scene: &Scene,
    candidate_pairs: &mut [Pair],
    count_only: bool,
    candidate: &mut dyn BroadPhase,
) -> Result<Comparison> {
    if count_only {
        // Counting runs compare counts only: recount both.
        let a = reference.find_pairs(&scene.spheres, None)?;
        let b = candidate.find_pairs(&scene.spheres, None)?;
        return Ok(Comparison::of_counts(a.pairs, b.pairs));
    }
    let mut expected = Vec::new();
    reference.find_pairs(&scene.spheres, Some(&mut expected))?;
    canonicalize(&mut expected);
    canonicalize(candidate_pairs);
    Ok(compare_pairs(&scene.spheres, &expected, candidate_pairs))
}

/// Largest n for which brute force is the reference (above it: a fast method on that scene).
pub const BRUTE_FORCE_REFERENCE_MAX_N: usize = 20_000;

/// The CPU reference for verifying `method` on `backend` on `spheres`: brute force while it is
/// cheap; above [`BRUTE_FORCE_REFERENCE_MAX_N`] objects, the CPU method `auto`'s prices rank
/// cheapest on this scene (docs/design.md §2.12) other than `method` itself on the CPU, so that
/// no method is checked against itself and the check costs about what the method does (the
/// CPU grid on 40 boulders among 200,000 grains took 13 s where `x` takes 0.07 s, when it set
/// aside at most 32 giants). A GPU method
/// may be checked against the same method on the CPU: another implementation (the GPU grid at
/// 16M objects against the CPU grid: seconds, where sap takes minutes). Every reference is
/// itself checked against brute force by the tests. `method` is what runs: `auto` resolved
/// first ([`resolved_method`]).
pub fn reference_method(
    spheres: &[sweepfan::geom::sphere::Sphere],
    method: &str,
    backend: Backend,
) -> &'static str {
    if spheres.len() <= BRUTE_FORCE_REFERENCE_MAX_N {
        return "brute_force";
    }
    cpu_methods_by_price(spheres)
        .into_iter()
        .map(|m| m.name())
        .find(|&name| !(backend == Backend::Cpu && name == method))
        .unwrap_or("brute_force")
}

/// The CPU methods, cheapest first on `spheres` as `auto`'s prices rank them (docs/design.md
/// §2.12).
pub fn cpu_methods_by_price(spheres: &[sweepfan::geom::sphere::Sphere]) -> Vec<sweepfan::Method> {
    use sweepfan::broadphase::auto::{Costs, prices, survey};
    let mut priced = prices(&survey(spheres), &Costs::of(Backend::Cpu, false));
    priced.sort_by(|a, b| a.1.total_cmp(&b.1));
    priced.into_iter().map(|(m, _)| m).collect()
}

/// The method `name` runs on `spheres`: `auto`'s choice for them (the one its first frame
/// makes; docs/design.md §2.12), else `name` itself.
pub fn resolved_method<'a>(
    name: &'a str,
    spheres: &[sweepfan::geom::sphere::Sphere],
    backend: Backend,
    software: bool,
) -> &'a str {
    if name == registry::AUTO && !spheres.is_empty() {
        sweepfan::broadphase::auto::choose(spheres, backend, software)
            .method
            .name()
    } else {
        name
    }
}

/// Measures each (method, backend) on the scene; returns rows and whether all verified.
pub fn measure(
    scene: &Scene,
    methods: &[String],
    backends: &[Backend],
    run: FrameRun,
    verify: bool,
    progress: Option<&ProgressBar>,
    gpu: &mut LazyGpu,
) -> Result<(Vec<Row>, bool)> {
    // A scene file's size reaches here unchecked: refused before any method allocates for it
    // (docs/design.md §9.14).
    // The CPU's methods in parts where memory holds the scene but not a whole frame
    // (docs/design.md §2.10).
    let cpu_parts = if scene.is_empty() {
        None
    } else {
        crate::run::scene_size::check_run_size(scene.len(), backends, verify)?
    };
    let cpu = |name: &str| -> Result<Box<dyn BroadPhase + Send>> {
        let bp = registry::broad_phase(name, Backend::Cpu, None)?;
        Ok(match cpu_parts {
            Some(max) => Box::new(sweepfan::cpu::PartitionedCpu::new(bp, max)),
            None => bp,
        })
    };
    let mut rows = Vec::new();
    let mut all_ok = true;
    for &backend in backends {
        for name in methods {
            if let Some(p) = progress {
                p.set_message(format!(
                    "{} n={} {name} [{}]",
                    scene.name,
                    scene.len(),
                    backend.as_str()
                ));
            }
            let ctx = match backend {
                Backend::Gpu => Some(gpu.get()?),
                Backend::Cpu => None,
            };
            let software = ctx.as_ref().is_some_and(|c| c.is_software());
            let runs = resolved_method(name, &scene.spheres, backend, software);
            let reference_name = reference_method(&scene.spheres, runs, backend);
            let mut bp = match backend {
                Backend::Cpu => cpu(name)?,
                Backend::Gpu => registry::broad_phase(name, backend, ctx.as_ref())?,
            };
            let mut reference = if verify && !(name == reference_name && backend == Backend::Cpu) {
                Some(cpu(reference_name)?)
            } else {
                None
            };
            let (m, cmp) = run_frames(
                bp.as_mut(),
                scene,
                run,
                reference.as_deref_mut().map(|r| r as &mut dyn BroadPhase),
            )
            .map_err(|source| Error::Context {
                context: format!("{name} on {} (n = {})", backend.as_str(), scene.len()),
                source: Box::new(source),
            })?;
            let verified = cmp.as_ref().map(|c| c.is_ok());
            if let Some(c) = &cmp
                && !c.is_ok()
            {
                all_ok = false;
                eprintln!(
                    "MISMATCH {name} [{}] vs {reference_name}: {}",
                    backend.as_str(),
                    c.summary()
                );
            }
            let (device_bytes_per_object, device_traffic) =
                traffic_fields(bp.diagnostics().and_then(|d| {
                    d.device_traffic(
                        scene.len(),
                        m.tests_per_frame(run.count_frames),
                        m.pairs_per_frame(run.count_frames),
                        !run.count_only,
                    )
                }));
            let device = match backend {
                Backend::Cpu => cpu_device(),
                Backend::Gpu => gpu.device(),
            };
            let n = scene.len();
            rows.push(Row {
                verified: verified.or(if name == reference_name && verify {
                    Some(true)
                } else {
                    None
                }),
                // A count's check compares counts alone, and says so.
                verified_against: cmp.as_ref().map(|_| match run.count_only {
                    true => format!("{reference_name} (counts only)"),
                    false => reference_name.to_string(),
                }),
                near_touching_differences: cmp.as_ref().map(|c| c.near_touching.len()),
                gpu_bytes_per_object: bp.diagnostics().and_then(|d| d.resident_bytes_per_object()),
                device_bytes_per_object,
                device_traffic,
                parts: bp.diagnostics().and_then(|d| d.parts()),
                ..Row::measured(
                    &scene.name,
                    n,
                    name,
                    (backend, device),
                    &m,
                    run.count_frames,
                )
            });
            if let Some(p) = progress {
                p.inc(1);
            }
        }
    }
    fill_speedups(&mut rows);
    Ok((rows, all_ok))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepfan::broadphase::{BroadPhase, Stats};
    use sweepfan::cpu::BruteForce;
    use sweepfan::geom::sphere::Sphere;
    use sweepfan_scenes::{SceneKind, SceneParams};

    /// Brute force that loses one pair from its second call on: a method whose state kept
    /// between frames goes wrong after the first.
    struct ForgetsAfterFirst {
        inner: BruteForce,
        calls: usize,
    }

    impl BroadPhase for ForgetsAfterFirst {
        fn name(&self) -> &str {
            "forgets"
        }
        fn backend(&self) -> Backend {
            Backend::Cpu
        }
        fn find_pairs_validated(
            &mut self,
            spheres: &[Sphere],
            out: Option<&mut Vec<Pair>>,
        ) -> Result<Stats> {
            self.calls += 1;
            let mut pairs = Vec::new();
            let mut stats = self.inner.find_pairs_validated(spheres, Some(&mut pairs))?;
            if self.calls > 1 {
                pairs.pop();
                stats.pairs -= 1;
            }
            if let Some(out) = out {
                *out = pairs;
            }
            Ok(stats)
        }
    }

    #[test]
    fn the_last_frame_is_verified_too() {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(800, 3));
        let run = FrameRun::new;
        let mut reference = BruteForce::new();
        let mut good = BruteForce::new();
        let (_, c) = run_frames(&mut good, &scene, run(3), Some(&mut reference)).unwrap();
        let c = c.expect("compared");
        assert!(
            c.is_ok() && c.frame == 0 && c.reference_pairs > 0,
            "{}",
            c.summary()
        );

        let mut bad = ForgetsAfterFirst {
            inner: BruteForce::new(),
            calls: 0,
        };
        let (_, c) = run_frames(&mut bad, &scene, run(3), Some(&mut reference)).unwrap();
        let c = c.expect("compared");
        assert!(!c.is_ok(), "{}", c.summary());
        assert_eq!((c.frame, c.missing.len()), (2, 1), "{}", c.summary());
        assert!(c.summary().starts_with("frame 2: "), "{}", c.summary());

        // One frame: the first is the last, compared once.
        let mut bad = ForgetsAfterFirst {
            inner: BruteForce::new(),
            calls: 0,
        };
        let (_, c) = run_frames(&mut bad, &scene, run(1), Some(&mut reference)).unwrap();
        assert!(c.expect("compared").is_ok());

        // An untimed frame first: the instance's first call, neither timed nor compared (the
        // timed frame 0 is its second, which loses a pair).
        let mut bad = ForgetsAfterFirst {
            inner: BruteForce::new(),
            calls: 0,
        };
        let after_one = FrameRun {
            untimed: 1,
            ..run(2)
        };
        let (m, c) = run_frames(&mut bad, &scene, after_one, Some(&mut reference)).unwrap();
        assert_eq!((bad.calls, m.frame_ms.len()), (3, 2));
        let c = c.expect("compared");
        assert_eq!((c.frame, c.missing.len()), (0, 1), "{}", c.summary());
    }

    /// The reference is brute force while it is cheap; above that, a method other than the one
    /// under test on the CPU, and on the boulders scene with more boulders than the grid sets
    /// aside not the grid, which tests every pair there (13 s a frame where `x` takes 0.07 s
    /// with 40 boulders, before the grid took 256 giants).
    #[test]
    fn the_reference_is_fast_on_the_scene_and_never_the_method_itself() {
        let small = Scene::generate(SceneKind::Paper, &SceneParams::new(5000, 1));
        assert_eq!(
            reference_method(&small.spheres, "grid", Backend::Cpu),
            "brute_force"
        );
        let mut p = SceneParams::new(50_000, 1);
        p.boulders = sweepfan::geom::radii::GIANTS_MAX as usize + 44;
        p.radius = 5.0;
        let boulders = Scene::generate(SceneKind::Boulders, &p);
        for method in ["x", "sap", "grid", "xyz", "min_axis"] {
            let reference = reference_method(&boulders.spheres, method, Backend::Cpu);
            assert_ne!(reference, method, "{method}");
            assert_ne!(reference, "brute_force", "{method}");
            assert_ne!(
                reference, "grid",
                "{method}: the grid tests every pair here"
            );
        }
        // On the GPU, the same method on the CPU is another implementation.
        let paper = Scene::generate(SceneKind::Paper, &SceneParams::new(100_000, 1));
        let cpu_grid = reference_method(&paper.spheres, "grid", Backend::Cpu);
        assert_ne!(cpu_grid, "grid");
        assert_eq!(
            reference_method(&paper.spheres, "grid", Backend::Gpu),
            "grid"
        );
    }
}
