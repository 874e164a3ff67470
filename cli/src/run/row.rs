//! Result rows: the stable JSON/CSV schema shared by `reproduce`, `bench` and `stress`
//! (written by `report::rows`).
//!
//! Stable keys (do not rename): `n`, `method`, `backend`, `tests_per_frame` (mean),
//! `pairs_per_frame` (mean), `ms_per_frame` (median). Everything else is extra.

use serde::Serialize;
use std::collections::BTreeMap;
use sweepfan::broadphase::Backend;

/// One method measured on one scene.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub scene: String,
    pub n: usize,
    pub method: String,
    pub backend: Backend,
    /// What ran it: "cpu (2 threads)" or the adapter name and type.
    pub device: String,
    pub frames: usize,
    pub tests_per_frame: f64,
    pub pairs_per_frame: f64,
    pub ms_per_frame: f64,
    pub ms_per_frame_min: f64,
    /// Median ms per stage (GPU timestamp stages are suffixed " (gpu)").
    pub stage_ms: BTreeMap<String, f64>,
    /// GPU rows: median ms per host-side step of a frame (`check`, `encode`, `upload`,
    /// `submit`, `wait`, `read-back`, `finish`) and `other`, the rest of the frame's wall time
    /// (docs/design.md §9.16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_ms: Option<BTreeMap<String, f64>>,
    /// brute_force's ms_per_frame / this row's, when brute force ran on the same scene.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_vs_brute_force: Option<f64>,
    /// Whether the first frame's pairs matched the reference method's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// Which method gave the reference pairs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_against: Option<String>,
    /// Pairs within 1e-5 of touching on which the two disagreed (allowed, listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near_touching_differences: Option<usize>,
    /// Resident GPU bytes per object, excluding the pair list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes_per_object: Option<f64>,
    /// Host <-> device bytes moved per object per frame (upload + readback), GPU rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_bytes_per_object: Option<f64>,
    /// GPU rows: the device-traffic model's bytes per object per frame, all stages
    /// (docs/design.md §9.9), and per stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_bytes_per_object: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_traffic: Option<Vec<StageTraffic>>,
    /// GPU rows: blocking host waits for the device per frame (mean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_waits_per_frame: Option<f64>,
    /// GPU rows: compute dispatches recorded per frame (mean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatches_per_frame: Option<f64>,
    /// GPU rows: what each frame created on the device and moved to and from the host once
    /// sizes are stable (flattened into the row: `created_per_frame`, `bytes_to_host_per_frame`,
    /// `bytes_from_host_per_frame`; docs/design.md §9.16).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyCounts>,
    /// With `bench --events`: found and lost pairs per frame (flattened into the row).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub events: Option<FrameEventCounts>,
    /// Shape of the objects when not spheres ("obb", "polygon").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// How the last timed frame was split into parts (docs/design.md §2.10), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<sweepfan::broadphase::PartsReport>,
    /// `auto` rows: the method the last timed frame ran, and why (docs/design.md §2.12).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<sweepfan::broadphase::auto::Choice>,
}

/// Device objects created per frame (medians over frames), by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CreatedPerFrame {
    pub bind_groups: f64,
    pub buffers: f64,
    pub query_sets: f64,
    pub pipelines: f64,
}

/// Creations and host traffic per frame: medians over the frames after the first two.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SteadyCounts {
    pub created_per_frame: CreatedPerFrame,
    pub bytes_to_host_per_frame: f64,
    pub bytes_from_host_per_frame: f64,
    /// Compute passes opened per frame (one per stage; dispatches are `dispatches_per_frame`).
    pub compute_passes_per_frame: f64,
}

/// Where the numbers came from.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    pub cpu_threads: usize,
    pub os: &'static str,
    pub arch: &'static str,
}

impl Machine {
    pub fn this() -> Self {
        Self {
            cpu_threads: rayon::current_num_threads(),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        }
    }
}

