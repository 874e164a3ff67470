//! sweepfan in the browser (docs/design.md §8.5): the library compiled for
//! `wasm32-unknown-unknown` and exported through wasm-bindgen. Every CPU method runs on the
//! page's one thread (rayon runs its work on the calling thread), checked in the same page
//! against brute force; the GPU methods run on the browser's WebGPU through the library's
//! async entry points, checked against the same method on the CPU.
//!
//! The same functions build natively, where `cargo test -p sweepfan-web` checks them.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;
use sweepfan::{
    BroadPhase, EventTracker, GpuBroadPhase, GpuContext, GpuOptions, Method, Pair, Sphere, cpu,
};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};
use wasm_bindgen::prelude::*;

mod boxes;
mod contacts;
mod input;
mod rotating;
mod worlds;
pub use boxes::{check_boxes, check_boxes_cpu, check_boxes_gpu_async};
pub use contacts::{check_contacts, check_contacts_cpu, check_contacts_gpu_async};
pub use input::{BRUTE_FORCE_MAX, MAX_FRAMES, MAX_OBJECTS, Run};
pub use rotating::check_rotating_gpu_async;
pub use worlds::{check_worlds, check_worlds_cpu, check_worlds_gpu_async};

/// One scene through one method and through a reference, frame by frame, in the same process.
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Check {
    /// Pairs the method found (the last frame's, for a moving scene).
    pub pairs: u32,
    /// Pairs the reference found on the same spheres (brute force for a CPU method, the same
    /// method on the CPU for a GPU one).
    pub reference_pairs: u32,
    /// Contacts that began over the frames after the first (moving scenes).
    pub found: u32,
    /// Contacts that ended over the frames after the first.
    pub lost: u32,
    /// Every frame's pairs and events equal to the reference's (canonical: `i < j`, sorted).
    pub agrees: bool,
    /// The method's time per frame, milliseconds (the page's clock).
    pub ms: f64,
    /// Frames run (a still scene's checks run one, whatever was asked).
    pub frames: u32,
    /// What the results were checked against.
    reference: String,
    /// The last frame's spheres, `x, y, z, r` each (for the page's drawing).
    spheres: Vec<f32>,
    /// Per sphere of the last frame: 1 when it touches another.
    touching: Vec<u8>,
    /// Contact points, `x, y` each (the contacts check; empty elsewhere).
    points: Vec<f32>,
}

impl Check {
    /// Before the first frame: nothing found, agreeing.
    fn empty() -> Self {
        Self {
            pairs: 0,
            reference_pairs: 0,
            found: 0,
            lost: 0,
            agrees: true,
            ms: 0.0,
            frames: 0,
            reference: String::new(),
            spheres: Vec::new(),
            touching: Vec::new(),
            points: Vec::new(),
        }
    }

    /// A still scene's check (one frame, whatever was asked): `pairs` found, `reference_pairs`
    /// by the reference, agreeing as `agrees` says, in `ms`; the drawing is the caller's.
    fn still(pairs: usize, reference_pairs: usize, agrees: bool, ms: f64) -> Self {
        Self {
            pairs: pairs as u32,
            reference_pairs: reference_pairs as u32,
            agrees,
            ms,
            frames: 1,
            ..Self::empty()
        }
    }

    /// The check, what it was checked against named.
    fn against(mut self, reference: &str) -> Self {
        self.reference = reference.into();
        self
    }

    /// Frame `frame` of `frames`, begun at `start`, run: its share of the time per frame added.
    fn frame_done(&mut self, frame: u32, frames: u32, start: web_time::Instant) {
        self.ms += ms_since(start) / f64::from(frames);
        self.frames = frame + 1;
    }

    /// A frame's `found` and `lost` events counted, but the first frame's (pairs that were
    /// there from the start).
    fn count_events(&mut self, frame: u32, found: usize, lost: usize) {
        if frame > 0 {
            self.found += found as u32;
            self.lost += lost as u32;
        }
    }
}

