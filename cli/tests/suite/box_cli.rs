//! The box and polygon pipelines through the tool: `sweepfan verify --shape obb|polygon` against
//! overlaps known by construction, its errors, and `bench --shape` rows against all-pairs
//! counts.

use super::box_pipeline::lattice;
use crate::common::test_gpu;
use crate::common::{
    bench_run, bench_shape_rows, exits_2_naming, read_pairs, succeed, succeed_stdout, sweepfan,
    temp_dir, verify, write_file,
};
use glam::{Quat, Vec2, Vec3};
use std::path::Path;
use sweepfan::Pair;
use sweepfan::cpu::sat::obb_overlaps;
use sweepfan::geom::obb::Obb;
use sweepfan_scenes::boxes::generate_boxes;
use sweepfan_scenes::{SceneKind, SceneParams};

// ---- CLI: `sweepfan verify --shape obb|polygon`, against overlaps known by construction.

const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// `sweepfan verify --scene-file SCENE --pairs-out PAIRS --shape SHAPE`.
fn verify_shape(shape: &str, scene: &Path, pairs: &Path) -> std::process::Command {
    let mut cmd = verify(scene, pairs);
    cmd.args(["--shape", shape]);
    cmd
}

/// The 5^3 lattice plus, far away, an axis-aligned unit cube with cubes rotated 45 degrees about
/// z beside it: those reach 0.5 + sqrt(1/2) ~ 1.207 along x, so centres 1.15 apart overlap and
/// 1.26 apart do not (the two rotated cubes, 2.41 apart, do not).
fn obb_cli_scene() -> (String, Vec<Pair>) {
    let (mut boxes, mut expected) = lattice(5);
    let base = boxes.len() as u32;
    let far = Vec3::splat(1000.0);
    let turned = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    boxes.push(Obb::axis_aligned(far, Vec3::splat(0.5)));
    boxes.push(Obb::new(
        far + Vec3::new(1.15, 0.0, 0.0),
        Vec3::splat(0.5),
        turned,
    ));
    boxes.push(Obb::new(
        far - Vec3::new(1.26, 0.0, 0.0),
        Vec3::splat(0.5),
        turned,
    ));
    expected.push([base, base + 1]);
    const { assert!(1.15 < 0.5 + SQRT_HALF && 1.26 > 0.5 + SQRT_HALF) };
    let mut csv = String::from("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n");
    for b in &boxes {
        let (c, h, q) = (b.center, b.half_extents, b.rotation);
        csv += &format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            c.x, c.y, c.z, h.x, h.y, h.z, q.w, q.x, q.y, q.z
        );
    }
    (csv, expected)
}

