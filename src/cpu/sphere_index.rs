//! Spheres sorted by grid cell for box queries: the CPU broad phase of the rotating scene
//! (docs/design.md §5.7), boxes' proxy AABBs against sphere AABBs.
//!
//! Cells are the grid method's (`GridFrame`): side twice the largest radius of the spheres
//! that are not giants, absolute and unclamped, exact on every axis. Keys `(kz, ky, kx)` sort
//! the spheres into rows of equal `(kz, ky)`, ordered by `kx`. A box query visits only the rows
//! that exist in its `(y, z)` range (one binary search per plane it enters) and, in each, the
//! run of cells in its x range (a binary search); the giants (at most 1,024) are checked against
//! every box. A box costs the rows it touches times a logarithm plus the spheres of its cells,
//! whatever the scene's extent. The exact AABB test decides every candidate, so the candidates
//! are the same as brute force's and the GPU's.
//!
//! Before: a dense table of at most 4n + 64 cells of at least a 1024th of the scene's extent
//! (`SphereGrid`, which the GPU pipeline still uses). On a wide scene with clusters those
//! cells grew until whole clusters shared one, and every box scanned its whole cluster.

use crate::broadphase::radix::radix_sort_carrying;
use crate::cpu::grid::{CellBits, GridFrame, RowTable, bits_for};
use crate::geom::aabb::Aabb;
use crate::geom::sector::proxy::proxy_overlaps_sphere;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;

/// Relative slack added to every query, of the box's magnitude: the AABB test rounds `c - r`
/// and `c + r` (error at most 2^-24 of their magnitude, which is the box's where it matters),
/// and the padded box rounds too, so a pad of the largest radius plus 1e-5 of the magnitude
/// (80 times those errors) never leaves a candidate outside the cells searched; the exact
/// AABB test still decides. (The dense grid's slack also grows with the scene's magnitude,
/// which on a wide scene pads every box by hundreds of cells.)
const QUERY_SLACK: f32 = 1e-5;
/// Absolute slack: rounding below the normal range.
const QUERY_TINY: f32 = 1e-30;
/// From this many spheres the rows are found in parallel (as the grid's).
const PARALLEL_MIN: usize = 1 << 14;

/// Spheres in cell order, then the giants; rows of equal `(kz, ky)`. Its buffers are kept from
/// one [`SphereIndex::rebuild`] to the next.
#[derive(Default)]
pub struct SphereIndex {
    frame: Option<GridFrame>,
    /// Bits of the relative cell's y (row keys are `kz << y_bits | ky`).
    y_bits: u32,
    /// Sorted row keys `kz << y_bits | ky` and each row's first position (then `members`).
    rows: RowTable,
    /// Cell x per sorted position (members only).
    kx: Vec<u32>,
    /// Spheres that are not giants: positions `0..members`; giants follow.
    members: usize,
    /// The largest member radius: how far past a box a member's centre can lie and still
    /// touch it (before rounding).
    reach: f32,
    /// `order[j]` = original index of the sphere at position `j`.
    pub order: Vec<u32>,
    /// The spheres by position.
    pub spheres: Vec<Sphere>,
    giants: Vec<u32>,
    keys: Vec<u64>,
    scratch: Vec<u64>,
    sphere_scratch: Vec<Sphere>,
}

impl SphereIndex {
    /// The index of these (validated, non-empty) spheres.
    #[cfg(test)]
    pub fn new(spheres: &[Sphere]) -> Self {
        let mut index = Self::default();
        assert!(index.rebuild(spheres));
        index
    }

