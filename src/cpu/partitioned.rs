//! A CPU broad phase in parts (docs/design.md §2.10): where the memory this process may use
//! holds the scene but not a whole frame's buffers (256 B per object), the frame runs through
//! [`crate::partition`] with parts that fit, each found by the method itself.

use crate::broadphase::{Backend, BroadPhase, Diagnostics, Pair, PartsReport, Stats};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use crate::partition::{self, PartRunner};

/// `inner` run on parts of at most `max_objects` objects.
pub struct PartitionedCpu {
    inner: Box<dyn BroadPhase + Send>,
    max_objects: usize,
    pair_limit: u64,
    last: Option<PartsReport>,
}

impl PartitionedCpu {
    /// `inner` run on parts of at most `max_objects` objects (at least 2).
    pub fn new(inner: Box<dyn BroadPhase + Send>, max_objects: usize) -> Self {
        Self {
            inner,
            max_objects: max_objects.max(2),
            pair_limit: u64::MAX,
            last: None,
        }
    }

    /// Sets the most pairs one call may store over all parts (default: none beyond `inner`'s
    /// own limit, which each part meets); a call finding more fails with
    /// [`crate::Error::TooLarge`].
    pub fn set_pair_limit(&mut self, limit: u64) {
        self.pair_limit = limit;
    }
}

impl Diagnostics for PartitionedCpu {
    fn parts(&self) -> Option<PartsReport> {
        self.last
    }
}

impl BroadPhase for PartitionedCpu {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    fn diagnostics(&self) -> Option<&dyn Diagnostics> {
        Some(self)
    }

    fn find_pairs_validated(
        &mut self,
        spheres: &[Sphere],
        out: Option<&mut Vec<Pair>>,
    ) -> Result<Stats> {
        // What the diagnostics report is this frame's split, or none.
        self.last = None;
        if spheres.is_empty() {
            return Ok(crate::broadphase::no_pairs(out));
        }
        let inner = &mut self.inner;
        let mut run =
            |part: &[Sphere], local: &mut Vec<Pair>| inner.find_pairs_validated(part, Some(local));
        let runners: &mut [&mut PartRunner<'_>] = &mut [&mut run];
        let (stats, report) = partition::find_pairs_unordered(
            spheres,
            out,
            self.max_objects,
            self.pair_limit,
            runners,
        )?;
        self.last = Some(report);
        Ok(stats)
    }
}
