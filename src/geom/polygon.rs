//! Convex polygons in the plane: validation, normalisation to counter-clockwise order, the flat
//! (structure-of-arrays) set the batched tests read, and CSV files.

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sphere::{MAX_COORDINATE, MIN_MAGNITUDE};

/// The smallest extent (the larger side of its bounding box) a polygon may have.
pub const MIN_POLYGON_SPAN: f32 = 1e-15;
use glam::Vec2;

/// Relative tolerance of the convexity check: a vertex whose turn is within
/// `CONVEXITY_TOLERANCE * |e_in| * |e_out|` of straight (and within the rounding of the
/// coordinates to f32: 4 units in the last place of the largest) counts as straight, so
/// rounding in a file never rejects a convex polygon; such vertices, and straight ones, are
/// then dropped (the polygon is the convex hull of its vertices), where the hull's edge passes
/// within `CONVEXITY_TOLERANCE` of its length (or that rounding) of each vertex it drops.
pub const CONVEXITY_TOLERANCE: f64 = 1e-6;

/// How far a vertex may lie off the line its neighbours' edges make by rounding to f32 alone:
/// 4 units of f32's last place of the loop's largest coordinate (each vertex moves by half a
/// unit of its own). A convex float64 quadrilateral 1e4 from the origin was refused, its
/// vertex bent inward by 3e-4 where [`CONVEXITY_TOLERANCE`] of its edges allowed 1e-6.
fn rounding_reach(v: &[Vec2]) -> f64 {
    let largest = v
        .iter()
        .map(|p| p.abs().max_element())
        .fold(0.0f32, f32::max);
    4.0 * f64::from(f32::EPSILON) * f64::from(largest)
}

/// A convex polygon with at least 3 vertices, stored counter-clockwise (inputs may come in either
/// winding; clockwise input is reversed). No two consecutive vertices are equal, the area is not
/// zero, no interior angle exceeds 180 degrees (beyond [`CONVEXITY_TOLERANCE`]) and the boundary
/// winds around once. Stored strictly convex: a vertex where the boundary goes straight on, or
/// bends inward within the tolerance (a midpoint rounded to f32), is dropped, so the polygon is
/// the convex hull of the vertices given and the separating-axis test and contacts are exact
/// for it (docs/design.md §4.1). A loop whose small inward bends add up to more than the
/// tolerance (a dent) is not convex, and refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygon {
    vertices: Vec<Vec2>,
}

impl Polygon {
    /// Validates `vertices` and normalises the winding: a [`PolygonFault`] names the vertices
    /// at fault; [`PolygonFault::at`] places it at the caller's polygon index as an
    /// [`Error::InvalidObject`] (`?` into [`Error`] gives an [`Error::InvalidArgument`] of
    /// `vertices`).
    pub fn new(vertices: &[Vec2]) -> std::result::Result<Polygon, PolygonFault> {
        let ccw = check_polygon(vertices)?;
        let mut v = vertices.to_vec();
        if !ccw {
            v.reverse();
        }
        let kept = strictly_convex(&v).map_err(|at| PolygonFault::NotConvex {
            // Numbered as given.
            vertex: if ccw { at } else { v.len() - 1 - at },
        })?;
        if kept.len() < v.len() {
            v = kept.iter().map(|&i| v[i]).collect();
        }
        Ok(Polygon { vertices: v })
    }

    /// Counter-clockwise vertices, strictly convex (those that did not turn dropped).
    pub fn vertices(&self) -> &[Vec2] {
        &self.vertices
    }