/// A still check from JavaScript (one frame): `n` and `seed` checked as [`input::counts`] checks
/// them, then `check` of them, its error given to JavaScript.
fn still_check(
    n: f64,
    seed: f64,
    check: impl FnOnce(u32, u32) -> sweepfan::Result<Check>,
) -> Result<Check, JsError> {
    let (n, seed, _) = input::counts(n, seed, 1.0)?;
    Ok(check(n, seed)?)
}

/// The milliseconds since `start` (the page's clock).
pub(crate) fn ms_since(start: web_time::Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[wasm_bindgen]
impl Check {
    /// The last frame's spheres, `x, y, z, r` each (a `Float32Array` in JavaScript).
    pub fn spheres(&self) -> Vec<f32> {
        self.spheres.clone()
    }

    /// Per sphere of the last frame, 1 when it touches another (a `Uint8Array`).
    pub fn touching(&self) -> Vec<u8> {
        self.touching.clone()
    }

    /// The contacts check's contact points, `x, y` each (a `Float32Array`; empty elsewhere).
    pub fn contact_points(&self) -> Vec<f32> {
        self.points.clone()
    }

    /// What the results were checked against, for the page's words.
    pub fn reference(&self) -> String {
        self.reference.clone()
    }
}

/// Asks the running check to stop before its next frame; it then fails with `Interrupted`
/// (the page's stop button).
#[wasm_bindgen]
pub fn stop() {
    input::stop();
}

/// Whether a GPU context is open and its device not lost (the page opens a new one when not).
#[wasm_bindgen]
pub fn gpu_is_open() -> bool {
    GPU.with(|g| g.borrow().as_ref().is_some_and(|ctx| !ctx.is_lost()))
}

/// `run`'s scene (a generator's name: paper, density, clusters, mixed-radii, ...) with its `n`
/// spheres from its seed, moved `frames - 1` times, through `method` (grid, sap, brute-force,
/// ...) on the CPU; every frame compared with brute force (with another exact method above
/// [`BRUTE_FORCE_MAX`] spheres: [`Check::reference`] names it). An unknown name or an invalid
/// scene is an error naming it (a count that is not a whole number within the page's bounds
/// was one already, at [`Run::new`]). Awaits a turn of the page between frames, where
/// [`stop`] stops it.
#[wasm_bindgen]
pub async fn check_cpu(run: &Run, method: String) -> Result<Check, JsError> {
    Ok(check_async(run, &method).await?)
}

/// [`check_cpu`] with the library's error, natively.
pub fn check(scene: &str, n: u32, seed: u32, method: &str, frames: u32) -> sweepfan::Result<Check> {
    pollster::block_on(check_async(&Run::of(scene.into(), n, seed, frames), method))
}

async fn check_async(run: &Run, method: &str) -> sweepfan::Result<Check> {
    let (scene, method) = (run.generate()?, Method::parse(method)?);
    input::affordable(method, run.n)?;
    let mut tested = cpu::broad_phase(method);
    compare(
        scene,
        run.frames,
        input::cpu_reference(method, run.n),
        async |spheres| input::limited(|| pairs_of(&mut *tested, spheres)),
    )
    .await
}

thread_local! {
    /// The page's GPU context, opened by [`open_gpu_async`].
    static GPU: RefCell<Option<Arc<GpuContext>>> = const { RefCell::new(None) };
    /// One broad phase per GPU method, kept across checks: a browser compiles a method's
    /// pipelines once (SwiftShader: about 12 s, then a few hundred ms a frame at 5k).
    static GPU_METHODS: RefCell<Vec<(Method, GpuBroadPhase)>> = const { RefCell::new(Vec::new()) };
}

/// Opens the browser's default GPU adapter (WebGPU) and names it; later GPU checks run on it.
#[wasm_bindgen]
pub async fn open_gpu_async() -> Result<String, JsError> {
    open_gpu_with(&GpuOptions::default()).await
}

/// The native tests' context: the options the test environment names (the expected adapter,
/// sloppy math), as every other GPU test of the workspace opens its device.
#[cfg(test)]
pub(crate) fn open_test_gpu() -> String {
    let options = GpuOptions::from_vars(|name| std::env::var(name).ok()).unwrap();
    pollster::block_on(open_gpu_with(&options)).unwrap()
}

async fn open_gpu_with(options: &GpuOptions) -> Result<String, JsError> {
    let ctx = Arc::new(GpuContext::new_async(options).await?);
    forget_gpu();
    let name = format!(
        "{} ({:?}, {:?})",
        ctx.info().name,
        ctx.info().device_type,
        ctx.info().backend
    );
    GPU.with(|g| *g.borrow_mut() = Some(ctx));
    Ok(name)
}

/// [`check_cpu`] with `method` on the GPU opened by [`open_gpu_async`], every frame compared
/// with the same method on the CPU.
#[wasm_bindgen]
pub async fn check_gpu_async(run: &Run, method: String) -> Result<Check, JsError> {
    let ctx = page_gpu()?;
    let (scene, method) = (run.generate()?, Method::parse(&method)?);
    // The GPU's brute force is checked against the CPU's, which is bounded too.
    input::affordable(method, run.n)?;
    // Taken out of the cache while it runs (the future holds it across awaits), put back after.
    let kept = GPU_METHODS.with(|m| {
        let mut m = m.borrow_mut();
        let at = m.iter().position(|(k, _)| *k == method);
        at.map(|at| m.swap_remove(at).1)
    });
    let mut tested = match kept {
        Some(t) => t,
        None => GpuBroadPhase::new(ctx.clone(), method)?,
    };
    let check = compare(scene, run.frames, method, async |spheres| {
        let mut pairs = Vec::new();
        tested.find_pairs_async(spheres, Some(&mut pairs)).await?;
        Ok(pairs)
    })
    .await;
    if is_page_gpu(&ctx) {
        GPU_METHODS.with(|m| m.borrow_mut().push((method, tested)));
    }
    Ok(gpu_result(check)?)
}

/// The GPU context [`open_gpu_async`] opened, where its device is not lost.
pub(crate) fn page_gpu() -> Result<Arc<GpuContext>, JsError> {
    let ctx = GPU
        .with(|g| g.borrow().clone())
        .ok_or_else(|| JsError::new("no GPU opened: call open_gpu_async first"))?;
    if ctx.is_lost() {
        gpu_result(ctx.check())?;
    }
    Ok(ctx)
}

/// Whether `ctx` is still the page's context: a check's broad phase goes back to the cache only
/// then (another may have been opened while it ran).
fn is_page_gpu(ctx: &Arc<GpuContext>) -> bool {
    GPU.with(|g| {
        g.borrow()
            .as_ref()
            .is_some_and(|open| Arc::ptr_eq(open, ctx))
    })
}

/// The page's kept `T` in `slot`, taken out while a check runs (the future holds it across
/// awaits; [`put_back`] after), or a new one (`make`) where none is kept.
pub(crate) fn take_kept<T: 'static>(
    slot: &'static LocalKey<RefCell<Option<T>>>,
    make: impl FnOnce() -> sweepfan::Result<T>,
) -> sweepfan::Result<T> {
    match slot.with(|k| k.borrow_mut().take()) {
        Some(kept) => Ok(kept),
        None => make(),
    }
}

