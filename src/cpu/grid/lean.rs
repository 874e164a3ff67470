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
use super::giants::{Giant, Reach};
use crate::broadphase::{Pair, Stats};
use crate::cpu::blocks::{BLOCK, column, walk_diagonals};
use crate::geom::sphere::Sphere;
use glam::{BVec4A, Vec4};

/// Cells (relative to the world's lowest) below this are exact in f32: worlds spanning more
/// are left to the grid's call ([`LeanGrid::find_pairs`] returns `None`).
const EXACT_IN_F32: u32 = 1 << 24;

/// x cells a world may span, per object, for the counting sort on kx (its counters cost about
/// as much as the objects then).
const COUNTING_SPAN_PER_OBJECT: usize = 4;

/// Buffers kept across worlds.
#[derive(Default)]
pub(crate) struct LeanGrid {
    /// `kx << 32 | index` of each non-giant (cells relative to the frame's minimum), sorted
    /// (the counting sort leaves the index alone).
    keys: Vec<u64>,
    /// The counting sort's counters, one an x cell.
    counts: Vec<u32>,
    /// Each object's relative cell, by local index.
    cells: Vec<[u32; 3]>,
    /// The non-giants in `(kx, index)` order, column by column: kx, ky, kz (with [`BLOCK`]
    /// sentinels past the end, never in reach) and the local index.
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    index: Vec<u32>,
    giants: Vec<Giant>,
    reach: Reach,
}

