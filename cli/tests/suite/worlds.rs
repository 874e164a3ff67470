//! `bench --worlds`: a batch of worlds beside the loop of one call a world, verified, with the
//! loop's time and the ratio; the options it cannot honour refused.

use crate::common::{csv_rows, exits_2_naming, succeed_stdout, sweepfan, verify, with_next_frame};
use std::path::Path;

/// `sweepfan bench` with `args` (split at spaces) and `--json`, which must succeed: its
/// standard output and its rows.
fn bench_rows(name: &str, args: &str) -> (String, Vec<serde_json::Value>) {
    let json = crate::common::temp_dir("worlds", name).join("rows.json");
    let text = succeed_stdout(
        sweepfan()
            .arg("bench")
            .args(args.split(' '))
            .arg("--json")
            .arg(&json),
        &format!("{args:?}"),
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The document of every bench: rows beside the command, each with its device and frames.
    let rows = doc["rows"].as_array().expect("a rows array").clone();
    assert!(doc["command"].is_string(), "{doc}");
    let after = args.split("--frames ").nth(1).expect("--frames given");
    let frames: u64 = after.split(' ').next().unwrap().parse().unwrap();
    for r in &rows {
        assert!(
            r["device"].is_string() && r["frames"].as_u64() == Some(frames),
            "{r}"
        );
        // A CPU-type adapter's times are marked as such.
        let device = r["device"].as_str().unwrap();
        assert_eq!(
            device.contains("(Cpu,"),
            device.contains("software: not GPU times"),
            "{r}"
        );
    }
    (text, rows)
}

#[test]
fn bench_worlds_prints_verified_rows_beside_the_loop() {
    let (text, rows) = bench_rows(
        "bench",
        "--worlds 300 --n 40 --frames 2 --methods auto,grid,sap,x",
    );
    assert_eq!(rows.len(), 4);
    let pairs = rows[0]["pairs"].as_u64().unwrap();
    assert!(pairs > 0);
    for r in &rows {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["worlds"], 300);
        assert_eq!(r["n"], 12_000);
        assert_eq!(r["pairs"].as_u64(), Some(pairs), "{r}");
        let (b, l) = (
            r["batch_ms"].as_f64().unwrap(),
            r["loop_ms"].as_f64().unwrap(),
        );
        assert!((r["speedup"].as_f64().unwrap() - l / b).abs() < 1e-9 * (l / b));
        assert!(text.contains(r["method"].as_str().unwrap()));
    }
    for (args, words) in [
        (&["--events"][..], "--events"),
        (&["--scene", "rotating"][..], "--scene rotating"),
        (&["--methods", "nope"][..], "unknown method"),
    ] {
        exits_2_naming(
            sweepfan()
                .args(["bench", "--worlds", "4", "--n", "10"])
                .args(args),
            words,
        );
    }
}

#[test]
fn bench_worlds_on_both_backends_verifies_the_gpu_rows() {
    let (_, rows) = bench_rows(
        "both",
        "--worlds 200 --n 30 --frames 1 --methods auto,grid,min_axis --backend both",
    );
    let gpu: Vec<_> = rows.iter().filter(|r| r["backend"] == "gpu").collect();
    let methods: Vec<_> = gpu.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["auto", "grid", "min_axis"], "{rows:?}");
    assert_eq!(rows.len(), 6, "three rows on each backend: {rows:?}");
    let pairs = rows[0]["pairs"].as_u64().unwrap();
    for r in &rows {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["pairs"].as_u64(), Some(pairs), "{r}");
    }
}

/// A batch file (`x,y,z,r,world`, every 23rd sphere shared) and its next frame, where every
/// third sphere moved; the expected pairs `(world, i, j)` of each, by brute force here.
/// A scene file and its expected `(world, i, j)` pairs.
type WorldFile = (std::path::PathBuf, Vec<(u32, u32, u32)>);

