//! What the page takes from JavaScript, checked (docs/design.md §8.5): counts as whole numbers
//! within the page's bounds, a reference that stays affordable on the page's one thread, the
//! CPU work within a memory budget, and a stop between frames.

use std::cell::Cell;
use sweepfan::{Error, Limits, MemoryBudget, Method};
use sweepfan_scenes::Scene;
use wasm_bindgen::prelude::*;

/// Most objects a check takes (the form's bound).
pub const MAX_OBJECTS: u32 = 2_000_000;

/// Most frames a check runs (the form's bound).
pub const MAX_FRAMES: u32 = 1000;

/// Most objects a brute-force pass takes, tested or as the reference: `n (n - 1) / 2` pair
/// tests a frame on the page's one thread (1.25e9 at this bound, seconds; 2e12 at
/// [`MAX_OBJECTS`], hours). Above it a CPU method is checked against another exact method.
pub const BRUTE_FORCE_MAX: u32 = 50_000;

/// What the CPU work of a check may allocate (pair lists, scenes): past it the library refuses
/// with `TooLarge` instead of the page's memory (4 GiB at most for wasm32) running out.
const PAGE_MEMORY: u64 = 1 << 30;

thread_local! {
    /// Set by [`stop`]; read between frames.
    static STOP: Cell<bool> = const { Cell::new(false) };
    /// When the checks last let the page's events run.
    static LAST_TURN: Cell<Option<web_time::Instant>> = const { Cell::new(None) };
}

/// `value`, a JavaScript number, as a whole number within `[min, max]`; otherwise an error
/// naming `name` (passed as a `u32`, JavaScript would wrap it: NaN to 0, -1 to 4294967295, 1.5
/// to 1, 2^32 + 100 to 100).
pub fn whole(name: &str, value: f64, min: u32, max: u32) -> sweepfan::Result<u32> {
    if value.is_finite() && value.fract() == 0.0 && value >= min.into() && value <= max.into() {
        return Ok(value as u32);
    }
    Err(Error::Config(format!(
        "{name} = {value}: a whole number from {min} to {max} on this page"
    )))
}

/// The counts of a check, checked: `n` (0 is left to the scene's own refusal), `seed` and
/// `frames`.
pub fn counts(n: f64, seed: f64, frames: f64) -> sweepfan::Result<(u32, u32, u32)> {
    Ok((
        whole("n", n, 0, MAX_OBJECTS)?,
        whole("seed", seed, 0, u32::MAX)?,
        whole("frames", frames, 1, MAX_FRAMES)?,
    ))
}

/// What a check runs, from JavaScript (`new Run(scene, n, seed, frames)`): a scene generator's
/// name, its object count and seed, and the frames to run. The counts are checked as it is
/// made, as `counts` checks them, so a count that is not a whole number within the page's
/// bounds is an error naming it there, before any check runs. The checks borrow it: the caller
/// frees it once the check's promise has settled.
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Run {
    /// The scene generator's name (paper, density, clusters, mixed-radii, ...; `_` read as `-`).
    pub(crate) scene: String,
    /// Objects in the scene (0 is left to the scene's own refusal).
    pub(crate) n: u32,
    /// The scene's seed.
    pub(crate) seed: u32,
    /// Frames to run: the first, then the scene moved before each of the others.
    pub(crate) frames: u32,
}

#[wasm_bindgen]
impl Run {
    /// `scene` with `n` objects from `seed`, over `frames` frames: `n` a whole number from 0 to
    /// [`MAX_OBJECTS`], `seed` one within `u32`, `frames` one from 1 to [`MAX_FRAMES`];
    /// otherwise an error naming the count.
    #[wasm_bindgen(constructor)]
    pub fn new(scene: String, n: f64, seed: f64, frames: f64) -> Result<Run, JsError> {
        let (n, seed, frames) = counts(n, seed, frames)?;
        Ok(Self::of(scene, n, seed, frames))
    }
}

impl Run {
    /// A run of counts already whole (the native checks'), not checked against the page's
    /// bounds.
    pub(crate) fn of(scene: String, n: u32, seed: u32, frames: u32) -> Self {
        Self {
            scene,
            n,
            seed,
            frames,
        }
    }

    /// The run's scene, generated (`crate::generate`: an unknown name or a scene of none is
    /// an error).
    pub(crate) fn generate(&self) -> sweepfan::Result<Scene> {
        crate::generate(&self.scene, self.n, self.seed)
    }
}

/// Refuses `method` over `n` objects where it is brute force past [`BRUTE_FORCE_MAX`].
pub fn affordable(method: Method, n: u32) -> sweepfan::Result<()> {
    if method == Method::BruteForce {
        brute_force_fits(n, "brute-force")?;
    }
    Ok(())
}

/// Refuses a brute-force pass over `n` objects past [`BRUTE_FORCE_MAX`], naming `what`.
pub fn brute_force_fits(n: u32, what: &str) -> sweepfan::Result<()> {
    if n > BRUTE_FORCE_MAX {
        return Err(Error::Config(format!(
            "n = {n}: {what} tests every pair, n (n - 1) / 2 a frame on the page's one thread; \
             at most {BRUTE_FORCE_MAX} here"
        )));
    }
    Ok(())
}

