//! `sweepfan verify`: the touching (or overlapping) pairs of a scene file, written as CSV and
//! checked against the CPU reference.

use crate::args::values::method_for_shape;
use crate::args::{BackendArg, Shape};
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use sweepfan::broadphase::PartsReport;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::registry;
use sweepfan::{Backend, BroadPhase, EventTracker, Pair, Stats, canonicalize};
use sweepfan_cli::report::rows::write_pairs_csv;
use sweepfan_cli::run::bench::{reference_method, resolved_method};
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::verify::{Comparison, compare_pairs};
use sweepfan_cli::run::verify_shapes::Shapes;
use sweepfan_scenes::Scene;
use sweepfan_scenes::files::{
    SphereFile, input_name, read_obbs_csv, read_polygons_csv, read_sphere_file, read_spheres_csv,
};

#[derive(Args)]
pub struct VerifyArgs {
    /// CSV scene file (header x,y,z,r; or x,y,z,r,world: a batch of worlds, a world id per
    /// sphere or `shared`, its pairs written as world,i,j); `-`: standard input. Each value is
    /// read as the nearest f32, and touching is decided exactly on those. A file with no
    /// objects after its header has no pairs.
    #[arg(long)]
    pub scene_file: PathBuf,
    /// Broad-phase method for spheres [default: auto, the method chosen from the scene's
    /// statistics]; --shape obb|polygon run `sap` (an AABB sweep, then SAT) only.
    #[arg(long)]
    pub method: Option<String>,
    /// Where to write the pairs as CSV `i,j` (i < j, sorted; 0-based data-line order).
    #[arg(long)]
    pub pairs_out: PathBuf,
    /// Where to write each pair's contact as CSV (`i,j,nx,ny,nz,depth,count`, then four points
    /// `pKx,pKy,pKz,dK`, empty past count; docs/design.md §4.8): with `--backend cpu` computed
    /// on the CPU from the pairs found, with `--backend gpu` the device's (pairs and contacts in
    /// one frame), checked against the CPU's.
    #[arg(long)]
    pub contacts_out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Cpu))]
    pub backend: BackendArg,
    /// Object shape: `obb` (CSV `cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`) or `polygon` (CSV
    /// `polygon,x,y`) run the SAT pipeline.
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    pub shape: Shape,
    /// The same spheres one frame later (same count, same order; `-`: standard input, unless
    /// --scene-file is): its pairs are verified too, and the frame events between the two files
    /// written to --found-out and --lost-out.
    #[arg(long, requires_all = ["found_out", "lost_out"])]
    pub next_scene_file: Option<PathBuf>,
    /// With --next-scene-file: pairs touching in the next frame and not in the first (CSV i,j).
    #[arg(long, requires = "next_scene_file")]
    pub found_out: Option<PathBuf>,
    /// With --next-scene-file: pairs touching in the first frame and not in the next (CSV i,j).
    #[arg(long, requires = "next_scene_file")]
    pub lost_out: Option<PathBuf>,
}

impl VerifyArgs {
    /// `--method`, or the default: `auto` for spheres, `sap` (the only method of the shape
    /// pipelines) for boxes and polygons.
    pub(crate) fn method(&self) -> &str {
        self.method.as_deref().unwrap_or(match self.shape {
            Shape::Sphere => sweepfan::registry::AUTO,
            _ => crate::args::values::SHAPE_METHOD,
        })
    }
}

impl VerifyArgs {
    /// Whether any output goes to standard output (`-`): the report then goes to standard
    /// error, so that the CSV stays whole.
    pub(crate) fn stdout_taken(&self) -> bool {
        use sweepfan_cli::report::output::is_stdout;
        is_stdout(&self.pairs_out)
            || [&self.contacts_out, &self.found_out, &self.lost_out]
                .into_iter()
                .any(|p| p.as_deref().is_some_and(is_stdout))
    }
}

