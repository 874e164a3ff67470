//! The stress loop: the density scene at doubling n, every step timed and verified against the
//! CPU reference, until `max_n`, a time budget, or the first size that does not fit.

use crate::run::bench::{FrameRun, run_frames};
use crate::run::gpu::LazyGpu;
use crate::run::row::{Row, cpu_device, traffic_fields};
use indicatif::ProgressBar;
use std::time::Instant;
use sweepfan::broadphase::{Backend, BroadPhase};
use sweepfan::error::{Error, Result};
use sweepfan::registry;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// What to stress.
#[derive(Clone, Debug)]
pub struct StressConfig {
    pub method: String,
    pub backend: Backend,
    pub start_n: usize,
    pub max_n: usize,
    /// Stop doubling once this many seconds have passed.
    pub budget_s: f64,
    /// Frames timed per step.
    pub frames: usize,
    pub volume_fraction: f32,
    pub seed: u64,
}

impl StressConfig {
    /// The sizes the loop runs, budget permitting: `start_n` doubling, then `max_n` itself when
    /// the doubling steps over it.
    pub fn sizes(&self) -> Vec<usize> {
        let mut sizes = Vec::new();
        let mut n = self.start_n.max(1);
        while n < self.max_n {
            sizes.push(n);
            n = n.saturating_mul(2).min(self.max_n);
        }
        sizes.push(self.max_n);
        sizes
    }

    /// Steps from `start_n` to `max_n` (see [`Self::sizes`]).
    pub fn steps(&self) -> u64 {
        self.sizes().len() as u64
    }

    /// Rejects settings that would verify nothing or run forever.
    pub fn check(&self) -> Result<()> {
        if self.start_n == 0 || self.max_n < self.start_n {
            return Err(Error::Config(format!(
                "need 0 < --start-n <= --max-n, got --start-n {} --max-n {}",
                self.start_n, self.max_n
            )));
        }
        if !(self.budget_s.is_finite() && self.budget_s > 0.0) {
            return Err(Error::Config(format!(
                "--budget-s must be a positive number of seconds, got {}",
                self.budget_s
            )));
        }
        if self.frames == 0 {
            return Err(Error::Config("--frames must be at least 1".into()));
        }
        // The rule of `run::scene_size::scene_params` (bench's), so that both refuse the same values.
        let max = sweepfan_scenes::MAX_VOLUME_FRACTION;
        if !(self.volume_fraction > 0.0 && self.volume_fraction < max) {
            return Err(Error::Config(format!(
                "--volume-fraction must be in (0, {max}), got {}",
                self.volume_fraction
            )));
        }
        Ok(())
    }
}

/// The method under test and its reference, opened and ready.
pub struct Stress {
    cfg: StressConfig,
    method: Box<dyn BroadPhase + Send>,
    reference: Box<dyn BroadPhase + Send>,
    /// The CPU method every step is checked against: grid, or sap when grid is under test on
    /// the CPU.
    pub reference_name: &'static str,
    /// What runs the method under test.
    pub device: String,
}

/// What a stress run found.
pub struct StressOutcome {
    pub rows: Vec<Row>,
    /// Every step's pairs matched the reference.
    pub all_verified: bool,
    /// Why the doubling stopped.
    pub stop_reason: String,
}

impl Stress {
    /// Opens the method (and the GPU when the backend is the GPU) and its reference.
    pub fn new(cfg: StressConfig, gpu: &mut LazyGpu) -> Result<Self> {
        cfg.check()?;
        let ctx = match cfg.backend {
            Backend::Gpu => Some(gpu.get()?),
            Backend::Cpu => None,
        };
        let reference_name = if cfg.method == "grid" && cfg.backend == Backend::Cpu {
            "sap"
        } else {
            "grid"
        };
        let method = registry::broad_phase(&cfg.method, cfg.backend, ctx.as_ref())?;
        let reference = registry::broad_phase(reference_name, Backend::Cpu, None)?;
        let device = match cfg.backend {
            Backend::Cpu => cpu_device(),
            Backend::Gpu => gpu.device(),
        };
        Ok(Self {
            cfg,
            method,
            reference,
            reference_name,
            device,
        })
    }

