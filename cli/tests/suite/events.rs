//! Frame events (docs/design.md §10): `bench --events` gives the same found/lost arrays on every
//! method and backend, and `pairs[t] = pairs[t-1] + found[t] - lost[t]` on every frame;
//! `verify --next-scene-file` writes the found and lost pairs, checked against pairs known by
//! construction.

use crate::common::{bench_rows, read_pairs, succeed, sweepfan, temp_dir, verify, with_next_frame};
use std::path::Path;
use sweepfan::Pair;

#[test]
fn bench_events_agree_across_methods_and_backends() {
    let rows = bench_rows(&[
        "--scene",
        "paper",
        "--n",
        "3000",
        "--frames",
        "15",
        "--methods",
        "grid,sap,xyz",
        "--events",
        "--backend",
        "both",
    ]);
    assert_eq!(rows.len(), 6);
    let ints = |r: &serde_json::Value, k: &str| -> Vec<u64> {
        r[k].as_array()
            .unwrap_or_else(|| panic!("{k} missing: {r}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (found0, lost0) = (
        ints(&rows[0], "found_per_frame"),
        ints(&rows[0], "lost_per_frame"),
    );
    assert_eq!(found0.len(), 15);
    // The paper's frames move: contacts begin and end on every frame after the first.
    assert!(found0[1..].iter().all(|&f| f > 0) && lost0[1..].iter().all(|&l| l > 0));
    assert_eq!(lost0[0], 0);
    for r in &rows {
        let what = format!("{} [{}]", r["method"], r["backend"]);
        assert_eq!(ints(r, "found_per_frame"), found0, "{what}");
        assert_eq!(ints(r, "lost_per_frame"), lost0, "{what}");
        let pairs = ints(r, "pairs_each_frame");
        let (found, lost) = (ints(r, "found_per_frame"), ints(r, "lost_per_frame"));
        for t in 0..pairs.len() {
            let before = if t == 0 { 0 } else { pairs[t - 1] };
            assert_eq!(pairs[t], before + found[t] - lost[t], "{what} frame {t}");
        }
        assert_eq!(r["found"].as_u64().unwrap(), found.iter().sum::<u64>());
        assert_eq!(r["lost"].as_u64().unwrap(), lost.iter().sum::<u64>());
    }
}

#[test]
fn events_need_stored_sphere_pairs() {
    for extra in [
        &["--count-only"][..],
        &["--shape", "obb"],
        &["--scene", "rotating"],
    ] {
        let out = sweepfan()
            .args([
                "bench",
                "--n",
                "500",
                "--frames",
                "2",
                "--methods",
                "grid",
                "--events",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("events") || err.contains("count-only"),
            "{extra:?}: {err}"
        );
    }
}

/// Spheres of radius 0.5 on a 6 x 6 x 6 lattice of spacing 1 (face neighbours touch, exactly
/// in f32); the next frame moves every sphere with x index 2 by +0.25 in x. Coordinates are
/// multiples of 0.25, so the pairs are known exactly: |d|^2 <= 1.
fn lattice_frames() -> (String, String, Vec<Pair>, Vec<Pair>) {
    let mut first = Vec::new();
    let mut next = Vec::new();
    for x in 0..6 {
        for y in 0..6 {
            for z in 0..6 {
                let p = [x as f64, y as f64, z as f64];
                first.push(p);
                next.push([p[0] + if x == 2 { 0.25 } else { 0.0 }, p[1], p[2]]);
            }
        }
    }
    let pairs = |pts: &[[f64; 3]]| {
        let mut out = Vec::new();
        for i in 0..pts.len() {
            for j in i + 1..pts.len() {
                let d2: f64 = (0..3).map(|k| (pts[i][k] - pts[j][k]).powi(2)).sum();
                if d2 <= 1.0 {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    };
    let csv = |pts: &[[f64; 3]]| {
        let mut s = String::from("x,y,z,r\n");
        for p in pts {
            s.push_str(&format!("{},{},{},0.5\n", p[0], p[1], p[2]));
        }
        s
    };
    let (a, b) = (pairs(&first), pairs(&next));
    (csv(&first), csv(&next), a, b)
}

#[test]
fn verify_writes_the_events_between_two_files() {
    let (first, next, before, after) = lattice_frames();
    let want_found: Vec<Pair> = after
        .iter()
        .filter(|p| !before.contains(p))
        .copied()
        .collect();
    let want_lost: Vec<Pair> = before
        .iter()
        .filter(|p| !after.contains(p))
        .copied()
        .collect();
    // Moving the x = 2 slab a quarter away from x = 1 breaks those contacts and makes none.
    assert!(!want_lost.is_empty() && want_found.is_empty());
    let dir = temp_dir("events", "verify");
    let (f0, f1) = (dir.join("f0.csv"), dir.join("f1.csv"));
    std::fs::write(&f0, first).unwrap();
    std::fs::write(&f1, next).unwrap();
    for backend in ["cpu", "gpu"] {
        let (found, lost) = (
            dir.join(format!("found-{backend}.csv")),
            dir.join("lost.csv"),
        );
        let mut cmd = verify(&f0, &dir.join("pairs.csv"));
        cmd.args(["--method", "grid", "--backend", backend]);
        let out = succeed(with_next_frame(&mut cmd, &f1, &found, &lost).output());
        assert_eq!(read_pairs(&found), want_found, "{backend}");
        assert_eq!(read_pairs(&lost), want_lost, "{backend}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("{} lost", want_lost.len())),
            "{text}"
        );
    }
    // Frames of different lengths are an error naming both counts.
    let short = dir.join("short.csv");
    std::fs::write(&short, "x,y,z,r\n0,0,0,1\n").unwrap();
    let out = with_next_frame(
        verify(&f0, Path::new("-")).args(["--method", "grid"]),
        &short,
        &dir.join("a.csv"),
        &dir.join("b.csv"),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 spheres, but --scene-file has 216"));
}

/// Any output on standard output (`-`) keeps standard output a CSV alone: the report goes to
/// standard error (the contacts' or the events' CSV once had the report lines after it).
#[test]
fn an_output_on_stdout_gets_no_report_lines() {
    let dir = crate::common::temp_dir("events", "stdout_whole");
    let (f0, f1) = (dir.join("f0.csv"), dir.join("f1.csv"));
    std::fs::write(&f0, "x,y,z,r\n0,0,0,1\n1.5,0,0,1\n10,0,0,1\n").unwrap();
    std::fs::write(&f1, "x,y,z,r\n0,0,0,1\n5,0,0,1\n10.5,0,0,1\n").unwrap();
    let file = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let runs: [(&str, Vec<String>); 3] = [
        ("i,j,nx", vec!["--contacts-out".into(), "-".into()]),
        (
            "i,j",
            vec![
                "--next-scene-file".into(),
                f1.to_string_lossy().into_owned(),
                "--found-out".into(),
                "-".into(),
                "--lost-out".into(),
                file("lost.csv"),
            ],
        ),
        (
            "i,j",
            vec![
                "--next-scene-file".into(),
                f1.to_string_lossy().into_owned(),
                "--found-out".into(),
                file("found.csv"),
                "--lost-out".into(),
                "-".into(),
            ],
        ),
    ];
    for (header, extra) in runs {
        let out = verify(&f0, &dir.join("pairs.csv"))
            .args(["--method", "grid"])
            .args(&extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{extra:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        assert!(
            lines.next().unwrap_or("").starts_with(header),
            "{extra:?}: {text}"
        );
        assert!(
            lines.all(|l| l
                .split(',')
                .next()
                .is_some_and(|v| v.parse::<u32>().is_ok())),
            "{extra:?}: only rows follow the header: {text}"
        );
        let report = String::from_utf8_lossy(&out.stderr);
        assert!(report.contains("verified"), "{extra:?}: {report}");
    }
}