/// Unit squares on a 6x6 lattice (touching iff lattice coordinates differ by at most 1), plus
/// far away a unit square with diamonds of half-diagonal 0.75 beside it: overlap iff centres are
/// at most 1.25 apart along x (1.2: yes; 1.3: no).
fn polygon_cli_scene() -> (String, Vec<Pair>) {
    let mut polys: Vec<Vec<Vec2>> = Vec::new();
    let mut cells = Vec::new();
    let square = |c: Vec2| {
        vec![
            c + Vec2::new(-0.5, -0.5),
            c + Vec2::new(0.5, -0.5),
            c + Vec2::new(0.5, 0.5),
            c + Vec2::new(-0.5, 0.5),
        ]
    };
    for x in 0..6i32 {
        for y in 0..6 {
            cells.push([x, y]);
            polys.push(square(Vec2::new(x as f32, y as f32)));
        }
    }
    let mut expected = Vec::new();
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            let [a, b] = [cells[i], cells[j]];
            if (a[0] - b[0]).abs() <= 1 && (a[1] - b[1]).abs() <= 1 {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    let base = polys.len() as u32;
    let far = Vec2::splat(500.0);
    let diamond = |c: Vec2| {
        vec![
            c + Vec2::new(0.75, 0.0),
            c + Vec2::new(0.0, 0.75),
            c + Vec2::new(-0.75, 0.0),
            c + Vec2::new(0.0, -0.75),
        ]
    };
    polys.push(square(far));
    polys.push(diamond(far + Vec2::new(1.2, 0.0)));
    polys.push(diamond(far - Vec2::new(1.3, 0.0)));
    expected.push([base, base + 1]);
    let mut csv = String::from("polygon,x,y\n");
    for (k, p) in polys.iter().enumerate() {
        for v in p {
            csv += &format!("{k},{},{}\n", v.x, v.y);
        }
    }
    (csv, expected)
}

#[test]
fn cli_verify_obb_and_polygon_files() {
    let dir = temp_dir("box_cli", "ok");
    let gpu = test_gpu().is_some();
    let mut backends = vec!["cpu"];
    if gpu {
        backends.push("gpu");
    }
    for (shape, (csv, expected)) in [("obb", obb_cli_scene()), ("polygon", polygon_cli_scene())] {
        let scene = write_file(&dir, &format!("{shape}.csv"), csv);
        for backend in &backends {
            let pairs = dir.join(format!("{shape}_{backend}_pairs.csv"));
            let stdout = succeed_stdout(
                verify_shape(shape, &scene, &pairs).args(["--backend", backend]),
                &format!("{shape} {backend}"),
            );
            assert!(stdout.contains("verified"), "{stdout}");
            assert_eq!(read_pairs(&pairs), expected, "{shape} [{backend}]");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_verify_names_the_bad_line() {
    let dir = temp_dir("box_cli", "bad");
    let cases = [
        (
            "obb",
            "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n0,0,0,1,x,1,1,0,0,0\n",
            "line 3",
        ),
        (
            "obb",
            "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n0,0,0,1,1,1,5,0,0,0\n",
            "line 3",
        ),
        (
            "polygon",
            "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,5,5\n1,zz,6\n",
            "line 6",
        ),
    ];
    for (k, (shape, text, line)) in cases.iter().enumerate() {
        let scene = write_file(&dir, &format!("bad{k}.csv"), text);
        exits_2_naming(&mut verify_shape(shape, &scene, &dir.join("p.csv")), line);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `bench --shape SHAPE` over the seeded `scene` of `n` boxes (volume fraction 1%): its rows
/// (`common::bench_shape_rows`) and the scene's boxes.
fn bench_box_rows(shape: &str, scene: SceneKind, n: usize) -> (Vec<serde_json::Value>, Vec<Obb>) {
    let rows = bench_shape_rows(shape, scene.name(), n);
    let mut p = SceneParams::new(n, 1);
    p.volume_fraction = 0.01;
    (rows, generate_boxes(scene, &p))
}

#[test]
fn cli_bench_obb_writes_verified_rows() {
    let (rows, boxes) = bench_box_rows("obb", SceneKind::Density, 3000);
    // The CPU pipeline on the same seeded boxes, counted here.
    let (cpu, _) = obb_overlaps(&boxes).unwrap();
    for r in &rows {
        assert_eq!(r["pairs_per_frame"].as_f64().unwrap(), cpu.len() as f64);
        assert!(r["tests_per_frame"].as_f64().unwrap() >= cpu.len() as f64);
    }
}

/// `bench --shape aabb`: the box broad phase alone, on the boxes' AABBs, on both backends; each
/// row's pairs equal brute force's count, computed here with its own interval test.
#[test]
fn cli_bench_aabb_rows_count_brute_forces_pairs() {
    let (rows, boxes) = bench_box_rows("aabb", SceneKind::Clusters, 2000);
    let boxes: Vec<_> = boxes.iter().map(|b| b.aabb()).collect();
    let mut brute = 0u64;
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            brute += (0..3).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k]) as u64;
        }
    }
    assert!(brute > 100, "too few pairs to mean much: {brute}");
    for r in &rows {
        assert_eq!(r["pairs_per_frame"].as_f64().unwrap(), brute as f64);
    }
}

/// Runs `verify` (`cmd`) on the GPU writing its contacts to `contacts`, a run that must
/// succeed with no mismatch against the CPU's contacts, its stdout holding each of `lines`.
fn gpu_contacts_run(mut cmd: std::process::Command, contacts: &Path, lines: &[&str]) {
    let stdout = succeed_stdout(
        cmd.args(["--backend", "gpu", "--contacts-out"])
            .arg(contacts),
        "verify --backend gpu",
    );
    for line in lines {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
}

/// The first `n` numbers of the first row past the header of the CSV file at `path`, and the
/// file's text (for failure messages).
fn first_row_numbers(path: &Path, n: usize) -> (Vec<f32>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let row: Vec<f32> = text
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .take(n)
        .map(|v| v.parse().unwrap())
        .collect();
    (row, text)
}

/// `verify --contacts-out`: a box resting on a box (a known manifold) and a sphere pair, written
/// beside their pairs, one row per pair, empty columns past the count.
#[test]
fn verify_writes_contacts_beside_the_pairs() {
    let dir = temp_dir("box-cli", "contacts");
    let boxes = "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n0.2,0.1,1.4,0.5,0.5,0.5,1,0,0,0\n9,9,9,1,1,1,1,0,0,0\n";
    let scene = write_file(&dir, "boxes.csv", boxes);
    let (pairs, contacts) = (dir.join("p.csv"), dir.join("c.csv"));
    succeed(
        verify_shape("obb", &scene, &pairs)
            .arg("--contacts-out")
            .arg(&contacts)
            .output(),
    );
    let text = std::fs::read_to_string(&contacts).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..7], ["i", "j", "nx", "ny", "nz", "depth", "count"]);
    assert_eq!(rows.len(), 2, "{text}");
    let row = &rows[1];
    assert_eq!(row.len(), 7 + 16, "{text}");
    let v = |k: usize| row[k].parse::<f32>().unwrap();
    assert_eq!(row[..2], ["0", "1"]);
    assert!(
        (v(4) - 1.0).abs() < 1e-6 && (v(5) - 0.1).abs() < 1e-6,
        "{text}"
    );
    assert_eq!(row[6], "4");
    for k in 0..4 {
        let (x, y, z, d) = (v(7 + 4 * k), v(8 + 4 * k), v(9 + 4 * k), v(10 + 4 * k));
        assert!(((x - 0.2).abs() - 0.5).abs() < 1e-6 && ((y - 0.1).abs() - 0.5).abs() < 1e-6);
        assert!((z - 0.95).abs() < 1e-6 && (d - 0.1).abs() < 1e-6, "{text}");
    }

    // On the GPU: the device's contacts, checked against the CPU's.
    if test_gpu().is_some() {
        let gpu_contacts = dir.join("cg.csv");
        gpu_contacts_run(
            verify_shape("obb", &scene, &pairs),
            &gpu_contacts,
            &[
                "contacts [gpu]: 1 contacts, 4 points",
                "contacts against the CPU's: 1 pairs",
            ],
        );
        let gpu_text = std::fs::read_to_string(&gpu_contacts).unwrap();
        assert_eq!(gpu_text.lines().count(), 2, "{gpu_text}");
        // Polygons too: two unit squares sharing the edge x = 1 (two points, depth 0, +x),
        // a third apart.
        let squares = "polygon,x,y\n0,0,0\n0,1,0\n0,1,1\n0,0,1\n1,1,0.25\n1,2,0.25\n1,2,1.25\n\
                       1,1,1.25\n2,5,5\n2,6,5\n2,6,6\n";
        let scene = write_file(&dir, "squares.csv", squares);
        gpu_contacts_run(
            verify_shape("polygon", &scene, &pairs),
            &gpu_contacts,
            &["contacts [gpu]: 1 contacts, 2 points"],
        );
        let (row, gpu_text) = first_row_numbers(&gpu_contacts, 7);
        assert_eq!(row[..2], [0.0, 1.0], "{gpu_text}");
        assert!(
            (row[2] - 1.0).abs() < 1e-6 && row[5].abs() < 1e-6 && row[6] == 2.0,
            "{gpu_text}"
        );
    }

    let spheres = write_file(&dir, "spheres.csv", "x,y,z,r\n0,0,0,1\n1.5,0,0,1\n");
    succeed(
        verify(&spheres, &pairs)
            .arg("--contacts-out")
            .arg(&contacts)
            .output(),
    );
    let text = std::fs::read_to_string(&contacts).unwrap();
    let row = text.lines().nth(1).unwrap();
    assert!(
        row.starts_with("0,1,1,0,0,0.5,1,0.75,0,0,0.5,,,,"),
        "{text}"
    );
    // On the GPU: the device's sphere contacts, checked against the CPU's.
    if test_gpu().is_some() {
        gpu_contacts_run(
            verify(&spheres, &pairs),
            &contacts,
            &[
                "contacts [gpu]: 1 contacts, 1 points",
                "contacts against the CPU's: 1 pairs",
            ],
        );
        // The device's f32 (with approximate math, a few units of rounding off the CPU's).
        let (row, text) = first_row_numbers(&contacts, 11);
        let want = [0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 1.0, 0.75, 0.0, 0.0, 0.5];
        let near = row.iter().zip(want).all(|(v, w)| (v - w).abs() <= 1e-5);
        assert!(near && row.len() == want.len(), "{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `bench --contacts`: rows for the contacts on every thread and on one (parry's with the
/// `peers` feature), the pairs taken as the pipeline found them, and the rate line; refused on
/// spheres.
#[test]
fn bench_times_contacts_beside_the_pipeline() {
    let bench = |backend: &str| {
        bench_run(&[
            "--shape",
            "obb",
            "--scene",
            "paper",
            "--n",
            "400",
            "--frames",
            "1",
            "--backend",
            backend,
            "--contacts",
        ])
    };
    let (out, rows) = bench("cpu");
    let method = |r: &serde_json::Value| r["method"].as_str().unwrap().to_string();
    let pipeline = rows.iter().find(|r| method(r) == "aabb_sweep+sat").unwrap();
    let pairs = pipeline["pairs_per_frame"].as_f64().unwrap();
    assert!(pairs > 0.0);
    for name in ["contacts", "contacts (1 thread)"] {
        let row = rows
            .iter()
            .find(|r| method(r) == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(row["tests_per_frame"].as_f64().unwrap(), pairs, "{name}");
        // At least one point a touching pair, at most four.
        let points = row["pairs_per_frame"].as_f64().unwrap();
        assert!(points >= pairs && points <= 4.0 * pairs, "{name}: {points}");
    }
    assert_eq!(
        rows.iter().any(|r| method(r).starts_with("peer-parry")),
        cfg!(feature = "peers")
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("M contacts/s"), "{stdout}");
    if test_gpu().is_some() {
        let (_, rows) = bench("both");
        // From the host's pairs, and the whole frame in one submission.
        for name in [
            "contacts (gpu)",
            "pipeline + contacts (gpu, one submission)",
        ] {
            let row = rows.iter().find(|r| method(r) == name).expect(name);
            assert_eq!(row["backend"], "gpu");
            assert_eq!(row["verified"], true, "{row}");
            assert_eq!(row["tests_per_frame"].as_f64().unwrap(), pairs);
        }
        // With the GPU alone the CPU's contact rows stay the CPU's (they once took the GPU
        // pipeline row's backend, device and traffic).
        let (_, rows) = bench("gpu");
        for name in ["contacts", "contacts (1 thread)"] {
            let row = rows.iter().find(|r| method(r) == name).expect(name);
            assert_eq!(row["backend"], "cpu", "{row}");
            assert!(
                row["device"].as_str().unwrap().starts_with("cpu ("),
                "{row}"
            );
            assert!(row.get("dispatches_per_frame").is_none(), "{row}");
        }
    }
    exits_2_naming(
        sweepfan().args(["bench", "--n", "100", "--contacts"]),
        "--contacts",
    );
}