/// Puts a check's `kept` back in `slot`, where `ctx` is still the page's context.
pub(crate) fn put_back<T: 'static>(
    slot: &'static LocalKey<RefCell<Option<T>>>,
    ctx: &Arc<GpuContext>,
    kept: T,
) {
    if is_page_gpu(ctx) {
        slot.with(|k| *k.borrow_mut() = Some(kept));
    }
}

/// A GPU check's result; where the device was lost, the page's context and everything built on
/// it are dropped first, so that the next check opens a new one instead of meeting the loss
/// again.
pub(crate) fn gpu_result<T>(result: sweepfan::Result<T>) -> sweepfan::Result<T> {
    if GPU.with(|g| g.borrow().as_ref().is_some_and(|ctx| ctx.is_lost())) {
        forget_gpu();
        GPU.with(|g| *g.borrow_mut() = None);
    }
    result
}

/// Drops every kept broad phase and pipeline (their context is gone or replaced).
fn forget_gpu() {
    GPU_METHODS.with(|m| m.borrow_mut().clear());
    boxes::forget_gpu_boxes();
    contacts::forget_gpu_contacts();
    rotating::forget_gpu_rotating();
    worlds::forget_gpu_worlds();
}

/// Opens the default GPU adapter through the library's blocking call. In a browser build this
/// is the library's `Unsupported` error (the page cannot block on the device), never a panic
/// or a hang.
#[wasm_bindgen]
pub fn open_gpu() -> Result<String, JsError> {
    let ctx = GpuContext::new(&GpuOptions::default())?;
    Ok(ctx.info().name.clone())
}

