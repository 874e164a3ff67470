//! The three CSV readers under hostile input: random bytes and mutated valid files never panic
//! and every error names a line of the file; files without line breaks, with a byte-order mark,
//! with interleaved polygons, or that are directories get clear answers.

use glam::Vec3;
use proptest::prelude::*;
use sweepfan::{Error, Sphere};
use sweepfan_scenes::files::{
    parse_obbs_csv, parse_polygons_csv, parse_spheres_csv, read_obbs_csv, read_polygons_csv,
    read_spheres_csv,
};

const SPHERES: &str = "x,y,z,r\n0,0,0,1\n1.5,2,-3,0.25\n\n4,4,4,0\n";
const BOXES: &str =
    "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n2,0,0,0.5,0.5,0.5,0.8,0.6,0,0\n";
const POLYGONS: &str = "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,2,2\n1,3,2\n1,3,3\n1,2,3\n";

/// Runs the three parsers; each must return Ok or an error naming a line in 1..=lines + 1.
fn parse_all(text: &str) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1);
    let results = [
        parse_spheres_csv(text).err(),
        parse_obbs_csv(text).err(),
        parse_polygons_csv(text).err(),
    ];
    for (line, problem) in results.into_iter().flatten() {
        prop_assert!(
            (1..=lines + 1).contains(&line),
            "line {line} of {lines}: {problem}"
        );
        prop_assert!(!problem.is_empty());
    }
    Ok(())
}

/// A valid file with a few bytes replaced, inserted or removed.
fn mutated() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![SPHERES, BOXES, POLYGONS]),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    )
        .prop_map(|(base, edits)| {
            String::from_utf8_lossy(&super::fuzz_scenes::edited(base, &edits)).into_owned()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_text_never_panics_and_names_a_line(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        parse_all(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn mutated_files_never_panic_and_name_a_line(text in mutated()) {
        parse_all(&text)?;
    }
}

#[test]
fn valid_files_parse() {
    let spheres = parse_spheres_csv(SPHERES).unwrap();
    assert_eq!(
        spheres,
        [
            Sphere::new(Vec3::ZERO, 1.0),
            Sphere::new(Vec3::new(1.5, 2.0, -3.0), 0.25),
            Sphere::new(Vec3::splat(4.0), 0.0),
        ]
    );
    let boxes = parse_obbs_csv(BOXES).unwrap();
    assert_eq!(boxes.len(), 2);
    assert_eq!(boxes[1].center, Vec3::new(2.0, 0.0, 0.0));
    assert_eq!(boxes[1].half_extents, Vec3::splat(0.5));
    assert_eq!(boxes[1].rotation.to_array(), [0.6, 0.0, 0.0, 0.8]);
    let polygons = parse_polygons_csv(POLYGONS).unwrap();
    assert_eq!(polygons.len(), 2);
    assert_eq!(polygons[0].vertices().len(), 3);
    assert_eq!(polygons[1].vertices().len(), 4);
    assert!(polygons[1].vertices().contains(&glam::Vec2::new(3.0, 3.0)));
    // A UTF-8 byte-order mark before the header is not part of the first name.
    assert_eq!(
        parse_spheres_csv(&format!("\u{feff}{SPHERES}"))
            .unwrap()
            .len(),
        3
    );
}

/// A header is quoted as the file has it (not lower-cased), and data lines that end in a bare
/// CR after a first line ending in LF are named as such (issue 39).
#[test]
fn headers_are_quoted_as_written_and_bare_crs_are_named_on_any_line() {
    let (line, p) = parse_spheres_csv("X,Y,Z,Radius\n0,0,0,1\n").unwrap_err();
    assert_eq!(line, 1);
    assert!(p.contains("header is `X,Y,Z,Radius`"), "{p}");
    assert!(!p.contains("worlds"), "{p}");
    // A batch of worlds where one scene is read: named as such, with where it is read.
    let (_, p) = parse_spheres_csv("x,y,z,r,World\n0,0,0,1,3\n").unwrap_err();
    assert!(
        p.contains("a batch of worlds") && p.contains("verify"),
        "{p}"
    );
    for text in [
        "x,y,z,r\n0,0,0,1\r1,0,0,1\r",
        "x,y,z,r\n0,0,0,1\r1,0,0,1\r2,0,0,1",
    ] {
        let (line, p) = parse_spheres_csv(text).unwrap_err();
        assert_eq!(line, 2, "{p}");
        assert!(p.contains("bare carriage return"), "{text:?}: {p}");
    }
    let boxes = "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\r2,0,0,1,1,1,1,0,0,0\r";
    assert!(
        parse_obbs_csv(boxes)
            .unwrap_err()
            .1
            .contains("bare carriage return")
    );
    let polygons = "polygon,x,y\n0,0,0\r0,1,0\r0,0,1\r";
    assert!(
        parse_polygons_csv(polygons)
            .unwrap_err()
            .1
            .contains("bare carriage return")
    );
}

#[test]
fn interleaved_polygons_are_named_as_such() {
    let (line, p) = parse_polygons_csv("polygon,x,y\n0,0,0\n1,5,5\n0,1,0\n").unwrap_err();
    assert_eq!(line, 3);
    assert!(p.contains("interleaved"), "{p}");
    let text = "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,5,5\n1,6,5\n0,7,7\n";
    let (line, p) = parse_polygons_csv(text).unwrap_err();
    assert_eq!(line, 7);
    assert!(p.contains("polygon 0 appears again"), "{p}");
}

#[test]
fn files_without_line_breaks_binary_files_and_directories_are_refused() {
    let dir = crate::common::temp_dir("csv", "hostile");
    if std::path::Path::new("/dev/zero").exists() {
        let e = read_spheres_csv(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(e, Error::Parse { line: 1, .. }) && e.to_string().contains("longer than"),
            "{e}"
        );
    }
    let binary = dir.join("binary.csv");
    std::fs::write(&binary, [0x78, 0x2c, 0xff, 0xfe, 0x0a]).unwrap();
    let e = read_obbs_csv(&binary).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("UTF-8"), "{e}");
    let e = read_polygons_csv(&dir).unwrap_err().to_string();
    assert!(e.contains("directory"), "{e}");
    // A wrong header is reported before the rest of the file is read.
    let wrong = dir.join("wrong.csv");
    std::fs::write(&wrong, format!("a,b\n{}", "1,2\n".repeat(10_000))).unwrap();
    let e = read_spheres_csv(&wrong).unwrap_err();
    assert!(matches!(e, Error::Parse { line: 1, .. }), "{e}");
    let bom = dir.join("bom.csv");
    std::fs::write(&bom, format!("\u{feff}{SPHERES}")).unwrap();
    assert_eq!(read_spheres_csv(&bom).unwrap().len(), 3);
}
