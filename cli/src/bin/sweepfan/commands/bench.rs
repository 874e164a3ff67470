//! `sweepfan bench`: time methods on a scene (spheres, rotating boxes among spheres, or boxes /
//! polygons through the SAT pipeline).

use crate::args::values::{self, SceneOption, ignored_by_scene, method_for_shape};
use crate::args::{BackendChoice, BodyChoice, Outputs, SceneArg, Shape, progress_bar};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan::registry;
use sweepfan_cli::experiments::sector::rotating::{bench_rotating, bench_rotating_bodies};
use sweepfan_cli::report::bench::rows_table;
use sweepfan_cli::run::bench::{BRUTE_FORCE_REFERENCE_MAX_N, FrameRun, measure};
use sweepfan_cli::run::boxes::bench_shapes;
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::in_flight::measure_in_flight;
use sweepfan_cli::run::resident::{GpuBench, measure_resident};
use sweepfan_cli::run::scene_size::scene_params;
use sweepfan_cli::run::verify_shapes::Shapes;
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
use sweepfan_scenes::rotating::RotatingParams;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

#[derive(Args)]
pub struct BenchArgs {
    /// Generated scene.
    #[arg(long, value_enum, default_value_t = SceneArg(SceneKind::Paper), conflicts_with = "scene_file")]
    pub scene: SceneArg,
    /// CSV scene file (header x,y,z,r; `-`: standard input) instead of a generated scene.
    #[arg(long)]
    pub scene_file: Option<PathBuf>,
    /// Objects (generated scenes; spheres for `rotating`).
    #[arg(
        long,
        default_value_t = 5000,
        conflicts_with = "scene_file",
        value_parser = values::objects,
    )]
    pub n: usize,
    /// Rotating boxes (scene `rotating`, --shape sphere) [default: 1000].
    #[arg(long, value_parser = values::objects)]
    pub boxes: Option<usize>,
    /// Boulders among the grains (scene `boulders`, at most --n) [default: 40].
    #[arg(long, value_parser = values::count)]
    pub boulders: Option<usize>,
    /// Scene `rotating`: rotating bodies of this kind in any pose instead of the thesis's
    /// boxes, the general conservative sector as their proxy (docs/design.md §5.8).
    #[arg(long, value_enum)]
    pub body: Option<BodyChoice>,
    /// Comma-separated methods, `all`, or `peers` (with --features peers) [default: all];
    /// --shape obb|polygon run `sap` only.
    #[arg(long)]
    pub methods: Option<String>,
    /// Frames timed (at least 1).
    #[arg(long, default_value_t = 10, value_parser = values::count)]
    pub frames: usize,
    #[arg(long, default_value_t = 1, conflicts_with = "scene_file", value_parser = values::seed)]
    pub seed: u64,
    /// Volume fraction of the density and clusters scenes, in (0, 0.74) [default: 0.01].
    #[arg(long, conflicts_with = "scene_file", value_parser = values::volume_fraction)]
    pub volume_fraction: Option<f32>,
    /// Sphere radius of the density, clusters and line-x scenes, the boulders' of the
    /// boulders scene, above 0 [default: 1].
    #[arg(long, conflicts_with = "scene_file", value_parser = values::positive_length)]
    pub radius: Option<f32>,
    #[arg(long, value_enum, default_value_t = BackendChoice::Cpu)]
    pub backend: BackendChoice,
    /// Count pairs without storing them.
    #[arg(long)]
    pub count_only: bool,
    /// With --shape obb|polygon: also time the contacts of the pairs found (normal, depth,
    /// points; docs/design.md §4.8) on the CPU, on every thread and on one, beside parry's box
    /// manifolds on one thread (builds with --features peers), in contacts per second.
    #[arg(long, conflicts_with = "count_only")]
    pub contacts: bool,
    /// CPU threads for our CPU methods and the peers (a rayon pool of this size; default: every
    /// core). Peer crates run single-threaded whatever this says.
    #[arg(long, value_parser = values::threads)]
    pub threads: Option<u32>,
    /// Frame events: pairs found and lost per frame (found_per_frame, lost_per_frame, found,
    /// lost in the JSON rows; totals in the table). Sphere scenes.
    #[arg(long, conflicts_with = "count_only")]
    pub events: bool,
    /// Skip comparing the first and the last frame with a reference method.
    #[arg(long)]
    pub no_verify: bool,
    /// Object shape: `obb` / `polygon` bench the box / polygon pipeline (AABB broad phase + SAT)
    /// on boxes placed like the scene's spheres, or polygons at their x, y; `aabb` the box
    /// broad phase alone on those boxes' AABBs (generated scenes only).
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    pub shape: Shape,
    /// The scene lives on the GPU: uploaded once, moved there by a compute pass each frame and
    /// read there by the broad phase, nothing uploaded and only the totals read back (the
    /// frame a simulation that embeds sweepfan pays; docs/design.md §10). With --backend gpu,
    /// sphere scenes; the first and the last frame are checked against the CPU.
    #[arg(long)]
    pub resident: bool,
    /// Two frames in flight: frame k + 1 is moved and uploaded while frame k runs on the GPU,
    /// then frame k is finished (`GpuBroadPhase::submit_frame`, docs/design.md §9.16); a
    /// frame's time runs from one finish to the next. With --backend gpu, sphere scenes.
    #[arg(long, conflicts_with_all = ["resident", "events"])]
    pub in_flight: bool,
    /// A batch of this many independent worlds of --n spheres each (each world the scene with
    /// its own seed: --seed + k), found in one call and beside a loop of one call per world
    /// (docs/design.md §2.13); sphere scenes, on --backend cpu, gpu or both [default methods:
    /// auto,grid,sap].
    #[arg(long, value_parser = values::count)]
    pub worlds: Option<usize>,
    #[command(flatten)]
    pub out: Outputs,
}

