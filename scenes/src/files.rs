//! CSV scene files: spheres (`x,y,z,r`), oriented boxes (`cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`) and
//! convex polygons (`polygon,x,y`, each polygon's vertices on consecutive lines). Every problem
//! names the file, the 1-based line (the header is line 1) and the field.

use glam::{Quat, Vec2, Vec3};
use std::path::Path;
use sweepfan::Validate;
use sweepfan::error::{Error, Exceeds, Result, shown};
use sweepfan::geom::obb::Obb;
use sweepfan::geom::polygon::Polygon;
use sweepfan::geom::sphere::Sphere;

/// The header of a sphere file (case and spaces ignored).
pub(crate) const SPHERE_HEADER: [&str; 4] = ["x", "y", "z", "r"];
/// A batch of worlds' sphere file: a world id per sphere (docs/design.md §2.13).
const WORLD_SPHERE_HEADER: [&str; 5] = ["x", "y", "z", "r", "world"];
const POLYGON_HEADER: [&str; 3] = ["polygon", "x", "y"];
const OBB_HEADER: [&str; 10] = ["cx", "cy", "cz", "hx", "hy", "hz", "qw", "qx", "qy", "qz"];

/// Said of a file whose lines end in a bare CR (classic Mac OS): lines are read up to LF (a CRLF
/// line loses its CR), so such a file is one line.
const CR_ONLY: &str =
    "; its lines end in a bare carriage return (CR): save it with LF or CRLF line endings";

/// A parse error: the 1-based line (the header is line 1) and the problem.
type Parsed<T> = std::result::Result<T, (usize, String)>;

/// Longest line accepted: a line of ten f32 needs about 200 bytes; a file without line breaks
/// (`/dev/zero`, a binary) is refused at its first line instead of read whole.
pub const MAX_LINE_BYTES: usize = 4096;

/// The most bytes a reader takes for one line: its [`MAX_LINE_BYTES`] of text and its line
/// ending, CRLF at most (a CRLF file's line of 4,096 bytes was refused where an LF file's was
/// not, and said to end in bare CRs).
pub(crate) const LINE_READ_BYTES: usize = MAX_LINE_BYTES + 2;

/// The problem with a line that is not UTF-8.
pub(crate) const NOT_UTF8: &str = "not UTF-8 text: not a scene file";

/// The problem with a path that names a directory (reported at line 1).
pub(crate) const IS_A_DIRECTORY: &str = "is a directory, not a scene file";

/// The problem with `line`, read as `read_with` reads it (at most [`LINE_READ_BYTES`], up to
/// and including its LF), when its text without its LF or CRLF is longer than
/// [`MAX_LINE_BYTES`]; a CR inside that text says the file has bare-CR line endings.
pub(crate) fn over_long_line(line: &[u8]) -> Option<String> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.len() <= MAX_LINE_BYTES {
        return None;
    }
    let why = if text.contains(&b'\r') {
        CR_ONLY
    } else {
        ": not a scene file"
    };
    Some(format!("line longer than {MAX_LINE_BYTES} bytes{why}"))
}

/// The path that means standard input where a scene file is read (as `-` means standard output
/// where one is written).
pub const STDIN: &str = "-";

/// The name messages and reports give the input at `path`: `standard input` for [`STDIN`].
pub fn input_name(path: &Path) -> &Path {
    if path.as_os_str() == STDIN {
        Path::new("standard input")
    } else {
        path
    }
}

