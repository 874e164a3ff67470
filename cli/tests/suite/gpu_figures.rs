//! `scripts/gpu-figures.sh --small` (every real-GPU figure, at tiny sizes) runs on this adapter
//! and leaves what a GPU run brings back: every GPU row with one host wait per frame, the
//! traffic model on the sphere rows, verified sorts. And `sort-bench` on its own.

use crate::common::{json_rows, succeed, sweepfan, temp_dir};

#[test]
#[ignore = "slow (1-4 min on 2 cores): scripts/test.sh --slow runs it, and CI"]
fn the_figures_script_runs_at_small_sizes() {
    if std::env::var(sweepfan::gpu::context::NO_GPU_ENV).is_ok_and(|v| v == "1") {
        return;
    }
    let dir = temp_dir("figures", "small").join("figs");
    let out = succeed(
        std::process::Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/gpu-figures.sh"
        ))
        .arg(&dir)
        .arg("--small")
        .env("SWEEPFAN", env!("CARGO_BIN_EXE_sweepfan"))
        .output(),
    );
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(!log.contains("FAILED"), "{log}");
    assert!(dir.with_extension("tar.gz").exists());
    let commands = std::fs::read_to_string(dir.join("commands.txt")).unwrap();
    for name in [
        "stress_grid",
        "stress_sap",
        "radix_sort_ours",
        "sector_accuracy",
        "boxes_",
    ] {
        assert!(commands.contains(name), "{name} missing from {commands}");
    }
    for file in [
        "stress_grid",
        "stress_sap",
        "frame_grid_100000",
        "boxes_20000",
    ] {
        let rows = json_rows(&dir.join(format!("{file}.json")));
        assert!(!rows.is_empty(), "{file}");
        for r in &rows {
            assert_eq!(r["host_waits_per_frame"], 1.0, "{file}: {r}");
            assert!(r["dispatches_per_frame"].as_f64().unwrap() >= 2.0, "{file}");
            if file.starts_with("stress") {
                assert_eq!(r["verified"], true, "{file}: {r}");
            }
            if !file.starts_with("boxes") {
                let total = r["device_bytes_per_object"].as_f64().unwrap();
                let stages: f64 = r["device_traffic"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["bytes_per_object"].as_f64().unwrap())
                    .sum();
                assert!(
                    total >= 16.0 && (total - stages).abs() < 1e-6,
                    "{file}: {r}"
                );
            }
        }
    }
    for r in json_rows(&dir.join("radix_sort_ours.json")) {
        assert_eq!(r["verified"], true, "{r}");
    }
}

#[test]
fn sort_bench_rejects_bad_sizes() {
    let out = sweepfan()
        .args(["sort-bench", "--sizes", "1M,zero"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'zero'"));
}
