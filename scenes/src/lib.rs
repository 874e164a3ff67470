//! Scenes: the paper box and the scenes beyond the paper, all seeded and deterministic, plus CSV
//! scene files.
//!
//! Every scene is a box of walls centred on the origin (or no walls for static scenes) holding
//! spheres that move in straight lines and reflect off the walls. Contacts are detected, never
//! resolved, as in the paper.

pub mod boxes;
pub mod chunks;
pub mod files;
pub mod free_bodies;
pub mod random;
pub mod rotating;
pub mod slice;
pub mod walls;

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use sweepfan::error::Result;
use sweepfan::geom::motion::{density_half_extent, step_in_cube};
use sweepfan::geom::sphere::Sphere;

/// The scene generators (`--scene NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    /// docs/design.md §3.1: cube of side 100 centred on the origin, radius 2, centres in [-48, 48]^3,
    /// velocity components in [-0.5, 0.5] per frame, wall reflection.
    Paper,
    /// Fixed volume fraction: the box grows with n so each sphere keeps the same neighbourhood.
    Density,
    /// Dense clumps (about 64 spheres each) scattered in a box at the density scene's size.
    Clusters,
    /// Centres on the x axis, each touching its neighbours: every object overlaps every other on
    /// y and z, the worst case for a sweep (or a cascade ending) on those axes.
    LineX,
    /// Every centre at the origin: n(n-1)/2 touching pairs.
    OnePoint,
    /// Radii log-uniform in [0.1, 10] in a box at about 5% volume fraction.
    MixedRadii,
    /// The paper box plus one sphere of radius 40 at the centre, touching most others.
    Giant,
    /// Rotating boxes among spheres (docs/design.md §5.7, `sweepfan bench --scene rotating --boxes K`). As
    /// a sphere scene: the spheres of [`crate::rotating::RotatingScene`], without the boxes.
    Rotating,
    /// Sparse and wide (docs/design.md §2.7): 90% of the spheres (radius 0.5) spread over a cube
    /// of side 2e7 centred on the origin, 2^24 cells of side 1 and more per axis; the rest in four
    /// dense clusters (radii 0.05..0.5, one sphere per unit volume), one around the origin.
    Wide,
    /// Grains and boulders (docs/design.md §3.4): grains of radius 1e-3, 200 a unit volume (a
    /// cube of side 10 at n = 200,000, growing with n), [`SceneParams::boulders`] of them
    /// replaced by boulders of radius [`SceneParams::radius`], evenly through the indices: a
    /// few dozen large objects that a sample of the scene misses.
    Boulders,
}

impl SceneKind {
    /// Every generator, in `--help` order.
    pub const ALL: [SceneKind; 10] = [
        SceneKind::Paper,
        SceneKind::Density,
        SceneKind::Clusters,
        SceneKind::LineX,
        SceneKind::OnePoint,
        SceneKind::MixedRadii,
        SceneKind::Giant,
        SceneKind::Rotating,
        SceneKind::Wide,
        SceneKind::Boulders,
    ];

