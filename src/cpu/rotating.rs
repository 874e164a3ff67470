//! CPU pipeline of the `rotating` scene (docs/design.md §5.7): box proxy AABBs vs sphere AABBs (bipartite
//! broad phase), then the exact conservative-sector vs sphere test on every candidate.
//!
//! Spheres are sorted by the cell of their centre (`SphereIndex`: the grid method's cells,
//! rows of equal `(kz, ky)` ordered by `kx`), so a box visits the rows of its `(y, z)` range
//! and in each the run of cells in its x range. (Sorting by x alone would make every box scan a
//! whole slab: ~46k spheres per box at 1M spheres.) The GPU pipeline (`gpu::rotating`) keeps a
//! dense cell table (`geom::sphere_grid::SphereGrid`); both are conservative and the
//! exact AABB test decides, so the two agree on every candidate.

use crate::broadphase::ProxyFrame;
use crate::broadphase::memory;
use crate::broadphase::{Clock, StageTime, cancel};
use crate::cpu::sphere_index::SphereIndex;
use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sector::Sector;
use crate::geom::sector::proxy::{
    Proxy, Swept, proxy_aabb, proxy_overlaps_sphere, validate_frame_input,
};
use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use web_time::Instant;

/// One frame on the CPU for each proxy in `proxies`: candidates, hits, and (with `want_hits`)
/// the sorted hit pairs. The sphere sort is shared by the proxies; its time is in every result.
/// (One frame of a fresh [`RotatingCpu`].)
pub fn rotating_frame_cpu(
    boxes: &[impl Swept],
    spheres: &[Sphere],
    proxies: &[Proxy],
    want_hits: bool,
) -> Result<Vec<ProxyFrame>> {
    RotatingCpu::default().frame(boxes, spheres, proxies, want_hits)
}

/// The CPU pipeline of the rotating scene with its sphere index, whose buffers it keeps from
/// frame to frame (see `SphereIndex::rebuild`: at 1M spheres and 2000 boxes a frame took
/// 42-48 ms with a fresh index and 19.5-22 with a kept one, on 2 shared cores).
#[derive(Default)]
pub struct RotatingCpu {
    index: SphereIndex,
}

impl RotatingCpu {
    /// [`rotating_frame_cpu`], reusing the index's buffers.
    pub fn frame(
        &mut self,
        boxes: &[impl Swept],
        spheres: &[Sphere],
        proxies: &[Proxy],
        want_hits: bool,
    ) -> Result<Vec<ProxyFrame>> {
        frame_with(&mut self.index, boxes, spheres, proxies, want_hits)
    }
}

/// One box's candidates, hits and (when wanted) hit sphere indices.
type BoxHits = (u64, u64, Vec<u32>);

