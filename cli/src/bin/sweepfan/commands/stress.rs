//! `sweepfan stress`: double n on the density scene until a time budget or `--max-n`,
//! verifying every step.

use crate::args::values::{self, method_for_shape};
use crate::args::{BackendArg, Outputs, Shape, progress_bar};
use anyhow::Result;
use clap::Args;
use sweepfan::Backend;
use sweepfan_cli::report::bench::stress_table;
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::stress::{Stress, StressConfig};

#[derive(Args)]
pub struct StressArgs {
    #[arg(long, value_enum, default_value_t = BackendArg(Backend::Gpu))]
    pub backend: BackendArg,
    /// sap or grid (or any method; the CPU reference is grid, or sap when checking grid on the CPU).
    #[arg(long, default_value = "grid")]
    pub method: String,
    #[arg(long, default_value_t = 65_536, value_parser = values::objects)]
    pub start_n: usize,
    #[arg(long, default_value_t = 4_194_304, value_parser = values::objects)]
    pub max_n: usize,
    /// Stop doubling once this many seconds have passed.
    #[arg(long, default_value_t = 600.0, value_parser = values::seconds)]
    pub budget_s: f64,
    /// Frames timed per step.
    #[arg(long, default_value_t = 3, value_parser = values::count)]
    pub frames: usize,
    /// Volume fraction of the density scene, in (0, 0.74) (the rule of `bench`).
    #[arg(long, default_value_t = 0.01, value_parser = values::volume_fraction)]
    pub volume_fraction: f32,
    #[arg(long, default_value_t = 1, value_parser = values::seed)]
    pub seed: u64,
    #[command(flatten)]
    pub out: Outputs,
}

pub fn exec(a: StressArgs, gpu: &mut LazyGpu) -> Result<bool> {
    method_for_shape("--method", &a.method, Shape::Sphere)?;
    a.out.check(&[])?;
    let cfg = StressConfig {
        method: a.method.clone(),
        backend: a.backend.0,
        start_n: a.start_n,
        max_n: a.max_n,
        budget_s: a.budget_s,
        frames: a.frames,
        volume_fraction: a.volume_fraction,
        seed: a.seed,
    };
    let steps = cfg.steps();
    let stress = Stress::new(cfg, gpu)?;
    say!(
        a.out.stdout_taken(),
        "stress: {} [{}] on {}, density scene (volume fraction {}), n doubling from {} to {}, \
         budget {} s; each step verified against {} [cpu]",
        a.method,
        a.backend.0.as_str(),
        stress.device,
        a.volume_fraction,
        a.start_n,
        a.max_n,
        a.budget_s,
        stress.reference_name
    );
    let bar = progress_bar(steps);
    let outcome = stress.run(Some(&bar))?;
    bar.finish_and_clear();
    say!(a.out.stdout_taken(), "{}", stress_table(&outcome.rows));
    say!(
        a.out.stdout_taken(),
        "stopped: {}; largest n verified: {}",
        outcome.stop_reason,
        outcome
            .rows
            .iter()
            .filter(|r| r.verified == Some(true))
            .map(|r| r.n)
            .max()
            .unwrap_or(0)
    );
    a.out.write(&outcome.rows, None)?;
    Ok(outcome.all_verified)
}
