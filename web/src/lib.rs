//! sweepfan in the browser (docs/design.md §8.5): the library compiled for
//! `wasm32-unknown-unknown` and exported through wasm-bindgen. What runs there today: every
//! CPU method, on the page's one thread (rayon runs its work on the calling thread), each
//! result checked in the same page against brute force. The GPU path waits for the device,
//! which a page cannot block on: its calls return `Unsupported` there until they have async
//! entry points.
//!
//! The same functions build natively, where `cargo test -p sweepfan-web` checks them.

use sweepfan::{BroadPhase, EventTracker, Method, Pair, Scene, SceneKind, SceneParams, cpu};
use wasm_bindgen::prelude::*;

/// One scene through one method and through brute force, in the same process.
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Check {
    /// Pairs the method found (the last frame's, for a moving scene).
    pub pairs: u32,
    /// Pairs brute force found on the same spheres.
    pub brute_force_pairs: u32,
    /// Contacts that began and ended over the frames after the first (moving scenes).
    pub found: u32,
    /// See `found`.
    pub lost: u32,
    /// Every frame's pair set equal to brute force's (canonical: `i < j`, sorted).
    pub agrees: bool,
    /// The method's time per frame, milliseconds (the page's clock).
    pub ms: f64,
}

/// `scene` (a generator's name: paper, density, clusters, mixed-radii, ...) with `n` spheres
/// from `seed`, moved `frames - 1` times, through `method` (grid, sap, brute-force, ...) on
/// the CPU; every frame compared with brute force. An unknown name or an invalid scene is an
/// error naming it.
#[wasm_bindgen]
pub fn check_cpu(
    scene: &str,
    n: u32,
    seed: u32,
    method: &str,
    frames: u32,
) -> Result<Check, JsError> {
    Ok(check(scene, n, seed, method, frames)?)
}

/// [`check_cpu`] with the library's error.
pub fn check(scene: &str, n: u32, seed: u32, method: &str, frames: u32) -> sweepfan::Result<Check> {
    let kind = SceneKind::ALL
        .into_iter()
        .find(|k| k.name() == scene.replace('_', "-"))
        .ok_or_else(|| {
            sweepfan::Error::Config(format!(
                "unknown scene '{scene}' (known: {})",
                SceneKind::ALL.map(SceneKind::name).join(", ")
            ))
        })?;
    let method = Method::parse(method)?;
    if frames == 0 {
        return Err(sweepfan::Error::Config("frames: at least 1".into()));
    }
    let mut scene = Scene::generate(kind, &SceneParams::new(n as usize, seed.into()));
    let (mut tested, mut reference) = (
        cpu::broad_phase(method),
        cpu::broad_phase(Method::BruteForce),
    );
    let (mut tested_events, mut reference_events) = (EventTracker::new(), EventTracker::new());
    let mut out = Check {
        pairs: 0,
        brute_force_pairs: 0,
        found: 0,
        lost: 0,
        agrees: true,
        ms: 0.0,
    };
    for frame in 0..frames {
        if frame > 0 {
            scene.step();
        }
        let start = web_time::Instant::now();
        let pairs = pairs_of(&mut *tested, &scene)?;
        out.ms += start.elapsed().as_secs_f64() * 1e3 / f64::from(frames);
        let expected = pairs_of(&mut *reference, &scene)?;
        (out.pairs, out.brute_force_pairs) = (pairs.len() as u32, expected.len() as u32);
        let (events, expected_events) = (
            tested_events.update(pairs),
            reference_events.update(expected),
        );
        out.agrees &= tested_events.pairs() == reference_events.pairs()
            && events.found == expected_events.found
            && events.lost == expected_events.lost;
        if frame > 0 {
            out.found += events.found.len() as u32;
            out.lost += events.lost.len() as u32;
        }
    }
    Ok(out)
}

/// Opens the default GPU adapter through the library's blocking call and names it. In a
/// browser build this is the library's `Unsupported` error (the page cannot block on the
/// device), never a panic or a hang: the page shows it.
#[wasm_bindgen]
pub fn open_gpu() -> Result<String, JsError> {
    let ctx = sweepfan::GpuContext::new(&sweepfan::GpuOptions::default())?;
    Ok(ctx.info.name.clone())
}

/// Every touching pair of the scene's spheres, stored.
fn pairs_of(method: &mut dyn BroadPhase, scene: &Scene) -> sweepfan::Result<Vec<Pair>> {
    let mut pairs = Vec::new();
    method.find_pairs(&scene.spheres, Some(&mut pairs))?;
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively, the checks the page runs: each method's pairs and events on a moving scene
    /// are brute force's, and the pair count is not trivially zero.
    #[test]
    fn methods_agree_with_brute_force_on_a_moving_scene() {
        for method in ["grid", "sap", "xyz", "min-axis", "origin-distance"] {
            let c = check("paper", 3000, 4, method, 4).unwrap();
            assert!(c.agrees, "{method}: {c:?}");
            assert!(
                c.pairs > 100 && c.found > 0 && c.lost > 0,
                "{method}: {c:?}"
            );
        }
    }

    #[test]
    fn unknown_names_and_zero_frames_are_errors_naming_them() {
        let e = check("pape", 10, 1, "grid", 1).unwrap_err().to_string();
        assert!(e.contains("unknown scene 'pape'"), "{e}");
        let e = check("paper", 10, 1, "grdi", 1).unwrap_err().to_string();
        assert!(e.contains("unknown method 'grdi'"), "{e}");
        assert!(check("paper", 10, 1, "grid", 0).is_err());
    }
}
