//! Convex polygons in the plane: validation, normalisation to counter-clockwise order, the flat
//! (structure-of-arrays) set the batched tests read, and CSV files.

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sphere::{MAX_COORDINATE, MIN_MAGNITUDE};

/// The smallest extent (the larger side of its bounding box) a polygon may have.
pub const MIN_POLYGON_SPAN: f32 = 1e-15;
use glam::Vec2;

/// Relative tolerance of the convexity check: a vertex whose turn is within
/// `CONVEXITY_TOLERANCE * |e_in| * |e_out|` of straight counts as straight (kept: the separating
/// axis test is exact for it), so rounding in a file never rejects a convex polygon.
pub const CONVEXITY_TOLERANCE: f64 = 1e-6;

/// A convex polygon with at least 3 vertices, stored counter-clockwise (inputs may come in either
/// winding; clockwise input is reversed). No two consecutive vertices are equal, the area is not
/// zero, no interior angle exceeds 180 degrees (beyond [`CONVEXITY_TOLERANCE`]) and the boundary
/// winds around once.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygon {
    vertices: Vec<Vec2>,
}

impl Polygon {
    /// Validates `vertices` (polygon number `index`, for the message) and normalises the winding.
    pub fn new(index: usize, vertices: &[Vec2]) -> Result<Polygon> {
        check_polygon(vertices)
            .map(|ccw| {
                let mut v = vertices.to_vec();
                if !ccw {
                    v.reverse();
                }
                Polygon { vertices: v }
            })
            .map_err(|problem| Error::InvalidObject { index, problem })
    }

    /// Counter-clockwise vertices.
    pub fn vertices(&self) -> &[Vec2] {
        &self.vertices
    }

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
    ///     Polygon::new(0, &v)
    /// };
    /// let triangle = Polygon::new(1, &[Vec2::new(1.5, 0.5), Vec2::new(3.0, 0.0), Vec2::new(3.0, 1.0)])?;
    /// assert!(square(0.0)?.overlaps(&square(1.0)?)); // a shared edge
    /// assert!(!square(0.0)?.overlaps(&triangle));
    /// assert!(square(1.0)?.overlaps(&triangle));
    /// // Not convex: a clear error naming the polygon.
    /// let dart = [Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(0.5, 0.5), Vec2::new(0.0, 2.0)];
    /// assert!(Polygon::new(7, &dart).unwrap_err().to_string().contains('7'));
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn overlaps(&self, other: &Polygon) -> bool {
        crate::geom::sat::polygons_overlap(&self.vertices, &other.vertices)
    }
}

