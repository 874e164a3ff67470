//! `bench --worlds`: a batch of worlds beside the loop of one call a world, verified, with the
//! loop's time and the ratio; the options it cannot honour refused.

use crate::common::sweepfan;

#[test]
fn bench_worlds_prints_verified_rows_beside_the_loop() {
    let dir = crate::common::temp_dir("worlds", "bench");
    let json = dir.join("rows.json");
    let out = sweepfan()
        .args(["bench", "--worlds", "300", "--n", "40", "--frames", "2"])
        .args(["--methods", "auto,grid,sap,x", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
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
        let out = sweepfan()
            .args(["bench", "--worlds", "4", "--n", "10"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(words), "{args:?}: {err}");
    }
}

#[test]
fn bench_worlds_on_both_backends_verifies_the_gpu_rows() {
    let dir = crate::common::temp_dir("worlds", "both");
    let json = dir.join("rows.json");
    let out = sweepfan()
        .args(["bench", "--worlds", "200", "--n", "30", "--frames", "1"])
        .args([
            "--methods",
            "auto,grid,brute_force",
            "--backend",
            "both",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let gpu: Vec<_> = rows.iter().filter(|r| r["backend"] == "gpu").collect();
    let methods: Vec<_> = gpu.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["auto", "brute_force"], "{rows:?}");
    assert_eq!(rows.len(), 5, "three CPU rows and two GPU rows: {rows:?}");
    let pairs = rows[0]["pairs"].as_u64().unwrap();
    for r in &rows {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["pairs"].as_u64(), Some(pairs), "{r}");
    }
    // The method the GPU does not batch yet is said, not dropped silently.
    assert!(
        err.contains("gpu grid: not batched on the GPU yet"),
        "{err}"
    );
}
