//! What a call may use and when it must stop, as the caller gives them (docs/design.md §8.1,
//! §9.14, §9.18): a [`MemoryBudget`], against which the CPU methods check every growth of their
//! pair buffers and a request is checked before anything is allocated, and a [`CancelToken`]
//! that another thread sets to stop long calls.
//!
//! Nothing here is read by the library on its own: without [`Limits::run`] a call has no budget
//! and no token. A caller that wants the system's figure (available memory, `ulimit -v`, the
//! cgroup's limit) asks for it by name, [`MemoryBudget::System`], or reads it itself:
//! [`available`] and the checks beside it (a scene of n objects, a request of bytes) are what
//! the tool runs before it generates or reads a scene.
//!
//! ```
//! use sweepfan::{BroadPhase, CancelToken, Limits, MemoryBudget, Method, Sphere, cpu};
//! use glam::Vec3;
//!
//! // A million spheres at one point: about 500 billion pairs, far past 1 MiB.
//! let point = vec![Sphere::new(Vec3::ZERO, 1.0); 1 << 20];
//! let limits = Limits::new().with_memory(MemoryBudget::Bytes(1 << 20));
//! let mut grid = cpu::broad_phase(Method::Grid);
//! let mut pairs = Vec::new();
//! let refused = limits.run(|| grid.find_pairs(&point[..4096], Some(&mut pairs)));
//! let Err(e @ sweepfan::Error::TooLarge { .. }) = refused else { panic!("{refused:?}") };
//! assert!(e.to_string().contains("the caller's budget"), "{e}");
//! // Without a budget the same call stores its 8,386,560 pairs.
//! assert_eq!(grid.find_pairs(&point[..4096], Some(&mut pairs))?.pairs, 8_386_560);
//!
//! // A token cancelled (by another thread, a signal handler) stops the call at its next look.
//! let token = CancelToken::new();
//! token.cancel();
//! let stopped = Limits::new().with_cancel(token).run(|| grid.find_pairs(&point, None));
//! assert!(matches!(stopped, Err(sweepfan::Error::Interrupted)));
//! # Ok::<(), sweepfan::Error>(())
//! ```

use super::cancel::CancelToken;
pub use super::memory::{
    Available, HOST_BYTES_PER_OBJECT, Limit, available, available_bytes, check_fits, check_fits_or,
    check_scene_size, check_scene_size_with, reserve, too_large,
};
use std::cell::RefCell;

/// The memory a call may allocate as it goes (the CPU methods' pair lists, a scene read from a
/// file, a generated scene), checked before each growth: past it the call fails with
/// [`crate::Error::TooLarge`] naming what it needed, never an allocation failure that aborts the
/// process (docs/design.md §9.14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryBudget {
    /// No budget: growth is limited only by the pair limit of a call. The default: the library
    /// reads no system figure unless asked to.
    #[default]
    Unchecked,
    /// At most this many bytes, the whole of it usable.
    Bytes(u64),
    /// The system's figure, read when a call first needs it (a call that allocates less than
    /// 16 MiB never reads it): the smallest of `MemAvailable` in `/proc/meminfo`, the
    /// address-space limit (`ulimit -v`) less the process's size, and the cgroup's memory limit
    /// less its usage, three quarters of it usable. `None` where the system states none (not
    /// Linux).
    System,
}

impl MemoryBudget {
    /// The bytes one request may use now (`None`: no budget): a budget of bytes whole, three
    /// quarters of the system's figure (read now).
    ///
    /// ```
    /// use sweepfan::MemoryBudget;
    /// assert_eq!(MemoryBudget::Bytes(1 << 30).usable_bytes(), Some(1 << 30));
    /// assert_eq!(MemoryBudget::Unchecked.usable_bytes(), None);
    /// ```
    pub fn usable_bytes(&self) -> Option<u64> {
        self.available().map(|a| a.usable())
    }

    /// What a call may allocate now, and where the figure comes from (`None`: no budget).
    pub(crate) fn available(&self) -> Option<Available> {
        match *self {
            MemoryBudget::Unchecked => None,
            MemoryBudget::Bytes(bytes) => Some(Available {
                bytes,
                limit: Limit::Given,
            }),
            MemoryBudget::System => super::memory::system_available(),
        }
    }
}

/// A call's limits: its memory budget and its cancellation, both the caller's. The default is
/// no budget and no token.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// What the calls may allocate.
    pub memory: MemoryBudget,
    /// Set by another thread to stop the calls at their next look: between chunks of a
    /// candidate loop and every 100 ms of a wait for a device; they fail with
    /// [`crate::Error::Interrupted`] and leave their objects whole (the next call recomputes).
    pub cancel: Option<CancelToken>,
}

thread_local! {
    static CURRENT: RefCell<Limits> = RefCell::new(Limits::default());
}

impl Limits {
    /// No budget, no token.
    pub fn new() -> Self {
        Self::default()
    }

    /// These limits with `memory` as the budget.
    pub fn with_memory(mut self, memory: MemoryBudget) -> Self {
        self.memory = memory;
        self
    }

    /// These limits with `token` as the cancellation.
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Runs `f` under these limits: every sweepfan call `f` makes on this thread, and the work
    /// those calls hand to other threads, allocates within [`Self::memory`] and stops at
    /// [`Self::cancel`]. The limits before are restored after, also when `f` panics; calls made
    /// outside `f` (another thread the caller starts itself) do not see them.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Restore(Option<Limits>);
        impl Drop for Restore {
            fn drop(&mut self) {
                if let Some(before) = self.0.take() {
                    CURRENT.with(|c| *c.borrow_mut() = before);
                }
            }
        }
        let before = CURRENT.with(|c| c.replace(self.clone()));
        let _restore = Restore(Some(before));
        f()
    }
}

/// The limits the calling thread runs under ([`Limits::run`]): a call takes them along to the
/// threads it hands work to.
pub(crate) fn current() -> Limits {
    CURRENT.with(|c| c.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits are seen on their thread only while `run` runs, nested ones restore, and the
    /// default is no budget and no token.
    #[test]
    fn limits_are_scoped_to_their_thread_and_call() {
        assert_eq!(current().memory, MemoryBudget::Unchecked);
        assert!(current().cancel.is_none());
        let outer = Limits::new().with_memory(MemoryBudget::Bytes(1000));
        let inner = Limits::new().with_cancel(CancelToken::new());
        outer.run(|| {
            assert_eq!(current().memory, MemoryBudget::Bytes(1000));
            inner.run(|| {
                assert_eq!(current().memory, MemoryBudget::Unchecked);
                assert!(current().cancel.is_some());
            });
            assert!(current().cancel.is_none());
            std::thread::scope(|s| {
                s.spawn(|| assert_eq!(current().memory, MemoryBudget::Unchecked));
            });
        });
        assert_eq!(current().memory, MemoryBudget::Unchecked);
        let caught = std::panic::catch_unwind(|| outer.run(|| panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(current().memory, MemoryBudget::Unchecked);
    }

    /// A budget of bytes is all usable and named as the caller's; no budget has no figure.
    #[test]
    fn a_given_budget_is_usable_whole() {
        let given = MemoryBudget::Bytes(4 << 20).available().unwrap();
        assert_eq!(given.usable(), 4 << 20);
        assert_eq!(MemoryBudget::Bytes(4 << 20).usable_bytes(), Some(4 << 20));
        assert!(
            given.describe().contains("the caller's budget"),
            "{}",
            given.describe()
        );
        assert_eq!(MemoryBudget::Unchecked.available(), None);
    }
}