pub fn exec(a: VerifyArgs, gpu: &mut LazyGpu) -> Result<bool> {
    // Before any file is read: an unknown method, or one the shape does not run, is exit 2
    // naming the methods accepted for that shape (issue 28).
    method_for_shape("--method", a.method(), a.shape)?;
    crate::args::check_outputs(
        &[
            ("--pairs-out", Some(&a.pairs_out)),
            ("--contacts-out", a.contacts_out.as_deref()),
            ("--found-out", a.found_out.as_deref()),
            ("--lost-out", a.lost_out.as_deref()),
        ],
        &[],
        &[Some(&a.scene_file), a.next_scene_file.as_deref()],
    )?;
    if a.shape != Shape::Sphere {
        if a.next_scene_file.is_some() {
            anyhow::bail!("--next-scene-file: sphere scenes only (no frame events for shapes yet)");
        }
        return verify_shapes(a, gpu);
    }
    // The file is read once (standard input and pipes as files): its header says which kind.
    // An empty scene has no pairs, written as a file of none.
    let file = read_sphere_file(&a.scene_file)?;
    // The method's frame and the reference's within memory, as `bench` checks a scene, before
    // either allocates (docs/design.md §9.14).
    let objects = match &file {
        SphereFile::Worlds(spheres, _) | SphereFile::Scene(spheres) => spheres.len(),
    };
    if objects > 0 {
        use sweepfan::broadphase::limits::{HOST_BYTES_PER_OBJECT, check_fits_or};
        let what = format!("{}: {objects} spheres", input_name(&a.scene_file).display());
        check_fits_or(&what, objects as u64 * HOST_BYTES_PER_OBJECT, |usable| {
            format!(
                "a file of at most about {} spheres fits",
                usable / HOST_BYTES_PER_OBJECT
            )
        })?;
    }
    let scene = match file {
        SphereFile::Worlds(spheres, worlds) => {
            return super::verify_worlds::exec(&a, (spheres, worlds), gpu);
        }
        SphereFile::Scene(spheres) => {
            Scene::still(input_name(&a.scene_file).display().to_string(), spheres)
        }
    };
    let backend = a.backend.0;
    let next = match &a.next_scene_file {
        Some(path) => {
            let next = Scene::still(
                input_name(path).display().to_string(),
                read_spheres_csv(path)?,
            );
            if next.len() != scene.len() {
                anyhow::bail!(
                    "--next-scene-file {}: {} spheres, but --scene-file has {}: the two frames \
                     must list the same spheres in the same order",
                    path.display(),
                    next.len(),
                    scene.len()
                );
            }
            Some(next)
        }
        None => None,
    };
    let ctx = match backend {
        Backend::Gpu => Some(gpu.get()?),
        Backend::Cpu => None,
    };
    let mut bp = registry::broad_phase(a.method(), backend, ctx.as_ref())?;
    let software = ctx.as_ref().is_some_and(|c| c.is_software());
    let runs = resolved_method(a.method(), &scene.spheres, backend, software);
    let reference_name = reference_method(&scene.spheres, runs, backend);
    let mut reference = registry::broad_phase(reference_name, Backend::Cpu, None)?;
    let (pairs, expected, stats, cmp) = frame_pairs(bp.as_mut(), reference.as_mut(), &scene)?;
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let mut contacts_ok = true;
    if let Some(path) = &a.contacts_out {
        let mut contacts = Vec::new();
        sweepfan::cpu::contacts::sphere_contacts(&scene.spheres, &pairs, &mut contacts)?;
        match &ctx {
            // On the GPU: the device's contacts of the pairs, checked against the CPU's.
            Some(ctx) => {
                let mut device = Vec::new();
                sweepfan::gpu::GpuContacts::new(ctx)?.contacts(
                    ctx,
                    sweepfan::Shapes::Spheres(&scene.spheres),
                    &pairs,
                    &mut device,
                )?;
                let check = sweepfan::cpu::contacts::compare_contacts(
                    &scene.spheres,
                    &pairs,
                    &device,
                    &contacts,
                );
                contacts_ok = write_checked_contacts(&a, path, &pairs, &device, check)?;
            }
            None => write_contacts(&a, path, "cpu", &pairs, &contacts)?,
        }
    }
    let reported = report(
        &a,
        backend,
        reference_name,
        &pairs,
        &expected,
        &stats,
        &cmp,
        Some(&a.pairs_out),
    );
    let mut ok = contacts_ok && reported;
    if let (Some(next), Some(found_out), Some(lost_out)) = (&next, &a.found_out, &a.lost_out) {
        let (next_pairs, next_expected, next_stats, next_cmp) =
            frame_pairs(bp.as_mut(), reference.as_mut(), next)?;
        say!(a.stdout_taken(), "next frame ({}):", next.name);
        ok &= report(
            &a,
            backend,
            reference_name,
            &next_pairs,
            &next_expected,
            &next_stats,
            &next_cmp,
            None,
        );
        // Within the run's memory budget (a refused copy or event list exits 2, not an abort).
        let mut tracker = EventTracker::new();
        tracker.try_update(&pairs)?;
        drop(pairs);
        let events = tracker.try_update(&next_pairs)?;
        write_pairs_csv(found_out, &events.found)?;
        write_pairs_csv(lost_out, &events.lost)?;
        say_events(
            a.stdout_taken(),
            (events.found.len(), found_out),
            (events.lost.len(), lost_out),
            events.persisting,
        );
    }
    Ok(ok)
}

