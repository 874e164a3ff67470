//! Separating-axis narrow phase on the CPU (seed 001): exact closed overlap of convex polygons
//! and oriented boxes, one pair at a time and batched over candidate lists, plus the full CPU
//! pipeline (AABB sweep and prune, then SAT).

use crate::broadphase::{Clock, Pair, Stats};
use crate::cpu::aabb_sweep::{aabb_sweep, sweep_order};
use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet, polygon_aabbs};
use glam::{Vec2, Vec3A, Vec4};
use rayon::prelude::*;
use std::time::Instant;

/// Edge-edge axes `A_i x B_j` with `|A_i x B_j|^2 < PARALLEL_SIN_SQ * |A_i|^2 |B_j|^2` (the axes
/// are unit, so this is `sin^2` of the angle between the edges) are skipped. For parallel edges
/// the cross product is rounding noise, and the face axes already decide the pair; for edges
/// within 1e-6 rad of parallel, skipping can only call "touching" a pair whose gap is below
/// 1e-6 of the box size, inside the 1e-5 touching tolerance of the verification.
pub const PARALLEL_SIN_SQ: f32 = 1e-12;

/// Closed overlap (touching counts) of two boxes by the 15-axis separating-axis test.
///
/// Works in A's frame: rows `r_i = (A_i . B_0, A_i . B_1, A_i . B_2)` of `R = A^T B`, `t` = centre
/// offset in A's axes. Face axes use the classic radius formulas; the edge axes
/// `L = A_i x B_j` are formed explicitly from `R` and every projection is taken against that same
/// `L`, so a nearly degenerate `L` is still a consistent (if arbitrary) axis and can never
/// separate touching boxes by rounding. Each group of three axes is one SIMD comparison (the
/// vector lanes run over `j`), the same formulation as `shaders/sat.wgsl`.
#[inline]
pub fn obb_frames_overlap(a: &ObbFrame, b: &ObbFrame) -> bool {
    let v = |x: Vec4| Vec3A::from_vec4(x);
    let d = v(b.center - a.center);
    let (a0, a1, a2) = (v(a.axes[0]), v(a.axes[1]), v(a.axes[2]));
    let (b0, b1, b2) = (v(b.axes[0]), v(b.axes[1]), v(b.axes[2]));
    let ha = Vec3A::new(a.axes[0].w, a.axes[1].w, a.axes[2].w);
    let hb = Vec3A::new(b.axes[0].w, b.axes[1].w, b.axes[2].w);
    let t = Vec3A::new(d.dot(a0), d.dot(a1), d.dot(a2));
    let row = |ai: Vec3A| Vec3A::new(ai.dot(b0), ai.dot(b1), ai.dot(b2));
    let (r0, r1, r2) = (row(a0), row(a1), row(a2));
    // A's face normals.
    let rb = Vec3A::new(hb.dot(r0.abs()), hb.dot(r1.abs()), hb.dot(r2.abs()));
    if t.abs().cmpgt(ha + rb).any() {
        return false;
    }
    // B's face normals.
    let tb = t.x * r0 + t.y * r1 + t.z * r2;
    let ra = ha.x * r0.abs() + ha.y * r1.abs() + ha.z * r2.abs();
    if tb.abs().cmpgt(ra + hb).any() {
        return false;
    }
    // Edge-edge axes, i = 0, 1, 2 with (i1, i2) = (i + 1, i + 2) mod 3.
    !(edge_axes_separate(t.y, t.z, ha.y, ha.z, r1, r2, hb)
        || edge_axes_separate(t.z, t.x, ha.z, ha.x, r2, r0, hb)
        || edge_axes_separate(t.x, t.y, ha.x, ha.y, r0, r1, hb))
}

