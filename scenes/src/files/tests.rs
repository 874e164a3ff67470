//! The CSV readers' and writers' unit tests.

use super::*;
use sweepfan::geom::polygon::PolygonSet;

fn v(points: &[(f32, f32)]) -> Vec<Vec2> {
    points.iter().map(|&(x, y)| Vec2::new(x, y)).collect()
}

#[test]
fn box_csv_errors_name_line_and_problem() {
    let h = "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n";
    let good = format!("{h}0,0,0,1,1,1,1,0,0,0\n\n1,2,3,0.5,0.5,0.5,0.8,0.6,0,0\n");
    let v = parse_obbs_csv(&good).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1].rotation.x, 0.6);
    let err = |t: String| parse_obbs_csv(&t).unwrap_err();
    assert_eq!(err("x,y\n".into()).0, 1);
    assert_eq!(err(String::new()).0, 1);
    let e = err(format!("{h}0,0,0,1,1,1,1,0,0,0\n0,0,0,1,1,1,1,0,0\n"));
    assert_eq!(e.0, 3);
    assert!(e.1.contains("expected 10 fields"), "{}", e.1);
    let e = err(format!("{h}0,0,0,1,abc,1,1,0,0,0\n"));
    assert_eq!(e, (2, "hy = `abc` is not a number".to_string()));
    let e = err(format!("{h}0,0,0,1,1,-1,1,0,0,0\n"));
    assert!(e.0 == 2 && e.1.contains("negative"), "{e:?}");
    let e = err(format!("{h}0,0,0,1,1,1,0,0,0,0\n"));
    assert!(e.0 == 2 && e.1.contains("zero"), "{e:?}");
    let e = err(format!("{h}0,NaN,0,1,1,1,1,0,0,0\n"));
    assert!(e.0 == 2 && e.1.contains("cy is NaN"), "{e:?}");
}

