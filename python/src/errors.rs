//! The library's errors as Python exceptions (docs/design.md §8.4): bad input `ValueError`, a plan
//! that does not fit memory `MemoryError` (with the library's advice), a missing or failing GPU
//! `RuntimeError`.

use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::{PyErr, PyResult};
use sweepfan::Error;

/// The error that decides the exception type: the innermost of a chain of contexts.
fn innermost(e: &Error) -> &Error {
    match e {
        Error::Context { source, .. } => innermost(source),
        other => other,
    }
}

/// The exception for a library error, with the library's message.
pub fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match innermost(&e) {
        Error::TooLarge { .. } => PyMemoryError::new_err(message),
        // The environment's WGPU_BACKEND names no backend, a runner panicked: not an
        // argument's fault.
        Error::Environment(_)
        | Error::Panicked(_)
        | Error::NoAdapter(_)
        | Error::Gpu { .. }
        | Error::AdapterLacks { .. }
        | Error::OutOfOrder(_)
        | Error::Unsupported(_)
        | Error::Rank { .. } => PyRuntimeError::new_err(message),
        // Cancelled without a signal handler's exception to raise instead (see `interrupt`).
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(message),
        Error::Io { .. } => PyOSError::new_err(message),
        Error::InvalidObject { .. }
        | Error::InvalidId { .. }
        | Error::EmptyScene
        | Error::Config(_)
        | Error::InvalidArgument { .. }
        | Error::UnknownName { .. }
        | Error::LengthMismatch { .. }
        | Error::Parse { .. }
        | Error::Context { .. } => PyValueError::new_err(message),
        // A kind added to the library later (the enum is non-exhaustive).
        _ => PyRuntimeError::new_err(message),
    }
}

/// A library error about object `index` (an [`Error::InvalidObject`]) as a `ValueError` that
/// names the argument `culprit(index, problem)` returns and the row; any other error as
/// [`to_py`].
pub fn with_row(e: Error, culprit: impl Fn(usize, &str) -> String) -> PyErr {
    match e {
        Error::InvalidObject { index, problem } => PyValueError::new_err(format!(
            "{}: row {index}: {problem}",
            culprit(index, &problem)
        )),
        other => to_py(other),
    }
}

/// Whether `check` rejects an object with exactly `problem`: the test [`with_row`]'s culprits
/// use to name the one argument a message is about (a part checked alone must fail the same
/// way, else the message is about the parts together).
pub fn fails_with(check: sweepfan::Result<()>, problem: &str) -> bool {
    matches!(check, Err(Error::InvalidObject { problem: p, .. }) if p == problem)
}

/// Refuses work in a process forked from one that already used sweepfan: the parent's worker
/// threads and GPU devices do not exist in the child, and a call would wait for them forever.
pub fn check_not_forked() -> PyResult<()> {
    static FIRST_PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let pid = std::process::id();
    if *FIRST_PID.get_or_init(|| pid) != pid {
        return Err(PyRuntimeError::new_err(
            "sweepfan was used in this process's parent before fork(): its worker threads and \
             GPU devices do not exist here, so a call would never return; start workers with \
             multiprocessing's 'spawn' or 'forkserver' method, or first use sweepfan after the fork",
        ));
    }
    Ok(())
}

/// A copy of a list, or `MemoryError` when it does not fit (a failed allocation would abort
/// the process).
pub fn copy_of<T: Copy>(list: &[T]) -> PyResult<Vec<T>> {
    let mut copy = Vec::new();
    copy.try_reserve_exact(list.len()).map_err(|_| {
        PyMemoryError::new_err(format!(
            "a copy of {} pairs ({} bytes) does not fit in memory",
            list.len(),
            std::mem::size_of_val(list)
        ))
    })?;
    copy.extend_from_slice(list);
    Ok(copy)
}