/// The generated scene, refused naming the parameters when they place an object outside what
/// the library accepts (`run::scene_size::check_generated`).
fn generated(kind: SceneKind, p: &SceneParams) -> Result<Scene> {
    let scene = Scene::generate(kind, p);
    sweepfan_cli::run::scene_size::check_generated(kind, p, &scene.spheres, 0)?;
    Ok(scene)
}

/// `--boxes` when left out.
const DEFAULT_BOXES: usize = 1000;
/// `--methods` when left out.
const DEFAULT_METHODS: &str = "all";

impl BenchArgs {
    /// The generated scene's parameters: `--radius` and `--volume-fraction` as given, else the
    /// generators' defaults (`SceneParams::new`), checked (`run::scene_size::scene_params`).
    fn params(&self) -> Result<SceneParams> {
        // The scene itself must fit: the GPU alone, verifying nothing, needs far less host
        // memory per object than whole CPU frames (256 B); the CPU runs in parts where a whole
        // frame does not fit (`run::bench::measure` decides, docs/design.md §2.10).
        let gpu_only = self.no_verify && self.backend.backends() == [Backend::Gpu];
        // The refusal and its hint are the run's own (`run::bench::measure` checks the same).
        sweepfan_cli::run::scene_size::check_run_size(
            self.n,
            &self.backend.backends(),
            !self.no_verify,
        )?;
        let host_bytes = if gpu_only {
            sweepfan_cli::run::scene_size::GPU_ONLY_HOST_BYTES_PER_OBJECT
        } else {
            sweepfan_cli::run::scene_size::CPU_PARTS_HOST_BYTES_PER_OBJECT
        };
        let mut p = scene_params(
            self.n,
            self.seed,
            self.volume_fraction,
            self.radius,
            host_bytes,
        )?;
        if let Some(b) = self.boulders {
            if b > self.n {
                bail!(
                    "--boulders {b} exceeds --n {}: boulders replace grains",
                    self.n
                );
            }
            p.boulders = b;
        }
        Ok(p)
    }

    fn methods(&self) -> &str {
        self.methods.as_deref().unwrap_or(DEFAULT_METHODS)
    }

    fn boxes(&self) -> usize {
        self.boxes.unwrap_or(DEFAULT_BOXES)
    }

