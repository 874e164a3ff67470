//! `auto`: the method chosen from the scene's own statistics (docs/design.md §2.12), without
//! running the candidates.
//!
//! [`survey`] reads a pseudo-random sample of at most `SAMPLE_MAX` spheres (about 0.5 ms at
//! 10^6, the sample's reads from memory) and estimates, scaled from the sample to the whole
//! scene, the quantities that decide every method's work:
//!
//! * **grid neighbours**: pairs whose centres fall in neighbouring cells of side `2 r` (`r` the
//!   sample's largest radius below its giants): the grid's tests;
//! * **sweep overlaps**: pairs whose intervals `[c - r, c + r]` overlap on the axis of largest
//!   spread: what sweep-and-prune scans (it then rejects on the other two axes); the same on x,
//!   what the paper's x sweep tests;
//! * the cells of the sample's bounding box per object (a *spread* scene costs the grid more).
//!
//! [`choose`] prices `grid`, `sap`, `x` and `brute_force` with a per-object and a per-candidate
//! cost per backend ([`Costs`], fitted to the scenes of `sweepfan auto-bench`, `results/auto/`)
//! and takes the cheapest. The paper's other methods (origin distance, the xy and xyz cascades,
//! the fewest-candidate axis) were never the fastest by more than a few percent on any scene
//! measured: they scan what x scans and pay more per candidate.
//!
//! [`Auto`] is a [`BroadPhase`] that chooses on its first frame, when the number of objects
//! changes, every [`RECHOOSE_EVERY`] frames (a moving scene may change character) and after a
//! frame whose tests outgrew the survey's estimate ([`OUTGROWN`]), keeps the
//! methods it built (their buffers and, on the GPU, pipelines), and reports its choice in
//! [`Stats::chosen`]. While frame events are tracked by the backend (the GPU's, on the device),
//! a method's events compare a frame with that same method's previous frame: a new choice made
//! on a frame does not run it; the method that ran the frame before gives its pairs and events,
//! then the new one runs it too (its events dropped) and takes over from the next frame, whose
//! events it then compares with this one. The frame of a switch costs both methods. (Before,
//! the first choice stayed: a first frame of 10 objects kept `brute_force` for frames of
//! 20,000, 13-20 s a step on lavapipe against 0.25 s.)

use crate::broadphase::{
    Backend, BroadPhase, Diagnostics, FrameEvents, Method, Pair, Stats, order_pairs,
    validated_unordered,
};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use serde::Serialize;

mod survey;
#[cfg(test)]
use survey::FORWARD;
pub use survey::{Survey, survey};

/// Most spheres the survey samples.
pub(crate) const SAMPLE_MAX: usize = 2048;
/// Frames between two choices of an [`Auto`] whose scene keeps its size.
pub const RECHOOSE_EVERY: u64 = 32;

/// A frame whose method tested more than this many times the survey's estimate (plus
/// [`OUTGROWN_SLACK`] tests an object) has outgrown its choice: the next frame surveys again.
pub const OUTGROWN: f64 = 4.0;

/// Tests an object that a frame may make past [`OUTGROWN`] times the estimate without
/// outgrowing it (the estimate of a scene with few pairs is small and rough).
pub const OUTGROWN_SLACK: f64 = 8.0;

/// What `auto` chose and why (in every row that ran `auto`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    /// The method chosen.
    pub method: Method,
    /// The statistics that decided, in words: `"uniform radii, 1.00 spheres a cell, 0.3 tests
    /// an object"`.
    pub reason: String,
}

impl std::fmt::Display for Choice {
    /// `grid (uniform radii, 1.00 spheres a cell, 0.3 tests an object)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.method, self.reason)
    }
}

/// Cells of the scene's bounding box per object past which the grid walks a *spread* scene:
/// nearly every object alone in its row (CPU) or its keys scattered (GPU), and each object
/// costs the grid more (the wide scene: 1M objects over 2e7 cells per axis).
pub const SPREAD_CELLS_PER_OBJECT: f64 = 1_048_576.0;

/// A backend's price of each candidate method in nanoseconds: per object and per candidate pair
/// (grid: neighbour pairs; sap: overlaps on the axis of largest spread; x: overlaps on x; brute
/// force: every pair). The grid has a per-object price for spread scenes too.
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    /// grid: per object, per neighbour pair.
    pub grid: (f64, f64),
    /// grid: per object, extra, on spread scenes.
    pub grid_spread_object: f64,
    /// sap: per object, per overlap on the axis of largest spread.
    pub sap: (f64, f64),
    /// x: per object, per overlap on x.
    pub x: (f64, f64),
    /// brute force: per object, per pair.
    pub brute_force: (f64, f64),
}

