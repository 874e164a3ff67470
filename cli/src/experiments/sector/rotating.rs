//! `bench --scene rotating`: both proxies on CPU and/or GPU over frames of the rotating scene,
//! as report rows (`tests_per_frame` = candidates, `pairs_per_frame` = exact hits). The first
//! and the last frame's GPU hits are checked against the CPU's when both backends run (both
//! pipelines keep state from frame to frame, which only the later frames exercise).

use crate::run::bench::Measurement;
use crate::run::row::{Row, cpu_device};
use std::time::Instant;
use sweepfan::broadphase::Backend;
use sweepfan::broadphase::ProxyFrame;
use sweepfan::cpu::RotatingCpu;
use sweepfan::error::{Error, Result};
use sweepfan::geom::sector::{Proxy, Swept};
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::RotatingGpu;
use sweepfan_scenes::free_bodies::BodyKind;
use sweepfan_scenes::rotating::{RotatingParams, RotatingScene};

/// Hits within this of touching (|signed distance - radius|) may differ between CPU and GPU.
const TIE: f32 = 1e-4;

/// Runs `frames` frames per proxy and backend. Each (proxy, backend) sees the same frames and
/// runs the whole pipeline for its proxy alone (the sphere sort is not shared), so its time is
/// honest. `gpu` is required when `backends` holds [`Backend::Gpu`].
pub fn bench_rotating(
    params: &RotatingParams,
    frames: usize,
    backends: &[Backend],
    gpu: Option<&GpuContext>,
) -> Result<Vec<Row>> {
    check_counts(params)?;
    let start = RotatingScene::generate(params)?;
    bench_rotating_scene(start, "boxes", frames, backends, gpu)
}

/// [`bench_rotating`] with rotating bodies of `kind` in any pose (docs/design.md §5.8) instead
/// of the thesis's boxes: the general conservative sector is their proxy.
pub fn bench_rotating_bodies(
    params: &RotatingParams,
    kind: BodyKind,
    frames: usize,
    backends: &[Backend],
    gpu: Option<&GpuContext>,
) -> Result<Vec<Row>> {
    check_counts(params)?;
    let start = RotatingScene::generate_bodies(params, kind)?;
    let what = kind.plural();
    bench_rotating_scene(start, what, frames, backends, gpu)
}

fn check_counts(params: &RotatingParams) -> Result<()> {
    // A benchmark of nothing would print rows of zeros as if they were measurements.
    if params.boxes == 0 || params.spheres == 0 {
        return Err(Error::Config(format!(
            "bench rotating: needs at least one box and one sphere, got {} boxes and {} spheres",
            params.boxes, params.spheres
        )));
    }
    Ok(())
}

