//! One-pair separating-axis tests: oriented boxes (15 axes, filtered with an error bound, the
//! rest settled exactly by `geom::exact`) and convex polygons (edge normals). Closed overlap:
//! touching counts. The batched CPU form is `cpu::sat`, the GPU form `shaders/boxes/sat.wgsl`;
//! all three use the same formulation (docs/design.md §4). The polygons' test is public as
//! [`Polygon::overlaps`](crate::geom::polygon::Polygon::overlaps), which takes validated polygons.

use crate::geom::obb::ObbFrame;
use crate::geom::primitives2d::Rect2;
use glam::{Vec2, Vec3A, Vec4};

/// Relative error bound of [`obb_frames_verdict`]: on every axis, the computed margin is within
/// `OBB_ERROR_REL * scale + OBB_ERROR_ABS` of the exact boxes' margin on the exact axis, with
/// `scale = |d|_1 + sum hA + sum hB`. 128 units of f32 rounding (2^-24 each); the error
/// analysis of docs/design.md §4.2 gives under 50 (axes within half an ulp, then a few roundings
/// per sum), and the tests measure it on near-touching pairs.
pub(crate) const OBB_ERROR_REL: f32 = 128.0 * (f32::EPSILON / 2.0);

/// Absolute part of the bound: GPUs may flush results below 2^-126 to zero, about a hundred
/// operations per axis.
pub(crate) const OBB_ERROR_ABS: f32 = 1e-35;

/// What the filtered separating-axis test knows about a pair of boxes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SatVerdict {
    /// Some axis separates the exact boxes by more than the error bound.
    Apart,
    /// No axis separates them, each by more than the error bound.
    Overlap,
    /// The axes (bits `0-2` A's faces, `3-5` B's faces, `6 + 3 i + j` the edges `A_i x B_j`)
    /// whose margin lies within the error bound; every other axis does not separate. Settled
    /// exactly by `crate::geom::exact::settle`.
    Unsure(u16),
}

/// The filtered separating-axis test of two boxes (docs/design.md §4.2): each of the 15 axes'
/// margins `|t.L| - (ra + rb)` computed in f32 and compared with the error bound, so that a
/// pair is called apart or overlapping only when the exact boxes (centre, half-extents, the
/// rotation of the normalised quaternion) are; pairs within the bound of touching are
/// [`SatVerdict::Unsure`].
///
/// Works in A's frame: rows `r_i = (A_i . B_0, A_i . B_1, A_i . B_2)` of `R = A^T B`, `t` = centre
/// offset in A's axes. Face axes use the classic radius formulas; the edge axes
/// `L = A_i x B_j` are formed explicitly from `R` and every projection is taken against that same
/// `L`. An edge axis is exactly zero when both frames have exact axes and `L` computes to zero
/// (parallel edges): it never separates. Each group of three axes is one SIMD comparison (the
/// vector lanes run over `j`), the same formulation as `shaders/boxes/sat.wgsl`.
#[inline]
pub fn obb_frames_verdict(a: &ObbFrame, b: &ObbFrame) -> SatVerdict {
    let v = |x: Vec4| Vec3A::from_vec4(x);
    let d = v(b.center - a.center);
    let (a0, a1, a2) = (v(a.axes[0]), v(a.axes[1]), v(a.axes[2]));
    let (b0, b1, b2) = (v(b.axes[0]), v(b.axes[1]), v(b.axes[2]));
    let ha = Vec3A::new(a.axes[0].w, a.axes[1].w, a.axes[2].w);
    let hb = Vec3A::new(b.axes[0].w, b.axes[1].w, b.axes[2].w);
    let scale = d.abs().element_sum() + ha.element_sum() + hb.element_sum();
    let e = Vec3A::splat(scale * OBB_ERROR_REL + OBB_ERROR_ABS);
    let t = Vec3A::new(d.dot(a0), d.dot(a1), d.dot(a2));
    let row = |ai: Vec3A| Vec3A::new(ai.dot(b0), ai.dot(b1), ai.dot(b2));
    let (r0, r1, r2) = (row(a0), row(a1), row(a2));
    // A's face normals.
    let rb = Vec3A::new(hb.dot(r0.abs()), hb.dot(r1.abs()), hb.dot(r2.abs()));
    let m = t.abs() - (ha + rb);
    if m.cmpgt(e).any() {
        return SatVerdict::Apart;
    }
    let mut unsure = (!m.cmple(-e)).bitmask() as u16;
    // B's face normals.
    let tb = t.x * r0 + t.y * r1 + t.z * r2;
    let ra = ha.x * r0.abs() + ha.y * r1.abs() + ha.z * r2.abs();
    let m = tb.abs() - (ra + hb);
    if m.cmpgt(e).any() {
        return SatVerdict::Apart;
    }
    unsure |= ((!m.cmple(-e)).bitmask() as u16) << 3;
    // Edge-edge axes, i = 0, 1, 2 with (i1, i2) = (i + 1, i + 2) mod 3.
    let exact = a.exact_axes() && b.exact_axes();
    let edges = [
        (t.y, t.z, ha.y, ha.z, r1, r2),
        (t.z, t.x, ha.z, ha.x, r2, r0),
        (t.x, t.y, ha.x, ha.y, r0, r1),
    ];
    for (i, (t1, t2, ha1, ha2, r1, r2)) in edges.into_iter().enumerate() {
        let (m, zero) = edge_margins(t1, t2, ha1, ha2, r1, r2, hb);
        if m.cmpgt(e).any() {
            return SatVerdict::Apart;
        }
        let mut u = !m.cmple(-e);
        if exact {
            u &= !zero;
        }
        unsure |= (u.bitmask() as u16) << (6 + 3 * i);
    }
    if unsure == 0 {
        SatVerdict::Overlap
    } else {
        SatVerdict::Unsure(unsure)
    }
}