/// The CPU reference of `method` over `n` objects: brute force up to [`BRUTE_FORCE_MAX`], above
/// it another exact method (sap for the grid, the grid for the rest), as independent of the
/// tested one as the library allows.
pub fn cpu_reference(method: Method, n: u32) -> Method {
    if n <= BRUTE_FORCE_MAX {
        Method::BruteForce
    } else if method == Method::Grid {
        Method::Sap
    } else {
        Method::Grid
    }
}

/// `f` with the library's CPU calls under the page's memory budget.
pub fn limited<T>(f: impl FnOnce() -> T) -> T {
    Limits::new()
        .with_memory(MemoryBudget::Bytes(PAGE_MEMORY))
        .run(f)
}

/// Asks the running check to stop before its next frame (the page's stop button). A frame
/// already running ends first; a check stopped so fails with `Interrupted`.
pub fn stop() {
    STOP.with(|s| s.set(true));
}

/// Clears a stop asked before a check began.
pub fn begin() {
    STOP.with(|s| s.set(false));
}

/// `Interrupted` where [`stop`] was asked, after letting the page's events run (a browser
/// delivers the stop button's click only while the check awaits) where 50 ms have passed since
/// the last turn: a browser holds a chain of `setTimeout(0)` to 4 ms a turn, 4 s over 1,000
/// short frames.
pub async fn between_frames() -> sweepfan::Result<()> {
    let now = web_time::Instant::now();
    let due = LAST_TURN.with(|t| {
        let due = t
            .get()
            .is_none_or(|last| now.duration_since(last).as_millis() >= 50);
        if due {
            t.set(Some(now));
        }
        due
    });
    if due {
        yield_to_page().await;
    }
    if STOP.with(Cell::get) {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// Before frame `frame` of a check: after the first, [`between_frames`], then the scene moved
/// on (`step`).
pub async fn next_frame(frame: u32, step: impl FnOnce()) -> sweepfan::Result<()> {
    if frame > 0 {
        between_frames().await?;
        step();
    }
    Ok(())
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(then: &js_sys::Function, ms: i32);
}

/// A turn of the browser's event loop (a task, so clicks are delivered); nothing natively.
async fn yield_to_page() {
    #[cfg(target_arch = "wasm32")]
    {
        let turn = js_sys::Promise::new(&mut |resolve, _| set_timeout(&resolve, 0));
        let _ = wasm_bindgen_futures::JsFuture::from(turn).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_must_be_whole_and_in_bounds() {
        assert_eq!(counts(5000.0, 7.0, 3.0).unwrap(), (5000, 7, 3));
        assert_eq!(counts(0.0, 0.0, 1.0).unwrap(), (0, 0, 1));
        for (n, seed, frames, named) in [
            (f64::NAN, 1.0, 1.0, "n = NaN"),
            (-1.0, 1.0, 1.0, "n = -1"),
            (1.5, 1.0, 1.0, "n = 1.5"),
            (4294967396.0, 1.0, 1.0, "n = 4294967396"),
            (2_000_001.0, 1.0, 1.0, "n = 2000001"),
            (10.0, -3.0, 1.0, "seed = -3"),
            (10.0, 1.0, 0.0, "frames = 0"),
            (10.0, 1.0, 2.5, "frames = 2.5"),
            (10.0, 1.0, f64::INFINITY, "frames = inf"),
        ] {
            let e = counts(n, seed, frames).unwrap_err().to_string();
            assert!(e.contains(named) && e.contains("whole number"), "{e}");
        }
        // A run's counts are the checked ones (its refusals are JavaScript errors, made only
        // in a page).
        let run = Run::new("paper".into(), 5000.0, 7.0, 3.0).unwrap();
        assert_eq!(
            (run.scene.as_str(), run.n, run.seed, run.frames),
            ("paper", 5000, 7, 3)
        );
    }

    #[test]
    fn brute_force_is_bounded_and_the_reference_changes_above_it() {
        assert!(affordable(Method::BruteForce, BRUTE_FORCE_MAX).is_ok());
        let e = affordable(Method::BruteForce, BRUTE_FORCE_MAX + 1).unwrap_err();
        assert!(
            e.to_string().contains("brute-force tests every pair"),
            "{e}"
        );
        assert!(affordable(Method::Grid, MAX_OBJECTS).is_ok());
        assert_eq!(cpu_reference(Method::Sap, 1000), Method::BruteForce);
        assert_eq!(cpu_reference(Method::Grid, MAX_OBJECTS), Method::Sap);
        assert_eq!(cpu_reference(Method::Sap, MAX_OBJECTS), Method::Grid);
    }

    #[test]
    fn a_stop_fails_the_next_frame_and_a_new_check_clears_it() {
        begin();
        assert!(pollster::block_on(between_frames()).is_ok());
        stop();
        let e = pollster::block_on(between_frames()).unwrap_err();
        assert!(matches!(e, Error::Interrupted), "{e}");
        begin();
        assert!(pollster::block_on(between_frames()).is_ok());
    }
}
