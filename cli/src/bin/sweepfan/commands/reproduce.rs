//! `sweepfan reproduce broadphase|sector`: a paper's experiments, our numbers beside theirs.

use crate::args::values;
use crate::args::{BackendChoice, BodyChoice, Outputs, progress_bar};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use sweepfan_cli::experiments::broadphase_paper::reproduce;
use sweepfan_cli::experiments::sector::free::{FreeOptions, run_free_with_adapter};
use sweepfan_cli::experiments::sector::{SectorBackend, SectorOptions, run};
use sweepfan_cli::report::paper::{render, write_plots};
use sweepfan_cli::report::rows::write_json_value;
use sweepfan_cli::run::bench::FrameRun;
use sweepfan_cli::run::gpu::LazyGpu;

#[derive(Args)]
pub struct BroadphaseArgs {
    /// Frames timed per (method, n) (the paper: 100).
    #[arg(long, default_value_t = 100, value_parser = values::count)]
    pub frames_time: usize,
    /// Frames averaged for the test counts (the paper: 10).
    #[arg(long, default_value_t = 10, value_parser = values::count)]
    pub frames_count: usize,
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
    /// Object counts, comma- or space-separated (the paper's by default).
    #[arg(
        long,
        num_args = 1..,
        value_delimiter = ',',
        default_value = "50,200,500,1000,3000,5000",
        value_parser = values::objects,
    )]
    pub n: Vec<usize>,
    /// Write SVG plots (time vs n, tests vs n, time relative to brute force) into this directory.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    #[command(flatten)]
    pub out: Outputs,
}

#[derive(Args)]
pub struct SectorArgs {
    /// Random rotations scored (the thesis: 100000; each classifies 10^6 grid points).
    #[arg(
        long,
        default_value_t = sweepfan_cli::experiments::sector::DEFAULT_ROTATIONS,
        value_parser = values::count,
    )]
    pub rotations: usize,
    #[arg(long, default_value_t = sweepfan_cli::experiments::sector::accuracy::DEFAULT_SEED, value_parser = values::seed)]
    pub seed: u64,
    /// Where the accuracy experiment runs (gpu needs an adapter).
    #[arg(long, value_enum, default_value_t = SectorBackendChoice::Cpu)]
    pub backend: SectorBackendChoice,
    /// Write the report as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write SVG plots of the per-angle and per-shape bins into this directory.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Timed runs per speed-table row (the thesis: 10000; thesis pose only) [default: 20].
    #[arg(long, value_parser = values::count)]
    pub speed_runs: Option<usize>,
    /// The thesis's pose (P - O along the box's Y', the rotation axis along its Z'), or any
    /// pose of any body (docs/design.md §5.8).
    #[arg(long, value_enum, default_value_t = PoseChoice::Thesis)]
    pub pose: PoseChoice,
    /// The rotating body (the thesis's pose takes only a box).
    #[arg(long, value_enum, default_value_t = BodyChoice::Box)]
    pub body: BodyChoice,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SectorBackendChoice {
    Cpu,
    Gpu,
}