    /// Indexes these (validated, non-empty) spheres, reusing the buffers. The spheres ride
    /// through the radix sort with their keys (read in index order, no gather after it), and
    /// the rows are found as the grid finds its own. (Before: fresh buffers, a gather by index
    /// and a filtered parallel iterator for the rows. Rotating scene, 1M spheres, 2000 boxes,
    /// 2 shared cores, alternating runs: the sphere sort took 31.5-37.8 ms per frame before and
    /// 14.5-16.5 now, with the index kept by `cpu::rotating::RotatingCpu`; rebuilt into fresh
    /// buffers every frame, this version took 42.3-45.5 against 38.2-39.0, page faults and
    /// clearing the 48 MB of buffers outweighing the gather it saves.)
    ///
    /// False where the caller's token stopped the sort ([`radix_sort_carrying`]): the index is
    /// then unusable until the next rebuild, and the caller fails as interrupted.
    #[must_use = "false: stopped by the caller's token, the index unusable"]
    pub fn rebuild(&mut self, spheres: &[Sphere]) -> bool {
        let frame = GridFrame::of(spheres);
        self.frame = Some(frame);
        let n = spheres.len();
        let parallel = n >= PARALLEL_MIN;
        let is_giant = |s: &Sphere| frame.giant_split < 255 && frame.is_giant(s);
        self.order.clear();
        self.giants.clear();
        let any_giant = frame.giant_split < 255 && spheres.par_iter().any(is_giant);
        if any_giant {
            for i in 0..n as u32 {
                if is_giant(&spheres[i as usize]) {
                    self.giants.push(i);
                } else {
                    self.order.push(i);
                }
            }
        }
        let members = n - self.giants.len();
        let rmax = if any_giant {
            let order = &self.order;
            order
                .par_iter()
                .map(|&i| spheres[i as usize].radius)
                .reduce(|| 0.0, f32::max)
        } else {
            spheres
                .par_iter()
                .map(|s| s.radius)
                .reduce(|| 0.0, f32::max)
        };
        let bits = CellBits::of(frame.max_cell);
        let (x_bits, y_bits, cell_bits) = (bits.x, bits.y, bits.total());
        let index_bits = bits_for(n.saturating_sub(1) as u64);
        let cell = |i: u32| frame.cell(spheres[i as usize].center);
        let x_mask = (1u64 << x_bits) - 1;
        if cell_bits + index_bits <= 64 {
            // Keys `(cell << index_bits) | index` in index order, sorted by the cell bits
            // (stable: equal cells in index order).
            let pack = |i: u32| (bits.pack(cell(i)) << index_bits) | u64::from(i);
            self.keys.clear();
            if any_giant {
                self.keys
                    .par_extend(self.order.par_iter().map(|&i| pack(i)));
            } else {
                self.keys
                    .par_extend((0..n as u32).into_par_iter().map(pack));
            }
            let index_mask = if index_bits == 0 {
                0
            } else {
                u64::MAX >> (64 - index_bits)
            };
            if !radix_sort_carrying(
                &mut self.keys,
                &mut self.scratch,
                &mut self.spheres,
                &mut self.sphere_scratch,
                |_, k| spheres[(k & index_mask) as usize],
                index_bits,
                index_bits + cell_bits,
            ) {
                return false;
            }
            let packed = move |k: u64| k.checked_shr(index_bits).unwrap_or(0);
            self.order.clear();
            self.order
                .par_extend(self.keys.par_iter().map(|&k| (k & index_mask) as u32));
            self.kx.clear();
            self.kx
                .par_extend(self.keys.par_iter().map(|&k| (packed(k) & x_mask) as u32));
            let row_of = move |k: u64| packed(k) >> x_bits;
            self.rows.find(&self.keys, row_of, parallel);
        } else {
            // Cells and index past 64 bits: a comparison sort of the members.
            if !any_giant {
                self.order.extend(0..n as u32);
            }
            self.order.par_sort_unstable_by_key(|&i| {
                let c = cell(i);
                (c[2], c[1], c[0], i)
            });
            self.spheres.clear();
            self.spheres
                .par_extend(self.order.par_iter().map(|&i| spheres[i as usize]));
            self.kx.clear();
            self.kx
                .par_extend(self.order.par_iter().map(|&i| cell(i)[0]));
            let row_of = |i: u32| {
                let c = cell(i);
                (u64::from(c[2]) << y_bits) | u64::from(c[1])
            };
            self.rows.find(&self.order, row_of, parallel);
        }
        self.order.extend_from_slice(&self.giants);
        self.spheres
            .extend(self.giants.iter().map(|&g| spheres[g as usize]));
        self.y_bits = y_bits;
        self.members = members;
        self.reach = rmax;
        true
    }

    /// The relative cells of the box `a` grown by `pad`, clamped to the scene's cells; `None`
    /// when the box lies outside them on some axis.
    fn cell_range(&self, a: &Aabb, pad: f32) -> Option<([u32; 3], [u32; 3])> {
        let frame = self.frame.as_ref()?;
        let (lo, hi) = (
            frame.absolute_cell(a.min - pad),
            frame.absolute_cell(a.max + pad),
        );
        let (base, top) = (frame.min_cell, frame.max_cell);
        let mut range = ([0u32; 3], [0u32; 3]);
        for k in 0..3 {
            // Relative cells in i64: absolute cells and their differences fit easily.
            let (l, h) = (
                i64::from(lo[k]) - i64::from(base[k]),
                i64::from(hi[k]) - i64::from(base[k]),
            );
            if h < 0 || l > i64::from(top[k]) {
                return None;
            }
            range.0[k] = l.max(0) as u32;
            range.1[k] = h.min(i64::from(top[k])) as u32;
        }
        Some(range)
    }

