//! `sweepfan selftest`: the conformance checks of every GPU stage against the CPU reference,
//! inside the binary, so that anyone with a GPU can run them without a Rust toolchain
//! (docs/design.md §9.5). Each check runs one stage on the GPU and on the CPU and compares:
//!
//! * **sort**: both radix sort variants (and the ballot matching of the subgroup one) on random,
//!   sorted, reversed, all-equal and few-unique keys, sizes across the 4,096-key block and the
//!   2D dispatch boundaries; the reference is a stable sort on the CPU;
//! * **spheres**: every broad-phase method on the paper box, the density scene and adversarial
//!   scenes; pairs against brute force (the CPU grid above [`BRUTE_FORCE_MAX_N`] objects),
//!   test counts against the CPU's same method;
//! * **boxes** and **polygons**: the AABB sweep + SAT pipeline against the all-pairs SAT (the
//!   CPU pipeline on large scenes);
//! * **sector**: the accuracy experiments' per-rotation histograms against the CPU's (the
//!   thesis's, and the general bodies' of docs/design.md §5.8);
//! * **rotating**: the rotating-box scene's candidates and hits against the CPU's;
//! * **events**: frame events on the device over moving frames (spheres and boxes) against a
//!   CPU tracker, the canonical pair order, pairs against the CPU grid.
//!
//! A check that fails with an error (too large, a walk cut short, a lost device) is a failed
//! check with the error as its detail; the run goes on.

mod events;
mod scenes;
mod sort;
mod worlds;

use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;
use sweepfan::error::Result;
use sweepfan::gpu::GpuContext;

/// Above this many objects the sphere checks take the CPU grid as the pair reference (itself
/// checked against brute force by the test suite), not brute force.
pub const BRUTE_FORCE_MAX_N: usize = 6_000;

/// How much to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Every stage at sizes that finish within minutes on a software adapter.
    Quick,
    /// The quick checks, then sizes grown to what the adapter allows (16M+ objects on a large
    /// GPU, sorts past 65,535 workgroups).
    Full,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Full => "full",
        }
    }
}

/// A family of checks: to run alone (`--only`), or whose GPU output is corrupted on purpose
/// before the comparison, to show that the checks can fail (the suite's mutation check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Sort,
    Spheres,
    Boxes,
    Sector,
    Rotating,
    Events,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Sort,
        Stage::Spheres,
        Stage::Boxes,
        Stage::Sector,
        Stage::Rotating,
        Stage::Events,
    ];

    /// The stage named `name` (as [`Stage::name`] writes it).
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Stage::Sort => "sort",
            Stage::Spheres => "spheres",
            Stage::Boxes => "boxes",
            Stage::Sector => "sector",
            Stage::Rotating => "rotating",
            Stage::Events => "events",
        }
    }
}

#[derive(Clone, Debug)]
pub struct SelftestConfig {
    pub level: Level,
    pub seed: u64,
    /// Runs only this stage's checks.
    pub only: Option<Stage>,
    /// Corrupts one stage's GPU output (tests only).
    pub fault: Option<Stage>,
}

/// One comparison of a GPU stage with the CPU reference.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    /// Objects (keys, spheres, shapes, rotations) in the check.
    pub n: u64,
    pub passed: bool,
    /// Not run: the check needs a binding above the limit set for this run
    /// (`--max-binding-bytes`), not the adapter's; neither passed nor failed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_run: bool,
    /// What was compared and, on failure, how it differs (or the error).
    pub detail: String,
    /// Wall time of the GPU call, upload and readback included (not the CPU reference).
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SelftestReport {
    /// Adapter name, type and backend.
    pub device: String,
    pub level: Level,
    pub checks: Vec<Check>,
}

impl SelftestReport {
    /// Whether some check passed and none failed (checks not run are neither).
    pub fn passed(&self) -> bool {
        self.checks.iter().any(|c| c.passed) && self.failed() == 0
    }

    pub fn failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| !c.passed && !c.not_run)
            .count()
    }

    /// Checks not run under a binding limit set for the run.
    pub fn not_run(&self) -> usize {
        self.checks.iter().filter(|c| c.not_run).count()
    }
}