    /// One line on what the generator makes (the CLI's `--scene` help).
    pub fn summary(self) -> &'static str {
        match self {
            SceneKind::Paper => {
                "The paper box: cube of side 100 centred on the origin, radius 2, centres in \
                 [-48, 48]^3, velocity components in [-0.5, 0.5] per frame, wall reflection"
            }
            SceneKind::Density => {
                "Fixed volume fraction: the box grows with n so each sphere keeps the same \
                 neighbourhood"
            }
            SceneKind::Clusters => {
                "Dense clumps (about 64 spheres each) scattered in a box at the density scene's size"
            }
            SceneKind::LineX => {
                "Centres on the x axis, each touching its neighbours: the worst case for a sweep \
                 on y and z"
            }
            SceneKind::OnePoint => "Every centre at the origin: n(n-1)/2 touching pairs",
            SceneKind::MixedRadii => {
                "Radii log-uniform in [0.1, 10] in a box at about 5% volume fraction"
            }
            SceneKind::Giant => {
                "The paper box plus one sphere of radius 40 at the centre, touching most others"
            }
            SceneKind::Rotating => {
                "Rotating boxes among spheres (`bench --scene rotating --boxes K`); as a sphere \
                 scene, its spheres without the boxes"
            }
            SceneKind::Wide => {
                "Sparse and wide: 90% of the spheres (radius 0.5) over a cube of side 2e7, the rest \
                 in four dense clusters (radii 0.05..0.5, one sphere per unit volume)"
            }
            SceneKind::Boulders => {
                "Grains (radius 1e-3, a cube of side 10 at n = 200,000) with 40 boulders of \
                 radius `--radius` among them (`bench --boulders K` sets how many)"
            }
        }
    }

    /// Whether [`SceneParams::radius`] shapes this scene (docs/design.md §3.4); the others fix
    /// their radii, and the CLI refuses `--radius` for them rather than ignore it.
    pub fn uses_radius(self) -> bool {
        matches!(
            self,
            SceneKind::Density | SceneKind::Clusters | SceneKind::LineX | SceneKind::Boulders
        )
    }

    /// Whether [`SceneParams::volume_fraction`] shapes this scene (docs/design.md §3.4).
    pub fn uses_volume_fraction(self) -> bool {
        matches!(self, SceneKind::Density | SceneKind::Clusters)
    }

    /// The name the CLI and reports use (`"mixed-radii"`).
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Paper => "paper",
            SceneKind::Density => "density",
            SceneKind::Clusters => "clusters",
            SceneKind::LineX => "line-x",
            SceneKind::OnePoint => "one-point",
            SceneKind::MixedRadii => "mixed-radii",
            SceneKind::Giant => "giant",
            SceneKind::Rotating => "rotating",
            SceneKind::Wide => "wide",
            SceneKind::Boulders => "boulders",
        }
    }
}

/// Volume fractions accepted for `density` and `clusters` lie strictly between 0 and this: equal
/// spheres cannot fill more than pi / sqrt(18) = 0.7405 of space (docs/design.md §3.4).
pub const MAX_VOLUME_FRACTION: f32 = 0.74;

/// Parameters shared by the generators. Fields a generator does not use are ignored.
#[derive(Clone, Copy, Debug)]
pub struct SceneParams {
    /// Objects.
    pub n: usize,
    /// The generator's seed: the same seed, the same scene.
    pub seed: u64,
    /// Sphere volume / box volume for `density` and `clusters` (default 0.01).
    pub volume_fraction: f32,
    /// Sphere radius for `density`, `clusters` and `line-x`, the boulders' of `boulders`
    /// (default 1.0).
    pub radius: f32,
    /// Boulders among the grains of `boulders` (default 40, at most `n`).
    pub boulders: usize,
}

impl SceneParams {
    /// `n` objects from `seed`, with the default volume fraction (0.01) and radius (1.0).
    pub fn new(n: usize, seed: u64) -> Self {
        Self {
            n,
            seed,
            volume_fraction: 0.01,
            radius: 1.0,
            boulders: 40,
        }
    }
}

/// Half side of the paper's box (cube of side 100, origin at its centre).
pub const PAPER_HALF_EXTENT: f32 = 50.0;
/// The paper's sphere radius.
pub const PAPER_RADIUS: f32 = 2.0;
/// The paper's largest initial velocity component, per frame.
pub const PAPER_MAX_SPEED: f32 = 0.5;
/// Half the side of the wide scene's cube.
pub const WIDE_HALF_EXTENT: f32 = 1e7;

/// A set of spheres with velocities, inside walls at `±half_extent` (when given).
#[derive(Clone, Debug)]
pub struct Scene {
    /// The scene's name (its kind, or the file).
    pub name: String,
    /// The spheres.
    pub spheres: Vec<Sphere>,
    /// One velocity per sphere, per frame.
    pub velocities: Vec<Vec3>,
    /// Walls at `±half_extent` on every axis; `None` for a static scene (file, one-point).
    pub half_extent: Option<f32>,
}

