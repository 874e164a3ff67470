//! `sweepfan reproduce sector`: the thesis's chapter 3 (docs/design.md §5) beside our numbers. Table 3.1
//! (accuracy / over / under against the 100-step reference, plus the scores against the exact
//! sweep and the groups A..G), the per-angle and per-shape bins as SVG plots (Figs. 3.8, 3.9),
//! Tables 3.2-3.6 (speed) and the batched sector-sphere throughput on the CPU and the GPU.
//!
//! The binary only parses options and drives the progress bar; everything else is here.

use crate::experiments::sector::accuracy::{Bin, METHODS, MethodScore, ROUNDING_BAND};
use crate::experiments::sector::speed::SpeedRow;
use crate::experiments::sector::{SectorBackend, SectorReproduction, enclosure_failures};
use crate::report::plot::{LinePlot, Scale, Series};
use crate::report::table::{Table, count, ms};
use std::path::{Path, PathBuf};
use sweepfan::error::{Error, Result};

impl SectorReproduction {
    /// The failures that make the command exit non-zero: `conservative_sector` or `exact_sweep`
    /// missing reference points (or `conservative_sector` missing exact-sweep points) beyond the
    /// rounding band, or a GPU throughput answer that differs from the CPU's beyond a tie.
    pub fn failures(&self) -> Vec<String> {
        let mut out = enclosure_failures(&self.accuracy);
        for t in &self.throughput {
            if t.disagreements > 0 {
                out.push(format!(
                    "{}: {} sector-sphere answers differ from the CPU's",
                    t.device, t.disagreements
                ));
            }
        }
        out
    }

    /// Every table, as text for stdout.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "Table 3.1 analog (backend {:?}{}; the thesis scored 100,000 rotations)\n",
            self.backend,
            match (&self.backend, &self.adapter) {
                (SectorBackend::Gpu, Some(a)) => format!(", adapter {a}"),
                _ => String::new(),
            }
        ));
        out.push_str(&self.accuracy.table());
        out.push_str(
            "speculative = start-pose AABB grown by the chord (SPEC 4.3, the thesis's reading); \
             speculative_endpoints = AABB of the start and end poses\n",
        );
        out.push_str(&format!(
            "rounding band for enclosing methods: {} of the classified points\n\n",
            ROUNDING_BAND
        ));
        let s = &self.speed;
        out.push_str(&format!(
            "Speed (ms per run of {} tests; {} runs per row; thesis: {})\n",
            s.config.tests_per_run, s.config.runs, s.thesis_machine
        ));
        for (title, rows) in [
            ("Table 3.2 analog: 2D tests", &s.table_2d),
            ("Table 3.3 analog: 3D tests", &s.table_3d),
            (
                "Table 3.4 analog: CCD transform and test (per 100k spheres)",
                &s.ccd_transform_and_test,
            ),
            (
                "Table 3.5 analog: CCD shape construction",
                &s.ccd_construction,
            ),
            ("Table 3.6 analog: CCD total", &s.ccd_total),
        ] {
            out.push_str(title);
            out.push('\n');
            out.push_str(&speed_table(rows));
            out.push('\n');
        }
        out.push_str("Batched sector-sphere throughput\n");
        let mut t = Table::new(["device", "tests/run", "mean ms", "fastest ms", "tests/s"]);
        for r in &self.throughput {
            t.row([
                r.device.clone(),
                count(r.tests_per_run as f64),
                ms(r.ours.mean_ms),
                ms(r.ours.fastest_ms),
                format!("{:.3e}", r.tests_per_second),
            ]);
        }
        out.push_str(&t.render());
        if let Some(note) = &self.gpu_throughput_note {
            out.push_str(note);
            out.push('\n');
        }
        out
    }

    /// The JSON document: the accuracy report's fields at the top level (`rotations`, `methods`
    /// keyed by method with accuracy / over / under in percent and `under_points`, the bins,
    /// groups, thesis), plus `speed`, `throughput`, `backend`, `adapter`, `rounding_band` and
    /// `failures`.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        let map = |e: serde_json::Error| Error::Config(format!("sector report JSON: {e}"));
        let mut doc = serde_json::to_value(&self.accuracy).map_err(map)?;
        let extra = serde_json::json!({
            "backend": self.backend,
            "adapter": self.adapter,
            "rounding_band": ROUNDING_BAND,
            "speed": serde_json::to_value(&self.speed).map_err(map)?,
            "throughput": serde_json::to_value(&self.throughput).map_err(map)?,
            "gpu_throughput_note": self.gpu_throughput_note,
            "failures": self.failures(),
        });
        if let (Some(obj), serde_json::Value::Object(extra)) = (doc.as_object_mut(), extra) {
            obj.extend(extra);
        }
        Ok(doc)
    }

    /// Figs. 3.8 and 3.9 analogs: accuracy, over and under per angle bin and per Wy - Wx bin,
    /// one line per method. Returns the files written.
    pub fn write_plots(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut written = Vec::new();
        let metrics: [Metric; 3] = [
            ("accuracy", |s| s.accuracy),
            ("over", |s| s.over),
            ("under", |s| s.under),
        ];
        let kinds: [(&str, &str, &[Bin]); 2] = [
            (
                "angle",
                "rotation angle (degrees, bin centre)",
                &self.accuracy.angle_bins,
            ),
            (
                "shape",
                "Wy - Wx (bin centre, equal-count bins)",
                &self.accuracy.shape_bins,
            ),
        ];
        for (kind, x_label, bins) in kinds {
            for (metric, value) in metrics {
                let series = METHODS
                    .iter()
                    .map(|(name, _)| Series {
                        name: name.to_string(),
                        points: bins
                            .iter()
                            .filter(|b| b.rotations > 0)
                            .filter_map(|b| {
                                let s = b.methods.get(*name)?;
                                (s.rotations > 0).then(|| (0.5 * (b.lo + b.hi), value(s)))
                            })
                            .collect(),
                    })
                    .collect();
                let title = format!("sector CCD: {metric} per {kind} bin (% of ref | method)");
                let y_label = format!("{metric} (%)");
                let path = dir.join(format!("sector_{kind}_{metric}.svg"));
                LinePlot {
                    title: &title,
                    x_label,
                    y_label: &y_label,
                    x_scale: Scale::Linear,
                    y_scale: Scale::Linear,
                    series,
                }
                .write_svg(&path)?;
                written.push(path);
            }
        }
        Ok(written)
    }
}