impl Costs {
    /// The prices on `backend`; `software`: a CPU-emulated GPU adapter (lavapipe, SwiftShader).
    ///
    /// Fitted to `sweepfan auto-bench` on this project's 2-core machine (`results/auto/`): the
    /// CPU's times directly, software adapters' from lavapipe's. Hardware GPUs: from the one
    /// real-GPU pair measured so far (H100, density 1M: grid 3.23 ms, sap 11.55 ms a frame,
    /// `../shared/baselines.md`), brute force and x by their work alone; the next lent GPU runs
    /// `auto-bench --backend gpu` to fit them.
    pub fn of(backend: Backend, software: bool) -> Self {
        match (backend, software) {
            (Backend::Cpu, _) => Self {
                grid: (18.0, 1.0),
                grid_spread_object: 60.0,
                sap: (28.0, 1.5),
                x: (22.0, 1.05),
                brute_force: (0.0, 1.2),
            },
            (Backend::Gpu, true) => Self {
                grid: (2_700.0, 80.0),
                grid_spread_object: 5_000.0,
                sap: (1_900.0, 30.0),
                x: (900.0, 40.0),
                brute_force: (0.0, 25.0),
            },
            (Backend::Gpu, false) => Self {
                grid: (3.2, 0.01),
                grid_spread_object: 6.4,
                sap: (3.5, 0.003),
                x: (3.5, 0.003),
                brute_force: (0.0, 0.003),
            },
        }
    }
}

/// The method `auto` runs on `spheres` on `backend` (`software`: see [`Costs::of`]), and why.
pub fn choose(spheres: &[Sphere], backend: Backend, software: bool) -> Choice {
    choose_from(&survey(spheres), &Costs::of(backend, software))
}

/// Each candidate's price on survey `s` (ns, the module docs' `a n + b k`), grid first.
pub fn prices(s: &Survey, costs: &Costs) -> [(Method, f64); 4] {
    let n = s.n as f64;
    let grid_object = if s.cells_per_object > SPREAD_CELLS_PER_OBJECT {
        costs.grid_spread_object
    } else {
        costs.grid.0
    };
    let price = |(object, pair): (f64, f64), pairs: f64| object * n + pair * pairs;
    [
        (
            Method::Grid,
            price((grid_object, costs.grid.1), s.grid_pairs),
        ),
        (Method::Sap, price(costs.sap, s.sweep_pairs)),
        (Method::X, price(costs.x, s.x_pairs)),
        (
            Method::BruteForce,
            price(costs.brute_force, n * (n - 1.0) / 2.0),
        ),
    ]
}

/// [`choose`] from a survey and a backend's prices: the cheapest of grid, sap, x and brute
/// force.
pub fn choose_from(s: &Survey, costs: &Costs) -> Choice {
    let n = s.n as f64;
    let spread_scene = s.cells_per_object > SPREAD_CELLS_PER_OBJECT;
    let priced = prices(s, costs);
    // The first of the cheapest: ties go to the grid.
    let (method, _) = priced
        .into_iter()
        .fold((Method::Grid, f64::INFINITY), |best, c| {
            if c.1 < best.1 { c } else { best }
        });
    let radius_spread = if s.median_radius > 0.0 {
        s.radius / s.median_radius
    } else {
        1.0
    };
    let shape = if s.giants > 0 {
        format!("{} giants", s.giants)
    } else if s.large > 0 && s.largest_radius > 4.0 * s.median_radius {
        format!(
            "{} large objects up to radius {:.3e}",
            s.large, s.largest_radius
        )
    } else if radius_spread > 4.0 {
        format!("radii spread {radius_spread:.0}x")
    } else {
        "uniform radii".to_string()
    };
    let layout = if spread_scene {
        "spread, ".to_string()
    } else {
        String::new()
    };
    let reason = match method {
        Method::BruteForce => format!(
            "{} objects, {:.0} grid tests an object",
            s.n,
            s.grid_per_object()
        ),
        Method::Grid => format!(
            "{layout}{shape}, {:.2} spheres a cell, {:.1} tests an object",
            s.cell_occupancy,
            s.grid_per_object()
        ),
        Method::Sap => format!(
            "{layout}{shape}, {:.1} sweep candidates against {:.1} grid tests an object",
            s.sweep_per_object(),
            s.grid_per_object()
        ),
        _ => format!(
            "{layout}{shape}, {:.1} candidates on x against {:.1} grid tests an object",
            s.x_pairs / n.max(1.0),
            s.grid_per_object()
        ),
    };
    Choice { method, reason }
}