    /// Refuses options this run would ignore (issue 28): `--radius`, `--volume-fraction` and
    /// `--boxes` on scenes without them (docs/design.md §3.4), `--methods` where one fixed
    /// method runs (the box and polygon pipelines, docs/design.md §4.4-4.5; the rotating
    /// scene's proxies, §5.7).
    fn check_used(&self) -> Result<()> {
        let scene = self.scene_file.is_none().then_some(self.scene.0);
        let spheres = self.shape == Shape::Sphere;
        ignored_by_scene(SceneOption::Radius, self.radius.is_some(), scene, spheres)?;
        let fraction = self.volume_fraction.is_some();
        ignored_by_scene(SceneOption::VolumeFraction, fraction, scene, spheres)?;
        ignored_by_scene(SceneOption::Boxes, self.boxes.is_some(), scene, spheres)?;
        ignored_by_scene(
            SceneOption::Boulders,
            self.boulders.is_some(),
            scene,
            spheres,
        )?;
        if self.resident {
            self.check_resident(scene, spheres)?;
        }
        if self.in_flight {
            if self.backend.backends() != [Backend::Gpu] {
                bail!("--in-flight runs frames on the GPU: add --backend gpu");
            }
            if !spheres || scene == Some(SceneKind::Rotating) {
                bail!(
                    "--in-flight: sphere scenes only (not --shape obb|polygon or --scene rotating)"
                );
            }
        }
        if self.contacts && !matches!(self.shape, Shape::Obb | Shape::Polygon) {
            bail!("--contacts: --shape obb or polygon (the separating-axis pipelines)");
        }
        if self.body.is_some() && !(spheres && scene == Some(SceneKind::Rotating)) {
            bail!("--body: only the rotating scene (--scene rotating) has rotating bodies");
        }
        if spheres && scene == Some(SceneKind::Rotating) {
            // The rotating scene counts candidates and hits, and always checks the GPU's hits
            // against the CPU's (docs/design.md §5.7): these two would be silently ignored.
            for (given, flag) in [
                (self.count_only, "--count-only"),
                (self.no_verify, "--no-verify"),
            ] {
                if given {
                    bail!(
                        "{flag}: --scene rotating stores no pair list and always verifies its \
                         GPU hits against the CPU's; leave {flag} out"
                    );
                }
            }
        }
        let Some(list) = &self.methods else {
            return Ok(());
        };
        if !spheres {
            for name in list.split(',').map(str::trim) {
                method_for_shape("--methods", name, self.shape)?;
            }
        } else if scene == Some(SceneKind::Rotating) {
            bail!(
                "--methods: --scene rotating runs its two box proxies (conservative sector and \
                 speculative AABB, docs/design.md §5.7), not a list of methods; leave --methods \
                 out"
            );
        }
        Ok(())
    }
}

impl BenchArgs {
    /// What `--resident` cannot go with: other backends, shapes and the rotating scene, and the
    /// options that read pairs or events back.
    fn check_resident(&self, scene: Option<SceneKind>, spheres: bool) -> Result<()> {
        if self.backend.backends() != [Backend::Gpu] {
            bail!("--resident runs the scene on the GPU: add --backend gpu");
        }
        if !spheres || scene == Some(SceneKind::Rotating) {
            bail!("--resident: sphere scenes only (not --shape obb|polygon or --scene rotating)");
        }
        for (given, flag) in [(self.count_only, "--count-only"), (self.events, "--events")] {
            if given {
                bail!(
                    "{flag}: --resident keeps the pairs on the device and reads back only the \
                     totals; leave {flag} out"
                );
            }
        }
        Ok(())
    }
}

/// "1 frame", "10 frames".
/// `3 frames`; under three, the median holds the first frame, which compiles pipelines and
/// grows lists (a GPU's 50 ms frame showed 450 ms at one frame), and the header says so.
fn frames(n: usize) -> String {
    let few = if n < 3 {
        " (the first's set-up in the median: 3 or more for steady times)"
    } else {
        ""
    };
    format!("{n} frame{}{few}", if n == 1 { "" } else { "s" })
}

