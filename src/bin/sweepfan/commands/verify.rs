//! `sweepfan verify`: the touching (or overlapping) pairs of a scene file, written as CSV and
//! checked against the CPU reference.

use crate::args::{BackendArg, Shape};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::report::rows::write_pairs_csv;
use sweepfan::run::bench::reference_method;
use sweepfan::run::gpu::LazyGpu;
use sweepfan::run::registry;
use sweepfan::run::verify::compare_pairs;
use sweepfan::run::verify_shapes::Shapes;
use sweepfan::scenes::files::{read_obbs_csv, read_polygons_csv};
use sweepfan::{Backend, Pair, Scene, canonicalize};

#[derive(Args)]
pub struct VerifyArgs {
    /// CSV scene file (header x,y,z,r).
    #[arg(long)]
    pub scene_file: PathBuf,
    #[arg(long, default_value = "sap")]
    pub method: String,
    /// Where to write the pairs as CSV `i,j` (i < j, sorted; 0-based data-line order).
    #[arg(long)]
    pub pairs_out: PathBuf,
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Cpu))]
    pub backend: BackendArg,
    /// Object shape: `obb` (CSV `cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`) or `polygon` (CSV
    /// `polygon,x,y`) run the SAT pipeline.
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    pub shape: Shape,
}

pub fn exec(a: VerifyArgs, gpu: &mut LazyGpu) -> Result<bool> {
    crate::args::check_outputs(
        &[("--pairs-out", Some(&a.pairs_out))],
        &[],
        &[Some(&a.scene_file)],
    )?;
    if a.shape != Shape::Sphere {
        return verify_shapes(a, gpu);
    }
    let backend = a.backend.0;
    let scene = Scene::from_csv(&a.scene_file)?;
    let ctx = match backend {
        Backend::Gpu => Some(gpu.get()?),
        Backend::Cpu => None,
    };
    let mut bp = registry::broad_phase(&a.method, backend, ctx.as_ref())?;
    let mut pairs: Vec<Pair> = Vec::new();
    let stats = bp.find_pairs(&scene.spheres, Some(&mut pairs))?;
    canonicalize(&mut pairs);
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let reference_name = reference_method(scene.len(), &a.method);
    let mut reference = registry::broad_phase(reference_name, Backend::Cpu, None)?;
    let mut expected = Vec::new();
    reference.find_pairs(&scene.spheres, Some(&mut expected))?;
    canonicalize(&mut expected);
    let cmp = compare_pairs(&scene.spheres, &expected, &pairs);
    say!(
        sweepfan::report::output::is_stdout(&a.pairs_out),
        "{} [{}]: {} pairs ({} tests) written to {}; {} [cpu]: {} pairs",
        a.method,
        backend.as_str(),
        pairs.len(),
        stats.tests,
        a.pairs_out.display(),
        reference_name,
        expected.len()
    );
    for p in &cmp.near_touching {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "near touching (allowed to differ): {},{}",
            p[0],
            p[1]
        );
    }
    if cmp.is_ok() {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "verified: same pairs as {reference_name}"
        );
    } else {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "MISMATCH against {reference_name}: {}",
            cmp.summary()
        );
    }
    Ok(cmp.is_ok())
}

fn verify_shapes(a: VerifyArgs, gpu: &mut LazyGpu) -> Result<bool> {
    let shapes = match a.shape {
        Shape::Obb => Shapes::Boxes(read_obbs_csv(&a.scene_file)?),
        Shape::Polygon => Shapes::Polygons(read_polygons_csv(&a.scene_file)?),
        Shape::Sphere => unreachable!("spheres take the broad-phase path"),
    };
    let (mut pairs, stats) = match a.backend.0 {
        Backend::Cpu => shapes.cpu()?,
        Backend::Gpu => {
            let mut pipeline = GpuBoxPipeline::new(gpu.get()?, Proxy::Aabb)?;
            let mut out = Vec::new();
            let stats = shapes.gpu(&mut pipeline, Some(&mut out))?;
            (out, stats)
        }
    };
    canonicalize(&mut pairs);
    write_pairs_csv(&a.pairs_out, &pairs)?;
    let (reference_name, expected) = shapes.reference()?;
    say!(
        sweepfan::report::output::is_stdout(&a.pairs_out),
        "{} [{}]: {} overlapping pairs ({} SAT tests) written to {}; {reference_name} [cpu]: {} pairs",
        shapes.name(),
        a.backend.0.as_str(),
        pairs.len(),
        stats.tests,
        a.pairs_out.display(),
        expected.len()
    );
    let (near, wrong) = shapes.differences(&expected, &pairs);
    for p in &near {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "near touching (allowed to differ): {},{}",
            p[0],
            p[1]
        );
    }
    if wrong.is_empty() {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "verified: same pairs as {reference_name}"
        );
        Ok(true)
    } else {
        say!(
            sweepfan::report::output::is_stdout(&a.pairs_out),
            "MISMATCH against {reference_name}: {} pairs differ, first {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(10)]
        );
        Ok(false)
    }
}