/// The tests the survey `s` expects of `method` (what [`prices`] prices).
fn estimated_tests(s: &Survey, method: Method) -> f64 {
    let n = s.n as f64;
    match method {
        Method::Grid => s.grid_pairs,
        Method::Sap => s.sweep_pairs,
        Method::X => s.x_pairs,
        _ => n * (n - 1.0) / 2.0,
    }
}

/// Builds a backend's method on demand.
pub type Builder = Box<dyn FnMut(Method) -> Result<Box<dyn BroadPhase + Send>> + Send>;

/// The `auto` broad phase (module docs): one of `grid`, `sap`, `x` and `brute_force`, chosen
/// per scene, behind one [`BroadPhase`].
pub struct Auto {
    backend: Backend,
    costs: Costs,
    build: Builder,
    built: Vec<(Method, Box<dyn BroadPhase + Send>)>,
    /// The choice and what decides when to make it again.
    chosen: Chosen,
    /// Whether frame events are asked of the backend (then a new choice takes over after the
    /// frame it was made on, module docs).
    events: bool,
    /// An empty frame came before any choice while events were on: its events (none) are due.
    empty_events_due: bool,
    /// The events of the frame a new choice was made on, from the method that ran it.
    switched_events: Option<FrameEvents>,
    /// A new choice made on a frame that only counted, with the objects it was made for: it
    /// takes over after the next frame that stores its pairs (of as many objects).
    pending: Option<(Choice, usize)>,
}

/// What an [`Auto`] chose for a scene and when it chooses again (module docs): a world batch
/// keeps one for each world and lends it to its thread's `Auto` for that world's frames
/// ([`Auto::with_chosen`]), so that each world keeps its own choice.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chosen {
    current: Option<Choice>,
    /// Objects of the frame the choice was made for, and frames since.
    chosen_for: usize,
    frames_since: u64,
    /// The survey's estimate of the chosen method's tests.
    expected_tests: f64,
    /// The last frame tested far more than the estimate ([`OUTGROWN`]): the next one surveys.
    outgrown: bool,
    /// The choice was made because a frame outgrew the one before: it stands its
    /// [`RECHOOSE_EVERY`] frames whatever its tests (a survey each frame would cost more than a
    /// rough estimate).
    chosen_when_outgrown: bool,
}

impl Auto {
    /// `auto` on `backend` (`software`: a CPU-emulated GPU adapter, [`Costs::of`]), building
    /// each method it chooses with `build`.
    pub fn new(backend: Backend, software: bool, build: Builder) -> Self {
        Self {
            backend,
            costs: Costs::of(backend, software),
            build,
            built: Vec::new(),
            chosen: Chosen::default(),
            events: false,
            empty_events_due: false,
            switched_events: None,
            pending: None,
        }
    }

    /// `run` on this `Auto` with `chosen` as its choice (a world's, lent by a world batch),
    /// which then keeps what `run` made of it.
    pub(crate) fn with_chosen<R>(
        &mut self,
        chosen: &mut Chosen,
        run: impl FnOnce(&mut Self) -> R,
    ) -> R {
        std::mem::swap(&mut self.chosen, chosen);
        let result = run(self);
        std::mem::swap(&mut self.chosen, chosen);
        result
    }

    /// The last choice, if a frame ran.
    pub fn choice(&self) -> Option<&Choice> {
        self.chosen.current.as_ref()
    }

    fn inner(&mut self) -> Option<&mut Box<dyn BroadPhase + Send>> {
        let method = self.chosen.current.as_ref()?.method;
        self.built_mut(method)
    }

    fn built_mut(&mut self, method: Method) -> Option<&mut Box<dyn BroadPhase + Send>> {
        self.built
            .iter_mut()
            .find(|(m, _)| *m == method)
            .map(|(_, b)| b)
    }

