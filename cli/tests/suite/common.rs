//! The library's test oracles and helpers (`tests/suite/common.rs`, shared), and the tool's:
//! running the `sweepfan` binary of this build and reading what it writes.

pub use crate::oracles::*;

/// The `sweepfan` binary of this build.
pub fn sweepfan() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_sweepfan"))
}

/// The output of a command that must succeed (its stderr in the failure message).
pub fn succeed(output: std::io::Result<std::process::Output>) -> std::process::Output {
    let out = output.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `sweepfan ARGS`, which must fail with an error naming `text` on stderr.
pub fn fails_naming(args: &[&str], text: &str) {
    let out = sweepfan().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(stderr.contains(text), "{args:?}: stderr was {stderr}");
}

/// The `rows` of a JSON file written by `--json`.
pub fn json_rows(path: &std::path::Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["rows"].as_array().unwrap().clone()
}
