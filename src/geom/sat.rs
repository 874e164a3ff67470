//! Exact one-pair separating-axis tests: oriented boxes (15 axes) and convex polygons (edge
//! normals). Closed overlap: touching counts. The batched CPU form is `cpu::sat`, the GPU form
//! `shaders/boxes/sat.wgsl`; all three use the same formulation (docs/design.md, SAT).

use crate::geom::obb::ObbFrame;
use crate::geom::primitives2d::Rect2;
use glam::{Vec2, Vec3A, Vec4};

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
/// vector lanes run over `j`), the same formulation as `shaders/boxes/sat.wgsl`.
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

/// Closed overlap of two convex polygons given counter-clockwise (as [`Polygon`](crate::geom::polygon::Polygon) stores them).
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

/// 2D SAT on two rectangles: the four edge normals are the candidate axes.
pub fn rects_overlap_sat(a: &Rect2, b: &Rect2) -> bool {
    let d = b.center - a.center;
    let project = |r: &Rect2, axis: Vec2| {
        r.half_extents.x * r.axis.dot(axis).abs() + r.half_extents.y * r.axis.perp().dot(axis).abs()
    };
    [a.axis, a.axis.perp(), b.axis, b.axis.perp()]
        .into_iter()
        .all(|axis| d.dot(axis).abs() <= project(a, axis) + project(b, axis))
}