impl Scene {
    /// Generates a scene. `n = 0` gives an empty scene (no pairs in every method; the tool
    /// refuses it as [`Error::EmptyScene`](sweepfan::Error::EmptyScene)).
    pub fn generate(kind: SceneKind, p: &SceneParams) -> Scene {
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let n = p.n;
        // Each generator's layout and per-object draws live in helpers below, shared with
        // `slice::generate_range`, which draws any range of the same objects bit for bit.
        match kind {
            SceneKind::Paper | SceneKind::Giant => {
                let b = MovingBox::paper();
                let (mut spheres, mut velocities) = moving_spheres(&mut rng, n, &b);
                if kind == SceneKind::Giant && n > 0 {
                    // Replace the last sphere so n stays n.
                    spheres[n - 1] = GIANT_SPHERE;
                    velocities[n - 1] = Vec3::ZERO;
                }
                Scene::walled(kind, spheres, velocities, b.half_extent)
            }
            SceneKind::Density => {
                let b = MovingBox::density(p);
                let (spheres, velocities) = moving_spheres(&mut rng, n, &b);
                Scene::walled(kind, spheres, velocities, b.half_extent)
            }
            SceneKind::Clusters => {
                let c = ClusterLayout::new(p);
                let centres: Vec<Vec3> = (0..c.clusters).map(|_| c.centre(&mut rng)).collect();
                let spheres = (0..n)
                    .map(|i| c.sphere_around(&mut rng, centres[i / SPHERES_PER_CLUSTER]))
                    .collect();
                Scene::walled(kind, spheres, vec![Vec3::ZERO; n], c.half_extent)
            }
            SceneKind::LineX => {
                let spheres = (0..n).map(|i| line_x_sphere(p, i)).collect();
                Scene::fixed(kind, spheres)
            }
            SceneKind::Rotating => {
                let r = crate::rotating::RotatingScene::spheres_alone(n, p.seed);
                let half = r.half_extent();
                Scene::walled(kind, r.spheres, vec![Vec3::ZERO; n], half)
            }
            SceneKind::Wide => {
                let w = WideLayout::new(n);
                let spheres = (0..n).map(|i| w.sphere(&mut rng, i)).collect();
                Scene::walled(kind, spheres, vec![Vec3::ZERO; n], WIDE_HALF_EXTENT)
            }
            SceneKind::Boulders => {
                let half = boulders_half_extent(n);
                let spheres = (0..n)
                    .map(|i| boulders_sphere(&mut rng, p, half, i))
                    .collect();
                Scene::walled(kind, spheres, vec![Vec3::ZERO; n], half)
            }
            SceneKind::OnePoint => {
                let spheres = vec![ONE_POINT_SPHERE; n];
                Scene::fixed(kind, spheres)
            }
            SceneKind::MixedRadii => {
                let radii: Vec<f32> = (0..n).map(|_| mixed_radius(&mut rng)).collect();
                let volume: f32 = radii.iter().map(|&r| sphere_volume(r)).sum();
                let half = mixed_radii_half_extent(volume);
                let (spheres, velocities) = radii
                    .iter()
                    .map(|&r| mixed_radii_sphere(&mut rng, half, r))
                    .unzip();
                Scene::walled(kind, spheres, velocities, half)
            }
        }
    }

    fn walled(kind: SceneKind, spheres: Vec<Sphere>, velocities: Vec<Vec3>, half: f32) -> Scene {
        Scene {
            name: kind.name().to_string(),
            spheres,
            velocities,
            half_extent: Some(half),
        }
    }

    fn fixed(kind: SceneKind, spheres: Vec<Sphere>) -> Scene {
        let n = spheres.len();
        Scene {
            name: kind.name().to_string(),
            spheres,
            velocities: vec![Vec3::ZERO; n],
            half_extent: None,
        }
    }

    /// Spheres.
    pub fn len(&self) -> usize {
        self.spheres.len()
    }

    /// Whether there is no sphere.
    pub fn is_empty(&self) -> bool {
        self.spheres.is_empty()
    }

    /// Advances one frame: move by the velocity, then reflect the velocity component of any
    /// sphere that reaches a wall (the sphere is mirrored back inside, so it never leaves the box).
    pub fn step(&mut self) {
        let Some(half) = self.half_extent else {
            return;
        };
        step_in_cube(&mut self.spheres, &mut self.velocities, half);
    }

    /// Reads a CSV scene file: header `x,y,z,r`, one sphere per line. Errors name the 1-based
    /// line (the header is line 1) and the problem: unparsable, NaN, infinite, negative radius,
    /// no sphere at all (named with the file, not as a nameless empty scene later).
    pub fn from_csv(path: &Path) -> Result<Scene> {
        let spheres = files::read_spheres_csv(path)?;
        let path = files::input_name(path);
        if spheres.is_empty() {
            return Err(sweepfan::error::Error::Parse {
                path: path.to_path_buf(),
                line: 2,
                problem: "empty scene: no spheres after the header, a scene needs at least one"
                    .into(),
            });
        }
        Ok(Scene::still(path.display().to_string(), spheres))
    }

