//! `sweepfan selftest` output: one line per check as it completes, a closing summary, and the
//! JSON document `{"device", "level", "complete", "passed", "checks": [{"name", "n", "passed",
//! "detail", "ms"}]}`, rewritten after each check when it goes to a file.

use crate::error::Result;
use crate::experiments::selftest::{Check, SelftestReport};
use std::path::Path;

/// `PASS  name  n  ms  detail` (or `FAIL`).
pub fn check_line(c: &Check) -> String {
    format!(
        "{}  {:<44} n={:<10} {:>10.1} ms  {}",
        if c.passed { "PASS" } else { "FAIL" },
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
        r.checks.len() - r.failed(),
        r.checks.len()
    );
    for c in r.checks.iter().filter(|c| !c.passed) {
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
