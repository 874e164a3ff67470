//! The library's errors as Python exceptions (docs/design.md §8.4): bad input `ValueError`, a plan
//! that does not fit memory `MemoryError` (with the library's advice), a missing or failing GPU
//! `RuntimeError`.

use pyo3::PyErr;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
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
        Error::TooLarge(_) => PyMemoryError::new_err(message),
        Error::NoAdapter(_) | Error::Gpu(_) => PyRuntimeError::new_err(message),
        Error::Io { .. } => PyOSError::new_err(message),
        Error::InvalidObject { .. }
        | Error::EmptyScene
        | Error::Config(_)
        | Error::Parse { .. }
        | Error::Context { .. } => PyValueError::new_err(message),
    }
}

/// A library error about object `index` (an [`Error::InvalidObject`]) as a `ValueError` that
/// names the argument `culprit(index)` returns and the row; any other error as [`to_py`].
pub fn with_row(e: Error, culprit: impl Fn(usize) -> String) -> PyErr {
    match e {
        Error::InvalidObject { index, problem } => {
            PyValueError::new_err(format!("{}: row {index}: {problem}", culprit(index)))
        }
        other => to_py(other),
    }
}
