//! A fuzz target for the scene parsers (docs/design.md §9.15; formats in §3.4): a
//! proptest run with a fixed seed and no failure persistence, so every run (CI included) tries
//! the same cases, 2,000 per generator, in a few seconds in release. Each input goes to every
//! parser: the three text parsers (`parse_*_csv`), the three file readers (`read_*_csv`) and
//! `Scene::from_csv`, whatever format it was made for. Each must return Ok or an error naming a
//! line of the input, never panic; what parses must pass the validation the pipelines run and go
//! through them (the CPU grid, the box and polygon pipelines); a file must read exactly as its
//! text parses. Inputs: arbitrary bytes (after a header or not), valid files with bytes edited,
//! and files built from hostile tokens (`1e39`, `-0`, `NaN`, `0x10`, a NUL, a lone CR, a
//! byte-order mark, ids past `usize`, degenerate polygons).

use crate::common::temp_dir;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::RngSeed;
use std::path::{Path, PathBuf};
use sweepfan::cpu::sat::{obb_overlaps, polygon_overlaps};
use sweepfan::geom::obb::validate_obbs;
use sweepfan::geom::polygon::PolygonSet;
use sweepfan::{Error, Method, Obb, Polygon, Sphere, validate_spheres};
use sweepfan_scenes::Scene;
use sweepfan_scenes::files::{
    MAX_LINE_BYTES, SphereFile, parse_obbs_csv, parse_polygons_csv, parse_spheres_csv,
    read_obbs_csv, read_polygons_csv, read_sphere_file, read_spheres_csv,
};

/// Cases per generator, the same every run.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x0005_CE7E_F422),
        ..ProptestConfig::default()
    }
}

/// Parsed sets up to this size also go through the pipelines.
const PIPELINE_MAX: usize = 64;

const HEADERS: &[&str] = &[
    "x,y,z,r",
    "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz",
    "polygon,x,y",
    " X , Y ,Z,R",
    "\u{feff}x,y,z,r",
    "\u{feff}polygon,x,y",
    "x,y,z",
    "x,y,z,r,w",
    "x;y;z;r",
    "",
];

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "0.5",
    "2",
    "1.5",
    "-3",
    "0.25",
    "1e18",
    "-1e18",
    "1e19",
    "3.4e38",
    "1e39",
    "1e-30",
    "-1e-30",
    "1e-31",
    "1e-45",
    "1e-50",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "infinity",
    "+1",
    ".5",
    "5.",
    "0x10",
    "",
    " ",
    " 1 ",
    "1_0",
    "\u{661}",
    "\u{ff11}",
    "1e",
    "e1",
    "--1",
    "1.2.3",
    "18446744073709551616",
    "\0",
    "\r",
    "\u{1b}[31m",
    "\u{feff}1",
    "\u{202e}1",
    "1\t",
];

const IDS: &[&str] = &[
    "0",
    "0",
    "1",
    "1",
    "2",
    "3",
    "-1",
    "+1",
    " 1",
    "01",
    "1.0",
    "",
    "x",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
];

/// Coordinates of polygons and boxes that validate more often than [`NUMBERS`].
const COORDS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "0.5",
    "3",
    "-2.5",
    "1e-20",
    "1e-16",
    "1e18",
    "0.3333333",
    "-0",
];

const QUATERNIONS: &[&str] = &[
    "1,0,0,0",
    "0.8,0.6,0,0",
    "0,0,0,1",
    "0.5,0.5,0.5,0.5",
    "0.7071068,0,0.7071068,0",
    "0,0,0,0",
    "2,0,0,0",
    "1,1e-7,0,0",
];

const ENDINGS: &[&str] = &["\n", "\n", "\n", "\r\n", "\r", "\n\n", ""];

const VALID: &[&str] = &[
    "x,y,z,r\n0,0,0,1\n1.5,2,-3,0.25\n\n4,4,4,0\n",
    "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n2,0,0,0.5,0.5,0.5,0.8,0.6,0,0\n",
    "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,2,2\n1,3,2\n1,3,3\n1,2,3\n",
    "polygon,x,y\r\n0,0,0\r\n0,2,0\r\n0,2,2\r\n0,0,2\r\n",
];

/// A line ending: mostly LF, sometimes CRLF, a lone CR, a blank line or none.
fn ending() -> impl Strategy<Value = &'static str> {
    prop_oneof![12 => Just("\n"), 2 => Just("\r\n"), 1 => select(ENDINGS)]
}

/// A field: mostly a plain coordinate, sometimes a hostile token.
fn field() -> impl Strategy<Value = &'static str> {
    prop_oneof![30 => select(COORDS), 1 => select(NUMBERS)]
}

