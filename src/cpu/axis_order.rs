//! Objects sorted on one axis by `(lo, index)`, gathered into flat arrays (structure of arrays)
//! so the sweep loops read contiguous memory. Shared by the cascade, min_axis and sap.

use super::keys::{index_of, pack, sort_keys};
use crate::geom::sphere::Sphere;
use rayon::prelude::*;

/// Lower end of the object's interval on `axis`: `c[axis] - r`, computed exactly like this
/// everywhere (the GPU does the same), so every method sees the same intervals.
#[inline(always)]
pub fn lo(s: &Sphere, axis: usize) -> f32 {
    s.center[axis] - s.radius
}

/// Upper end of the object's interval on `axis`: `c[axis] + r`.
#[inline(always)]
pub fn hi(s: &Sphere, axis: usize) -> f32 {
    s.center[axis] + s.radius
}

/// Below this many objects the gathers run on the calling thread.
const PARALLEL_GATHER_MIN: usize = 1 << 14;

/// A sorted order on one axis and the objects' data in that order. Buffers are reused.
#[derive(Default)]
pub struct AxisOrder {
    keys: Vec<u64>,
    pub lo: Vec<f32>,
    pub hi: Vec<f32>,
    pub spheres: Vec<Sphere>,
    /// Original object index at each sorted position.
    pub index: Vec<u32>,
}

impl AxisOrder {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Sorts all objects on `axis`.
    pub fn sort_all(&mut self, spheres: &[Sphere], axis: usize) {
        self.keys.clear();
        if spheres.len() >= PARALLEL_GATHER_MIN {
            self.keys.par_extend(
                spheres
                    .par_iter()
                    .enumerate()
                    .map(|(i, s)| pack(lo(s, axis), i as u32)),
            );
        } else {
            self.keys.extend(
                spheres
                    .iter()
                    .enumerate()
                    .map(|(i, s)| pack(lo(s, axis), i as u32)),
            );
        }
        self.finish(spheres, axis);
    }

    /// Sorts the objects listed in `subset` on `axis`.
    pub fn sort_subset(&mut self, spheres: &[Sphere], subset: &[u32], axis: usize) {
        self.keys.clear();
        if subset.len() >= PARALLEL_GATHER_MIN {
            self.keys.par_extend(
                subset
                    .par_iter()
                    .map(|&i| pack(lo(&spheres[i as usize], axis), i)),
            );
        } else {
            self.keys.extend(
                subset
                    .iter()
                    .map(|&i| pack(lo(&spheres[i as usize], axis), i)),
            );
        }
        self.finish(spheres, axis);
    }

    fn finish(&mut self, spheres: &[Sphere], axis: usize) {
        sort_keys(&mut self.keys);
        let parallel = self.keys.len() >= PARALLEL_GATHER_MIN;
        let (keys, index, sorted, lo_out, hi_out) = (
            &self.keys,
            &mut self.index,
            &mut self.spheres,
            &mut self.lo,
            &mut self.hi,
        );
        index.clear();
        sorted.clear();
        lo_out.clear();
        hi_out.clear();
        if parallel {
            index.par_extend(keys.par_iter().map(|&k| index_of(k)));
            sorted.par_extend(index.par_iter().map(|&i| spheres[i as usize]));
            lo_out.par_extend(sorted.par_iter().map(|s| lo(s, axis)));
            hi_out.par_extend(sorted.par_iter().map(|s| hi(s, axis)));
        } else {
            index.extend(keys.iter().map(|&k| index_of(k)));
            sorted.extend(index.iter().map(|&i| spheres[i as usize]));
            lo_out.extend(sorted.iter().map(|s| lo(s, axis)));
            hi_out.extend(sorted.iter().map(|s| hi(s, axis)));
        }
    }
}
