//! Long calls that Ctrl-C stops (docs/design.md §9.18): the work runs on a thread of its own
//! under a library [`CancelToken`] while the calling thread, the GIL released, waits for it in
//! short steps and runs Python's signal handlers between them. A `KeyboardInterrupt` (or any
//! exception a handler raises) cancels the token; the library stops at its next look (between
//! chunks of a candidate loop, within 100 ms of a device wait), the objects left whole, and the
//! exception is raised from the call. Every call runs under the system's memory budget
//! ([`limits`]): a request past what the process may allocate is a `MemoryError`, not an abort.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use sweepfan::{CancelToken, Limits, MemoryBudget};

/// The limits a call from Python runs under: the system's memory (available memory, `ulimit
/// -v`, the cgroup's limit), and no token unless [`interruptible`] gives one.
pub fn limits() -> Limits {
    Limits::new().with_memory(MemoryBudget::System)
}

/// Calls whose work ([`all_pairs`], [`Work`]) stays below this run on the calling thread: they
/// end in milliseconds, and a thread costs more than that would save. The sphere tests of
/// every pair of 4,096 objects (an upper bound on any method's, about 10 ms by brute force);
/// the number of objects alone said nothing of 300 polygons of 1,000 vertices (25 s).
const THREAD_MIN_WORK: u64 = all_pairs(4096);

/// How often the waiting thread runs the signal handlers.
const STEP: Duration = Duration::from_millis(50);

/// A bound on a call's work in sphere tests (a box's SAT test about [`BOX_PAIR`] of them, a
/// polygon pair's the product of their vertex counts), from which [`interruptible`] decides
/// whether Ctrl-C needs a thread of its own.
pub type Work = u64;

/// Work of a box pair's SAT test or contact, in sphere tests.
pub const BOX_PAIR: Work = 16;

/// Every pair of `objects`: the most any broad phase or narrow phase tests.
pub const fn all_pairs(objects: usize) -> Work {
    let n = objects as u64;
    n.saturating_mul(n.saturating_sub(1)) / 2
}

/// Shapes whose pairs cost work in proportion to their size.
pub trait Weighed: Sized {
    /// The work of one pair's test or contact.
    fn pair_work(&self, other: &Self) -> Work;
    /// A bound on the work of every pair of `shapes`.
    fn all_pairs_work(shapes: &[Self]) -> Work;
}

impl Weighed for sweepfan::Sphere {
    fn pair_work(&self, _: &Self) -> Work {
        1
    }
    fn all_pairs_work(shapes: &[Self]) -> Work {
        all_pairs(shapes.len())
    }
}

impl Weighed for sweepfan::Obb {
    fn pair_work(&self, _: &Self) -> Work {
        BOX_PAIR
    }
    fn all_pairs_work(shapes: &[Self]) -> Work {
        all_pairs(shapes.len()).saturating_mul(BOX_PAIR)
    }
}

impl Weighed for sweepfan::Polygon {
    /// Each edge of one against each vertex of the other.
    fn pair_work(&self, other: &Self) -> Work {
        (self.vertices().len() as u64).saturating_mul(other.vertices().len() as u64)
    }
    /// The sum over pairs of their vertex counts' products is at most [`all_pairs`] of every
    /// vertex.
    fn all_pairs_work(shapes: &[Self]) -> Work {
        all_pairs(shapes.iter().map(|p| p.vertices().len()).sum())
    }
}

/// Work of a contact beyond its pair's test, in sphere tests: its f64 geometry and its row of
/// the result's arrays. 4.7M sphere contacts took 1.0 s on 2 cores, about 180 sphere tests
/// each; weighed as one test, the call ran on the calling thread and a Ctrl-C waited 1.4 s.
pub const CONTACT_ROW: Work = 128;

