//! `sweepfan reproduce sector --pose free`: the generalised accuracy experiment's table
//! (docs/design.md §5.8) and the failures that make the command exit non-zero.

use crate::experiments::sector::accuracy::{MethodScore, ROUNDING_BAND, scored};
use crate::experiments::sector::free::FreeAccuracyReport;
use sweepfan::geom::sector::classify::GRID_POINTS;
use sweepfan::geom::sector::free_classify::{METHODS, METHODS_VS_EXACT};

/// Most points an enclosing method may miss and still pass: the rounding band.
fn allowed(s: &MethodScore) -> u64 {
    (ROUNDING_BAND * s.rotations as f64 * GRID_POINTS as f64).floor() as u64
}

impl FreeAccuracyReport {
    /// Enclosing methods that missed points of what they enclose beyond the rounding band.
    pub fn failures(&self) -> Vec<String> {
        let scores = &self.scores;
        let checks = [
            ("vs reference", "conservative_sector", &scores.methods),
            ("vs reference", "piece_union", &scores.methods),
            ("vs reference", "exact_sweep", &scores.methods),
            (
                "vs exact sweep",
                "conservative_sector",
                &scores.methods_vs_exact,
            ),
            ("vs exact sweep", "piece_union", &scores.methods_vs_exact),
        ];
        let mut out = Vec::new();
        for (truth, name, table) in checks {
            match table.get(name) {
                Some(s) if s.under_points > allowed(s) => out.push(format!(
                    "{} {name} {truth}: {} missed points, more than the rounding band's {}",
                    self.body.name(),
                    s.under_points,
                    allowed(s)
                )),
                Some(_) => {}
                None => out.push(format!("{name} {truth}: not scored")),
            }
        }
        out
    }

    /// Every table, as text for stdout.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let s = &self.scores;
        let _ = writeln!(
            out,
            "sector accuracy, pose free, body {}: {} rotations x {} points (seed {}) on {}; \
             acc / over / under in %",
            self.body.name(),
            s.rotations,
            s.grid_points_per_rotation,
            s.seed,
            self.device
        );
        for (title, table, methods) in [
            ("vs 100-step reference", &s.methods, &METHODS),
            ("vs exact sweep", &s.methods_vs_exact, &METHODS_VS_EXACT),
        ] {
            let _ = writeln!(
                out,
                "{title:<22} {:>6} {:>6} {:>6} {:>12} {:>10}",
                "acc", "over", "under", "missed pts", "ns/point"
            );
            for (name, m) in scored(methods, table) {
                let ns = self
                    .cost
                    .get(name)
                    .map(|c| format!("{:.1}", c.ns_per_point))
                    .unwrap_or_else(|| "-".into());
                let _ = writeln!(out, "{name:<22} {} {ns:>10}", m.columns());
            }
        }
        let _ = writeln!(
            out,
            "piece union: {:.2} sector tests per point (octants meeting the body); ns/point: one \
             CPU thread",
            self.pieces_per_rotation
        );
        let per_test = |name: &str| {
            self.cost
                .get(name)
                .map_or_else(|| "-".into(), |c| format!("{:.0} ns", c.ns_per_point))
        };
        let _ = writeln!(
            out,
            "whole tests (one CPU thread): sector vs {} {}; sector vs sector (non-parallel axes: \
             bounding boxes, then GJK over the pieces) {}",
            self.body.name(),
            per_test("sector_vs_body"),
            per_test("sector_vs_sector")
        );
        let per_rotation = self.classify_seconds * 1e3 / s.rotations.max(1) as f64;
        let _ = writeln!(
            out,
            "speed: {:.1} us to build a rotation's constants (one CPU thread); {:.2} ms per \
             rotation to classify its 10^6 points on {}",
            self.construction_us_per_rotation, per_rotation, self.device,
        );
        out
    }
}
