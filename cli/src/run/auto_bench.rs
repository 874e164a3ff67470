//! `sweepfan auto-bench`: how close `auto` (docs/design.md §2.12) comes to the fastest method,
//! scene by scene: auto's time and choice beside every method's time on the same backend, in
//! one run.

use crate::run::bench::{FrameRun, measure};
use crate::run::gpu::LazyGpu;
use serde::Serialize;
use std::collections::BTreeMap;
use sweepfan::broadphase::Backend;
use sweepfan::broadphase::auto::Choice;
use sweepfan::error::{Error, Result};
use sweepfan::registry::AUTO;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// The generated scenes the issue of `auto` names, at their sizes (`--scenes` default).
pub const DEFAULT_SCENES: &str = "paper:5000,paper:100000,density:1000000,clusters:1000000,\
                                  line-x:100000,one-point:2000,mixed-radii:200000,giant:100000,\
                                  wide:1000000";

/// Parses `KIND:N,...` into the kinds and sizes of generated scenes.
pub fn parse_scenes(list: &str) -> Result<Vec<(SceneKind, usize)>> {
    let bad = |item: &str, why: &str| {
        Error::Config(format!(
            "--scenes: '{}' {why} (expected KIND:N, such as density:1000000)",
            sweepfan::error::shown(item)
        ))
    };
    list.split(',')
        .map(str::trim)
        .map(|item| {
            // An empty entry (`a,,b`) is refused, as every list option refuses it.
            if item.is_empty() {
                return Err(bad(item, "is empty"));
            }
            let (kind, n) = item
                .split_once(':')
                .ok_or_else(|| bad(item, "has no ':N'"))?;
            let spheres = || {
                SceneKind::ALL
                    .into_iter()
                    .filter(|k| *k != SceneKind::Rotating)
            };
            let kind = match spheres().find(|k| k.name() == kind.trim()) {
                Some(kind) => kind,
                None => {
                    let known: Vec<&str> = spheres().map(|k| k.name()).collect();
                    let why = if kind.trim() == SceneKind::Rotating.name() {
                        "names the rotating boxes' scene: auto chooses among sphere methods, \
                         on a sphere scene"
                    } else {
                        "names no sphere scene"
                    };
                    return Err(bad(item, &format!("{why}; one of {}", known.join(", "))));
                }
            };
            // One object has no pair for a method to find: nothing to choose between.
            let n = match n.trim().parse::<usize>() {
                Ok(n) if n >= 2 => n,
                Ok(_) => return Err(bad(item, "has fewer than 2 objects: nothing to choose")),
                Err(_) => return Err(bad(item, "has no object count of at least 2")),
            };
            sweepfan::broadphase::limits::check_scene_size(n)?;
            Ok((kind, n))
        })
        .collect()
}

/// One scene: auto's time and choice, every method's time (`None`: its first frame took longer
/// than the budget, or brute force past [`BRUTE_FORCE_MAX_N`] objects: it cannot be the
/// fastest), the fastest and auto's ratio to it.
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

/// Above this many objects brute force runs only when named (as in `bench`): a frame of 10^6
/// takes minutes.
pub const BRUTE_FORCE_MAX_N: usize = 100_000;

/// What `auto-bench` runs.
pub struct AutoBenchConfig {
    pub scenes: Vec<Scene>,
    pub backend: Backend,
    /// The methods auto is compared with (names `measure` takes).
    pub methods: Vec<String>,
    pub frames: usize,
    /// Rounds of timing: auto and every method once a round, each keeping its best round.
    pub rounds: usize,
    /// A method whose faster of two untimed frames takes longer than this many seconds, and
    /// longer than auto's frame, is not timed further.
    pub budget_s: f64,
    /// Whether `brute_force` was named (not only part of `all`): then it runs at any size.
    pub brute_force_named: bool,
}