    /// A scene of spheres that stay where they are (a file's): no velocities, no walls; it may
    /// be empty.
    pub fn still(name: String, spheres: Vec<Sphere>) -> Scene {
        Scene {
            name,
            velocities: vec![Vec3::ZERO; spheres.len()],
            spheres,
            half_extent: None,
        }
    }

    /// Writes the spheres as a CSV scene file (header `x,y,z,r`), readable by [`Scene::from_csv`].
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        files::write_spheres_csv(path, &self.spheres)
    }
}

/// Where the spheres of the paper, giant and density scenes go (docs/design.md §3.1, §3.4): the
/// walls, the range of the centres' and the velocities' components, the radius.
#[derive(Clone, Copy, Debug)]
struct MovingBox {
    /// Walls at `±half_extent`.
    half_extent: f32,
    /// Centre components are drawn from [-inner, inner].
    inner: f32,
    /// Every sphere's radius.
    radius: f32,
    /// Velocity components are drawn from [-speed, speed].
    speed: f32,
}

impl MovingBox {
    /// The paper box (scenes `paper` and `giant`).
    fn paper() -> Self {
        MovingBox {
            half_extent: PAPER_HALF_EXTENT,
            inner: PAPER_HALF_EXTENT - PAPER_RADIUS,
            radius: PAPER_RADIUS,
            speed: PAPER_MAX_SPEED,
        }
    }

    /// The density scene's box: the side follows from n, the radius and the volume fraction;
    /// velocities up to a quarter radius per frame.
    fn density(p: &SceneParams) -> Self {
        let r = p.radius;
        let half = density_half_extent(p.n, r, p.volume_fraction);
        MovingBox {
            half_extent: half,
            inner: (half - r).max(0.0),
            radius: r,
            speed: 0.25 * r,
        }
    }
}

/// The sphere that replaces the paper box's last sphere in the giant scene.
const GIANT_SPHERE: Sphere = Sphere::new(Vec3::ZERO, 40.0);

/// Every sphere of the one-point scene.
const ONE_POINT_SPHERE: Sphere = Sphere::new(Vec3::ZERO, 1.0);

/// `n` spheres with centres uniform in [-inner, inner]^3, each followed in the stream by its
/// velocity, uniform in [-speed, speed]^3: six draws per sphere.
fn moving_spheres(rng: &mut ChaCha8Rng, n: usize, b: &MovingBox) -> (Vec<Sphere>, Vec<Vec3>) {
    (0..n)
        .map(|_| {
            let c = random::vec3_in(rng, -b.inner..=b.inner);
            (
                Sphere::new(c, b.radius),
                random::vec3_in(rng, -b.speed..=b.speed),
            )
        })
        .unzip()
}

/// Spheres per clump of the clusters scene.
const SPHERES_PER_CLUSTER: usize = 64;

/// The clusters scene's box and clumps: all cluster centres are drawn first (three draws each),
/// then each sphere's offset from its centre, by rejection.
#[derive(Clone, Copy, Debug)]
struct ClusterLayout {
    /// Walls at `±half_extent` (the density scene's size).
    half_extent: f32,
    /// Every sphere's radius.
    radius: f32,
    /// Number of clumps: sphere i belongs to clump `i / SPHERES_PER_CLUSTER`.
    clusters: usize,
    /// Radius of the ball around its centre that holds a clump.
    clump: f32,
    /// Centre components are drawn from [-inner, inner].
    inner: f32,
}

impl ClusterLayout {
    fn new(p: &SceneParams) -> Self {
        let r = p.radius;
        let half = density_half_extent(p.n, r, p.volume_fraction);
        // A clump of 64 spheres of radius r packed in a ball of radius 4r: about 40 contacts
        // per sphere, a locally dense scene inside a sparse one.
        let clump = 4.0 * r;
        ClusterLayout {
            half_extent: half,
            radius: r,
            clusters: p.n.div_ceil(SPHERES_PER_CLUSTER).max(1),
            clump,
            inner: (half - r - clump).max(0.0),
        }
    }

