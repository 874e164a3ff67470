//! The serialization paper's Tables 1-7 beside our numbers (seeds 000/002).
//!
//! Counts follow from the scenario and must agree within a few percent; times are compared as
//! ratios to brute force (the paper ran on a Pentium 4 with a 10 ms timer).

use crate::report::rows::Row;
use crate::report::table::{Table, count, ms};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The paper's tables as shipped in `reference/serialization_paper.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct PaperTables {
    pub n: Vec<usize>,
    pub table1_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table2_tests_per_frame: BTreeMap<String, Vec<f64>>,
    pub table4_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table5_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table6_tests_per_frame: BTreeMap<String, Vec<f64>>,
}

/// The reference JSON, compiled in so reports work from any directory.
pub const PAPER_JSON: &str = include_str!("../../reference/serialization_paper.json");

pub fn paper_tables() -> PaperTables {
    serde_json::from_str(PAPER_JSON).expect("reference/serialization_paper.json is valid")
}

impl PaperTables {
    /// The paper's value for (method, n) in a tests table, if it has one.
    pub fn tests(&self, method: &str, n: usize) -> Option<f64> {
        let i = self.n.iter().position(|&x| x == n)?;
        self.table2_tests_per_frame
            .get(method)
            .or_else(|| self.table6_tests_per_frame.get(method))
            .map(|v| v[i])
    }

    /// The paper's time for 100 frames (ms) for (method, n), if it has one.
    pub fn time_100(&self, method: &str, n: usize) -> Option<f64> {
        let i = self.n.iter().position(|&x| x == n)?;
        [
            &self.table1_time_ms_per_100_frames,
            &self.table4_time_ms_per_100_frames,
            &self.table5_time_ms_per_100_frames,
        ]
        .iter()
        .find_map(|t| t.get(method))
        .map(|v| v[i])
    }
}

/// One (method, n) line of the comparison, also written to JSON.
#[derive(Clone, Debug, Serialize)]
pub struct PaperComparison {
    pub n: usize,
    pub method: String,
    pub backend: String,
    pub tests_per_frame: f64,
    pub paper_tests_per_frame: Option<f64>,
    /// (ours - paper) / paper, percent.
    pub tests_diff_percent: Option<f64>,
    pub k: f64,
    pub k_over_n: f64,
    pub ms_per_100_frames: f64,
    pub paper_ms_per_100_frames: Option<f64>,
    /// brute_force time / this time, ours.
    pub speedup_vs_brute_force: Option<f64>,
    /// brute_force time / this time, the paper's.
    pub paper_speedup_vs_brute_force: Option<f64>,
}

/// Builds the comparison lines from measured rows.
pub fn compare(rows: &[Row], paper: &PaperTables) -> Vec<PaperComparison> {
    rows.iter()
        .map(|r| {
            let paper_tests = paper.tests(&r.method, r.n);
            let paper_time = paper.time_100(&r.method, r.n);
            let paper_brute = paper.time_100("brute_force", r.n);
            PaperComparison {
                n: r.n,
                method: r.method.clone(),
                backend: r.backend.as_str().to_string(),
                tests_per_frame: r.tests_per_frame,
                paper_tests_per_frame: paper_tests,
                tests_diff_percent: paper_tests
                    .map(|p| 100.0 * (r.tests_per_frame - p) / p.max(1.0)),
                k: r.tests_per_frame / r.n.max(1) as f64,
                k_over_n: r.tests_per_frame / (r.n.max(1) as f64).powi(2),
                ms_per_100_frames: 100.0 * r.ms_per_frame,
                paper_ms_per_100_frames: paper_time,
                speedup_vs_brute_force: r.speedup_vs_brute_force,
                paper_speedup_vs_brute_force: match (paper_brute, paper_time) {
                    (Some(b), Some(t)) if t > 0.0 => Some(b / t),
                    _ => None,
                },
            }
        })
        .collect()
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// Renders the paper's tables with our numbers beside them, one block per table.
pub fn render(cmp: &[PaperComparison]) -> String {
    let mut out = String::new();
    let mut backends: Vec<&str> = cmp.iter().map(|c| c.backend.as_str()).collect();
    backends.dedup();
    backends.sort();
    backends.dedup();
    let block = |title: &str,
                 methods: &[&str],
                 backend: &str,
                 cells: &dyn Fn(&PaperComparison) -> Vec<String>,
                 header: &[&str]| {
        let mut t = Table::new(["n", "method"].iter().chain(header).copied());
        for c in cmp.iter().filter(|c| c.backend == backend) {
            if methods.contains(&c.method.as_str()) {
                let mut row = vec![c.n.to_string(), c.method.clone()];
                row.extend(cells(c));
                t.row(row);
            }
        }
        format!("{title} [{backend}]\n{}\n", t.render())
    };
    let time_cells = |c: &PaperComparison| {
        vec![
            ms(c.ms_per_100_frames),
            opt(c.paper_ms_per_100_frames, |v| format!("{v:.0}")),
            opt(c.speedup_vs_brute_force, |v| format!("{v:.1}x")),
            opt(c.paper_speedup_vs_brute_force, |v| format!("{v:.1}x")),
        ]
    };
    let time_header = ["ms/100 frames", "paper ms", "vs brute", "paper vs brute"];
    let tests_cells = |c: &PaperComparison| {
        vec![
            count(c.tests_per_frame),
            opt(c.paper_tests_per_frame, count),
            opt(c.tests_diff_percent, |v| format!("{v:+.1}%")),
        ]
    };
    let k_cells = |c: &PaperComparison| vec![format!("{:.3}", c.k), format!("{:.4}", c.k_over_n)];
    for b in backends {
        out += &block(
            "Table 1: time, brute force vs origin distance vs xyz",
            &["brute_force", "origin_distance", "xyz"],
            b,
            &time_cells,
            &time_header,
        );
        out += &block(
            "Table 2: sphere tests per frame",
            &["brute_force", "origin_distance", "xyz"],
            b,
            &tests_cells,
            &["tests", "paper", "diff"],
        );
        out += &block(
            "Table 3: k = tests per object",
            &["origin_distance", "xyz"],
            b,
            &k_cells,
            &["k", "k/n"],
        );
        out += &block(
            "Table 4: time, x vs xy vs xyz",
            &["x", "xy", "xyz"],
            b,
            &time_cells,
            &time_header,
        );
        out += &block(
            "Table 5: time, xyz vs min_axis",
            &["xyz", "min_axis"],
            b,
            &time_cells,
            &time_header,
        );
        out += &block(
            "Table 6: tests, xyz vs min_axis",
            &["xyz", "min_axis"],
            b,
            &tests_cells,
            &["tests", "paper", "diff"],
        );
        out += &block(
            "Table 7: k, xyz vs min_axis",
            &["xyz", "min_axis"],
            b,
            &k_cells,
            &["k", "k/n"],
        );
        out += &block(
            "Beyond the paper: sap and grid",
            &["sap", "grid"],
            b,
            &|c: &PaperComparison| {
                let mut v = tests_cells(c);
                v.truncate(1);
                v.extend(time_cells(c).into_iter().step_by(2));
                v
            },
            &["tests", "ms/100 frames", "vs brute"],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_json_parses_and_has_every_n() {
        let p = paper_tables();
        assert_eq!(p.n, vec![50, 200, 500, 1000, 3000, 5000]);
        assert_eq!(p.tests("brute_force", 5000), Some(12_497_500.0));
        assert_eq!(p.tests("min_axis", 1000), Some(35_661.0));
        assert_eq!(p.time_100("x", 50), Some(10.0));
        assert_eq!(p.tests("sap", 50), None);
    }
}
