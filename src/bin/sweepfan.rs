//! `sweepfan`: headless benchmarks, paper reproductions, verification and stress runs.
//!
//! With no arguments: the default benchmark (paper box, n = 5000, every method, CPU and GPU when
//! an adapter exists, every method verified against brute force) as a table on stdout.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use sweepfan::bench::{FrameRun, run_frames};
use sweepfan::gpu::{GpuContext, GpuOptions};
use sweepfan::report::paper::{compare, paper_tables, render};
use sweepfan::report::plot::{LinePlot, Scale, Series};
use sweepfan::report::rows::{Row, cpu_device, fill_speedups, write_csv, write_json_value};
use sweepfan::report::table::{Table, count, ms};
use sweepfan::{Backend, BroadPhase, Pair, Scene, SceneKind, SceneParams, canonicalize, registry};

#[derive(Parser)]
#[command(
    name = "sweepfan",
    version,
    about = "GPU and CPU broad phase, SAT and sector CCD"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// GPU adapter: index from `sweepfan info` or a substring of its name.
    #[arg(long, global = true)]
    adapter: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce a paper's experiments, our numbers beside theirs.
    Reproduce {
        #[command(subcommand)]
        what: Reproduce,
    },
    /// Time methods on a scene.
    Bench(BenchArgs),
    /// Find the touching pairs of a scene file, write them, and check them against brute force.
    Verify(VerifyArgs),
    /// Double n on the density scene until a time budget or --max-n, verifying every step.
    Stress(StressArgs),
    /// Print the GPU adapters, limits and features.
    Info,
}

#[derive(Subcommand)]
enum Reproduce {
    /// Tables 1-7 of the serialization paper (n = 50 .. 5000, paper box).
    Broadphase(ReproduceBroadphase),
    /// Sector CCD (thesis chapter 3): Table 3.1 accuracy, Figs. 3.8/3.9 bins, Tables 3.2-3.6.
    Sector(ReproduceSector),
}

