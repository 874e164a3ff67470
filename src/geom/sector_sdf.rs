//! The exact signed distance of an annular sector (SPEC 4.3): a 2D ring-sector distance in the
//! sector's plane, extruded by the half-thickness h along U. Sphere vs sector is then
//! `distance(centre) <= radius`, exact and without case analysis. `shaders/sector_sphere.wgsl`
//! mirrors these functions line by line.
//!
//! Free functions (not `impl Sector`) so they cannot collide with the sector tests of seed 003
//! chapter 2 that live beside `Sector`.

use crate::geom::sector::Sector;
use glam::{Vec2, Vec3};

/// Signed distance from the local 2D point (x along A, y along K) to the ring sector of
/// half-angle `theta` and radii `r <= outer`: negative inside.
pub fn ring_sector_distance(x: f32, y: f32, r: f32, outer: f32, theta: f32) -> f32 {
    // The shape is symmetric about the centre axis: fold y >= 0; the nearest boundary point of
    // a point in the upper half is then on the upper edge.
    let p = Vec2::new(x, y.abs());
    let rho = p.length();
    if theta >= std::f32::consts::PI {
        // Full ring (or disk when r = 0, whose centre is not a boundary point).
        return if r > 0.0 {
            (r - rho).max(rho - outer)
        } else {
            rho - outer
        };
    }
    let (s, c) = theta.sin_cos();
    let edge = Vec2::new(c, s);
    // Same angular test as `Sector::contains_local`.
    let in_wedge = p.x >= c * rho;
    // Nearest point on the straight edge from r e to R e.
    let t = p.dot(edge).clamp(r, outer);
    let to_edge = (p - t * edge).length();
    // Inside the wedge the nearest arc points are radial; outside, they are the arc ends,
    // which are the edge's end points (already in `to_edge`).
    let to_arcs = if in_wedge {
        (rho - r).abs().min((rho - outer).abs())
    } else {
        f32::INFINITY
    };
    let d = to_edge.min(to_arcs);
    if in_wedge && rho >= r && rho <= outer {
        -d
    } else {
        d
    }
}

/// Extrusion of a 2D signed distance `d2` by half-thickness h at height z: exact.
#[inline]
pub fn extrude(d2: f32, z: f32, h: f32) -> f32 {
    let dz = z.abs() - h;
    d2.max(dz).min(0.0) + Vec2::new(d2.max(0.0), dz.max(0.0)).length()
}

/// Signed distance from a world point to the sector (negative inside).
pub fn sector_signed_distance(s: &Sector, p: Vec3) -> f32 {
    let q = s.to_local(p);
    let d2 = ring_sector_distance(q.x, q.y, s.inner_radius, s.outer_radius, s.half_angle);
    extrude(d2, q.z, s.half_thickness)
}

