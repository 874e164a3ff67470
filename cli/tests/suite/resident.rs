//! `bench --resident` (docs/design.md §10): the scene uploaded once, moved on the device, read
//! there by the broad phase.

use crate::common::{bench_rows, exits_2, fails_naming, sweepfan};

/// Resident frames find what host-fed frames find, frame by frame (the device moves the scene
/// as the CPU does, bit for bit, so both see the same spheres), are verified on the device's own
/// spheres, and upload nothing per frame.
#[test]
fn resident_frames_equal_host_frames_and_upload_nothing() {
    let run = |resident: bool| {
        let mut args = vec![
            "--scene",
            "density",
            "--n",
            "30000",
            "--methods",
            "grid,sap,auto",
            "--backend",
            "gpu",
            "--frames",
            "6",
        ];
        args.extend(resident.then_some("--resident"));
        bench_rows(&args)
    };
    let (host, resident) = (run(false), run(true));
    assert_eq!(resident.len(), 3);
    for (h, r) in host.iter().zip(&resident) {
        assert_eq!(h["method"], r["method"]);
        assert_eq!(r["verified"], true, "{r}");
        for field in ["tests_per_frame", "pairs_per_frame"] {
            assert_eq!(h[field], r[field], "{field}: host {h}\nresident {r}");
        }
        assert!(r["pairs_per_frame"].as_f64().unwrap() > 0.0, "{r}");
        // Per frame the host sends only parameters, never the spheres (16 bytes each).
        let sent = r["bytes_from_host_per_frame"].as_f64().unwrap();
        assert!(
            sent < 16.0 * 30000.0 / 8.0,
            "{sent} bytes from the host: {r}"
        );
        assert!(h["bytes_from_host_per_frame"].as_f64().unwrap() >= 16.0 * 30000.0);
        assert!(r["device"].as_str().unwrap().ends_with("(resident)"), "{r}");
        assert!(r["host_ms"]["wait"].as_f64().is_some(), "{r}");
    }
    assert_eq!(resident[2]["chosen"]["method"], host[2]["chosen"]["method"]);
}

/// What `--resident` cannot do is refused, naming it.
#[test]
fn resident_refuses_what_it_would_ignore() {
    fails_naming(&["bench", "--resident"], "--backend gpu");
    fails_naming(
        &["bench", "--resident", "--backend", "both"],
        "--backend gpu",
    );
    fails_naming(
        &["bench", "--resident", "--backend", "gpu", "--count-only"],
        "--count-only",
    );
    fails_naming(
        &["bench", "--resident", "--backend", "gpu", "--events"],
        "--events",
    );
    fails_naming(
        &["bench", "--resident", "--backend", "gpu", "--shape", "obb"],
        "sphere scenes only",
    );
    fails_naming(
        &[
            "--adapters",
            "0,0",
            "bench",
            "--resident",
            "--backend",
            "gpu",
        ],
        "--adapters",
    );
    // One line, words apart by one space (a broken string continuation printed 22).
    let stderr =
        exits_2(sweepfan().args(["bench", "--resident", "--backend", "gpu", "--count-only"]));
    assert!(!stderr.trim_end().contains("  "), "{stderr}");
}
