//! The walks a world batch runs for small worlds on the calling thread, each a method's own
//! rule without a call's fixed costs (stages, clocks, the pair emitter's chunks and budget),
//! which dominate worlds of a few dozen objects: the same tests and pairs as the method's call
//! on the world (`each_method_tests_in_a_batch_what_its_calls_test_world_by_world`).

use crate::broadphase::memory::try_push;
use crate::broadphase::{Pair, Stats};
use crate::cpu::blocks::{BLOCK, column, walk_diagonals};
use crate::geom::sphere::Sphere;

/// A world's sweep scratch, kept across worlds: the packed `(lo, index)` keys, then, in that
/// order, each object's interval on the sweep axis and its box on the two others, column by
/// column, with sentinels up to the diagonal walk's last read (`m` rounded up to [`BLOCK`],
/// then a block) that are never in reach. The cascades use the keys and the sweep axis's
/// columns for their last axis.
#[derive(Default)]
pub(super) struct SweepScratch {
    keys: Vec<u64>,
    lo: Vec<f32>,
    hi: Vec<f32>,
    /// `lo_b, hi_b, lo_c, hi_c`.
    other: [Vec<f32>; 4],
}

/// `sap`'s rule (`cpu::sap`, docs/design.md §2.6) on one world, on the calling thread: the axis
/// of largest centre spread, objects in `(lo, index)` order, each visiting the following ones
/// while `lo_j <= hi_i`, tested when the boxes overlap on the two other axes. The same tests
/// and pairs as a `Sap` call on the world; what it leaves out is a call's fixed costs (stages,
/// clocks, the pair emitter's chunks and budget), which dominate worlds of a few dozen objects.
pub(super) fn sweep_world(
    local: &[Sphere],
    scratch: &mut SweepScratch,
    mut out: Option<&mut Vec<Pair>>,
) -> Stats {
    use crate::cpu::axis_order::lo;
    use crate::cpu::keys::{index_of, pack};
    use glam::{Mat4, Vec4};
    let axis = crate::broadphase::sweep_axis::sweep_axis(local);
    let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
    let SweepScratch {
        keys,
        lo: los,
        hi: his,
        other,
    } = scratch;
    // Sorting the packed keys alone, then gathering the columns in their order, is faster
    // than sorting rows.
    keys.clear();
    keys.extend(
        local
            .iter()
            .enumerate()
            .map(|(i, s)| pack(lo(s, axis), i as u32)),
    );
    keys.sort_unstable();
    let m = keys.len();
    // The columns, four rows at a time: four spheres' boxes on the three axes (two vectors
    // each) transposed into them. Rows past the end, up to the walk's last read (`m` rounded
    // up to eight, then a block), are sentinels: lo infinite (in no row's reach), the rest
    // NaN (reaching and overlapping nothing).
    let padded = m.next_multiple_of(BLOCK) + BLOCK;
    for column in [&mut *los, &mut *his].into_iter().chain(other.iter_mut()) {
        column.clear();
        column.resize(padded, f32::NAN);
    }
    let [lbs, hbs, lcs, hcs] = other;
    let sphere = |k: usize| -> Vec4 {
        keys.get(k).map_or(Vec4::NAN, |&key| {
            Vec4::from_array(bytemuck::cast(local[index_of(key) as usize]))
        })
    };
    for k in (0..m).step_by(4) {
        let four = [sphere(k), sphere(k + 1), sphere(k + 2), sphere(k + 3)];
        // The same sums as `lo` and `hi`, lane by lane.
        let box_ends = |sign: f32| {
            let [e0, e1, e2, e3] = four.map(|v| v + sign * Vec4::splat(v.w));
            Mat4::from_cols(e0, e1, e2, e3).transpose()
        };
        let (lo4, hi4) = (box_ends(-1.0), box_ends(1.0));
        for (column, ends, axis) in [
            (&mut *los, lo4, axis),
            (&mut *his, hi4, axis),
            (&mut *lbs, lo4, b),
            (&mut *hbs, hi4, b),
            (&mut *lcs, lo4, c),
            (&mut *hcs, hi4, c),
        ] {
            ends.col(axis).write_to_slice(&mut column[k..k + 4]);
        }
    }
    los[m..].fill(f32::INFINITY);
    let mut stats = Stats::default();
    // Four rows from `p` against those `q - p` places after each: in reach on the sweep axis
    // and overlapping on the two others.
    let rows = |p: usize| {
        [
            column(his, p),
            column(lbs, p),
            column(hbs, p),
            column(lcs, p),
            column(hcs, p),
        ]
    };
    let diagonal = |q: usize, [hp, lbp, hbp, lcp, hcp]: [Vec4; 5]| {
        let reach = column(los, q).cmple(hp);
        let hits = reach
            & column(lbs, q).cmple(hbp)
            & lbp.cmple(column(hbs, q))
            & column(lcs, q).cmple(hcp)
            & lcp.cmple(column(hcs, q));
        (reach.bitmask(), hits.bitmask())
    };
    walk_diagonals(m, rows, diagonal, |p, q| {
        let (ip, iq) = (index_of(keys[p]), index_of(keys[q]));
        test(local, ip, iq, &mut stats, &mut out);
    });
    stats
}