/// Reads `path` (`-`: standard input) once, from its start to its end, line by line (each at
/// most [`MAX_LINE_BYTES`] of text, UTF-8, the header checked against `headers` before the rest is read:
/// it must be one of them, a problem is worded against the first) and parses it, naming the file
/// and line of any problem. Read once, so a pipe, a FIFO or a process substitution is read as a
/// file is. Text past a quarter of the memory available is refused as soon as it is read.
fn read_with<T>(
    path: &Path,
    headers: &[&[&str]],
    parse: impl FnOnce(&str) -> Parsed<T>,
) -> Result<T> {
    use std::io::{BufRead, Read};
    let stdin = path.as_os_str() == STDIN;
    // Problems name standard input so, not `-`.
    let named = input_name(path);
    let parse_error = |line: usize, problem: String| Error::Parse {
        path: named.to_path_buf(),
        line,
        problem,
    };
    let input: Box<dyn Read> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(parse_error(1, IS_A_DIRECTORY.into()));
        }
        Box::new(file)
    };
    let budget = sweepfan::broadphase::limits::available_bytes().map_or(u64::MAX, |b| b / 4);
    let mut reader = std::io::BufReader::new(input);
    let mut text = String::new();
    let mut line = Vec::new();
    for line_no in 1.. {
        line.clear();
        let read = (&mut reader)
            .take(LINE_READ_BYTES as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(named, e))?;
        if read == 0 {
            break;
        }
        if let Some(problem) = over_long_line(&line) {
            return Err(parse_error(line_no, problem));
        }
        let s = std::str::from_utf8(&line).map_err(|_| parse_error(line_no, NOT_UTF8.into()))?;
        if line_no == 1 && !headers[1..].iter().any(|h| data_lines(s, h).is_ok()) {
            data_lines(s, headers[0])
                .map_err(|(l, p)| parse_error(l, p))?
                .for_each(drop);
        }
        text.push_str(s);
        if text.len() as u64 > budget {
            return Err(Error::too_large(
                Exceeds::HostMemory {
                    needed: text.len() as u64,
                    usable: Some(budget),
                },
                format!(
                    "{}: more than {budget} bytes of text by line {line_no}, a quarter of the \
                     memory available",
                    named.display()
                ),
            ));
        }
    }
    parse(&text).map_err(|(line, problem)| parse_error(line, problem))
}

/// Checks the header line (case and spaces ignored); the non-empty data lines, numbered from 1.
pub(crate) fn data_lines<'a>(
    text: &'a str,
    names: &[&str],
) -> Parsed<impl Iterator<Item = (usize, &'a str)> + 'a> {
    let mut lines = text.lines().enumerate();
    let expected = names.join(",");
    // The names as written (quoted so in a message), and in lower case (compared).
    let written: Vec<&str> = match lines.next() {
        // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first name.
        Some((_, h)) => h
            .trim_start_matches('\u{feff}')
            .split(',')
            .map(str::trim)
            .collect(),
        None => return Err((1, format!("empty file: expected header `{expected}`"))),
    };
    let header: Vec<String> = written.iter().map(|s| s.to_ascii_lowercase()).collect();
    if header != names {
        // `str::lines` ends lines at LF (and CRLF): a file saved with bare CRs (classic Mac OS)
        // is one line, and the echo would be the whole file.
        let cr_only = text.lines().next().is_some_and(|h| h.contains('\r'));
        let worlds = header == ["x", "y", "z", "r", "world"] && names == ["x", "y", "z", "r"];
        // The same names in another order, with or without a world column.
        fn sorted(mut v: Vec<&str>) -> Vec<&str> {
            v.sort_unstable();
            v
        }
        let given = sorted(header.iter().map(String::as_str).collect());
        let reordered = given == sorted(names.to_vec());
        let world_reordered =
            names == SPHERE_HEADER && given == sorted(WORLD_SPHERE_HEADER.to_vec());
        let hint = if cr_only {
            CR_ONLY
        } else if worlds {
            WORLD_COLUMN
        } else if header.len() == names.len() + 1 && header.last().is_some_and(|n| n == "world") {
            " (a world column, which only sphere files take)"
        } else if reordered {
            " (the same columns in another order: they must come in this order)"
        } else if world_reordered {
            " (a batch of worlds with its columns in another order: `x,y,z,r,world`)"
        } else {
            ""
        };
        return Err((
            1,
            format!(
                "header is `{}`, expected `{expected}`{hint}",
                shown(&written.join(","))
            ),
        ));
    }
    Ok(lines
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim().is_empty()))
}

/// A finite decimal that f32 cannot hold: one that overflows to infinity (`1e39`) or rounds to
/// zero although it is not zero (`1e-50`).
fn out_of_f32_range(name: &str, text: &str, x: f32) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if x.is_infinite() && !lower.contains("inf") {
        return Some(format!(
            "{name} = `{}` overflows f32 (the largest finite value is {:e})",
            shown(text),
            f32::MAX
        ));
    }
    let mantissa = lower.split('e').next().unwrap_or("");
    if x == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Some(format!(
            "{name} = `{}` rounds to 0 in f32 (the smallest non-zero value accepted is {:e})",
            shown(text),
            sweepfan::geom::sphere::MIN_MAGNITUDE
        ));
    }
    None
}