/// Mostly `header`, sometimes any header (another format's, a wrong one, none).
fn header(name: &'static str) -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => Just(name), 1 => select(HEADERS)]
}

/// A file of `fields` fields per line: the first from `first`, the rest from [`field`]; now and
/// then a line has one field fewer or one more.
fn token_file(
    head: &'static str,
    first: impl Strategy<Value = &'static str>,
    fields: usize,
) -> impl Strategy<Value = Vec<u8>> {
    let line = (
        first,
        prop::collection::vec(field(), fields - 1),
        ending(),
        0..40u8,
    )
        .prop_map(|(f, mut rest, end, k)| {
            match k {
                0 => {
                    rest.pop();
                }
                1 => rest.push("1"),
                _ => {}
            }
            format!("{f},{}{end}", rest.join(","))
        });
    (header(head), ending(), prop::collection::vec(line, 0..8))
        .prop_map(|(h, end, lines)| format!("{h}{end}{}", lines.concat()).into_bytes())
}

/// Polygon files of 0..5 regular polygons (3..8 vertices, centres and sizes from a few values,
/// either winding), each now and then made degenerate: two vertices swapped (crossing edges, a
/// bow-tie), the first vertex repeated at the end, a vertex on an edge (collinear, allowed), too
/// few vertices.
fn polygon_file() -> impl Strategy<Value = Vec<u8>> {
    const SIZES: &[&str] = &["1", "0.5", "2", "1e-10", "1e10", "1e-16"];
    let polygon = (
        3..9usize,
        select(COORDS),
        select(COORDS),
        select(SIZES),
        0..16u8,
    )
        .prop_map(|(k, cx, cy, size, fault)| {
            let [cx, cy, r]: [f64; 3] = [cx, cy, size].map(|t| t.parse().unwrap());
            let mut v: Vec<(f64, f64)> = (0..k)
                .map(|i| {
                    let a = std::f64::consts::TAU * i as f64 / k as f64;
                    (cx + r * a.cos(), cy + r * a.sin())
                })
                .collect();
            match fault {
                0 => v.swap(0, 1),
                1 => v.push(v[0]),
                2 => v.insert(1, ((v[0].0 + v[1].0) / 2.0, (v[0].1 + v[1].1) / 2.0)),
                3 => v.truncate(2),
                4..=8 => v.reverse(),
                _ => {}
            }
            v
        });
    (prop::collection::vec(polygon, 0..5), ending()).prop_map(|(polygons, end)| {
        let mut text = format!("polygon,x,y{end}");
        for (i, p) in polygons.iter().enumerate() {
            for (x, y) in p {
                text.push_str(&format!("{i},{x},{y}{end}"));
            }
        }
        text.into_bytes()
    })
}

/// Box files of 0..8 boxes: centres from a few values, half-extents mostly non-negative, a
/// rotation mostly a unit quaternion (else zero or not unit).
fn box_file() -> impl Strategy<Value = Vec<u8>> {
    const HALF: &[&str] = &["0", "1", "0.5", "2", "1e-20", "3", "0.25"];
    let half = prop_oneof![20 => select(HALF), 1 => Just("-1")];
    let rotation = prop_oneof![6 => select(&QUATERNIONS[..5]), 1 => select(QUATERNIONS)];
    let one = (
        prop::collection::vec(select(COORDS), 3),
        prop::collection::vec(half, 3),
        rotation,
    )
        .prop_map(|(c, h, q)| format!("{},{},{q}\n", c.join(","), h.join(",")));
    prop::collection::vec(one, 0..8)
        .prop_map(|b| format!("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n{}", b.concat()).into_bytes())
}

/// `base` with each edit applied in turn: (where, byte, kind) replaces (kind 0), inserts (1) or
/// removes (2) a byte.
pub(crate) fn edited(base: &str, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    let mut bytes = base.as_bytes().to_vec();
    for &(at, byte, kind) in edits {
        let i = at.index(bytes.len().max(1));
        match kind {
            0 if i < bytes.len() => bytes[i] = byte,
            1 => bytes.insert(i.min(bytes.len()), byte),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    bytes
}

/// A valid file with a few bytes replaced, inserted or removed (invalid UTF-8 included).
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (
        select(VALID),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..10),
    )
        .prop_map(|(base, edits)| edited(base, &edits))
}

fn fail(what: &str, e: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(format!("{what}: {e}"))
}

