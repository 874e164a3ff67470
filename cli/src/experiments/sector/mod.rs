//! The sector ("fan") experiments: accuracy (tables 3.1), speed (tables 3.2-3.6), and the
//! rotating scene (docs/design.md, sector CCD).

pub mod accuracy;
pub mod free;
pub mod rotating;
pub mod speed;

use accuracy::{GRID_POINTS, MethodScore, ROUNDING_BAND, SectorAccuracyReport, run_gpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use speed::{SpeedConfig, SpeedReport, Timing, run_speed_tables};
use std::time::Instant;
use sweepfan::cpu::{SphereColumns, sector_sphere_flags_parallel};
use sweepfan::error::{Error, Result};
use sweepfan::geom::sector::Sector;
use sweepfan::geom::sphere::Sphere;
use sweepfan::gpu::SectorSphereGpu;
use sweepfan::gpu::{GpuContext, GpuOptions};
use sweepfan_scenes::random::vec3_in;

/// The thesis scored 100,000 rotations; the default is a run of minutes on a CPU.
pub const DEFAULT_ROTATIONS: usize = 2000;
/// Timed runs per speed-table row (the thesis: 10,000).
pub const DEFAULT_SPEED_RUNS: usize = 20;

/// Host bytes per timed run of the speed tables, at most: its times (one row's, the batched
/// rows' two, the GPU row's) and the GPU row's rotation and sector.
const BYTES_PER_SPEED_RUN: u64 = (4 * 8
    + std::mem::size_of::<sweepfan::geom::sector::RotatingBox>()
    + std::mem::size_of::<Sector>()) as u64;

/// Where the accuracy experiment runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SectorBackend {
    Cpu,
    Gpu,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct SectorOptions {
    pub rotations: usize,
    pub seed: u64,
    pub backend: SectorBackend,
    pub speed_runs: usize,
    /// GPU adapter (index or name substring), as `sweepfan --adapter`.
    pub adapter: Option<String>,
}

impl Default for SectorOptions {
    fn default() -> Self {
        Self {
            rotations: DEFAULT_ROTATIONS,
            seed: accuracy::DEFAULT_SEED,
            backend: SectorBackend::Cpu,
            speed_runs: DEFAULT_SPEED_RUNS,
            adapter: None,
        }
    }
}

/// Batched sector-sphere throughput on one device: each run tests one sector against every
/// sphere of the speed tables' CCD set.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputRow {
    pub device: String,
    /// "cpu", "gpu", or "software" (a CPU-type adapter such as lavapipe: not a GPU time).
    pub kind: String,
    pub tests_per_run: usize,
    pub ours: Timing,
    pub tests_per_second: f64,
    /// Pairs whose answer differs from the CPU's beyond a rounding tie (|sd - r| >= 1e-4).
    pub disagreements: u64,
}

/// Everything `reproduce sector` measured.
#[derive(Clone, Debug, Serialize)]
pub struct SectorReproduction {
    pub backend: SectorBackend,
    pub adapter: Option<String>,
    pub accuracy: SectorAccuracyReport,
    pub speed: SpeedReport,
    pub throughput: Vec<ThroughputRow>,
    /// Why the GPU throughput row is absent, when it is.
    pub gpu_throughput_note: Option<String>,
}

/// Runs the accuracy experiment (calling `progress` with rotations done), then the speed tables
/// and the throughput rows. `--backend gpu` without an adapter is an error; with the CPU backend
/// the GPU throughput is measured when an adapter opens, and skipped with a note otherwise.
pub fn run(
    opts: &SectorOptions,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<SectorReproduction> {
    if opts.speed_runs == 0 {
        return Err(Error::Config("--speed-runs must be at least 1".into()));
    }
    // Sizes from flags are checked before anything is allocated, and before a GPU context
    // opens (docs/design.md §9.14).
    accuracy::check_rotations(opts.rotations)?;
    crate::run::check_count_fits(
        &format!("--speed-runs {}", opts.speed_runs),
        opts.speed_runs,
        BYTES_PER_SPEED_RUN,
        |fit| format!("use fewer --speed-runs (about {fit} fit; the thesis timed 10000)"),
    )?;
    let gpu_options = crate::run::gpu::with_env(GpuOptions {
        adapter: opts.adapter.clone(),
        ..Default::default()
    })?;
    let (ctx, gpu_note) = match opts.backend {
        // An adapter named (`--adapter`) must open, as in every other command.
        SectorBackend::Gpu => (Some(GpuContext::new(&gpu_options)?), None),
        // So must the adapter a run is told to be on (`SWEEPFAN_EXPECT_ADAPTER`, §9.5).
        SectorBackend::Cpu if opts.adapter.is_some() || gpu_options.expect_adapter.is_some() => {
            (Some(GpuContext::new(&gpu_options)?), None)
        }
        SectorBackend::Cpu => match GpuContext::new(&gpu_options) {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(format!("GPU throughput not measured: {e}"))),
        },
    };
    let accuracy = match (opts.backend, &ctx) {
        (SectorBackend::Gpu, Some(c)) => run_gpu(c, opts.rotations, opts.seed, progress)?,
        _ => accuracy::run_cpu(opts.rotations, opts.seed, progress)?,
    };
    let cfg = SpeedConfig {
        runs: opts.speed_runs,
        seed: opts.seed,
        ..SpeedConfig::default()
    };
    let speed = run_speed_tables(&cfg)?;
    let b = &speed.batched_sector_sphere;
    let mut throughput = vec![ThroughputRow {
        device: format!("CPU, {} threads (rayon)", b.threads),
        kind: "cpu".into(),
        tests_per_run: b.spheres,
        ours: b.ours,
        tests_per_second: b.spheres as f64 / (b.ours.mean_ms * 1e-3).max(1e-12),
        disagreements: 0,
    }];
    if let Some(c) = &ctx {
        throughput.push(gpu_throughput(c, &cfg)?);
    }
    Ok(SectorReproduction {
        backend: opts.backend,
        adapter: ctx.as_ref().map(crate::run::gpu::device_label),
        accuracy,
        speed,
        throughput,
        gpu_throughput_note: gpu_note,
    })
}