pub fn exec(a: BenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    a.out.check(&[a.scene_file.as_deref()])?;
    match a.threads {
        Some(n) => sweepfan_cli::run::bench::with_threads(n, || run(a, gpu))?,
        None => run(a, gpu),
    }
}

fn run(a: BenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    if a.events && a.shape == Shape::Sphere && a.scene.0 == SceneKind::Rotating {
        anyhow::bail!(
            "--events: --scene rotating counts candidates and hits per frame and tracks no \
             pair events; leave --events out"
        );
    }
    if a.events && a.shape != Shape::Sphere {
        anyhow::bail!(
            "--events: moving sphere scenes only (bench's box and polygon scenes do not move between \
             frames; in a program, GpuBoxPipeline::track_events gives their events)"
        );
    }
    a.check_used()?;
    if let Some(worlds) = a.worlds {
        return bench_worlds(&a, worlds, gpu);
    }
    if a.shape != Shape::Sphere {
        return bench_boxes(a, gpu);
    }
    if a.scene.0 == SceneKind::Rotating && a.scene_file.is_none() {
        return bench_rotating_scene(&a, gpu);
    }
    let scene = match &a.scene_file {
        Some(path) => Scene::from_csv(path)?,
        None => generated(a.scene.0, &a.params()?)?,
    };
    let mut methods = sweepfan_cli::run::methods::parse_methods(a.methods())
        .map_err(|e| anyhow::anyhow!("--methods {}: {e}", sweepfan::error::shown(a.methods())))?;
    // Brute force at large n takes minutes per frame: only when asked for by name.
    if a.methods().split(',').any(|m| m.trim() == "all") && scene.len() > 50_000 {
        methods.retain(|m| m != "brute_force");
        eprintln!(
            "note: brute_force skipped at n = {} (name it explicitly to run it)",
            scene.len()
        );
    }
    let run = FrameRun {
        frames: a.frames,
        count_frames: a.frames,
        count_only: a.count_only,
        events: a.events,
        untimed: 0,
    };
    let backends = a.backend.backends();
    let bar = progress_bar((methods.len() * backends.len()) as u64);
    let verify = !a.no_verify;
    let gpu_bench = GpuBench {
        scene: &scene,
        methods: &methods,
        frames: a.frames,
        verify,
    };
    let measured = if a.resident {
        measure_resident(&gpu_bench, gpu)
    } else if a.in_flight {
        measure_in_flight(&gpu_bench, a.count_only, gpu)
    } else {
        measure(&scene, &methods, &backends, run, verify, Some(&bar), gpu)
    };
    let (rows, ok) = measured.map_err(|e| {
        // Too many pairs to store: counted alone, they fit.
        if !a.count_only && e.exceeds().is_some_and(sweepfan::Exceeds::is_pair_list) {
            anyhow::anyhow!("{e}; add --count-only to count them")
        } else {
            e.into()
        }
    })?;
    bar.finish_and_clear();
    say!(
        a.out.stdout_taken(),
        "scene {} (n = {}){}, {}, median ms per frame; verified against {}{}",
        scene.name,
        scene.len(),
        if a.resident {
            ", resident on the GPU"
        } else if a.in_flight {
            ", two frames in flight on the GPU"
        } else {
            ""
        },
        frames(run.frames),
        if a.no_verify {
            "nothing"
        } else if scene.len() <= BRUTE_FORCE_REFERENCE_MAX_N {
            "brute_force [cpu]"
        } else {
            "grid [cpu] (the CPU grid itself against sap)"
        },
        if a.count_only && !a.no_verify {
            ", counts only"
        } else {
            ""
        }
    );
    say!(a.out.stdout_taken(), "{}", rows_table(&rows));
    a.out.write(&rows, None)?;
    Ok(ok)
}

