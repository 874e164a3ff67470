//! Every option validated the same way in every subcommand, and messages that render (issue 28,
//! items 3 and 5): zero, negative, non-finite and unknown values end with exit 2 naming the flag
//! and the range accepted; options a scene or shape would ignore are refused; `--n` accepts what
//! its help shows; echoed input carries no raw control bytes; a bad polygon says what is wrong
//! and where; `info` without an adapter is an error.

use crate::common::{
    exits_2, exits_2_naming, json_rows, refused_before_running, succeed, sweepfan, temp_dir,
    two_spheres,
};

/// Runs `sweepfan ARGS`, which must end with exit 2; its stderr.
fn refused(args: &[&str]) -> String {
    exits_2(sweepfan().args(args))
}

/// Runs `sweepfan ARGS`, which must be refused naming `flag` and every text of `words`.
fn refused_naming(args: &[&str], flag: &str, words: &[&str]) -> String {
    let stderr = refused(args);
    assert!(stderr.contains(flag), "{args:?} must name {flag}: {stderr}");
    for w in words {
        assert!(stderr.contains(w), "{args:?} must say {w:?}: {stderr}");
    }
    stderr
}

/// The reason clap gives after "invalid value 'V' for '--flag <FLAG>': ".
fn reason(stderr: &str) -> &str {
    let line = stderr
        .lines()
        .find(|l| l.contains("invalid value"))
        .unwrap_or(stderr);
    line.split_once("' for '")
        .and_then(|(_, rest)| rest.split_once("': "))
        .map_or(line, |(_, r)| r)
}

#[test]
fn zero_frames_are_refused_not_run_as_one() {
    for flag in ["--frames-count", "--frames-time"] {
        refused_naming(
            &["reproduce", "broadphase", flag, "0", "--n", "50"],
            flag,
            &["at least 1"],
        );
    }
}

/// Every count flag, in every subcommand, refuses 0, negatives, fractions and words with the
/// same words.
#[test]
fn counts_follow_one_rule_in_every_subcommand() {
    let cases: [(&[&str], &str); 12] = [
        (&["bench"], "--frames"),
        (&["bench"], "--n"),
        (&["bench", "--scene", "rotating"], "--boxes"),
        (&["stress", "--backend", "cpu"], "--frames"),
        (&["stress", "--backend", "cpu"], "--start-n"),
        (&["stress", "--backend", "cpu"], "--max-n"),
        (&["reproduce", "broadphase"], "--frames-time"),
        (&["reproduce", "broadphase"], "--frames-count"),
        (&["reproduce", "broadphase"], "--n"),
        (&["reproduce", "sector"], "--rotations"),
        (&["reproduce", "sector"], "--speed-runs"),
        (&["sort-bench"], "--reps"),
    ];
    let mut reasons_for_zero = Vec::new();
    for (command, flag) in cases {
        for (value, why) in [
            ("0", "must be"),
            ("-1", "is negative"),
            ("1.5", "is not a whole number"),
            ("NaN", "is NaN"),
            ("many", "is not a number"),
        ] {
            let args: Vec<&str> = command.iter().copied().chain([flag, value]).collect();
            let stderr = refused_naming(&args, flag, &[why, "at least 1"]);
            assert!(!stderr.contains("panicked"), "{stderr}");
            if value == "0" {
                reasons_for_zero.push((flag, reason(&stderr).to_string()));
            }
        }
    }
    // The same words for the same kind of value, whatever the subcommand: object counts name
    // the empty scene, the other counts do not.
    for (flag, r) in &reasons_for_zero {
        let objects = ["--n", "--boxes", "--start-n", "--max-n"].contains(flag);
        let expected = if objects {
            "must be at least 1 (an empty scene has nothing to test)"
        } else {
            "must be at least 1"
        };
        assert_eq!(r, expected, "{flag}");
    }
    for value in ["0", "2000", "-1", "x"] {
        refused_naming(
            &["bench", "--threads", value],
            "--threads",
            &["must be in 1..=1024"],
        );
    }
}