/// Parsed spheres pass validation and run through the CPU grid and brute force.
fn spheres_ok(s: &[Sphere]) -> Result<(), TestCaseError> {
    validate_spheres(s).map_err(|e| fail("parsed spheres fail validation", e))?;
    if s.is_empty() {
        return Ok(());
    }
    if s.len() <= PIPELINE_MAX {
        for method in [Method::Grid, Method::BruteForce] {
            let mut pairs = Vec::new();
            sweepfan::cpu::broad_phase(method)
                .find_pairs(s, Some(&mut pairs))
                .map_err(|e| fail("parsed spheres fail the broad phase", e))?;
        }
    }
    Ok(())
}

/// Parsed boxes pass validation and run through the CPU box pipeline.
fn boxes_ok(b: &[Obb]) -> Result<(), TestCaseError> {
    if b.is_empty() {
        return Ok(());
    }
    validate_obbs(b).map_err(|e| fail("parsed boxes fail validation", e))?;
    if b.len() <= PIPELINE_MAX {
        obb_overlaps(b).map_err(|e| fail("parsed boxes fail the pipeline", e))?;
    }
    Ok(())
}

/// Parsed polygons validate again as stored, form a set and run through the CPU pipeline.
fn polygons_ok(p: &[Polygon]) -> Result<(), TestCaseError> {
    if p.is_empty() {
        return Ok(());
    }
    for (i, q) in p.iter().enumerate() {
        Polygon::new(q.vertices())
            .map_err(|f| f.at(i))
            .map_err(|e| fail("a parsed polygon fails validation", e))?;
    }
    PolygonSet::new(p).map_err(|e| fail("parsed polygons form no set", e))?;
    if p.len() <= PIPELINE_MAX {
        polygon_overlaps(p).map_err(|e| fail("parsed polygons fail the pipeline", e))?;
    }
    Ok(())
}

/// One parser's answer: Ok passes `ok`; an error names a line in 1..=lines + 1 and says
/// something (with no raw control character: the terminal would act on it).
fn answer<T>(
    what: &str,
    result: &Result<Vec<T>, (usize, String)>,
    lines: usize,
    ok: impl Fn(&[T]) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    match result {
        Ok(v) => ok(&v[..]),
        Err((line, problem)) => {
            prop_assert!(
                (1..=lines + 1).contains(line),
                "{what}: line {line} of {lines}: {problem}"
            );
            prop_assert!(!problem.is_empty(), "{what}: an empty message");
            prop_assert!(
                !problem.chars().any(char::is_control),
                "{what}: a raw control character in {problem:?}"
            );
            Ok(())
        }
    }
}

/// A file reader's answer, which must be the text parser's (`parsed`) when the bytes are text
/// the reader accepts line by line, and else Ok or an error naming a line.
fn file_answer<T: PartialEq + std::fmt::Debug>(
    what: &str,
    read: sweepfan::Result<Vec<T>>,
    parsed: Option<&Result<Vec<T>, (usize, String)>>,
    lines: usize,
) -> Result<(), TestCaseError> {
    let read = read.map_err(|e| match e {
        Error::Parse { line, problem, .. } => Ok((line, problem)),
        other => Err(other),
    });
    let read = match read {
        Ok(v) => Ok(v),
        Err(Ok(e)) => Err(e),
        Err(Err(other)) => return Err(fail(&format!("{what}: not a parse error"), other)),
    };
    match parsed {
        Some(Ok(want)) => prop_assert_eq!(read.as_ref().ok(), Some(want), "{}", what),
        Some(Err((line, _))) => prop_assert_eq!(
            read.as_ref().err().map(|e| e.0),
            Some(*line),
            "{}: {:?}",
            what,
            read.as_ref().err()
        ),
        None => {
            if let Err((line, problem)) = &read {
                prop_assert!(
                    (1..=lines + 1).contains(line),
                    "{what}: line {line}: {problem}"
                );
                prop_assert!(
                    !problem.chars().any(char::is_control),
                    "{what}: {problem:?}"
                );
            }
        }
    }
    Ok(())
}

