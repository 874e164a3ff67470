//! An adversarial scene for the grid: centres within a few ULP of cell walls, where flooring
//! the f32 quotient `(c - m) / s` and the real one disagree (docs/design.md §9.2).

use glam::Vec3;
use sweepfan::geom::sphere::Sphere;

/// The largest `k` with `k s <= d` in real arithmetic (`0 <= d`, `s > 0`, `d / s < 2^25`): the
/// products of a 26-bit integer and a 24-bit significand are exact in f64.
fn real_floor(d: f32, s: f32) -> i64 {
    let (d, s) = (d as f64, s as f64);
    let mut k = (d / s).min(f64::from(1u32 << 25)) as i64;
    while k > 0 && k as f64 * s > d {
        k -= 1;
    }
    while k < 1 << 25 && (k + 1) as f64 * s <= d {
        k += 1;
    }
    k
}

/// Spheres of radius 0.15 (grid side 0.3, not a power of two) along x, at the walls
/// `k s` (k < `walls`) where some centre one to three ULP below the wall has an f32 quotient
/// that rounds up to k: that centre, and the first centre at or past the wall (cell k under
/// both rules) with half the radius. A grid that floors the f32 division disagrees with the
/// real cells on which of these are neighbours. Plus one sphere at the origin (the minimum).
pub fn grid_cell_walls(walls: u32) -> Vec<Sphere> {
    let r = 0.15f32;
    let s = 2.0 * r;
    let mut v = vec![Sphere::new(Vec3::ZERO, r)];
    for k in 1..walls {
        let wall = (k as f64 * s as f64) as f32;
        let mut d = f32::from_bits(wall.to_bits() - 3);
        for _ in 0..6 {
            if ((d / s).floor() as i64) != real_floor(d, s) {
                let mut past = d;
                while real_floor(past, s) < k as i64 {
                    past = f32::from_bits(past.to_bits() + 1);
                }
                v.push(Sphere::new(Vec3::new(d, 0.0, 0.0), r));
                v.push(Sphere::new(Vec3::new(past, 0.1, 0.0), r * 0.5));
            }
            d = f32::from_bits(d.to_bits() + 1);
        }
    }
    v
}
