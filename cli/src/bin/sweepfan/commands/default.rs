//! No subcommand: the default benchmark (paper box, n = 5000, every method, CPU and GPU when an
//! adapter exists, every method verified against brute force on the first and last frames).

use crate::args::progress_bar;
use anyhow::Result;
use sweepfan::{Backend, Method};
use sweepfan_cli::report::bench::wide_table;
use sweepfan_cli::run::bench::{FrameRun, measure};
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::row::cpu_device;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

pub fn exec(gpu: &mut LazyGpu) -> Result<bool> {
    let n = 5000;
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(n, 1));
    let methods: Vec<String> = Method::ALL.iter().map(|m| m.name().to_string()).collect();
    let mut backends = vec![Backend::Cpu];
    outln!(
        "sweepfan default benchmark: paper box (cube of side 100, r = 2, origin at the centre), \
         n = {n}, 10 frames, median ms per frame; every method verified against brute force \
         (CPU) on the first and the last frame."
    );
    match gpu.get() {
        Ok(_) => {
            backends.push(Backend::Gpu);
            outln!("GPU: {}", gpu.device());
        }
        // A run told which adapter to use fails without it (docs/design.md §9.5).
        Err(e) if gpu.expects_adapter() => {
            return Err(e.into());
        }
        Err(e) => outln!("GPU: none ({e:#}); GPU columns omitted."),
    }
    outln!("CPU: {}\n", cpu_device());
    let run = FrameRun::new(10);
    let bar = progress_bar((methods.len() * backends.len()) as u64);
    let (rows, ok) = measure(&scene, &methods, &backends, run, true, Some(&bar), gpu)?;
    bar.finish_and_clear();
    outln!("{}", wide_table(&rows));
    Ok(ok)
}
