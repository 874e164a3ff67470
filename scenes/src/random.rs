//! Seeded samplers shared by the scene generators and the experiments. Each keeps the exact
//! random stream its scenes were published with (a different algorithm would change every
//! seeded scene and every recorded result), so there is one sampler per distribution, and
//! only here.

use glam::{Quat, Vec2, Vec3};
use rand::distr::uniform::SampleRange;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f32::consts::{PI, TAU};
use sweepfan::geom::obb::Obb;
use sweepfan::geom::sector::Rect2;
use sweepfan::geom::sector::Sector2;
use sweepfan::geom::sector::{Capsule2, Capsule3};
use sweepfan::geom::sector::{RotatingBox, Sector};
use sweepfan::geom::sphere::Sphere;

/// A vector with each component drawn from `range`, x then y then z (the order of three
/// separate draws, so streams are unchanged where this replaced them).
pub fn vec3_in<R: SampleRange<f32> + Clone>(rng: &mut impl Rng, range: R) -> Vec3 {
    let x = rng.random_range(range.clone());
    let y = rng.random_range(range.clone());
    Vec3::new(x, y, rng.random_range(range))
}

/// The rotation list of the experiment: `count` draws of [`random_rotation`] from a ChaCha8
/// generator seeded with `seed`, so CPU and GPU runs score the same rotations.
pub fn random_rotations(count: usize, seed: u64) -> Vec<RotatingBox> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|_| random_rotation(&mut rng)).collect()
}

/// One rotation of the experiment (docs/design.md §5.5, thesis 3.1): O = origin, U uniform on the sphere,
/// Y' uniform perpendicular to U, alpha in [0, 2 pi], |P - O| in [12.5, 25], widths in [0, 25].
pub fn random_rotation(rng: &mut impl Rng) -> RotatingBox {
    let uz: f64 = rng.random_range(-1.0..=1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let s = (1.0 - uz * uz).max(0.0).sqrt();
    let axis = glam::DVec3::new(s * phi.cos(), s * phi.sin(), uz).normalize();
    let b1 = axis.any_orthonormal_vector();
    let b2 = axis.cross(b1);
    let psi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let arm = (b1 * psi.cos() + b2 * psi.sin()).normalize();
    let angle: f32 = rng.random_range(0.0..=TAU);
    let distance: f32 = rng.random_range(12.5..=25.0);
    let widths = vec3_in(rng, 0.0..=25.0);
    RotatingBox {
        origin: Vec3::ZERO,
        axis: axis.as_vec3(),
        arm: arm.as_vec3(),
        distance,
        widths,
        angle,
    }
}

fn v2(rng: &mut ChaCha8Rng, extent: f32) -> Vec2 {
    Vec2::new(
        rng.random_range(-extent..extent),
        rng.random_range(-extent..extent),
    )
}

/// A vector with each component uniform in [-extent, extent).
pub fn v3(rng: &mut ChaCha8Rng, extent: f32) -> Vec3 {
    vec3_in(rng, -extent..extent)
}

/// A random unit vector (rejection sampled from the unit ball, short vectors refused).
pub fn unit3(rng: &mut ChaCha8Rng) -> Vec3 {
    loop {
        let v = v3(rng, 1.0);
        let l = v.length();
        if l > 0.1 && l <= 1.0 {
            return v / l;
        }
    }
}

/// A circle: centre in [-10, 10)^2, radius in [0.5, 3).
pub fn random_circle(rng: &mut ChaCha8Rng) -> (Vec2, f32) {
    (v2(rng, 10.0), rng.random_range(0.5..3.0))
}

/// A 2D capsule: start in [-10, 10)^2, length below 6 in any direction, radius in [0.5, 2).
pub fn random_capsule2(rng: &mut ChaCha8Rng) -> Capsule2 {
    let a = v2(rng, 10.0);
    let b = a + Vec2::from_angle(rng.random_range(0.0..2.0 * PI)) * rng.random_range(0.0..6.0);
    Capsule2::new(a, b, rng.random_range(0.5..2.0))
}

/// A rectangle: centre in [-10, 10)^2, any orientation, half-extents in [0.5, 3).
pub fn random_rect(rng: &mut ChaCha8Rng) -> Rect2 {
    Rect2 {
        center: v2(rng, 10.0),
        axis: Vec2::from_angle(rng.random_range(0.0..2.0 * PI)),
        half_extents: Vec2::new(rng.random_range(0.5..3.0), rng.random_range(0.5..3.0)),
    }
}

/// A 2D sector in its local frame: half-angle in [0, pi), r in [0, 5), R - r in [0.5, 5).
pub fn random_sector2(rng: &mut ChaCha8Rng) -> Sector2 {
    let r = rng.random_range(0.0..5.0);
    Sector2::local(rng.random_range(0.0..PI), r, r + rng.random_range(0.5..5.0))
}

/// A sphere: centre in [-extent, extent)^3, radius in [0.5, 3).
pub fn random_sphere(rng: &mut ChaCha8Rng, extent: f32) -> Sphere {
    Sphere::new(v3(rng, extent), rng.random_range(0.5..3.0))
}

/// A 3D capsule: start in [-10, 10)^3, length below 6 in any direction, radius in [0.5, 2).
pub fn random_capsule3(rng: &mut ChaCha8Rng) -> Capsule3 {
    let a = v3(rng, 10.0);
    Capsule3::new(
        a,
        a + unit3(rng) * rng.random_range(0.0..6.0),
        rng.random_range(0.5..2.0),
    )
}

/// A box: centre in [-10, 10)^3, half-extents in [0.5, 3), any rotation.
pub fn random_box(rng: &mut ChaCha8Rng) -> Obb {
    let rotation = Quat::from_axis_angle(unit3(rng), rng.random_range(0.0..2.0 * PI));
    Obb {
        center: v3(rng, 10.0),
        half_extents: vec3_in(rng, 0.5..3.0),
        rotation,
    }
}

/// A sector at the origin about z, centred on +x: half-angle in [0, pi), r in [0, 5),
/// R - r in [0.5, 5), half-thickness in [0.5, 3).
pub fn random_canonical_sector(rng: &mut ChaCha8Rng) -> Sector {
    let r = rng.random_range(0.0..5.0);
    Sector {
        origin: Vec3::ZERO,
        axis: Vec3::Z,
        centre_axis: Vec3::X,
        half_angle: rng.random_range(0.0..PI),
        inner_radius: r,
        outer_radius: r + rng.random_range(0.5..5.0),
        half_thickness: rng.random_range(0.5..3.0),
    }
}

/// A uniformly distributed unit quaternion (Shoemake's method).
pub fn unit_quaternion(rng: &mut ChaCha8Rng) -> Quat {
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let tau = std::f32::consts::TAU;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    Quat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

/// A uniformly distributed unit vector (z uniform in [-1, 1], azimuth uniform).
pub fn unit_vector(rng: &mut ChaCha8Rng) -> Vec3 {
    let z: f32 = rng.random_range(-1.0..=1.0);
    let phi: f32 = rng.random_range(0.0..TAU);
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vec3::new(s * phi.cos(), s * phi.sin(), z)
}

/// One step of the 64-bit linear congruential generator (Knuth's MMIX constants) that small
/// tests draw from where a seeded `rand` stream is more than they need: the new state, whose
/// high bits are the draw.
pub fn lcg_next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state
}