/// Splits one CSV line into exactly `N` numbers, naming the field that fails.
fn parse_fields<const N: usize>(
    line: &str,
    names: &[&str; N],
) -> std::result::Result<[f32; N], String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    // A bare CR inside a line: lines after the first saved with CR endings only (a line is
    // read up to LF), several lines read as one.
    let hint = if line.contains('\r') { CR_ONLY } else { "" };
    if fields.len() != N {
        return Err(format!(
            "expected {N} fields {}, found {}{hint}",
            names.join(","),
            fields.len()
        ));
    }
    let mut v = [0f32; N];
    for (k, (f, name)) in fields.iter().zip(names).enumerate() {
        let x: f32 = f
            .parse()
            .map_err(|_| format!("{name} = `{}` is not a number{hint}", shown(f)))?;
        if let Some(problem) = out_of_f32_range(name, f, x) {
            return Err(problem);
        }
        // The library's wording of a bad value (its validation says the same).
        let bad = if x.is_nan() { "NaN" } else { "infinite" };
        if !x.is_finite() {
            return Err(format!("{name} is {bad}"));
        }
        v[k] = x;
    }
    Ok(v)
}

/// Parses sphere CSV text: header `x,y,z,r`, one sphere per line.
pub fn parse_spheres_csv(text: &str) -> Parsed<Vec<Sphere>> {
    let mut spheres = Vec::new();
    for (line_no, line) in data_lines(text, &SPHERE_HEADER)? {
        let s = parse_sphere_line(line).map_err(|p| (line_no, p))?;
        s.check(spheres.len())
            .map_err(|e| (line_no, e.to_string()))?;
        spheres.push(s);
    }
    Ok(spheres)
}

/// One data line of a sphere file (`x,y,z,r`, the line ending removed) as a sphere, or the
/// problem as [`parse_spheres_csv`] words it: a field that is not a number, not finite or out of
/// f32's range, a wrong field count, a negative radius. [`Validate::check`] is left to the caller,
/// whose message names the sphere's index (its place among the data lines).
pub(crate) fn parse_sphere_line(line: &str) -> std::result::Result<Sphere, String> {
    let v = parse_fields::<4>(line, &SPHERE_HEADER)?;
    if v[3] < 0.0 {
        return Err(format!("radius is negative ({})", v[3]));
    }
    Ok(Sphere::new(Vec3::new(v[0], v[1], v[2]), v[3]))
}

/// Reads a sphere CSV file (see [`parse_spheres_csv`]).
pub fn read_spheres_csv(path: &Path) -> Result<Vec<Sphere>> {
    read_with(path, &[&SPHERE_HEADER], parse_spheres_csv)
}

/// The hint of a batch of worlds given where one scene is read.
const WORLD_COLUMN: &str = " (a batch of worlds: a plain scene is read here, without the world \
                            column; `sweepfan verify --scene-file` reads a batch, its next frame \
                            with the column too, and `bench --worlds` generates one)";

/// Parses the text of a batch of worlds: header `x,y,z,r,world`, one sphere per line, its world
/// an integer in `[0, 2^32 - 2]` or `shared` (any case; `SHARED`, an object of every world).
pub fn parse_world_spheres_csv(text: &str) -> Parsed<(Vec<Sphere>, Vec<u32>)> {
    let (mut spheres, mut worlds) = (Vec::new(), Vec::new());
    for (line_no, line) in data_lines(text, &WORLD_SPHERE_HEADER)? {
        let (sphere, world) = match line.rsplit_once(',') {
            Some((sphere, world)) if sphere.split(',').count() == 4 => (sphere, world.trim()),
            _ => {
                let found = line.split(',').count();
                let hint = if line.contains('\r') { CR_ONLY } else { "" };
                return Err((
                    line_no,
                    format!("expected 5 fields x,y,z,r,world, found {found}{hint}"),
                ));
            }
        };
        let s = parse_sphere_line(sphere).map_err(|p| (line_no, p))?;
        s.check(spheres.len())
            .map_err(|e| (line_no, e.to_string()))?;
        let id = if world.eq_ignore_ascii_case("shared") {
            sweepfan::SHARED
        } else {
            match world.parse::<u32>() {
                Ok(id) if id != sweepfan::SHARED => id,
                _ => {
                    return Err((
                        line_no,
                        format!(
                            "world = `{}` is not a world id (an integer in [0, {}], or `shared`)",
                            shown(world),
                            u32::MAX - 1
                        ),
                    ));
                }
            }
        };
        spheres.push(s);
        worlds.push(id);
    }
    Ok((spheres, worlds))
}

