//! The signal side of the output module (docs/design.md §8.3): a fixed table of the temporary
//! files of atomic writes in progress, which a handler for SIGINT, SIGTERM and SIGHUP reads
//! without a lock or an allocation, then says on standard error what ended the process
//! (async-signal-safe: atomic swaps, `unlink`, `signal`, `write`, `raise`); and, on Linux,
//! SIGPIPE blocked around in-place writes so that a reader that went away is an error naming
//! the output.

#[cfg(unix)]
pub(super) use unix::*;

#[cfg(not(unix))]
pub(super) use other::*;

#[cfg(unix)]
mod unix {
    use std::ffi::CString;
    use std::path::Path;
    use std::ptr::null_mut;
    use std::sync::atomic::{AtomicPtr, Ordering};

    const SLOTS: usize = 64;
    static TEMPORARIES: [AtomicPtr<libc::c_char>; SLOTS] =
        [const { AtomicPtr::new(null_mut()) }; SLOTS];

    /// Lists `path` for the handler; `None` when the table is full (64 writes at once) or the
    /// path has a NUL: that temporary is then only removed on errors, not on a signal.
    pub fn register(path: &Path) -> Option<usize> {
        use std::os::unix::ffi::OsStrExt;
        let raw = CString::new(path.as_os_str().as_bytes()).ok()?.into_raw();
        for (i, slot) in TEMPORARIES.iter().enumerate() {
            if slot
                .compare_exchange(null_mut(), raw, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Some(i);
            }
        }
        // SAFETY: `raw` came from `into_raw` above and was stored nowhere.
        drop(unsafe { CString::from_raw(raw) });
        None
    }

    /// Takes `path` off the list. Whoever swaps a slot's pointer out owns it: here it is freed;
    /// in the handler it is unlinked (and never freed: the process ends).
    pub fn unregister(slot: usize) {
        let raw = TEMPORARIES[slot].swap(null_mut(), Ordering::SeqCst);
        if !raw.is_null() {
            // SAFETY: a non-null slot holds a pointer from `register`'s `into_raw`, and the
            // swap made this call its only owner.
            drop(unsafe { CString::from_raw(raw) });
        }
    }

    /// Removes every listed temporary (async-signal-safe).
    fn remove_all() {
        for slot in &TEMPORARIES {
            let raw = slot.swap(null_mut(), Ordering::SeqCst);
            if !raw.is_null() {
                // SAFETY: a NUL-terminated path from `register`, owned by this call now.
                unsafe { libc::unlink(raw) };
            }
        }
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        let why: &[u8] = match signal {
            libc::SIGTERM => b"sweepfan: terminated (SIGTERM)\n",
            libc::SIGHUP => b"sweepfan: hung up (SIGHUP)\n",
            // Not `main`'s `sweepfan: interrupted`, which says the call stopped at its token.
            _ => b"sweepfan: ended by Ctrl-C\n",
        };
        end_by(signal, why);
    }

    /// Removes the temporaries, says `why` on standard error and ends the process as `signal`
    /// does (async-signal-safe: atomic swaps, `unlink`, `signal`, one `write`, `raise`).
    fn end_by(signal: libc::c_int, why: &[u8]) {
        remove_all();
        // SAFETY: all are async-signal-safe; SIGPIPE ignored first, so that a standard error
        // whose reader is gone cannot end the process by another signal; the default action
        // ends it with this signal's status (130 for Ctrl-C in a shell), as if no handler had
        // been installed.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            libc::write(libc::STDERR_FILENO, why.as_ptr().cast(), why.len());
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }

    /// The token the first SIGINT cancels (`stop_calls_on_interrupt`), if any.
    static STOP: std::sync::OnceLock<sweepfan::CancelToken> = std::sync::OnceLock::new();

    /// Seconds a cancelled call has to return before the process ends as the signal would.
    const GRACE_SECONDS: libc::c_uint = 2;

    /// SIGINT with a token: the first cancels it and leaves the call `GRACE_SECONDS` to stop
    /// (an alarm ends the process then); a second, or one without a token, ends it at once.
    extern "C" fn on_interrupt(signal: libc::c_int) {
        if let Some(token) = STOP.get()
            && !token.is_cancelled()
        {
            token.cancel();
            // SAFETY: async-signal-safe.
            unsafe { libc::alarm(GRACE_SECONDS) };
            return;
        }
        on_signal(signal);
    }

