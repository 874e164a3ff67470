//! Cooperative cancellation of long calls (docs/design.md §9.18): a caller that wants to stop
//! a call from another thread (Python's Ctrl-C, a signal handler) gives it a [`CancelToken`] in
//! its [`crate::Limits`]; the library looks at it between chunks of a candidate loop (the CPU
//! methods' pair emission, `cpu::emit`) and while it waits for a device, and fails with
//! [`Error::Interrupted`] once it is set. Objects are left whole: the next call recomputes what
//! the cancelled one had begun (a device still finishing the abandoned work delays the next
//! wait, nothing else).

use crate::error::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag another thread sets to stop the calls run under it.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the calls under this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Self::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Error::Interrupted)` once cancelled.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// The token of the limits the calling thread runs under ([`crate::Limits::run`]): loops that
/// hand work to other threads take it with them.
pub(crate) fn current() -> Option<CancelToken> {
    super::limits::current().cancel
}

/// Pairs a per-pair loop (the SAT stage, contacts) runs between two looks at its token: a look
/// is one atomic load, a pair tens of nanoseconds (boxes) to milliseconds (polygons of
/// thousands of vertices).
pub(crate) const PAIRS_PER_LOOK: usize = 64;

/// Whether `token` is set and cancelled.
#[inline]
pub(crate) fn stopped(token: &Option<CancelToken>) -> bool {
    token.as_ref().is_some_and(CancelToken::is_cancelled)
}

/// `Err(Error::Interrupted)` when `token` is set and cancelled.
pub(crate) fn check(token: &Option<CancelToken>) -> Result<()> {
    token.as_ref().map_or(Ok(()), CancelToken::check)
}
