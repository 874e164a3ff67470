//! The command line as a user drives it: file contracts, exit codes, error messages.

use crate::common::{
    bench_rows, bench_shape_rows, exits_2, fails_naming, json_rows, succeed, sweepfan, temp_dir,
};

/// Independent oracle: all pairs by the definition, in f64.
fn brute_pairs(spheres: &[[f64; 4]]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..spheres.len() {
        for j in i + 1..spheres.len() {
            let (a, b) = (spheres[i], spheres[j]);
            let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
            if d2 <= (a[3] + b[3]).powi(2) {
                out.push((i, j));
            }
        }
    }
    out
}

#[test]
fn verify_writes_the_canonical_pair_file() {
    let dir = temp_dir("cli", "verify");
    // Integer coordinates: exactly touching pairs are exact in f32 and f64 alike.
    let mut spheres = Vec::new();
    let mut text = String::from("x,y,z,r\n");
    let mut state = 12345u64;
    for _ in 0..400 {
        let mut next = |m: u64| ((sweepfan_scenes::random::lcg_next(&mut state) >> 33) % m) as f64;
        let s = [next(40), next(40), next(40), 1.0 + next(3)];
        text += &format!("{},{},{},{}\n", s[0], s[1], s[2], s[3]);
        spheres.push(s);
    }
    let scene = dir.join("scene.csv");
    std::fs::write(&scene, text).unwrap();
    for method in ["sap", "grid", "xyz", "min_axis", "origin_distance"] {
        let out = dir.join(format!("{method}.csv"));
        let status = sweepfan()
            .args(["verify", "--scene-file"])
            .arg(&scene)
            .args(["--method", method, "--pairs-out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{method}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let written = std::fs::read_to_string(&out).unwrap();
        let mut lines = written.lines();
        assert_eq!(lines.next(), Some("i,j"));
        let got: Vec<(usize, usize)> = lines
            .map(|l| {
                let (a, b) = l.split_once(',').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect();
        let expected = brute_pairs(&spheres);
        assert!(expected.len() > 100, "scene should have many pairs");
        assert_eq!(got, expected, "{method}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A scene read from standard input, a pipe or a FIFO (read once, as a file is), and an empty
/// one of every kind (no pairs, a file of none, exit 0).
#[test]
fn verify_reads_pipes_and_empty_scenes() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = temp_dir("cli", "pipes");
    let text = "x,y,z,r\n0,0,0,0.5\n1,0,0,0.5\n5,5,5,1\n";
    let read_from_stdin = |scene: &str, input: &str| {
        let mut child = sweepfan()
            .args(["verify", "--scene-file", scene, "--pairs-out", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    for scene in ["-", "/dev/stdin"] {
        let out = read_from_stdin(scene, text);
        assert!(out.status.success(), "{scene}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "i,j\n0,1\n",
            "{scene}"
        );
    }
    let worlds = "x,y,z,r,world\n0,0,0,1,0\n1,0,0,1,1\n1.5,0,0,1,shared\n";
    let out = read_from_stdin("-", worlds);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "world,i,j\n0,0,2\n1,1,2\n"
    );
    // Standard input is read once: named as two inputs, refused before anything is read.
    let twice = sweepfan()
        .args(["verify", "--scene-file", "-", "--next-scene-file", "-"])
        .args(["--found-out", "/dev/null", "--lost-out", "/dev/null"])
        .args(["--pairs-out", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2));
    let err = String::from_utf8_lossy(&twice.stderr);
    assert!(
        err.contains("standard input (`-`) is given as two inputs"),
        "{err}"
    );
    let out = read_from_stdin("-", "a,b\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("standard input: line 1: header is `a,b`"),
        "{err}"
    );
    // A FIFO: opened and read once (a second open would wait for a writer that is gone).
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let fifo = dir.join("scene.fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
        };
        let pairs = dir.join("fifo-pairs.csv");
        succeed(
            sweepfan()
                .args(["verify", "--scene-file"])
                .arg(&fifo)
                .arg("--pairs-out")
                .arg(&pairs)
                .output(),
        );
        writer.join().unwrap();
        assert_eq!(std::fs::read_to_string(&pairs).unwrap(), "i,j\n0,1\n");
    }
    for (header, shape, pairs_header) in [
        ("x,y,z,r", "sphere", "i,j"),
        ("x,y,z,r,world", "sphere", "world,i,j"),
        ("cx,cy,cz,hx,hy,hz,qw,qx,qy,qz", "obb", "i,j"),
        ("polygon,x,y", "polygon", "i,j"),
    ] {
        let scene = dir.join("empty.csv");
        std::fs::write(&scene, format!("{header}\n")).unwrap();
        let pairs = dir.join("empty-pairs.csv");
        succeed(
            sweepfan()
                .args(["verify", "--shape", shape, "--scene-file"])
                .arg(&scene)
                .arg("--pairs-out")
                .arg(&pairs)
                .output(),
        );
        let written = std::fs::read_to_string(&pairs).unwrap();
        assert_eq!(written, format!("{pairs_header}\n"), "{header}");
    }
    // What times a scene still needs one.
    let scene = dir.join("empty.csv");
    std::fs::write(&scene, "x,y,z,r\n").unwrap();
    fails_naming(
        &["bench", "--scene-file", scene.to_str().unwrap()],
        "empty scene",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_scene_file_fails_with_line_and_problem() {
    let dir = temp_dir("cli", "bad");
    let cases = [
        ("x,y,z,r\n0,0,0,1\n1,2,zz,1\n", "line 3"),
        ("x,y,z,r\n0,0,0,-2\n", "negative"),
        ("x,y,z,r\n0,nan,0,1\n", "NaN"),
    ];
    for (k, (text, want)) in cases.iter().enumerate() {
        let scene = dir.join(format!("s{k}.csv"));
        std::fs::write(&scene, text).unwrap();
        let out = sweepfan()
            .args(["verify", "--scene-file"])
            .arg(&scene)
            .args(["--method", "sap", "--pairs-out"])
            .arg(dir.join("p.csv"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text:?} should fail");
        assert!(err.contains(want), "{text:?}: stderr was {err}");
    }
    fails_naming(
        &[
            "verify",
            "--scene-file",
            "/nonexistent/scene.csv",
            "--pairs-out",
            "/tmp/x.csv",
        ],
        "/nonexistent/scene.csv",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_writes_json_rows_with_the_stable_keys() {
    let dir = temp_dir("cli", "bench");
    let json = dir.join("rows.json");
    let csv = dir.join("rows.csv");
    succeed(
        sweepfan()
            .args(["bench", "--scene", "paper", "--n", "300", "--frames", "3"])
            .args(["--methods", "brute_force,sap,xyz", "--json"])
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .output(),
    );
    let rows = json_rows(&json);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        for key in [
            "n",
            "method",
            "backend",
            "tests_per_frame",
            "pairs_per_frame",
            "ms_per_frame",
        ] {
            assert!(!r[key].is_null(), "missing {key} in {r}");
        }
        assert_eq!(r["backend"], "cpu");
        assert_eq!(r["n"], 300);
        assert_eq!(r["verified"], true);
    }
    let brute = rows.iter().find(|r| r["method"] == "brute_force").unwrap();
    assert_eq!(brute["tests_per_frame"], 300.0 * 299.0 / 2.0);
    // Every method found the same pairs on every frame.
    let pairs: Vec<f64> = rows
        .iter()
        .map(|r| r["pairs_per_frame"].as_f64().unwrap())
        .collect();
    assert!(pairs.iter().all(|&p| p == pairs[0]), "{pairs:?}");
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 4);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_method_and_bad_parameters_are_clear_errors() {
    fails_naming(
        &["bench", "--methods", "quicksort", "--n", "10"],
        "unknown method 'quicksort'",
    );
    fails_naming(
        &[
            "bench",
            "--scene",
            "density",
            "--n",
            "0",
            "--methods",
            "sap",
        ],
        "empty scene",
    );
}

#[test]
fn gpu_backend_without_adapter_is_a_clear_error() {
    // WGPU_BACKEND=metal finds nothing on Linux/Windows: the same path as a machine with no GPU.
    let out = sweepfan()
        .env("WGPU_BACKEND", "metal")
        .args([
            "bench",
            "--backend",
            "gpu",
            "--n",
            "100",
            "--methods",
            "sap",
        ])
        .output()
        .unwrap();
    if cfg!(target_os = "macos") {
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no GPU adapter"), "{err}");
}

/// `bench --shape polygon`: rows carry `shape`, and their pair counts equal an all-pairs SAT of
/// the same seeded polygons computed here.
#[test]
fn bench_polygon_rows_match_all_pairs() {
    use sweepfan_scenes::{SceneKind, SceneParams};
    let rows = bench_shape_rows("polygon", "density", 1500);
    let polygons =
        sweepfan_scenes::boxes::generate_polygons(SceneKind::Density, &SceneParams::new(1500, 1))
            .unwrap();
    let mut expected = 0usize;
    for i in 0..polygons.len() {
        for j in i + 1..polygons.len() {
            expected += polygons[i].overlaps(&polygons[j]) as usize;
        }
    }
    assert!(expected > 100, "{expected}");
    for r in &rows {
        assert_eq!(r["pairs_per_frame"].as_f64().unwrap(), expected as f64);
        assert!(r["tests_per_frame"].as_f64().unwrap() >= expected as f64);
    }
}

/// GPU rows report the frame's synchronisation: one host wait per sphere frame, and the
/// dispatches; CPU rows carry neither.
#[test]
fn gpu_rows_report_host_waits_and_dispatches() {
    let rows = bench_rows(&[
        "--n",
        "500",
        "--frames",
        "2",
        "--methods",
        "grid,sap",
        "--backend",
        "both",
    ]);
    for r in rows {
        if r["backend"] == "gpu" {
            assert_eq!(r["host_waits_per_frame"], 1.0, "{r}");
            assert!(r["dispatches_per_frame"].as_f64().unwrap() >= 5.0, "{r}");
        } else {
            assert!(r.get("host_waits_per_frame").is_none(), "{r}");
        }
    }
}

/// `bench --threads N` runs the CPU methods on a pool of N threads and says so in each row;
/// 0 threads is a clear error.
#[test]
fn bench_threads_sets_the_pool() {
    let rows = bench_rows(&[
        "--n",
        "2000",
        "--methods",
        "grid,sap",
        "--frames",
        "2",
        "--threads",
        "1",
    ]);
    for r in rows {
        assert_eq!(r["device"], "cpu (1 threads)", "{r}");
    }
    exits_2(sweepfan().args(["bench", "--n", "100", "--threads", "0"]));
}

/// Without the `mpi` feature, `dist` exists and says how to get it (exit 2), after its
/// arguments are checked like any command's.
#[cfg(not(feature = "mpi"))]
#[test]
fn dist_without_mpi_says_how_to_build_it() {
    crate::common::exits_2_naming(
        sweepfan().args(["dist", "--scene", "paper", "--n", "100"]),
        "--features mpi",
    );
    fails_naming(&["dist", "--method", "nope"], "nope");
    fails_naming(&["dist", "--adapters", "all"], "--adapters");
}

/// `--adapters` spreads sphere frames over devices in parts; where a command runs on one device
/// (box, polygon and AABB frames, the rotating scene, the sort's bench) it is refused, exit 2
/// naming it, rather than a second device opened and left idle.
#[test]
fn adapters_are_refused_where_one_device_runs() {
    let dir = crate::common::temp_dir("cli", "adapters_one_device");
    let obb = dir.join("obb.csv");
    std::fs::write(&obb, "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n").unwrap();
    let obb = obb.to_str().unwrap();
    for args in [
        &["bench", "--backend", "gpu", "--shape", "obb", "--n", "100"][..],
        &[
            "bench",
            "--backend",
            "gpu",
            "--shape",
            "polygon",
            "--n",
            "100",
        ],
        &["bench", "--backend", "gpu", "--shape", "aabb", "--n", "100"],
        &[
            "bench",
            "--backend",
            "gpu",
            "--scene",
            "rotating",
            "--n",
            "100",
        ],
        &[
            "verify",
            "--backend",
            "gpu",
            "--shape",
            "obb",
            "--scene-file",
            obb,
            "--pairs-out",
            "-",
        ],
        &["sort-bench", "--sizes", "1000"],
    ] {
        let out = sweepfan()
            .args(["--adapters", "0,0"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--adapters"), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--json -` (and `--csv -`) leave standard output to the file alone, the human report going
/// to stderr, in every command that writes one (selftest, reproduce and shaders printed their
/// tables first).
#[test]
fn a_file_on_stdout_is_the_whole_of_stdout() {
    let one = ["--frames-time", "1", "--frames-count", "1"];
    let broadphase = ["reproduce", "broadphase", "--n", "50"];
    for args in [
        vec!["selftest", "--only", "sort", "--json", "-"],
        [&broadphase[..], &one, &["--json", "-"]].concat(),
        vec![
            "reproduce",
            "sector",
            "--rotations",
            "10",
            "--speed-runs",
            "1",
        ],
        vec!["shaders", "--compile-report", "--json", "-"],
    ] {
        let args = if args[1] == "sector" {
            [&args[..], &["--json", "-"]].concat()
        } else {
            args
        };
        let out = succeed(sweepfan().args(&args).output());
        let text = String::from_utf8_lossy(&out.stdout);
        let head = &text[..text.len().min(200)];
        serde_json::from_str::<serde_json::Value>(&text)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {head}"));
        assert!(!out.stderr.is_empty(), "{args:?}: no report on stderr");
    }
    let out = succeed(
        sweepfan()
            .args([&broadphase[..], &one, &["--csv", "-"]].concat())
            .output(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("scene,n,method,"),
        "{}",
        &text[..text.len().min(200)]
    );
}

/// Options a command would ignore are refused (exit 2, naming them): the device options of
/// `shaders --out` (no device opened), `--subgroup-size` and `--enable-subgroups` without
/// `--out`, `--adapter` on the free pose's CPU run; and an adapter named to the default
/// benchmark that does not open fails it rather than leaving the GPU columns out.
#[test]
fn ignored_options_and_missing_adapters_are_errors() {
    let dir = temp_dir("cli", "ignored_options");
    let out = dir.join("wgsl");
    let out = out.to_str().unwrap();
    for (args, names) in [
        (vec!["--adapter", "0", "shaders", "--out", out], "--adapter"),
        (
            vec!["--adapters", "0,0", "shaders", "--out", out],
            "--adapters",
        ),
        (
            vec!["--max-binding-bytes", "65536", "shaders", "--out", out],
            "--max-binding-bytes",
        ),
        (
            vec!["shaders", "--compile-report", "--subgroup-size", "64"],
            "--out",
        ),
        (
            vec!["shaders", "--compile-report", "--enable-subgroups"],
            "--out",
        ),
        (
            vec![
                "--adapter",
                "0",
                "reproduce",
                "sector",
                "--pose",
                "free",
                "--body",
                "capsule",
                "--rotations",
                "10",
            ],
            "--adapter",
        ),
        (vec!["--adapter", "no-such-adapter"], "no-such-adapter"),
    ] {
        let run = sweepfan().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The CSV tells rows apart as the JSON does: the reference each was checked against, the
/// shape, auto's chosen method, the events' totals (the CSV had none of them: an obb run's and
/// a sphere run's files differed only in names).
#[test]
fn bench_csv_keeps_what_tells_rows_apart() {
    let dir = temp_dir("cli", "bench-csv-columns");
    let read = |args: &[&str], name: &str| {
        let (json, csv) = (
            dir.join(format!("{name}.json")),
            dir.join(format!("{name}.csv")),
        );
        succeed(
            sweepfan()
                .arg("bench")
                .args(args)
                .arg("--json")
                .arg(&json)
                .arg("--csv")
                .arg(&csv)
                .output(),
        );
        let mut reader = csv::Reader::from_path(&csv).unwrap();
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        let records: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect();
        let rows: Vec<std::collections::HashMap<String, String>> = records
            .into_iter()
            .map(|r| header.iter().cloned().zip(r).collect())
            .collect();
        (json_rows(&json), rows)
    };
    let (json, rows) = read(
        &[
            "--scene",
            "paper",
            "--n",
            "300",
            "--frames",
            "3",
            "--methods",
            "auto,sap",
            "--events",
        ],
        "auto",
    );
    assert_eq!(rows.len(), 2);
    for (j, c) in json.iter().zip(&rows) {
        assert_eq!(c["method"], j["method"].as_str().unwrap());
        assert_eq!(c["shape"], "sphere");
        assert_eq!(
            c["verified_against"],
            j["verified_against"].as_str().unwrap()
        );
        assert_eq!(c["found"], j["found"].to_string(), "{c:?}");
        assert_eq!(c["lost"], j["lost"].to_string(), "{c:?}");
        assert!(j["found"].as_u64().unwrap() > 0, "{j}");
    }
    let auto = rows.iter().find(|r| r["method"] == "auto").unwrap();
    let chosen = json.iter().find(|r| r["method"] == "auto").unwrap()["chosen"]["method"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(auto["chosen"], chosen);
    assert_eq!(
        rows.iter().find(|r| r["method"] == "sap").unwrap()["chosen"],
        ""
    );
    let (_, boxes) = read(
        &[
            "--shape",
            "obb",
            "--n",
            "300",
            "--frames",
            "2",
            "--backend",
            "cpu",
        ],
        "obb",
    );
    assert!(!boxes.is_empty());
    assert!(boxes.iter().all(|r| r["shape"] == "obb"), "{boxes:?}");
    std::fs::remove_dir_all(&dir).ok();
}
