//! The uniform grid over sphere centres of the rotating scene's GPU pipeline
//! (`gpu::sector::rotating`): a dense cell table. Its cells are at least a 1024th of the
//! scene's extent and coarsened to at most 4n + 64, so on a wide scene with clusters a whole
//! cluster can share a cell (the CPU pipeline uses `cpu::sphere_index`, which has no such
//! limit). Both are conservative and the exact AABB test decides, so they agree on every
//! candidate.

use crate::geom::sphere::Sphere;
use glam::Vec3;
use rayon::prelude::*;

/// Relative slack added to every query so f32 rounding of `c +- r` against the box can never
/// put a candidate outside the cells searched (the exact AABB test still decides).
const QUERY_SLACK: f32 = 1e-5;
/// Finest grid: at most this many cells per axis (so the cell count fits 31 bits).
const MAX_CELLS_PER_AXIS: f32 = 1024.0;

/// A uniform grid over the sphere centres. Cell size: twice the largest diameter (fewer rows per
/// box while a cell still holds only a few spheres), no finer than 1/1024 of the extent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereGrid {
    /// Lowest corner of the grid: the smallest centre coordinates.
    pub origin: Vec3,
    /// One over the cell side.
    pub inv_cell: f32,
    /// Cells per axis (x, y, z).
    pub dims: [u32; 3],
    /// Largest radius plus slack: how far past a box a candidate's centre can lie.
    pub reach: f32,
}

impl SphereGrid {
    /// The grid for these (validated, non-empty) spheres.
    pub fn new(spheres: &[Sphere]) -> Self {
        let (lo, hi, rmax) = spheres
            .par_iter()
            .with_min_len(8192)
            .fold(
                || (Vec3::INFINITY, Vec3::NEG_INFINITY, 0.0f32),
                |(lo, hi, r), s| (lo.min(s.center), hi.max(s.center), r.max(s.radius)),
            )
            .reduce(
                || (Vec3::INFINITY, Vec3::NEG_INFINITY, 0.0f32),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2.max(b.2)),
            );
        let extent = (hi - lo).max_element().max(0.0);
        let mut cell = (4.0 * rmax).max(extent / MAX_CELLS_PER_AXIS);
        if cell <= 0.0 || !cell.is_finite() {
            cell = 1.0;
        }
        let magnitude = lo.abs().max(hi.abs()).max_element() + rmax;
        let mut grid = Self {
            origin: lo,
            inv_cell: 1.0 / cell,
            dims: [1; 3],
            reach: rmax + QUERY_SLACK * magnitude,
        };
        // The cell-start table has one entry per cell: coarsen sparse grids so it stays O(n).
        let max_cells = 4 * spheres.len() as u64 + 64;
        loop {
            let d = ((hi - lo) * grid.inv_cell)
                .floor()
                .max(Vec3::ZERO)
                .min(Vec3::splat(MAX_CELLS_PER_AXIS));
            grid.dims = [d.x as u32 + 1, d.y as u32 + 1, d.z as u32 + 1];
            if grid.cell_count() <= max_cells {
                return grid;
            }
            cell *= 1.25;
            grid.inv_cell = 1.0 / cell;
        }
    }

    /// Number of cells.
    pub fn cell_count(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }

    /// Bits of the largest key (radix sort passes).
    pub fn key_bits(&self) -> u32 {
        (64 - (self.cell_count() - 1).leading_zeros()).max(1)
    }

    /// Cell coordinates of a point, clamped into the grid (monotonic in each coordinate).
    #[cfg(test)]
    #[inline]
    pub fn cell(&self, p: Vec3) -> [u32; 3] {
        let c = ((p - self.origin) * self.inv_cell).floor();
        let d = self.dims;
        [
            c.x.clamp(0.0, (d[0] - 1) as f32) as u32,
            c.y.clamp(0.0, (d[1] - 1) as f32) as u32,
            c.z.clamp(0.0, (d[2] - 1) as f32) as u32,
        ]
    }
}
