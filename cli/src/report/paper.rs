//! The serialization paper's Tables 1-7 beside our numbers (docs/design.md §3.2).
//!
//! Counts follow from the scenario and must agree within a few percent; times are compared as
//! ratios to brute force (the paper ran on a Pentium 4 with a 10 ms timer).

use crate::experiments::broadphase_paper::PaperComparison;
use crate::report::plot::{LinePlot, Scale, Series};
use crate::report::table::{Table, count, ms};
use crate::run::row::Row;
use crate::run::row::device_lines;
use std::path::Path;
use sweepfan::broadphase::Backend;
use sweepfan::error::{Error, Result};

/// The paper's tables as shipped in `reference/serialization_paper.json`.
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
    let k_cells = |c: &PaperComparison| {
        vec![
            format!("{:.3}", c.k),
            opt(c.paper_k, |v| format!("{v:.3}")),
            format!("{:.4}", c.k_over_n),
        ]
    };
    let beyond_cells = |c: &PaperComparison| {
        let mut v = tests_cells(c);
        v.truncate(1);
        v.extend(time_cells(c).into_iter().step_by(2));
        v
    };
    let tests_header = ["tests", "paper", "diff"];
    let k_header = ["k", "paper k", "k/n"];
    // Each table: its title, the methods it holds, their cells, and the cells' header.
    type Cells<'a> = &'a dyn Fn(&PaperComparison) -> Vec<String>;
    let tables: [(&str, &[&str], Cells, &[&str]); 8] = [
        (
            "Table 1: time, brute force vs origin distance vs xyz",
            &["brute_force", "origin_distance", "xyz"],
            &time_cells,
            &time_header,
        ),
        (
            "Table 2: sphere tests per frame",
            &["brute_force", "origin_distance", "xyz"],
            &tests_cells,
            &tests_header,
        ),
        (
            "Table 3: k = tests per object",
            &["origin_distance", "xyz"],
            &k_cells,
            &k_header,
        ),
        (
            "Table 4: time, x vs xy vs xyz",
            &["x", "xy", "xyz"],
            &time_cells,
            &time_header,
        ),
        (
            "Table 5: time, xyz vs min_axis",
            &["xyz", "min_axis"],
            &time_cells,
            &time_header,
        ),
        (
            "Table 6: tests, xyz vs min_axis (the paper's min_axis: its literal rule, which misses \
             pairs; ours is complete, docs/design.md §2.5)",
            &["xyz", "min_axis"],
            &tests_cells,
            &tests_header,
        ),
        (
            "Table 7: k, xyz vs min_axis",
            &["xyz", "min_axis"],
            &k_cells,
            &k_header,
        ),
        (
            "Beyond the paper: sap and grid",
            &["sap", "grid"],
            &beyond_cells,
            &["tests", "ms/100 frames", "vs brute"],
        ),
    ];
    for b in backends {
        for (title, methods, cells, header) in tables {
            out += &block(title, methods, b, cells, header);
        }
    }
    out + &device_lines(cmp.iter().map(|c| (c.backend.as_str(), c.device.as_str())))
}

/// SVG plots of the reproduction into `dir`: time, tests, and time relative to brute force,
/// each against n.
pub fn write_plots(dir: &Path, rows: &[Row]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut keys: Vec<(String, Backend)> =
        rows.iter().map(|r| (r.method.clone(), r.backend)).collect();
    keys.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
    keys.dedup();
    let series = |f: &dyn Fn(&Row) -> f64| -> Vec<Series> {
        keys.iter()
            .map(|(m, b)| Series {
                name: if keys.iter().any(|k| k.1 != *b) {
                    format!("{m} [{}]", b.as_str())
                } else {
                    m.clone()
                },
                points: rows
                    .iter()
                    .filter(|r| &r.method == m && r.backend == *b)
                    .map(|r| (r.n as f64, f(r)))
                    .collect(),
            })
            .collect()
    };
    let plots = [
        (
            "time_vs_n.svg",
            "Time per frame vs n (paper box)",
            "ms per frame",
            Scale::Log10,
            series(&|r| r.ms_per_frame),
        ),
        (
            "tests_vs_n.svg",
            "Sphere tests per frame vs n (paper box)",
            "tests per frame",
            Scale::Log10,
            series(&|r| r.tests_per_frame),
        ),
        (
            "time_relative_to_brute_force.svg",
            "Time relative to brute force (paper box)",
            "time / brute force time",
            Scale::Log10,
            series(&|r| r.speedup_vs_brute_force.map_or(f64::NAN, |s| 1.0 / s)),
        ),
    ];
    for (file, title, y, ys, s) in plots {
        let path = dir.join(file);
        let plot = LinePlot {
            title,
            x_label: "objects n",
            y_label: y,
            x_scale: Scale::Log10,
            y_scale: ys,
            series: s,
        };
        // Nothing to draw (`--n 1` tests nothing): said and skipped, not a failed run after
        // its JSON was written.
        if !plot.has_points() {
            eprintln!("skipped {}: no value above zero to plot", path.display());
            continue;
        }
        plot.write_svg(&path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::experiments::broadphase_paper::paper_tables;

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
