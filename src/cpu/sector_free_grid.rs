//! The CPU twin of the generalised accuracy kernel (`gpu::sector::free_accuracy`): the 64-bin
//! histogram of one rotation of any body over the 100^3 grid, walked row by row like the
//! thesis's (`cpu::sector_grid`): the speculative AABBs are counted as index intervals, and only
//! the points inside the gate's cylinder and slab are classified one by one.

use crate::cpu::sector_grid::{candidate_range, walk_grid};
use crate::geom::sector::classify::{Histogram, v3};
use crate::geom::sector::free_classify::FreeRotation;
use rayon::prelude::*;

/// The 64-bin histogram of one rotation.
pub fn free_rotation_histogram(r: &FreeRotation) -> Histogram {
    let p = &r.params;
    let (centre, u, radius, half) = (v3(p.bound), v3(p.axis), p.bound[3], p.bound_half[0]);
    walk_grid(
        r.speculative(),
        r.endpoints(),
        |y, z| candidate_range(centre, u, radius, half, y, z),
        |q| r.classify(q),
    )
}

/// Histograms of every rotation on the CPU (rayon over rotations); `progress` is called with
/// the number of rotations just finished.
pub fn free_cpu_histograms(
    rotations: &[FreeRotation],
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Vec<Histogram> {
    rotations
        .par_iter()
        .map(|r| {
            let h = free_rotation_histogram(r);
            if let Some(f) = progress {
                f(1);
            }
            h
        })
        .collect()
}
