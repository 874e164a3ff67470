//! The README's figures that the code can recompute are checked against it (issue 40: numbers
//! that cannot go stale): the reproduction table's test counts (CPU, exact), and the GPU's
//! resident bytes per object. The self-test's check count is checked beside the quick
//! self-test itself (`cli_selftest`).

use sweepfan::{Backend, BroadPhase, Method};
use sweepfan_cli::run::bench::FrameRun;
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

pub const README: &str = include_str!("../../../README.md");

/// The whole numbers of `text` ("84,889 (83,700, +1.4%)" gives 84889 and 83700), in order.
fn whole_numbers(text: &str) -> Vec<u64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.' || c == '%'))
        .filter(|w| !w.is_empty() && !w.contains('.') && !w.contains('%'))
        .filter_map(|w| w.trim_matches(',').replace(',', "").parse().ok())
        .collect()
}

/// The README line starting with `start`.
fn line(start: &str) -> &'static str {
    README
        .lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("README has no line starting {start:?}"))
}

#[test]
fn the_reproduction_table_counts_are_what_reproduce_computes() {
    let mut gpu = LazyGpu::new(None);
    let run = FrameRun {
        frames: 10,
        count_frames: 10,
        count_only: false,
        events: false,
        untimed: 0,
    };
    let ns = [1000, 3000, 5000];
    let out = sweepfan_cli::experiments::broadphase_paper::reproduce(
        &ns,
        1,
        &[Backend::Cpu],
        run,
        None,
        &mut gpu,
    )
    .unwrap();
    let mut wrong = Vec::new();
    for n in ns {
        // | 1000 | 84,889 (83,700, +1.4%) | 41,315 (40,382, +2.3%) | 26,799 (35,661) |
        let cells: Vec<&str> = line(&format!("| {n} |")).split('|').collect();
        for (cell, method) in cells[2..5]
            .iter()
            .zip(["origin_distance", "xyz", "min_axis"])
        {
            let stated = whole_numbers(cell)[0];
            let row = out
                .rows
                .iter()
                .find(|r| r.n == n && r.method == method)
                .unwrap();
            let computed = row.tests_per_frame.round() as u64;
            if stated != computed {
                wrong.push(format!(
                    "{method} at n = {n}: README {stated}, computed {computed}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// "resident GPU memory X bytes per object for `grid`, Y for `sap`": the density scene's, as
/// `stress` reports them (at 65,536 spheres; within 0.05 of it at every larger size).
#[test]
fn the_resident_bytes_per_object_are_what_the_gpu_holds() {
    let text = README
        .split("resident GPU memory ")
        .nth(1)
        .expect("README states the resident GPU memory");
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|w| w.contains('.') && w.len() > 1)
        .take(2)
        .collect();
    let expected = format!(
        "{} bytes per object for `grid`, {} for `sap`",
        words[0], words[1]
    );
    assert!(text.starts_with(&expected), "{}", &text[..80]);
    let figures: Vec<f64> = words.iter().map(|w| w.parse().unwrap()).collect();
    let Some(ctx) = crate::common::test_gpu() else {
        return;
    };
    let ctx = std::sync::Arc::new(ctx);
    let scene = Scene::generate(SceneKind::Density, &SceneParams::new(65_536, 1));
    let mut wrong = Vec::new();
    for (method, stated) in [(Method::Grid, figures[0]), (Method::Sap, figures[1])] {
        let mut bp = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), method).unwrap();
        bp.find_pairs(&scene.spheres, Some(&mut Vec::new()))
            .unwrap();
        let held = sweepfan::gpu::GpuBroadPhase::resident_bytes_per_object(&bp);
        if (held - stated).abs() >= 0.05 {
            wrong.push(format!(
                "{}: the GPU holds {held:.2} bytes per object, the README says {stated}",
                method.name()
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
