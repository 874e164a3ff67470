//! What each kernel costs the driver to compile: every module of [`crate::gpu::shader::modules`]
//! and every `@compute` entry point in it, built into a pipeline on the context's adapter, with
//! the wall time of the pipeline's creation and the process's peak resident memory while it
//! was created (`sweepfan shaders --compile-report`; docs/design.md §9.12).
//!
//! Drivers compile lazily in different places (shader module or pipeline), so each entry point
//! gets a module of its own and the time covers both. The memory is the process's peak resident
//! set during the creation, as the caller's [`PeakRss`] measures it: the library reads no
//! process file unless the caller passes [`PeakRss::linux`] (`/proc/self/status` after
//! resetting the peak through `/proc/self/clear_refs`, which also resets it for the rest of the
//! process); without one the memory is `None`.

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::shader;
use web_time::Instant;

/// One pipeline's creation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PipelineCompile {
    /// The module's name (the path under `shaders/`, with its variant).
    pub module: String,
    /// The entry point.
    pub entry: String,
    /// Wall time of module plus pipeline creation.
    pub seconds: f64,
    /// The process's peak resident set during the creation, in bytes (Linux only).
    pub peak_rss_bytes: Option<u64>,
}

/// Limits a report is held to (`--max-seconds`, `--max-rss-mb`).
#[derive(Debug, Clone, Copy)]
pub struct CompileLimits {
    /// Most seconds of module plus pipeline creation.
    pub seconds: f64,
    /// Largest peak resident set during a creation, in bytes.
    pub rss_bytes: u64,
}

