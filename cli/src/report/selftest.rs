//! `sweepfan selftest` output: one line per check as it completes, a closing summary, and the
//! JSON document `{"device", "level", "complete", "passed", "checks": [{"name", "n", "passed",
//! "not_run" (only when true), "detail", "ms"}]}`, rewritten after each check when it goes to a file.

use crate::experiments::selftest::{Check, SelftestReport};
use std::path::Path;
use sweepfan::error::Result;

/// `PASS  name  n  ms  detail` (or `FAIL`, or `NRUN`: not run under the binding limit set for
/// the run).
pub fn check_line(c: &Check) -> String {
    format!(
        "{}  {:<44} n={:<10} {:>10.1} ms  {}",
        match (c.passed, c.not_run) {
            (true, _) => "PASS",
            (false, true) => "NRUN",
            (false, false) => "FAIL",
        },
        c.name,
        c.n,
        c.ms,
        c.detail
    )
}

/// The closing line: how many checks passed on which device, and the failures again.
pub fn summary(r: &SelftestReport) -> String {
    let mut out = format!(
        "selftest ({}) on {}: {} of {} checks passed",
        r.level.name(),
        r.device,
        r.checks.len() - r.failed() - r.not_run(),
        r.checks.len()
    );
    if r.not_run() > 0 {
        out.push_str(&format!(
            ", {} not run (they need storage bindings above the limit set by \
             --max-binding-bytes, and cannot run in parts)",
            r.not_run()
        ));
    }
    if r.failed() == 0 && !r.passed() {
        out.push_str("\n  nothing was verified: no check ran");
    }
    for c in r.checks.iter().filter(|c| !c.passed && !c.not_run) {
        out.push_str(&format!("\n  FAILED {}: {}", c.name, c.detail));
    }
    out
}

/// Writes the report as JSON, with the tool version and command line. `complete`: whether the
/// run has ended; a run that is stopped leaves the file of its last check, `"complete": false`
/// (`passed` is true only for a complete run whose every check passed).
pub fn write_json(path: &Path, r: &SelftestReport, complete: bool) -> Result<()> {
    #[derive(serde::Serialize)]
    struct Document<'a> {
        tool: &'static str,
        version: &'static str,
        command: String,
        complete: bool,
        passed: bool,
        #[serde(flatten)]
        report: &'a SelftestReport,
    }
    super::rows::write_json_value(
        path,
        &Document {
            tool: "sweepfan",
            version: env!("CARGO_PKG_VERSION"),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            complete,
            passed: complete && r.passed(),
            report: r,
        },
    )
}