impl SectorBackendChoice {
    fn backend(self) -> SectorBackend {
        match self {
            SectorBackendChoice::Cpu => SectorBackend::Cpu,
            SectorBackendChoice::Gpu => SectorBackend::Gpu,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PoseChoice {
    Thesis,
    Free,
}

pub fn broadphase(a: BroadphaseArgs, gpu: &mut LazyGpu) -> Result<bool> {
    // `--json -` takes standard output: the report then goes to stderr.
    let taken = a.out.stdout_taken();
    crate::args::check_outputs(
        &[
            ("--json", a.out.json.as_deref()),
            ("--csv", a.out.csv.as_deref()),
        ],
        &[("--plots", a.plots.as_deref())],
        &[],
    )?;
    let backends = a.backend.backends();
    let run = FrameRun {
        frames: a.frames_time.max(a.frames_count),
        count_frames: a.frames_count,
        count_only: false,
        events: false,
        untimed: 0,
    };
    let methods = sweepfan::Method::ALL.len();
    let bar = progress_bar(
        (a.n.iter().collect::<std::collections::BTreeSet<_>>().len() * methods * backends.len())
            as u64,
    );
    let r = reproduce(&a.n, a.seed, &backends, run, Some(&bar), gpu)?;
    bar.finish_and_clear();
    say!(
        taken,
        "Serialization paper (seeds 000/002), paper box, {} frames timed, counts = mean of {} frames, seed {}.\n\
         Times are ours on this machine (median ms/frame x 100); the paper's ran on a Pentium 4. \
         Compare the 'vs brute' ratios.\n",
        run.frames,
        run.count_frames,
        a.seed
    );
    say!(taken, "{}", render(&r.comparison));
    // Data first: a plot that fails cannot lose the JSON and CSV.
    a.out.write(
        &r.rows,
        Some(serde_json::json!({ "paper_comparison": r.comparison })),
    )?;
    if let Some(dir) = &a.plots {
        write_plots(dir, &r.rows)?;
    }
    Ok(r.all_verified)
}

pub fn sector(a: SectorArgs, adapter: Option<String>) -> Result<bool> {
    // `--json -` takes standard output: the report then goes to stderr.
    let taken = crate::args::takes_stdout(a.json.as_deref());
    crate::args::check_outputs(
        &[("--json", a.json.as_deref())],
        &[("--plots", a.plots.as_deref())],
        &[],
    )?;
    if a.pose == PoseChoice::Free {
        return sector_free(a, adapter);
    }
    if a.body != BodyChoice::Box {
        anyhow::bail!(
            "--body {}: the thesis's pose is defined for a box only; use --pose free",
            a.body.kind().name()
        );
    }
    let opts = SectorOptions {
        rotations: a.rotations,
        seed: a.seed,
        backend: a.backend.backend(),
        speed_runs: a
            .speed_runs
            .unwrap_or(sweepfan_cli::experiments::sector::DEFAULT_SPEED_RUNS),
        adapter,
    };
    let bar = progress_bar(a.rotations as u64);
    bar.set_message("rotations (then the speed tables)");
    let report = run(&opts, Some(&|n| bar.inc(n)))?;
    bar.finish_and_clear();
    say!(taken, "{}", report.render());
    if let Some(path) = &a.json {
        write_json_value(path, &report.to_json()?)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(dir) = &a.plots {
        for p in report.write_plots(dir)? {
            eprintln!("wrote {}", p.display());
        }
    }
    let failures = report.failures();
    for f in &failures {
        eprintln!("FAILED: {f}");
    }
    Ok(failures.is_empty())
}

/// `reproduce sector --pose free`: the generalised accuracy experiment for one body kind.
fn sector_free(a: SectorArgs, adapter: Option<String>) -> Result<bool> {
    // `--json -` takes standard output: the report then goes to stderr.
    let taken = crate::args::takes_stdout(a.json.as_deref());
    if a.plots.is_some() {
        anyhow::bail!("--plots: the free pose has no per-angle or per-shape bins to plot");
    }
    if a.speed_runs.is_some() {
        anyhow::bail!(
            "--speed-runs: the free pose has no speed tables (the thesis pose's); leave \
             --speed-runs out"
        );
    }
    if adapter.is_some() && a.backend == SectorBackendChoice::Cpu {
        anyhow::bail!(
            "--adapter: the free pose on --backend cpu opens no GPU (it has no speed tables), so \
             --adapter would be ignored; add --backend gpu, or leave --adapter out"
        );
    }
    let opts = FreeOptions {
        body: a.body.kind(),
        rotations: a.rotations,
        seed: a.seed,
        backend: a.backend.backend(),
    };
    let bar = progress_bar(a.rotations as u64);
    bar.set_message(format!("{} rotations", a.body.kind().name()));
    let report = run_free_with_adapter(&opts, adapter, Some(&|n| bar.inc(n)))?;
    bar.finish_and_clear();
    say!(taken, "{}", report.render());
    if let Some(path) = &a.json {
        write_json_value(path, &serde_json::to_value(&report)?)?;
        eprintln!("wrote {}", path.display());
    }
    let failures = report.failures();
    for f in &failures {
        eprintln!("FAILED: {f}");
    }
    Ok(failures.is_empty())
}
