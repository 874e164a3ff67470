//! The CPU twin of the generalised accuracy kernel (`gpu::sector::free_accuracy`): the 64-bin
//! histogram of one rotation of any body over the 100^3 grid, walked row by row like the
//! thesis's (`cpu::sector_grid`): the speculative AABBs are counted as index intervals, and only
//! the points inside the gate's cylinder and slab are classified one by one.

use crate::cpu::sector_grid::{candidate_range, overlap, range_len};
use crate::geom::sector::classify::{
    GRID_SIDE, Histogram, fill_empty_bin, grid_coord, index_range, v3,
};
use crate::geom::sector::free_classify::{FreeRotation, bits};
use glam::Vec3;
use rayon::prelude::*;

/// The 64-bin histogram of one rotation.
pub fn free_rotation_histogram(r: &FreeRotation) -> Histogram {
    let p = &r.params;
    let mut hist = [0u32; 64];
    let (spec, ends) = (r.speculative(), r.endpoints());
    let in_span = |v: f32, lo: f32, hi: f32| lo <= v && v <= hi;
    for k in 0..GRID_SIDE as i32 {
        let z = grid_coord(k);
        for j in 0..GRID_SIDE as i32 {
            let y = grid_coord(j);
            let s = if in_span(y, spec.min.y, spec.max.y) && in_span(z, spec.min.z, spec.max.z) {
                index_range(spec.min.x, spec.max.x)
            } else {
                (0, -1)
            };
            let e = if in_span(y, ends.min.y, ends.max.y) && in_span(z, ends.min.z, ends.max.z) {
                index_range(ends.min.x, ends.max.x)
            } else {
                (0, -1)
            };
            let c = candidate_range(v3(p.bound), v3(p.axis), p.bound[3], p.bound_half[0], y, z);
            for i in c.0..=c.1 {
                hist[r.classify(Vec3::new(grid_coord(i), y, z)) as usize] += 1;
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