impl PipelineCompile {
    /// Why this pipeline breaks `limits`, or `None`.
    pub fn over(&self, limits: &CompileLimits) -> Option<String> {
        let mut why = Vec::new();
        if self.seconds > limits.seconds {
            why.push(format!("{:.2} s > {} s", self.seconds, limits.seconds));
        }
        if let Some(rss) = self.peak_rss_bytes.filter(|&b| b > limits.rss_bytes) {
            why.push(format!(
                "peak {} MB > {} MB",
                rss >> 20,
                limits.rss_bytes >> 20
            ));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

/// The `@compute` entry points of a WGSL source, in order (line comments ignored).
pub fn entry_points(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("@compute") {
        rest = &rest[at + "@compute".len()..];
        if let Some(f) = rest.find("fn ") {
            let name: String = rest[f + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// How a report measures the memory of each pipeline's creation: `reset` before it, `peak`
/// (bytes) after. The caller chooses; [`PeakRss::linux`] is the process's own record.
#[derive(Clone, Copy, Debug)]
pub struct PeakRss {
    /// Starts a new peak.
    pub reset: fn(),
    /// The peak since the last reset, in bytes, where known.
    pub peak: fn() -> Option<u64>,
}

impl PeakRss {
    /// The process's peak resident set on Linux: `VmHWM` of `/proc/self/status`, reset through
    /// `/proc/self/clear_refs` (which resets the process's record for everyone; elsewhere the
    /// peak is `None`).
    pub fn linux() -> Self {
        Self {
            reset: reset_peak_rss,
            peak: peak_rss_bytes,
        }
    }
}

/// Builds every pipeline the library can build on `ctx`, one at a time, and reports each, its
/// memory measured by `rss` where given. `progress` sees each row as it is measured (a slow
/// driver shows where it is). The context's compiled modules and pipelines are dropped before
/// each build (the next frame on `ctx` compiles its own again).
pub fn compile_report(
    ctx: &GpuContext,
    rss: Option<PeakRss>,
    mut progress: impl FnMut(&PipelineCompile),
) -> Result<Vec<PipelineCompile>> {
    // The scatter's constants as its pipeline plans them on this adapter.
    let lanes = crate::gpu::sort::radix_sort_subgroup::lanes_of(ctx).clamp(4, 128);
    // The scatter runs where its limits allow; the appends' subgroup twins wherever the device
    // has SUBGROUP (GpuContext::shader_file).
    let scatter = crate::gpu::sort::radix_sort_subgroup::unsupported(ctx).is_none();
    let mut rows = Vec::new();
    for module in shader::modules(lanes, ctx.math())? {
        let runs_here = if module.name.starts_with("sort/radix_sort_subgroup") {
            scatter
        } else {
            ctx.has_subgroups()
        };
        if module.uses_subgroups && !runs_here {
            continue;
        }
        // The tiled sort's variant of the tile this adapter takes (the other needs another
        // workgroup memory limit).
        if let Some(items) = module
            .name
            .strip_prefix("sort/radix_tiles.")
            .and_then(|rest| rest.strip_suffix(".wgsl"))
        {
            let tile = crate::gpu::sort::radix_tiles::tile_keys(ctx);
            if tile != items.parse::<u32>().ok().map(|i| i * 256) {
                continue;
            }
        }
        for entry in entry_points(&module.source) {
            // Between two pipelines, the caller's cancellation (docs/design.md §9.18): a report
            // takes seconds on a software driver, minutes where one build is slow.
            crate::broadphase::cancel::check(&crate::broadphase::cancel::current())?;
            ctx.forget_compiled();
            if let Some(rss) = rss {
                (rss.reset)();
            }
            let started = Instant::now();
            let compiled = ctx.shader(&module.name, &module.source)?;
            ctx.pipeline(&compiled, &entry, &[]).map_err(|e| {
                Error::gpu(
                    crate::error::GpuFailure::Shader,
                    format!("{} ({entry}) did not compile: {e}", module.name),
                )
            })?;
            let row = PipelineCompile {
                module: module.name.clone(),
                entry,
                seconds: started.elapsed().as_secs_f64(),
                peak_rss_bytes: rss.and_then(|rss| (rss.peak)()),
            };
            progress(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Resets the kernel's record of this process's peak resident set (Linux; ignored elsewhere).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak resident set since the last reset, from `VmHWM` (Linux), in bytes.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cancelled report builds no pipeline more and ends interrupted.
    #[test]
    fn a_cancelled_report_stops_before_the_next_pipeline() {
        use crate::broadphase::cancel::CancelToken;
        let Some(ctx) = crate::gpu::context::test_gpu() else {
            return;
        };
        let token = CancelToken::new();
        token.cancel();
        let mut built = 0;
        let e = crate::broadphase::limits::Limits::new()
            .with_cancel(token)
            .run(|| compile_report(&ctx, None, |_| built += 1))
            .unwrap_err();
        assert!(matches!(e, Error::Interrupted), "{e}");
        assert_eq!(built, 0);
    }

    #[test]
    fn entry_points_are_found_in_order() {
        let src = "fn helper() {}\n@compute @workgroup_size(256)\nfn first(inv: I) {}\n\
                   // @compute in a comment names nothing without fn\n@compute\n@workgroup_size(64)\nfn second_one() {}";
        assert_eq!(entry_points(src), ["first", "second_one"]);
    }

    #[test]
    fn every_module_with_compute_has_an_entry_point() {
        for m in shader::modules(32, shader::MathMode::Exact).unwrap() {
            assert!(!entry_points(&m.source).is_empty(), "{}", m.name);
        }
    }

    #[test]
    fn limits_name_what_is_over() {
        let row = PipelineCompile {
            module: "m".into(),
            entry: "e".into(),
            seconds: 6.0,
            peak_rss_bytes: Some(2 << 30),
        };
        let limits = CompileLimits {
            seconds: 5.0,
            rss_bytes: 1 << 30,
        };
        let why = row.over(&limits).unwrap();
        assert!(
            why.contains("6.00 s > 5 s") && why.contains("2048 MB > 1024 MB"),
            "{why}"
        );
        let fine = CompileLimits {
            seconds: 10.0,
            rss_bytes: 4 << 30,
        };
        assert_eq!(row.over(&fine), None);
    }
}