/// Runs the frames of `start` (rotating `what`, for the rows' shape) per proxy and backend.
pub fn bench_rotating_scene<B: Swept>(
    start: RotatingScene<B>,
    what: &str,
    frames: usize,
    backends: &[Backend],
    gpu: Option<&GpuContext>,
) -> Result<Vec<Row>> {
    let mut gpu_pipeline = match (backends.contains(&Backend::Gpu), gpu) {
        (false, _) => None,
        (true, Some(ctx)) => Some((ctx, RotatingGpu::new(ctx)?)),
        (true, None) => {
            return Err(Error::Config(
                "bench rotating: the GPU backend needs a GPU context".into(),
            ));
        }
    };
    let verify = backends.contains(&Backend::Cpu) && gpu_pipeline.is_some();
    // The CPU's first frame against the brute force over every (box, sphere), where that is
    // cheap: a CPU run alone was checked by nothing.
    let tests = (start.boxes.len() as u64).saturating_mul(start.spheres.len() as u64);
    let brute_check = backends.contains(&Backend::Cpu) && tests <= BRUTE_FORCE_MAX_TESTS;
    let mut rows = Vec::new();
    for proxy in Proxy::ALL {
        // Frame 0's and the last frame's hits of each backend, when verifying, and the scene
        // of the last frame (every backend steps the same scene).
        let mut first_hits: Vec<Option<Vec<[u32; 2]>>> = Vec::new();
        let mut first_candidates: Vec<u64> = Vec::new();
        let mut last_hits: Vec<Option<Vec<[u32; 2]>>> = Vec::new();
        let mut last_scene = None;
        let last = frames.max(1) - 1;
        crate::run::check_frames(frames)?;
        for &backend in backends {
            let mut scene = start.clone();
            let mut m = Measurement::default();
            let mut cpu = RotatingCpu::default();
            for frame in 0..=last {
                crate::run::stop_if_interrupted()?;
                let want_hits =
                    (verify && frame == last) || ((verify || brute_check) && frame == 0);
                let before = match (backend, &gpu_pipeline) {
                    (Backend::Gpu, Some((ctx, _))) => Some(ctx.counts()),
                    _ => None,
                };
                let t = Instant::now();
                let out: ProxyFrame = match backend {
                    Backend::Cpu => cpu.frame(&scene.boxes, &scene.spheres, &[proxy], want_hits)?,
                    Backend::Gpu => {
                        let (ctx, p) = gpu_pipeline.as_mut().ok_or_else(|| {
                            Error::Config("bench rotating: no GPU pipeline".into())
                        })?;
                        p.frame(ctx, &scene.boxes, &scene.spheres, &[proxy], want_hits)?
                    }
                }
                .pop()
                .unwrap_or_default();
                m.record(t, out.candidates, out.hits, &out.stages);
                if let (Some(b), Some((ctx, _))) = (before, &gpu_pipeline) {
                    m.device.push(ctx.counts().since(b));
                }
                if frame == 0 {
                    first_hits.push(out.hit_pairs.clone());
                    first_candidates.push(out.candidates);
                }
                if frame == last && last > 0 {
                    last_hits.push(out.hit_pairs);
                    if last_scene.is_none() && verify {
                        last_scene = Some(scene.clone());
                    }
                }
                scene.step();
            }
            let device = match (backend, &gpu_pipeline) {
                (Backend::Gpu, Some((ctx, _))) => crate::run::gpu::device_label(ctx),
                _ => cpu_device(),
            };
            let (n, method) = (start.spheres.len(), proxy.method_name());
            rows.push(Row {
                events: None,
                chosen: None,
                shape: Some(format!("{} rotating {what}", start.boxes.len())),
                ..Row::measured("rotating", n, method, (backend, device), &m, frames)
            });
        }
        if let (true, Some(c)) = (
            brute_check,
            backends.iter().position(|&b| b == Backend::Cpu),
        ) {
            let (candidates, hits) =
                sweepfan::cpu::rotating_brute_force(&start.boxes, &start.spheres, proxy)?;
            let at = rows.len() - backends.len() + c;
            let row = &mut rows[at];
            let same = first_candidates[c] == candidates
                && first_hits[c].as_deref() == Some(hits.as_slice());
            row.verified = Some(same);
            row.verified_against = Some("rotating brute force (cpu)".into());
        }
        if verify {
            let cpu_at = backends.iter().position(|&b| b == Backend::Cpu);
            let gpu_at = backends.iter().position(|&b| b == Backend::Gpu);
            if let (Some(c), Some(g)) = (cpu_at, gpu_at) {
                let (mut ok, mut ties) = compare_hits(
                    &start,
                    first_hits[c].as_deref().unwrap_or_default(),
                    first_hits[g].as_deref().unwrap_or_default(),
                );
                if let Some(scene) = &last_scene {
                    let (last_ok, last_ties) = compare_hits(
                        scene,
                        last_hits[c].as_deref().unwrap_or_default(),
                        last_hits[g].as_deref().unwrap_or_default(),
                    );
                    ok &= last_ok;
                    ties += last_ties;
                }
                let base = rows.len() - backends.len();
                let cpu_tests = rows[base + c].tests_per_frame;
                let row = &mut rows[base + g];
                // Candidates are decided by identical f32 arithmetic: they must match exactly.
                let same_candidates = row.tests_per_frame == cpu_tests;
                row.verified = Some(ok && same_candidates);
                row.verified_against = Some(format!("{} (cpu)", proxy.method_name()));
                row.near_touching_differences = Some(ties);
            }
        }
    }
    Ok(rows)
}

/// Most (box, sphere) tests for which a CPU row is checked against the brute force (about a
/// second on one core).
pub const BRUTE_FORCE_MAX_TESTS: u64 = 1 << 26;

/// Sorted hit lists compared: (all differences are rounding ties, number of ties).
pub(crate) fn compare_hits<B: Swept>(
    scene: &RotatingScene<B>,
    cpu: &[[u32; 2]],
    gpu: &[[u32; 2]],
) -> (bool, usize) {
    let differing = cpu
        .iter()
        .filter(|p| gpu.binary_search(p).is_err())
        .chain(gpu.iter().filter(|p| cpu.binary_search(p).is_err()));
    let (mut ok, mut ties) = (true, 0);
    for p in differing {
        let (Some(b), Some(s)) = (
            scene.boxes.get(p[0] as usize),
            scene.spheres.get(p[1] as usize),
        ) else {
            ok = false;
            continue;
        };
        let gap = (b.conservative_sector().signed_distance(s.center) - s.radius).abs();
        if gap < TIE {
            ties += 1;
        } else {
            ok = false;
        }
    }
    (ok, ties)
}
