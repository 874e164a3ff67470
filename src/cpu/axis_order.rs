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

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
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
        let n = self.keys.len();
        for v in [&mut self.lo, &mut self.hi] {
            v.clear();
            v.resize(n, 0.0);
        }
        self.index.clear();
        self.index.resize(n, 0);
        self.spheres.clear();
        self.spheres.resize(n, Sphere::default());
        let fill =
            |(((k, l), h), (s, ix)): (((&u64, &mut f32), &mut f32), (&mut Sphere, &mut u32))| {
                let i = index_of(*k);
                let sphere = spheres[i as usize];
                *l = lo(&sphere, axis);
                *h = hi(&sphere, axis);
                *s = sphere;
                *ix = i;
            };
        if n >= PARALLEL_GATHER_MIN {
            self.keys
                .par_iter()
                .zip(self.lo.par_iter_mut())
                .zip(self.hi.par_iter_mut())
                .zip(self.spheres.par_iter_mut().zip(self.index.par_iter_mut()))
                .for_each(fill);
        } else {
            self.keys
                .iter()
                .zip(self.lo.iter_mut())
                .zip(self.hi.iter_mut())
                .zip(self.spheres.iter_mut().zip(self.index.iter_mut()))
                .for_each(fill);
        }
    }
}
