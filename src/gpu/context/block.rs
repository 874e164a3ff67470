//! The one place the library waits for a wgpu future (adapter and device requests, error
//! scopes), and the rule for where it may: natively it blocks (pollster); in a browser (wasm32)
//! the page's thread must not block, so the call is [`Error::Unsupported`], never a panic or a
//! hang.

use crate::error::{Error, Result};

/// Waits for `future`; `what` names the wait in the error a browser build returns.
pub(crate) fn block_on<F: IntoFuture>(what: &str, future: F) -> Result<F::Output> {
    refuse_in_browser(what)?;
    Ok(pollster::block_on(future))
}

/// [`Error::Unsupported`] in a browser build, where `what` would block the page's thread (the
/// blocking GPU calls); `Ok` elsewhere.
pub(crate) fn refuse_in_browser(what: &str) -> Result<()> {
    if cfg!(target_arch = "wasm32") {
        return Err(Error::Unsupported(format!(
            "{what} waits for the GPU device, which a browser's page cannot block on; in the \
             browser the CPU methods run"
        )));
    }
    Ok(())
}
