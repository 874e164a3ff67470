//! The grid's rule on one small world, without a call's fixed costs (docs/design.md §2.13): what
//! `cpu::WorldBatch` runs for `grid` in worlds of a few dozen objects, where the stages, clocks,
//! layouts and the pair emitter of a grid call cost more than the world's tests.
//!
//! Same frame ([`GridFrame::of`]: cell side, giants), same tests (every pair of non-giants whose
//! cells differ by at most one on every axis, once; the giants' as [`super::giants`] says), same
//! pairs;
//! only the traversal differs: the non-giants in `(kx, index)` order, each visiting the following
//! ones while `kx_q <= kx_p + 1`, tested when `ky` and `kz` differ by at most one. Its visits grow
//! with the objects in a slab of three cells, so it is meant for small worlds only.

use super::GridFrame;
use super::giants::Giant;
use crate::broadphase::{Pair, Stats};
use crate::geom::sphere::Sphere;

/// Buffers kept across worlds.
#[derive(Default)]
pub(crate) struct LeanGrid {
    /// `kx << 32 | index` of each non-giant (cells relative to the frame's minimum).
    keys: Vec<u64>,
    /// Each object's relative cell, by local index.
    cells: Vec<[u32; 3]>,
    /// The non-giants in `(kx, index)` order: `[kx, ky, kz, index]`.
    rows: Vec<[u32; 4]>,
    giants: Vec<Giant>,
}

impl LeanGrid {
    /// The grid's tests and pairs of `local` (spheres already validated), the pairs in local
    /// indices `[min, max]` appended to `out` when given.
    pub(crate) fn find_pairs(
        &mut self,
        local: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Stats {
        let frame = GridFrame::of(local);
        debug_assert!(frame.valid, "the batch validates its spheres first");
        self.keys.clear();
        self.cells.clear();
        self.giants.clear();
        for (i, s) in local.iter().enumerate() {
            let cell = frame.cell(s.center);
            self.cells.push(cell);
            if frame.is_giant(s) {
                self.giants.push(Giant::new(&frame, i as u32, *s));
            } else {
                self.keys.push((u64::from(cell[0]) << 32) | i as u64);
            }
        }
        // Sorting the packed keys alone, then gathering the rows, is faster than sorting rows.
        self.keys.sort_unstable();
        self.rows.clear();
        self.rows.extend(self.keys.iter().map(|&key| {
            let i = key as u32;
            let [x, y, z] = self.cells[i as usize];
            [x, y, z, i]
        }));
        let mut stats = Stats::default();
        let mut test = |i: u32, j: u32, stats: &mut Stats| {
            stats.tests += 1;
            if local[i as usize].touches(&local[j as usize]) {
                stats.pairs += 1;
                if let Some(out) = out.as_deref_mut() {
                    out.push([i.min(j), i.max(j)]);
                }
            }
        };
        // Relative cells are below 2^32 - 3 * 2^27 (`GridFrame::cell`): one more stays in u32;
        // `q - p + 1 <= 2` in wrapping u32 is `|q - p| <= 1`.
        let near = |p: u32, q: u32| q.wrapping_sub(p).wrapping_add(1) <= 2;
        for (p, &[xp, yp, zp, ip]) in self.rows.iter().enumerate() {
            for &[xq, yq, zq, iq] in &self.rows[p + 1..] {
                if xq > xp + 1 {
                    break;
                }
                if near(yp, yq) & near(zp, zq) {
                    test(ip, iq, &mut stats);
                }
            }
        }
        if !self.giants.is_empty() {
            // Each object's absolute cell once, against every giant's reach.
            for &[.., i] in &self.rows {
                let cell = frame.absolute_cell(local[i as usize].center);
                for g in self.giants.iter().filter(|g| g.reaches(cell)) {
                    test(i, g.index, &mut stats);
                }
            }
            for (k, g) in self.giants.iter().enumerate() {
                for h in &self.giants[k + 1..] {
                    test(g.index, h.index, &mut stats);
                }
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::{BroadPhase, canonicalize};
    use crate::cpu::grid::Grid;
    use crate::test_scenes::{Scene, SceneKind, SceneParams};
    use glam::Vec3;

    /// The lean walk's tests and pairs are a grid call's, on every scene kind at world sizes,
    /// with giants (one, several, more than the grid sets aside), points and coincident centres.
    #[test]
    fn lean_grid_tests_and_pairs_equal_a_grid_call() {
        let mut worlds: Vec<(String, Vec<Sphere>)> = Vec::new();
        for kind in SceneKind::ALL {
            for (n, seed) in [(2, 1), (7, 2), (64, 3), (64, 4), (300, 5)] {
                let s = Scene::generate(kind, &SceneParams::new(n, seed)).spheres;
                worlds.push((format!("{kind:?} n {n} seed {seed}"), s));
            }
        }
        let ball = |x: f32, y: f32, r: f32| Sphere::new(Vec3::new(x, y, 0.5 * x), r);
        let small: Vec<Sphere> = (0..60)
            .map(|i| ball(i as f32 * 0.9, (i % 7) as f32, 0.5))
            .collect();
        let mut one_giant = small.clone();
        one_giant.push(ball(20.0, 3.0, 12.0));
        let mut some_giants = one_giant.clone();
        some_giants.extend([
            ball(-5.0, 0.0, 30.0),
            ball(60.0, 2.0, 9.0),
            ball(200.0, 0.0, 8.0),
        ]);
        let giant_split = |s: &[Sphere]| GridFrame::of(s).giant_split;
        assert!(giant_split(&one_giant) < 255 && giant_split(&some_giants) < 255);
        let mut too_many = small.clone();
        too_many.extend((0..33).map(|i| ball(i as f32 * 3.0, 0.0, 40.0)));
        let points: Vec<Sphere> = (0..50).map(|i| ball((i / 5) as f32, 0.0, 0.0)).collect();
        let mut points_and_one = points.clone();
        points_and_one.push(ball(2.0, 0.0, 1.0));
        let far: Vec<Sphere> = (0..40)
            .map(|i| ball(9e17 - i as f32 * 1e11, -3e17, 6e10))
            .collect();
        for (what, s) in [
            ("one giant", one_giant),
            ("four giants", some_giants),
            ("33 giants", too_many),
            ("points", points),
            ("points and a sphere", points_and_one),
            ("far out", far),
        ] {
            worlds.push((what.to_string(), s));
        }
        let mut lean = LeanGrid::default();
        for (what, spheres) in &worlds {
            let mut want = Vec::new();
            let ws = Grid::new().find_pairs(spheres, Some(&mut want)).unwrap();
            let mut got = Vec::new();
            let gs = lean.find_pairs(spheres, Some(&mut got));
            canonicalize(&mut want);
            canonicalize(&mut got);
            assert_eq!((gs.tests, gs.pairs), (ws.tests, ws.pairs), "{what}");
            assert_eq!(got, want, "{what}");
            assert_eq!(
                lean.find_pairs(spheres, None).pairs,
                ws.pairs,
                "{what}: counting"
            );
        }
    }
}