    /// One cluster centre (three draws).
    fn centre(&self, rng: &mut ChaCha8Rng) -> Vec3 {
        random::vec3_in(rng, -self.inner..=self.inner)
    }

    /// One sphere's offset from its cluster centre: uniform in the clump's ball, by rejection
    /// from its cube (three draws per try, so the number of draws varies).
    fn offset(&self, rng: &mut ChaCha8Rng) -> Vec3 {
        let clump = self.clump;
        loop {
            let o = random::vec3_in(rng, -clump..=clump);
            if o.length_squared() <= clump * clump {
                return o;
            }
        }
    }

    /// A sphere of the clump around `centre`.
    fn sphere_around(&self, rng: &mut ChaCha8Rng, centre: Vec3) -> Sphere {
        let offset = self.offset(rng);
        Sphere::new(centre + offset, self.radius)
    }
}

/// Sphere i of the line-x scene: spacing 1.5 r, so each sphere touches its nearest neighbour on
/// either side (1.5 r <= 2 r) and no other (3 r > 2 r): n - 1 pairs.
fn line_x_sphere(p: &SceneParams, i: usize) -> Sphere {
    let r = p.radius;
    let spacing = 1.5 * r;
    let x0 = -0.5 * spacing * p.n as f32;
    Sphere::new(Vec3::new(x0 + spacing * i as f32, 0.0, 0.0), r)
}

/// Grain radius of the boulders scene.
pub const GRAIN_RADIUS: f32 = 1e-3;

/// Half the side of the boulders scene's cube: 5 at n = 200,000, the grains' density kept.
fn boulders_half_extent(n: usize) -> f32 {
    5.0 * (n.max(1) as f32 / 200_000.0).cbrt()
}

/// Sphere i of the boulders scene (three draws, its centre): a boulder where `i` starts one of
/// `p.boulders` equal runs of the indices, else a grain.
fn boulders_sphere(rng: &mut ChaCha8Rng, p: &SceneParams, half: f32, i: usize) -> Sphere {
    let (n, b) = (p.n.max(1) as u128, p.boulders.min(p.n) as u128);
    let boulder = (i as u128 * b).div_ceil(n) != ((i as u128 + 1) * b).div_ceil(n);
    let r = if boulder { p.radius } else { GRAIN_RADIUS };
    Sphere::new(random::vec3_in(rng, -half..=half), r)
}

/// The wide scene's clusters: the first `clustered` spheres (a tenth) go round robin to four
/// cluster centres, the rest spread over the whole cube.
#[derive(Clone, Copy, Debug)]
struct WideLayout {
    /// The four cluster centres, the first at the origin.
    centres: [Vec3; 4],
    /// Spheres `0..clustered` are clustered.
    clustered: usize,
    /// Half side of each cluster's cube.
    cluster_half: f32,
}

impl WideLayout {
    fn new(n: usize) -> Self {
        let half = WIDE_HALF_EXTENT;
        let clustered = n / 10;
        WideLayout {
            centres: [
                Vec3::ZERO,
                Vec3::splat(0.99 * half),
                Vec3::new(-0.4 * half, 0.3 * half, 1e3),
                Vec3::new(0.7 * half, -0.9 * half, -0.5 * half),
            ],
            clustered,
            // One sphere per unit volume in each cluster: about 0.7 contacts per sphere.
            cluster_half: 0.5 * (clustered as f32 / 4.0).cbrt(),
        }
    }

    /// Sphere i: a clustered one draws its radius, then its offset from its cluster centre (four
    /// draws); a sparse one (radius 0.5) its position in the cube (three draws).
    fn sphere(&self, rng: &mut ChaCha8Rng, i: usize) -> Sphere {
        let (centre, spread, r) = if i < self.clustered {
            let r: f32 = rng.random_range(0.05..=0.5);
            (self.centres[i % 4], self.cluster_half, r)
        } else {
            (Vec3::ZERO, WIDE_HALF_EXTENT - 0.5, 0.5)
        };
        let offset = random::vec3_in(rng, -spread..=spread);
        Sphere::new(centre + offset, r)
    }

    /// Draws (32-bit words of the stream) taken by spheres `0..i`.
    fn draws_before(&self, i: usize) -> u128 {
        let clustered = i.min(self.clustered) as u128;
        4 * clustered + 3 * (i as u128 - clustered)
    }
}

