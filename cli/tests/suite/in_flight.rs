//! `bench --in-flight` (docs/design.md §9.16, "Frames in flight"): two frames on the GPU at a
//! time, the next moved and uploaded while one runs.

use crate::common::{bench_mode_refuses, gpu_density_rows, gpu_mode_rows};

/// Frames in flight find what frames one at a time find, frame by frame (the same frames of
/// the same moving scene), are verified, and send each sphere up once a frame.
#[test]
fn frames_in_flight_equal_frames_one_at_a_time() {
    let (one, two) = gpu_mode_rows("5", "--in-flight", ("one at a time", "in flight"));
    for r in &two {
        let sent = r["bytes_from_host_per_frame"].as_f64().unwrap();
        let scene = 16.0 * 30000.0;
        assert!(
            (scene..scene + 8192.0).contains(&sent),
            "{sent} bytes from the host: {r}"
        );
    }
    // Counting only: the counts, verified.
    let counted = gpu_density_rows("5", &["--in-flight", "--count-only"]);
    for (h, r) in one.iter().zip(&counted) {
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(h["pairs_per_frame"], r["pairs_per_frame"], "{r}");
    }
}

/// What `--in-flight` cannot do is refused, naming it.
#[test]
fn in_flight_refuses_what_it_would_ignore() {
    bench_mode_refuses(
        "--in-flight",
        &[
            (&[], "--backend gpu"),
            (
                &["--backend", "gpu", "--shape", "obb"],
                "sphere scenes only",
            ),
            (&["--backend", "gpu", "--resident"], "--resident"),
            (&["--backend", "gpu", "--events"], "--events"),
        ],
    );
}