/// Margins on the edge-edge axes `A_i x B_j` for one `i` and all three `j` (vector lanes), and
/// which of them compute to the zero vector. In A's frame the axis has components
/// `l1 = -R[i2][j]` (at `i1`) and `l2 = R[i1][j]` (at `i2`); `r1`, `r2` are rows `i1`, `i2` of
/// `R`.
#[inline(always)]
fn edge_margins(
    t1: f32,
    t2: f32,
    ha1: f32,
    ha2: f32,
    r1: Vec3A,
    r2: Vec3A,
    hb: Vec3A,
) -> (Vec3A, glam::BVec3A) {
    let (l1, l2) = (-r2, r1);
    let tl = t1 * l1 + t2 * l2;
    let ra = ha1 * l1.abs() + ha2 * l2.abs();
    // Projection of B's axis k on L, for every j at once: R[i1][k] l1 + R[i2][k] l2.
    let rb = hb.x * (r1.x * l1 + r2.x * l2).abs()
        + hb.y * (r1.y * l1 + r2.y * l2).abs()
        + hb.z * (r1.z * l1 + r2.z * l2).abs();
    let zero = l1.cmpeq(Vec3A::ZERO) & l2.cmpeq(Vec3A::ZERO);
    (tl.abs() - (ra + rb), zero)
}

/// Closed overlap of two convex polygons given counter-clockwise (as [`Polygon`](crate::geom::polygon::Polygon) stores them).
/// Candidate axes are the edge normals of both. For an edge of P the projection of P ends at the
/// edge itself (convexity), so Q is separated from P along that normal exactly when every vertex
/// of Q lies strictly outside the edge's line.
///
/// Exact for every pair validation accepts (docs/design.md §4.6): each vertex's side of an edge
/// is the sign of `(b - a) x (v - a)` in f32 where it lies beyond the error bound, and else
/// decided exactly (`robust::orient2d` on the inputs' values). The GPU filters with a bound a
/// vertex (`POLYGON_ERROR_REL`) and leaves its unsure pairs to the host.
/// (Public as [`Polygon::overlaps`](crate::geom::polygon::Polygon::overlaps): the loops must be
/// ones [`Polygon::new`](crate::geom::polygon::Polygon::new) accepts.)
#[inline]
pub(crate) fn polygons_overlap(p: &[Vec2], q: &[Vec2]) -> bool {
    polygons_overlap_within(p, q, pair_bound(&PolygonReach::of(p), &PolygonReach::of(q)))
}