/// One test of a walk: counted, and the pair kept when the two touch (local indices). Where
/// memory refuses the list's growth the walk goes on counting and stores no more: the caller
/// sees fewer pairs stored than counted.
#[inline]
fn test(local: &[Sphere], i: u32, j: u32, stats: &mut Stats, out: &mut Option<&mut Vec<Pair>>) {
    stats.tests += 1;
    if local[i as usize].touches(&local[j as usize]) {
        stats.pairs += 1;
        if let Some(list) = out.as_deref_mut()
            && !try_push(list, [i.min(j), i.max(j)])
        {
            *out = None;
        }
    }
}

/// `x`, `xy` and `xyz`'s rule (`cpu::sweep`, docs/design.md §2.4) on one world, `axes` 1, 2 or
/// 3: on each axis but the last, the objects left keep those overlapping another of them there
/// (in `(lo, index)` order: the running maximum of hi before an object reaches its lo, or the
/// next one's lo is within its hi); on the last, every pair of those left overlapping there is
/// tested, each object against the following ones while `lo_q <= hi_p`.
pub(super) fn cascade_world(
    local: &[Sphere],
    axes: usize,
    scratch: &mut SweepScratch,
    alive: &mut Vec<u32>,
    mut out: Option<&mut Vec<Pair>>,
) -> Stats {
    use crate::cpu::axis_order::{hi, lo};
    use crate::cpu::keys::{index_of, pack};
    use glam::Vec4;
    let SweepScratch {
        keys,
        lo: los,
        hi: his,
        ..
    } = scratch;
    let sphere = |key: u64| &local[index_of(key) as usize];
    alive.clear();
    alive.extend(0..local.len() as u32);
    for axis in 0..axes {
        keys.clear();
        keys.extend(alive.iter().map(|&i| pack(lo(&local[i as usize], axis), i)));
        keys.sort_unstable();
        if axis + 1 < axes {
            alive.clear();
            let mut reach = f32::NEG_INFINITY;
            for (k, &key) in keys.iter().enumerate() {
                let (l, h) = (lo(sphere(key), axis), hi(sphere(key), axis));
                let next = keys.get(k + 1).is_some_and(|&n| lo(sphere(n), axis) <= h);
                if reach >= l || next {
                    alive.push(index_of(key));
                }
                reach = reach.max(h);
            }
        }
    }
    // The last axis: every pair in reach, walked diagonal by diagonal ([`walk_diagonals`])
    // over its lo and hi columns (sentinels past the end: lo infinite, hi NaN).
    let last = axes - 1;
    let m = keys.len();
    let padded = m.next_multiple_of(BLOCK) + BLOCK;
    los.clear();
    los.extend(keys.iter().map(|&k| lo(sphere(k), last)));
    los.resize(padded, f32::INFINITY);
    his.clear();
    his.extend(keys.iter().map(|&k| hi(sphere(k), last)));
    his.resize(padded, f32::NAN);
    let mut stats = Stats::default();
    let rows = |p: usize| column(his, p);
    let diagonal = |q: usize, hp: Vec4| {
        let reach = column(los, q).cmple(hp).bitmask();
        (reach, reach)
    };
    walk_diagonals(m, rows, diagonal, |p, q| {
        let (ip, iq) = (index_of(keys[p]), index_of(keys[q]));
        test(local, ip, iq, &mut stats, &mut out);
    });
    stats
}

/// `brute_force`'s rule on one world: every pair tested.
pub(super) fn brute_world(local: &[Sphere], mut out: Option<&mut Vec<Pair>>) -> Stats {
    let mut stats = Stats::default();
    let n = local.len() as u32;
    for i in 0..n {
        for j in i + 1..n {
            test(local, i, j, &mut stats, &mut out);
        }
    }
    stats
}

/// `origin_distance`'s rule (`cpu::origin_distance`, docs/design.md §2.3) on one world: in
/// `(|c|, index)` order, each object against the following ones while
/// `D_q - D_p <= 2 r_max + ORIGIN_KEY_SLACK D_q`, `r_max` the world's largest radius.
pub(super) fn origin_world(
    local: &[Sphere],
    keys: &mut Vec<u64>,
    mut out: Option<&mut Vec<Pair>>,
) -> Stats {
    use crate::cpu::keys::{index_of, pack};
    use crate::geom::sphere::{ORIGIN_KEY_SLACK, max_radius, origin_key};
    keys.clear();
    keys.extend(
        local
            .iter()
            .enumerate()
            .map(|(i, s)| pack(origin_key(s.center), i as u32)),
    );
    keys.sort_unstable();
    let distance = |key: u64| origin_key(local[index_of(key) as usize].center);
    let reach = 2.0 * max_radius(local);
    let mut stats = Stats::default();
    for (p, &kp) in keys.iter().enumerate() {
        let dp = distance(kp);
        for &kq in &keys[p + 1..] {
            let dq = distance(kq);
            if dq - dp > reach + ORIGIN_KEY_SLACK * dq {
                break;
            }
            test(local, index_of(kp), index_of(kq), &mut stats, &mut out);
        }
    }
    stats
}
