//! Waits for the device (docs/design.md §9.16, §9.18): whole or for one submission, in 100 ms
//! steps under a caller's cancellation token, and the wait a cancelled one left owed.

use super::{GpuContext, block};
use crate::error::{Error, GpuFailure, Result};

impl GpuContext {
    /// Blocks until the queue is idle, then reports any recorded error.
    pub fn wait(&self) -> Result<()> {
        self.wait_for(None)
    }

    /// Blocks until the submission `index` has run (the queue idle for `None`), then reports
    /// any recorded error. Frames in flight wait for their own submission, not the next
    /// frame's (docs/design.md §9.16).
    pub(crate) fn wait_for(&self, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        block::refuse_in_browser("a wait for the queue")?;
        self.host_waits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Under a caller's cancellation token the wait can be abandoned: waited in steps, the
        // token looked at between them (docs/design.md §9.18).
        let cancel = crate::broadphase::cancel::current();
        let step = cancel
            .as_ref()
            .map(|_| std::time::Duration::from_millis(100));
        loop {
            let poll = wgpu::PollType::Wait {
                submission_index: index.clone(),
                timeout: step,
            };
            match self.device.poll(poll) {
                Ok(_) => break,
                Err(wgpu::PollError::Timeout) => {
                    if let Err(e) = crate::broadphase::cancel::check(&cancel) {
                        self.abandoned
                            .store(true, std::sync::atomic::Ordering::Relaxed);
                        return Err(e);
                    }
                }
                Err(e) => {
                    return Err(Error::gpu(GpuFailure::Device, format!("poll: {e}")));
                }
            }
        }
        self.check()
    }

    /// Waits, under the caller's token, for the work a cancelled wait left on the queue, before
    /// a frame submits its own (docs/design.md §9.18): some drivers (lavapipe) block in the
    /// submission itself while the queue is busy, where no token is looked at, so the call after
    /// an interrupted 60,000-sphere brute force ignored Ctrl-C for 28 s. Nothing to wait for
    /// otherwise.
    pub(crate) fn settle(&self) -> Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        if self.abandoned.load(Relaxed) {
            self.wait_for(None)?;
            self.abandoned.store(false, Relaxed);
        }
        Ok(())
    }
}