/// The CPU batched row's workload on the GPU: per run, one experiment sector against the same
/// number of random spheres; wall time of upload, dispatch and read-back. Every answer is
/// checked against the CPU's exact test.
fn gpu_throughput(ctx: &GpuContext, cfg: &SpeedConfig) -> Result<ThroughputRow> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5EC7);
    let spheres: Vec<Sphere> = (0..cfg.ccd_spheres)
        .map(|_| {
            let c = vec3_in(&mut rng, -50.0..50.0);
            Sphere::new(c, rng.random_range(0.5..3.0))
        })
        .collect();
    let sectors: Vec<Sector> = accuracy::random_rotations(cfg.runs, cfg.seed)
        .iter()
        .map(|b| b.sector())
        .collect();
    let columns = SphereColumns::from_spheres(&spheres);
    let mut gpu = SectorSphereGpu::new(ctx)?;
    let mut pairs: Vec<[u32; 2]> = Vec::with_capacity(spheres.len());
    let (mut runs_ms, mut disagreements) = (Vec::with_capacity(cfg.runs), 0u64);
    let mut cpu_flags = Vec::new();
    for (k, sector) in sectors.iter().enumerate() {
        pairs.clear();
        pairs.extend((0..spheres.len() as u32).map(|j| [k as u32, j]));
        let start = Instant::now();
        let flags = gpu.test_pairs(ctx, &sectors, &spheres, &pairs)?;
        runs_ms.push(start.elapsed().as_secs_f64() * 1e3);
        sector_sphere_flags_parallel(sector, &columns, &mut cpu_flags);
        for ((g, c), s) in flags.iter().zip(&cpu_flags).zip(&spheres) {
            if (*g != 0) != (*c != 0) && (sector.signed_distance(s.center) - s.radius).abs() >= 1e-4
            {
                disagreements += 1;
            }
        }
    }
    let ours = Timing::from_runs(&runs_ms);
    let software = ctx.info().device_type == wgpu::DeviceType::Cpu;
    Ok(ThroughputRow {
        device: crate::run::gpu::device_label(ctx),
        kind: if software { "software" } else { "gpu" }.into(),
        tests_per_run: spheres.len(),
        ours,
        tests_per_second: spheres.len() as f64 / (ours.mean_ms * 1e-3).max(1e-12),
        disagreements,
    })
}

/// Most points an enclosing method may miss in `score` and still pass: the experiment's
/// rounding band ([`ROUNDING_BAND`]) of the points classified in the scored rotations.
pub fn allowed_misses(score: &MethodScore) -> u64 {
    (ROUNDING_BAND * score.rotations as f64 * GRID_POINTS as f64).floor() as u64
}

/// `conservative_sector` or `exact_sweep` missing reference points, or `conservative_sector`
/// missing exact-sweep points, beyond [`allowed_misses`]: both enclose their truth in exact
/// arithmetic, so only points within rounding of a face may fall out.
pub fn enclosure_failures(accuracy: &SectorAccuracyReport) -> Vec<String> {
    let checks = [
        (
            "vs reference",
            "conservative_sector",
            &accuracy.scores.methods,
        ),
        ("vs reference", "exact_sweep", &accuracy.scores.methods),
        (
            "vs exact sweep",
            "conservative_sector",
            &accuracy.scores.methods_vs_exact,
        ),
    ];
    let mut out = Vec::new();
    for (truth, name, table) in checks {
        match table.get(name) {
            Some(s) if s.under_points > allowed_misses(s) => out.push(format!(
                "{name} {truth}: {} missed points, more than the rounding band's {}",
                s.under_points,
                allowed_misses(s)
            )),
            Some(_) => {}
            None => out.push(format!("{name} {truth}: not scored")),
        }
    }
    out
}