/// Edge-edge axes `A_i x B_j` for one `i` and all three `j` (vector lanes). In A's frame the
/// axis has components `l1 = -R[i2][j]` (at `i1`) and `l2 = R[i1][j]` (at `i2`); `r1`, `r2` are
/// rows `i1`, `i2` of `R`. Axes with `|L|^2 < PARALLEL_SIN_SQ` are skipped.
#[inline(always)]
fn edge_axes_separate(
    t1: f32,
    t2: f32,
    ha1: f32,
    ha2: f32,
    r1: Vec3A,
    r2: Vec3A,
    hb: Vec3A,
) -> bool {
    let (l1, l2) = (-r2, r1);
    let tl = t1 * l1 + t2 * l2;
    let ra = ha1 * l1.abs() + ha2 * l2.abs();
    // Projection of B's axis k on L, for every j at once: R[i1][k] l1 + R[i2][k] l2.
    let rb = hb.x * (r1.x * l1 + r2.x * l2).abs()
        + hb.y * (r1.y * l1 + r2.y * l2).abs()
        + hb.z * (r1.z * l1 + r2.z * l2).abs();
    let usable = (l1 * l1 + l2 * l2).cmpge(Vec3A::splat(PARALLEL_SIN_SQ));
    (usable & tl.abs().cmpgt(ra + rb)).any()
}

/// Closed overlap of two convex polygons given counter-clockwise (as [`Polygon`] stores them).
/// Candidate axes are the edge normals of both. For an edge of P the projection of P ends at the
/// edge itself (convexity), so Q is separated from P along that normal exactly when every vertex
/// of Q lies strictly outside the edge's line.
#[inline]
pub fn polygons_overlap(p: &[Vec2], q: &[Vec2]) -> bool {
    !separated_by_an_edge_of(p, q) && !separated_by_an_edge_of(q, p)
}

#[inline]
fn separated_by_an_edge_of(p: &[Vec2], q: &[Vec2]) -> bool {
    let mut prev = p[p.len() - 1];
    for &cur in p {
        let e = cur - prev;
        let outward = Vec2::new(e.y, -e.x);
        if q.iter().all(|&v| outward.dot(v - prev) > 0.0) {
            return true;
        }
        prev = cur;
    }
    false
}

fn check_candidates(n: usize, candidates: &[Pair]) -> Result<()> {
    let bad = candidates
        .par_iter()
        .position_first(|p| p[0] as usize >= n || p[1] as usize >= n);
    match bad {
        None => Ok(()),
        Some(k) => Err(Error::Config(format!(
            "candidate pair {k} = {:?} refers to an object beyond the {n} given",
            candidates[k]
        ))),
    }
}

/// Appends to `out`, in candidate order, the candidates that pass `keep`, in parallel. Large
/// fixed chunks (one sequential filter each, then one copy) cost far less than rayon's per-item
/// splitting when a test takes tens of nanoseconds.
fn filter_in_chunks(candidates: &[Pair], out: &mut Vec<Pair>, keep: impl Fn(&Pair) -> bool + Sync) {
    const CHUNK: usize = 1 << 13;
    if candidates.len() <= CHUNK {
        out.extend(candidates.iter().filter(|p| keep(p)));
        return;
    }
    let parts: Vec<Vec<Pair>> = candidates
        .par_chunks(CHUNK)
        .map(|c| c.iter().filter(|p| keep(p)).copied().collect())
        .collect();
    out.reserve(parts.iter().map(Vec::len).sum());
    for part in parts {
        out.extend_from_slice(&part);
    }
}

/// Appends to `out` (after clearing it), in candidate order, the candidate pairs whose boxes
/// overlap. Boxes are assumed validated ([`validate_obbs`]); an out-of-range index is an error.
pub fn obb_pairs(boxes: &[Obb], candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    obb_frame_pairs(&obb_frames(boxes), candidates, out)
}

/// [`obb_pairs`] on precomputed frames (see [`obb_frames`]).
pub fn obb_frame_pairs(
    frames: &[ObbFrame],
    candidates: &[Pair],
    out: &mut Vec<Pair>,
) -> Result<()> {
    check_candidates(frames.len(), candidates)?;
    out.clear();
    filter_in_chunks(candidates, out, |p| {
        obb_frames_overlap(&frames[p[0] as usize], &frames[p[1] as usize])
    });
    Ok(())
}

