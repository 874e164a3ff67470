//! `sweepfan selftest`: every GPU stage against the CPU reference on this machine's adapter;
//! one line per check, exit 1 on any mismatch.

use crate::args::BackendArg;
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan::experiments::selftest::{Level, SelftestConfig, Stage, run};
use sweepfan::report::selftest::{check_line, summary, write_json};
use sweepfan::run::gpu::LazyGpu;

#[derive(Args)]
pub struct SelftestArgs {
    /// The backend checked against the CPU reference: gpu (the only one).
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Gpu))]
    pub backend: BackendArg,
    /// Sizes that finish within minutes on a software adapter (the default).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Also sizes grown to what the adapter allows (16M+ objects on a large GPU).
    #[arg(long)]
    pub full: bool,
    /// Write the checks as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run one stage's checks only: sort, spheres, boxes, sector, rotating or events.
    #[arg(long)]
    pub only: Option<String>,
    /// Corrupt one stage's GPU output before comparing (sort, spheres, boxes, sector,
    /// rotating, events): shows that the checks can fail.
    #[arg(long, hide = true)]
    pub inject_fault: Option<String>,
}

pub fn exec(a: SelftestArgs, gpu: &mut LazyGpu) -> Result<bool> {
    if a.backend.0 != Backend::Gpu {
        bail!("selftest checks the GPU against the CPU reference: only --backend gpu applies");
    }
    let stage = |flag: &str, name: Option<&str>| -> Result<Option<Stage>> {
        match name {
            None => Ok(None),
            Some(n) => match Stage::from_name(n) {
                Some(s) => Ok(Some(s)),
                None => {
                    bail!(
                        "{flag}: unknown stage '{}' (sort, spheres, boxes, sector, rotating or \
                         events)",
                        sweepfan::error::shown(n)
                    )
                }
            },
        }
    };
    let only = stage("--only", a.only.as_deref())?;
    let fault = stage("--inject-fault", a.inject_fault.as_deref())?;
    crate::args::check_outputs(&[("--json", a.json.as_deref())], &[], &[])?;
    let ctx = gpu.get()?;
    let cfg = SelftestConfig {
        level: if a.full { Level::Full } else { Level::Quick },
        seed: a.seed,
        only,
        fault,
    };
    // Where the checks run, first: a run on a software adapter, or on a driver with other
    // limits or subgroup sizes, says so before any result (docs/design.md §9.5).
    for line in crate::commands::info::context_lines(&ctx, "adapter") {
        outln!("{line}");
    }
    outln!("selftest ({}) on {}", cfg.level.name(), gpu.device());
    let print = |c: &sweepfan::experiments::selftest::Check| outln!("{}", check_line(c));
    let report = run(&ctx, &cfg, Some(&print))?;
    outln!("{}", summary(&report));
    if let Some(path) = &a.json {
        write_json(path, &report)?;
    }
    Ok(report.passed())
}
