//! `sweepfan auto-bench`: how close `auto` (docs/design.md §2.12) comes to the fastest method,
//! scene by scene: auto's time and choice beside every method's time on the same backend, in
//! one run.

use crate::broadphase::Backend;
use crate::broadphase::auto::Choice;
use crate::error::{Error, Result};
use crate::run::bench::{FrameRun, measure};
use crate::run::gpu::LazyGpu;
use crate::run::registry::{self, AUTO};
use crate::scenes::{Scene, SceneKind, SceneParams};
use serde::Serialize;
use std::collections::BTreeMap;

/// The generated scenes the issue of `auto` names, at their sizes (`--scenes` default).
pub const DEFAULT_SCENES: &str = "paper:5000,paper:100000,density:1000000,clusters:1000000,\
                                  line-x:100000,one-point:2000,mixed-radii:200000,giant:100000,\
                                  wide:1000000";

/// Parses `KIND:N,...` into the kinds and sizes of generated scenes.
pub fn parse_scenes(list: &str) -> Result<Vec<(SceneKind, usize)>> {
    let bad = |item: &str, why: &str| {
        Error::Config(format!(
            "--scenes: '{}' {why} (expected KIND:N, such as density:1000000)",
            crate::error::shown(item)
        ))
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (kind, n) = item
                .split_once(':')
                .ok_or_else(|| bad(item, "has no ':N'"))?;
            let kind = SceneKind::ALL
                .into_iter()
                .find(|k| k.name() == kind.trim() && *k != SceneKind::Rotating)
                .ok_or_else(|| bad(item, "names no sphere scene"))?;
            let n = n
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 2)
                .ok_or_else(|| bad(item, "has no object count of at least 2"))?;
            crate::run::bench::check_scene_size(n)?;
            Ok((kind, n))
        })
        .collect()
}

/// One scene: auto's time and choice, every method's time (`None`: its first frame took longer
/// than the budget, so it cannot be the fastest), the fastest and auto's ratio to it.
#[derive(Clone, Debug, Serialize)]
pub struct AutoRow {
    pub scene: String,
    pub n: usize,
    pub backend: Backend,
    pub device: String,
    pub auto_ms: f64,
    pub chosen: Option<Choice>,
    /// Whether auto's pairs matched the CPU reference's on its first and last frames.
    pub verified: Option<bool>,
    pub method_ms: BTreeMap<String, Option<f64>>,
    pub best_method: String,
    pub best_ms: f64,
    /// `auto_ms / best_ms` (the target: at most 1.25).
    pub ratio: f64,
}

/// What `auto-bench` runs.
pub struct AutoBenchConfig {
    pub scenes: Vec<Scene>,
    pub backend: Backend,
    /// The methods auto is compared with (names `measure` takes).
    pub methods: Vec<String>,
    pub frames: usize,
    /// A method whose first (untimed) frame takes longer than this many seconds, and longer
    /// than auto's, is not timed further.
    pub budget_s: f64,
}

/// Runs `cfg`, calling `progress` with a line before each measurement.
pub fn auto_bench(
    cfg: &AutoBenchConfig,
    gpu: &mut LazyGpu,
    mut progress: impl FnMut(&str),
) -> Result<Vec<AutoRow>> {
    let backends = [cfg.backend];
    let timed = FrameRun {
        frames: cfg.frames,
        count_frames: cfg.frames,
        count_only: false,
        events: false,
    };
    let probe = FrameRun {
        frames: 1,
        count_frames: 1,
        ..timed
    };
    let mut rows = Vec::new();
    for scene in &cfg.scenes {
        let what = format!("{} n = {}", scene.name, scene.len());
        progress(&format!("{what}: auto"));
        let (auto_rows, ok) = measure(
            scene,
            &[AUTO.to_string()],
            &backends,
            timed,
            true,
            None,
            gpu,
        )?;
        let auto = &auto_rows[0];
        let mut method_ms = BTreeMap::new();
        for name in &cfg.methods {
            progress(&format!("{what}: {name}"));
            let (first, _) = measure(
                scene,
                std::slice::from_ref(name),
                &backends,
                probe,
                false,
                None,
                gpu,
            )?;
            let first_ms = first[0].ms_per_frame;
            let ms = if first_ms > 1e3 * cfg.budget_s && first_ms > auto.ms_per_frame {
                None
            } else {
                let (r, _) = measure(
                    scene,
                    std::slice::from_ref(name),
                    &backends,
                    timed,
                    false,
                    None,
                    gpu,
                )?;
                Some(r[0].ms_per_frame)
            };
            method_ms.insert(name.clone(), ms);
        }
        let (best_method, best_ms) = method_ms
            .iter()
            .filter_map(|(m, ms)| ms.map(|ms| (m.clone(), ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or_else(|| (AUTO.to_string(), auto.ms_per_frame));
        rows.push(AutoRow {
            scene: scene.name.clone(),
            n: scene.len(),
            backend: cfg.backend,
            device: auto.device.clone(),
            auto_ms: auto.ms_per_frame,
            chosen: auto.chosen.clone(),
            verified: auto.verified.map(|v| v && ok),
            method_ms,
            best_ms,
            ratio: auto.ms_per_frame / best_ms,
            best_method,
        });
    }
    Ok(rows)
}

/// The scenes of `kinds` (seed `seed`), generated.
pub fn generate(kinds: &[(SceneKind, usize)], seed: u64) -> Vec<Scene> {
    kinds
        .iter()
        .map(|&(k, n)| Scene::generate(k, &SceneParams::new(n, seed)))
        .collect()
}

/// `--methods`: the list `measure` takes, without `auto` (compared with, not against itself).
pub fn candidate_methods(list: &str) -> Result<Vec<String>> {
    let mut methods = registry::parse_methods(list)?;
    methods.retain(|m| m != AUTO);
    if methods.is_empty() {
        return Err(Error::Config(
            "--methods: name at least one method besides auto".into(),
        ));
    }
    Ok(methods)
}