#[test]
fn box_csv_round_trips_exactly() {
    let boxes = vec![
        Obb::new(
            Vec3::new(0.1, -2.5, 1e-3),
            Vec3::new(1.0, 0.25, 3.5),
            Quat::from_rotation_z(0.3),
        ),
        Obb::axis_aligned(Vec3::splat(7.0), Vec3::ZERO),
    ];
    let dir = std::env::temp_dir().join(format!("sweepfan-obb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("boxes.csv");
    write_obbs_csv(&path, &boxes).unwrap();
    assert_eq!(read_obbs_csv(&path).unwrap(), boxes);
    let missing = read_obbs_csv(&dir.join("nope.csv")).unwrap_err();
    assert!(matches!(missing, Error::Io { .. }));
    std::fs::remove_dir_all(&dir).unwrap();
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
        e.0 == 5 && e.1.contains("polygon 1 (lines 5-6)") && e.1.contains("at least 3"),
        "{e:?}"
    );
}

#[test]
fn polygon_csv_round_trips() {
    let polygons = vec![
        Polygon::new(&v(&[(0.1, 0.2), (1.5, 0.0), (0.3, 1.7)])).unwrap(),
        Polygon::new(&v(&[(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])).unwrap(),
    ];
    let dir = std::env::temp_dir().join(format!("sweepfan-poly-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("polygons.csv");
    write_polygons_csv(&path, &polygons).unwrap();
    assert_eq!(read_polygons_csv(&path).unwrap(), polygons);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sphere_csv_errors_name_line_and_problem() {
    let cases = [
        ("x,y,z,r\n1,2,3,1\n1,2,abc,1\n", 3, "not a number"),
        ("x,y,z,r\n1,2,3,NaN\n", 2, "NaN"),
        ("x,y,z,r\n1,2,3,1\n\n1,inf,3,1\n", 4, "infinite"),
        ("x,y,z,r\n1,2,3,-1\n", 2, "negative"),
        ("x,y,z,r\n1,2,3\n", 2, "4 fields"),
        ("a,b,c,d\n", 1, "header"),
        ("", 1, "empty"),
        ("x,y,z,r\n3e18,0,0,1\n", 2, "overflow"),
    ];
    for (text, line, what) in cases {
        let (l, msg) = parse_spheres_csv(text).unwrap_err();
        assert_eq!(l, line, "{text:?}: {msg}");
        assert!(msg.contains(what), "{text:?}: {msg}");
    }
    let ok = parse_spheres_csv("x,y,z,r\n1,2,3,0.5\n-1e3, 0 ,7,0\n").unwrap();
    assert_eq!(ok.len(), 2);
    assert_eq!(ok[1].center, Vec3::new(-1000.0, 0.0, 7.0));
}

/// A header that is almost right says how: a world column where one scene is read (and
/// what reads a batch, in the tool's words), a world column on a box file, the right
/// columns in another order; a world line joined by bare CRs says so.
#[test]
fn headers_close_to_the_expected_one_say_what_differs() {
    let (_, msg) = parse_spheres_csv("x,y,z,r,world\n0,0,0,1,0\n").unwrap_err();
    assert!(
        msg.contains("a batch of worlds") && msg.contains("sweepfan verify --scene-file"),
        "{msg}"
    );
    assert!(!msg.contains("read_world_spheres_csv"), "{msg}");
    let (_, msg) = parse_spheres_csv("y,x,z,r\n0,0,0,1\n").unwrap_err();
    assert!(msg.contains("the same columns in another order"), "{msg}");
    let (_, msg) = parse_spheres_csv("x,y,z,World,r\n0,0,0,0,1\n").unwrap_err();
    assert!(msg.contains("`x,y,z,r,world`"), "{msg}");
    let (_, msg) = parse_world_spheres_csv("x,y,z,world,r\n0,0,0,0,1\n").unwrap_err();
    assert!(msg.contains("the same columns in another order"), "{msg}");
    let (_, msg) = parse_obbs_csv("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz,world\n").unwrap_err();
    assert!(msg.contains("only sphere files take"), "{msg}");
    let (_, msg) = parse_spheres_csv("x,y,r\n0,0,1\n").unwrap_err();
    assert!(!msg.contains('('), "no hint where none fits: {msg}");
    let (line, msg) = parse_world_spheres_csv("x,y,z,r,world\n0,0,0,1,0\r1,0,0,1,0\r").unwrap_err();
    assert_eq!(line, 2);
    assert!(
        msg.contains("carriage return") && !msg.contains('\r'),
        "{msg:?}"
    );
}

/// Issue 28: echoed input never carries a raw control byte, and a bad polygon names what
/// is wrong, the polygon, and its vertices' lines.
#[test]
fn messages_escape_input_and_locate_polygon_faults() {
    let (line, msg) = parse_spheres_csv("x,y,z,r\r0,0,0,1\r1,0,0,1\r").unwrap_err();
    assert_eq!(line, 1);
    assert!(!msg.contains('\r'), "{msg:?}");
    assert!(
        msg.contains("x,y,z,r\\r0,0,0,1") && msg.contains("carriage return"),
        "{msg}"
    );
    let (_, msg) = parse_spheres_csv("x,y,z,r\n0,0\0,0,1\n").unwrap_err();
    assert_eq!(msg, "y = `0\\0` is not a number");
    let (_, msg) =
        parse_obbs_csv("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,\u{1b}[2J,1,1,0,0,0\n").unwrap_err();
    assert!(
        msg.contains("hy = `\\x1b[2J`") && !msg.contains('\u{1b}'),
        "{msg:?}"
    );
    let (_, msg) = parse_polygons_csv("polygon,x,y\n\u{7}\r,0,0\n").unwrap_err();
    assert!(!msg.contains('\r') && !msg.contains('\u{7}'), "{msg:?}");
    // A bow-tie (polygon 1, lines 5-9, blank line 7 skipped): self-intersecting.
    let text = "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,0,0\n1,1,1\n\n1,1,0\n1,0,1\n";
    let (line, msg) = parse_polygons_csv(text).unwrap_err();
    assert_eq!(line, 5);
    assert_eq!(
        msg,
        "polygon 1 (lines 5-9): self-intersecting: the edge from vertex 0 (line 5) to \
         vertex 1 (line 6) crosses the edge from vertex 2 (line 8) to vertex 3 (line 9) (a \
         convex polygon's boundary never crosses itself: list the vertices in order around \
         it)"
    );
    let (_, msg) = parse_polygons_csv("polygon,x,y\n0,0,0\n0,1,1\n0,2,2\n").unwrap_err();
    assert!(msg.starts_with("polygon 0 (lines 2-4): collinear"), "{msg}");
}

#[test]
fn a_sphere_file_is_read_once_as_the_kind_its_header_says() {
    let dir = std::env::temp_dir().join(format!("sweepfan-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.csv");
    let read = |text: &str| {
        std::fs::write(&path, text).unwrap();
        read_sphere_file(&path)
    };
    let one = Sphere::new(Vec3::new(1.0, 2.0, 3.0), 0.5);
    assert_eq!(
        read("x,y,z,r\n1,2,3,0.5\n").unwrap(),
        SphereFile::Scene(vec![one])
    );
    assert_eq!(
        read(" X, y,z,R ,World\r\n1,2,3,0.5,7\n1,2,3,0.5,shared\n").unwrap(),
        SphereFile::Worlds(vec![one, one], vec![7, sweepfan::SHARED])
    );
    // Only a header: no spheres, of either kind.
    assert_eq!(read("x,y,z,r\n").unwrap(), SphereFile::Scene(vec![]));
    assert_eq!(
        read("x,y,z,r,world\n").unwrap(),
        SphereFile::Worlds(vec![], vec![])
    );
    // Neither header: worded against the plain one; a world id where none belongs, by line.
    let e = read("x,y,r\n1,2,3\n").unwrap_err().to_string();
    assert!(
        e.contains("line 1: header is `x,y,r`, expected `x,y,z,r`"),
        "{e}"
    );
    let e = read("x,y,z,r,world\n1,2,3,0.5\n").unwrap_err().to_string();
    assert!(e.contains("line 2: expected 5 fields"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
