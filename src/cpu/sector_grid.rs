//! The CPU twin of the GPU accuracy kernels (`gpu::sector::accuracy`): the 64-bin histogram of
//! one rotation of either pose (the thesis's box, any body: [`AccuracyPose`]) over the 100^3
//! grid, walked row by row (docs/design.md §5.5, §5.8).
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

/// The 64-bin histogram of one rotation of either pose over the grid, row by row: the points of
/// each row in [`AccuracyPose::candidates`] are classified one by one; outside it only the two
/// speculative AABBs (bits 2 and 4 in both poses) can hold a point, counted as index ranges.
pub fn rotation_histogram(pose: &impl AccuracyPose) -> Histogram {
    let (spec, ends) = (pose.speculative(), pose.endpoints());
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
            let (s, e, c) = (row(&spec, y, z), row(&ends, y, z), pose.candidates(y, z));
            for i in c.0..=c.1 {
                hist[pose.classify(Vec3::new(grid_coord(i), y, z)) as usize] += 1;
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

/// Histograms of every rotation of either pose on the CPU (rayon over rotations). `progress` is
/// called with the number of rotations just finished. Fails with [`crate::Error::Interrupted`]
/// when the caller's cancellation came.
pub fn pose_histograms<P: AccuracyPose>(
    rotations: &[P],
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Vec<Histogram>> {
    // The caller's cancellation, looked at before each rotation (docs/design.md §9.18): a
    // cancelled run skips the rest and fails as interrupted.
    let token = crate::broadphase::cancel::current();
    let hists = rotations
        .par_iter()
        .map(|r| {
            if crate::broadphase::cancel::stopped(&token) {
                return [0; 64];
            }
            let h = rotation_histogram(r);
            if let Some(f) = progress {
                f(1);
            }
            h
        })
        .collect();
    crate::broadphase::cancel::check(&token)?;
    Ok(hists)
}

/// The thesis's experiment on the CPU: its rotations checked, then [`pose_histograms`].
pub fn cpu_histograms(
    rotations: &[RotatingBox],
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Vec<Histogram>> {
    pose_histograms(&rotation_params(rotations)?, progress)
}