    /// Calls `f(j)` for every position `j` whose sphere's AABB overlaps `a`; returns how many
    /// spheres it examined (the work, for the tests).
    pub fn for_each_candidate(&self, a: &Aabb, mut f: impl FnMut(usize)) -> usize {
        let mut examined = self.spheres.len() - self.members;
        for j in self.members..self.spheres.len() {
            if proxy_overlaps_sphere(a, &self.spheres[j]) {
                f(j);
            }
        }
        let magnitude = a.min.abs().max(a.max.abs()).max_element() + self.reach;
        let pad = self.reach + QUERY_SLACK * magnitude + QUERY_TINY;
        let Some((lo, hi)) = self.cell_range(a, pad) else {
            return examined;
        };
        let y_bits = self.y_bits;
        let row_key = |z: u32, y: u32| (u64::from(z) << y_bits) | u64::from(y);
        let keys = &self.rows.keys;
        let mut r = keys.partition_point(|&k| k < row_key(lo[2], lo[1]));
        while r < keys.len() {
            let (z, y) = (
                (keys[r] >> y_bits) as u32,
                (keys[r] & ((1 << y_bits) - 1)) as u32,
            );
            if z > hi[2] {
                break;
            }
            // Outside the y range: jump to the range's start in this plane or the next.
            let target = if y > hi[1] {
                if z == hi[2] {
                    break;
                }
                Some(row_key(z + 1, lo[1]))
            } else {
                (y < lo[1]).then(|| row_key(z, lo[1]))
            };
            if let Some(target) = target {
                r += keys[r..].partition_point(|&k| k < target);
                continue;
            }
            let (start, end) = (self.rows.start[r] as usize, self.rows.start[r + 1] as usize);
            let mut p = start + self.kx[start..end].partition_point(|&x| x < lo[0]);
            while p < end && self.kx[p] <= hi[0] {
                examined += 1;
                if proxy_overlaps_sphere(a, &self.spheres[p]) {
                    f(p);
                }
                p += 1;
            }
            r += 1;
        }
        examined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};

    /// Original indices of the spheres whose AABB overlaps `a`, by the index and by brute force.
    fn both(index: &SphereIndex, spheres: &[Sphere], a: &Aabb) -> (Vec<u32>, Vec<u32>, usize) {
        let mut got = Vec::new();
        let examined = index.for_each_candidate(a, |j| got.push(index.order[j]));
        got.sort_unstable();
        let want = (0..spheres.len() as u32)
            .filter(|&i| proxy_overlaps_sphere(a, &spheres[i as usize]))
            .collect();
        (got, want, examined)
    }

    fn random_box(rng: &mut rand_chacha::ChaCha8Rng, centre: Vec3, size: f32) -> Aabb {
        let c = centre + Vec3::from_array([0; 3].map(|_| rng.random_range(-size..size)));
        let h = Vec3::from_array([0; 3].map(|_| rng.random_range(0.0..size)));
        Aabb {
            min: c - h,
            max: c + h,
        }
    }

