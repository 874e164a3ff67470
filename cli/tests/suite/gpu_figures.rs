//! `scripts/gpu-figures.sh --small` (every real-GPU figure, at tiny sizes) runs on this adapter
//! and leaves what a GPU run brings back: every GPU row with one host wait per frame, the
//! traffic model on the sphere rows, verified sorts. And `sort-bench` on its own.

use crate::common::{exits_2_naming, json_rows, succeed, sweepfan, temp_dir};

#[test]
#[ignore = "slow (1-4 min on 2 cores): scripts/test.sh --slow runs it, and CI"]
fn the_figures_script_runs_at_small_sizes() {
    if std::env::var(sweepfan::gpu::NO_GPU_ENV).is_ok_and(|v| v == "1") {
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
    exits_2_naming(
        sweepfan().args(["sort-bench", "--sizes", "1M,zero"]),
        "'zero'",
    );
}

/// `scripts/speed_vs_anchor.py` on figures made up here: each ratio is ours over the peer's
/// from the same call, the device time sums only the timestamped stages, and the targets are
/// judged in their own direction.
#[test]
fn speed_vs_anchor_pairs_our_figures_with_the_peers() {
    let dir = temp_dir("figures", "anchor");
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(dir.join(name), v.to_string()).unwrap();
    };
    write(
        "anchor.json",
        serde_json::json!({
            "device": "made up",
            "grid": [{"n": 1000, "ms_per_frame": 2.0}, {"n": 5000, "ms_per_frame": 1.0}],
            "sort": [{"n": 4096, "gpairs_per_s": 10.0}],
            "h2d": [{"n": 1000, "pinned_ms": 0.5}],
        }),
    );
    write(
        "radix_sort_ours.json",
        serde_json::json!({"rows": [
            {"n": 4096, "config": "plan", "gpairs_per_s": 6.0, "verified": true},
            {"n": 4096, "config": "portable", "gpairs_per_s": 9.0, "verified": true},
        ]}),
    );
    write(
        "frame_grid_1000.json",
        serde_json::json!({"rows": [{
            "method": "grid", "backend": "gpu", "ms_per_frame": 4.0,
            "stage_ms": {"keys (gpu)": 0.5, "sort (gpu)": 0.7, "upload (host)": 1.0},
        }]}),
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/speed_vs_anchor.py");
    succeed(
        std::process::Command::new("python3")
            .arg(script)
            .arg(&dir)
            .output(),
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("speed_vs_anchor.json")).unwrap())
            .unwrap();
    let rows = doc["rows"].as_array().unwrap();
    // (measure, n, ours, peer, ratio, meets): 6 / 10; (0.5 + 0.7) / 2; 4 / (0.5 + 2).
    let want = [
        ("sort_gpairs_per_s", 4096, 6.0, 10.0, 0.6, false),
        ("grid_device_ms", 1000, 1.2, 2.0, 0.6, true),
        ("grid_end_to_end_ms", 1000, 4.0, 2.5, 1.6, false),
    ];
    assert_eq!(rows.len(), want.len(), "{doc}");
    for (r, (measure, n, ours, peer, ratio, meets)) in rows.iter().zip(want) {
        assert_eq!(r["measure"], measure);
        assert_eq!(r["n"], n);
        for (key, v) in [("ours", ours), ("peer", peer), ("ratio", ratio)] {
            assert!((r[key].as_f64().unwrap() - v).abs() < 1e-9, "{key}: {r}");
        }
        assert_eq!(r["meets"], meets, "{r}");
    }
    // Nothing to pair: an error, no file.
    std::fs::remove_file(dir.join("speed_vs_anchor.json")).unwrap();
    std::fs::remove_file(dir.join("radix_sort_ours.json")).unwrap();
    std::fs::remove_file(dir.join("frame_grid_1000.json")).unwrap();
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.join("speed_vs_anchor.json").exists());
    std::fs::remove_dir_all(&dir).ok();
}