/// Frame events of a run: per frame the pairs found and lost against the previous frame (the
/// first frame finds all its pairs) and the pairs, so that `pairs_each_frame[t] =
/// pairs_each_frame[t-1] + found_per_frame[t] - lost_per_frame[t]`; and the totals.
#[derive(Clone, Debug, Serialize)]
pub struct FrameEventCounts {
    pub found_per_frame: Vec<u64>,
    pub lost_per_frame: Vec<u64>,
    pub pairs_each_frame: Vec<u64>,
    pub found: u64,
    pub lost: u64,
}

impl FrameEventCounts {
    /// From a measurement that tracked events (`None` when it did not).
    pub fn of(m: &crate::run::bench::Measurement) -> Option<Self> {
        if m.events.is_empty() {
            return None;
        }
        let found_per_frame: Vec<u64> = m.events.iter().map(|e| e[0]).collect();
        let lost_per_frame: Vec<u64> = m.events.iter().map(|e| e[1]).collect();
        Some(Self {
            found: found_per_frame.iter().sum(),
            lost: lost_per_frame.iter().sum(),
            found_per_frame,
            lost_per_frame,
            pairs_each_frame: m.frame_pairs.clone(),
        })
    }
}

/// One stage of a row's device-traffic model, in pipeline order.
#[derive(Clone, Debug, Serialize)]
pub struct StageTraffic {
    pub stage: String,
    pub bytes_per_object: f64,
}

/// `device_bytes_per_object` and `device_traffic` of a row from a model's stages.
#[allow(clippy::type_complexity)]
pub fn traffic_fields(
    model: Option<Vec<(&'static str, f64)>>,
) -> (Option<f64>, Option<Vec<StageTraffic>>) {
    match model {
        Some(stages) => (
            Some(stages.iter().map(|(_, b)| b).sum()),
            Some(
                stages
                    .into_iter()
                    .map(|(s, b)| StageTraffic {
                        stage: s.to_string(),
                        bytes_per_object: b,
                    })
                    .collect(),
            ),
        ),
        None => (None, None),
    }
}

impl Row {
    /// The row's scene, size, shape, method and device, without anything it measured: the
    /// start of a row measured apart (what was timed, verified and counted cleared).
    pub fn scene_only(mut self) -> Row {
        self.stage_ms.clear();
        self.host_ms = None;
        self.speedup_vs_brute_force = None;
        self.verified = None;
        self.verified_against = None;
        self.near_touching_differences = None;
        self.gpu_bytes_per_object = None;
        self.host_bytes_per_object = None;
        self.device_bytes_per_object = None;
        self.device_traffic = None;
        self.host_waits_per_frame = None;
        self.dispatches_per_frame = None;
        self.steady = None;
        self.events = None;
        self.parts = None;
        self.chosen = None;
        self
    }
}

/// Human-readable CPU device string.
pub fn cpu_device() -> String {
    format!("cpu ({} threads)", rayon::current_num_threads())
}

/// Fills `speedup_vs_brute_force` for every row whose (scene, n, backend) also has a
/// brute_force row.
pub fn fill_speedups(rows: &mut [Row]) {
    let brute: Vec<(String, usize, Backend, f64)> = rows
        .iter()
        .filter(|r| r.method == "brute_force")
        .map(|r| (r.scene.clone(), r.n, r.backend, r.ms_per_frame))
        .collect();
    for r in rows.iter_mut() {
        if let Some((_, _, _, ms)) = brute
            .iter()
            .find(|(s, n, b, _)| *s == r.scene && *n == r.n && *b == r.backend)
            && r.ms_per_frame > 0.0
        {
            r.speedup_vs_brute_force = Some(ms / r.ms_per_frame);
        }
    }
}

/// Under a table, the device of each backend its rows ran on, a line each (`gpu: llvmpipe
/// (Cpu, Vulkan, software: not GPU times)`): a table of times says where they were taken.
pub fn device_lines<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for row in rows {
        if !seen.contains(&row) {
            seen.push(row);
        }
    }
    seen.iter()
        .map(|(backend, device)| format!("{backend}: {device}\n"))
        .collect()
}