    /// The vertex bounds at z = 0 (exact).
    pub fn aabb(&self) -> Aabb {
        let (lo, hi) = self.vertices.iter().fold(
            (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)),
            |(lo, hi), v| (lo.min(*v), hi.max(*v)),
        );
        Aabb::new(lo.extend(0.0), hi.extend(0.0))
    }

    /// Exact (closed) overlap by the separating-axis test; touching counts.
    ///
    /// ```
    /// use glam::Vec2;
    /// use sweepfan::Polygon;
    ///
    /// let square = |x: f32| {
    ///     let v = [Vec2::new(x, 0.0), Vec2::new(x + 1.0, 0.0), Vec2::new(x + 1.0, 1.0), Vec2::new(x, 1.0)];
    ///     Polygon::new(&v)
    /// };
    /// let triangle = Polygon::new(&[Vec2::new(1.5, 0.5), Vec2::new(3.0, 0.0), Vec2::new(3.0, 1.0)])?;
    /// assert!(square(0.0)?.overlaps(&square(1.0)?)); // a shared edge
    /// assert!(!square(0.0)?.overlaps(&triangle));
    /// assert!(square(1.0)?.overlaps(&triangle));
    /// // Not convex: a clear error naming the vertex, and the polygon where the caller says.
    /// let dart = [Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(0.5, 0.5), Vec2::new(0.0, 2.0)];
    /// let fault = Polygon::new(&dart).unwrap_err();
    /// assert!(fault.to_string().contains("vertex 2"), "{fault}");
    /// assert!(fault.at(7).to_string().starts_with("object 7"));
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn overlaps(&self, other: &Polygon) -> bool {
        crate::geom::sat::polygons_overlap(&self.vertices, &other.vertices)
    }
}

/// What is wrong with a vertex loop, and where: vertices are numbered from 0 in the order given
/// (docs/design.md §4.1 and §3.4).
#[derive(Clone, Debug, PartialEq)]
pub enum PolygonFault {
    /// Fewer than 3 vertices.
    TooFewVertices {
        /// Vertices given.
        found: usize,
    },
    /// A coordinate that is NaN, infinite, too large or too small (`problem` says which).
    BadCoordinate {
        /// The vertex.
        vertex: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// Smaller than [`MIN_POLYGON_SPAN`] (`span`: the larger side of its bounding box).
    TooSmall {
        /// The larger side of the bounding box.
        span: f32,
    },
    /// Two consecutive vertices are equal (a zero-length edge).
    RepeatedVertex {
        /// The first of the two.
        vertex: usize,
        /// The one equal to it.
        next: usize,
    },
    /// Every vertex on one line, within 1e-12 of the polygon's extent (zero area, or too thin
    /// to tell from it in f64: a 1 x 1e-12 rectangle).
    Collinear {
        /// Vertices given.
        vertices: usize,
    },
    /// Two edges, each given by its two vertices, cross (a bow-tie, a star); `winds`: how many
    /// times the boundary goes around, when more than once.
    SelfIntersecting {
        /// The two crossing edges, each by its vertices.
        edges: [[usize; 2]; 2],
        /// Times the boundary goes around, when more than once.
        winds: Option<u32>,
    },
    /// The boundary winds around `times` times, but no crossing of two edges was found (it
    /// passes through a vertex, or the polygon has more than [`CROSSING_SEARCH_MAX_VERTICES`]).
    Winds {
        /// Times the boundary goes around.
        times: u32,
    },
    /// Zero signed area although the vertices are not on one line, and no crossing was found.
    ZeroArea,
    /// The boundary turns the wrong way at `vertex` (an interior angle above 180 degrees).
    NotConvex {
        /// Where.
        vertex: usize,
    },
    /// The boundary turns back along itself at `vertex`.
    DoublesBack {
        /// Where.
        vertex: usize,
    },
}

/// Polygons with more vertices are not searched for a crossing pair of edges (the search tests
/// every pair); their self-intersection is still refused, by its winding or area.
pub const CROSSING_SEARCH_MAX_VERTICES: usize = 2048;

impl PolygonFault {
    /// The problem in words, each vertex named by `vertex` (`"vertex 3"`, or with its line).
    pub fn describe(&self, vertex: &dyn Fn(usize) -> String) -> String {
        match self {
            PolygonFault::TooFewVertices { found } => {
                format!("fewer than 3 vertices: a polygon needs at least 3, found {found}")
            }
            PolygonFault::BadCoordinate { vertex: v, problem } => {
                format!("{}: {problem}", vertex(*v))
            }
            PolygonFault::TooSmall { span } => format!(
                "the polygon spans {span:e}, below {MIN_POLYGON_SPAN:e}, the smallest polygon \
                 accepted (SAT's products of two lengths would underflow f32): scale the scene up"
            ),
            PolygonFault::RepeatedVertex { vertex: v, next } => format!(
                "{} and {} are equal (zero-length edge)",
                vertex(*v),
                vertex(*next)
            ),
            PolygonFault::Collinear { vertices } => {
                format!(
                    "collinear: all {vertices} vertices lie on one line, within 1e-12 of the \
                     polygon's extent (zero area, or too thin to tell from it)"
                )
            }
            PolygonFault::SelfIntersecting {
                edges: [a, b],
                winds,
            } => format!(
                "self-intersecting: {}the edge from {} crosses the edge from {} (a convex \
                 polygon's boundary never crosses itself: list the vertices in order around it)",
                winds.map_or(String::new(), |w| format!(
                    "the boundary winds around {w} times; "
                )),
                edge(*a, vertex),
                edge(*b, vertex)
            ),
            PolygonFault::Winds { times } => format!(
                "self-intersecting: the boundary winds around {times} times (a convex polygon's \
                 boundary goes around once)"
            ),
            PolygonFault::ZeroArea => "self-intersecting: the signed area is zero although the \
                 vertices are not on one line (the boundary folds over itself, as a bow-tie does)"
                .into(),
            PolygonFault::NotConvex { vertex: v } => format!(
                "not convex: the boundary turns the wrong way at {} (an interior angle above \
                 180 degrees)",
                vertex(*v)
            ),
            PolygonFault::DoublesBack { vertex: v } => format!(
                "degenerate: the boundary doubles back on itself at {}",
                vertex(*v)
            ),
        }
    }
}

/// "vertex 2 to vertex 3": the edge between two vertices.
fn edge([from, to]: [usize; 2], vertex: &dyn Fn(usize) -> String) -> String {
    format!("{} to {}", vertex(from), vertex(to))
}

impl std::fmt::Display for PolygonFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(&|v: usize| format!("vertex {v}")))
    }
}

