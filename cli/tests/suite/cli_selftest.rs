//! `sweepfan selftest` and `sweepfan shaders` from the command line: the self-test passes on
//! this machine's adapter (lavapipe in CI), fails when a stage's GPU output is corrupted, and
//! the dumped shader modules are the ones the pipelines compile.

use crate::common::{exits_2, exits_2_naming, succeed, sweepfan, temp_dir};

fn checks_of(path: &std::path::Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let checks = doc["checks"].as_array().unwrap().clone();
    (doc, checks)
}

#[test]
fn quick_selftest_passes_and_covers_every_stage() {
    let dir = temp_dir("selftest", "quick");
    let json = dir.join("selftest.json");
    let out = succeed(
        sweepfan()
            .args(["selftest", "--quick", "--json"])
            .arg(&json)
            .output(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("checks passed"), "{stdout}");
    // Where it ran comes first: the adapter, its driver, the limits and the subgroup sizes.
    let head: Vec<&str> = stdout
        .lines()
        .take_while(|l| !l.starts_with("selftest ("))
        .collect();
    for want in [
        "adapter: ",
        "driver: ",
        "max_storage_buffer_binding_size",
        "min/max subgroup size",
    ] {
        assert!(
            head.iter().any(|l| l.contains(want)),
            "no '{want}' before the checks: {head:?}"
        );
    }
    let (doc, checks) = checks_of(&json);
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["complete"], true);
    // The README's count is lavapipe's (issue 40): an adapter with subgroups of its own size
    // runs another set of sort checks.
    let on_lavapipe = doc["device"].as_str().unwrap().contains("llvmpipe");
    let stated = crate::readme_figures::README
        .split("(`--quick`: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .expect("README states the quick self-test's check count");
    if on_lavapipe {
        assert_eq!(stated, checks.len(), "README's quick self-test count");
    }
    assert!(doc["device"].as_str().unwrap().len() > 3);
    for prefix in [
        "sort/portable/",
        "spheres/paper/grid",
        "spheres/density/sap",
        "boxes/",
        "polygons/",
        "sector/",
        "rotating/",
    ] {
        assert!(
            checks
                .iter()
                .any(|c| c["name"].as_str().unwrap().starts_with(prefix)),
            "no {prefix} check"
        );
    }
    for c in &checks {
        assert_eq!(c["passed"], true, "{c}");
        assert!(
            c["n"].as_u64().unwrap() >= 1 && c["ms"].as_f64().unwrap() >= 0.0,
            "{c}"
        );
    }
}

/// The mutation check: each stage's GPU output corrupted before the comparison (one value of
/// every sort flipped, one pair dropped, a tenth of a histogram bin moved, one hit dropped)
/// must fail that stage's checks and the run (exit 1).
#[test]
fn a_corrupted_stage_fails_its_checks() {
    let dir = temp_dir("selftest", "fault");
    for stage in ["sort", "spheres", "boxes", "sector", "rotating", "events"] {
        let json = dir.join(format!("{stage}.json"));
        let out = sweepfan()
            .args([
                "selftest",
                "--only",
                stage,
                "--inject-fault",
                stage,
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{stage}");
        let (doc, checks) = checks_of(&json);
        assert_eq!(doc["passed"], false, "{stage}");
        assert!(!checks.is_empty(), "{stage}");
        for c in &checks {
            assert_eq!(c["passed"], false, "{stage}: {c}");
        }
    }
}

#[test]
fn selftest_rejects_a_cpu_backend_and_unknown_stages() {
    exits_2(sweepfan().args(["selftest", "--backend", "cpu"]));
    exits_2_naming(sweepfan().args(["selftest", "--only", "nosuch"]), "nosuch");
}

/// SWEEPFAN_EXPECT_ADAPTER naming another adapter: the selftest runs nothing and exits 2, naming
/// the substring and the adapter it found; naming this one (or part of its name), the run goes
/// on.
#[test]
fn selftest_on_another_adapter_than_expected_exits_2_naming_both() {
    let Some(ctx) = crate::common::test_gpu() else {
        return;
    };
    let out = sweepfan()
        .args(["selftest", "--quick", "--only", "sector"])
        .env("SWEEPFAN_EXPECT_ADAPTER", "no-such-gpu-xyz")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no-such-gpu-xyz") && stderr.contains(&ctx.info().name),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("checks passed"));
    succeed(
        sweepfan()
            .arg("info")
            .env("SWEEPFAN_EXPECT_ADAPTER", &ctx.info().name)
            .output(),
    );
}

/// Every dumped module parses and validates in naga as written (without the `enable` line
/// that only Tint takes), for each subgroup size the constants depend on.
#[test]
fn dumped_shader_modules_validate_in_naga() {
    let dir = temp_dir("selftest", "shaders");
    for size in ["4", "8", "32", "64"] {
        let out_dir = dir.join(size);
        let out = succeed(
            sweepfan()
                .args(["shaders", "--subgroup-size", size, "--out"])
                .arg(&out_dir)
                .output(),
        );
        let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        assert!(files.len() >= 12, "{files:?}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let module = naga::front::wgsl::parse_str(&text)
                .unwrap_or_else(|e| panic!("{f}: {}", e.emit_to_string(&text)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{f}: {e:?}"));
        }
    }
}

/// Ctrl-C during a long self-test: the JSON file holds the checks finished before it, valid and
/// marked incomplete (issue 40: `timeout -s INT 10 sweepfan selftest --full --json F`).
#[test]
fn a_stopped_selftest_leaves_its_finished_checks_marked_incomplete() {
    use std::os::unix::process::ExitStatusExt;
    let dir = temp_dir("selftest", "stopped");
    let json = dir.join("selftest.json");
    let mut child = crate::common::sweepfan_catching_sigint()
        .args(["selftest", "--full", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let done = |doc: &serde_json::Value| doc["checks"].as_array().map_or(0, |c| c.len());
    // The file is there, valid and empty, before the first check ends.
    loop {
        let doc = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        if let Some(doc) = doc {
            assert_eq!(doc["complete"], false);
            if done(&doc) >= 3 {
                break;
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the self-test ended ({status}) before it was stopped");
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(600),
            "no 3 checks written in 10 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = crate::common::wait_at_most(
        &mut child,
        std::time::Duration::from_secs(60),
        "the self-test after Ctrl-C",
    );
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status}");
    let (doc, checks) = checks_of(&json);
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["passed"], false, "an incomplete run never passes");
    assert!(checks.len() >= 3, "{} checks", checks.len());
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names[0].starts_with("sort/"), "{names:?}");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "selftest.json")
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// Under a binding limit set below the adapter's (`--max-binding-bytes`), sphere frames run in
/// parts: the self-test compares their pairs and says that parts do not keep the test counts
/// (issue 39: 73 "failures" that were test counts); stages without parts are marked not run,
/// neither passed nor failed, and a run where nothing ran fails saying so.
#[test]
fn a_lowered_binding_limit_checks_pairs_in_parts_and_marks_what_cannot_run() {
    // `selftest --only STAGES` under a 64 KiB binding limit.
    let capped = |stages: &str| {
        let mut cmd = sweepfan();
        cmd.args(["--max-binding-bytes", "65536", "selftest", "--only", stages]);
        cmd
    };
    let dir = temp_dir("selftest", "capped");
    let json = dir.join("spheres.json");
    let out = capped("spheres").arg("--json").arg(&json).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let (_, checks) = checks_of(&json);
    let in_parts = checks
        .iter()
        .filter(|c| {
            c["detail"]
                .as_str()
                .unwrap()
                .contains("parts keep the pairs")
        })
        .count();
    assert!(in_parts > 10, "{stdout}");
    assert!(checks.iter().all(|c| c["passed"] == true), "{stdout}");

    let out = capped("boxes").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("NRUN") && !stdout.contains("FAIL "),
        "{stdout}"
    );
    assert!(stdout.contains("the limit set for this run"), "{stdout}");
    assert!(stdout.contains("nothing was verified"), "{stdout}");
}