    fn inner_ref(&self) -> Option<&(dyn BroadPhase + Send)> {
        let method = self.chosen.current.as_ref()?.method;
        self.built
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, b)| b.as_ref())
    }

    /// Builds `method` unless it is built (tracking events where they are on).
    fn ensure_built(&mut self, method: Method) -> Result<()> {
        if !self.built.iter().any(|(m, _)| *m == method) {
            let mut broad = (self.build)(method)?;
            if self.events {
                broad.track_events(true)?;
            }
            self.built.push((method, broad));
        }
        Ok(())
    }

    /// Chooses for this frame (module docs) and builds the method if needed. With events
    /// tracked by the backend a different new choice is returned instead of taken: the current
    /// method runs this frame (its events compare with its previous frame), then the new one.
    fn prepare(&mut self, spheres: &[Sphere]) -> Result<Option<Choice>> {
        let due = self.survey_due(spheres.len());
        let mut switch = self
            .pending
            .take()
            .filter(|(_, n)| *n == spheres.len())
            .map(|(choice, _)| choice);
        if due {
            let survey = survey(spheres);
            let choice = choose_from(&survey, &self.costs);
            self.chosen.expected_tests = estimated_tests(&survey, choice.method);
            self.chosen.chosen_when_outgrown = std::mem::take(&mut self.chosen.outgrown);
            self.chosen.chosen_for = spheres.len();
            self.chosen.frames_since = 0;
            match &self.chosen.current {
                Some(c) if self.events && c.method != choice.method => switch = Some(choice),
                _ => self.chosen.current = Some(choice),
            }
        }
        self.chosen.frames_since += 1;
        let method = self
            .chosen
            .current
            .as_ref()
            .map(|c| c.method)
            .expect("chosen above");
        self.ensure_built(method)?;
        Ok(switch)
    }

    /// Whether a frame of `n` objects (not none) surveys its scene: the first frame, a change
    /// of size, [`RECHOOSE_EVERY`] frames since the last choice, or a frame that outgrew it;
    /// not while a choice waits for a stored frame of this size (it is still this scene's: no
    /// second survey).
    fn survey_due(&self, n: usize) -> bool {
        let stale = self.chosen.current.is_none()
            || self.chosen.chosen_for != n
            || self.chosen.frames_since >= RECHOOSE_EVERY
            || self.chosen.outgrown;
        stale && self.pending.as_ref().is_none_or(|(_, m)| *m != n)
    }

    /// A frame (the trait's `find_pairs_validated`, docs above) whose chosen method runs by
    /// `run`: its `find_pairs_validated` on a validated scene, or, where no survey is due (the
    /// survey reads a validated scene), its own `find_pairs` or `find_pairs_unordered`, which
    /// validate the scene the method's way (the grid in its survey, which reads the spheres
    /// anyway) instead of a pass of their own.
    fn frame(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
        run: impl FnOnce(
            &mut (dyn BroadPhase + Send),
            &[Sphere],
            Option<&mut Vec<Pair>>,
        ) -> Result<Stats>,
    ) -> Result<Stats> {
        // Events of an earlier frame's switch not taken are that frame's, not this one's.
        self.switched_events = None;
        if spheres.is_empty() {
            // The method chosen so far sees the empty frame (its events lose every pair); before
            // any choice there is nothing to tell.
            return match self.inner() {
                Some(inner) => inner.find_pairs_validated(spheres, out),
                None => {
                    self.empty_events_due = self.events;
                    Ok(crate::broadphase::no_pairs(out))
                }
            };
        }
        self.empty_events_due = false;
        let start = web_time::Instant::now();
        let switch = self.prepare(spheres)?;
        let choosing = start.elapsed().as_secs_f64();
        let choice = self.chosen.current.clone();
        let stored = out.is_some();
        let inner = self.inner().expect("built by prepare");
        let mut stats = match run(inner.as_mut(), spheres, out) {
            Ok(stats) => stats,
            Err(e) => {
                // A new choice still waits for a frame that succeeds.
                if let Some(next) = switch {
                    self.pending = Some((next, spheres.len()));
                }
                return Err(e);
            }
        };
        // A scene that changed character under its choice (a frame of a line, then of a plane
        // across the line's axis) is surveyed again at once, not up to 31 frames later.
        let outgrew = stats.tests as f64
            > OUTGROWN * self.chosen.expected_tests + OUTGROWN_SLACK * spheres.len() as f64;
        // Not while a new choice waits to take over: the estimate is the new method's.
        let waiting = switch.is_some() || self.pending.is_some();
        self.chosen.outgrown = outgrew && !waiting && !self.chosen.chosen_when_outgrown;
        match switch {
            Some(next) if stored => self.switch_to(next, spheres),
            // A frame that only counts keeps no list for the next frame's events to compare
            // with: the switch waits for a frame that stores its pairs, so the new method's
            // events start from the last list the caller was given.
            Some(next) => self.pending = Some((next, spheres.len())),
            None => {}
        }
        stats.stages.insert(
            0,
            crate::broadphase::StageTime {
                stage: "choose",
                seconds: choosing,
                clock: crate::broadphase::Clock::Wall,
            },
        );
        stats.chosen = choice;
        Ok(stats)
    }

    /// After the current method ran `spheres` with events: `next` runs them too (its events,
    /// every pair found, dropped), so its next frame's events compare with this one, and takes
    /// over; the current method's events of this frame stay due. Where `next` fails, the
    /// current method stays (its events are whole) and is asked again at the next choice.
    fn switch_to(&mut self, next: Choice, spheres: &[Sphere]) {
        self.switched_events = self.inner().and_then(|b| b.take_events());
        let primed = self.ensure_built(next.method).and_then(|()| {
            let broad = self.built_mut(next.method).expect("built above");
            // Stored: a backend counting only keeps no list to compare the next frame with.
            broad.find_pairs_validated(spheres, Some(&mut Vec::new()))?;
            broad.take_events();
            Ok(())
        });
        if primed.is_ok() {
            self.chosen.current = Some(next);
        }
    }
}

