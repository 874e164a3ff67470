//! `sweepfan scene`: write a generated scene as a file (`--scene-file` of bench, verify, dist;
//! boxes and polygons for `verify --shape`).

use crate::args::values::{self, SceneOption, ignored_by_scene};
use crate::args::{SceneArg, Shape};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use sweepfan_cli::report::scene_file::{FileShape, write_generated};
use sweepfan_cli::run::scene_size::scene_params;
use sweepfan_scenes::SceneKind;

#[derive(Args)]
pub struct SceneArgs {
    /// Generated scene.
    #[arg(long, value_enum, default_value_t = SceneArg(SceneKind::Paper))]
    pub scene: SceneArg,
    /// Objects.
    #[arg(long, default_value_t = 5000, value_parser = values::objects)]
    pub n: usize,
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
    pub seed: u64,
    /// Volume fraction of the density and clusters scenes, in (0, 0.74) [default: 0.01].
    #[arg(long, value_parser = values::volume_fraction)]
    pub volume_fraction: Option<f32>,
    /// Sphere radius of the density, clusters and line-x scenes, the boulders' of the
    /// boulders scene, above 0 [default: 1].
    #[arg(long, value_parser = values::positive_length)]
    pub radius: Option<f32>,
    /// sphere (`x,y,z,r`), obb (boxes placed like the spheres) or polygon (at their x, y).
    #[arg(long, value_enum, default_value_t = Shape::Sphere)]
    pub shape: Shape,
    /// The file to write (`-`: standard output).
    #[arg(long)]
    pub out: PathBuf,
}

/// Bytes per object held while writing: the objects (a sphere and its velocity 28 B, a box
/// 40 B, a polygon's vertices and bounds about 100 B) and room for the writer.
const HOST_BYTES_PER_OBJECT: u64 = 160;

pub fn exec(a: SceneArgs) -> Result<bool> {
    let kind = a.scene.0;
    let spheres = a.shape == Shape::Sphere;
    ignored_by_scene(SceneOption::Radius, a.radius.is_some(), Some(kind), spheres)?;
    let fraction = a.volume_fraction.is_some();
    ignored_by_scene(SceneOption::VolumeFraction, fraction, Some(kind), spheres)?;
    crate::args::check_outputs(&[("--out", Some(&a.out))], &[], &[])?;
    let params = scene_params(
        a.n,
        a.seed,
        a.volume_fraction,
        a.radius,
        HOST_BYTES_PER_OBJECT,
    )?;
    let shape = match a.shape {
        Shape::Sphere => FileShape::Sphere,
        Shape::Obb => FileShape::Obb,
        Shape::Polygon => FileShape::Polygon,
        Shape::Aabb => anyhow::bail!(
            "scene --shape aabb: no file format holds axis-aligned boxes (obb, polygon or sphere)"
        ),
    };
    let n = write_generated(kind, &params, shape, &a.out)?;
    if !sweepfan_cli::report::output::is_stdout(&a.out) {
        crate::args::note(format_args!(
            "sweepfan: wrote {n} {} of the {} scene (seed {}) to {}",
            a.shape.plural(),
            kind.name(),
            a.seed,
            a.out.display()
        ));
    }
    Ok(true)
}
