//! Long calls that Ctrl-C stops (docs/design.md §9.18): the work runs on a thread of its own
//! under a library [`CancelToken`] while the calling thread, the GIL released, waits for it in
//! short steps and runs Python's signal handlers between them. A `KeyboardInterrupt` (or any
//! exception a handler raises) cancels the token; the library stops at its next look (between
//! chunks of a candidate loop, within 100 ms of a device wait), the objects left whole, and the
//! exception is raised from the call. Every call runs under the system's memory budget
//! ([`limits`]): a request past what the process may allocate is a `MemoryError`, not an abort.

use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::Duration;
use sweepfan::{CancelToken, Limits, MemoryBudget};

/// The limits a call from Python runs under: the system's memory (available memory, `ulimit
/// -v`, the cgroup's limit), and no token unless [`interruptible`] gives one.
pub fn limits() -> Limits {
    Limits::new().with_memory(MemoryBudget::System)
}

/// Inputs below this many objects run on the calling thread: they end in milliseconds, and a
/// thread costs more than that would save.
const THREAD_MIN_OBJECTS: usize = 4096;

/// How often the waiting thread runs the signal handlers.
const STEP: Duration = Duration::from_millis(50);

/// Runs `work` (on `objects` objects) with the GIL released, stopping it when a signal handler
/// raises: the call then raises that exception (`KeyboardInterrupt` for Ctrl-C).
pub fn interruptible<T: Send>(
    py: Python<'_>,
    objects: usize,
    work: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<T> {
    if objects < THREAD_MIN_OBJECTS {
        return py.detach(|| limits().run(work));
    }
    let token = CancelToken::new();
    std::thread::scope(|s| {
        let (done, mut result) = mpsc::channel();
        let token_for_work = &token;
        let worker = s.spawn(move || {
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
        match (raised, out) {
            (Some(e), _) => Err(e),
            (None, Some(out)) => out,
            (None, None) => unreachable!("a worker that sent nothing panicked"),
        }
    })
}