/// Every parser on `bytes`: as text (lossily decoded), and as a file at `path`.
fn parse_everywhere(bytes: &[u8], path: &Path) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(bytes);
    let lines = text.lines().count().max(1);
    let spheres = parse_spheres_csv(&text);
    let boxes = parse_obbs_csv(&text);
    let polygons = parse_polygons_csv(&text);
    answer("spheres", &spheres, lines, spheres_ok)?;
    answer("boxes", &boxes, lines, boxes_ok)?;
    answer("polygons", &polygons, lines, polygons_ok)?;

    std::fs::write(path, bytes).unwrap();
    // The readers take the file line by line: the same answer as the text's when it is UTF-8
    // with every line within the limit.
    let same = std::str::from_utf8(bytes).is_ok()
        && bytes
            .split(|&b| b == b'\n')
            .all(|l| l.len() <= MAX_LINE_BYTES);
    let file_lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let read = read_spheres_csv(path);
    let scene = Scene::from_csv(path).map(|s| s.spheres);
    match (&read, &scene) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
        // A scene needs a sphere: the file without one is named as such.
        (Ok(a), Err(b)) if a.is_empty() => {
            prop_assert!(b.to_string().contains("no spheres after the header"), "{b}")
        }
        _ => prop_assert!(false, "read_spheres_csv and Scene::from_csv disagree"),
    }
    // The reader of either kind reads a plain scene as the plain reader does (the fuzzed
    // headers are never the world one's).
    match (&read, read_sphere_file(path)) {
        (Ok(a), Ok(SphereFile::Scene(b))) => prop_assert_eq!(a, &b),
        (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
        (_, other) => prop_assert!(false, "read_sphere_file gave {other:?}"),
    }
    file_answer("read spheres", read, same.then_some(&spheres), file_lines)?;
    file_answer(
        "read boxes",
        read_obbs_csv(path),
        same.then_some(&boxes),
        file_lines,
    )?;
    file_answer(
        "read polygons",
        read_polygons_csv(path),
        same.then_some(&polygons),
        file_lines,
    )?;
    Ok(())
}

/// A scratch file for one generator.
fn scratch(name: &str) -> PathBuf {
    temp_dir("fuzz", name).join("scene.csv")
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_parse_or_fail_cleanly(
        header in select(HEADERS),
        bytes in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut input = format!("{header}\n").into_bytes();
        input.extend_from_slice(&bytes);
        let path = scratch("bytes");
        parse_everywhere(&bytes, &path)?;
        parse_everywhere(&input, &path)?;
    }

    #[test]
    fn mutated_valid_files_parse_or_fail_cleanly(bytes in mutated()) {
        parse_everywhere(&bytes, &scratch("mutated"))?;
    }

    #[test]
    fn token_files_parse_or_fail_cleanly(
        bytes in prop_oneof![
            token_file("x,y,z,r", field(), 4),
            token_file("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz", field(), 10),
            token_file("polygon,x,y", select(IDS), 3),
        ],
    ) {
        parse_everywhere(&bytes, &scratch("tokens"))?;
    }

    #[test]
    fn polygon_and_box_files_parse_or_fail_cleanly(
        bytes in prop_oneof![polygon_file(), box_file()],
    ) {
        parse_everywhere(&bytes, &scratch("shapes"))?;
    }
}

/// Inputs the earlier rounds found or that sit on an edge, each through every parser.
#[test]
fn hostile_inputs_parse_or_fail_cleanly() {
    let cases: &[&[u8]] = &[
        b"",
        b"\n",
        b"\r",
        b"x,y,z,r",
        b"x,y,z,r\r0,0,0,1\r1,0,0,1\r",
        b"x,y,z,r\n0,0,0\x001\n",
        b"x,y,z,r\n\xff\xfe,0,0,1\n",
        b"\xef\xbb\xbfx,y,z,r\n0,0,0,1\n",
        b"x,y,z,r\n1e39,0,0,1\n1e-50,0,0,1\n",
        b"x,y,z,r\n0,0,0,-0\n0,0,0,0\n",
        b"polygon,x,y\n18446744073709551615,0,0\n",
        b"polygon,x,y\n0,0,0\n0,1,1\n0,1,0\n0,0,1\n",
        b"polygon,x,y\n0,0,0\n0,0,0\n0,0,0\n",
        b"polygon,x,y\n0,0,0\n0,1,0\n0,2,0\n",
        b"polygon,x,y\n1,0,0\n0,0,0\n",
        b"cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1e20,0,0,0\n",
        b"cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,0,0,0,1,0,0,0\n",
    ];
    let path = scratch("hostile");
    for bytes in cases {
        if let Err(e) = parse_everywhere(bytes, &path) {
            panic!("{:?}: {e}", String::from_utf8_lossy(bytes));
        }
    }
    // A line past the reader's limit fails at that line, whatever follows.
    let mut long = b"x,y,z,r\n".to_vec();
    long.extend(std::iter::repeat_n(b'1', MAX_LINE_BYTES + 10));
    long.extend_from_slice(b"\n0,0,0,1\n");
    std::fs::write(&path, &long).unwrap();
    let e = read_spheres_csv(&path).unwrap_err();
    assert!(matches!(e, Error::Parse { line: 2, .. }), "{e}");
}
