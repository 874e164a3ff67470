//! Convex polygons in the plane: validation, normalisation to counter-clockwise order, the flat
//! (structure-of-arrays) set the batched tests read, and CSV files.

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::obb::parse_fields;
use crate::geom::sphere::MAX_COORDINATE;
use glam::Vec2;
use std::path::Path;

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
        }
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

/// Reads a polygon file: header `polygon,x,y`, one vertex per line, polygons numbered from 0 in
/// file order with their vertices on consecutive lines, in order, either winding. Errors name the
/// 1-based line (the header is line 1) and the problem; a polygon that fails validation is
/// reported at the line of its first vertex.
pub fn read_polygons_csv(path: &Path) -> Result<Vec<Polygon>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_polygons_csv(&text).map_err(|(line, problem)| Error::Parse {
        path: path.to_path_buf(),
        line,
        problem,
    })
}

/// Writes polygons in the format [`read_polygons_csv`] reads.
pub fn write_polygons_csv(path: &Path, polygons: &[Polygon]) -> Result<()> {
    use std::fmt::Write;
    let mut text = String::from("polygon,x,y\n");
    for (i, p) in polygons.iter().enumerate() {
        for v in &p.vertices {
            let _ = writeln!(text, "{i},{},{}", v.x, v.y);
        }
    }
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// Parses the text of a polygon file. Err carries (1-based line, problem).
pub fn parse_polygons_csv(text: &str) -> std::result::Result<Vec<Polygon>, (usize, String)> {
    let mut lines = text.lines().enumerate();
    let header: Vec<String> = match lines.next() {
        Some((_, h)) => h
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .collect(),
        None => return Err((1, "empty file: expected header `polygon,x,y`".into())),
    };
    if header != ["polygon", "x", "y"] {
        return Err((
            1,
            format!("header is `{}`, expected `polygon,x,y`", header.join(",")),
        ));
    }
    let mut polygons = Vec::new();
    // Vertices of the polygon being read and the line of its first vertex.
    let mut current: Vec<Vec2> = Vec::new();
    let mut first_line = 0;
    let finish = |polygons: &mut Vec<Polygon>, current: &mut Vec<Vec2>, first_line: usize| {
        let index = polygons.len();
        let p = Polygon::new(index, current).map_err(|e| (first_line, e.to_string()))?;
        polygons.push(p);
        current.clear();
        Ok::<(), (usize, String)>(())
    };
    for (i, line) in lines {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields = line.split(',').count();
        if fields != 3 {
            return Err((
                line_no,
                format!("expected 3 fields polygon,x,y, found {fields}"),
            ));
        }
        let (id, rest) = line.split_once(',').unwrap_or((line, ""));
        let id: usize = id.trim().parse().map_err(|_| {
            (
                line_no,
                format!("polygon = `{}` is not a polygon number", id.trim()),
            )
        })?;
        let v = parse_fields::<2>(rest, &["x", "y"]).map_err(|p| (line_no, p))?;
        let open = polygons.len(); // number of the polygon being read
        if id == open + 1 && !current.is_empty() {
            finish(&mut polygons, &mut current, first_line)?;
        } else if id != open {
            let expected = if current.is_empty() {
                format!("{open}")
            } else {
                format!("{open} or {}", open + 1)
            };
            return Err((
                line_no,
                format!(
                    "polygon {id} out of order: expected {expected} (polygons are numbered from 0 \
                     in file order, each one's vertices on consecutive lines)"
                ),
            ));
        }
        if current.is_empty() {
            first_line = line_no;
        }
        current.push(Vec2::new(v[0], v[1]));
    }
    if !current.is_empty() {
        finish(&mut polygons, &mut current, first_line)?;
    }
    Ok(polygons)
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

    #[test]
    fn csv_reads_polygons_and_names_bad_lines() {
        let text = "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n\n1,5,5\n1,5,6\n1,6,6\n1,6,5\n";
        let p = parse_polygons_csv(text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].vertices().len(), 4);
        let set = PolygonSet::new(&p).unwrap();
        assert_eq!(set.offsets, vec![0, 3, 7]);
        assert_eq!(set.polygon(1), p[1].vertices());
        let err = |t: &str| parse_polygons_csv(t).unwrap_err();
        assert_eq!(err("").0, 1);
        assert_eq!(err("x,y\n").0, 1);
        let e = err("polygon,x,y\n1,0,0\n");
        assert!(e.0 == 2 && e.1.contains("expected 0"), "{e:?}");
        let e = err("polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n2,0,0\n");
        assert!(e.0 == 5 && e.1.contains("expected 0 or 1"), "{e:?}");
        let e = err("polygon,x,y\n0,0,0\n0,1\n");
        assert!(e.0 == 3 && e.1.contains("expected 3 fields"), "{e:?}");
        let e = err("polygon,x,y\n0,0,0,0\n");
        assert_eq!(e, (2, "expected 3 fields polygon,x,y, found 4".to_string()));
        let e = err("polygon,x,y\nA,0,0\n");
        assert!(e.0 == 2 && e.1.contains("not a polygon number"), "{e:?}");
        let e = err("polygon,x,y\n0,0,0\n0,zz,0\n");
        assert_eq!(e, (3, "x = `zz` is not a number".to_string()));
        // Polygon 1 (first vertex on line 5) has only two vertices.
        let e = err("polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,5,5\n1,6,6\n");
        assert!(
            e.0 == 5 && e.1.contains("object 1") && e.1.contains("at least 3"),
            "{e:?}"
        );
    }

    #[test]
    fn csv_round_trips() {
        let polygons = vec![
            Polygon::new(0, &v(&[(0.1, 0.2), (1.5, 0.0), (0.3, 1.7)])).unwrap(),
            Polygon::new(1, &v(&[(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])).unwrap(),
        ];
        let dir = std::env::temp_dir().join(format!("sweepfan-poly-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("polygons.csv");
        write_polygons_csv(&path, &polygons).unwrap();
        assert_eq!(read_polygons_csv(&path).unwrap(), polygons);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