/// Runs `cfg`, calling `progress` with a line before each measurement.
pub fn auto_bench(
    cfg: &AutoBenchConfig,
    gpu: &mut LazyGpu,
    mut progress: impl FnMut(&str),
) -> Result<Vec<AutoRow>> {
    let backends = [cfg.backend];
    // After one untimed frame of each fresh instance, as `--frames` says (its first frame pays
    // the instance's set-up: `auto`'s survey made `--frames 1` ratios 2-3x).
    let timed = FrameRun {
        untimed: 1,
        ..FrameRun::new(cfg.frames)
    };
    // Two frames: the first pays pipeline builds and first allocations, the second does not.
    let probe = FrameRun::new(2);
    let mut rows = Vec::new();
    let auto_name = AUTO.to_string();
    for scene in &cfg.scenes {
        let what = format!("{} n = {}", scene.name, scene.len());
        // Checked apart from the timing: auto's first and last frames' pairs against the CPU
        // reference (a reference between timed frames would slow the frames after it).
        progress(&format!("{what}: auto, checked"));
        let check = FrameRun::new(2);
        let one = std::slice::from_ref(&auto_name);
        let (checked, ok) = measure(scene, one, &backends, check, true, None, gpu)?;
        // Each round times auto, then every method still in the running, each in a fresh
        // instance; a method's time is its best round's median (the first method measured in
        // a process ran up to 1.3x slower than the same method later: rounds even that out).
        let mut auto_ms = f64::INFINITY;
        let mut chosen = None;
        let mut method_ms: BTreeMap<String, Option<f64>> = BTreeMap::new();
        for round in 0..cfg.rounds.max(1) {
            progress(&format!("{what}: auto, round {}", round + 1));
            let (auto_rows, _) = measure(scene, one, &backends, timed, false, None, gpu)?;
            auto_ms = auto_ms.min(auto_rows[0].ms_per_frame);
            chosen = auto_rows[0].chosen.clone();
            for name in &cfg.methods {
                if method_ms.get(name).is_some_and(Option::is_none) {
                    continue; // over budget in an earlier round
                }
                if name == "brute_force"
                    && scene.len() > BRUTE_FORCE_MAX_N
                    && !cfg.brute_force_named
                {
                    // Minutes a frame, n (n - 1) / 2 tests: it cannot be the fastest.
                    method_ms.insert(name.clone(), None);
                    continue;
                }
                progress(&format!("{what}: {name}, round {}", round + 1));
                let name_list = std::slice::from_ref(name);
                if round == 0 {
                    let (first, _) = measure(scene, name_list, &backends, probe, false, None, gpu)?;
                    let first_ms = first[0].ms_per_frame_min;
                    if first_ms > 1e3 * cfg.budget_s && first_ms > auto_ms {
                        method_ms.insert(name.clone(), None);
                        continue;
                    }
                }
                let (r, _) = measure(scene, name_list, &backends, timed, false, None, gpu)?;
                let best = method_ms.entry(name.clone()).or_insert(Some(f64::INFINITY));
                *best = best.map(|b| b.min(r[0].ms_per_frame));
            }
        }
        let auto = &checked[0];
        let (best_method, best_ms) = method_ms
            .iter()
            .filter_map(|(m, ms)| ms.map(|ms| (m.clone(), ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or_else(|| (AUTO.to_string(), auto_ms));
        rows.push(AutoRow {
            scene: scene.name.clone(),
            n: scene.len(),
            backend: cfg.backend,
            device: auto.device.clone(),
            auto_ms,
            chosen,
            verified: auto.verified.map(|v| v && ok),
            method_ms,
            best_ms,
            ratio: auto_ms / best_ms,
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
    let mut methods = super::methods::parse_methods(list)?;
    methods.retain(|m| m != AUTO);
    if methods.is_empty() {
        return Err(Error::Config(
            "--methods: name at least one method besides auto".into(),
        ));
    }
    Ok(methods)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_lists_are_read_whole_or_refused_by_entry() {
        let scenes = parse_scenes(" paper:10 , density:20").unwrap();
        assert_eq!(scenes, [(SceneKind::Paper, 10), (SceneKind::Density, 20)]);
        for (list, says) in [
            ("paper:10,,density:10", "'' is empty"),
            ("paper:10,", "'' is empty"),
            ("paper", "has no ':N'"),
            ("nope:10", "names no sphere scene; one of paper, density"),
            ("rotating:10", "names the rotating boxes' scene"),
            ("paper:1", "fewer than 2 objects"),
            ("paper:x", "has no object count of at least 2"),
        ] {
            let e = parse_scenes(list).unwrap_err().to_string();
            assert!(e.contains(says), "{list}: {e}");
        }
    }
}
