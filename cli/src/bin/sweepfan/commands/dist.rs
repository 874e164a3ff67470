//! `sweepfan dist`: the broad phase of one scene across MPI ranks (run under `mpirun`; built
//! with `--features mpi`). Each rank loads its share, owns a slab of space and finds the pairs
//! with an object of its own (docs/design.md §2.11).

use crate::args::values::{self, SceneOption, ignored_by_scene, method_for_shape};
use crate::args::{BackendArg, SceneArg, Shape};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan_scenes::SceneKind;

#[derive(Args)]
pub struct DistArgs {
    /// Generated scene: each rank makes its index range of the objects [default: paper].
    #[arg(long, value_enum, conflicts_with = "scene_file")]
    pub scene: Option<SceneArg>,
    /// CSV scene file (header x,y,z,r): each rank reads its byte range.
    #[arg(long)]
    pub scene_file: Option<PathBuf>,
    /// Objects of a generated scene (across the ranks: up to 2^48, each rank's share and its
    /// ghosts under 2^32).
    #[arg(
        long,
        default_value_t = 100_000,
        value_parser = values::global_objects,
        conflicts_with = "scene_file",
    )]
    pub n: usize,
    #[arg(long, default_value_t = 1, conflicts_with = "scene_file", value_parser = values::seed)]
    pub seed: u64,
    /// Volume fraction of the density and clusters scenes, in (0, 0.74) [default: 0.01].
    #[arg(long, value_parser = values::volume_fraction, conflicts_with = "scene_file")]
    pub volume_fraction: Option<f32>,
    /// Sphere radius of the density, clusters and line-x scenes, above 0 [default: 1].
    #[arg(long, value_parser = values::positive_length, conflicts_with = "scene_file")]
    pub radius: Option<f32>,
    /// Broad-phase method on every rank (`auto`: chosen from each rank's part of the scene).
    #[arg(long, default_value = "auto")]
    pub method: String,
    /// Backend on every rank; on the GPU the r-th rank of a machine uses its adapter r mod count
    /// (or --adapter).
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Cpu))]
    pub backend: BackendArg,
    /// Frames (moving scenes move between frames; a file stays still).
    #[arg(long, default_value_t = 1, value_parser = values::count_u32)]
    pub frames: u32,
    /// The last frame's pairs (CSV i,j, global indices): a directory (existing, or ending in
    /// /) for one pairs-rank-R.csv per rank, else one canonical file gathered to rank 0.
    #[arg(long)]
    pub pairs_out: Option<PathBuf>,
    /// Frame events (CSV frame,event,i,j), per rank (events-rank-R.csv) or gathered as
    /// --pairs-out.
    #[arg(long)]
    pub events_out: Option<PathBuf>,
    /// Draw the slabs again when a rank holds more than this many times the mean.
    #[arg(long, default_value_t = 1.5)]
    pub rebalance: f64,
    /// Write the report (frames and ranks) as JSON (rank 0).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn exec(a: DistArgs, adapter: Option<String>, max_binding_bytes: Option<u64>) -> Result<bool> {
    method_for_shape("--method", &a.method, Shape::Sphere)?;
    let kind = a.scene.map(|s| s.0);
    if a.scene_file.is_none() {
        let k = kind.unwrap_or(SceneKind::Paper);
        ignored_by_scene(SceneOption::Radius, a.radius.is_some(), Some(k), true)?;
        ignored_by_scene(
            SceneOption::VolumeFraction,
            a.volume_fraction.is_some(),
            Some(k),
            true,
        )?;
    }
    // A directory (existing, or named with a trailing /) gets a file per rank; both it and a
    // file are checked here as any output is (a directory that could not be made failed after
    // every frame had run).
    fn is_dir(p: &std::path::Path) -> bool {
        p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/')
    }
    fn file(p: &Option<PathBuf>) -> Option<&std::path::Path> {
        p.as_deref().filter(|p| !is_dir(p))
    }
    fn dir(p: &Option<PathBuf>) -> Option<&std::path::Path> {
        p.as_deref().filter(|p| is_dir(p))
    }
    for (flag, path) in [
        ("--pairs-out", &a.pairs_out),
        ("--events-out", &a.events_out),
    ] {
        if path
            .as_deref()
            .is_some_and(sweepfan_cli::report::output::is_stdout)
        {
            anyhow::bail!(
                "{flag}: dist writes files (rank 0 gathers them, or one per rank in a \
                 directory), not standard output: name a file or a directory/"
            );
        }
    }
    crate::args::check_outputs(
        &[
            ("--json", a.json.as_deref()),
            ("--pairs-out", file(&a.pairs_out)),
            ("--events-out", file(&a.events_out)),
        ],
        &[
            ("--pairs-out", dir(&a.pairs_out)),
            ("--events-out", dir(&a.events_out)),
        ],
        &[a.scene_file.as_deref()],
    )?;
    run(a, kind, adapter, max_binding_bytes)
}