/// A plotted score: its name and how to read it.
type Metric = (&'static str, fn(&MethodScore) -> f64);

fn speed_table(rows: &[SpeedRow]) -> String {
    let mut t = Table::new([
        "test",
        "mean ms",
        "fastest",
        "slowest",
        "thesis mean",
        "fastest",
        "slowest",
        "thesis/ours",
        "hits",
    ]);
    let dash = || "-".to_string();
    for r in rows {
        let th = |i: usize| r.thesis.map_or_else(dash, |t| ms(t[i]));
        t.row([
            r.name.clone(),
            ms(r.ours.mean_ms),
            ms(r.ours.fastest_ms),
            ms(r.ours.slowest_ms),
            th(0),
            th(1),
            th(2),
            r.speedup.map_or_else(dash, |s| format!("{s:.1}x")),
            count(r.hits_last_run as f64),
        ]);
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::sector::accuracy::GRID_POINTS;
    use crate::experiments::sector::{SectorOptions, allowed_misses, run};

    fn score(under_points: u64, rotations: u64) -> MethodScore {
        MethodScore {
            under_points,
            rotations,
            ..MethodScore::default()
        }
    }

    #[test]
    fn the_band_is_the_rounding_fraction_of_the_scored_points() {
        // 10 rotations x 10^6 points x 1e-5 = 100 points.
        assert_eq!(allowed_misses(&score(0, 10)), 100);
        assert_eq!(allowed_misses(&score(0, 0)), 0);
    }

    #[test]
    fn misses_beyond_the_band_fail_and_within_it_pass() {
        use crate::experiments::sector::accuracy::{bits, build_report, random_rotations};
        let rotations = random_rotations(2, 4);
        // Hand-made histograms: 500 points in every shape, and `missed` reference points
        // (in the exact sweep too) that the conservative sector lacks.
        let hist = |missed: u32| {
            let mut h = [0u32; 64];
            h[63] = 500;
            h[(63 & !bits::CONSERVATIVE_SECTOR) as usize] = missed;
            h[0] = GRID_POINTS - 500 - missed;
            h
        };
        // The band of 2 rotations is 20 points.
        let ok = build_report(&rotations, &[hist(10), hist(10)], 4).unwrap();
        assert!(enclosure_failures(&ok).is_empty());
        let bad = build_report(&rotations, &[hist(10), hist(11)], 4).unwrap();
        let failures = enclosure_failures(&bad);
        assert_eq!(failures.len(), 2, "{failures:?}"); // vs reference and vs exact sweep
        assert!(failures.iter().all(|f| f.contains("conservative_sector")));
    }

    #[test]
    fn zero_speed_runs_is_a_config_error() {
        let opts = SectorOptions {
            rotations: 1,
            speed_runs: 0,
            ..SectorOptions::default()
        };
        assert!(matches!(run(&opts, None), Err(Error::Config(_))));
    }
}