/// The generator `name` (`_` read as `-`) with `n` spheres from `seed`. A scene of none is
/// refused, as the tool refuses `--n 0`: the library would answer it with no pairs, which the
/// page's checks would pass without testing anything.
pub(crate) fn generate(name: &str, n: u32, seed: u32) -> sweepfan::Result<Scene> {
    if n == 0 {
        return Err(sweepfan::Error::EmptyScene);
    }
    Ok(Scene::generate(
        kind_of(name)?,
        &SceneParams::new(n as usize, seed.into()),
    ))
}

/// The generator `name` (`_` read as `-`).
pub(crate) fn kind_of(name: &str) -> sweepfan::Result<SceneKind> {
    SceneKind::ALL
        .into_iter()
        .find(|k| k.name() == name.replace('_', "-"))
        .ok_or_else(|| {
            sweepfan::Error::Config(format!(
                "unknown scene '{name}' (known: {})",
                SceneKind::ALL.map(SceneKind::name).join(", ")
            ))
        })
}

/// `frames` frames of `scene` (moved between them) through `tested` and through `reference`
/// on the CPU: each frame's pairs (as listed: a pair twice, out of order or out of range
/// disagrees) and events compared. [`stop`] stops it between frames.
async fn compare(
    mut scene: Scene,
    frames: u32,
    reference: Method,
    mut tested: impl AsyncFnMut(&[Sphere]) -> sweepfan::Result<Vec<Pair>>,
) -> sweepfan::Result<Check> {
    if frames == 0 {
        return Err(sweepfan::Error::Config("frames: at least 1".into()));
    }
    let mut out = Check::empty();
    out.reference = match reference {
        Method::BruteForce => "brute force".to_string(),
        other => format!("{} on the CPU", other.name()),
    };
    let mut reference = cpu::broad_phase(reference);
    let (mut tested_events, mut reference_events) = (EventTracker::new(), EventTracker::new());
    input::begin();
    for frame in 0..frames {
        input::next_frame(frame, || scene.step()).await?;
        let start = web_time::Instant::now();
        let pairs = tested(&scene.spheres).await?;
        out.frame_done(frame, frames, start);
        let expected = input::limited(|| pairs_of(&mut *reference, &scene.spheres))?;
        (out.pairs, out.reference_pairs) = (pairs.len() as u32, expected.len() as u32);
        // The lists as the method gave them: the trackers below sort and merge duplicates.
        out.agrees &= pairs == expected;
        let events = tested_events.update(pairs);
        let expected_events = reference_events.update(expected);
        out.agrees &= tested_events.pairs() == reference_events.pairs()
            && events.found == expected_events.found
            && events.lost == expected_events.lost;
        out.count_events(frame, events.found.len(), events.lost.len());
    }
    out.spheres = drawn(&scene.spheres);
    out.touching = touching(scene.spheres.len(), tested_events.pairs());
    Ok(out)
}

