//! `sweepfan shaders`: every shader module exactly as the pipelines compile it, one `.wgsl`
//! file each, for validators other than wgpu's own (Tint: `scripts/tint.sh`); with
//! `--compile-report`, what each pipeline costs the adapter's driver to build.

use crate::args::values;
use anyhow::Result;
use std::path::PathBuf;
use sweepfan::gpu::instrument::{CompileLimits, PeakRss, compile_report};
use sweepfan_cli::run::gpu::LazyGpu;

#[derive(clap::Args)]
pub struct ShadersArgs {
    /// Directory to write the modules into (created if missing).
    #[arg(long, required_unless_present = "compile_report")]
    out: Option<PathBuf>,
    /// With --out: the subgroup size the constants are generated for (power of two, 4..=128)
    /// [default: 32].
    #[arg(long, requires = "out", value_parser = values::subgroup_size)]
    subgroup_size: Option<u32>,
    /// With --out: write `enable subgroups;` first in modules that use subgroup builtins (Tint
    /// needs it; naga rejects it).
    #[arg(long, requires = "out")]
    enable_subgroups: bool,
    /// Build every pipeline on the selected adapter, one at a time, and print each one's
    /// creation time and the process's peak memory meanwhile (docs/design.md §9.12).
    #[arg(long)]
    compile_report: bool,
    /// With --compile-report: the rows as JSON.
    #[arg(long, requires = "compile_report")]
    json: Option<PathBuf>,
    /// With --compile-report: fail (exit 1) when a pipeline takes longer than this many seconds
    /// (default: no limit).
    #[arg(long, requires = "compile_report", value_parser = values::seconds)]
    max_seconds: Option<f64>,
    /// With --compile-report: fail (exit 1) when the peak resident memory while a pipeline is
    /// built passes this many MiB (default: no limit).
    #[arg(long, requires = "compile_report", value_parser = values::mebibytes)]
    max_rss_mb: Option<u64>,
}

impl ShadersArgs {
    /// Whether the command opens a device (the compile report builds on one; the modules are
    /// written without one).
    pub fn opens_a_device(&self) -> bool {
        self.compile_report
    }
}

pub fn exec(a: ShadersArgs, gpu: &mut LazyGpu) -> Result<bool> {
    // `--json -` takes standard output: the report then goes to stderr.
    let taken = crate::args::takes_stdout(a.json.as_deref());
    // --out made with its parents if missing (as its help says), then checked as any output
    // directory: refused where a file is, and no --json among its modules.
    if let Some(out) = a.out.as_deref().filter(|o| !o.exists()) {
        std::fs::create_dir_all(out)
            .map_err(|e| anyhow::anyhow!("--out {}: cannot create it: {e}", out.display()))?;
    }
    crate::args::check_outputs(
        &[("--json", a.json.as_deref())],
        &[("--out", a.out.as_deref())],
        &[],
    )?;
    if let Some(out) = &a.out {
        // Through the output module (docs/design.md §8.3): a file at --out is an error naming
        // it, each module is written atomically.
        let math = sweepfan_cli::run::gpu::with_env(Default::default())?.math;
        let modules = sweepfan::gpu::instrument::module_files(
            a.subgroup_size.unwrap_or(32),
            math,
            a.enable_subgroups,
        )?;
        let written = sweepfan_cli::report::output::write_tree(out, &modules)?;
        for path in written {
            say!(taken, "{}", path.display());
        }
    }
    if !a.compile_report {
        return Ok(true);
    }
    let ctx = gpu.get()?;
    let limits = CompileLimits {
        seconds: a.max_seconds.unwrap_or(f64::INFINITY),
        rss_bytes: a
            .max_rss_mb
            .map_or(u64::MAX, |mb| mb.saturating_mul(1 << 20)),
    };
    say!(taken, "pipeline creation on {}", ctx.adapter_label());
    say!(
        taken,
        "{:<44} {:<24} {:>9} {:>12}",
        "module",
        "entry",
        "seconds",
        "peak MiB"
    );
    let mut over = 0;
    let rows = compile_report(&ctx, Some(PeakRss::linux()), |r| {
        let why = r.over(&limits);
        over += usize::from(why.is_some());
        say!(
            taken,
            "{:<44} {:<24} {:>9.3} {:>12}{}",
            r.module,
            r.entry,
            r.seconds,
            r.peak_rss_bytes
                .map_or("-".into(), |b| (b >> 20).to_string()),
            why.map_or(String::new(), |w| format!("  OVER: {w}"))
        );
    })?;
    let slowest = rows.iter().map(|r| r.seconds).fold(0.0, f64::max);
    let peak = rows.iter().filter_map(|r| r.peak_rss_bytes).max();
    say!(
        taken,
        "{} pipelines; slowest {slowest:.3} s; highest peak {} MiB; {over} over the limits",
        rows.len(),
        peak.map_or("-".into(), |b| (b >> 20).to_string())
    );
    if let Some(path) = &a.json {
        sweepfan_cli::report::rows::write_json_value(path, &rows)?;
    }
    Ok(over == 0)
}