#[derive(Args)]
struct ReproduceSector {
    /// Random rotations scored (the thesis: 100000; each classifies 10^6 grid points).
    #[arg(long, default_value_t = sweepfan::report::sector::DEFAULT_ROTATIONS)]
    rotations: usize,
    #[arg(long, default_value_t = sweepfan::experiments::sector::accuracy::DEFAULT_SEED)]
    seed: u64,
    /// Where the accuracy experiment runs (gpu needs an adapter).
    #[arg(long, value_enum, default_value_t = SectorBackendChoice::Cpu)]
    backend: SectorBackendChoice,
    /// Write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write SVG plots of the per-angle and per-shape bins into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// Timed runs per speed-table row (the thesis: 10000).
    #[arg(long, default_value_t = sweepfan::report::sector::DEFAULT_SPEED_RUNS)]
    speed_runs: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SectorBackendChoice {
    Cpu,
    Gpu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendChoice {
    Cpu,
    Gpu,
    Both,
}

impl BackendChoice {
    fn backends(self) -> Vec<Backend> {
        match self {
            BackendChoice::Cpu => vec![Backend::Cpu],
            BackendChoice::Gpu => vec![Backend::Gpu],
            BackendChoice::Both => vec![Backend::Cpu, Backend::Gpu],
        }
    }
}

#[derive(Args)]
struct Outputs {
    /// Write the rows as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the rows as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Args)]
struct ReproduceBroadphase {
    /// Frames timed per (method, n) (the paper: 100).
    #[arg(long, default_value_t = 100)]
    frames_time: usize,
    /// Frames averaged for the test counts (the paper: 10).
    #[arg(long, default_value_t = 10)]
    frames_count: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    backend: BackendChoice,
    /// Object counts (the paper's by default).
    #[arg(long, value_delimiter = ',', default_values_t = [50usize, 200, 500, 1000, 3000, 5000])]
    n: Vec<usize>,
    /// Write SVG plots (time vs n, tests vs n, time relative to brute force) into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    #[command(flatten)]
    out: Outputs,
}

#[derive(Args)]
struct BenchArgs {
    /// Generated scene.
    #[arg(long, value_enum, default_value_t = SceneKind::Paper, conflicts_with = "scene_file")]
    scene: SceneKind,
    /// CSV scene file (header x,y,z,r) instead of a generated scene.
    #[arg(long)]
    scene_file: Option<PathBuf>,
    /// Objects (generated scenes; spheres for `rotating`).
    #[arg(long, default_value_t = 5000)]
    n: usize,
    /// Rotating boxes (scene `rotating`).
    #[arg(long, default_value_t = 1000)]
    boxes: usize,
    /// Comma-separated methods, `all`, or `peers` (with --features peers).
    #[arg(long, default_value = "all")]
    methods: String,
    #[arg(long, default_value_t = 10)]
    frames: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Volume fraction of the density and clusters scenes.
    #[arg(long, default_value_t = 0.01)]
    volume_fraction: f32,
    /// Sphere radius of the density, clusters and line-x scenes.
    #[arg(long, default_value_t = 1.0)]
    radius: f32,
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    backend: BackendChoice,
    /// Count pairs without storing them.
    #[arg(long)]
    count_only: bool,
    /// Skip comparing the first frame with a reference method.
    #[arg(long)]
    no_verify: bool,
    /// Object shape: `obb` / `polygon` bench the box / polygon pipeline (AABB broad phase + SAT)
    /// on boxes placed like the scene's spheres, or polygons at their x, y (generated scenes
    /// only).
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    shape: Shape,
    #[command(flatten)]
    out: Outputs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Shape {
    Sphere,
    Obb,
    Polygon,
}

#[derive(Args)]
struct VerifyArgs {
    /// CSV scene file (header x,y,z,r).
    #[arg(long)]
    scene_file: PathBuf,
    #[arg(long, default_value = "sap")]
    method: String,
    /// Where to write the pairs as CSV `i,j` (i < j, sorted; 0-based data-line order).
    #[arg(long)]
    pairs_out: PathBuf,
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// Object shape: `obb` (CSV `cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`) or `polygon` (CSV
    /// `polygon,x,y`) run the SAT pipeline.
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    shape: Shape,
}

#[derive(Args)]
struct StressArgs {
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
    /// sap or grid (or any method; the CPU reference is grid, or sap when checking grid on the CPU).
    #[arg(long, default_value = "grid")]
    method: String,
    #[arg(long, default_value_t = 65_536)]
    start_n: usize,
    #[arg(long, default_value_t = 4_194_304)]
    max_n: usize,
    /// Stop doubling once this many seconds have passed.
    #[arg(long, default_value_t = 600.0)]
    budget_s: f64,
    /// Frames timed per step.
    #[arg(long, default_value_t = 3)]
    frames: usize,
    #[arg(long, default_value_t = 0.01)]
    volume_fraction: f32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: Outputs,
}

/// The GPU context, opened on first use so CPU-only runs never touch the driver.
struct Gpu {
    adapter: Option<String>,
    ctx: Option<Arc<GpuContext>>,
}

impl Gpu {
    fn new(adapter: Option<String>) -> Self {
        Self { adapter, ctx: None }
    }

    fn get(&mut self) -> Result<Arc<GpuContext>> {
        if self.ctx.is_none() {
            let ctx = GpuContext::new(&GpuOptions {
                adapter: self.adapter.clone(),
            })?;
            self.ctx = Some(Arc::new(ctx));
        }
        Ok(self.ctx.clone().expect("opened above"))
    }

    /// Adapter name, type and backend, for the `device` column.
    fn device(&self) -> String {
        match &self.ctx {
            Some(c) => {
                let soft = if c.info.device_type == wgpu::DeviceType::Cpu {
                    ", software: not GPU times"
                } else {
                    ""
                };
                format!(
                    "{} ({:?}, {:?}{soft})",
                    c.info.name, c.info.device_type, c.info.backend
                )
            }
            None => "gpu (not opened)".into(),
        }
    }
}

/// Largest n for which brute force is the reference (above it: sap on the CPU).
const BRUTE_FORCE_REFERENCE_MAX_N: usize = 20_000;

fn main() {
    let cli = Cli::parse();
    let mut gpu = Gpu::new(cli.adapter.clone());
    let result = match cli.command {
        None => default_benchmark(&mut gpu),
        Some(Command::Reproduce {
            what: Reproduce::Broadphase(a),
        }) => reproduce_broadphase(a, &mut gpu),
        Some(Command::Reproduce {
            what: Reproduce::Sector(a),
        }) => reproduce_sector(a, cli.adapter.clone()),
        Some(Command::Bench(a)) => bench(a, &mut gpu),
        Some(Command::Verify(a)) => verify(a, &mut gpu),
        Some(Command::Stress(a)) => stress(a, &mut gpu),
        Some(Command::Info) => info(cli.adapter.as_deref()),
    };
    match result {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("sweepfan: verification FAILED (see above)");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("sweepfan: error: {e:#}");
            std::process::exit(2);
        }
    }
}

/// The reference method for verification at size n.
/// The reference for verifying `method` at size n: brute force while it is cheap, then the CPU
/// grid (itself checked against brute force by the tests), or sap when the grid is under test.
fn reference_method(n: usize, method: &str) -> &'static str {
    if n <= BRUTE_FORCE_REFERENCE_MAX_N {
        "brute_force"
    } else if method == "grid" {
        "sap"
    } else {
        "grid"
    }
}

/// Measures each (method, backend) on the scene; returns rows and whether all verified.
fn measure(
    scene: &Scene,
    methods: &[String],
    backends: &[Backend],
    run: FrameRun,
    verify: bool,
    progress: Option<&ProgressBar>,
    gpu: &mut Gpu,
) -> Result<(Vec<Row>, bool)> {
    let mut rows = Vec::new();
    let mut all_ok = true;
    for &backend in backends {
        for name in methods {
            let reference_name = reference_method(scene.len(), name);
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
            let mut bp = registry::broad_phase(name, backend, ctx.as_ref())?;
            let mut reference = if verify && !(name == reference_name && backend == Backend::Cpu) {
                Some(registry::broad_phase(reference_name, Backend::Cpu, None)?)
            } else {
                None
            };
            let (m, cmp) = run_frames(
                bp.as_mut(),
                scene,
                run,
                reference.as_deref_mut().map(|r| r as &mut dyn BroadPhase),
            )
            .with_context(|| format!("{name} on {} (n = {})", backend.as_str(), scene.len()))?;
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
            rows.push(Row {
                scene: scene.name.clone(),
                n: scene.len(),
                method: name.clone(),
                backend,
                device: match backend {
                    Backend::Cpu => cpu_device(),
                    Backend::Gpu => gpu.device(),
                },
                frames: m.frame_ms.len(),
                tests_per_frame: m.tests_per_frame(run.count_frames),
                pairs_per_frame: m.pairs_per_frame(run.count_frames),
                ms_per_frame: m.median_ms(),
                ms_per_frame_min: m.min_ms(),
                stage_ms: m.stage_ms(),
                speedup_vs_brute_force: None,
                verified: verified.or(if name == reference_name && verify {
                    Some(true)
                } else {
                    None
                }),
                verified_against: cmp.as_ref().map(|_| reference_name.to_string()),
                near_touching_differences: cmp.as_ref().map(|c| c.near_touching.len()),
                gpu_bytes_per_object: bp.resident_bytes_per_object(),
                host_bytes_per_object: None,
                shape: None,
            });
            if let Some(p) = progress {
                p.inc(1);
            }
        }
    }
    fill_speedups(&mut rows);
    Ok((rows, all_ok))
}

fn progress_bar(len: u64) -> ProgressBar {
    let p = ProgressBar::new(len);
    p.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    p
}

fn rows_table(rows: &[Row]) -> String {
    let mut t = Table::new([
        "method",
        "backend",
        "n",
        "tests/frame",
        "pairs/frame",
        "ms/frame",
        "vs brute",
        "verified",
    ]);
    for r in rows {
        t.row([
            r.method.clone(),
            r.backend.as_str().to_string(),
            r.n.to_string(),
            count(r.tests_per_frame),
            count(r.pairs_per_frame),
            ms(r.ms_per_frame),
            r.speedup_vs_brute_force
                .map(|s| format!("{s:.1}x"))
                .unwrap_or_else(|| "-".into()),
            match r.verified {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
        ]);
    }
    t.render()
}

fn write_outputs(out: &Outputs, rows: &[Row], extra: Option<serde_json::Value>) -> Result<()> {
    if let Some(path) = &out.json {
        let mut doc = serde_json::json!({
            "tool": "sweepfan",
            "version": env!("CARGO_PKG_VERSION"),
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "machine": sweepfan::report::rows::Machine::this(),
            "rows": rows,
        });
        if let (Some(serde_json::Value::Object(extra)), Some(obj)) = (extra, doc.as_object_mut()) {
            obj.extend(extra);
        }
        write_json_value(path, &doc)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &out.csv {
        write_csv(path, rows)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn default_benchmark(gpu: &mut Gpu) -> Result<bool> {
    let n = 5000;
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 1));
    let methods: Vec<String> = sweepfan::Method::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    let mut backends = vec![Backend::Cpu];
    println!(
        "sweepfan default benchmark: paper box (cube of side 100, r = 2, origin at the centre), \
         n = {n}, 10 frames, median ms per frame; every method verified against brute force \
         (CPU) on the first frame."
    );
    match gpu.get() {
        Ok(_) => {
            backends.push(Backend::Gpu);
            println!("GPU: {}", gpu.device());
        }
        Err(e) => println!("GPU: none ({e:#}); GPU columns omitted."),
    }
    println!("CPU: {}\n", cpu_device());
    let run = FrameRun {
        frames: 10,
        count_frames: 10,
        count_only: false,
    };
    let bar = progress_bar((methods.len() * backends.len()) as u64);
    let (rows, ok) = measure(&scene, &methods, &backends, run, true, Some(&bar), gpu)?;
    bar.finish_and_clear();
    println!("{}", wide_table(&rows));
    Ok(ok)
}

/// One line per method, CPU and GPU side by side.
fn wide_table(rows: &[Row]) -> String {
    let has_gpu = rows.iter().any(|r| r.backend == Backend::Gpu);
    let mut header = vec![
        "method",
        "tests/frame",
        "pairs/frame",
        "cpu ms",
        "cpu vs brute",
    ];
    if has_gpu {
        header.extend(["gpu ms", "gpu vs brute", "gpu tests = cpu"]);
    }
    header.push("verified");
    let mut t = Table::new(header);
    let speed = |r: Option<&Row>| {
        r.and_then(|r| r.speedup_vs_brute_force)
            .map_or("-".to_string(), |s| format!("{s:.1}x"))
    };
    let mut methods: Vec<&str> = rows.iter().map(|r| r.method.as_str()).collect();
    methods.dedup();
    methods.sort_by_key(|m| rows.iter().position(|r| r.method == *m));
    methods.dedup();
    for m in methods {
        let cpu = rows
            .iter()
            .find(|r| r.method == m && r.backend == Backend::Cpu);
        let gpu = rows
            .iter()
            .find(|r| r.method == m && r.backend == Backend::Gpu);
        let first = cpu.or(gpu).expect("a row per listed method");
        let mut cells = vec![
            m.to_string(),
            count(first.tests_per_frame),
            count(first.pairs_per_frame),
            cpu.map_or("-".into(), |r| ms(r.ms_per_frame)),
            speed(cpu),
        ];
        if has_gpu {
            cells.push(gpu.map_or("-".into(), |r| ms(r.ms_per_frame)));
            cells.push(speed(gpu));
            cells.push(match (cpu, gpu) {
                (Some(c), Some(g)) if c.tests_per_frame == g.tests_per_frame => "yes".into(),
                (Some(_), Some(_)) => "DIFFERS".into(),
                _ => "-".into(),
            });
        }
        let verified = [cpu, gpu]
            .iter()
            .flatten()
            .all(|r| r.verified != Some(false));
        cells.push(if verified { "yes".into() } else { "NO".into() });
        t.row(cells);
    }
    t.render()
}

fn reproduce_broadphase(a: ReproduceBroadphase, gpu: &mut Gpu) -> Result<bool> {
    let methods: Vec<String> = sweepfan::Method::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    let backends = a.backend.backends();
    let run = FrameRun {
        frames: a.frames_time.max(a.frames_count),
        count_frames: a.frames_count,
        count_only: false,
    };
    let bar = progress_bar((a.n.len() * methods.len() * backends.len()) as u64);
    let mut rows = Vec::new();
    let mut ok = true;
    for &n in &a.n {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, a.seed));
        let (r, o) = measure(&scene, &methods, &backends, run, true, Some(&bar), gpu)?;
        rows.extend(r);
        ok &= o;
    }
    bar.finish_and_clear();
    let paper = paper_tables();
    let cmp = compare(&rows, &paper);
    println!(
        "Serialization paper (seeds 000/002), paper box, {} frames timed, counts = mean of {} frames, seed {}.\n\
         Times are ours on this machine (median ms/frame x 100); the paper's ran on a Pentium 4. \
         Compare the 'vs brute' ratios.\n",
        run.frames, run.count_frames, a.seed
    );
    println!("{}", render(&cmp));
    if let Some(dir) = &a.plots {
        write_broadphase_plots(dir, &rows)?;
    }
    write_outputs(
        &a.out,
        &rows,
        Some(serde_json::json!({ "paper_comparison": cmp })),
    )?;
    Ok(ok)
}

fn write_broadphase_plots(dir: &Path, rows: &[Row]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut keys: Vec<(String, Backend)> =
        rows.iter().map(|r| (r.method.clone(), r.backend)).collect();
    keys.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
    keys.dedup();
    let series = |f: &dyn Fn(&Row) -> f64| -> Vec<Series> {
        keys.iter()
            .map(|(m, b)| Series {
                name: if keys.iter().any(|k| k.1 != *b) {
                    format!("{m} [{}]", b.as_str())
                } else {
                    m.clone()
                },
                points: rows
                    .iter()
                    .filter(|r| &r.method == m && r.backend == *b)
                    .map(|r| (r.n as f64, f(r)))
                    .collect(),
            })
            .collect()
    };
    let plots = [
        (
            "time_vs_n.svg",
            "Time per frame vs n (paper box)",
            "ms per frame",
            Scale::Log10,
            series(&|r| r.ms_per_frame),
        ),
        (
            "tests_vs_n.svg",
            "Sphere tests per frame vs n (paper box)",
            "tests per frame",
            Scale::Log10,
            series(&|r| r.tests_per_frame),
        ),
        (
            "time_relative_to_brute_force.svg",
            "Time relative to brute force (paper box)",
            "time / brute force time",
            Scale::Log10,
            series(&|r| r.speedup_vs_brute_force.map_or(f64::NAN, |s| 1.0 / s)),
        ),
    ];
    for (file, title, y, ys, s) in plots {
        let path = dir.join(file);
        LinePlot {
            title,
            x_label: "objects n",
            y_label: y,
            x_scale: Scale::Log10,
            y_scale: ys,
            series: s,
        }
        .write_svg(&path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn load_scene(a: &BenchArgs) -> Result<Scene> {
    Ok(match &a.scene_file {
        Some(path) => Scene::from_csv(path)?,
        None => {
            let mut p = SceneParams::new(a.n, a.seed);
            p.volume_fraction = a.volume_fraction;
            p.radius = a.radius;
            if !(a.volume_fraction > 0.0 && a.volume_fraction < 0.74) {
                bail!(
                    "--volume-fraction must be in (0, 0.74), got {}",
                    a.volume_fraction
                );
            }
            if !(a.radius.is_finite() && a.radius > 0.0) {
                bail!("--radius must be positive and finite, got {}", a.radius);
            }
            Scene::generate(a.scene, &p)
        }
    })
}

fn bench(a: BenchArgs, gpu: &mut Gpu) -> Result<bool> {
    match a.shape {
        Shape::Sphere => {}
        Shape::Obb => return bench_boxes(a, gpu),
        Shape::Polygon => return bench_boxes(a, gpu),
    }
    if a.scene == SceneKind::Rotating && a.scene_file.is_none() {
        return bench_rotating(&a, gpu);
    }
    let scene = load_scene(&a)?;
    let mut methods = registry::parse_methods(&a.methods)?;
    // Brute force at large n takes minutes per frame: only when asked for by name.
    if a.methods.split(',').any(|m| m.trim() == "all") && scene.len() > 50_000 {
        methods.retain(|m| m != "brute_force");
        eprintln!(
            "note: brute_force skipped at n = {} (name it explicitly to run it)",
            scene.len()
        );
    }
    let run = FrameRun {
        frames: a.frames.max(1),
        count_frames: a.frames.max(1),
        count_only: a.count_only,
    };
    let backends = a.backend.backends();
    let bar = progress_bar((methods.len() * backends.len()) as u64);
    let (rows, ok) = measure(
        &scene,
        &methods,
        &backends,
        run,
        !a.no_verify,
        Some(&bar),
        gpu,
    )?;
    bar.finish_and_clear();
    println!(
        "scene {} (n = {}), {} frames, median ms per frame; verified against {}",
        scene.name,
        scene.len(),
        run.frames,
        if a.no_verify {
            "nothing"
        } else {
            if scene.len() <= BRUTE_FORCE_REFERENCE_MAX_N {
                "brute_force [cpu]"
            } else {
                "grid [cpu] (grid itself against sap)"
            }
        }
    );
    println!("{}", rows_table(&rows));
    write_outputs(&a.out, &rows, None)?;
    Ok(ok)
}

fn verify(a: VerifyArgs, gpu: &mut Gpu) -> Result<bool> {
    if a.shape != Shape::Sphere {
        return verify_shapes(a, gpu);
    }
    let scene = Scene::from_csv(&a.scene_file)?;
    let ctx = match a.backend {
        Backend::Gpu => Some(gpu.get()?),
        Backend::Cpu => None,
    };
    let mut bp = registry::broad_phase(&a.method, a.backend, ctx.as_ref())?;
    let mut pairs: Vec<Pair> = Vec::new();
    let stats = bp.find_pairs(&scene.spheres, Some(&mut pairs))?;
    canonicalize(&mut pairs);
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let reference_name = reference_method(scene.len(), &a.method);
    let mut reference = registry::broad_phase(reference_name, Backend::Cpu, None)?;
    let mut expected = Vec::new();
    reference.find_pairs(&scene.spheres, Some(&mut expected))?;
    canonicalize(&mut expected);
    let cmp = sweepfan::verify::compare_pairs(&scene.spheres, &expected, &pairs);
    println!(
        "{} [{}]: {} pairs ({} tests) written to {}; {} [cpu]: {} pairs",
        a.method,
        a.backend.as_str(),
        pairs.len(),
        stats.tests,
        a.pairs_out.display(),
        reference_name,
        expected.len()
    );
    for p in &cmp.near_touching {
        println!("near touching (allowed to differ): {},{}", p[0], p[1]);
    }
    if cmp.is_ok() {
        println!("verified: same pairs as {reference_name}");
    } else {
        println!("MISMATCH against {reference_name}: {}", cmp.summary());
    }
    Ok(cmp.is_ok())
}

fn write_pairs_csv(path: &Path, pairs: &[Pair]) -> Result<()> {
    use std::io::Write;
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    writeln!(w, "i,j")?;
    for p in pairs {
        writeln!(w, "{},{}", p[0], p[1])?;
    }
    w.flush()?;
    Ok(())
}

fn info(adapter: Option<&str>) -> Result<bool> {
    let adapters = sweepfan::gpu::list_adapters();
    if adapters.is_empty() {
        println!("no GPU adapter found (install a Vulkan driver; on Debian: mesa-vulkan-drivers)");
        return Ok(true);
    }
    for (i, a) in adapters.iter().enumerate() {
        println!(
            "adapter {i}: {} ({:?}, {:?}), driver {} {}",
            a.name, a.device_type, a.backend, a.driver, a.driver_info
        );
    }
    let ctx = sweepfan::gpu::GpuContext::new(&sweepfan::gpu::GpuOptions {
        adapter: adapter.map(str::to_string),
    })?;
    println!("\nselected: {} ({:?})", ctx.info.name, ctx.info.device_type);
    if ctx.info.device_type == wgpu::DeviceType::Cpu {
        println!(
            "note: a CPU (software) adapter: a correctness target; its times are not GPU times"
        );
    }
    let l = &ctx.limits;
    println!("limits:");
    println!(
        "  max_storage_buffer_binding_size  {}",
        l.max_storage_buffer_binding_size
    );
    println!("  max_buffer_size                  {}", l.max_buffer_size);
    println!(
        "  max_compute_workgroups_per_dim   {}",
        l.max_compute_workgroups_per_dimension
    );
    println!(
        "  max_compute_invocations_per_wg   {}",
        l.max_compute_invocations_per_workgroup
    );
    println!(
        "  max_compute_workgroup_storage    {}",
        l.max_compute_workgroup_storage_size
    );
    println!(
        "  max_storage_buffers_per_stage    {}",
        l.max_storage_buffers_per_shader_stage
    );
    println!(
        "  min/max subgroup size            {}/{}",
        ctx.adapter.get_info().subgroup_min_size,
        ctx.adapter.get_info().subgroup_max_size
    );
    println!("features enabled: {:?}", ctx.features);
    println!(
        "timestamps: {}",
        if ctx.has_timestamps() { "yes" } else { "no" }
    );
    Ok(true)
}

fn stress(a: StressArgs, gpu: &mut Gpu) -> Result<bool> {
    if a.start_n == 0 || a.max_n < a.start_n {
        bail!("need 0 < --start-n <= --max-n");
    }
    let ctx = match a.backend {
        Backend::Gpu => Some(gpu.get()?),
        Backend::Cpu => None,
    };
    let reference_name = if a.method == "grid" && a.backend == Backend::Cpu {
        "sap"
    } else {
        "grid"
    };
    let mut bp = registry::broad_phase(&a.method, a.backend, ctx.as_ref())?;
    let mut reference = registry::broad_phase(reference_name, Backend::Cpu, None)?;
    let device = match a.backend {
        Backend::Cpu => cpu_device(),
        Backend::Gpu => gpu.device(),
    };
    println!(
        "stress: {} [{}] on {device}, density scene (volume fraction {}), n doubling from {} to {}, \
         budget {} s; each step verified against {reference_name} [cpu]",
        a.method,
        a.backend.as_str(),
        a.volume_fraction,
        a.start_n,
        a.max_n,
        a.budget_s
    );
    let steps = (a.max_n / a.start_n).max(1).ilog2() as u64 + 1;
    let bar = progress_bar(steps);
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut all_ok = true;
    let mut n = a.start_n;
    let mut stop_reason = format!("reached --max-n {}", a.max_n);
    while n <= a.max_n {
        if started.elapsed().as_secs_f64() > a.budget_s {
            stop_reason = format!("time budget of {} s used", a.budget_s);
            break;
        }
        bar.set_message(format!("n = {n}"));
        let mut p = SceneParams::new(n, a.seed);
        p.volume_fraction = a.volume_fraction;
        let scene = Scene::generate(SceneKind::Density, &p);
        let run = FrameRun {
            frames: a.frames.max(1),
            count_frames: a.frames.max(1),
            count_only: false,
        };
        let outcome = run_frames(
            bp.as_mut(),
            &scene,
            run,
            Some(reference.as_mut() as &mut dyn BroadPhase),
        );
        let (m, cmp) = match outcome {
            Ok(x) => x,
            Err(sweepfan::Error::TooLarge(msg)) | Err(sweepfan::Error::Gpu(msg))
                if !rows.is_empty() =>
            {
                stop_reason = format!("n = {n} does not fit: {msg}");
                break;
            }
            Err(e) => return Err(e.into()),
        };
        let cmp = cmp.expect("a reference was given");
        if !cmp.is_ok() {
            all_ok = false;
            eprintln!("MISMATCH at n = {n}: {}", cmp.summary());
        }
        let pairs = m.pairs_per_frame(run.count_frames);
        rows.push(Row {
            scene: scene.name.clone(),
            n,
            method: a.method.clone(),
            backend: a.backend,
            device: device.clone(),
            frames: m.frame_ms.len(),
            tests_per_frame: m.tests_per_frame(run.count_frames),
            pairs_per_frame: pairs,
            ms_per_frame: m.median_ms(),
            ms_per_frame_min: m.min_ms(),
            stage_ms: m.stage_ms(),
            speedup_vs_brute_force: None,
            verified: Some(cmp.is_ok()),
            verified_against: Some(reference_name.to_string()),
            near_touching_differences: Some(cmp.near_touching.len()),
            gpu_bytes_per_object: bp.resident_bytes_per_object(),
            // Host <-> device traffic per frame: the spheres up (16 B each), the pairs down (8 B
            // each); the totals and timestamps are a few hundred bytes.
            host_bytes_per_object: (a.backend == Backend::Gpu)
                .then(|| (16.0 * n as f64 + 8.0 * pairs) / n as f64),
            shape: None,
        });
        bar.inc(1);
        match n.checked_mul(2) {
            Some(next) => n = next,
            None => break,
        }
    }
    bar.finish_and_clear();
    let mut t = Table::new([
        "n",
        "pairs/frame",
        "ms/frame",
        "verified",
        "resident B/obj",
        "host B/obj",
        "stages (median ms)",
    ]);
    for r in &rows {
        t.row([
            r.n.to_string(),
            count(r.pairs_per_frame),
            ms(r.ms_per_frame),
            if r.verified == Some(true) {
                "yes".into()
            } else {
                "NO".into()
            },
            r.gpu_bytes_per_object
                .map_or("-".into(), |b| format!("{b:.1}")),
            r.host_bytes_per_object
                .map_or("-".into(), |b| format!("{b:.1}")),
            r.stage_ms
                .iter()
                .map(|(k, v)| format!("{k} {}", ms(*v)))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    println!("{}", t.render());
    println!(
        "stopped: {stop_reason}; largest n verified: {}",
        rows.iter()
            .filter(|r| r.verified == Some(true))
            .map(|r| r.n)
            .max()
            .unwrap_or(0)
    );
    write_outputs(&a.out, &rows, None)?;
    Ok(all_ok)
}

fn reproduce_sector(a: ReproduceSector, adapter: Option<String>) -> Result<bool> {
    use sweepfan::report::sector::{SectorBackend, SectorOptions, run};
    let opts = SectorOptions {
        rotations: a.rotations,
        seed: a.seed,
        backend: match a.backend {
            SectorBackendChoice::Cpu => SectorBackend::Cpu,
            SectorBackendChoice::Gpu => SectorBackend::Gpu,
        },
        speed_runs: a.speed_runs,
        adapter,
    };
    let bar = progress_bar(a.rotations as u64);
    bar.set_message("rotations (then the speed tables)");
    let report = run(&opts, Some(&|n| bar.inc(n)))?;
    bar.finish_and_clear();
    print!("{}", report.render());
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

/// `bench --scene rotating`: boxes' proxies (conservative sector vs speculative AABB) through the
/// broad phase, then the exact sector-sphere test; candidates and hits per frame.
fn bench_rotating(a: &BenchArgs, gpu: &mut Gpu) -> Result<bool> {
    let backends = a.backend.backends();
    let ctx = if backends.contains(&Backend::Gpu) {
        Some(gpu.get()?)
    } else {
        None
    };
    let params = sweepfan::scenes::rotating::RotatingParams::new(a.boxes, a.n, a.seed);
    let mut rows = sweepfan::experiments::sector::rotating::bench_rotating(
        &params,
        a.frames.max(1),
        &backends,
        ctx.as_deref(),
    )?;
    for r in rows.iter_mut().filter(|r| r.backend == Backend::Gpu) {
        r.device = gpu.device();
    }
    println!(
        "scene rotating: {} boxes among {} spheres, {} frames; tests = candidate (box, sphere) \
         pairs from the proxy AABBs, pairs = exact conservative-sector hits among them",
        a.boxes,
        a.n,
        a.frames.max(1)
    );
    println!("{}", rows_table(&rows));
    let per_backend = |b: Backend| {
        let get = |m: &str| {
            rows.iter()
                .find(|r| r.backend == b && r.method == m)
                .map(|r| r.tests_per_frame)
        };
        if let (Some(c), Some(s)) = (
            get("rotating-conservative-sector"),
            get("rotating-speculative"),
        ) && s > 0.0
        {
            println!(
                "[{}] conservative sector: {:.1}% fewer candidates than the speculative AABB",
                b.as_str(),
                100.0 * (1.0 - c / s)
            );
        }
    };
    for b in &backends {
        per_backend(*b);
    }
    write_outputs(&a.out, &rows, None)?;
    Ok(rows.iter().all(|r| r.verified != Some(false)))
}

/// Largest n for which `verify --shape obb|polygon` checks against the all-pairs SAT (above it:
/// the CPU pipeline).
const SAT_ALL_PAIRS_MAX_N: usize = 5_000;

/// Relative size change that decides whether a disagreeing pair is "near touching".
const SAT_TOUCH_REL: f32 = 1e-5;

/// SAT shapes behind one interface for the verify / bench code.
enum Shapes {
    Boxes(Vec<sweepfan::geom::obb::Obb>),
    Polygons(Vec<sweepfan::geom::polygon::Polygon>),
}

impl Shapes {
    fn len(&self) -> usize {
        match self {
            Shapes::Boxes(b) => b.len(),
            Shapes::Polygons(p) => p.len(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Shapes::Boxes(_) => "obb",
            Shapes::Polygons(_) => "polygon",
        }
    }

    /// The CPU pipeline (bounds sweep + SAT).
    fn cpu(&self) -> Result<(Vec<Pair>, sweepfan::Stats)> {
        Ok(match self {
            Shapes::Boxes(b) => sweepfan::cpu::sat::obb_overlaps(b)?,
            Shapes::Polygons(p) => sweepfan::cpu::sat::polygon_overlaps(p)?,
        })
    }

    fn gpu(
        &self,
        pipeline: &mut sweepfan::gpu::GpuBoxPipeline,
        out: Option<&mut Vec<Pair>>,
    ) -> Result<sweepfan::Stats> {
        Ok(match self {
            Shapes::Boxes(b) => pipeline.obb_overlaps(b, out)?,
            Shapes::Polygons(p) => pipeline.polygon_overlaps(p, out)?,
        })
    }

    /// Every pair tested (SAT), for small n.
    fn all_pairs(&self) -> Vec<Pair> {
        use rayon::prelude::*;
        let n = self.len();
        let mut pairs: Vec<Pair> = (0..n)
            .into_par_iter()
            .flat_map_iter(|i| {
                (i + 1..n)
                    .filter(move |&j| self.overlap(i, j, 1.0))
                    .map(move |j| [i as u32, j as u32])
            })
            .collect();
        canonicalize(&mut pairs);
        pairs
    }

    /// Whether shapes i and j overlap after scaling both by `f` about their centres.
    fn overlap(&self, i: usize, j: usize, f: f32) -> bool {
        match self {
            Shapes::Boxes(b) => {
                let s = |o: &sweepfan::geom::obb::Obb| {
                    sweepfan::geom::obb::Obb::new(o.center, o.half_extents * f, o.rotation)
                };
                s(&b[i]).overlaps(&s(&b[j]))
            }
            Shapes::Polygons(p) => {
                let s = |q: &sweepfan::geom::polygon::Polygon| {
                    let v = q.vertices();
                    let c = v.iter().copied().sum::<glam::Vec2>() / v.len() as f32;
                    let scaled: Vec<glam::Vec2> = v.iter().map(|&x| c + (x - c) * f).collect();
                    sweepfan::geom::polygon::Polygon::new(0, &scaled)
                };
                match (s(&p[i]), s(&p[j])) {
                    (Ok(a), Ok(b)) => a.overlaps(&b),
                    _ => p[i].overlaps(&p[j]),
                }
            }
        }
    }

    /// Sorted pairs in exactly one of the lists: (near touching, others).
    fn differences(&self, expected: &[Pair], got: &[Pair]) -> (Vec<Pair>, Vec<Pair>) {
        let a: std::collections::BTreeSet<Pair> = expected.iter().copied().collect();
        let b: std::collections::BTreeSet<Pair> = got.iter().copied().collect();
        a.symmetric_difference(&b).copied().partition(|&[i, j]| {
            let (i, j) = (i as usize, j as usize);
            i < self.len()
                && j < self.len()
                && self.overlap(i, j, 1.0 + SAT_TOUCH_REL)
                && !self.overlap(i, j, 1.0 - SAT_TOUCH_REL)
        })
    }
}

fn verify_shapes(a: VerifyArgs, gpu: &mut Gpu) -> Result<bool> {
    let shapes = match a.shape {
        Shape::Obb => Shapes::Boxes(sweepfan::geom::obb::read_obbs_csv(&a.scene_file)?),
        Shape::Polygon => {
            Shapes::Polygons(sweepfan::geom::polygon::read_polygons_csv(&a.scene_file)?)
        }
        Shape::Sphere => unreachable!("spheres take the broad-phase path"),
    };
    let (mut pairs, stats) = match a.backend {
        Backend::Cpu => shapes.cpu()?,
        Backend::Gpu => {
            let mut pipeline =
                sweepfan::gpu::GpuBoxPipeline::new(gpu.get()?, sweepfan::gpu::Proxy::Aabb)?;
            let mut out = Vec::new();
            let stats = shapes.gpu(&mut pipeline, Some(&mut out))?;
            (out, stats)
        }
    };
    canonicalize(&mut pairs);
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let (reference_name, expected) = if shapes.len() <= SAT_ALL_PAIRS_MAX_N {
        ("all-pairs SAT", shapes.all_pairs())
    } else {
        let (mut e, _) = shapes.cpu()?;
        canonicalize(&mut e);
        ("CPU pipeline", e)
    };
    println!(
        "{} [{}]: {} overlapping pairs ({} SAT tests) written to {}; {reference_name} [cpu]: {} pairs",
        shapes.name(),
        a.backend.as_str(),
        pairs.len(),
        stats.tests,
        a.pairs_out.display(),
        expected.len()
    );
    let (near, wrong) = shapes.differences(&expected, &pairs);
    for p in &near {
        println!("near touching (allowed to differ): {},{}", p[0], p[1]);
    }
    if wrong.is_empty() {
        println!("verified: same pairs as {reference_name}");
        Ok(true)
    } else {
        println!(
            "MISMATCH against {reference_name}: {} pairs differ, first {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
        Ok(false)
    }
}

/// `bench --shape obb|polygon`: the box / polygon pipeline per frame on shapes placed like the
/// scene's spheres (polygons: at their x, y).
fn bench_boxes(a: BenchArgs, gpu: &mut Gpu) -> Result<bool> {
    let shape_name = if a.shape == Shape::Polygon {
        "polygon"
    } else {
        "obb"
    };
    if a.scene_file.is_some() {
        bail!("bench --shape {shape_name} takes a generated --scene, not --scene-file");
    }
    if !(a.volume_fraction > 0.0 && a.volume_fraction < 0.74) {
        bail!(
            "--volume-fraction must be in (0, 0.74), got {}",
            a.volume_fraction
        );
    }
    if !(a.radius.is_finite() && a.radius > 0.0) {
        bail!("--radius must be positive and finite, got {}", a.radius);
    }
    let mut p = SceneParams::new(a.n, a.seed);
    p.volume_fraction = a.volume_fraction;
    p.radius = a.radius;
    let (shapes, scene_name) = if a.shape == Shape::Polygon {
        (
            Shapes::Polygons(sweepfan::scenes::boxes::generate_polygons(a.scene, &p)),
            format!("{}-polygons", a.scene.name()),
        )
    } else {
        (
            Shapes::Boxes(sweepfan::scenes::boxes::generate_boxes(a.scene, &p)),
            format!("{}-boxes", a.scene.name()),
        )
    };
    let frames = a.frames.max(1);
    let mut reference: Option<Vec<Pair>> = None;
    let mut rows = Vec::new();
    let mut all_ok = true;
    for backend in a.backend.backends() {
        let mut pipeline = match backend {
            Backend::Gpu => Some(sweepfan::gpu::GpuBoxPipeline::new(
                gpu.get()?,
                sweepfan::gpu::Proxy::Aabb,
            )?),
            Backend::Cpu => None,
        };
        let mut frame_ms = Vec::new();
        let mut stage_samples: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        let (mut tests, mut found) = (0u64, 0u64);
        let mut first: Option<Vec<Pair>> = None;
        for frame in 0..frames {
            let store = !a.count_only || (frame == 0 && !a.no_verify);
            let t = Instant::now();
            let (pairs, stats) = match &mut pipeline {
                None => {
                    let (p, s) = shapes.cpu()?;
                    (Some(p), s)
                }
                Some(gp) => {
                    let mut out = Vec::new();
                    let s = shapes.gpu(gp, store.then_some(&mut out))?;
                    (store.then_some(out), s)
                }
            };
            frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
            tests += stats.tests;
            found += stats.pairs;
            // A stage may run several passes per frame (the sort's): sum them per frame.
            let mut this_frame: std::collections::BTreeMap<String, f64> = Default::default();
            for st in &stats.stages {
                let label = match st.clock {
                    sweepfan::broadphase::Clock::GpuTimestamp => format!("{} (gpu)", st.stage),
                    sweepfan::broadphase::Clock::Wall => st.stage.to_string(),
                };
                *this_frame.entry(label).or_default() += st.seconds * 1e3;
            }
            for (label, ms) in this_frame {
                stage_samples.entry(label).or_default().push(ms);
            }
            if frame == 0 {
                first = pairs;
            }
        }
        let stage_ms = stage_samples
            .into_iter()
            .map(|(k, v)| (k, median(&v)))
            .collect();
        let (mut verified, mut near) = (None, None);
        if !a.no_verify
            && let Some(mut got) = first
        {
            canonicalize(&mut got);
            if reference.is_none() {
                let (mut e, _) = shapes.cpu()?;
                canonicalize(&mut e);
                reference = Some(e);
            }
            let (n_near, wrong) = shapes.differences(reference.as_ref().expect("set"), &got);
            if !wrong.is_empty() {
                all_ok = false;
                eprintln!(
                    "MISMATCH {} [{}] vs CPU pipeline: {} pairs differ",
                    shapes.name(),
                    backend.as_str(),
                    wrong.len()
                );
            }
            verified = Some(wrong.is_empty());
            near = Some(n_near.len());
        }
        rows.push(Row {
            scene: scene_name.clone(),
            n: shapes.len(),
            method: "aabb_sap+sat".into(),
            backend,
            device: match backend {
                Backend::Cpu => cpu_device(),
                Backend::Gpu => gpu.device(),
            },
            frames,
            tests_per_frame: tests as f64 / frames as f64,
            pairs_per_frame: found as f64 / frames as f64,
            ms_per_frame: median(&frame_ms),
            ms_per_frame_min: frame_ms.iter().copied().fold(f64::INFINITY, f64::min),
            stage_ms,
            speedup_vs_brute_force: None,
            verified,
            verified_against: verified
                .map(|_| format!("cpu {} pipeline (aabb sweep + sat)", shapes.name())),
            near_touching_differences: near,
            gpu_bytes_per_object: None,
            host_bytes_per_object: None,
            shape: Some(shapes.name().into()),
        });
        if backend == Backend::Cpu {
            rows.last_mut().expect("pushed").method = "aabb_sweep+sat".into();
        }
    }
    println!(
        "scene {scene_name} (n = {}), {frames} frames, median ms per frame; verified against the CPU pipeline",
        shapes.len()
    );
    println!("{}", rows_table(&rows));
    write_outputs(&a.out, &rows, None)?;
    Ok(all_ok)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => 0.5 * (s[n / 2 - 1] + s[n / 2]),
    }
}