/// `spheres` as the page draws them: `x, y, z, r` each.
pub(crate) fn drawn(spheres: &[Sphere]) -> Vec<f32> {
    spheres
        .iter()
        .flat_map(|s| [s.center.x, s.center.y, s.center.z, s.radius])
        .collect()
}

/// Per object of `count`, 1 where a pair names it (a pair out of range, which the check has
/// already called a disagreement, is left out of the drawing).
pub(crate) fn touching(count: usize, pairs: &[[u32; 2]]) -> Vec<u8> {
    let mut out = vec![0; count];
    for &i in pairs.iter().flatten() {
        if let Some(t) = out.get_mut(i as usize) {
            *t = 1;
        }
    }
    out
}

/// Every touching pair of `spheres`, stored.
fn pairs_of(method: &mut dyn BroadPhase, spheres: &[Sphere]) -> sweepfan::Result<Vec<Pair>> {
    let mut pairs = Vec::new();
    method.find_pairs(spheres, Some(&mut pairs))?;
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

    /// The GPU check's loop natively (on the test machine's adapter: lavapipe here), through
    /// the async entry points the page awaits: pairs and events equal the CPU's.
    #[test]
    fn the_gpu_check_agrees_with_the_cpu_natively() {
        let name = open_test_gpu();
        assert!(!name.is_empty());
        let run = Run::new("paper".into(), 2000.0, 5.0, 3.0).unwrap();
        for method in ["grid", "sap", "brute-force"] {
            let c = pollster::block_on(check_gpu_async(&run, method.into())).unwrap();
            assert!(c.agrees && c.pairs > 0 && c.found > 0, "{method}: {c:?}");
        }
    }

    /// A method's list is checked as given: a pair twice, or a pair naming an object that does
    /// not exist (a wrong device answer), disagrees and never panics the page.
    #[test]
    fn a_list_with_a_duplicate_or_an_unknown_object_disagrees() {
        let scene = || generate("paper", 2000, 3).unwrap();
        let mut expected = Vec::new();
        cpu::broad_phase(Method::Grid)
            .find_pairs(&scene().spheres, Some(&mut expected))
            .unwrap();
        assert!(expected.len() > 10);
        let honest = pollster::block_on(compare(scene(), 2, Method::Grid, async |s| {
            pairs_of(&mut *cpu::broad_phase(Method::Sap), s)
        }))
        .unwrap();
        assert!(honest.agrees && honest.frames == 2);
        for wrong in [0, 1] {
            let c = pollster::block_on(compare(scene(), 1, Method::Grid, async |s| {
                let mut pairs = pairs_of(&mut *cpu::broad_phase(Method::Sap), s)?;
                match wrong {
                    0 => pairs.insert(1, pairs[0]),
                    _ => pairs.push([0, 4_000_000]),
                }
                Ok(pairs)
            }))
            .unwrap();
            assert!(!c.agrees, "case {wrong}: {c:?}");
            assert_eq!(c.touching.len(), 2000);
        }
    }

    /// Brute force, tested or as the reference, is bounded on the page's one thread; above the
    /// bound a CPU method is checked against another exact method, named.
    #[test]
    fn brute_force_is_bounded_and_the_reference_named() {
        let e = check("paper", BRUTE_FORCE_MAX + 1, 1, "brute-force", 1).unwrap_err();
        assert!(e.to_string().contains("at most 50000"), "{e}");
        let c = check("paper", 3000, 1, "sap", 1).unwrap();
        assert_eq!(c.reference(), "brute force");
        let c = check("paper", BRUTE_FORCE_MAX + 1, 1, "grid", 1).unwrap();
        assert!(
            c.agrees && c.pairs > 0 && c.reference() == "sap on the CPU",
            "{c:?}"
        );
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