/// `bench --scene rotating`: boxes' proxies (conservative sector vs speculative AABB) through the
/// broad phase, then the exact sector-sphere test; candidates and hits per frame.
fn bench_rotating_scene(a: &BenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    let backends = a.backend.backends();
    let ctx = if backends.contains(&Backend::Gpu) {
        Some(gpu.get()?)
    } else {
        None
    };
    let params = RotatingParams::new(a.boxes(), a.n, a.seed);
    let mut rows = match a.body {
        Some(b) => bench_rotating_bodies(&params, b.kind(), a.frames, &backends, ctx.as_deref())?,
        None => bench_rotating(&params, a.frames, &backends, ctx.as_deref())?,
    };
    let what = a.body.map_or("boxes", |b| b.kind().plural());
    for r in rows.iter_mut().filter(|r| r.backend == Backend::Gpu) {
        r.device = gpu.device();
    }
    say!(
        a.out.stdout_taken(),
        "scene rotating: {} {what} among {} spheres, {}; tests = candidate (body, sphere) \
         pairs from the proxy AABBs, pairs = exact conservative-sector hits among them",
        a.boxes(),
        a.n,
        frames(a.frames)
    );
    say!(a.out.stdout_taken(), "{}", rows_table(&rows));
    for &b in &backends {
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
            let change = 100.0 * (1.0 - c / s);
            let (amount, word) = if change >= 0.0 {
                (change, "fewer")
            } else {
                (-change, "more")
            };
            say!(
                a.out.stdout_taken(),
                "[{}] conservative sector: {amount:.1}% {word} candidates than the speculative AABB",
                b.as_str()
            );
        }
    }
    a.out.write(&rows, None)?;
    Ok(rows.iter().all(|r| r.verified != Some(false)))
}

/// `bench --shape obb|polygon`: the box / polygon pipeline per frame on shapes placed like the
/// scene's spheres (polygons: at their x, y).
fn bench_boxes(a: BenchArgs, gpu: &mut LazyGpu) -> Result<bool> {
    if a.scene_file.is_some() {
        let shape_name = a.shape.name();
        bail!("bench --shape {shape_name} takes a generated --scene, not --scene-file");
    }
    let p = a.params()?;
    let kind = a.scene.0;
    let (shapes, scene_name) = match a.shape {
        Shape::Polygon => (
            Shapes::Polygons(generate_polygons(kind, &p)?),
            format!("{}-polygons", kind.name()),
        ),
        // The boxes' own AABBs: the box broad phase alone (docs/design.md §4.7).
        Shape::Aabb => (
            Shapes::Aabbs(generate_boxes(kind, &p).iter().map(|b| b.aabb()).collect()),
            format!("{}-aabbs", kind.name()),
        ),
        _ => (
            Shapes::Boxes(generate_boxes(kind, &p)),
            format!("{}-boxes", kind.name()),
        ),
    };
    let frames_run = a.frames;
    let backends = a.backend.backends();
    let verify = !a.no_verify;
    let (rows, ok) = bench_shapes(
        &shapes,
        &scene_name,
        frames_run,
        &backends,
        a.count_only,
        verify,
        gpu,
    )?;
    say!(
        a.out.stdout_taken(),
        "scene {scene_name} (n = {}), {}, median ms per frame; verified against the CPU pipeline",
        shapes.len(),
        frames(frames_run)
    );
    let mut rows = rows;
    let mut rates = None;
    if a.contacts {
        let (pairs, _) = shapes.cpu()?;
        let template = rows
            .iter()
            .find(|r| r.backend == Backend::Cpu)
            .unwrap_or(&rows[0])
            .clone();
        let ctx = match a.backend.backends().contains(&Backend::Gpu) {
            true => Some(gpu.get()?),
            false => None,
        };
        let on_gpu = ctx.map(|c| (c, gpu.device()));
        let (more, r) = sweepfan_cli::run::contact_bench::bench_contacts(
            &shapes, &pairs, frames_run, &template, on_gpu,
        )?;
        rows.extend(more);
        rates = Some(r);
    }
    say!(a.out.stdout_taken(), "{}", rows_table(&rows));
    if let Some(r) = rates {
        // The contacts rows fill the table's columns with their own counts.
        say!(
            a.out.stdout_taken(),
            "contacts rows: tests/frame = the pairs whose contacts are computed, pairs/frame = \
             their contact points (JSON and CSV: tests_per_frame, pairs_per_frame)"
        );
        say!(a.out.stdout_taken(), "{}", r.summary());
    }
    a.out.write(&rows, None)?;
    Ok(ok)
}