/// Exact sphere overlap (touching counts): signed distance of the centre <= radius.
pub fn sector_overlaps_sphere(s: &Sector, center: Vec3, radius: f32) -> bool {
    sector_signed_distance(s, center) <= radius
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::f32::consts::{PI, TAU};

    fn random_sector(rng: &mut ChaCha8Rng) -> Sector {
        let axis = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize();
        let a = crate::geom::sector::rodrigues(
            axis.any_orthonormal_vector(),
            axis,
            rng.random_range(0.0..TAU),
        )
        .normalize();
        let r = if rng.random_bool(0.2) {
            0.0
        } else {
            rng.random_range(0.0..5.0)
        };
        let half_angle = match rng.random_range(0..6) {
            0 => PI,
            1 => rng.random_range(0.0..0.05),
            _ => rng.random_range(0.0..PI),
        };
        Sector::new(
            Vec3::new(1.0, -2.0, 0.5),
            axis,
            a,
            half_angle,
            r,
            r + rng.random_range(0.0..6.0),
            rng.random_range(0.0..3.0),
        )
        .unwrap()
    }

    /// Points of the sector on a polar grid in local coordinates, and the grid's covering
    /// radius (every point of the sector is within it of a sample).
    fn samples(s: &Sector) -> (Vec<Vec3>, f32) {
        let (nr, na, nz) = (24, 160, 12);
        let theta = s.half_angle.min(PI);
        let mut out = Vec::new();
        for i in 0..=nr {
            let rho = s.inner_radius + (s.outer_radius - s.inner_radius) * i as f32 / nr as f32;
            for j in 0..=na {
                let phi = -theta + 2.0 * theta * j as f32 / na as f32;
                for k in 0..=nz {
                    let z = -s.half_thickness + 2.0 * s.half_thickness * k as f32 / nz as f32;
                    out.push(s.to_world(Vec3::new(rho * phi.cos(), rho * phi.sin(), z)));
                }
            }
        }
        let dr = (s.outer_radius - s.inner_radius) / nr as f32;
        let da = s.outer_radius * 2.0 * theta / na as f32;
        let dz = 2.0 * s.half_thickness / nz as f32;
        (out, 0.5 * (dr * dr + da * da + dz * dz).sqrt())
    }

    #[test]
    fn sphere_test_agrees_with_dense_sampling_of_the_sector() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..60 {
            let s = random_sector(&mut rng);
            let (pts, cover) = samples(&s);
            for _ in 0..60 {
                let c = s.origin
                    + Vec3::new(
                        rng.random_range(-14.0..14.0),
                        rng.random_range(-14.0..14.0),
                        rng.random_range(-14.0..14.0),
                    );
                let radius = rng.random_range(0.0..6.0);
                // Distance from c to the sampled solid bounds the true distance within `cover`
                // (and is exactly 0-ish when c is inside).
                let sampled = pts
                    .iter()
                    .map(|p| (*p - c).length())
                    .fold(f32::MAX, f32::min);
                let inside = s.contains_point(c);
                let got = sector_overlaps_sphere(&s, c, radius);
                let d = sector_signed_distance(&s, c);
                if inside {
                    assert!(got && d <= 1e-4, "{s:?} {c} d = {d}");
                    hits += 1;
                    continue;
                }
                // Exterior distance: between sampled - cover and sampled.
                assert!(
                    d <= sampled + 1e-3 && d >= sampled - cover - 1e-3,
                    "{s:?} {c}: sdf {d}, sampled {sampled}, cover {cover}"
                );
                if sampled <= radius - 1e-3 {
                    assert!(got);
                    hits += 1;
                } else if sampled - cover > radius + 1e-3 {
                    assert!(!got);
                    misses += 1;
                }
            }
        }
        assert!(hits > 200 && misses > 1_000, "{hits} {misses}");
    }

    /// Points on the sector's boundary surface (caps, inner and outer cylinders, side faces),
    /// and the grid's covering radius on that surface.
    fn boundary_samples(s: &Sector) -> (Vec<Vec3>, f32) {
        let n = 48;
        let theta = s.half_angle.min(PI);
        let (r, rr, h) = (s.inner_radius, s.outer_radius, s.half_thickness);
        let lerp = |a: f32, b: f32, i: usize| a + (b - a) * i as f32 / n as f32;
        let polar =
            |rho: f32, phi: f32, z: f32| s.to_world(Vec3::new(rho * phi.cos(), rho * phi.sin(), z));
        let mut out = Vec::new();
        for i in 0..=n {
            for j in 0..=n {
                let phi = lerp(-theta, theta, j);
                for z in [-h, h] {
                    out.push(polar(lerp(r, rr, i), phi, z)); // caps
                }
                let z = lerp(-h, h, i);
                if r > 0.0 || theta < PI {
                    out.push(polar(r, phi, z)); // inner cylinder (the apex edge when r = 0)
                }
                out.push(polar(rr, phi, z)); // outer cylinder
                if theta < PI {
                    for side in [-theta, theta] {
                        out.push(polar(lerp(r, rr, j), side, z)); // side faces
                    }
                }
            }
        }
        let step = ((rr - r).max(2.0 * h).max(2.0 * theta * rr)) / n as f32;
        (out, step * std::f32::consts::FRAC_1_SQRT_2)
    }

    #[test]
    fn interior_distance_is_the_depth_to_the_nearest_face() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        let mut checked = 0;
        for _ in 0..40 {
            let s = random_sector(&mut rng);
            let (pts, _) = samples(&s);
            let (boundary, cover) = boundary_samples(&s);
            for p in pts.iter().step_by(97) {
                if !s.contains_point(*p) {
                    continue;
                }
                // The depth is the distance to the boundary surface, which the samples bound
                // within their covering radius.
                let depth = -sector_signed_distance(&s, *p);
                let sampled = boundary
                    .iter()
                    .map(|b| (*b - *p).length())
                    .fold(f32::MAX, f32::min);
                assert!(
                    depth <= sampled + 1e-4 && depth >= sampled - cover - 1e-4,
                    "{s:?} {p}: depth {depth}, sampled {sampled}, cover {cover}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn ring_sector_distance_known_values() {
        // Quarter-width sector of radii 1..2 around +x, half-angle 45 degrees.
        let t = PI / 4.0;
        assert!((ring_sector_distance(1.5, 0.0, 1.0, 2.0, t) + 0.5).abs() < 1e-6);
        assert!((ring_sector_distance(3.0, 0.0, 1.0, 2.0, t) - 1.0).abs() < 1e-6);
        assert!((ring_sector_distance(0.0, 0.0, 1.0, 2.0, t) - 1.0).abs() < 1e-6);
        // Straight below the lower edge's far end at (sqrt2, -sqrt2) moved out by 1 along -y:
        // nearest point is that corner.
        let c = 2.0 * t.cos();
        assert!((ring_sector_distance(c, -c - 1.0, 1.0, 2.0, t) - 1.0).abs() < 1e-5);
        // Full ring and disk.
        assert!((ring_sector_distance(-3.0, 0.0, 1.0, 2.0, PI) - 1.0).abs() < 1e-6);
        assert!((ring_sector_distance(0.0, 0.0, 0.0, 2.0, PI) + 2.0).abs() < 1e-6);
        // Extrusion: above a point of the face at depth 0.5, height 2 over h = 1.
        assert!((extrude(-0.5, 2.0, 1.0) - 1.0).abs() < 1e-6);
        assert!((extrude(3.0, 5.0, 1.0) - 5.0).abs() < 1e-6);
    }
}