fn world_files(dir: &std::path::Path) -> [WorldFile; 2] {
    let mut state = 11u64;
    let mut next =
        || (sweepfan_scenes::random::lcg_next(&mut state) >> 40) as f32 / (1u64 << 24) as f32;
    let n = 300;
    let spheres: Vec<([f32; 3], f32, Option<u32>)> = (0..n)
        .map(|i| {
            let c = [next() * 12.0, next() * 12.0, next() * 12.0];
            let world = (i % 23 != 0).then(|| (next() * 5.0) as u32 * 7);
            // The shared ones large: they meet each other as well as every world's.
            let r = if world.is_some() { 0.5 } else { 2.5 } + next() * 0.6;
            (c, r, world)
        })
        .collect();
    let frame = |moved: bool| -> (String, Vec<(u32, u32, u32)>) {
        let s: Vec<_> = spheres
            .iter()
            .enumerate()
            .map(|(i, &(c, r, w))| {
                let shift = if moved && i % 3 == 0 { 0.7 } else { 0.0 };
                ([c[0] + shift, c[1], c[2]], r, w)
            })
            .collect();
        let mut text = String::from("x,y,z,r,world\n");
        for (c, r, w) in &s {
            let w = w.map_or("shared".to_string(), |w| w.to_string());
            text += &format!("{},{},{},{r},{w}\n", c[0], c[1], c[2]);
        }
        let mut pairs = Vec::new();
        for i in 0..s.len() {
            for j in i + 1..s.len() {
                let (wi, wj) = (s[i].2, s[j].2);
                let world = match (wi, wj) {
                    (Some(a), Some(b)) if a != b => continue,
                    (Some(a), _) | (None, Some(a)) => a,
                    (None, None) => u32::MAX,
                };
                let d: f32 = (0..3).map(|k| (s[i].0[k] - s[j].0[k]).powi(2)).sum();
                if d <= (s[i].1 + s[j].1).powi(2) {
                    pairs.push((world, i as u32, j as u32));
                }
            }
        }
        pairs.sort();
        (text, pairs)
    };
    let (a, b) = (frame(false), frame(true));
    let (pa, pb) = (dir.join("frame0.csv"), dir.join("frame1.csv"));
    std::fs::write(&pa, a.0).unwrap();
    std::fs::write(&pb, b.0).unwrap();
    [(pa, a.1), (pb, b.1)]
}

fn read_world_pairs(path: &Path) -> Vec<(u32, u32, u32)> {
    csv_rows(path, "world,i,j")
        .iter()
        .map(|l| {
            // The shared objects' own pairs under the scene file's word for them.
            let (world, rest) = l.split_once(',').unwrap();
            let world = match world {
                "shared" => u32::MAX,
                id => {
                    let id: u32 = id.parse().unwrap();
                    assert_ne!(id, u32::MAX, "{l}: SHARED written as a number");
                    id
                }
            };
            let v: Vec<u32> = rest.split(',').map(|f| f.parse().unwrap()).collect();
            (world, v[0], v[1])
        })
        .collect()
}

#[test]
fn verify_reads_a_world_column_and_checks_each_world() {
    let dir = crate::common::temp_dir("worlds", "verify");
    let [(first, expected), (second, expected_next)] = world_files(&dir);
    assert!(expected.len() > 20 && expected.iter().any(|p| p.0 == u32::MAX));
    let (pairs, found, lost) = (dir.join("p.csv"), dir.join("f.csv"), dir.join("l.csv"));
    for (method, backend) in [
        ("auto", "cpu"),
        ("grid", "cpu"),
        ("sap", "gpu"),
        ("x", "gpu"),
    ] {
        let text = succeed_stdout(
            with_next_frame(
                verify(&first, &pairs).args(["--method", method, "--backend", backend]),
                &second,
                &found,
                &lost,
            ),
            &format!("{method} {backend}"),
        );
        assert_eq!(text.matches("verified: same pairs").count(), 2, "{text}");
        // The worlds counted without the shared objects (they were counted as one more).
        let file = std::fs::read_to_string(&first).unwrap();
        let own: std::collections::BTreeSet<&str> = file
            .lines()
            .skip(1)
            .filter_map(|l| l.rsplit(',').next())
            .filter(|w| *w != "shared")
            .collect();
        let said = format!("{} worlds and shared objects, ", own.len());
        assert!(text.contains(&said), "{said}: {text}");
        // Grouped by world (ascending, SHARED last), canonical inside each.
        assert_eq!(read_world_pairs(&pairs), expected, "{method} {backend}");
        let before: std::collections::BTreeSet<_> = expected.iter().copied().collect();
        let after: std::collections::BTreeSet<_> = expected_next.iter().copied().collect();
        let want_found: Vec<_> = after.difference(&before).copied().collect();
        let want_lost: Vec<_> = before.difference(&after).copied().collect();
        assert!(!want_found.is_empty() && !want_lost.is_empty());
        assert_eq!(read_world_pairs(&found), want_found, "{method} {backend}");
        assert_eq!(read_world_pairs(&lost), want_lost, "{method} {backend}");
    }
    // Bad world ids name the line and the column; what is not built is refused.
    for (line, words) in [
        ("1,2,3,1,-4", "world = `-4`"),
        ("1,2,3,1,4294967295", "world = `4294967295`"),
        ("1,2,3,1,sky", "world = `sky`"),
        ("1,2,3,1", "expected 5 fields"),
    ] {
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, format!("x,y,z,r,world\n0,0,0,1,0\n{line}\n")).unwrap();
        let err = exits_2_naming(&mut verify(&bad, &pairs), words);
        assert!(err.contains("line 3"), "{line}: {err}");
    }
    // Every method batches on the GPU: min_axis's pairs there pass the same check.
    succeed_stdout(
        verify(&first, &pairs).args(["--method", "min_axis", "--backend", "gpu"]),
        "min_axis on the GPU",
    );
    // Contacts with a world column are refused, naming the flag.
    exits_2_naming(
        verify(&first, &pairs).args(["--contacts-out", "-"]),
        "--contacts-out",
    );
}

