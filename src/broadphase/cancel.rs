//! Cooperative cancellation of long calls (docs/design.md §9.18): a caller that wants to stop
//! a call from another thread (Python's Ctrl-C, a signal handler) runs it under a
//! [`CancelToken`] with [`with_token`]; the library looks at the calling thread's token between
//! chunks of a candidate loop (the CPU methods' pair emission, `cpu::emit`) and while it waits for a device,
//! and fails with [`Error::Interrupted`] once it is set. Objects are left whole: the next call
//! recomputes what the cancelled one had begun (a device still finishing the abandoned work
//! delays the next wait, nothing else).

use crate::error::{Error, Result};
use std::cell::RefCell;
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

thread_local! {
    static CURRENT: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
}

/// Runs `f` with `token` as this thread's token (the one before is restored after).
pub fn with_token<T>(token: &CancelToken, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<CancelToken>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(token.clone())));
    f()
}

/// The calling thread's token, if a caller set one: loops that hand work to other threads
/// take it with them.
pub fn current() -> Option<CancelToken> {
    CURRENT.with(|c| c.borrow().clone())
}

/// `Err(Error::Interrupted)` when `token` is set and cancelled.
pub fn check(token: &Option<CancelToken>) -> Result<()> {
    token.as_ref().map_or(Ok(()), CancelToken::check)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token is seen on its thread only while `with_token` runs, and nested tokens restore.
    #[test]
    fn tokens_are_scoped_to_their_thread_and_call() {
        assert!(current().is_none());
        let (outer, inner) = (CancelToken::new(), CancelToken::new());
        with_token(&outer, || {
            inner.cancel();
            with_token(&inner, || assert!(check(&current()).is_err()));
            assert!(check(&current()).is_ok());
            std::thread::scope(|s| {
                s.spawn(|| assert!(current().is_none()));
            });
        });
        assert!(current().is_none());
    }
}
