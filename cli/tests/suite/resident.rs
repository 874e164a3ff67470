//! `bench --resident` (docs/design.md §10): the scene uploaded once, moved on the device, read
//! there by the broad phase.

use crate::common::{bench_mode_refuses, exits_2, fails_naming, gpu_mode_rows, sweepfan};

/// Resident frames find what host-fed frames find, frame by frame (the device moves the scene
/// as the CPU does, bit for bit, so both see the same spheres), are verified on the device's own
/// spheres, and upload nothing per frame.
#[test]
fn resident_frames_equal_host_frames_and_upload_nothing() {
    let (host, resident) = gpu_mode_rows("6", "--resident", ("host", "resident"));
    for (h, r) in host.iter().zip(&resident) {
        // Per frame the host sends only parameters, never the spheres (16 bytes each).
        let sent = r["bytes_from_host_per_frame"].as_f64().unwrap();
        assert!(
            sent < 16.0 * 30000.0 / 8.0,
            "{sent} bytes from the host: {r}"
        );
        assert!(h["bytes_from_host_per_frame"].as_f64().unwrap() >= 16.0 * 30000.0);
    }
}

/// What `--resident` cannot do is refused, naming it.
#[test]
fn resident_refuses_what_it_would_ignore() {
    bench_mode_refuses(
        "--resident",
        &[
            (&[], "--backend gpu"),
            (&["--backend", "both"], "--backend gpu"),
            (&["--backend", "gpu", "--count-only"], "--count-only"),
            (&["--backend", "gpu", "--events"], "--events"),
            (
                &["--backend", "gpu", "--shape", "obb"],
                "sphere scenes only",
            ),
        ],
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
