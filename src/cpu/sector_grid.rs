//! The CPU twin of the GPU accuracy kernel (`gpu::sector::accuracy`): the 64-bin histogram of
//! one rotation over the 100^3 grid, walked row by row (docs/design.md, sector accuracy).
//!
//! On a row, the two speculative AABBs are index intervals counted in O(1); only the points
//! inside a cylinder-and-slab bound of the conservative sector (which holds every other shape)
//! are classified one by one.

use crate::error::Result;
use crate::geom::aabb::Aabb;
use crate::geom::sector::RotatingBox;
use crate::geom::sector::classify::*;
use glam::Vec3;
use rayon::prelude::*;

#[inline(always)]
fn range_len(r: (i32, i32)) -> u32 {
    (r.1 - r.0 + 1).max(0) as u32
}

#[inline(always)]
fn overlap(a: (i32, i32), b: (i32, i32)) -> (i32, i32) {
    (a.0.max(b.0), a.1.min(b.1))
}

/// The x indices of a row (y, z) that may lie in a cylinder of radius `r_bound` about the
/// line through `o` along the unit `u`, within `h_bound` of `o` along it (the conservative
/// sector's bound), padded by one index. A superset is all that matters.
pub fn candidate_range(o: Vec3, u: Vec3, r_bound: f32, h_bound: f32, y: f32, z: f32) -> (i32, i32) {
    let q = Vec3::new(0.0, y, z) - o; // the row is q + t e_x
    let ux = u.x;
    let c0 = q.dot(u);
    let (mut t_lo, mut t_hi) = (-1e4_f32, 1e4_f32);
    // Slab: |ux t + c0| <= h.
    if ux.abs() < 1e-6 {
        if c0.abs() > h_bound {
            return (0, -1);
        }
    } else {
        let a = (-h_bound - c0) / ux;
        let b = (h_bound - c0) / ux;
        t_lo = t_lo.max(a.min(b));
        t_hi = t_hi.min(a.max(b));
    }
    // Cylinder: in-plane distance of q + t e_x to the axis <= R.
    let q_perp = q - c0 * u;
    let e_perp = Vec3::X - ux * u;
    let a = e_perp.length_squared();
    if a > 1e-4 {
        let t0 = -q_perp.dot(e_perp) / a;
        let d2 = (q_perp + t0 * e_perp).length_squared();
        let room = r_bound * r_bound - d2;
        if room < 0.0 {
            return (0, -1);
        }
        let half = (room / a).sqrt();
        t_lo = t_lo.max(t0 - half);
        t_hi = t_hi.min(t0 + half);
    } else if q_perp.length_squared() > r_bound * r_bound + 1.0 {
        // Row nearly parallel to U: its distance to the axis barely changes along it.
        return (0, -1);
    }
    if t_lo > t_hi {
        return (0, -1);
    }
    let offset = 0.5 * (GRID_SIDE - 1) as f32;
    let n = GRID_SIDE as i32;
    let lo = ((t_lo + offset).floor() - 1.0).clamp(0.0, n as f32) as i32;
    let hi = ((t_hi + offset).ceil() + 1.0).clamp(-1.0, (n - 1) as f32) as i32;
    (lo, hi)
}

/// The 64-bin histogram of one rotation.
pub fn rotation_histogram(p: &RotationParams) -> Histogram {
    let (o, u) = (v3(p.origin), v3(p.axis));
    let (r, h) = (p.half_widths[2], p.half_widths[3]);
    walk_grid(
        p.speculative(),
        p.endpoints(),
        |y, z| candidate_range(o, u, r, h, y, z),
        |q| p.classify(q),
    )
}

/// The 64-bin histogram of one rotation over the grid, row by row: the points of each row in
/// `candidates(y, z)` are classified one by one; outside it only the two speculative AABBs
/// (bits 2 and 4 in both experiments) can hold a point, counted as index ranges. The thesis's
/// and the general bodies' walks (`cpu::sector_free_grid`).
pub fn walk_grid(
    spec: Aabb,
    ends: Aabb,
    candidates: impl Fn(f32, f32) -> (i32, i32),
    classify: impl Fn(Vec3) -> u32,
) -> Histogram {
    let mut hist = [0u32; 64];
    let in_span = |v: f32, lo: f32, hi: f32| lo <= v && v <= hi;
    let row = |b: &Aabb, y: f32, z: f32| {
        if in_span(y, b.min.y, b.max.y) && in_span(z, b.min.z, b.max.z) {
            index_range(b.min.x, b.max.x)
        } else {
            (0, -1)
        }
    };
    for k in 0..GRID_SIDE as i32 {
        let z = grid_coord(k);
        for j in 0..GRID_SIDE as i32 {
            let y = grid_coord(j);
            let (s, e, c) = (row(&spec, y, z), row(&ends, y, z), candidates(y, z));
            for i in c.0..=c.1 {
                hist[classify(Vec3::new(grid_coord(i), y, z)) as usize] += 1;
            }
            let se = overlap(s, e);
            let both = range_len(se) - range_len(overlap(se, c));
            let spec_only = range_len(s) - range_len(overlap(s, c)) - both;
            let ends_only = range_len(e) - range_len(overlap(e, c)) - both;
            hist[(bits::SPECULATIVE | bits::SPECULATIVE_ENDPOINTS) as usize] += both;
            hist[bits::SPECULATIVE as usize] += spec_only;
            hist[bits::SPECULATIVE_ENDPOINTS as usize] += ends_only;
        }
    }
    fill_empty_bin(&mut hist);
    hist
}

/// Histograms of every rotation on the CPU (rayon over rotations). `progress` is called with
/// the number of rotations just finished.
pub fn cpu_histograms(
    rotations: &[RotatingBox],
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Vec<Histogram>> {
    validate_rotations(rotations)?;
    Ok(rotations
        .par_iter()
        .map(|b| {
            let h = rotation_histogram(&RotationParams::new(b));
            if let Some(f) = progress {
                f(1);
            }
            h
        })
        .collect())
}