/// Relative error bound of the f32 edge test: `(b - a) x (v - a)` as two rounded differences,
/// two rounded products `l`, `r` and a rounded difference is within 3 units of rounding (2^-24
/// each) of the exact value times `|l| + |r|`; 32 units leave room for a GPU's fused
/// multiply-add, any order of operations and the bound's own rounding.
pub(crate) const POLYGON_ERROR_REL: f32 = 32.0 * (f32::EPSILON / 2.0);

/// Absolute part of the bound: a GPU may flush products below 2^-126 to zero.
pub(crate) const POLYGON_ERROR_ABS: f32 = 1e-35;

/// What the CPU's filter needs of one polygon: its vertex bounds and its longest edge (`|e|_1`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PolygonReach {
    lo: Vec2,
    hi: Vec2,
    edge: f32,
}

impl PolygonReach {
    pub(crate) fn of(p: &[Vec2]) -> Self {
        let mut reach = Self {
            lo: p[0],
            hi: p[0],
            edge: 0.0,
        };
        let mut prev = p[p.len() - 1];
        for &v in p {
            reach.lo = reach.lo.min(v);
            reach.hi = reach.hi.max(v);
            reach.edge = reach.edge.max((v - prev).abs().element_sum());
            prev = v;
        }
        reach
    }
}

/// One bound for every vertex-edge test of a pair, both ways: `|l| + |r| <= |e|_1 |v - a|_inf`,
/// the longest edge of either times the farthest any vertex of one lies from any of the other.
/// A vertex then costs what the plain f32 test cost (a bound a vertex, as the kernel takes it:
/// polygon SAT stage at density 200k, 49.5-50.9 ms against 37.9-38.5 unfiltered; a bound an
/// edge: about 50).
#[inline]
pub(crate) fn pair_bound(a: &PolygonReach, b: &PolygonReach) -> f32 {
    let reach = (b.hi - a.lo).abs().max((a.hi - b.lo).abs()).max_element();
    POLYGON_ERROR_REL * a.edge.max(b.edge) * reach + POLYGON_ERROR_ABS
}

/// [`polygons_overlap`] with the pair's bound ([`pair_bound`]) given.
#[inline]
pub(crate) fn polygons_overlap_within(p: &[Vec2], q: &[Vec2], bound: f32) -> bool {
    !separated_by_an_edge_of(p, q, bound) && !separated_by_an_edge_of(q, p, bound)
}

/// Whether every vertex of `q` lies strictly outside one edge of `p`, exactly.
#[inline]
fn separated_by_an_edge_of(p: &[Vec2], q: &[Vec2], bound: f32) -> bool {
    let mut prev = p[p.len() - 1];
    for &cur in p {
        let e = cur - prev;
        // `outward . d` is `-(e x d)`: outside where it is positive.
        let outward = Vec2::new(e.y, -e.x);
        let outside = |v: Vec2| {
            let s = outward.dot(v - prev);
            if s > bound {
                true
            } else if s < -bound {
                false
            } else {
                outside_exact(prev, cur, v)
            }
        };
        if q.iter().all(|&v| outside(v)) {
            return true;
        }
        prev = cur;
    }
    false
}

/// Whether `v` lies strictly outside the edge `a -> b` of a counter-clockwise polygon, in exact
/// arithmetic: the sign of the orientation on the inputs' values (f32 to f64 is exact, and
/// `robust`'s expansions neither overflow nor underflow within the coordinates validation
/// accepts). Few vertices come here: kept out of the loop's code.
#[cold]
#[inline(never)]
fn outside_exact(a: Vec2, b: Vec2, v: Vec2) -> bool {
    let c = |p: Vec2| robust::Coord {
        x: f64::from(p.x),
        y: f64::from(p.y),
    };
    robust::orient2d(c(a), c(b), c(v)) < 0.0
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
