//! `sweepfan reproduce sector` as a user runs it: exit codes, the JSON contract, the plots, and
//! the CPU and GPU backends agreeing.

use crate::common::{exits_2_naming, sweepfan, temp_dir};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const METHODS: [&str; 5] = [
    "speculative",
    "speculative_endpoints",
    "sector",
    "conservative_sector",
    "exact_sweep",
];

/// Runs a small reproduction (200 rotations, one timed run per speed row).
fn reproduce(backend: &str, dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweepfan"))
        .args([
            "reproduce",
            "sector",
            "--rotations",
            "200",
            "--speed-runs",
            "1",
        ])
        .args(["--seed", "9", "--backend", backend, "--json"])
        .arg(dir.join("report.json"))
        .arg("--plots")
        .arg(dir.join("plots"))
        .output()
        .unwrap()
}

fn no_gpu_expected() -> bool {
    std::env::var("SWEEPFAN_NO_GPU").is_ok_and(|v| v == "1")
}

/// Checks the JSON contract and the scores against what the definitions imply (docs/design.md §5.5).
fn check_report(dir: &Path) -> Value {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(doc["rotations"], 200);
    let methods = doc["methods"].as_object().unwrap();
    assert_eq!(methods.len(), 5);
    for name in METHODS {
        let m = &methods[name];
        let (a, o, u) = (
            m["accuracy"].as_f64().unwrap(),
            m["over"].as_f64().unwrap(),
            m["under"].as_f64().unwrap(),
        );
        // Each rotation's three shares partition |ref | method|, so their means sum to 100.
        assert!((a + o + u - 100.0).abs() < 1e-6, "{name}: {a} {o} {u}");
        assert!(m["under_points"].as_u64().is_some(), "{name}");
    }
    // An enclosing shape never misses a reference point.
    assert_eq!(methods["conservative_sector"]["under_points"], 0);
    // docs/design.md §5.5's Monte Carlo of the protocol (not this code): sector 67.0 %, conservative
    // 88.3 %; 200 rotations give a standard error near 1.5 points.
    let acc = |n: &str| methods[n]["accuracy"].as_f64().unwrap();
    assert!((acc("sector") - 67.0).abs() < 6.0, "{}", acc("sector"));
    assert!(
        (acc("conservative_sector") - 88.3).abs() < 4.0,
        "{}",
        acc("conservative_sector")
    );
    assert_eq!(doc["angle_bins"].as_array().unwrap().len(), 36);
    assert_eq!(doc["shape_bins"].as_array().unwrap().len(), 20);
    for table in [
        "table_2d",
        "table_3d",
        "ccd_transform_and_test",
        "ccd_construction",
        "ccd_total",
    ] {
        assert!(
            !doc["speed"][table].as_array().unwrap().is_empty(),
            "{table}"
        );
    }
    assert!(doc["failures"].as_array().unwrap().is_empty());
    for kind in ["angle", "shape"] {
        for metric in ["accuracy", "over", "under"] {
            let path = dir
                .join("plots")
                .join(format!("sector_{kind}_{metric}.svg"));
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.starts_with("<svg"), "{}", path.display());
            for name in METHODS {
                assert!(svg.contains(name), "{} lacks {name}", path.display());
            }
        }
    }
    doc
}

