//! What a GPU sphere frame can say about how it ran ([`Diagnostics`]): device memory per
//! object, device counters, the traffic model, parts.

use super::GpuBroadPhase;
use crate::broadphase::Diagnostics;
use crate::gpu::traffic;

impl Diagnostics for GpuBroadPhase {
    fn resident_bytes_per_object(&self) -> Option<f64> {
        Some(GpuBroadPhase::resident_bytes_per_object(self))
    }

    fn device_counts(&self) -> Option<crate::broadphase::DeviceCounts> {
        // The peers' parts count too (`--adapters`).
        Some(
            self.ctx
                .peers()
                .iter()
                .fold(self.ctx.counts(), |all, peer| all.plus(peer.counts())),
        )
    }

    fn device_traffic(
        &self,
        n: usize,
        tests: f64,
        pairs: f64,
        store: bool,
    ) -> Option<Vec<(&'static str, f64)>> {
        let events = self
            .events
            .as_ref()
            .map(|e| e.last_counts().map(|c| c as f64));
        traffic::sphere_frame_on(
            &self.ctx,
            self.method,
            (n, tests, pairs, store),
            (
                self.pair_capacity as f64,
                self.sorted_slots() as f64,
                events,
            ),
            self.grid_lookups_per_object,
        )
    }

    fn parts(&self) -> Option<crate::broadphase::PartsReport> {
        self.last_parts()
    }
}