/// The polygon equivalent of [`obb_pairs`].
pub fn polygon_pairs(polygons: &[Polygon], candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    polygon_set_pairs(&PolygonSet::new(polygons)?, candidates, out)
}

/// [`polygon_pairs`] on a flat polygon set.
pub fn polygon_set_pairs(set: &PolygonSet, candidates: &[Pair], out: &mut Vec<Pair>) -> Result<()> {
    check_candidates(set.len(), candidates)?;
    out.clear();
    filter_in_chunks(candidates, out, |p| {
        polygons_overlap(set.polygon(p[0] as usize), set.polygon(p[1] as usize))
    });
    Ok(())
}

/// Maps pairs of positions in `order` back to input indices, `i < j`.
fn unpermute(pairs: &mut [Pair], order: &[u32]) {
    pairs.par_iter_mut().for_each(|p| {
        let (a, b) = (order[p[0] as usize], order[p[1] as usize]);
        *p = [a.min(b), a.max(b)];
    });
}

/// Every overlapping (or touching) pair of boxes, `i < j`, in no particular order: validation,
/// AABB sweep and prune, then the separating-axis test. `Stats::tests` counts SAT tests.
pub fn obb_overlaps(boxes: &[Obb]) -> Result<(Vec<Pair>, Stats)> {
    validate_obbs(boxes)?;
    let start = Instant::now();
    let aabbs: Vec<_> = boxes.par_iter().map(Obb::aabb).collect();
    sweep_then_sat(
        start,
        &aabbs,
        |order| {
            Ok(order
                .par_iter()
                .map(|&i| boxes[i as usize].frame())
                .collect::<Vec<_>>())
        },
        |frames, candidates, pairs| obb_frame_pairs(frames, candidates, pairs),
    )
}

/// The polygon equivalent of [`obb_overlaps`] (polygons are validated when constructed).
pub fn polygon_overlaps(polygons: &[Polygon]) -> Result<(Vec<Pair>, Stats)> {
    if polygons.is_empty() {
        return Err(Error::EmptyScene);
    }
    if polygons.len() > u32::MAX as usize - 1 {
        return Err(Error::TooLarge(format!(
            "{} polygons: indices are u32",
            polygons.len()
        )));
    }
    let start = Instant::now();
    sweep_then_sat(
        start,
        &polygon_aabbs(polygons),
        |order| PolygonSet::in_order(polygons, order),
        polygon_set_pairs,
    )
}

/// The pipeline shared by boxes and polygons. Works in the sweep's order (see `sweep_order`):
/// `reorder` lays the shapes out in it, the AABB sweep finds candidates, `sat` keeps the
/// overlapping ones; pairs are mapped back to input indices at the end.
fn sweep_then_sat<S>(
    start: Instant,
    aabbs: &[Aabb],
    reorder: impl FnOnce(&[u32]) -> Result<S>,
    sat: impl FnOnce(&S, &[Pair], &mut Vec<Pair>) -> Result<()>,
) -> Result<(Vec<Pair>, Stats)> {
    let mut stats = Stats::default();
    let order = sweep_order(aabbs);
    let aabbs: Vec<_> = order.par_iter().map(|&i| aabbs[i as usize]).collect();
    let shapes = reorder(&order)?;
    let t1 = Instant::now();
    stats.stage("bounds", (t1 - start).as_secs_f64(), Clock::Wall);
    let mut candidates = Vec::new();
    aabb_sweep(&aabbs, &mut candidates);
    let t2 = Instant::now();
    stats.stage("aabb_sweep", (t2 - t1).as_secs_f64(), Clock::Wall);
    let mut pairs = Vec::new();
    sat(&shapes, &candidates, &mut pairs)?;
    unpermute(&mut pairs, &order);
    stats.stage("sat", t2.elapsed().as_secs_f64(), Clock::Wall);
    stats.tests = candidates.len() as u64;
    stats.pairs = pairs.len() as u64;
    Ok((pairs, stats))
}