/// The work of the contacts of the given `pairs` of `shapes` (pairs naming no shape, refused
/// later, count their row alone).
pub fn contacts_work<S: Weighed>(shapes: &[S], pairs: &[sweepfan::Pair]) -> Work {
    pairs
        .iter()
        .map(
            |&[i, j]| match (shapes.get(i as usize), shapes.get(j as usize)) {
                (Some(a), Some(b)) => a.pair_work(b).saturating_add(CONTACT_ROW),
                _ => CONTACT_ROW,
            },
        )
        .fold(0, Work::saturating_add)
}

thread_local! {
    /// The token of the call whose work runs on this thread ([`interruptible`]'s worker).
    static WORK_TOKEN: std::cell::RefCell<Option<CancelToken>> = const { std::cell::RefCell::new(None) };
}

/// Fails when Ctrl-C has come for the call whose work runs on this thread: stateful work looks
/// here last, before it keeps its new state, so an interrupted call changes nothing (the error
/// itself is replaced by the handler's exception).
pub fn stop_if_interrupted() -> PyResult<()> {
    WORK_TOKEN.with(|t| match &*t.borrow() {
        Some(token) if token.is_cancelled() => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        )),
        _ => Ok(()),
    })
}

/// Set when a call was interrupted, cleared when a call under a token ends without one: an
/// interrupted GPU call leaves its device work queued, and the next call, however small, waits
/// for it (as long as that work runs: tens of seconds after a large frame, minutes after a
/// software adapter's brute force of 200,000 spheres; the device's work cannot be withdrawn),
/// so it runs under a token too, and Ctrl-C stops its wait.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Runs `work` (of at most `bound` sphere tests' work) with the GIL released, stopping it when
/// a signal handler raises: the call then raises that exception (`KeyboardInterrupt` for
/// Ctrl-C). A Ctrl-C after the work's last look at the token, where the work ended and kept its
/// state, lets the call return its result and raises right after it (the interrupt set again):
/// it once raised from the call, and a box update that had kept its frame lost its events (the
/// next update found none of the 4.5M pairs). Only `KeyboardInterrupt` is set again (its
/// handler then runs a second time, after the call); another exception a handler raises ends the
/// call with that exception, its result dropped.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    bound: Work,
    work: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<T> {
    if bound < THREAD_MIN_WORK && !INTERRUPTED.load(Ordering::Relaxed) {
        return py.detach(|| limits().run(work));
    }
    let token = CancelToken::new();
    std::thread::scope(|s| {
        let (done, mut result) = mpsc::channel();
        let token_for_work = &token;
        let worker = s.spawn(move || {
            WORK_TOKEN.with(|t| *t.borrow_mut() = Some(token_for_work.clone()));
            let out = limits().with_cancel(token_for_work.clone()).run(work);
            let _ = done.send(out);
        });
        let mut raised: Option<PyErr> = None;
        let out = loop {
            // The receiver goes with the wait and comes back (it is `Send`, not `Sync`).
            let (received, back) = py.detach(move || (result.recv_timeout(STEP), result));
            result = back;
            match received {
                Ok(out) => break Some(out),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if raised.is_none()
                        && let Err(e) = py.check_signals()
                    {
                        token.cancel();
                        raised = Some(e);
                    }
                }
                // The worker ended without a result: it panicked (raised again below).
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            }
        };
        if let Err(panic) = py.detach(|| worker.join()) {
            std::panic::resume_unwind(panic);
        }
        // Ctrl-C after the work's last look at the token: the work ended and kept its state,
        // so the call returns what it made (an update that raised must have changed nothing),
        // and the interrupt is set again, for Python to raise right after the call, as it does
        // after any call that completed.
        if let (Some(e), Some(Ok(_))) = (&raised, &out)
            && e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
        {
            // SAFETY: called with the GIL held; it only marks SIGINT as tripped.
            unsafe { pyo3::ffi::PyErr_SetInterrupt() };
            raised = None;
        }
        INTERRUPTED.store(raised.is_some(), Ordering::Relaxed);
        match (raised, out) {
            (Some(e), _) => Err(e),
            (None, Some(out)) => out,
            (None, None) => unreachable!("a worker that sent nothing panicked"),
        }
    })
}