#[test]
fn reals_are_positive_finite_and_in_range() {
    for value in ["0", "-1", "NaN", "inf", "1e39", "1e-50"] {
        let arg = format!("--radius={value}");
        refused_naming(
            &["bench", "--scene", "density", &arg],
            "--radius",
            &["above 0"],
        );
    }
    for value in ["0", "-1", "NaN", "inf"] {
        let arg = format!("--budget-s={value}");
        refused_naming(
            &["stress", "--backend", "cpu", &arg],
            "--budget-s",
            &["above 0"],
        );
    }
    // A negative number after a space is the flag's value (refused as negative), not an
    // unknown flag.
    refused_naming(
        &["bench", "--scene", "density", "--radius", "-1"],
        "--radius",
        &["is negative"],
    );
    // stress shares bench's volume-fraction rule. Bounded so that a build that accepts it
    // finishes quickly (and fails this test) instead of running for minutes.
    for value in ["1e30", "0.75", "0", "-0.5", "NaN"] {
        let arg = format!("--volume-fraction={value}");
        let stress = refused_naming(
            &[
                "stress",
                "--backend",
                "cpu",
                "--method",
                "grid",
                "--start-n",
                "100",
                "--max-n",
                "100",
                "--frames",
                "1",
                "--budget-s",
                "5",
                &arg,
            ],
            "--volume-fraction",
            &["(0, 0.74)"],
        );
        let bench = refused_naming(
            &["bench", "--scene", "density", "--n", "100", &arg],
            "--volume-fraction",
            &["(0, 0.74)"],
        );
        assert_eq!(reason(&stress), reason(&bench), "{value}");
    }
    let dir = temp_dir("options", "shaders");
    let out = dir.join("wgsl");
    let out = out.to_str().unwrap();
    for value in ["3", "0", "256", "-4"] {
        let arg = format!("--subgroup-size={value}");
        refused_naming(
            &["shaders", "--out", out, &arg],
            "--subgroup-size",
            &["power of two in 4..=128"],
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `verify --shape obb|polygon --method M`: the shape pipelines run `sap` only; any other name
/// is refused naming it, not replaced by a default.
#[test]
fn verify_methods_are_checked_for_the_shape() {
    let dir = temp_dir("options", "verify");
    let obb = dir.join("boxes.csv");
    std::fs::write(
        &obb,
        "cx,cy,cz,hx,hy,hz,qw,qx,qy,qz\n0,0,0,1,1,1,1,0,0,0\n1.5,0,0,1,1,1,1,0,0,0\n",
    )
    .unwrap();
    let polygons = dir.join("polygons.csv");
    std::fs::write(
        &polygons,
        "polygon,x,y\n0,0,0\n0,1,0\n0,0,1\n1,5,5\n1,6,5\n1,5,6\n",
    )
    .unwrap();
    let spheres = two_spheres(&dir);
    let pairs = dir.join("pairs.csv");
    let p = pairs.to_str().unwrap();
    for (shape, file) in [("obb", &obb), ("polygon", &polygons)] {
        let f = file.to_str().unwrap();
        for method in ["nosuch", "grid"] {
            let only_sap = format!("--shape {shape} runs one method, sap");
            let stderr = refused_naming(
                &[
                    "verify",
                    "--shape",
                    shape,
                    "--method",
                    method,
                    "--scene-file",
                    f,
                    "--pairs-out",
                    p,
                ],
                &format!("--method {method}"),
                &[only_sap.as_str()],
            );
            assert!(
                !pairs.exists(),
                "{shape} {method}: nothing written: {stderr}"
            );
        }
        for extra in [&["--method", "sap"][..], &[]] {
            succeed(
                sweepfan()
                    .args([
                        "verify",
                        "--shape",
                        shape,
                        "--scene-file",
                        f,
                        "--pairs-out",
                        p,
                    ])
                    .args(extra)
                    .output(),
            );
        }
        std::fs::remove_file(&pairs).ok();
    }
    let s = spheres.to_str().unwrap();
    refused_naming(
        &[
            "verify",
            "--method",
            "nosuch",
            "--scene-file",
            s,
            "--pairs-out",
            p,
        ],
        "--method nosuch",
        &["sphere methods are", "grid", "sap"],
    );
    refused_naming(
        &["stress", "--backend", "cpu", "--method", "nosuch"],
        "--method nosuch",
        &["grid"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--radius`, `--volume-fraction`, `--boxes` and `--methods` where the run would ignore them
/// are refused, naming the flag and what uses it; left out, their defaults never are.
#[test]
fn options_a_scene_ignores_are_refused() {
    let quick = ["--n", "50", "--frames", "1"];
    let bench = |extra: &[&str]| -> Vec<String> {
        ["bench"]
            .iter()
            .chain(quick.iter())
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let run = |extra: &[&str], flag: &str, words: &[&str]| {
        let args = bench(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused_naming(&args, flag, words);
    };
    run(
        &["--scene", "paper", "--radius", "2"],
        "--radius",
        &[
            "the density, clusters, line-x and boulders scenes",
            "paper scene would ignore it",
        ],
    );
    run(
        &["--scene", "one-point", "--volume-fraction", "0.1"],
        "--volume-fraction",
        &["the density and clusters scenes", "one-point"],
    );
    run(
        &["--scene", "density", "--boxes", "5"],
        "--boxes",
        &["the rotating scene", "density scene would ignore it"],
    );
    run(
        &["--scene", "rotating", "--shape", "obb", "--boxes", "5"],
        "--boxes",
        &["--shape sphere only"],
    );
    run(
        &["--scene", "rotating", "--radius", "2"],
        "--radius",
        &["rotating scene would ignore it"],
    );
    run(
        &["--scene", "rotating", "--methods", "grid"],
        "--methods",
        &["proxies"],
    );
    for flag in ["--count-only", "--no-verify"] {
        run(
            &["--scene", "rotating", flag],
            flag,
            &["--scene rotating", "always verifies"],
        );
    }
    run(
        &["--shape", "obb", "--methods", "grid"],
        "--methods grid",
        &["--shape obb runs one method, sap"],
    );
    let dir = temp_dir("options", "ignored");
    let scene = two_spheres(&dir);
    refused_naming(
        &[
            "bench",
            "--scene-file",
            scene.to_str().unwrap(),
            "--boxes",
            "3",
        ],
        "--boxes",
        &["--scene-file"],
    );
    std::fs::remove_dir_all(&dir).ok();
    // Given where they are used, or left out: the run goes ahead.
    for extra in [
        &["--scene", "paper", "--methods", "grid"][..],
        &[
            "--scene",
            "density",
            "--radius",
            "2",
            "--volume-fraction",
            "0.05",
            "--methods",
            "grid",
        ],
        &["--scene", "line-x", "--radius", "0.5", "--methods", "sap"],
        &["--scene", "rotating", "--boxes", "5"],
        &["--shape", "obb", "--methods", "sap"],
        &["--shape", "polygon", "--scene", "clusters", "--radius", "2"],
    ] {
        succeed(sweepfan().args(bench(extra)).output());
    }
}

/// The help shows `--n`'s default comma-separated, and both that form and the space-separated
/// one are accepted; a size named twice is run once.
#[test]
fn reproduce_n_accepts_what_its_help_shows() {
    let help = succeed(
        sweepfan()
            .args(["reproduce", "broadphase", "--help"])
            .output(),
    );
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("[default: 50,200,500,1000,3000,5000]"),
        "{help}"
    );
    let dir = temp_dir("options", "reproduce_n");
    for (k, form) in [
        &["--n", "50,60"][..],
        &["--n", "50", "60"],
        &["--n", "50", "--n", "60"],
        // A size named twice runs once, where first named.
        &["--n", "50,60,50"],
    ]
    .iter()
    .enumerate()
    {
        let json = dir.join(format!("r{k}.json"));
        succeed(
            sweepfan()
                .args([
                    "reproduce",
                    "broadphase",
                    "--frames-time",
                    "1",
                    "--frames-count",
                    "1",
                ])
                .args(*form)
                .arg("--json")
                .arg(&json)
                .output(),
        );
        let ns: Vec<u64> = json_rows(&json)
            .iter()
            .map(|r| r["n"].as_u64().unwrap())
            .collect();
        let rows_a_size = ns.len() / 2;
        assert!(rows_a_size > 0, "{form:?}: {ns:?}");
        let want: Vec<u64> = [50, 60]
            .iter()
            .flat_map(|&n| std::iter::repeat_n(n, rows_a_size))
            .collect();
        assert_eq!(ns, want, "{form:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Scene files with control bytes: the message echoes them escaped, so a terminal shows it as
/// written (a bare CR would send the cursor back and hide the start of the line).
#[test]
fn echoed_input_is_escaped() {
    let dir = temp_dir("options", "echo");
    let pairs = dir.join("p.csv");
    let cases: [(&str, &[u8], &[&str]); 3] = [
        (
            "cr.csv",
            b"x,y,z,r\r0,0,0,1\r1,0,0,1\r",
            &["x,y,z,r\\r0,0,0,1", "bare carriage return (CR)"],
        ),
        (
            "nul.csv",
            b"x,y,z,r\n0,0\0,0,1\n",
            &["y = `0\\0` is not a number"],
        ),
        (
            "esc.csv",
            b"x,y,z,r\n0,\x1b[2J,0,1\n",
            &["y = `\\x1b[2J` is not a number"],
        ),
    ];
    for (name, bytes, words) in cases {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let out = sweepfan()
            .args(["verify", "--scene-file"])
            .arg(&file)
            .arg("--pairs-out")
            .arg(&pairs)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        for byte in [b'\r', b'\0', 0x1b] {
            assert!(
                !out.stderr.contains(&byte),
                "{name}: raw byte {byte:#x} in {:?}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        for w in words {
            assert!(stderr.contains(w), "{name}: {w:?} in {stderr}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A bow-tie is self-intersecting (not "collinear"), and the message names the polygon, the
/// crossing edges and their lines; the other faults are named as what they are.
#[test]
fn polygon_errors_say_what_and_where() {
    let dir = temp_dir("options", "polygons");
    let pairs = dir.join("p.csv");
    let triangle = "0,0,0\n0,1,0\n0,0,1\n";
    let cases = [
        (
            "1,0,0\n1,1,1\n1,1,0\n1,0,1\n",
            "line 5: polygon 1 (lines 5-8): self-intersecting: the edge from vertex 0 (line 5) to \
             vertex 1 (line 6) crosses the edge from vertex 2 (line 7) to vertex 3 (line 8)",
        ),
        (
            "1,0,0\n1,1,1\n1,2,2\n",
            "polygon 1 (lines 5-7): collinear: all 3 vertices lie on one line",
        ),
        (
            "1,0,0\n1,2,0\n1,0.5,0.5\n1,0,2\n",
            "polygon 1 (lines 5-8): not convex: the boundary turns the wrong way at vertex 2 \
             (line 7)",
        ),
        (
            "1,0,0\n1,1,0\n",
            "polygon 1 (lines 5-6): fewer than 3 vertices",
        ),
    ];
    for (k, (second, expected)) in cases.iter().enumerate() {
        let file = dir.join(format!("poly{k}.csv"));
        std::fs::write(&file, format!("polygon,x,y\n{triangle}{second}")).unwrap();
        let stderr = exits_2_naming(
            sweepfan()
                .args(["verify", "--shape", "polygon", "--scene-file"])
                .arg(&file)
                .arg("--pairs-out")
                .arg(&pairs),
            expected,
        );
        if k == 0 {
            assert!(!stderr.contains("collinear"), "{stderr}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `sweepfan info` on a machine with no adapter: exit 2 and the message, nothing on stdout (a
/// script asking whether a GPU is there reads the exit status). An empty Vulkan driver list
/// stands for such a machine.
#[test]
fn info_without_an_adapter_is_an_error() {
    if !cfg!(target_os = "linux") {
        return;
    }
    refused_before_running(
        sweepfan()
            .arg("info")
            .env("VK_ICD_FILENAMES", "/nonexistent.json")
            .env("VK_DRIVER_FILES", "/nonexistent.json")
            .env("WGPU_BACKEND", "vulkan"),
        "no GPU adapter found",
    );
}

/// The tool maps SWEEPFAN_SLOPPY_MATH onto the context's options (the library reads no
/// variable): `info` on a context opened under it says its math is sloppy, and without it
/// (or with `0`) says nothing of the kind.
#[test]
fn the_sloppy_math_switch_reaches_the_context_through_the_tool() {
    if crate::common::test_gpu().is_none() {
        return;
    }
    let info = |value: Option<&str>| {
        let mut cmd = sweepfan();
        cmd.arg("info").env_remove("SWEEPFAN_SLOPPY_MATH");
        if let Some(v) = value {
            cmd.env("SWEEPFAN_SLOPPY_MATH", v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).contains("math: sloppy")
    };
    assert!(info(Some("1")));
    assert!(!info(Some("0")));
    assert!(!info(None));
}
