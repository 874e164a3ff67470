//! Many worlds in the page (docs/design.md §2.13, §8.5): `n` spheres as worlds of
//! [`WORLD_SIZE`] (each world the scene from its own seed, all in the same box, so worlds
//! overlap in space) with a floor shared by every world, in one call: on the GPU (one frame,
//! the world a key of its sort) checked against the CPU batch of the same method, or on the CPU
//! checked against a brute force per world.

use crate::{Check, generate, gpu_result, input, ms_since, page_gpu, put_back, take_kept};
use std::cell::RefCell;
use sweepfan::cpu::WorldBatch;
use sweepfan::gpu::GpuWorldBatch;
use sweepfan::{Method, SHARED, Sphere, WorldPairs};
use wasm_bindgen::prelude::*;

/// Spheres a world.
pub const WORLD_SIZE: u32 = 64;

thread_local! {
    /// The page's GPU world batch, kept across checks (it compiles once).
    static GPU_WORLDS: RefCell<Option<GpuWorldBatch>> = const { RefCell::new(None) };
}

/// Forgets the kept batch (a new GPU was opened).
pub(crate) fn forget_gpu_worlds() {
    GPU_WORLDS.with(|w| *w.borrow_mut() = None);
}

/// The batch: `n` spheres (rounded up to whole worlds) of `scene` as worlds of
/// [`WORLD_SIZE`], world k from seed `seed + k`, then one floor shared by every world.
fn batch(scene: &str, n: u32, seed: u32) -> sweepfan::Result<(Vec<Sphere>, Vec<u32>)> {
    let worlds = n.div_ceil(WORLD_SIZE).max(1);
    let (mut spheres, mut ids) = (Vec::new(), Vec::new());
    for k in 0..worlds {
        let s = generate(scene, WORLD_SIZE, seed.wrapping_add(k))?.spheres;
        ids.extend(std::iter::repeat_n(k, s.len()));
        spheres.extend(s);
    }
    // A floor under the box that the lowest spheres of each world touch.
    let low = spheres
        .iter()
        .map(|s| s.center.y - s.radius)
        .fold(f32::INFINITY, f32::min);
    let floor = Sphere::new(glam::Vec3::new(0.0, low - 1.0e4 + 2.0, 0.0), 1.0e4);
    spheres.push(floor);
    ids.push(SHARED);
    Ok((spheres, ids))
}

/// The check of `got` against `reference`, with the drawing (every world over the others).
fn check_of(spheres: &[Sphere], got: &WorldPairs, reference: &WorldPairs, ms: f64) -> Check {
    let mut out = Check::still(got.len(), reference.len(), got == reference, ms);
    // The floor is left out of the drawing: it would fill the view.
    let shown = &spheres[..spheres.len() - 1];
    out.spheres = crate::drawn(shown);
    out.touching = crate::touching(shown.len(), got.pairs());
    out
}

/// Many worlds on the CPU (the page's one thread): `WorldBatch::auto()` checked world by world
/// against brute force in each world.
#[wasm_bindgen]
pub fn check_worlds_cpu(scene: &str, n: f64, seed: f64) -> Result<Check, JsError> {
    crate::still_check(n, seed, |n, seed| check_worlds(scene, n, seed))
}

/// [`check_worlds_cpu`] with the library's error.
pub fn check_worlds(scene: &str, n: u32, seed: u32) -> sweepfan::Result<Check> {
    let (spheres, ids) = batch(scene, n, seed)?;
    let mut reference = WorldPairs::new();
    input::limited(|| {
        WorldBatch::new(Method::BruteForce).find_pairs(&spheres, &ids, Some(&mut reference))
    })?;
    let started = web_time::Instant::now();
    let mut got = WorldPairs::new();
    input::limited(|| WorldBatch::auto().find_pairs(&spheres, &ids, Some(&mut got)))?;
    let ms = ms_since(started);
    Ok(check_of(&spheres, &got, &reference, ms).against("brute force in each world"))
}

/// Many worlds on the GPU opened by `open_gpu_async`, in one frame (`GpuWorldBatch`, auto):
/// checked world by world against the CPU's batch of the same method (sap).
#[wasm_bindgen]
pub async fn check_worlds_gpu_async(scene: String, n: f64, seed: f64) -> Result<Check, JsError> {
    let (n, seed, _) = input::counts(n, seed, 1.0)?;
    let ctx = page_gpu()?;
    let (spheres, ids) = batch(&scene, n, seed)?;
    let mut reference = WorldPairs::new();
    input::limited(|| {
        WorldBatch::new(Method::Sap).find_pairs(&spheres, &ids, Some(&mut reference))
    })?;
    let mut tested = take_kept(&GPU_WORLDS, || GpuWorldBatch::auto(ctx.clone()))?;
    let started = web_time::Instant::now();
    let mut got = WorldPairs::new();
    let result = tested
        .find_pairs_async(&spheres, &ids, Some(&mut got))
        .await;
    let ms = ms_since(started);
    put_back(&GPU_WORLDS, &ctx, tested);
    gpu_result(result)?;
    Ok(check_of(&spheres, &got, &reference, ms).against("the CPU's batch, sap"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worlds_check_agrees_on_the_cpu_and_the_floor_meets_worlds() {
        let check = check_worlds("paper", 640, 3).unwrap();
        assert!(check.agrees);
        assert!(check.pairs > 0);
        let (spheres, ids) = batch("paper", 640, 3).unwrap();
        assert_eq!((spheres.len(), ids.len()), (641, 641));
        let mut out = WorldPairs::new();
        WorldBatch::new(Method::BruteForce)
            .find_pairs(&spheres, &ids, Some(&mut out))
            .unwrap();
        let floor = 640u32;
        let worlds_on_floor = out
            .iter()
            .filter(|(_, p)| p.iter().any(|p| p[1] == floor))
            .count();
        assert!(
            worlds_on_floor >= 5,
            "{worlds_on_floor} of 10 worlds touch the floor"
        );
    }

    #[test]
    fn the_gpu_worlds_check_agrees_with_the_cpu_natively() {
        crate::open_test_gpu();
        for (scene, n) in [("paper", 2048.0), ("clusters", 1000.0)] {
            let c = pollster::block_on(check_worlds_gpu_async(scene.into(), n, 7.0)).unwrap();
            assert!(c.agrees && c.pairs > 0, "{scene}: {c:?}");
            assert_eq!(c.pairs, c.reference_pairs);
        }
    }
}