#[test]
fn cpu_and_gpu_reproductions_agree() {
    let cpu_dir = temp_dir("sector", "cpu");
    let out = reproduce("cpu", &cpu_dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for title in [
        "Table 3.1",
        "Table 3.2",
        "Table 3.6",
        "groups",
        "throughput",
    ] {
        assert!(stdout.contains(title), "stdout lacks {title}");
    }
    let cpu = check_report(&cpu_dir);

    let gpu_dir = temp_dir("sector", "gpu");
    let out = reproduce("gpu", &gpu_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if no_gpu_expected() {
        // No adapter: a clear error, not a silent CPU run.
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.to_lowercase().contains("adapter"), "{stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let gpu = check_report(&gpu_dir);
    for name in METHODS {
        for key in ["accuracy", "over", "under"] {
            let (c, g) = (
                cpu["methods"][name][key].as_f64().unwrap(),
                gpu["methods"][name][key].as_f64().unwrap(),
            );
            assert!((c - g).abs() < 0.01, "{name}.{key}: cpu {c} gpu {g}");
        }
    }
    let throughput = gpu["throughput"].as_array().unwrap();
    assert_eq!(throughput.len(), 2);
    let device = throughput[1]["device"].as_str().unwrap();
    if throughput[1]["kind"] == "software" {
        assert!(device.contains("software: not GPU times"), "{device}");
    }
    assert_eq!(throughput[1]["disagreements"], 0);
}

#[test]
fn bad_sizes_are_clear_errors() {
    for args in [
        ["--rotations", "0", "--speed-runs", "1"],
        ["--rotations", "5", "--speed-runs", "0"],
    ] {
        exits_2_naming(
            sweepfan()
                .args(["reproduce", "sector", "--backend", "cpu"])
                .args(args),
            "must be at least 1",
        );
    }
}

#[test]
fn gpu_backend_without_that_adapter_is_a_clear_error() {
    exits_2_naming(
        sweepfan()
            .args([
                "--adapter",
                "no-such-adapter-anywhere",
                "reproduce",
                "sector",
            ])
            .args(["--rotations", "3", "--speed-runs", "1", "--backend", "gpu"]),
        "no GPU adapter",
    );
}

/// `--pose free`: the JSON contract per body, CPU and GPU agreeing, and nothing missed.
#[test]
fn free_pose_reports_every_body_and_the_backends_agree() {
    for body in ["box", "capsule", "cylinder", "hull"] {
        let run = |backend: &str| {
            let dir = temp_dir("sector_free", &format!("{body}_{backend}"));
            let out = Command::new(env!("CARGO_BIN_EXE_sweepfan"))
                .args(["reproduce", "sector", "--pose", "free", "--body", body])
                .args(["--rotations", "6", "--seed", "4", "--backend", backend])
                .arg("--json")
                .arg(dir.join("free.json"))
                .output()
                .unwrap();
            (out, dir)
        };
        let (out, dir) = run("cpu");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{body}: {stdout}");
        assert!(stdout.contains(&format!("body {body}")), "{stdout}");
        let read = |dir: &Path| -> Value {
            serde_json::from_str(&std::fs::read_to_string(dir.join("free.json")).unwrap()).unwrap()
        };
        let cpu = read(&dir);
        assert_eq!(cpu["pose"], "free");
        assert_eq!(cpu["body"], body);
        for name in ["piece_union", "conservative_sector", "exact_sweep"] {
            assert_eq!(cpu["methods"][name]["under_points"], 0, "{body} {name}");
        }
        assert!(
            cpu["methods"].get("sector").is_none(),
            "thesis sector outside its pose"
        );
        let (out, dir) = run("gpu");
        if no_gpu_expected() {
            assert_eq!(out.status.code(), Some(2));
            continue;
        }
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let gpu = read(&dir);
        for name in [
            "speculative",
            "piece_union",
            "conservative_sector",
            "exact_sweep",
        ] {
            let (c, g) = (
                cpu["methods"][name]["accuracy"].as_f64().unwrap(),
                gpu["methods"][name]["accuracy"].as_f64().unwrap(),
            );
            assert!((c - g).abs() < 0.01, "{body} {name}: cpu {c} gpu {g}");
        }
    }
}

#[test]
fn pose_and_body_misuse_are_clear_errors() {
    for (args, text) in [
        (
            vec!["reproduce", "sector", "--body", "hull", "--rotations", "2"],
            "defined for a box only",
        ),
        (
            vec!["reproduce", "sector", "--pose", "free", "--plots", "/tmp/x"],
            "--plots",
        ),
        (
            vec!["reproduce", "sector", "--pose", "free", "--rotations", "0"],
            "at least 1",
        ),
        (vec!["bench", "--body", "capsule", "--n", "100"], "--body"),
    ] {
        exits_2_naming(sweepfan().args(&args), text);
    }
}