    /// Runs the doubling loop; `progress` gets one tick per step.
    pub fn run(mut self, progress: Option<&ProgressBar>) -> Result<StressOutcome> {
        let a = &self.cfg;
        let started = Instant::now();
        let mut rows = Vec::new();
        let mut all_verified = true;
        let mut stop_reason = format!("reached --max-n {}", a.max_n);
        for (step, n) in a.sizes().into_iter().enumerate() {
            // The first step always runs (a positive budget is checked up front).
            if step > 0 && started.elapsed().as_secs_f64() > a.budget_s {
                stop_reason = format!("time budget of {} s used", a.budget_s);
                break;
            }
            if let Some(p) = progress {
                p.set_message(format!("n = {n}"));
            }
            // Host memory for the scene, the method and the reference, checked before anything
            // of this size is allocated.
            match sweepfan::broadphase::limits::check_scene_size(n) {
                Err(Error::TooLarge { message: msg, .. }) if !rows.is_empty() => {
                    stop_reason = format!("n = {n} does not fit: {msg}");
                    break;
                }
                r => r?,
            }
            let mut p = SceneParams::new(n, a.seed);
            p.volume_fraction = a.volume_fraction;
            let scene = Scene::generate(SceneKind::Density, &p);
            let run = FrameRun::new(a.frames);
            let outcome = run_frames(
                self.method.as_mut(),
                &scene,
                run,
                Some(self.reference.as_mut() as &mut dyn BroadPhase),
            );
            let (m, cmp) = match outcome {
                Ok(x) => x,
                Err(Error::TooLarge { message: msg, .. })
                | Err(Error::Gpu { message: msg, .. })
                    if !rows.is_empty() =>
                {
                    stop_reason = format!("n = {n} does not fit: {msg}");
                    break;
                }
                Err(e) => return Err(e),
            };
            let cmp = cmp.ok_or_else(|| Error::Config("stress: no comparison made".into()))?;
            if !cmp.is_ok() {
                all_verified = false;
                eprintln!("MISMATCH at n = {n}: {}", cmp.summary());
            }
            let pairs = m.pairs_per_frame(run.count_frames);
            let (device_bytes_per_object, device_traffic) =
                traffic_fields(self.method.diagnostics().and_then(|d| {
                    d.device_traffic(n, m.tests_per_frame(run.count_frames), pairs, true)
                }));
            let measured = (a.backend, self.device.clone());
            rows.push(Row {
                verified: Some(cmp.is_ok()),
                verified_against: Some(self.reference_name.to_string()),
                near_touching_differences: Some(cmp.near_touching.len()),
                gpu_bytes_per_object: self
                    .method
                    .diagnostics()
                    .and_then(|d| d.resident_bytes_per_object()),
                // A model of the host <-> device traffic per frame, so labelled: the spheres up
                // (16 B each), the pairs down (8 B each). The bytes measured (the row's steady
                // counts) also hold the totals, timestamps and plans: 25.2 B an object where
                // this says 16.3 at n = 1,000.
                host_bytes_per_object: (a.backend == Backend::Gpu)
                    .then(|| (16.0 * n as f64 + 8.0 * pairs) / n as f64),
                device_bytes_per_object,
                device_traffic,
                events: None,
                parts: self.method.diagnostics().and_then(|d| d.parts()),
                chosen: None,
                ..Row::measured(&scene.name, n, &a.method, measured, &m, run.count_frames)
            });
            if let Some(p) = progress {
                p.inc(1);
            }
        }
        Ok(StressOutcome {
            rows,
            all_verified,
            stop_reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(start_n: usize, max_n: usize, budget_s: f64) -> StressConfig {
        StressConfig {
            method: "grid".into(),
            backend: Backend::Cpu,
            start_n,
            max_n,
            budget_s,
            frames: 1,
            volume_fraction: 0.01,
            seed: 1,
        }
    }

    #[test]
    fn sizes_double_and_end_on_max_n() {
        assert_eq!(cfg(65_536, 4_000_000, 1.0).sizes().last(), Some(&4_000_000));
        assert_eq!(cfg(1000, 5000, 1.0).sizes(), vec![1000, 2000, 4000, 5000]);
        assert_eq!(cfg(1000, 4000, 1.0).sizes(), vec![1000, 2000, 4000]);
        assert_eq!(cfg(7, 7, 1.0).sizes(), vec![7]);
        assert_eq!(cfg(7, 7, 1.0).steps(), 1);
    }

    #[test]
    fn budgets_that_verify_nothing_are_refused() {
        for b in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = cfg(10, 20, b).check().unwrap_err().to_string();
            assert!(e.contains("--budget-s"), "{b}: {e}");
        }
        assert!(cfg(10, 20, 0.5).check().is_ok());
        assert!(cfg(0, 20, 1.0).check().is_err());
        assert!(cfg(30, 20, 1.0).check().is_err());
        let mut c = cfg(10, 20, 1.0);
        c.frames = 0;
        assert!(c.check().unwrap_err().to_string().contains("--frames"));
    }
}