/// Radii of the mixed-radii scene are log-uniform in [lo, hi].
const MIXED_RADII: (f32, f32) = (0.1, 10.0);

/// One radius of the mixed-radii scene (one draw). All n radii come first in the stream.
fn mixed_radius(rng: &mut ChaCha8Rng) -> f32 {
    let (lo, hi) = MIXED_RADII;
    let log_r: f32 = rng.random_range(lo.ln()..=hi.ln());
    log_r.exp()
}

/// The volume of a sphere of radius `r` as the mixed-radii scene sums it (f32, in this order).
fn sphere_volume(r: f32) -> f32 {
    4.0 / 3.0 * std::f32::consts::PI * r * r * r
}

/// Half side of the mixed-radii box for spheres of total volume `volume`: about 5% volume
/// fraction, and room for the largest sphere.
fn mixed_radii_half_extent(volume: f32) -> f32 {
    0.5 * (volume / 0.05).cbrt().max(2.0 * MIXED_RADII.1 + 1.0)
}

/// A mixed-radii sphere of radius `r` in the box `±half` (three draws) and its velocity,
/// uniform in [-0.5, 0.5]^3 (three draws).
fn mixed_radii_sphere(rng: &mut ChaCha8Rng, half: f32, r: f32) -> (Sphere, Vec3) {
    let inner = (half - r).max(0.0);
    let c = random::vec3_in(rng, -inner..=inner);
    (Sphere::new(c, r), random::vec3_in(rng, -0.5..=0.5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_inside_the_box() {
        for kind in [
            SceneKind::Paper,
            SceneKind::Density,
            SceneKind::Clusters,
            SceneKind::MixedRadii,
            SceneKind::Giant,
            SceneKind::Wide,
        ] {
            let p = SceneParams::new(2000, 7);
            let a = Scene::generate(kind, &p);
            let b = Scene::generate(kind, &p);
            assert_eq!(a.spheres, b.spheres, "{kind:?}");
            assert_eq!(a.len(), 2000);
            let half = a.half_extent.unwrap();
            for s in &a.spheres {
                assert!(
                    s.center.abs().max_element() + s.radius <= half + 1e-3,
                    "{kind:?}"
                );
            }
        }
    }

    #[test]
    fn paper_scene_matches_the_protocol_and_stays_inside() {
        let mut s = Scene::generate(SceneKind::Paper, &SceneParams::new(500, 1));
        assert!(s.spheres.iter().all(|s| s.radius == 2.0));
        assert!(
            s.spheres
                .iter()
                .all(|s| s.center.abs().max_element() <= 48.0)
        );
        assert!(s.velocities.iter().all(|v| v.abs().max_element() <= 0.5));
        // Over many frames every sphere stays within the walls and speeds never change.
        let speeds: Vec<Vec3> = s.velocities.iter().map(|v| v.abs()).collect();
        for _ in 0..1000 {
            s.step();
        }
        assert!(
            s.spheres
                .iter()
                .all(|s| s.center.abs().max_element() <= 48.0 + 1e-4)
        );
        for (v, sp) in s.velocities.iter().zip(&speeds) {
            assert_eq!(v.abs(), *sp);
        }
    }

    #[test]
    fn density_box_has_the_requested_volume_fraction() {
        let p = SceneParams::new(100_000, 3);
        let s = Scene::generate(SceneKind::Density, &p);
        let side = 2.0 * s.half_extent.unwrap() as f64;
        let vol: f64 = s
            .spheres
            .iter()
            .map(|s| 4.0 / 3.0 * std::f64::consts::PI * (s.radius as f64).powi(3))
            .sum();
        let phi = vol / side.powi(3);
        assert!((phi - 0.01).abs() < 1e-4, "{phi}");
    }

    #[test]
    fn csv_round_trips_exactly() {
        let s = Scene::generate(SceneKind::MixedRadii, &SceneParams::new(300, 9));
        let dir = std::env::temp_dir().join(format!("sweepfan-scene-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.csv");
        s.write_csv(&path).unwrap();
        let back = Scene::from_csv(&path).unwrap();
        assert_eq!(back.spheres, s.spheres);
        std::fs::remove_dir_all(&dir).ok();
    }
}