#[cfg(not(feature = "mpi"))]
fn run(_: DistArgs, _: Option<SceneKind>, _: Option<String>, _: Option<u64>) -> Result<bool> {
    anyhow::bail!(
        "sweepfan dist needs MPI: build with `cargo build --release --features mpi` (Debian: \
         apt-get install libopenmpi-dev openmpi-bin libclang-dev) and run it under mpirun"
    )
}

#[cfg(feature = "mpi")]
fn run(
    a: DistArgs,
    kind: Option<SceneKind>,
    adapter: Option<String>,
    max_binding_bytes: Option<u64>,
) -> Result<bool> {
    use sweepfan_cli::dist::{DistInput, DistOptions};
    let input = match &a.scene_file {
        Some(path) => DistInput::File(path.clone()),
        None => {
            // The parameters checked as any run's; the size is each rank's share, which the
            // ranks check against their own memory (and past 2^32 objects in all).
            let mut params = sweepfan_cli::run::scene_size::scene_params(
                1,
                a.seed,
                a.volume_fraction,
                a.radius,
                0,
            )?;
            params.n = a.n;
            DistInput::Generated(kind.unwrap_or(SceneKind::Paper), params)
        }
    };
    let options = DistOptions {
        input,
        method: a.method.clone(),
        backend: a.backend.0,
        frames: a.frames,
        pairs_out: a.pairs_out.clone(),
        events_out: a.events_out.clone(),
        rebalance: a.rebalance,
        adapter,
        max_binding_bytes,
    };
    // Rank 0 says how far it is on stderr: mpirun hands the ranks pipes, not a terminal, so a
    // line at most every 5 s of a long run rather than a bar.
    let start = std::time::Instant::now();
    let last = std::cell::Cell::new(start);
    let progress = |p: sweepfan_cli::dist::DistProgress| {
        let now = std::time::Instant::now();
        if now.duration_since(last.get()) < std::time::Duration::from_secs(5) {
            return;
        }
        last.set(now);
        let at = start.elapsed().as_secs_f64();
        match p {
            sweepfan_cli::dist::DistProgress::Loaded => {
                crate::args::note(format_args!("dist: scene loaded and spread, {at:.0} s"))
            }
            sweepfan_cli::dist::DistProgress::Frame { done, of } => {
                crate::args::note(format_args!("dist: frame {done} of {of} done, {at:.0} s"))
            }
        }
    };
    let outcome = sweepfan_cli::dist::run(&options, Some(&progress));
    // Rank 0 reports before any rank exits: mpirun ends the job at the first exit with an
    // error (`DistOutcome::finish` waits for every rank).
    let reported = match &outcome.result {
        Ok(Some(report)) => print_report(report, a.json.as_deref()),
        Ok(None) => Ok(()),
        Err(e) if outcome.rank == 0 => Err(anyhow::anyhow!("{e}")),
        Err(_) => Err(anyhow::anyhow!("")),
    };
    let rank = outcome.rank;
    // Ctrl-C: every rank ends as `main` ends an interrupted run (`sweepfan: interrupted`, the
    // signal's status), after the others have agreed.
    let interrupted = sweepfan_cli::run::interrupted();
    if let Err(e) = &reported
        && rank == 0
        && !interrupted
    {
        crate::args::note(format_args!("sweepfan: error: {e}"));
    }
    outcome.finish();
    if reported.is_err() && interrupted {
        crate::args::note(format_args!("sweepfan: interrupted"));
        sweepfan_cli::report::output::end_as_interrupted();
    }
    if reported.is_err() {
        std::process::exit(2);
    }
    Ok(true)
}

#[cfg(feature = "mpi")]
fn print_report(
    report: &sweepfan_cli::dist::DistReport,
    json: Option<&std::path::Path>,
) -> Result<()> {
    let stdout_taken = json.is_some_and(sweepfan_cli::report::output::is_stdout);
    say!(
        stdout_taken,
        "dist: {} [{}] on {} ranks, scene {} ({} objects, {} giants), slab axis {}, loaded in \
         {:.2} s",
        report.method,
        report.backend.as_str(),
        report.ranks,
        report.scene,
        report.objects,
        report.giants,
        ["x", "y", "z"][report.axis],
        report.load_seconds
    );
    say!(
        stdout_taken,
        "{}",
        sweepfan_cli::report::dist::dist_tables(report)
    );
    if let Some(path) = json {
        sweepfan_cli::report::rows::write_json_value(path, report)?;
    }
    Ok(())
}