    /// Uniform, wide-and-clustered (cells far past 2^20, clusters far apart), with giants,
    /// large (the parallel sort and rows), with one shared point, and far from the origin:
    /// every query's candidates are brute force's. One index is rebuilt for every scene, so
    /// what its buffers keep from the last scene must not matter.
    #[test]
    fn candidates_are_brute_forces_on_every_kind_of_scene() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
        let uniform = |rng: &mut rand_chacha::ChaCha8Rng, n: usize, c: Vec3, side: f32| {
            (0..n)
                .map(|_| {
                    let p = c + Vec3::from_array([0; 3].map(|_| rng.random_range(0.0..side)));
                    Sphere::new(p, rng.random_range(0.05..0.5))
                })
                .collect::<Vec<_>>()
        };
        let mut scenes = vec![uniform(&mut rng, 3000, Vec3::ZERO, 40.0)];
        let mut wide = Vec::new();
        for c in [Vec3::ZERO, Vec3::splat(2e7), Vec3::new(-1e7, 3e6, 2e7)] {
            wide.extend(uniform(&mut rng, 1000, c, 15.0));
        }
        wide.extend(uniform(&mut rng, 500, Vec3::splat(-1e7), 3e7));
        scenes.push(wide.clone());
        let mut giants = uniform(&mut rng, 3000, Vec3::ZERO, 40.0);
        giants[5] = Sphere::new(Vec3::splat(20.0), 30.0);
        giants[900] = Sphere::new(Vec3::new(-50.0, 0.0, 10.0), 45.0);
        scenes.push(giants);
        scenes.push(uniform(&mut rng, 70_000, Vec3::splat(-30.0), 115.0));
        scenes.push(vec![Sphere::new(Vec3::splat(3.0), 1.0); 50]);
        scenes.push(uniform(&mut rng, 2000, Vec3::new(1e6, -1e6, 5e5), 30.0));
        let mut index = SphereIndex::default();
        for (k, spheres) in scenes.iter().enumerate() {
            assert!(index.rebuild(spheres));
            let mut found = 0;
            for q in 0..300 {
                let anchor = spheres[rng.random_range(0..spheres.len())].center;
                let size = [0.5f32, 3.0, 20.0][q % 3];
                let a = random_box(&mut rng, anchor, size);
                let (got, want, _) = both(&index, spheres, &a);
                assert_eq!(got, want, "scene {k}, box {a:?}");
                found += got.len();
            }
            // A box covering everything, and one beyond the scene.
            let all = Aabb {
                min: Vec3::splat(-4e7),
                max: Vec3::splat(4e7),
            };
            assert_eq!(both(&index, spheres, &all).0.len(), spheres.len());
            let beyond = Aabb {
                min: Vec3::splat(5e7),
                max: Vec3::splat(6e7),
            };
            assert!(both(&index, spheres, &beyond).0.is_empty());
            // Boxes whose corners lie past 2^31 cells (where the cells of the centres' fast
            // path overflowed, and a box covering everything found nothing).
            let huge = Aabb {
                min: Vec3::splat(-1e30),
                max: Vec3::new(1e30, 1e30, 1e30),
            };
            assert_eq!(
                both(&index, spheres, &huge).0.len(),
                spheres.len(),
                "scene {k}"
            );
            let half = Aabb {
                min: Vec3::new(-1e30, -1e30, -1e30),
                max: Vec3::new(1e30, 1e30, spheres[0].center.z),
            };
            let (got, want, _) = both(&index, spheres, &half);
            assert!(got == want && !got.is_empty(), "scene {k}: half space");
            let far = Aabb {
                min: Vec3::splat(1e29),
                max: Vec3::splat(1e30),
            };
            assert!(both(&index, spheres, &far).0.is_empty());
            assert!(found > 300, "scene {k}: the queries must find something");
        }
    }

    /// No cliff: on a scene of dense clusters far apart (where a dense table of at most 4n + 64
    /// cells puts each cluster in one cell), a small box examines only the spheres near it, and
    /// a giant sphere does not coarsen the cells.
    #[test]
    fn a_box_examines_only_its_neighbourhood_on_wide_clustered_scenes() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
        // Clusters where f32 still resolves a hundredth of a radius, the scene's extent set by
        // a few spheres 1e7 away, and one giant.
        let corners = [
            Vec3::ZERO,
            Vec3::new(2e5, 0.0, 0.0),
            Vec3::new(0.0, -2e5, 1e5),
        ];
        let mut spheres = Vec::new();
        for c in corners {
            for _ in 0..5000 {
                let p = c + Vec3::from_array([0; 3].map(|_| rng.random_range(0.0..20.0)));
                spheres.push(Sphere::new(p, 0.5));
            }
        }
        for k in 0..20 {
            let p = Vec3::new(1e7, -1e7 + k as f32 * 1e6, 1e7 - k as f32 * 3e5);
            spheres.push(Sphere::new(p, 0.5));
        }
        spheres.push(Sphere::new(Vec3::splat(1e6), 1e5));
        let index = SphereIndex::new(&spheres);
        let mut examined = 0;
        for q in 0..300 {
            let anchor = corners[q % 3] + Vec3::splat(10.0);
            let a = random_box(&mut rng, anchor, 1.0);
            let (got, want, e) = both(&index, &spheres, &a);
            assert_eq!(got, want);
            examined += e;
        }
        // 0.625 spheres per cell of side 1 (5000 in 20^3); a box of side up to 2, padded by the
        // reach, covers at most 5^3 cells: far below a cluster's 5000.
        assert!(examined / 300 < 500, "{} examined per box", examined / 300);
        // The dense table's cells (`SphereGrid`, the GPU pipeline's) hold whole clusters.
        let dense = crate::geom::sphere_grid::SphereGrid::new(&spheres);
        assert!(
            dense.inv_cell < 1e-4,
            "dense cells of side {}",
            1.0 / dense.inv_cell
        );
    }
}