impl BroadPhase for Auto {
    fn name(&self) -> &str {
        "auto"
    }

    fn backend(&self) -> Backend {
        self.backend
    }

    /// The chosen method's.
    fn diagnostics(&self) -> Option<&dyn Diagnostics> {
        self.inner_ref()?.diagnostics()
    }

    /// Events by the backend: on only where the chosen method's backend can; a new choice then
    /// takes over after the frame it was made on (module docs).
    fn track_events(&mut self, on: bool) -> Result<bool> {
        // A switch that waited for events' sake is made at the next choice instead.
        if let Some((choice, _)) = self.pending.take()
            && !on
        {
            self.chosen.current = Some(choice);
        }
        if !on {
            self.events = false;
            for (_, b) in &mut self.built {
                b.track_events(false)?;
            }
            return Ok(false);
        }
        // Asked before any frame: probe with the method most scenes choose; a different first
        // choice asks its own method when built (`prepare`).
        let accepted = match self.inner() {
            Some(b) => b.track_events(true)?,
            None => {
                let mut probe = (self.build)(Method::Grid)?;
                let accepted = probe.track_events(true)?;
                self.built.push((Method::Grid, probe));
                accepted
            }
        };
        // Every method built so far tracks them too: a later choice may switch to one (and
        // primes it with the frame it switches on, `switch_to`). One that cannot: all off.
        if accepted {
            let asked = self
                .chosen
                .current
                .as_ref()
                .map_or(Method::Grid, |c| c.method);
            let others = self.built.iter_mut().filter(|(m, _)| *m != asked);
            if let Err(e) = others
                .map(|(_, b)| b.track_events(true))
                .collect::<Result<Vec<_>>>()
            {
                self.track_events(false)?;
                return Err(e);
            }
        }
        self.events = accepted;
        Ok(accepted)
    }

    fn take_events(&mut self) -> Option<FrameEvents> {
        if std::mem::take(&mut self.empty_events_due) {
            return Some(FrameEvents::default());
        }
        if let Some(events) = self.switched_events.take() {
            return Some(events);
        }
        self.inner()?.take_events()
    }

    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        self.frame(spheres, out, |inner, s, out| {
            inner.find_pairs_validated(s, out)
        })
    }

    /// The chosen method's own `find_pairs` where no survey is due (it validates the scene its
    /// way); else the scene validated first, as the survey needs, and the list ordered after.
    fn find_pairs(&mut self, spheres: &[Sphere], mut out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        if spheres.is_empty() || self.survey_due(spheres.len()) {
            let mut stats = validated_unordered(self, spheres, out.as_deref_mut())?;
            order_pairs(out, &mut stats);
            return Ok(stats);
        }
        self.frame(spheres, out, |inner, s, out| inner.find_pairs(s, out))
    }

    /// [`Self::find_pairs`] without the ordering.
    fn find_pairs_unordered(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        if spheres.is_empty() || self.survey_due(spheres.len()) {
            return validated_unordered(self, spheres, out);
        }
        self.frame(spheres, out, |inner, s, out| {
            inner.find_pairs_unordered(s, out)
        })
    }
}

#[cfg(test)]
mod tests;
