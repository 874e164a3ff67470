//! The sector CCD in the page (docs/design.md §5.7, §8.5): rotating boxes among moving spheres,
//! both proxies (the conservative sector and the speculative AABB) on the browser's GPU,
//! awaited, each frame's candidates and exact hits compared with the CPU's in the same page.

use crate::{Check, Run, gpu_result, input, page_gpu, put_back, take_kept};
use std::cell::RefCell;
use sweepfan::GpuContext;
use sweepfan::cpu::rotating_frame_cpu;
use sweepfan::geom::sector::{Proxy, Swept};
use sweepfan::gpu::RotatingGpu;
use sweepfan_scenes::rotating::{RotatingParams, RotatingScene};
use wasm_bindgen::prelude::*;

/// Hits within this of touching (|signed distance - radius|) may differ between the GPU and
/// the CPU: the exact test's rounding-level ties (docs/design.md §5.7).
const TIE: f32 = 1e-4;

/// Most such ties per proxy and frame (as `tests/suite/rotating.rs`): more is a wrong result,
/// however close to touching each is.
const MAX_TIES: usize = 2;

thread_local! {
    /// The page's rotating pipeline, kept across checks (its pipelines compile once).
    static GPU_ROTATING: RefCell<Option<RotatingGpu>> = const { RefCell::new(None) };
}

/// Forgets the kept pipeline (a new GPU context was opened).
pub(crate) fn forget_gpu_rotating() {
    GPU_ROTATING.with(|r| *r.borrow_mut() = None);
}

/// `run`'s `n` moving spheres and `n / 20` rotating boxes from its seed, stepped `frames - 1`
/// times (its scene's name is not read: the rotating scene is its own), both proxies on the GPU
/// opened by `open_gpu_async`; every frame's candidates equal to the CPU's and its hits too,
/// but for at most two ties within 1e-4 of touching per proxy. `pairs` (the GPU's) and
/// `reference_pairs` (the CPU's) count the conservative sector's hits (box, sphere) of the last
/// frame, `found` and `lost` its hits that began and ended over the frames.
#[wasm_bindgen]
pub async fn check_rotating_gpu_async(run: &Run) -> Result<Check, JsError> {
    let (n, seed, frames) = (run.n, run.seed, run.frames);
    let ctx = page_gpu()?;
    if n < 20 {
        return Err(JsError::new(
            "rotating: frames at least 1 and n at least 20 (one box per 20 spheres)",
        ));
    }
    let params = RotatingParams::new(n as usize / 20, n as usize, seed.into());
    let scene = RotatingScene::generate(&params)?;
    // Put back on every path.
    let mut gpu = take_kept(&GPU_ROTATING, || RotatingGpu::new(&ctx))?;
    let check = compare(&ctx, &mut gpu, scene, frames).await;
    put_back(&GPU_ROTATING, &ctx, gpu);
    Ok(gpu_result(check)?)
}

/// The frames of [`check_rotating_gpu_async`] through `gpu`.
async fn compare(
    ctx: &GpuContext,
    gpu: &mut RotatingGpu,
    mut scene: RotatingScene,
    frames: u32,
) -> sweepfan::Result<Check> {
    let mut out = Check::empty();
    out.reference = "the CPU's sector CCD, both proxies".into();
    let mut before: Vec<[u32; 2]> = Vec::new();
    input::begin();
    for frame in 0..frames {
        input::next_frame(frame, || scene.step()).await?;
        let start = web_time::Instant::now();
        let got = gpu
            .frame_async(ctx, &scene.boxes, &scene.spheres, &Proxy::ALL, true)
            .await?;
        out.frame_done(frame, frames, start);
        let want =
            input::limited(|| rotating_frame_cpu(&scene.boxes, &scene.spheres, &Proxy::ALL, true))?;
        // A proxy's frame missing from the GPU's answer is a disagreement, not fewer checks.
        out.agrees &= got.len() == want.len();
        for (g, w) in got.iter().zip(&want) {
            let (g_hits, w_hits) = (hits(g), hits(w));
            let differ: Vec<_> = differing(&g_hits, &w_hits).collect();
            out.agrees &= g.candidates == w.candidates
                && g.hits == g_hits.len() as u64
                && differ.len() <= MAX_TIES
                && differ.iter().all(|&&[b, s]| {
                    // A pair out of range (a wrong answer) is no tie.
                    match (scene.boxes.get(b as usize), scene.spheres.get(s as usize)) {
                        (Some(body), Some(sphere)) => tie(body, sphere),
                        _ => false,
                    }
                });
        }
        let Some(first) = got.first() else {
            return Err(sweepfan::Error::Config(
                "the GPU answered no proxy's frame".into(),
            ));
        };
        let now = hits(first);
        (out.pairs, out.reference_pairs) = (now.len() as u32, hits(&want[0]).len() as u32);
        if frame > 0 {
            out.found += now
                .iter()
                .filter(|p| before.binary_search(p).is_err())
                .count() as u32;
            out.lost += before
                .iter()
                .filter(|p| now.binary_search(p).is_err())
                .count() as u32;
        }
        let spheres_hit: Vec<[u32; 2]> = now.iter().map(|&[_, s]| [s, s]).collect();
        out.touching = crate::touching(scene.spheres.len(), &spheres_hit);
        before = now;
    }
    out.spheres = crate::drawn(&scene.spheres);
    Ok(out)
}

/// A proxy frame's sorted hit pairs (box, sphere).
fn hits(frame: &sweepfan::broadphase::ProxyFrame) -> Vec<[u32; 2]> {
    frame.hit_pairs.clone().unwrap_or_default()
}

/// The pairs in one sorted list and not the other.
fn differing<'a>(a: &'a [[u32; 2]], b: &'a [[u32; 2]]) -> impl Iterator<Item = &'a [u32; 2]> {
    let only = |x: &'a [[u32; 2]], y: &'a [[u32; 2]]| {
        x.iter().filter(move |p| y.binary_search(p).is_err())
    };
    only(a, b).chain(only(b, a))
}

/// Whether the sphere is within [`TIE`] of touching the box's swept sector.
fn tie(body: &impl Swept, sphere: &sweepfan::Sphere) -> bool {
    let gap = body.conservative_sector().signed_distance(sphere.center) - sphere.radius;
    gap.abs() < TIE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page's rotating check natively, through the async frame it awaits (lavapipe here):
    /// hits found, agreeing with the CPU over moving frames.
    #[test]
    fn the_rotating_check_agrees_with_the_cpu_natively() {
        crate::open_test_gpu();
        let run = Run::new("paper".into(), 6000.0, 3.0, 3.0).unwrap();
        let c = pollster::block_on(check_rotating_gpu_async(&run)).unwrap();
        assert!(
            c.agrees && c.pairs > 50 && c.found > 0 && c.lost > 0,
            "{c:?}"
        );
    }

    #[test]
    fn only_differing_pairs_are_listed() {
        let a = [[0, 1], [0, 2], [3, 4]];
        let b = [[0, 2], [5, 6]];
        let d: Vec<_> = differing(&a, &b).copied().collect();
        assert_eq!(d, [[0, 1], [3, 4], [5, 6]]);
    }
}
