//! The generalised sector accuracy experiment (`reproduce sector --pose free`, docs/design.md
//! §5.8): the thesis's protocol (100^3 grid, 100-step reference, accuracy / over / under) for
//! any body in any pose, on the CPU or the GPU, plus what each proxy costs per point.

use super::SectorBackend;
use super::accuracy::{RunScores, check_rotations, mean_scores};
use glam::{DVec3, Vec3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;
pub use sweepfan::cpu::pose_histograms as cpu_histograms;
use sweepfan::error::Result;
use sweepfan::geom::sector::body::RotatingBody;
use sweepfan::geom::sector::classify::{GRID_POINTS, Histogram, REFERENCE_STEPS};
use sweepfan::geom::sector::free_classify::{FreeRotation, METHODS, METHODS_VS_EXACT, bits};
use sweepfan::geom::sector::general::in_local_sector;
use sweepfan::gpu::FreeExperimentGpu;
use sweepfan::gpu::GpuContext;
use sweepfan_scenes::free_bodies::{BodyKind, free_rotations_rng, random_free_rotation};
use sweepfan_scenes::random::vec3_in;

/// What one point test of a method costs on this CPU (one thread), over points drawn in the
/// conservative sector's bound of the first rotations (for `sector_vs_body` and
/// `sector_vs_sector`: one whole test).
#[derive(Clone, Debug, Serialize)]
pub struct MethodCost {
    /// Sector tests per point (the union's pieces; 1 for the conservative sector).
    pub sector_tests_per_point: f64,
    pub ns_per_point: f64,
}

/// The experiment's result for one body kind.
#[derive(Clone, Debug, Serialize)]
pub struct FreeAccuracyReport {
    pub pose: &'static str,
    pub body: BodyKind,
    pub backend: SectorBackend,
    pub device: String,
    /// The thesis's sector is defined for its own pose only (P - O along Y', the box's Wx
    /// ignored): absent from `methods` here.
    #[serde(flatten)]
    pub scores: RunScores,
    /// Mean sub-pieces per rotation (octants of the body's box that meet its extent).
    pub pieces_per_rotation: f64,
    /// CPU cost per point test, with accuracy this is the accuracy per unit of cost.
    pub cost: BTreeMap<String, MethodCost>,
    /// Mean time to build one rotation's constants (frame, extents, conservative sector,
    /// pieces, quadrics, poses) on one CPU thread, microseconds.
    pub construction_us_per_rotation: f64,
    /// Wall time of the classification (all rotations, 10^6 points each) on `device`.
    pub classify_seconds: f64,
    /// "cpu", "gpu", or "software" (a CPU-type adapter such as lavapipe: not a GPU time).
    pub device_kind: String,
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct FreeOptions {
    pub body: BodyKind,
    pub rotations: usize,
    pub seed: u64,
    pub backend: SectorBackend,
}

/// Scores from per-rotation histograms (CPU or GPU); `pieces` = the rotations' pieces in all,
/// `sample` = the first rotations (the costs are measured on them).
pub fn free_report(
    opts: &FreeOptions,
    hists: &[Histogram],
    pieces: u64,
    sample: (&[RotatingBody], &[FreeRotation]),
    run: RunFacts,
) -> FreeAccuracyReport {
    FreeAccuracyReport {
        pose: "free",
        body: opts.body,
        backend: opts.backend,
        device: run.device,
        scores: RunScores {
            rotations: hists.len() as u64,
            seed: opts.seed,
            grid_points_per_rotation: GRID_POINTS as u64,
            reference_steps: REFERENCE_STEPS,
            methods: mean_scores(hists.iter(), bits::REFERENCE, &METHODS),
            methods_vs_exact: mean_scores(hists.iter(), bits::EXACT_SWEEP, &METHODS_VS_EXACT),
        },
        pieces_per_rotation: pieces as f64 / hists.len().max(1) as f64,
        cost: costs(sample.1, sample.0),
        construction_us_per_rotation: run.construction_us_per_rotation,
        classify_seconds: run.classify_seconds,
        device_kind: run.device_kind,
    }
}

/// Where and how fast a run went.
#[derive(Clone, Debug)]
pub struct RunFacts {
    pub device: String,
    pub device_kind: String,
    pub construction_us_per_rotation: f64,
    pub classify_seconds: f64,
}

/// Per-point CPU cost of each exact-or-enclosing test, over 20,000 points in the gate's box
/// of each of the first 20 rotations; and per test, the sector against a whole body and
/// against another sector (`bodies_sample`: the first rotations).
fn costs(
    rotations: &[FreeRotation],
    bodies_sample: &[RotatingBody],
) -> BTreeMap<String, MethodCost> {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC057);
    let sample: Vec<(&FreeRotation, Vec<Vec3>)> = rotations
        .iter()
        .take(20)
        .map(|r| {
            let p = &r.params;
            let (c, rad, h) = (Vec3::from_slice(&p.bound), p.bound[3], p.bound_half[0]);
            let reach = Vec3::splat(rad + h);
            let pts = (0..20_000)
                .map(|_| c + vec3_in(&mut rng, -1.0..=1.0) * reach)
                .collect();
            (r, pts)
        })
        .collect();
    let points: usize = sample.iter().map(|(_, p)| p.len()).sum();
    let time = |f: &dyn Fn(&FreeRotation, Vec3) -> bool| {
        let start = Instant::now();
        let mut hits = 0usize;
        for (r, pts) in &sample {
            hits += pts.iter().filter(|p| f(r, **p)).count();
        }
        std::hint::black_box(hits);
        start.elapsed().as_secs_f64() * 1e9 / points.max(1) as f64
    };
    let local = |r: &FreeRotation, p: Vec3| {
        let q = p - Vec3::from_slice(&r.params.origin);
        (
            q.dot(Vec3::from_slice(&r.params.e1)),
            q.dot(Vec3::from_slice(&r.params.e2)),
            q.dot(Vec3::from_slice(&r.params.axis)),
        )
    };
    let pieces = sample
        .iter()
        .map(|(r, _)| r.params.counts[3] as f64)
        .sum::<f64>()
        / sample.len().max(1) as f64;
    let mut out = BTreeMap::new();
    let mut cost = |name: &str, sector_tests_per_point: f64, ns_per_point: f64| {
        let entry = MethodCost {
            sector_tests_per_point,
            ns_per_point,
        };
        out.insert(name.to_string(), entry);
    };
    cost(
        "conservative_sector",
        1.0,
        time(&|r, p| {
            let (x, y, z) = local(r, p);
            in_local_sector(&r.params.conservative, x, y, z)
        }),
    );
    cost(
        "piece_union",
        pieces,
        time(&|r, p| {
            let (x, y, z) = local(r, p);
            r.params.pieces[..r.params.counts[3] as usize]
                .iter()
                .any(|s| in_local_sector(s, x, y, z))
        }),
    );
    // Whole-body tests (docs/design.md §5.8): each rotation's conservative sector against the
    // next rotation's body at its start pose, and against the next rotation's sector.
    let bodies: Vec<(sweepfan::geom::sector::Sector, &RotatingBody)> = bodies_sample
        .iter()
        .map(|b| (b.conservative_sector(), b))
        .collect();
    // With one rotation there is no pair to time: no entry (the report prints "-") rather than
    // the time of an empty loop.
    let pairs = bodies.len().saturating_sub(1) as f64;
    let time_pairs = |f: &dyn Fn(usize) -> bool| {
        let start = Instant::now();
        let mut yes = 0usize;
        for _ in 0..50 {
            for i in 0..bodies.len().saturating_sub(1) {
                yes += f(i) as usize;
            }
        }
        std::hint::black_box(yes);
        start.elapsed().as_secs_f64() * 1e9 / (50.0 * pairs)
    };
    if pairs > 0.0 {
        cost(
            "sector_vs_body",
            0.0,
            time_pairs(&|i| bodies[i].0.overlaps_convex(&bodies[i + 1].1.body)),
        );
        cost(
            "sector_vs_sector",
            0.0,
            time_pairs(&|i| bodies[i].0.overlaps_sector_conservative(&bodies[i + 1].0)),
        );
    }
    cost(
        "exact_sweep",
        0.0,
        time(&|r, p| {
            let (x, y, z) = local(r, p);
            r.exact(DVec3::new(x as f64, y as f64, z as f64))
        }),
    );
    out
}

/// Runs the experiment: `count` random rotations of the body on the chosen backend.
pub fn run_free(
    opts: &FreeOptions,
    ctx: Option<&GpuContext>,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<FreeAccuracyReport> {
    check_rotations(opts.rotations)?;
    let mut gpu = match (opts.backend, ctx) {
        (SectorBackend::Gpu, Some(c)) => Some((c, FreeExperimentGpu::new(c)?)),
        (SectorBackend::Gpu, None) => {
            return Err(sweepfan::error::Error::Config(
                "--backend gpu needs a GPU adapter".into(),
            ));
        }
        (SectorBackend::Cpu, _) => None,
    };
    // Rotations are drawn, prepared and classified a chunk at a time: only their histograms
    // (256 bytes each) stay, as `check_rotations` counted.
    let mut rng = free_rotations_rng(opts.seed, opts.body);
    let mut hists = Vec::with_capacity(opts.rotations);
    let (mut pieces, mut build_seconds, mut classify_seconds) = (0u64, 0.0, 0.0);
    let mut sample: Option<(Vec<RotatingBody>, Vec<FreeRotation>)> = None;
    let mut done = 0;
    while done < opts.rotations {
        let len = CHUNK.min(opts.rotations - done);
        let bodies: Vec<RotatingBody> = (0..len)
            .map(|_| random_free_rotation(&mut rng, opts.body))
            .collect();
        let start = Instant::now();
        let prepared = sweepfan::geom::sector::free_classify::free_rotations(&bodies)?;
        build_seconds += start.elapsed().as_secs_f64();
        pieces += prepared
            .iter()
            .map(|r| r.params.counts[3] as u64)
            .sum::<u64>();
        let start = Instant::now();
        match &mut gpu {
            Some((c, g)) => hists.extend(g.histograms(c, &prepared, progress)?),
            None => hists.extend(cpu_histograms(&prepared, progress)?),
        }
        classify_seconds += start.elapsed().as_secs_f64();
        if sample.is_none() {
            let keep = len.min(COST_SAMPLE);
            sample = Some((bodies[..keep].to_vec(), prepared[..keep].to_vec()));
        }
        done += len;
    }
    let (device, device_kind) = match &gpu {
        Some((c, _)) => (
            crate::run::gpu::device_label(c),
            if c.info().device_type == wgpu::DeviceType::Cpu {
                "software"
            } else {
                "gpu"
            },
        ),
        None => (
            format!("CPU, {} threads (rayon)", rayon::current_num_threads()),
            "cpu",
        ),
    };
    let run = RunFacts {
        device,
        device_kind: device_kind.into(),
        construction_us_per_rotation: build_seconds * 1e6 / opts.rotations.max(1) as f64,
        classify_seconds,
    };
    let (bodies, prepared) = sample.unwrap_or_default();
    Ok(free_report(opts, &hists, pieces, (&bodies, &prepared), run))
}

/// Rotations drawn, prepared and classified at a time.
const CHUNK: usize = 4096;
/// Rotations the costs are measured on.
const COST_SAMPLE: usize = 21;

/// [`run_free`], opening the adapter (index or name part, as `sweepfan --adapter`) for the GPU
/// backend; the CPU backend opens none.
pub fn run_free_with_adapter(
    opts: &FreeOptions,
    adapter: Option<String>,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<FreeAccuracyReport> {
    check_rotations(opts.rotations)?;
    let ctx = match opts.backend {
        SectorBackend::Gpu => Some(GpuContext::new(&crate::run::gpu::with_env(
            sweepfan::gpu::GpuOptions {
                adapter,
                ..Default::default()
            },
        )?)?),
        SectorBackend::Cpu => None,
    };
    run_free(opts, ctx.as_ref(), progress)
}