impl std::error::Error for PolygonFault {}

impl PolygonFault {
    /// This fault as the error of polygon `index` of the caller's list
    /// ([`Error::InvalidObject`]).
    pub fn at(&self, index: usize) -> Error {
        Error::InvalidObject {
            index,
            problem: self.to_string(),
        }
    }
}

/// A polygon made alone, without an index: [`Error::InvalidArgument`] of `vertices`.
impl From<PolygonFault> for Error {
    fn from(fault: PolygonFault) -> Error {
        Error::invalid_argument("vertices", fault.to_string())
    }
}

/// The positions of a counter-clockwise loop `v` (accepted by [`check_polygon`]) that are
/// corners of its convex hull, in loop order: every turn strictly convex by exact orientation
/// (Andrew's monotone chain, `robust::orient2d` on the inputs' values). `Err(position)` of a
/// dropped vertex farther inside the hull's edge than [`CONVEXITY_TOLERANCE`] of the edge's
/// length and the loop's rounding (many small inward bends adding up to a dent).
fn strictly_convex(v: &[Vec2]) -> std::result::Result<Vec<usize>, usize> {
    let c = |i: usize| robust::Coord {
        x: f64::from(v[i].x),
        y: f64::from(v[i].y),
    };
    let turns_left = |a: usize, b: usize, p: usize| robust::orient2d(c(a), c(b), c(p)) > 0.0;
    if (0..v.len()).all(|i| turns_left(i, (i + 1) % v.len(), (i + 2) % v.len())) {
        return Ok((0..v.len()).collect());
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    // By value (finite, checked): `total_cmp` put -0.0 before 0.0, out of y order, and the
    // chain then lost a corner at x = 0.
    let by = |a: f32, b: f32| a.partial_cmp(&b).expect("finite coordinates");
    order.sort_by(|&a, &b| by(v[a].x, v[b].x).then(by(v[a].y, v[b].y)));
    let mut hull: Vec<usize> = Vec::with_capacity(v.len() + 1);
    for pass in [&order[..], &order[..]] {
        let floor = hull.len();
        let points: Box<dyn Iterator<Item = &usize>> = match floor {
            0 => Box::new(pass.iter()),
            _ => Box::new(pass.iter().rev()),
        };
        for &p in points {
            while hull.len() >= floor + 2
                && !turns_left(hull[hull.len() - 2], hull[hull.len() - 1], p)
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    // In loop order (the hull of a simple loop visits its corners in the loop's order).
    let first = (0..hull.len()).min_by_key(|&k| hull[k]).unwrap_or(0);
    hull.rotate_left(first);
    // Each dropped vertex within the tolerance of the hull edge across it, or within rounding.
    let p = |i: usize| v[i].as_dvec2();
    let reach = rounding_reach(v);
    for (k, &a) in hull.iter().enumerate() {
        let b = hull[(k + 1) % hull.len()];
        let edge = p(b) - p(a);
        let limit = CONVEXITY_TOLERANCE * edge.length_squared() + reach * edge.length();
        let mut i = (a + 1) % v.len();
        while i != b {
            if edge.perp_dot(p(i) - p(a)) > limit {
                return Err(i);
            }
            i = (i + 1) % v.len();
        }
    }
    Ok(hull)
}

/// Checks a vertex loop; Ok(true) when counter-clockwise, Ok(false) when clockwise. A loop that
/// fails the area, turn or winding checks is searched for two crossing edges first, so that a
/// bow-tie is called self-intersecting rather than collinear or not convex.
fn check_polygon(v: &[Vec2]) -> std::result::Result<bool, PolygonFault> {
    let n = v.len();
    if n < 3 {
        return Err(PolygonFault::TooFewVertices { found: n });
    }
    for (i, p) in v.iter().enumerate() {
        for (axis, c) in [("x", p.x), ("y", p.y)] {
            let problem = if c.is_nan() {
                Some(format!("{axis} is NaN"))
            } else if c.is_infinite() {
                Some(format!("{axis} is infinite"))
            } else if c.abs() > MAX_COORDINATE {
                Some(format!(
                    "|{axis}| = {:e} exceeds {MAX_COORDINATE:e}",
                    c.abs()
                ))
            } else {
                super::below_min_magnitude([(axis, c)], MIN_MAGNITUDE)
            };
            if let Some(problem) = problem {
                return Err(PolygonFault::BadCoordinate { vertex: i, problem });
            }
        }
    }
    // SAT multiplies two lengths of the polygon: below 1e-15 their products lose bits to
    // underflow (docs/design.md §9.6).
    let (lo, hi) = v
        .iter()
        .fold((v[0], v[0]), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
    let span = (hi - lo).max_element();
    if span < MIN_POLYGON_SPAN {
        return Err(PolygonFault::TooSmall { span });
    }
    for i in 0..n {
        let j = (i + 1) % n;
        if v[i] == v[j] {
            return Err(PolygonFault::RepeatedVertex { vertex: i, next: j });
        }
    }
    // f64: the checks run once per polygon, and must not be fooled by f32 rounding of products.
    let p = |i: usize| v[i % n].as_dvec2();
    let (far, span) = (0..n)
        .map(|i| (i, (p(i) - p(0)).length()))
        .fold((0, 0.0f64), |a, b| if b.1 > a.1 { b } else { a });
    let tolerance = 1e-12 * span * span;
    // Collinear: every vertex within the tolerance of the line through vertex 0 and the vertex
    // farthest from it.
    let axis = p(far) - p(0);
    if (0..n).all(|i| axis.perp_dot(p(i) - p(0)).abs() <= tolerance) {
        return Err(PolygonFault::Collinear { vertices: n });
    }
    let twice_area: f64 = (0..n).map(|i| p(i).perp_dot(p(i + 1))).sum();
    if twice_area.abs() <= tolerance {
        return Err(crossing(v).map_or(PolygonFault::ZeroArea, |edges| {
            PolygonFault::SelfIntersecting { edges, winds: None }
        }));
    }
    let sign = twice_area.signum();
    let reach = rounding_reach(v);
    let mut turning = 0.0f64;
    for i in 0..n {
        let e_in = p(i + n) - p(i + n - 1);
        let e_out = p(i + 1) - p(i);
        let cross = sign * e_in.perp_dot(e_out);
        let dot = e_in.dot(e_out);
        // A vertex `reach` off its neighbours' line moves the cross product by at most
        // `reach` times the two edges' lengths.
        let scale = CONVEXITY_TOLERANCE * e_in.length() * e_out.length()
            + reach * (e_in.length() + e_out.length());
        if cross < -scale {
            return Err(
                crossing(v).map_or(PolygonFault::NotConvex { vertex: i }, |edges| {
                    PolygonFault::SelfIntersecting { edges, winds: None }
                }),
            );
        }
        // Turning back: no convex turn beyond f64's rounding of `cross` (a few units of its
        // last place; the differences are exact). A sharp convex tip (a rhombus 2e-7 rad
        // wide) turns by more and is kept.
        let rounding = 8.0 * f64::EPSILON * e_in.length() * e_out.length();
        if cross <= rounding && dot < 0.0 {
            return Err(PolygonFault::DoublesBack { vertex: i });
        }
        turning += cross.atan2(dot);
    }
    // A convex loop turns once (2 pi); a star-shaped self-intersecting loop turns 4 pi or more.
    if turning > 3.0 * std::f64::consts::PI {
        let times = (turning / std::f64::consts::TAU).round() as u32;
        return Err(crossing(v).map_or(PolygonFault::Winds { times }, |edges| {
            PolygonFault::SelfIntersecting {
                edges,
                winds: Some(times),
            }
        }));
    }
    Ok(sign > 0.0)
}

/// The first two edges (each as its two vertices) that cross at a point inside both, in f64,
/// or `None` (none cross so, or the polygon has more than [`CROSSING_SEARCH_MAX_VERTICES`]).
/// Edges that share a vertex are not compared.
fn crossing(v: &[Vec2]) -> Option<[[usize; 2]; 2]> {
    let n = v.len();
    if n > CROSSING_SEARCH_MAX_VERTICES {
        return None;
    }
    let p = |i: usize| v[i % n].as_dvec2();
    // Which side of the line a -> b the point c is on: -1, 0 or 1.
    let side = |a: glam::DVec2, b: glam::DVec2, c: glam::DVec2| {
        let s = (b - a).perp_dot(c - a);
        if s > 0.0 {
            1
        } else if s < 0.0 {
            -1
        } else {
            0
        }
    };
    for i in 0..n {
        // Edge i -> i+1 against every later edge that shares no vertex with it.
        for j in i + 2..n {
            if i == 0 && j == n - 1 {
                continue;
            }
            let (a, b, c, d) = (p(i), p(i + 1), p(j), p(j + 1));
            if side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0 {
                return Some([[i, (i + 1) % n], [j, (j + 1) % n]]);
            }
        }
    }
    None
}

/// Many polygons as one flat vertex array plus offsets (polygon `i` is
/// `vertices[offsets[i]..offsets[i + 1]]`): the layout of the batched CPU test and of the GPU
/// buffers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolygonSet {
    /// Every polygon's vertices, one polygon after another.
    pub vertices: Vec<Vec2>,
    /// `n + 1` offsets into `vertices`.
    pub offsets: Vec<u32>,
}

impl PolygonSet {
    /// The set of `polygons`, in order.
    pub fn new(polygons: &[Polygon]) -> Result<PolygonSet> {
        Self::from_polygons(polygons.iter())
    }

    /// The set of `polygons[order[0]], polygons[order[1]], ...` (e.g. in the sweep's order); an
    /// index past `polygons` is an [`Error::InvalidArgument`].
    pub fn in_order(polygons: &[Polygon], order: &[u32]) -> Result<PolygonSet> {
        if let Some(k) = order.iter().position(|&i| i as usize >= polygons.len()) {
            return Err(Error::invalid_argument(
                "order",
                format!(
                    "order[{k}] = {} names no polygon (there are {})",
                    order[k],
                    polygons.len()
                ),
            ));
        }
        Self::from_polygons(order.iter().map(|&i| &polygons[i as usize]))
    }

    fn from_polygons<'a>(
        polygons: impl Iterator<Item = &'a Polygon> + Clone,
    ) -> Result<PolygonSet> {
        let total: usize = polygons.clone().map(|p| p.vertices.len()).sum();
        if total > u32::MAX as usize {
            return Err(Error::past_u32(
                total as u64,
                format!("{total} polygon vertices: offsets are u32"),
            ));
        }
        let mut vertices = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(polygons.size_hint().0 + 1);
        offsets.push(0);
        for p in polygons {
            vertices.extend_from_slice(&p.vertices);
            offsets.push(vertices.len() as u32);
        }
        Ok(PolygonSet { vertices, offsets })
    }

    /// Polygons.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there is no polygon.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Polygon `i`'s vertices.
    ///
    /// # Panics
    /// When `i >= self.len()`, as a slice's index does.
    #[inline(always)]
    pub fn polygon(&self, i: usize) -> &[Vec2] {
        &self.vertices[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// The AABB of a polygon lifted to 3D (z = 0), for the shared AABB broad phase.
pub fn polygon_aabbs(polygons: &[Polygon]) -> Vec<Aabb> {
    use rayon::prelude::*;
    polygons.par_iter().map(Polygon::aabb).collect()
}

#[cfg(test)]
mod tests;