/// `bench --worlds W`: W worlds of --n spheres in one call beside a loop of one call a world.
fn bench_worlds(a: &BenchArgs, worlds: usize, gpu: &mut LazyGpu) -> Result<bool> {
    use sweepfan_cli::run::worlds_bench::{WorldScenes, bench_worlds, worlds_table};
    let backends = a.backend.backends();
    for (given, flag) in [
        (a.scene_file.is_some(), "--scene-file"),
        (a.shape != Shape::Sphere, "--shape obb|polygon|aabb"),
        (a.scene.0 == SceneKind::Rotating, "--scene rotating"),
        (a.resident, "--resident"),
        (a.in_flight, "--in-flight"),
        (a.events, "--events"),
        (a.count_only, "--count-only"),
        (a.out.csv.is_some(), "--csv"),
    ] {
        if given {
            bail!(
                "--worlds: generated sphere scenes, stored pairs and --json only; leave {flag} out"
            );
        }
    }
    // Object indices are u32, u32::MAX reserved.
    let total = worlds
        .checked_mul(a.n)
        .filter(|&t| t < u32::MAX as usize)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--worlds {worlds} x --n {}: more objects than a batch holds (at most 2^32 - 2)",
                a.n
            )
        })?;
    sweepfan_cli::run::scene_size::check_run_size(total, &backends, !a.no_verify).map_err(|e| {
        anyhow::anyhow!(
            "--worlds {worlds} x --n {} = {total} objects: {}",
            a.n,
            e.to_string()
                .replace("use a smaller n", "use fewer --worlds or a smaller --n")
        )
    })?;
    let p = a.params()?;
    let mut scenes = Vec::with_capacity(worlds);
    for k in 0..worlds {
        let params = SceneParams {
            seed: p.seed.wrapping_add(k as u64),
            ..p
        };
        scenes.push(generated(a.scene.0, &params)?);
    }
    let batch = WorldScenes::new(scenes);
    let listed = a.methods.as_deref().unwrap_or("auto,grid,sap");
    let methods = sweepfan_cli::run::methods::parse_methods(listed)
        .map_err(|e| anyhow::anyhow!("--methods {}: {e}", sweepfan::error::shown(listed)))?;
    if let Some(peer) = methods
        .iter()
        .find(|m| registry::PEER_NAMES.contains(&m.as_str()))
    {
        bail!(
            "--methods: {peer} is a peer library, which takes no worlds; --worlds runs sweepfan's own methods and auto"
        );
    }
    let ctx = if backends.contains(&Backend::Gpu) {
        Some(gpu.get()?)
    } else {
        None
    };
    let rows = bench_worlds(&batch, &methods, &backends, ctx, a.frames, !a.no_verify)?;
    say!(
        a.out.stdout_taken(),
        "{worlds} world{} of {} ({} scene, seeds {}..), {} each side after a warm-up call, median ms per call; the loop calls \
         the same method once per world; verified world by world against {}",
        if worlds == 1 { "" } else { "s" },
        a.n,
        a.scene.0.name(),
        p.seed,
        format!("{} call{}", a.frames, if a.frames == 1 { "" } else { "s" }),
        if a.no_verify {
            "nothing"
        } else {
            sweepfan_cli::run::worlds_bench::WORLD_REFERENCE
        }
    );
    say!(a.out.stdout_taken(), "{}", worlds_table(&rows));
    if let Some(path) = &a.out.json {
        // The document every bench writes: `rows` beside the command and the machine.
        use sweepfan_cli::report::rows::{json_document, write_json_value};
        use sweepfan_cli::run::row::Machine;
        let doc = json_document(serde_json::json!({ "machine": Machine::this(), "rows": rows }));
        write_json_value(path, &doc)?;
    }
    Ok(rows.iter().all(|r| r.verified != Some(false)))
}
