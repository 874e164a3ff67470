//! Random rotating bodies in any pose for the generalised sector experiment (docs/design.md
//! §5.8), in the thesis's size range: O at the origin, U uniform on the sphere, |alpha| uniform
//! in [0, 2 pi] with either sign, the body's centre 12.5 to 25 from O in a uniform direction, a
//! uniform orientation, and sizes up to 25 (box widths in [0, 25]; capsules, cylinders and the
//! boxes that hull points are drawn in no longer than that).

use crate::random::vec3_in;
use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::f32::consts::TAU;
use sweepfan::geom::obb::ObbFrame;
use sweepfan::geom::sector::body::{ConvexBody, ConvexHull, Cylinder, RotatingBody};

/// The body kinds of `reproduce sector --body` and `bench --scene rotating --body`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyKind {
    /// An oriented box.
    Box,
    /// A capsule: the points within a radius of a segment.
    Capsule,
    /// A solid right circular cylinder.
    Cylinder,
    /// The convex hull of 8 to 32 random points in a box.
    Hull,
}

impl BodyKind {
    /// Every kind, in report order.
    pub const ALL: [BodyKind; 4] = [
        BodyKind::Box,
        BodyKind::Capsule,
        BodyKind::Cylinder,
        BodyKind::Hull,
    ];

    /// The kind's name in options and reports (`box`, `capsule`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BodyKind::Box => "box",
            BodyKind::Capsule => "capsule",
            BodyKind::Cylinder => "cylinder",
            BodyKind::Hull => "hull",
        }
    }

    /// The plural of [`Self::name`] ("boxes", not "boxs").
    pub fn plural(self) -> &'static str {
        match self {
            BodyKind::Box => "boxes",
            BodyKind::Capsule => "capsules",
            BodyKind::Cylinder => "cylinders",
            BodyKind::Hull => "hulls",
        }
    }
}

fn unit(rng: &mut impl Rng) -> Vec3 {
    let z: f32 = rng.random_range(-1.0..=1.0);
    let phi: f32 = rng.random_range(0.0..TAU);
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vec3::new(s * phi.cos(), s * phi.sin(), z).normalize()
}

/// A uniform random orientation.
pub fn orientation(rng: &mut impl Rng) -> Quat {
    // Uniform on SO(3): a uniform axis, and an angle with density (1 - cos) / pi, by rejection.
    loop {
        let angle: f32 = rng.random_range(0.0..std::f32::consts::PI);
        if rng.random_range(0.0..2.0) <= 1.0 - angle.cos() {
            return Quat::from_axis_angle(unit(rng), angle);
        }
    }
}

/// A body of `kind` centred at `center`, oriented by `q`, its sizes times `scale`.
pub fn random_body(
    rng: &mut impl Rng,
    kind: BodyKind,
    center: Vec3,
    q: Quat,
    scale: f32,
) -> ConvexBody {
    let axes = [q * Vec3::X, q * Vec3::Y, q * Vec3::Z];
    let s = scale;
    match kind {
        BodyKind::Box => ConvexBody::Box(ObbFrame::from_parts(
            center,
            axes,
            0.5 * s * vec3_in(rng, 0.0..=25.0),
        )),
        BodyKind::Capsule => {
            let radius = rng.random_range(0.25..=6.25);
            let half = 0.5 * s * rng.random_range(0.0..=25.0 - 2.0 * radius);
            let radius = s * radius;
            ConvexBody::Capsule {
                a: center - axes[2] * half,
                b: center + axes[2] * half,
                radius,
            }
        }
        BodyKind::Cylinder => ConvexBody::Cylinder(Cylinder {
            center,
            axis: axes[2],
            radius: s * rng.random_range(0.0..=12.5),
            half_height: s * rng.random_range(0.0..=12.5),
        }),
        BodyKind::Hull => loop {
            let half = 0.5 * s * vec3_in(rng, 0.0..=25.0);
            let n = rng.random_range(8..=32);
            let pts: Vec<Vec3> = (0..n)
                .map(|_| {
                    let l = Vec3::new(
                        rng.random_range(-half.x..=half.x),
                        rng.random_range(-half.y..=half.y),
                        rng.random_range(-half.z..=half.z),
                    );
                    center + q * l
                })
                .collect();
            // Coplanar draws (measure zero) are drawn again.
            if let Ok(h) = ConvexHull::new(&pts) {
                break ConvexBody::Hull(h);
            }
        },
    }
}

/// One rotation of the generalised experiment.
pub fn random_free_rotation(rng: &mut impl Rng, kind: BodyKind) -> RotatingBody {
    let axis = unit(rng);
    let magnitude: f32 = rng.random_range(0.0..=TAU);
    let angle = if rng.random_bool(0.5) {
        magnitude
    } else {
        -magnitude
    };
    let distance: f32 = rng.random_range(12.5..=25.0);
    let center = unit(rng) * distance;
    let q = orientation(rng);
    RotatingBody {
        body: random_body(rng, kind, center, q, 1.0),
        origin: Vec3::ZERO,
        axis,
        angle,
    }
}

/// The generator of the rotations of `kind` from `seed` ([`random_free_rotation`] after
/// another): the same list on every backend.
pub fn free_rotations_rng(seed: u64, kind: BodyKind) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (0xB0D1 + kind as u64))
}

/// The first `count` rotations of `kind` from `seed`.
pub fn random_free_rotations(count: usize, seed: u64, kind: BodyKind) -> Vec<RotatingBody> {
    let mut rng = free_rotations_rng(seed, kind);
    (0..count)
        .map(|_| random_free_rotation(&mut rng, kind))
        .collect()
}
