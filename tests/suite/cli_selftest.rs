//! `sweepfan selftest` and `sweepfan shaders` from the command line: the self-test passes on
//! this machine's adapter (lavapipe in CI), fails when a stage's GPU output is corrupted, and
//! the dumped shader modules are the ones the pipelines compile.

use crate::common::{succeed, sweepfan, temp_dir};

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
    let out = sweepfan()
        .args(["selftest", "--backend", "cpu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = sweepfan()
        .args(["selftest", "--only", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch"));
}

/// SWEEPFAN_EXPECT_ADAPTER naming another adapter: the selftest runs nothing and exits 2, naming
/// the substring and the adapter it found; naming this one (or part of its name), the run goes
/// on.
#[test]
fn selftest_on_another_adapter_than_expected_exits_2_naming_both() {
    let Some(ctx) = sweepfan::gpu::context::test_gpu() else {
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
        stderr.contains("no-such-gpu-xyz") && stderr.contains(&ctx.info.name),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("checks passed"));
    succeed(
        sweepfan()
            .arg("info")
            .env("SWEEPFAN_EXPECT_ADAPTER", &ctx.info.name)
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
