//! The scenes of `sweepfan-scenes` in the unit tests. That crate is built on this library, so
//! beside the library under test its shapes are another build's types: these hand over the
//! same values as this build's (docs/design.md §8.1).

use crate::geom::obb::Obb;
use crate::geom::sphere::Sphere;
use glam::Vec3;
pub(crate) use sweepfan_scenes::random::vec3_in;
pub(crate) use sweepfan_scenes::{SceneKind, SceneParams};

/// A generated scene's spheres, velocities and walls, as [`sweepfan_scenes::Scene`] has them.
pub(crate) struct Scene {
    pub spheres: Vec<Sphere>,
    pub velocities: Vec<Vec3>,
    pub half_extent: Option<f32>,
}

impl Scene {
    /// [`sweepfan_scenes::Scene::generate`].
    pub fn generate(kind: SceneKind, params: &SceneParams) -> Scene {
        let scene = sweepfan_scenes::Scene::generate(kind, params);
        Scene {
            spheres: bytemuck::cast_slice(&scene.spheres).to_vec(),
            velocities: scene.velocities,
            half_extent: scene.half_extent,
        }
    }

    /// One frame of motion (the scenes' own step: [`crate::geom::motion::step_in_cube`]).
    pub fn step(&mut self) {
        if let Some(half) = self.half_extent {
            crate::geom::motion::step_in_cube(&mut self.spheres, &mut self.velocities, half);
        }
    }
}

/// [`sweepfan_scenes::boxes::random_boxes`].
pub(crate) fn random_boxes(n: usize, seed: u64) -> Vec<Obb> {
    let boxes = sweepfan_scenes::boxes::random_boxes(n, seed);
    boxes
        .iter()
        .map(|b| Obb {
            center: b.center,
            half_extents: b.half_extents,
            rotation: b.rotation,
        })
        .collect()
}

/// The spheres of the rotating scene of `boxes` boxes and `spheres` spheres from `seed`.
pub(crate) fn rotating_spheres(boxes: usize, spheres: usize, seed: u64) -> Vec<Sphere> {
    let params = sweepfan_scenes::rotating::RotatingParams::new(boxes, spheres, seed);
    let scene = sweepfan_scenes::rotating::RotatingScene::generate(&params).unwrap();
    bytemuck::cast_slice(&scene.spheres).to_vec()
}