    /// The grace ran out: as the SIGINT would have done, saying so. (A call blocked where no
    /// token is looked at: a software driver's queue submission waits for the work before it,
    /// docs/design.md §9.18.)
    extern "C" fn on_alarm(_: libc::c_int) {
        end_by(
            libc::SIGINT,
            b"sweepfan: ended 2 s after Ctrl-C: the running call did not stop in time\n",
        );
    }

    /// Sets `handler` for `signal` unless the process ignores it; whether it did.
    fn handle(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) -> bool {
        // SAFETY: plain sigaction calls on zero-initialised structs (a valid empty state); the
        // handlers only do async-signal-safe work (atomics, alarm, unlink, signal, write,
        // raise).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                return false;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(signal, &action, std::ptr::null_mut()) == 0
        }
    }

    pub fn stop_calls_on_interrupt(token: sweepfan::CancelToken) {
        if STOP.set(token).is_ok() && handle(libc::SIGINT, on_interrupt) {
            handle(libc::SIGALRM, on_alarm);
        }
    }

    pub fn end_as_interrupted() -> ! {
        // SAFETY: async-signal-safe. The grace's alarm is not wanted now: the call stopped.
        unsafe { libc::alarm(0) };
        remove_all();
        // SAFETY: as in `on_signal`.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
        std::process::exit(130)
    }

    pub fn install() {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: plain sigaction calls on zero-initialised structs (a valid empty state);
            // the handler only does async-signal-safe work.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut action.sa_mask);
                action.sa_flags = libc::SA_RESTART;
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }

    /// While alive, SIGPIPE is blocked on this thread, so a write to a pipe or socket whose
    /// reader has gone returns `EPIPE` (an error naming the output) instead of ending the
    /// process; a SIGPIPE raised meanwhile is consumed before the old mask returns.
    #[cfg(target_os = "linux")]
    pub struct PipeErrorsAsErrors {
        old: libc::sigset_t,
        was_pending: bool,
    }

    #[cfg(target_os = "linux")]
    impl PipeErrorsAsErrors {
        pub fn new() -> Self {
            // SAFETY: sigset operations on local, initialised sets; pthread_sigmask changes
            // only this thread's mask.
            unsafe {
                let mut pipe: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut pipe);
                libc::sigaddset(&mut pipe, libc::SIGPIPE);
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
                PipeErrorsAsErrors {
                    old,
                    was_pending: pending(),
                }
            }
        }
    }

    /// Whether a SIGPIPE waits on this thread or the process.
    #[cfg(target_os = "linux")]
    fn pending() -> bool {
        // SAFETY: as above.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGPIPE) == 1
        }
    }

    #[cfg(target_os = "linux")]
    impl Drop for PipeErrorsAsErrors {
        fn drop(&mut self) {
            // SAFETY: as above; sigwait returns at once, the signal being pending.
            unsafe {
                if !self.was_pending && pending() {
                    let mut pipe: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut pipe);
                    libc::sigaddset(&mut pipe, libc::SIGPIPE);
                    let mut got: libc::c_int = 0;
                    libc::sigwait(&pipe, &mut got);
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
            }
        }
    }

    /// Elsewhere SIGPIPE keeps its action (a reader that went away ends the process).
    #[cfg(not(target_os = "linux"))]
    pub struct PipeErrorsAsErrors;

    #[cfg(not(target_os = "linux"))]
    impl PipeErrorsAsErrors {
        pub fn new() -> Self {
            PipeErrorsAsErrors
        }
    }

    #[cfg(test)]
    pub fn remove_slot_as_the_handler_does(slot: usize) {
        let raw = TEMPORARIES[slot].swap(null_mut(), Ordering::SeqCst);
        if !raw.is_null() {
            // SAFETY: as in `remove_all`; the test then frees nothing (a small leak).
            unsafe { libc::unlink(raw) };
        }
    }
}

#[cfg(not(unix))]
mod other {
    use std::path::Path;

    pub fn register(_: &Path) -> Option<usize> {
        None
    }

    pub fn unregister(_: usize) {}

    pub fn install() {}

    pub fn stop_calls_on_interrupt(_: sweepfan::CancelToken) {}

    pub fn end_as_interrupted() -> ! {
        std::process::exit(130)
    }

    pub struct PipeErrorsAsErrors;

    impl PipeErrorsAsErrors {
        pub fn new() -> Self {
            PipeErrorsAsErrors
        }
    }
}
