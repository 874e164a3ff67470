//! Waiting for the device, and the rule for where the library may (docs/design.md §8.5):
//! natively it blocks (pollster); in a browser (wasm32) the page's thread must not block, so
//! a blocking call is [`Error::Unsupported`] there, never a panic or a hang, and the async
//! entry points ([`super::GpuContext::new_async`], `map_read_async`,
//! `GpuBroadPhase::find_pairs_async`, `BoxBroadPhase::update_async`) await the browser instead.

use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

/// Waits for `future`; `what` names the wait in the error a browser build returns.
pub(crate) fn block_on<F: IntoFuture>(what: &str, future: F) -> Result<F::Output> {
    refuse_in_browser(what)?;
    Ok(pollster::block_on(future))
}

/// Declares a blocking method and its async twin (docs/design.md §8.5), so that each pair
/// writes its argument list once: the blocking method's docs, visibility and name,
/// `= "what it waits for";`, then the whole async method (docs past the first line, which the
/// macro writes: "[`Self::name`] as a future, for a browser's page", visibility,
/// `async fn name_async(&mut self, arg: Type, ...) -> Result<T>` and its body; arguments are
/// plain names, rebound in the body where they must be `mut`). It emits the blocking method,
/// with the async one's arguments and return type, then the async method as written; both
/// signatures stay whole for rustdoc. The blocking method waits for its twin with
/// [`block_on`]: in a browser build it is [`Error::Unsupported`].
macro_rules! blocking {
    ($(#[$doc:meta])* $vis:vis fn $name:ident = $what:expr;
        $(#[$twin_doc:meta])* $twin_vis:vis async fn $twin:ident(
            &mut $self:ident $(, $arg:ident: $ty:ty)* $(,)?
        ) -> $ret:ty $body:block) => {
        // The async receiver is the caller's `self` token (`$self`): a macro's own `self` would
        // not be the one its body names.
        $(#[$doc])*
        $vis fn $name(&mut self $(, $arg: $ty)*) -> $ret {
            $crate::gpu::context::block::block_on($what, self.$twin($($arg),*))?
        }

        #[doc = concat!(
            "[`Self::", stringify!($name),
            "`] as a future, for a browser's page (docs/design.md §8.5)."
        )]
        $(#[$twin_doc])*
        $twin_vis async fn $twin(&mut $self $(, $arg: $ty)*) -> $ret $body
    };
}
pub(crate) use blocking;

/// [`Error::Unsupported`] in a browser build, where `what` would block the page's thread (the
/// blocking GPU calls); `Ok` elsewhere.
pub(crate) fn refuse_in_browser(what: &str) -> Result<()> {
    if cfg!(target_arch = "wasm32") {
        return Err(Error::Unsupported(format!(
            "{what} waits for the GPU device, which a browser's page cannot block on; in the \
             browser use the async entry points (GpuContext::new_async, \
             GpuBroadPhase::find_pairs_async, BoxBroadPhase::update_async, ...) or the CPU \
             methods"
        )));
    }
    Ok(())
}

/// Runs `make` inside error scopes of `filters` and returns the first error they caught (in
/// the order of `filters`). In a browser build no scope is pushed (popping one is a wait): an
/// error then reaches the device's handler, and the next [`super::GpuContext::check`] reports
/// it.
pub(crate) fn caught<T>(
    device: &wgpu::Device,
    filters: &[wgpu::ErrorFilter],
    make: impl FnOnce() -> T,
) -> (T, Option<wgpu::Error>) {
    if cfg!(target_arch = "wasm32") {
        return (make(), None);
    }
    let scopes: Vec<_> = filters
        .iter()
        .map(|&f| device.push_error_scope(f))
        .collect();
    let value = make();
    // Scopes pop in the reverse order of their pushes.
    let mut errors: Vec<_> = scopes
        .into_iter()
        .rev()
        .map(|scope| pollster::block_on(scope.pop()))
        .collect();
    errors.reverse();
    (value, errors.into_iter().flatten().next())
}

/// A value a wgpu callback delivers once (a buffer map's outcome), awaited by the async entry
/// points: ready once the callback has run, however the runtime drives it (the browser's event
/// loop; natively a device poll).
pub(crate) struct Delivery<T> {
    slot: Arc<Mutex<(Option<T>, Option<Waker>)>>,
}

impl<T> Delivery<T> {
    /// The future, and the function the callback calls with the value.
    pub fn new() -> (Self, impl FnOnce(T) + Send + 'static)
    where
        T: Send + 'static,
    {
        let slot = Arc::new(Mutex::new((None, None::<Waker>)));
        let sender = slot.clone();
        let deliver = move |value: T| {
            let mut s = sender.lock().unwrap_or_else(|p| p.into_inner());
            s.0 = Some(value);
            if let Some(waker) = s.1.take() {
                waker.wake();
            }
        };
        (Self { slot }, deliver)
    }
}

impl<T> Future for Delivery<T> {
    type Output = T;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<T> {
        let mut s = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        match s.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A delivery made before or after the first poll completes the future with its value.
    #[test]
    fn a_delivery_completes_its_future_whenever_it_comes() {
        let (early, deliver) = Delivery::new();
        deliver(7u32);
        assert_eq!(pollster::block_on(early), 7);
        let (late, deliver) = Delivery::new();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            deliver(9u32);
        });
        assert_eq!(pollster::block_on(late), 9);
        sender.join().unwrap();
    }
}