/// The line that says where a frame's events went: `(count, file)` for the found and the lost.
pub(super) fn say_events(
    taken: bool,
    (found, found_out): (usize, &Path),
    (lost, lost_out): (usize, &Path),
    persisting: u64,
) {
    say!(
        taken,
        "frame events: {found} found (written to {}), {lost} lost (written to {}), {persisting} \
         persisting",
        found_out.display(),
        lost_out.display(),
    );
}

/// One frame's result: its pairs (canonical), the reference's, the method's stats with how it
/// split the frame, and their comparison.
type Frame = (
    Vec<Pair>,
    Vec<Pair>,
    (Stats, Option<PartsReport>),
    Comparison,
);

/// One frame's pairs by the method under test and by the reference, canonical, compared; the
/// stats of the method under test and how it split the frame, if it did.
fn frame_pairs(
    bp: &mut dyn BroadPhase,
    reference: &mut dyn BroadPhase,
    scene: &Scene,
) -> Result<Frame> {
    let mut pairs: Vec<Pair> = Vec::new();
    let stats = (
        bp.find_pairs(&scene.spheres, Some(&mut pairs))
            .map_err(needs_the_list)?,
        bp.diagnostics().and_then(|d| d.parts()),
    );
    canonicalize(&mut pairs);
    let mut expected = Vec::new();
    reference
        .find_pairs(&scene.spheres, Some(&mut expected))
        .map_err(needs_the_list)?;
    canonicalize(&mut expected);
    let cmp = compare_pairs(&scene.spheres, &expected, &pairs);
    Ok((pairs, expected, stats, cmp))
}

/// A pair list past what a call may store, in verify's words: verify compares every pair, so
/// it cannot count them instead; `bench --count-only` can.
fn needs_the_list(e: sweepfan::Error) -> anyhow::Error {
    // The list past the pairs a call may store, or past the memory left for it.
    if !e.exceeds().is_some_and(sweepfan::Exceeds::is_pair_list) {
        return e.into();
    }
    anyhow::anyhow!(
        "{e}; verify compares every pair, so it needs the list: `sweepfan bench --scene-file F \
         --count-only` counts them"
    )
}

/// Prints one frame's result (`written`: where its pairs went); whether it verified.
#[allow(clippy::too_many_arguments)]
fn report(
    a: &VerifyArgs,
    backend: Backend,
    reference_name: &str,
    pairs: &[Pair],
    expected: &[Pair],
    (stats, parts): &(Stats, Option<PartsReport>),
    cmp: &Comparison,
    written: Option<&Path>,
) -> bool {
    let parts = parts.map_or(String::new(), |p| format!(" {}", p.describe()));
    say!(
        a.stdout_taken(),
        "{} [{}]: {} pairs ({} tests){parts}{}; {} [cpu]: {} pairs",
        a.method(),
        backend.as_str(),
        pairs.len(),
        stats.tests,
        written.map_or(String::new(), |p| format!(" written to {}", p.display())),
        reference_name,
        expected.len()
    );
    if let Some(c) = &stats.chosen {
        say!(
            a.stdout_taken(),
            "{} [{}] chose {c}",
            a.method(),
            backend.as_str()
        );
    }
    verdict(
        a.stdout_taken(),
        &cmp.near_touching,
        reference_name,
        (!cmp.is_ok()).then(|| cmp.summary()),
    )
}

/// Prints the pairs that differ near touching (failures too), then "verified" or, given
/// `mismatch` (why the pairs differ), the mismatch; whether it verified.
fn verdict(taken: bool, near: &[Pair], reference_name: &str, mismatch: Option<String>) -> bool {
    for p in near {
        say!(
            taken,
            "differs within 1e-5 of touching (a failure, the touch is exact): {},{}",
            p[0],
            p[1]
        );
    }
    match &mismatch {
        None => say!(taken, "verified: same pairs as {reference_name}"),
        Some(why) => say!(taken, "MISMATCH against {reference_name}: {why}"),
    }
    mismatch.is_none()
}