impl LeanGrid {
    /// The grid's tests and pairs of `local` (spheres already validated), the pairs in local
    /// indices `[min, max]` appended to `out` when given.
    pub(crate) fn find_pairs(
        &mut self,
        local: &[Sphere],
        mut out: Option<&mut Vec<Pair>>,
    ) -> Option<Stats> {
        let frame = GridFrame::of_small(local);
        if frame.max_cell.iter().any(|&c| c >= EXACT_IN_F32) {
            return None;
        }
        debug_assert!(frame.valid, "the batch validates its spheres first");
        let Self {
            keys,
            counts,
            cells,
            xs,
            ys,
            zs,
            index,
            giants,
            reach,
        } = self;
        cells.clear();
        giants.clear();
        index.clear();
        for (i, s) in local.iter().enumerate() {
            let cell = frame.cell(s.center);
            cells.push(cell);
            if frame.is_giant(s) {
                giants.push(Giant::new(&frame, i as u32, *s));
            } else {
                index.push(i as u32);
            }
        }
        // The non-giants in `(kx, index)` order. Where the world spans few x cells (about as
        // many as objects), a counting sort on kx, stable so that ties stay in index order;
        // else the packed keys sorted (the keys alone, then the rows gathered: faster than
        // sorting rows).
        let m = index.len();
        let span = frame.max_cell[0] as usize + 1;
        if span <= COUNTING_SPAN_PER_OBJECT * m.max(16) {
            counts.clear();
            counts.resize(span + 1, 0);
            for &i in index.iter() {
                counts[cells[i as usize][0] as usize + 1] += 1;
            }
            for x in 1..=span {
                counts[x] += counts[x - 1];
            }
            keys.clear();
            keys.resize(m, 0);
            for &i in index.iter() {
                let slot = &mut counts[cells[i as usize][0] as usize];
                keys[*slot as usize] = u64::from(i);
                *slot += 1;
            }
        } else {
            keys.clear();
            keys.extend(
                index
                    .iter()
                    .map(|&i| (u64::from(cells[i as usize][0]) << 32) | u64::from(i)),
            );
            keys.sort_unstable();
        }
        // Sentinels up to the walk's last read (`m` rounded up to eight, then a block): x
        // never in reach, y and z never near.
        let padded = m.next_multiple_of(BLOCK) + BLOCK;
        xs.clear();
        xs.resize(padded, f32::INFINITY);
        ys.clear();
        ys.resize(padded, f32::NAN);
        zs.clear();
        zs.resize(padded, f32::NAN);
        for (k, &key) in keys.iter().enumerate() {
            let i = key as u32;
            let [x, y, z] = cells[i as usize];
            [xs[k], ys[k], zs[k]] = [x as f32, y as f32, z as f32];
            index[k] = i;
        }
        let mut stats = Stats::default();
        let mut test = |i: u32, j: u32, stats: &mut Stats| {
            stats.tests += 1;
            if local[i as usize].touches(&local[j as usize]) {
                stats.pairs += 1;
                // Where memory refuses the growth: counted, no more stored (the caller sees
                // fewer pairs stored than counted).
                if let Some(list) = out.as_deref_mut()
                    && !crate::broadphase::memory::try_push(list, [i.min(j), i.max(j)])
                {
                    out = None;
                }
            }
        };
        // Four rows from `p` against those `q - p` places after each: in reach on x (the rows
        // being in kx order) and near (at most a cell apart) on y and z. Cells below 2^24 are
        // exact in f32, and so are `x + 1` and the differences; a row past the end reaches
        // nothing (NaN).
        let rows = |p: usize| {
            let real = BVec4A::new(p < m, p + 1 < m, p + 2 < m, p + 3 < m);
            let reach_x = Vec4::select(real, column(xs, p) + Vec4::ONE, Vec4::NAN);
            [reach_x, column(ys, p), column(zs, p)]
        };
        let diagonal = |q: usize, [reach_x, yp, zp]: [Vec4; 3]| {
            let reach = column(xs, q).cmple(reach_x);
            let near = (column(ys, q) - yp).abs().cmple(Vec4::ONE)
                & (column(zs, q) - zp).abs().cmple(Vec4::ONE);
            (reach.bitmask(), (reach & near).bitmask())
        };
        walk_diagonals(m, rows, diagonal, |p, q| {
            test(index[p], index[q], &mut stats)
        });
        if !giants.is_empty() {
            // Each object's absolute cell once, against the reach of the giants near it.
            reach.build(giants);
            for &i in index.iter() {
                let cell = frame.centre_cell(local[i as usize].center);
                for &t in reach.near(cell) {
                    let g = &giants[t as usize];
                    if g.reaches(cell) {
                        test(i, g.index, &mut stats);
                    }
                }
            }
            for t in 0..giants.len() {
                reach.giant_pairs(giants, t, |a, b| test(a.index, b.index, &mut stats));
            }
        }
        Some(stats)
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
        // 33 giants among 600 (a budget of 39): listed by coarse cell (`Reach`); more than
        // the budget: none.
        let mut indexed: Vec<Sphere> = (0..600)
            .map(|i| ball((i % 50) as f32 * 0.9, (i / 50) as f32 * 1.3, 0.5))
            .collect();
        indexed.extend((0..33).map(|i| ball(i as f32 * 3.0, (i % 5) as f32 * 20.0, 40.0)));
        assert!(
            GridFrame::of(&indexed).giant_split < 255,
            "33 giants set aside"
        );
        let mut too_many = small.clone();
        too_many.extend(
            (0..crate::geom::radii::GIANTS_MAX + 1).map(|i| ball(i as f32 * 3.0, 0.0, 40.0)),
        );
        let points: Vec<Sphere> = (0..50).map(|i| ball((i / 5) as f32, 0.0, 0.0)).collect();
        let mut points_and_one = points.clone();
        points_and_one.push(ball(2.0, 0.0, 1.0));
        let far: Vec<Sphere> = (0..40)
            .map(|i| ball(9e17 - i as f32 * 1e11, -3e17, 6e10))
            .collect();
        for (what, s) in [
            ("one giant", one_giant),
            ("four giants", some_giants),
            ("33 giants", indexed),
            ("past the giants' budget", too_many),
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
            let Some(gs) = lean.find_pairs(spheres, Some(&mut got)) else {
                // Left to the grid's call only where the world spans 2^24 cells.
                let cells = GridFrame::of(spheres).max_cell;
                assert!(
                    cells.iter().any(|&c| c >= EXACT_IN_F32),
                    "{what}: {cells:?}"
                );
                continue;
            };
            canonicalize(&mut want);
            canonicalize(&mut got);
            assert_eq!((gs.tests, gs.pairs), (ws.tests, ws.pairs), "{what}");
            assert_eq!(got, want, "{what}");
            assert_eq!(
                lean.find_pairs(spheres, None).map(|s| s.pairs),
                Some(ws.pairs),
                "{what}: counting"
            );
        }
        // A world spanning 2^24 cells or more on an axis is left to the grid's call.
        for (what, far) in [("x", Vec3::X), ("y", Vec3::Y), ("z", Vec3::Z)] {
            let wide = [
                Sphere::new(Vec3::ZERO, 1.0),
                Sphere::new(far * 1e9, 1.0),
                Sphere::new(far * 1e9 + 0.5, 1.0),
            ];
            assert!(lean.find_pairs(&wide, None).is_none(), "wide on {what}");
        }
        let edge = [
            Sphere::new(Vec3::ZERO, 0.5),
            Sphere::new(Vec3::X * 1.5e7, 0.5),
        ];
        assert!(lean.find_pairs(&edge, None).is_some(), "below 2^24 cells");
    }
}
