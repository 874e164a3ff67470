//! The serialization paper's tables 1-7 (docs/design.md, serialization experiments): every
//! method on the paper box at the paper's object counts, and our rows set beside the paper's.

use crate::run::bench::{FrameRun, measure};
use crate::run::gpu::LazyGpu;
use crate::run::row::Row;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use sweepfan::broadphase::Method;
use sweepfan::error::Result;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

#[derive(Clone, Debug, Deserialize)]
pub struct PaperTables {
    pub n: Vec<usize>,
    pub table1_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table2_tests_per_frame: BTreeMap<String, Vec<f64>>,
    pub table4_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table5_time_ms_per_100_frames: BTreeMap<String, Vec<f64>>,
    pub table6_tests_per_frame: BTreeMap<String, Vec<f64>>,
    /// Tables 3 and 7: `{method}_k` (tests per object) and `{method}_k_over_n`.
    pub table3_k: BTreeMap<String, Vec<f64>>,
    pub table7_k: BTreeMap<String, Vec<f64>>,
}

/// The reference JSON, compiled in so reports work from any directory.
pub const PAPER_JSON: &str = include_str!("../../../reference/serialization_paper.json");

pub fn paper_tables() -> PaperTables {
    serde_json::from_str(PAPER_JSON).expect("reference/serialization_paper.json is valid")
}

impl PaperTables {
    /// The paper's k (tests per object) for (method, n), from Table 3 or Table 7.
    pub fn k(&self, method: &str, n: usize) -> Option<f64> {
        let i = self.n.iter().position(|&x| x == n)?;
        let key = format!("{method}_k");
        self.table3_k
            .get(&key)
            .or_else(|| self.table7_k.get(&key))
            .map(|v| v[i])
    }

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
    /// Where it ran (the rows' `device`: a software adapter marked so).
    pub device: String,
    pub tests_per_frame: f64,
    pub paper_tests_per_frame: Option<f64>,
    /// (ours - paper) / paper, percent.
    pub tests_diff_percent: Option<f64>,
    pub k: f64,
    pub paper_k: Option<f64>,
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
                device: r.device.clone(),
                tests_per_frame: r.tests_per_frame,
                paper_tests_per_frame: paper_tests,
                tests_diff_percent: paper_tests
                    .map(|p| 100.0 * (r.tests_per_frame - p) / p.max(1.0)),
                k: r.tests_per_frame / r.n.max(1) as f64,
                paper_k: paper.k(&r.method, r.n),
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

/// What `reproduce broadphase` measured: the rows, whether every method verified, and the
/// comparison with the paper.
pub struct BroadphaseReproduction {
    pub rows: Vec<Row>,
    pub all_verified: bool,
    pub comparison: Vec<PaperComparison>,
}

/// Every method on every backend at each `n` of the paper box, each verified against the CPU
/// reference on its first frame, then compared with the paper's tables.
pub fn reproduce(
    ns: &[usize],
    seed: u64,
    backends: &[sweepfan::broadphase::Backend],
    run: FrameRun,
    progress: Option<&ProgressBar>,
    gpu: &mut LazyGpu,
) -> Result<BroadphaseReproduction> {
    let methods: Vec<String> = Method::ALL.iter().map(|m| m.name().to_string()).collect();
    // Every size from `--n` is checked before the first is run (docs/design.md §9.14).
    for &n in ns {
        sweepfan::broadphase::limits::check_scene_size(n)?;
    }
    let mut rows = Vec::new();
    let mut all_verified = true;
    // A size named twice is run once, where first named (as `bench` takes its methods).
    let mut seen = std::collections::BTreeSet::new();
    for &n in ns.iter().filter(|&&n| seen.insert(n)) {
        let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, seed));
        let (r, ok) = measure(&scene, &methods, backends, run, true, progress, gpu)?;
        rows.extend(r);
        all_verified &= ok;
    }
    let comparison = compare(&rows, &paper_tables());
    Ok(BroadphaseReproduction {
        rows,
        all_verified,
        comparison,
    })
}