/// Reads a batch of worlds' sphere file (see [`parse_world_spheres_csv`]).
pub fn read_world_spheres_csv(path: &Path) -> Result<(Vec<Sphere>, Vec<u32>)> {
    read_with(path, &[&WORLD_SPHERE_HEADER], parse_world_spheres_csv)
}

/// A sphere file as read: one scene (header `x,y,z,r`) or a batch of worlds (`x,y,z,r,world`).
#[derive(Clone, Debug, PartialEq)]
pub enum SphereFile {
    /// One scene ([`parse_spheres_csv`]).
    Scene(Vec<Sphere>),
    /// A batch of worlds ([`parse_world_spheres_csv`]): the spheres and a world id each.
    Worlds(Vec<Sphere>, Vec<u32>),
}

/// Reads a sphere file of either kind, which its header tells, in one read (so standard input
/// and pipes are read as files are); a header of neither kind is worded against `x,y,z,r`.
pub fn read_sphere_file(path: &Path) -> Result<SphereFile> {
    read_with(path, &[&SPHERE_HEADER, &WORLD_SPHERE_HEADER], |text| {
        if data_lines(text, &WORLD_SPHERE_HEADER).is_ok() {
            parse_world_spheres_csv(text).map(|(s, w)| SphereFile::Worlds(s, w))
        } else {
            parse_spheres_csv(text).map(SphereFile::Scene)
        }
    })
}

/// Writes spheres as CSV `x,y,z,r`; `{}` prints the shortest text that parses back to the same
/// f32, so the file round-trips exactly.
pub fn write_spheres_csv(path: &Path, spheres: &[Sphere]) -> Result<()> {
    write_file(path, |w| spheres_csv(w, spheres))
}

/// [`write_spheres_csv`]'s text, to any writer (buffer it: one write per line).
pub fn spheres_csv(w: &mut dyn std::io::Write, spheres: &[Sphere]) -> std::io::Result<()> {
    w.write_all(b"x,y,z,r\n")?;
    for s in spheres {
        let (c, r) = (s.center, s.radius);
        writeln!(w, "{},{},{},{r}", c.x, c.y, c.z)?;
    }
    Ok(())
}

/// Writes `path` through a buffer filled by `fill`.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let write = || -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        fill(&mut w)?;
        std::io::Write::flush(&mut w)
    };
    write().map_err(|e| Error::io(path, e))
}

/// Parses box CSV text: header `cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`, one box per line.
pub fn parse_obbs_csv(text: &str) -> Parsed<Vec<Obb>> {
    let mut boxes = Vec::new();
    for (line_no, line) in data_lines(text, &OBB_HEADER)? {
        let v = parse_fields::<10>(line, &OBB_HEADER).map_err(|p| (line_no, p))?;
        let b = Obb::new(
            Vec3::new(v[0], v[1], v[2]),
            Vec3::new(v[3], v[4], v[5]),
            Quat::from_xyzw(v[7], v[8], v[9], v[6]),
        );
        b.check(boxes.len()).map_err(|e| (line_no, e.to_string()))?;
        boxes.push(b);
    }
    Ok(boxes)
}

/// Reads a box file: header `cx,cy,cz,hx,hy,hz,qw,qx,qy,qz`, one box per line (blank lines are
/// skipped). Errors name the 1-based line (the header is line 1) and the problem.
pub fn read_obbs_csv(path: &Path) -> Result<Vec<Obb>> {
    read_with(path, &[&OBB_HEADER], parse_obbs_csv)
}

/// Writes boxes in the format [`read_obbs_csv`] reads (shortest round-tripping decimals).
pub fn write_obbs_csv(path: &Path, boxes: &[Obb]) -> Result<()> {
    write_file(path, |w| obbs_csv(w, boxes))
}

/// [`write_obbs_csv`]'s text, to any writer (buffer it: one write per line).
pub fn obbs_csv(w: &mut dyn std::io::Write, boxes: &[Obb]) -> std::io::Result<()> {
    writeln!(w, "{}", OBB_HEADER.join(","))?;
    for b in boxes {
        let (c, h, q) = (b.center, b.half_extents, b.rotation);
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{}",
            c.x, c.y, c.z, h.x, h.y, h.z, q.w, q.x, q.y, q.z
        )?;
    }
    Ok(())
}

