//! Scene `rotating` (docs/design.md §5.7): K rotating boxes (bats, blades) among N moving spheres, and the
//! two proxies a box can offer the broad phase. Seeded and deterministic.
//!
//! Box distributions are the thesis's (3.1) scaled down by 10: |P - O| in [1.25, 2.5], widths in
//! [0, 2.5], axes uniform; the angle per frame is uniform in [0, pi/4]. Spheres have radii in
//! [0.4, 0.6] and move at up to 0.1 per frame, reflecting off the walls of a cube sized for
//! `sphere_density` spheres per unit volume; rotation centres are uniform in the same cube.

use crate::free_bodies::{BodyKind, orientation, random_body};
use crate::random;
use crate::random::vec3_in;
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::f32::consts::{FRAC_PI_4, TAU};
use sweepfan::error::{Error, Result};
use sweepfan::geom::sector::Swept;
use sweepfan::geom::sector::body::RotatingBody;
use sweepfan::geom::sector::{RotatingBox, rodrigues};
use sweepfan::geom::sphere::Sphere;

/// Generation parameters.
#[derive(Clone, Copy, Debug)]
pub struct RotatingParams {
    /// Rotating boxes (or bodies), K.
    pub boxes: usize,
    /// Moving spheres, N.
    pub spheres: usize,
    /// Seed of the ChaCha8 generator.
    pub seed: u64,
    /// Spheres per unit volume; the cube side follows from it (0.1: 1M spheres in a 215 cube).
    pub sphere_density: f32,
}

impl RotatingParams {
    /// `boxes` rotating boxes and `spheres` spheres at the default density (0.1 per unit volume).
    pub fn new(boxes: usize, spheres: usize, seed: u64) -> Self {
        Self {
            boxes,
            spheres,
            seed,
            sphere_density: 0.1,
        }
    }
}

/// Rotating boxes (or any rotating bodies) and spheres in a cube [-half, half]^3.
#[derive(Clone, Debug)]
pub struct RotatingScene<B = RotatingBox> {
    /// The rotating boxes (or bodies): each one's start pose this frame and its turn per frame.
    pub boxes: Vec<B>,
    /// The spheres, at their current positions.
    pub spheres: Vec<Sphere>,
    velocities: Vec<Vec3>,
    half_extent: f32,
}

/// Host bytes a sphere or a box of the scene takes at most, with its pipelines' copies.
const BYTES_PER_OBJECT: u64 = 256;
/// The same for a rotating body: a hull of up to 32 points keeps them and up to 60 face planes.
const BYTES_PER_BODY: u64 = 4096;

/// The cube's half side for the parameters, checked (the rotating objects `bytes_per_box` each).
fn cube_half(p: &RotatingParams, what: &str, bytes_per_box: u64) -> Result<f32> {
    sweepfan::broadphase::limits::check_fits(
        &format!(
            "a rotating scene of {} {what} and {} spheres",
            p.boxes, p.spheres
        ),
        (p.boxes as u64)
            .saturating_mul(bytes_per_box)
            .saturating_add((p.spheres as u64).saturating_mul(BYTES_PER_OBJECT)),
    )?;
    if !(p.sphere_density.is_finite() && p.sphere_density > 0.0) {
        return Err(Error::Config(format!(
            "rotating scene: sphere density must be > 0, got {}",
            p.sphere_density
        )));
    }
    Ok(half_side(p.spheres, p.sphere_density))
}

/// The cube's half side for `spheres` spheres at `sphere_density` (finite, above 0).
fn half_side(spheres: usize, sphere_density: f32) -> f32 {
    (0.5 * (spheres.max(1) as f64 / sphere_density as f64).cbrt()).max(4.0) as f32
}

/// The scene of `boxes` in the cube of half side `half`, with `n` spheres and their velocities
/// drawn after the rotating objects.
fn with_spheres<B>(boxes: Vec<B>, rng: &mut ChaCha8Rng, n: usize, half: f32) -> RotatingScene<B> {
    let mut spheres = Vec::with_capacity(n);
    let mut velocities = Vec::with_capacity(n);
    for _ in 0..n {
        let radius = rng.random_range(0.4..=0.6);
        let l = (half - radius).max(0.0);
        spheres.push(Sphere::new(vec3_in(rng, -l..=l), radius));
        velocities.push(random::unit_vector(rng) * rng.random_range(0.0..=0.1));
    }
    RotatingScene {
        boxes,
        spheres,
        velocities,
        half_extent: half,
    }
}

