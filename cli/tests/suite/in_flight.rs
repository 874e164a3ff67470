//! `bench --in-flight` (docs/design.md §9.16, "Frames in flight"): two frames on the GPU at a
//! time, the next moved and uploaded while one runs.

use crate::common::{assert_same_frames, fails_naming, gpu_density_rows};

/// Frames in flight find what frames one at a time find, frame by frame (the same frames of
/// the same moving scene), are verified, and send each sphere up once a frame.
#[test]
fn frames_in_flight_equal_frames_one_at_a_time() {
    let (one, two) = (
        gpu_density_rows("5", &[]),
        gpu_density_rows("5", &["--in-flight"]),
    );
    assert_eq!(two.len(), 3);
    for (h, r) in one.iter().zip(&two) {
        assert_same_frames(h, r, ("one at a time", "in flight"));
        let sent = r["bytes_from_host_per_frame"].as_f64().unwrap();
        let scene = 16.0 * 30000.0;
        assert!(
            (scene..scene + 8192.0).contains(&sent),
            "{sent} bytes from the host: {r}"
        );
        assert!(
            r["device"].as_str().unwrap().ends_with("(in flight)"),
            "{r}"
        );
        assert!(r["host_ms"]["wait"].as_f64().is_some(), "{r}");
    }
    assert_eq!(two[2]["chosen"]["method"], one[2]["chosen"]["method"]);
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
    fails_naming(&["bench", "--in-flight"], "--backend gpu");
    fails_naming(
        &["bench", "--in-flight", "--backend", "gpu", "--shape", "obb"],
        "sphere scenes only",
    );
    fails_naming(
        &["bench", "--in-flight", "--backend", "gpu", "--resident"],
        "--resident",
    );
    fails_naming(
        &["bench", "--in-flight", "--backend", "gpu", "--events"],
        "--events",
    );
}