/// A world past brute force's size (3,002 objects) holding two giants a trillion times the
/// others' radius: `verify` writes the exact pairs and verifies them with every method. Its
/// reference there was the CPU grid alone, which then missed the giants' pairs and verified
/// against itself; now two methods must agree, brute force deciding where they do not.
#[test]
fn verify_checks_large_worlds_against_methods_that_agree() {
    let dir = crate::common::temp_dir("worlds", "large");
    let mut state = 5u64;
    let mut next = || {
        let u = (sweepfan_scenes::random::lcg_next(&mut state) >> 40) as f32;
        u / (1u64 << 24) as f32 * 2.4 - 1.2
    };
    let mut spheres = vec![([0.3f32, 0.2, 0.1], 1e9f32), ([-0.4, 0.1, 0.2], 1e9)];
    spheres.extend((0..3000).map(|_| ([next(), next(), next()], 1e-3f32)));
    let mut text = String::from("x,y,z,r,world\n");
    for (c, r) in &spheres {
        text += &format!("{},{},{},{r},3\n", c[0], c[1], c[2]);
    }
    let file = dir.join("giants.csv");
    std::fs::write(&file, text).unwrap();
    // Exact in f64: differences of f32 values and their squares are.
    let mut expected = Vec::new();
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            let ((a, ra), (b, rb)) = (spheres[i], spheres[j]);
            let d: f64 = (0..3)
                .map(|k| (f64::from(a[k]) - f64::from(b[k])).powi(2))
                .sum();
            if d <= (f64::from(ra) + f64::from(rb)).powi(2) {
                expected.push((3, i as u32, j as u32));
            }
        }
    }
    assert!(expected.len() > 6000, "{}", expected.len());
    let pairs = dir.join("p.csv");
    for method in ["auto", "grid", "sap"] {
        let text = succeed_stdout(verify(&file, &pairs).args(["--method", method]), method);
        assert!(text.contains("verified: same pairs"), "{method}: {text}");
        assert_eq!(read_world_pairs(&pairs), expected, "{method}");
    }
    // A next frame that cannot be used fails before any pair is written.
    let [(first, _), _] = world_files(&dir);
    let short = dir.join("short.csv");
    std::fs::write(&short, "x,y,z,r,world\n0,0,0,1,0\n").unwrap();
    let unwritten = dir.join("unwritten.csv");
    exits_2_naming(
        with_next_frame(
            &mut verify(&first, &unwritten),
            &short,
            &dir.join("f.csv"),
            &dir.join("l.csv"),
        ),
        "--next-scene-file",
    );
    assert!(!unwritten.exists(), "nothing written before the error");
}

/// `--methods all` under `--worlds` runs every method once (a method named twice runs once);
/// a peer library, which takes no worlds, is refused by name.
#[test]
fn bench_worlds_takes_every_method_once() {
    let (_, rows) = bench_rows(
        "all",
        "--worlds 3 --n 12 --frames 1 --methods sap,all --backend cpu",
    );
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    let all: Vec<&str> = ::sweepfan::Method::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(names.len(), all.len(), "{names:?}");
    assert_eq!(names[0], "sap");
    assert!(all.iter().all(|m| names.contains(m)), "{names:?}");
    assert!(rows.iter().all(|r| r["verified"] == true));
    exits_2_naming(
        sweepfan().args([
            "bench",
            "--worlds",
            "3",
            "--n",
            "12",
            "--methods",
            "peer-parry",
        ]),
        "peer-parry",
    );
}