impl RotatingScene {
    /// The spheres of the scene without boxes, `RotatingParams::new(0, n, seed)` (the same
    /// spheres as [`Self::generate`] makes of it), sized by the caller as every generated sphere
    /// scene is (`Scene::generate`), not against the pipelines' copies.
    pub(crate) fn spheres_alone(n: usize, seed: u64) -> Self {
        let p = RotatingParams::new(0, n, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        with_spheres(Vec::new(), &mut rng, n, half_side(n, p.sphere_density))
    }

    /// Generates the scene; the same parameters always give the same scene.
    pub fn generate(p: &RotatingParams) -> Result<Self> {
        let half = cube_half(p, "boxes", BYTES_PER_OBJECT)?;
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let coord = |rng: &mut ChaCha8Rng, margin: f32| {
            let l = (half - margin).max(0.0);
            vec3_in(rng, -l..=l)
        };
        let boxes = (0..p.boxes)
            .map(|_| {
                let axis = random::unit_vector(&mut rng);
                let arm = rodrigues(
                    axis.any_orthonormal_vector(),
                    axis,
                    rng.random_range(0.0..TAU),
                )
                .normalize();
                RotatingBox {
                    origin: coord(&mut rng, 0.0),
                    axis,
                    arm,
                    distance: rng.random_range(1.25..=2.5),
                    widths: vec3_in(&mut rng, 0.0..=2.5),
                    angle: rng.random_range(0.0..=FRAC_PI_4),
                }
            })
            .collect();
        Ok(with_spheres(boxes, &mut rng, p.spheres, half))
    }
}

impl RotatingScene<RotatingBody> {
    /// The scene with rotating bodies of `kind` in any pose instead of boxes (docs/design.md
    /// §5.8): §5.7's distributions (sizes of `scenes::free_bodies` scaled down by 10, the
    /// body's centre 1.25 to 2.5 from its rotation centre in a uniform direction, a uniform
    /// orientation, an angle per frame of either sign up to pi/4).
    pub fn generate_bodies(p: &RotatingParams, kind: BodyKind) -> Result<Self> {
        let what = kind.plural();
        let half = cube_half(p, what, BYTES_PER_BODY)?;
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let boxes = (0..p.boxes)
            .map(|_| {
                let origin = vec3_in(&mut rng, -half..=half);
                let axis = random::unit_vector(&mut rng);
                let centre = origin + random::unit_vector(&mut rng) * rng.random_range(1.25..=2.5);
                let q = orientation(&mut rng);
                let magnitude = rng.random_range(0.0..=FRAC_PI_4);
                let angle = if rng.random_bool(0.5) {
                    magnitude
                } else {
                    -magnitude
                };
                RotatingBody {
                    body: random_body(&mut rng, kind, centre, q, 0.1),
                    origin,
                    axis,
                    angle,
                }
            })
            .collect();
        Ok(with_spheres(boxes, &mut rng, p.spheres, half))
    }
}

impl<B: Swept> RotatingScene<B> {
    /// Half side of the cube.
    pub fn half_extent(&self) -> f32 {
        self.half_extent
    }

    /// Advances one frame: spheres move and reflect off the walls; each box's or body's start
    /// pose turns by its angle per frame.
    pub fn step(&mut self) {
        let half = self.half_extent;
        sweepfan::geom::motion::step_in_cube(&mut self.spheres, &mut self.velocities, half);
        self.boxes
            .par_iter_mut()
            .with_min_len(4096)
            .for_each(|b| b.advance());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepfan::geom::sector::validate_boxes;

    #[test]
    fn the_sphere_scene_is_the_rotating_scene_without_boxes_and_never_refused() {
        let whole = RotatingScene::generate(&RotatingParams::new(0, 5_000, 3)).unwrap();
        let alone = RotatingScene::spheres_alone(5_000, 3);
        assert_eq!(alone.spheres, whole.spheres);
        assert_eq!(alone.half_extent(), whole.half_extent());
        // Within a budget the pipelines' copies would pass (256 bytes a sphere), the generated
        // sphere scene is made: its caller sized it (it panicked here before).
        let budget =
            sweepfan::Limits::new().with_memory(sweepfan::MemoryBudget::Bytes(100 * 5_000));
        let params = crate::SceneParams::new(5_000, 3);
        let scene = budget.run(|| crate::Scene::generate(crate::SceneKind::Rotating, &params));
        assert_eq!(scene.spheres, whole.spheres);
        assert!(
            budget
                .run(|| RotatingScene::generate(&RotatingParams::new(0, 5_000, 3)))
                .is_err()
        );
    }

    #[test]
    fn generation_is_deterministic_and_inside_the_cube() {
        let p = RotatingParams::new(200, 1_000, 7);
        let a = RotatingScene::generate(&p).unwrap();
        let b = RotatingScene::generate(&p).unwrap();
        assert_eq!(a.boxes, b.boxes);
        assert_eq!(a.spheres, b.spheres);
        let c = RotatingScene::generate(&RotatingParams::new(200, 1_000, 8)).unwrap();
        assert_ne!(a.spheres, c.spheres);
        validate_boxes(&a.boxes).unwrap();
        let h = a.half_extent();
        // 1000 spheres at density 0.1: a cube of side 21.5.
        assert!((h - 0.5 * 10_000f32.cbrt()).abs() < 1e-3, "{h}");
        let mut s = a.clone();
        for _ in 0..50 {
            s.step();
        }
        validate_boxes(&s.boxes).unwrap();
        assert!(s.spheres.iter().all(|x| x.center.abs().max_element() <= h));
        assert_ne!(s.spheres, a.spheres);
        // Each step turns a box's arm by its angle.
        let (b0, b1) = (&a.boxes[0], &s.boxes[0]);
        let turned = rodrigues(b0.arm, b0.axis, 50.0 * b0.angle);
        assert!((turned - b1.arm).length() < 1e-3);
    }

    #[test]
    fn bad_boxes_and_density_are_clear_errors() {
        let mut p = RotatingParams::new(1, 1, 1);
        p.sphere_density = 0.0;
        assert!(RotatingScene::generate(&p).is_err());
        let good = RotatingScene::generate(&RotatingParams::new(3, 1, 1)).unwrap();
        let mut boxes = good.boxes.clone();
        boxes[2].widths.x = -1.0;
        let e = validate_boxes(&boxes).unwrap_err();
        assert!(matches!(e, Error::InvalidObject { index: 2, .. }), "{e}");
        let mut boxes = good.boxes.clone();
        boxes[1].arm = boxes[1].axis;
        assert!(validate_boxes(&boxes).is_err());
        let mut boxes = good.boxes;
        boxes[0].origin.x = f32::NAN;
        assert!(validate_boxes(&boxes).is_err());
    }
}
