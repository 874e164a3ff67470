//! `sweepfan scene`: a generated scene written in the file format `--scene-file` reads (spheres
//! `x,y,z,r`, boxes `cx,..,qz`, polygons `polygon,x,y`; docs/design.md §3.4), so that every
//! command taking a file can be tried on any generated scene, and the same objects given to
//! other tools.

use crate::report::output::write_with;
use std::path::Path;
use sweepfan::error::Result;
use sweepfan_scenes::boxes::{generate_boxes, generate_polygons};
use sweepfan_scenes::files::{obbs_csv, polygons_csv, spheres_csv};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Which objects a scene file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileShape {
    /// Spheres: the generator's own objects.
    Sphere,
    /// Oriented boxes placed like the scene's spheres (as `bench --shape obb`).
    Obb,
    /// Convex polygons at the spheres' x, y (as `bench --shape polygon`).
    Polygon,
}

/// Generates `kind` with `params` and writes it to `path` (`-`: standard output; a regular file
/// atomically, see [`write_with`]). Returns the number of objects written.
pub fn write_generated(
    kind: SceneKind,
    params: &SceneParams,
    shape: FileShape,
    path: &Path,
) -> Result<usize> {
    let buffered = |fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        write_with(path, |w| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
            fill(&mut w)?;
            std::io::Write::flush(&mut w)
        })
    };
    match shape {
        // Nothing is written that the file's readers would refuse (`--radius 1e30` wrote a
        // scene that `verify` then refused): the generator's rule, as bench applies it.
        FileShape::Sphere => {
            let scene = Scene::generate(kind, params);
            crate::run::scene_size::check_generated(kind, params, &scene.spheres, 0)?;
            buffered(&|w| spheres_csv(w, &scene.spheres))?;
            Ok(scene.len())
        }
        FileShape::Obb => {
            let boxes = generate_boxes(kind, params);
            crate::run::scene_size::check_generated_with(kind, params, &boxes)?;
            buffered(&|w| obbs_csv(w, &boxes))?;
            Ok(boxes.len())
        }
        FileShape::Polygon => {
            let polygons = generate_polygons(kind, params)?;
            buffered(&|w| polygons_csv(w, &polygons))?;
            Ok(polygons.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepfan_scenes::files::{read_obbs_csv, read_polygons_csv, read_spheres_csv};

    #[test]
    fn every_shape_reads_back_as_generated() {
        let dir = crate::run::test_dir("scene-file");
        let p = SceneParams::new(300, 7);
        for kind in [SceneKind::Clusters, SceneKind::MixedRadii, SceneKind::LineX] {
            let f = dir.join(format!("{}.csv", kind.name()));
            assert_eq!(
                write_generated(kind, &p, FileShape::Sphere, &f).unwrap(),
                300
            );
            let back = read_spheres_csv(&f).unwrap();
            assert_eq!(back, Scene::generate(kind, &p).spheres, "{}", kind.name());
            assert_eq!(write_generated(kind, &p, FileShape::Obb, &f).unwrap(), 300);
            assert_eq!(read_obbs_csv(&f).unwrap(), generate_boxes(kind, &p));
            assert_eq!(
                write_generated(kind, &p, FileShape::Polygon, &f).unwrap(),
                300
            );
            let polygons = read_polygons_csv(&f).unwrap();
            let expected = generate_polygons(kind, &p).unwrap();
            assert_eq!(polygons.len(), expected.len());
            for (a, b) in polygons.iter().zip(&expected) {
                assert_eq!(a.vertices(), b.vertices());
            }
        }
        // The wide scene: spheres and boxes, and a clear refusal for polygons (radius 1 at
        // coordinates near 1e7 collapses in f32), the file left unwritten.
        let f = dir.join("wide.csv");
        assert_eq!(
            write_generated(SceneKind::Wide, &p, FileShape::Obb, &f).unwrap(),
            300
        );
        std::fs::remove_file(&f).unwrap();
        let e = write_generated(SceneKind::Wide, &p, FileShape::Polygon, &f).unwrap_err();
        assert!(
            e.to_string()
                .contains("the wide scene cannot be made of polygons"),
            "{e}"
        );
        assert!(!f.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
