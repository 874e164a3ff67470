//! The box / polygon pipeline timed per frame (`bench --shape obb|polygon`): CPU (AABB sweep
//! and prune, then SAT) and GPU, the first frame verified against [`Shapes::reference`] (the
//! all-pairs SAT, or the CPU pipeline above 5,000 shapes, which is then itself checked on a
//! sample), exactly ([`Shapes::differences`]). The shapes do not move, so
//! the last frame must find exactly the first frame's pairs: what a pipeline keeps between
//! frames is checked too.

use crate::run::bench::median;
use crate::run::gpu::LazyGpu;
use crate::run::row::{Row, cpu_device};
use crate::run::verify_shapes::{SAT_ALL_PAIRS_MAX_N, Shapes};
use std::collections::BTreeMap;
use std::time::Instant;
use sweepfan::broadphase::{Backend, Clock, Pair, canonicalize};
use sweepfan::cpu::sat::CpuBoxPipeline;
use sweepfan::error::Result;
use sweepfan::gpu::{GpuBoxPipeline, Proxy};

/// Runs `frames` frames of the pipeline on each backend; returns the rows and whether every
/// verified frame matched.
pub fn bench_shapes(
    shapes: &Shapes,
    scene_name: &str,
    frames: usize,
    backends: &[Backend],
    count_only: bool,
    verify: bool,
    gpu: &mut LazyGpu,
) -> Result<(Vec<Row>, bool)> {
    let frames = frames.max(1);
    let mut reference: Option<(&'static str, Vec<Pair>)> = None;
    let mut rows = Vec::new();
    let mut all_ok = true;
    for &backend in backends {
        let mut pipeline = match backend {
            Backend::Gpu => Some(GpuBoxPipeline::new(gpu.get()?, Proxy::Aabb)?),
            Backend::Cpu => None,
        };
        let ctx = match backend {
            Backend::Gpu => Some(gpu.get()?),
            Backend::Cpu => None,
        };
        // The CPU pipeline keeps its buffers from frame to frame, as the GPU one does.
        let mut cpu_pipeline = CpuBoxPipeline::new();
        let mut device = crate::run::bench::Measurement::default();
        let mut frame_ms = Vec::new();
        let mut stage_samples: BTreeMap<String, Vec<f64>> = Default::default();
        let (mut tests, mut found) = (0u64, 0u64);
        let (mut first, mut last_pairs): (Option<Vec<Pair>>, Option<Vec<Pair>>) = (None, None);
        let last = frames - 1;
        crate::run::check_frames(frames)?;
        for frame in 0..frames {
            crate::run::stop_if_interrupted()?;
            let store = !count_only || ((frame == 0 || frame == last) && verify);
            let before = ctx.as_ref().map(|c| c.counts());
            let t = Instant::now();
            let (pairs, stats) = match &mut pipeline {
                None => {
                    let (p, s) = shapes.cpu_with(&mut cpu_pipeline)?;
                    (Some(p), s)
                }
                Some(gp) => {
                    let mut out = Vec::new();
                    let s = shapes.gpu(gp, store.then_some(&mut out))?;
                    (store.then_some(out), s)
                }
            };
            frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
            if let (Some(b), Some(c)) = (before, &ctx) {
                device.device.push(c.counts().since(b));
            }
            tests += stats.tests;
            found += stats.pairs;
            // A stage may run several passes per frame (the sort's): sum them per frame.
            let mut this_frame: BTreeMap<String, f64> = Default::default();
            for st in &stats.stages {
                let label = match st.clock {
                    Clock::GpuTimestamp => format!("{} (gpu)", st.stage),
                    Clock::Wall | Clock::Host => st.stage.to_string(),
                };
                *this_frame.entry(label).or_default() += st.seconds * 1e3;
            }
            for (label, ms) in this_frame {
                stage_samples.entry(label).or_default().push(ms);
            }
            if frame == 0 {
                first = pairs;
            } else if frame == last {
                last_pairs = pairs;
            }
        }
        let stage_ms = stage_samples
            .into_iter()
            .map(|(k, v)| (k, median(&v)))
            .collect();
        let (mut verified, mut near, mut against) = (None, None, None);
        // Same shapes every frame: the last frame's pairs must be the first's.
        let mut repeated = true;
        if verify && let (Some(a), Some(b)) = (&mut first, &mut last_pairs) {
            canonicalize(a);
            canonicalize(b);
            if a != b {
                repeated = false;
                all_ok = false;
                eprintln!(
                    "MISMATCH {} [{}]: frame {last} found {} pairs where frame 0 found {} on \
                     the same shapes",
                    shapes.name(),
                    backend.as_str(),
                    b.len(),
                    a.len()
                );
            }
        }
        if verify && let Some(mut got) = first {
            canonicalize(&mut got);
            if reference.is_none() {
                reference = Some(shapes.reference()?);
            }
            let (reference_name, want) = reference.as_ref().expect("set");
            if backend == Backend::Cpu && *reference_name == "CPU pipeline" {
                // The CPU row is the reference: check it on a sample against the all-pairs SAT
                // rather than against itself.
                let (sample_pairs, wrong) = shapes.check_cpu_on_sample()?;
                if wrong > 0 {
                    all_ok = false;
                    eprintln!(
                        "MISMATCH {} [cpu] on a sample vs {}: {wrong} pairs differ",
                        shapes.name(),
                        shapes.all_pairs_name()
                    );
                }
                verified = Some(wrong == 0);
                against = Some(format!(
                    "the reference itself; its {SAT_ALL_PAIRS_MAX_N} shapes nearest shape 0 \
                     ({sample_pairs} pairs) checked against the {}",
                    shapes.all_pairs_name()
                ));
            } else {
                let wrong = Shapes::differences(want, &got);
                if !wrong.is_empty() {
                    all_ok = false;
                    eprintln!(
                        "MISMATCH {} [{}] vs {reference_name}: {} pairs differ",
                        shapes.name(),
                        backend.as_str(),
                        wrong.len()
                    );
                }
                verified = Some(wrong.is_empty());
                near = Some(0);
                against = Some(format!("{reference_name} ({} shapes)", shapes.name()));
            }
        }
        if !repeated {
            verified = Some(false);
        }
        rows.push(Row {
            scene: scene_name.to_string(),
            n: shapes.len(),
            method: match shapes {
                Shapes::Aabbs(_) => "aabb_sap".into(),
                _ => "aabb_sap+sat".into(),
            },
            backend,
            device: match backend {
                Backend::Cpu => cpu_device(),
                Backend::Gpu => gpu.device(),
            },
            frames,
            tests_per_frame: tests as f64 / frames as f64,
            pairs_per_frame: found as f64 / frames as f64,
            ms_per_frame: median(&frame_ms),
            ms_per_frame_min: frame_ms.iter().copied().fold(f64::INFINITY, f64::min),
            stage_ms,
            host_ms: None,
            speedup_vs_brute_force: None,
            verified,
            verified_against: against,
            near_touching_differences: near,
            gpu_bytes_per_object: None,
            host_bytes_per_object: None,
            device_bytes_per_object: None,
            device_traffic: None,
            events: None,
            host_waits_per_frame: device.device_per_frame().0,
            dispatches_per_frame: device.device_per_frame().1,
            steady: device.steady_counts(),
            shape: Some(shapes.name().into()),
            parts: None,
            chosen: None,
        });
        if backend == Backend::Cpu {
            let sat = if matches!(shapes, Shapes::Aabbs(_)) {
                ""
            } else {
                "+sat"
            };
            rows.last_mut().expect("pushed").method = format!("aabb_sweep{sat}");
        }
    }
    Ok((rows, all_ok))
}