/// What a run reports as it goes: a check about to run (its name and size), and each check
/// as it completes.
pub enum Progress<'a> {
    Starting { name: &'a str, n: u64 },
    Done(&'a Check),
}

/// Collects checks and reports each as it starts and completes.
pub(crate) struct Checks<'a> {
    /// Whether the context's binding limit was set below the adapter's.
    capped: bool,
    checks: Vec<Check>,
    progress: Option<&'a dyn Fn(Progress)>,
    pub(crate) fault: Option<Stage>,
}

impl Checks<'_> {
    /// Runs `gpu` (timed), then `compare` on its output: `Ok(detail)` passes, `Err(detail)`
    /// fails. An error from either is a failed check carrying the error. Once the caller has
    /// cancelled the run (Ctrl-C, docs/design.md §9.18), checks are neither run nor recorded:
    /// the run ends with what was finished, and [`run`] returns `Error::Interrupted`.
    pub(crate) fn run<T>(
        &mut self,
        name: String,
        n: u64,
        gpu: impl FnOnce() -> Result<T>,
        compare: impl FnOnce(T) -> Result<std::result::Result<String, String>>,
    ) {
        if crate::run::interrupted() {
            return;
        }
        if let Some(p) = self.progress {
            p(Progress::Starting { name: &name, n });
        }
        let start = Instant::now();
        let out = gpu();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        // A stage that cannot run under a binding limit the user set below the adapter's (it
        // has no parts) is not a failure of the device; under the adapter's own limit it is.
        let (passed, not_run, detail) = match out.and_then(compare) {
            Err(sweepfan::error::Error::Interrupted) => return,
            Ok(Ok(detail)) => (true, false, detail),
            Ok(Err(detail)) => (false, false, detail),
            Err(e) => (
                false,
                self.capped
                    && matches!(&e, sweepfan::Error::TooLarge { exceeds, .. } if exceeds.is_device_size()),
                format!("error: {e}"),
            ),
        };
        let check = Check {
            name,
            n,
            passed,
            not_run,
            detail,
            ms,
        };
        if let Some(p) = self.progress {
            p(Progress::Done(&check));
        }
        self.checks.push(check);
    }

    pub(crate) fn faulty(&self, stage: Stage) -> bool {
        self.fault == Some(stage)
    }
}

/// The device line of a report on `ctx`: adapter name, type and backend.
pub fn device_name(ctx: &GpuContext) -> String {
    crate::run::gpu::device_label(ctx)
}

/// A family of checks: runs its checks on the context into `checks`.
type Family = fn(&Arc<GpuContext>, &SelftestConfig, &mut Checks<'_>);

/// Runs every check on `ctx`; `progress` sees each check as it starts and completes.
pub fn run(
    ctx: &Arc<GpuContext>,
    cfg: &SelftestConfig,
    progress: Option<&dyn Fn(Progress)>,
) -> Result<SelftestReport> {
    let mut checks = Checks {
        capped: ctx.binding_capped(),
        checks: Vec::new(),
        progress,
        fault: cfg.fault,
    };
    // Each family of checks with its stage, in the order they run.
    let families: &[(Stage, Family)] = &[
        (Stage::Sort, sort::checks),
        (Stage::Spheres, scenes::sphere_checks),
        (Stage::Spheres, worlds::world_checks),
        (Stage::Boxes, scenes::shape_checks),
        (Stage::Boxes, scenes::contact_checks),
        (Stage::Sector, scenes::sector_checks),
        (Stage::Sector, scenes::free_sector_checks),
        (Stage::Rotating, scenes::rotating_checks),
        (Stage::Events, events::event_checks),
    ];
    for &(stage, family) in families {
        if cfg.only.is_none_or(|only| only == stage) {
            family(ctx, cfg, &mut checks);
        }
    }
    if crate::run::interrupted() {
        return Err(sweepfan::Error::Interrupted);
    }
    Ok(SelftestReport {
        device: device_name(ctx),
        level: cfg.level,
        checks: checks.checks,
    })
}