fn verify_shapes(a: VerifyArgs, gpu: &mut LazyGpu) -> Result<bool> {
    let shapes = match a.shape {
        Shape::Obb => Shapes::Boxes(read_obbs_csv(&a.scene_file)?),
        Shape::Polygon => Shapes::Polygons(read_polygons_csv(&a.scene_file)?),
        Shape::Sphere => unreachable!("spheres take the broad-phase path"),
        Shape::Aabb => anyhow::bail!(
            "verify --shape aabb: no file format holds axis-aligned boxes; `bench --shape aabb` \
             checks the box broad phase against brute force"
        ),
    };
    // With --contacts-out on the GPU, the pairs and their contacts come from one frame.
    let mut device = None;
    let (mut pairs, stats) = match a.backend.0 {
        Backend::Cpu => shapes.cpu()?,
        Backend::Gpu => {
            let mut pipeline = GpuBoxPipeline::new(gpu.get()?, Proxy::Aabb)?;
            let mut out = Vec::new();
            let stats = match &a.contacts_out {
                Some(_) => {
                    let mut contacts = Vec::new();
                    let stats = shapes.gpu_with_contacts(&mut pipeline, &mut out, &mut contacts)?;
                    device = Some(contacts);
                    stats
                }
                None => shapes.gpu(&mut pipeline, Some(&mut out))?,
            };
            (out, stats)
        }
    };
    if device.is_none() {
        canonicalize(&mut pairs);
    }
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let mut contacts_ok = true;
    if let Some(path) = &a.contacts_out {
        let cpu_contacts = shapes.contacts(&pairs)?;
        match device {
            Some(device) => {
                let check = shapes.compare_contacts(&pairs, &device, &cpu_contacts);
                contacts_ok = write_checked_contacts(&a, path, &pairs, &device, check)?;
            }
            None => write_contacts(&a, path, "cpu", &pairs, &cpu_contacts)?,
        }
    }
    let (reference_name, expected) = shapes.reference()?;
    say!(
        a.stdout_taken(),
        "{} [{}]: {} overlapping pairs ({} SAT tests) written to {}; {reference_name} [cpu]: {} pairs",
        shapes.name(),
        a.backend.0.as_str(),
        pairs.len(),
        stats.tests,
        a.pairs_out.display(),
        expected.len()
    );
    let wrong = Shapes::differences(&expected, &pairs);
    Ok(contacts_ok
        && verdict(
            a.stdout_taken(),
            &[],
            reference_name,
            (!wrong.is_empty()).then(|| {
                format!(
                    "{} pairs differ, first {:?}",
                    wrong.len(),
                    &wrong[..wrong.len().min(10)]
                )
            }),
        ))
}

/// Writes the contacts of `pairs` to `path` and says so (with the deepest's depth).
/// Writes the device's contacts and says how they compare with the CPU's; whether they agree.
fn write_checked_contacts(
    a: &VerifyArgs,
    path: &Path,
    pairs: &[Pair],
    device: &[sweepfan::Contact],
    check: sweepfan::cpu::contacts::ContactCheck,
) -> Result<bool> {
    write_contacts(a, path, "gpu", pairs, device)?;
    let taken = a.stdout_taken();
    say!(
        taken,
        "contacts against the CPU's: {} pairs, depths within {:.2e} of the extent (tolerance {:.2e}), {} normals of tied axes differ{}",
        check.pairs,
        check.worst_depth,
        sweepfan::cpu::contacts::CONTACT_REL,
        check.ties,
        match &check.first_wrong {
            Some(w) => format!("; MISMATCH on {} pairs, first {w}", check.wrong),
            None => String::new(),
        }
    );
    Ok(check.wrong == 0)
}

fn write_contacts(
    a: &VerifyArgs,
    path: &Path,
    backend: &str,
    pairs: &[Pair],
    contacts: &[sweepfan::Contact],
) -> Result<()> {
    sweepfan_cli::report::rows::write_contacts_csv(path, pairs, contacts)?;
    let deepest = contacts.iter().map(|c| c.depth).fold(0.0f32, f32::max);
    let points: u64 = contacts.iter().map(|c| c.count as u64).sum();
    say!(
        a.stdout_taken(),
        "contacts [{backend}]: {} contacts, {points} points, deepest {deepest}, written to {}",
        contacts.len(),
        path.display()
    );
    Ok(())
}