/// Checks a vertex loop; Ok(true) when counter-clockwise, Ok(false) when clockwise.
fn check_polygon(v: &[Vec2]) -> std::result::Result<bool, String> {
    let n = v.len();
    if n < 3 {
        return Err(format!("a polygon needs at least 3 vertices, found {n}"));
    }
    for (i, p) in v.iter().enumerate() {
        for (axis, c) in [("x", p.x), ("y", p.y)] {
            if c.is_nan() {
                return Err(format!("vertex {i}: {axis} is NaN"));
            }
            if c.is_infinite() {
                return Err(format!("vertex {i}: {axis} is infinite"));
            }
            if c.abs() > MAX_COORDINATE {
                return Err(format!(
                    "vertex {i}: |{axis}| = {:e} exceeds {MAX_COORDINATE:e}",
                    c.abs()
                ));
            }
            if let Some(problem) = super::below_min_magnitude([(axis, c)], MIN_MAGNITUDE) {
                return Err(format!("vertex {i}: {problem}"));
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
        return Err(format!(
            "the polygon spans {span:e}, below {MIN_POLYGON_SPAN:e}, the smallest polygon \
             accepted (SAT's products of two lengths would underflow f32): scale the scene up"
        ));
    }
    for i in 0..n {
        let j = (i + 1) % n;
        if v[i] == v[j] {
            return Err(format!("vertices {i} and {j} are equal (zero-length edge)"));
        }
    }
    // f64: the checks run once per polygon, and must not be fooled by f32 rounding of products.
    let p = |i: usize| v[i % n].as_dvec2();
    let twice_area: f64 = (0..n).map(|i| p(i).perp_dot(p(i + 1))).sum();
    let span = (0..n)
        .map(|i| (p(i) - p(0)).length())
        .fold(0.0f64, f64::max);
    if twice_area.abs() <= 1e-12 * span * span {
        return Err("all vertices are collinear (zero area)".into());
    }
    let sign = twice_area.signum();
    let mut turning = 0.0f64;
    for i in 0..n {
        let e_in = p(i + n) - p(i + n - 1);
        let e_out = p(i + 1) - p(i);
        let cross = sign * e_in.perp_dot(e_out);
        let dot = e_in.dot(e_out);
        let scale = CONVEXITY_TOLERANCE * e_in.length() * e_out.length();
        if cross < -scale {
            return Err(format!(
                "not convex: the boundary turns the wrong way at vertex {i}"
            ));
        }
        if cross.abs() <= scale && dot < 0.0 {
            return Err(format!(
                "degenerate: the boundary doubles back on itself at vertex {i}"
            ));
        }
        turning += cross.atan2(dot);
    }
    // A convex loop turns once (2 pi); a star-shaped self-intersecting loop turns 4 pi or more.
    if turning > 3.0 * std::f64::consts::PI {
        return Err(format!(
            "not convex: the boundary winds around {:.0} times (self-intersecting)",
            turning / std::f64::consts::TAU
        ));
    }
    Ok(sign > 0.0)
}

/// Many polygons as one flat vertex array plus offsets (polygon `i` is
/// `vertices[offsets[i]..offsets[i + 1]]`): the layout of the batched CPU test and of the GPU
/// buffers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolygonSet {
    pub vertices: Vec<Vec2>,
    pub offsets: Vec<u32>,
}

impl PolygonSet {
    pub fn new(polygons: &[Polygon]) -> Result<PolygonSet> {
        Self::from_polygons(polygons.iter())
    }

    /// The set of `polygons[order[0]], polygons[order[1]], ...` (e.g. in the sweep's order).
    pub fn in_order(polygons: &[Polygon], order: &[u32]) -> Result<PolygonSet> {
        Self::from_polygons(order.iter().map(|&i| &polygons[i as usize]))
    }

    fn from_polygons<'a>(
        polygons: impl Iterator<Item = &'a Polygon> + Clone,
    ) -> Result<PolygonSet> {
        let total: usize = polygons.clone().map(|p| p.vertices.len()).sum();
        if total > u32::MAX as usize {
            return Err(Error::TooLarge(format!(
                "{total} polygon vertices: offsets are u32"
            )));
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

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

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
mod tests {
    use super::*;

    fn v(points: &[(f32, f32)]) -> Vec<Vec2> {
        points.iter().map(|&(x, y)| Vec2::new(x, y)).collect()
    }

    fn problem(points: &[(f32, f32)]) -> String {
        Polygon::new(4, &v(points)).unwrap_err().to_string()
    }

    #[test]
    fn clockwise_input_is_stored_counter_clockwise() {
        let cw = v(&[(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0)]);
        let p = Polygon::new(0, &cw).unwrap();
        let mut expected = cw.clone();
        expected.reverse();
        assert_eq!(p.vertices(), &expected[..]);
        let ccw = v(&[(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]);
        assert_eq!(Polygon::new(0, &ccw).unwrap().vertices(), &ccw[..]);
        // A straight vertex (midpoint of an edge) is convex and kept.
        let straight = v(&[(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (1.0, 1.0)]);
        assert_eq!(Polygon::new(0, &straight).unwrap().vertices().len(), 4);
    }

    #[test]
    fn bad_polygons_name_the_problem() {
        let e = problem(&[(0.0, 0.0), (1.0, 0.0)]);
        assert!(e.contains("object 4") && e.contains("at least 3"), "{e}");
        let e = problem(&[(0.0, 0.0), (1.0, 0.0), (1.0, 0.0), (0.0, 1.0)]);
        assert!(e.contains("zero-length edge"), "{e}");
        let e = problem(&[(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]);
        assert!(e.contains("collinear"), "{e}");
        let e = problem(&[(0.0, 0.0), (2.0, 0.0), (1.0, 0.5), (2.0, 2.0), (0.0, 2.0)]);
        assert!(e.contains("not convex") && e.contains("vertex 2"), "{e}");
        // Pentagram: every turn has the same sign, but it winds twice.
        let star: Vec<(f32, f32)> = (0..5)
            .map(|k| {
                let a = (k * 2) as f32 * std::f32::consts::TAU / 5.0;
                (a.cos(), a.sin())
            })
            .collect();
        let e = problem(&star);
        assert!(e.contains("winds around 2 times"), "{e}");
        let e = problem(&[(0.0, 0.0), (2.0, 0.0), (1.0, 0.0), (1.0, 1.0)]);
        assert!(e.contains("doubles back"), "{e}");
        let e = problem(&[(0.0, 0.0), (f32::NAN, 0.0), (1.0, 1.0)]);
        assert!(e.contains("vertex 1: x is NaN"), "{e}");
        let e = problem(&[(0.0, 0.0), (1.0, f32::NEG_INFINITY), (1.0, 1.0)]);
        assert!(e.contains("vertex 1: y is infinite"), "{e}");
        let e = problem(&[(0.0, 0.0), (1.0, 0.0), (1.0, 3e18)]);
        assert!(e.contains("exceeds"), "{e}");
    }
}