/// Parses the text of a polygon file. Err carries (1-based line, problem). A polygon that fails
/// validation is reported at the line of its first vertex, the problem naming the polygon, its
/// lines, and each vertex involved with its line (docs/design.md §3.4, §4.1).
pub fn parse_polygons_csv(text: &str) -> Parsed<Vec<Polygon>> {
    let mut polygons = Vec::new();
    // Vertices of the polygon being read and the line of each.
    let mut current: Vec<Vec2> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    let finish = |polygons: &mut Vec<Polygon>, current: &mut Vec<Vec2>, lines: &mut Vec<usize>| {
        let index = polygons.len();
        let p = Polygon::new(current).map_err(|fault| {
            let at = |k: usize| match lines.get(k) {
                Some(line) => format!("vertex {k} (line {line})"),
                None => format!("vertex {k}"),
            };
            let (first, last) = (lines[0], lines[lines.len() - 1]);
            let span = if first == last {
                format!("line {first}")
            } else {
                format!("lines {first}-{last}")
            };
            (
                first,
                format!("polygon {index} ({span}): {}", fault.describe(&at)),
            )
        })?;
        polygons.push(p);
        current.clear();
        lines.clear();
        Ok::<(), (usize, String)>(())
    };
    for (line_no, line) in data_lines(text, &POLYGON_HEADER)? {
        let fields = line.split(',').count();
        if fields != 3 {
            let hint = if line.contains('\r') { CR_ONLY } else { "" };
            return Err((
                line_no,
                format!("expected 3 fields polygon,x,y, found {fields}{hint}"),
            ));
        }
        let (id, rest) = line.split_once(',').unwrap_or((line, ""));
        let id: usize = id.trim().parse().map_err(|_| {
            (
                line_no,
                format!("polygon = `{}` is not a polygon number", shown(id.trim())),
            )
        })?;
        let v = parse_fields::<2>(rest, &["x", "y"]).map_err(|p| (line_no, p))?;
        let open = polygons.len(); // number of the polygon being read
        if id == open + 1 && (1..3).contains(&current.len()) {
            return Err((
                line_no,
                format!(
                    "polygon {id} begins while polygon {open} has {} vertex line(s) (from line \
                     {}); a polygon needs at least 3, on consecutive lines: are two polygons' \
                     lines interleaved?",
                    current.len(),
                    lines[0]
                ),
            ));
        } else if id == open + 1 && !current.is_empty() {
            finish(&mut polygons, &mut current, &mut lines)?;
        } else if id < open {
            return Err((
                line_no,
                format!(
                    "polygon {id} appears again after polygon {} began: each polygon's vertices \
                     must be on consecutive lines",
                    open - usize::from(current.is_empty())
                ),
            ));
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
        current.push(Vec2::new(v[0], v[1]));
        lines.push(line_no);
    }
    if !current.is_empty() {
        finish(&mut polygons, &mut current, &mut lines)?;
    }
    Ok(polygons)
}

/// Reads a polygon file: header `polygon,x,y`, one vertex per line, polygons numbered from 0 in
/// file order with their vertices on consecutive lines, in order, either winding. Errors name the
/// 1-based line (the header is line 1) and the problem; a polygon that fails validation is
/// reported at the line of its first vertex.
pub fn read_polygons_csv(path: &Path) -> Result<Vec<Polygon>> {
    read_with(path, &[&POLYGON_HEADER], parse_polygons_csv)
}

/// Writes polygons in the format [`read_polygons_csv`] reads.
pub fn write_polygons_csv(path: &Path, polygons: &[Polygon]) -> Result<()> {
    write_file(path, |w| polygons_csv(w, polygons))
}

/// [`write_polygons_csv`]'s text, to any writer (buffer it: one write per line).
pub fn polygons_csv(w: &mut dyn std::io::Write, polygons: &[Polygon]) -> std::io::Result<()> {
    w.write_all(b"polygon,x,y\n")?;
    for (i, p) in polygons.iter().enumerate() {
        for v in p.vertices() {
            writeln!(w, "{i},{},{}", v.x, v.y)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
