//! Separating-axis narrow phase on the CPU (seed 001): exact closed overlap of convex polygons
//! and oriented boxes, one pair at a time and batched over candidate lists, plus the full CPU
//! pipeline (AABB sweep and prune, then SAT).

use crate::broadphase::{Clock, Pair, Stats};
use crate::cpu::aabb_sweep::aabb_sweep;
use crate::error::{Error, Result};
use crate::geom::obb::{Obb, ObbFrame, obb_frames, validate_obbs};
use crate::geom::polygon::{Polygon, PolygonSet, polygon_aabbs};
use glam::Vec2;
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
/// Works in A's frame: `r[i][j] = A_i . B_j`, `t` = centre offset in A's axes. Face axes use the
/// classic radius formulas; the edge axes `L = A_i x B_j` are formed explicitly from `r` and
/// every projection is taken against that same `L`, so a nearly degenerate `L` is still a
/// consistent (if arbitrary) axis and can never separate touching boxes by rounding.
#[inline]
pub fn obb_frames_overlap(a: &ObbFrame, b: &ObbFrame) -> bool {
    let d = b.center() - a.center();
    let aa = [a.axis(0), a.axis(1), a.axis(2)];
    let ba = [b.axis(0), b.axis(1), b.axis(2)];
    let ha = [a.half(0), a.half(1), a.half(2)];
    let hb = [b.half(0), b.half(1), b.half(2)];
    let t = [d.dot(aa[0]), d.dot(aa[1]), d.dot(aa[2])];
    let mut r = [[0f32; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = aa[i].dot(ba[j]);
        }
    }
    // A's face normals.
    for i in 0..3 {
        let rb = hb[0] * r[i][0].abs() + hb[1] * r[i][1].abs() + hb[2] * r[i][2].abs();
        if t[i].abs() > ha[i] + rb {
            return false;
        }
    }
    // B's face normals.
    for j in 0..3 {
        let tb = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        let ra = ha[0] * r[0][j].abs() + ha[1] * r[1][j].abs() + ha[2] * r[2][j].abs();
        if tb.abs() > ra + hb[j] {
            return false;
        }
    }
    // Edge-edge axes L = A_i x B_j; in A's frame L[i] = 0, L[i1] = -B_j[i2], L[i2] = B_j[i1].
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (l1, l2) = (-r[i2][j], r[i1][j]);
            if l1 * l1 + l2 * l2 < PARALLEL_SIN_SQ {
                continue;
            }
            let tl = t[i1] * l1 + t[i2] * l2;
            let ra = ha[i1] * l1.abs() + ha[i2] * l2.abs();
            let rb = hb[0] * (r[i1][0] * l1 + r[i2][0] * l2).abs()
                + hb[1] * (r[i1][1] * l1 + r[i2][1] * l2).abs()
                + hb[2] * (r[i1][2] * l1 + r[i2][2] * l2).abs();
            if tl.abs() > ra + rb {
                return false;
            }
        }
    }
    true
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
    out.par_extend(
        candidates
            .par_iter()
            .with_min_len(1024)
            .filter(|p| obb_frames_overlap(&frames[p[0] as usize], &frames[p[1] as usize]))
            .copied(),
    );
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
    out.par_extend(
        candidates
            .par_iter()
            .with_min_len(256)
            .filter(|p| polygons_overlap(set.polygon(p[0] as usize), set.polygon(p[1] as usize)))
            .copied(),
    );
    Ok(())
}

/// Every overlapping (or touching) pair of boxes, `i < j`, in no particular order: validation,
/// AABB sweep and prune, then the separating-axis test. `Stats::tests` counts SAT tests.
pub fn obb_overlaps(boxes: &[Obb]) -> Result<(Vec<Pair>, Stats)> {
    validate_obbs(boxes)?;
    let mut stats = Stats::default();
    let t0 = Instant::now();
    let frames = obb_frames(boxes);
    let aabbs: Vec<_> = boxes.par_iter().map(Obb::aabb).collect();
    let t1 = Instant::now();
    stats.stage("bounds", (t1 - t0).as_secs_f64(), Clock::Wall);
    let mut candidates = Vec::new();
    aabb_sweep(&aabbs, &mut candidates);
    let t2 = Instant::now();
    stats.stage("aabb_sweep", (t2 - t1).as_secs_f64(), Clock::Wall);
    let mut pairs = Vec::new();
    obb_frame_pairs(&frames, &candidates, &mut pairs)?;
    stats.stage("sat", t2.elapsed().as_secs_f64(), Clock::Wall);
    stats.tests = candidates.len() as u64;
    stats.pairs = pairs.len() as u64;
    Ok((pairs, stats))
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
    let mut stats = Stats::default();
    let t0 = Instant::now();
    let set = PolygonSet::new(polygons)?;
    let aabbs = polygon_aabbs(polygons);
    let t1 = Instant::now();
    stats.stage("bounds", (t1 - t0).as_secs_f64(), Clock::Wall);
    let mut candidates = Vec::new();
    aabb_sweep(&aabbs, &mut candidates);
    let t2 = Instant::now();
    stats.stage("aabb_sweep", (t2 - t1).as_secs_f64(), Clock::Wall);
    let mut pairs = Vec::new();
    polygon_set_pairs(&set, &candidates, &mut pairs)?;
    stats.stage("sat", t2.elapsed().as_secs_f64(), Clock::Wall);
    stats.tests = candidates.len() as u64;
    stats.pairs = pairs.len() as u64;
    Ok((pairs, stats))
}