fn frame_with(
    sorted: &mut SphereIndex,
    boxes: &[impl Swept],
    spheres: &[Sphere],
    proxies: &[Proxy],
    want_hits: bool,
) -> Result<Vec<ProxyFrame>> {
    validate_frame_input(boxes, spheres)?;
    let wall = |stage, t: Instant| StageTime {
        stage,
        seconds: t.elapsed().as_secs_f64(),
        clock: Clock::Wall,
    };
    if spheres.is_empty() || boxes.is_empty() {
        return Ok(ProxyFrame::nothing_for(proxies.len(), want_hits));
    }
    let t = Instant::now();
    if !sorted.rebuild(spheres) {
        return Err(Error::Interrupted);
    }
    let sorted = &*sorted;
    let sort_time = wall("sort spheres", t);
    let t = Instant::now();
    let sectors: Vec<Sector> = boxes.par_iter().map(|b| b.conservative_sector()).collect();
    let sector_time = wall("sectors", t);
    // The caller's token, looked at before each box (a box's candidates take microseconds to
    // milliseconds), and its memory budget on every growth of the hit lists.
    let token = cancel::current();
    let mut out = Vec::with_capacity(proxies.len());
    for &proxy in proxies {
        cancel::check(&token)?;
        let t = Instant::now();
        let aabbs: Vec<Aabb> = boxes.par_iter().map(|b| proxy_aabb(b, proxy)).collect();
        let proxy_time = wall("proxies", t);
        let t = Instant::now();
        // Per box: (candidates, hits, hit sphere indices when wanted), or the bytes its hit
        // list's growth asked for where the memory budget or the allocator refused them.
        let per_box: Vec<std::result::Result<BoxHits, u64>> = aabbs
            .par_iter()
            .zip(&sectors)
            .with_min_len(64)
            .map(|(a, sector)| {
                if cancel::stopped(&token) {
                    return Ok((0, 0, Vec::new()));
                }
                let (mut cand, mut hits, mut list, mut room) = (0u64, 0u64, Vec::new(), true);
                sorted.for_each_candidate(a, |j| {
                    cand += 1;
                    let s = &sorted.spheres[j];
                    if sector.overlaps_sphere_exact(s) {
                        hits += 1;
                        if want_hits && room {
                            room = memory::try_push(&mut list, sorted.order[j]);
                        }
                    }
                });
                match room {
                    true => Ok((cand, hits, list)),
                    false => Err(list.len() as u64 * 8), // the doubling of 4-byte indices
                }
            })
            .collect();
        cancel::check(&token)?;
        let per_box = per_box
            .into_iter()
            .collect::<std::result::Result<Vec<_>, u64>>()
            .map_err(|bytes| memory::refused("a box's hits in the rotating frame", bytes))?;
        let test_time = wall("candidates + exact test", t);
        let candidates = per_box.iter().map(|p| p.0).sum();
        let hits: u64 = per_box.iter().map(|p| p.1).sum();
        let hit_pairs = if want_hits {
            let mut v: Vec<[u32; 2]> = Vec::new();
            memory::reserve(&mut v, hits as usize, "the rotating frame's hit pairs")?;
            v.extend(
                per_box
                    .iter()
                    .enumerate()
                    .flat_map(|(b, p)| p.2.iter().map(move |&s| [b as u32, s])),
            );
            v.sort_unstable();
            Some(v)
        } else {
            None
        };
        out.push(ProxyFrame {
            candidates,
            hits,
            hit_pairs,
            stages: vec![
                sort_time.clone(),
                sector_time.clone(),
                proxy_time,
                test_time,
            ],
        });
    }
    Ok(out)
}

/// The oracle: every (box, sphere) pair, the proxy AABB test, then the exact test. Returns the
/// candidate count and the sorted hits. O(K N): small scenes only.
pub fn rotating_brute_force(
    boxes: &[impl Swept],
    spheres: &[Sphere],
    proxy: Proxy,
) -> Result<(u64, Vec<[u32; 2]>)> {
    validate_frame_input(boxes, spheres)?;
    // In u64: `1 << 32` does not fit a 32-bit usize (wasm32).
    let tests = (boxes.len() as u64).saturating_mul(spheres.len() as u64);
    if tests > 1 << 32 {
        return Err(Error::past_u32(
            tests,
            format!(
                "brute force over {} boxes x {} spheres",
                boxes.len(),
                spheres.len()
            ),
        ));
    }
    let token = cancel::current();
    let mut candidates = 0;
    let mut hits = Vec::new();
    for (b, rb) in boxes.iter().enumerate() {
        // A box's row is the spheres once: a look at the token each.
        cancel::check(&token)?;
        let a = proxy_aabb(rb, proxy);
        let sector = rb.conservative_sector();
        for (i, s) in spheres.iter().enumerate() {
            if proxy_overlaps_sphere(&a, s) {
                candidates += 1;
                if sector.overlaps_sphere_exact(s)
                    && !memory::try_push(&mut hits, [b as u32, i as u32])
                {
                    let bytes = hits.len() as u64 * 16;
                    return Err(memory::refused("the rotating brute force's hits", bytes));
                }
            }
        }
    }
    Ok((candidates, hits))
}

#[cfg(test)]
mod tests {
    use crate::geom::sphere_grid::SphereGrid;
    use glam::Vec3;

    /// The GPU pipeline's dense grid (`SphereGrid`): cells inside the grid, clamped outside.
    #[test]
    fn gpu_grid_cells_are_monotonic_and_clamped() {
        let spheres = crate::test_scenes::rotating_spheres(0, 2_000, 3);
        let g = SphereGrid::new(&spheres);
        assert!(g.cell_count() <= 4 * 2_000 + 64);
        assert!(g.key_bits() <= 32 && (1u64 << g.key_bits()) >= g.cell_count());
        for s in &spheres {
            let c = g.cell(s.center);
            assert!((0..3).all(|i| c[i] < g.dims[i]));
        }
        // Outside the grid clamps to the border cells.
        let far = g.cell(Vec3::splat(1e6));
        assert_eq!(far, [g.dims[0] - 1, g.dims[1] - 1, g.dims[2] - 1]);
        assert_eq!(g.cell(Vec3::splat(-1e6)), [0, 0, 0]);
    }
}
