//! `sweepfan selftest`: every GPU stage against the CPU reference on this machine's adapter;
//! one line per check, exit 1 on any mismatch.

use crate::args::{BackendArg, values};
use anyhow::{Result, bail};
use clap::Args;
use std::cell::RefCell;
use std::path::PathBuf;
use sweepfan::Backend;
use sweepfan_cli::experiments::selftest::{
    Level, Progress, SelftestConfig, SelftestReport, Stage, device_name, run,
};
use sweepfan_cli::report::output::is_replaced_whole;
use sweepfan_cli::report::selftest::{check_line, summary, write_json};
use sweepfan_cli::run::gpu::LazyGpu;

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
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
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
    // `--json -` takes standard output: the report then goes to stderr.
    let taken = crate::args::takes_stdout(a.json.as_deref());
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
        say!(taken, "{line}");
    }
    say!(taken, "selftest ({}) on {}", cfg.level.name(), gpu.device());
    // The JSON goes to a file as the checks arrive, so that a stopped run leaves what it
    // finished, marked incomplete; standard output, a pipe or a device get it once, at the end.
    let json_as_we_go = a.json.as_deref().filter(|p| is_replaced_whole(p));
    let so_far = RefCell::new(SelftestReport {
        device: device_name(&ctx),
        level: cfg.level,
        checks: Vec::new(),
    });
    let json_error = RefCell::new(None);
    let write_so_far = |path: &std::path::Path| {
        if json_error.borrow().is_none()
            && let Err(e) = write_json(path, &so_far.borrow(), false)
        {
            *json_error.borrow_mut() = Some(e);
        }
    };
    if let Some(path) = json_as_we_go {
        write_so_far(path);
    }
    let bar = spinner();
    let progress = |p: Progress| match p {
        Progress::Starting { name, n } => bar.set_message(format!("{name} (n = {n})")),
        Progress::Done(c) => {
            bar.suspend(|| say!(taken, "{}", check_line(c)));
            bar.inc(1);
            so_far.borrow_mut().checks.push(c.clone());
            if let Some(path) = json_as_we_go {
                write_so_far(path);
            }
        }
    };
    let report = run(&ctx, &cfg, Some(&progress))?;
    bar.finish_and_clear();
    if let Some(e) = json_error.into_inner() {
        return Err(e.into());
    }
    say!(taken, "{}", summary(&report));
    if let Some(path) = &a.json {
        write_json(path, &report, true)?;
    }
    Ok(report.passed())
}

/// A spinner on stderr (hidden when stderr is not a terminal): checks done, time, the check
/// running now (a large one may take minutes).
fn spinner() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {pos} checks done; {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
