//! The broad phase's buffers that live across frames: allocation and growth, and what they
//! cost per object.

use super::{COUNTER_WORDS, GpuBroadPhase, MinAxisBuffers, Resident};
use crate::broadphase::Method;
use crate::error::Result;
use crate::gpu::sort::radix_sort::{Variant, plan_for};
use crate::gpu::spheres::cascade::block_max_bytes;

impl GpuBroadPhase {
    /// GPU bytes held across frames for the last frame's objects (pair list excluded), per
    /// object; 0 before the first frame. The radix sort's scratch is private to it, so it is
    /// counted from its documented layout: ping-pong keys and values (8 bytes per key) and 256
    /// u32 counters per block (a tile, or `256 x rounds` keys: the plan for this n).
    pub fn resident_bytes_per_object(&self) -> f64 {
        match &self.resident {
            Some(r) if self.last_n > 0 => {
                let fixed = (COUNTER_WORDS * 4 + 32) as f64;
                let sort_scratch = if self.method == Method::BruteForce {
                    0.0
                } else {
                    let (variant, rounds) = plan_for(&self.ctx, r.capacity);
                    let block = match variant {
                        Variant::Tiles => {
                            crate::gpu::sort::radix_tiles::tile_keys(&self.ctx).unwrap_or(2048)
                        }
                        _ => 256 * rounds,
                    };
                    r.capacity as f64 * (8.0 + 256.0 * 4.0 / block as f64)
                };
                (r.bytes as f64 + sort_scratch + fixed) / self.last_n as f64
            }
            _ => 0.0,
        }
    }

    pub(super) fn ensure_resident(&mut self, n: u32) -> Result<()> {
        if self.resident.as_ref().is_some_and(|r| r.capacity >= n) {
            return Ok(());
        }
        // Grow by at least a quarter so a slowly growing scene reallocates rarely, but never
        // past what one binding holds (16 bytes per sphere, the largest array) when n fits.
        let fit = (self.ctx.max_binding_bytes() / 16).min(u32::MAX as u64) as u32;
        let cap = self.resident.as_ref().map_or(n, |r| {
            n.max(r.capacity.saturating_add(r.capacity / 4).min(fit))
        });
        let ctx = &*self.ctx;
        let mut bytes = 0u64;
        let mut buf = |label: &str, size: u64| -> Result<wgpu::Buffer> {
            let b = ctx.storage_buffer(label, size)?;
            bytes += b.size();
            Ok(b)
        };
        // Many worlds sort brute force too ([`super::GpuWorldBatch`]).
        let sorting = self.method != Method::BruteForce || self.worlds.is_some();
        let per = |bytes_each: u64| if sorting { bytes_each * cap as u64 } else { 4 };
        let spheres = buf("spheres", 16 * cap as u64)?;
        let min_axis_method = self.method == Method::MinAxis;
        let keys = buf("keys", per(4))?;
        let values = buf("values", per(4))?;
        let sorted = buf("sorted spheres", per(16))?;
        let (mark, block_max) = if self.cascade.is_some() {
            (
                buf("marks", 4 * cap as u64)?,
                buf("block maxima", block_max_bytes(cap))?,
            )
        } else {
            (buf("marks", 4)?, buf("block maxima", 4)?)
        };
        // The grid's bucket starts (in a batch of worlds, then each object's rank: the grid's
        // walk binds no rank buffer of its own); a batch of worlds under origin_distance keeps
        // each sorted position's |c| there (its keys are the ranks).
        let ranks = if self.worlds.is_some() { cap as u64 } else { 0 };
        let starts = buf(
            "bucket starts",
            match self.method {
                Method::Grid => 4 * (grid_buckets(cap) as u64 + ranks),
                Method::OriginDistance if self.worlds.is_some() => 4 * cap as u64,
                _ => 4,
            },
        )?;
        let occupied = buf(
            "grid occupancy map",
            if self.method == Method::Grid {
                4 * grid_map_words(cap, self.ctx.max_binding_bytes())
            } else {
                4
            },
        )?;
        let min_axis = if min_axis_method {
            let c = cap as u64;
            Some(MinAxisBuffers {
                lo_keys: [
                    buf("lo keys x", 4 * c)?,
                    buf("lo keys y", 4 * c)?,
                    buf("lo keys z", 4 * c)?,
                ],
                lo_idx: [
                    buf("lo idx x", 4 * c)?,
                    buf("lo idx y", 4 * c)?,
                    buf("lo idx z", 4 * c)?,
                ],
                rank: [
                    buf("rank x", 4 * c)?,
                    buf("rank y", 4 * c)?,
                    buf("rank z", 4 * c)?,
                ],
                choice: buf("axis choice", 8 * c)?,
                sorted_choice: buf("sorted axis choice", 8 * c)?,
                forward_best: buf("forward best", 4 * c)?,
            })
        } else {
            None
        };
        self.resident = Some(Resident {
            capacity: cap,
            spheres,
            keys,
            values,
            sorted,
            mark,
            block_max,
            starts,
            occupied,
            min_axis,
            bytes,
        });
        Ok(())
    }
}

/// Grid hash buckets for n objects: a power of two >= n (about one object per bucket).
pub(crate) fn grid_buckets(n: u32) -> u32 {
    n.max(1).checked_next_power_of_two().unwrap_or(1 << 31)
}

/// Words of the grid's occupancy map for up to n objects (docs/design.md §9.9): 128 bits a
/// bucket (16 bytes), a power of two of words, at most 2^26 (so the shaders' bit count fits a
/// u32) and at most what one binding of `max_binding` bytes holds.
pub(crate) fn grid_map_words(n: u32, max_binding: u64) -> u64 {
    let fit = 1u64 << (max_binding / 4).max(1).ilog2();
    (4 * grid_buckets(n) as u64).min(1 << 26).min(fit)
}
