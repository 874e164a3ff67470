//! The min_axis frame (docs/design.md §2.5): per axis the lo and hi orders and the choice of
//! each object's axis, then the owner walks; with many worlds (§2.13) each order is sorted by
//! world after the key, so each world (and the shared objects) is a run of both, the counts
//! and walks stay in the object's run, and the shared run is tested whole once.

use super::MinAxisBuffers;
use super::worlds::WorldRanks;
use crate::error::Result;
use crate::gpu::context::GpuContext;
use crate::gpu::frame::{ParamArena, Recorder};
use crate::gpu::sort::keys::{KeyInputs, KeyMode, KeyParams, Keys};
use crate::gpu::sort::radix_sort::RadixSort;
use crate::gpu::spheres::min_axis::{AxisOrder, AxisSorted, ChoiceBuffers, MinAxis};
use crate::gpu::spheres::pairs::{PairKernels, PairSink, SortedOrder};
use crate::gpu::timer::PassTimer;

/// min_axis's kernels and buffers (its axis orders, ranks and choices).
pub(super) type MinAxisParts<'a> = (&'a MinAxis, &'a MinAxisBuffers);

/// Records the min_axis passes of `n` objects after the extents. `order` holds the gathered
/// spheres and, as scratch, each axis's hi order. With `worlds`, each order is stably sorted by
/// the world ranks after its key: `choose` then counts within the object's run (the lo order's
/// keys are ranks, the hi order's values its indices), the owner walks stay in the run, and
/// `owner_shared` tests the shared run whole after the last axis.
#[allow(clippy::too_many_arguments)]
pub(super) fn record_min_axis(
    ctx: &GpuContext,
    (keys, sort, pairs): (&Keys, &mut RadixSort, &PairKernels),
    (enc, timer, arena): &mut (&mut wgpu::CommandEncoder, &mut PassTimer, &mut ParamArena),
    n: u32,
    worlds: Option<&WorldRanks>,
    inputs: KeyInputs<'_>,
    order: &SortedOrder<'_>,
    (kernels, mb): MinAxisParts<'_>,
    sink: &PairSink<'_>,
) -> Result<()> {
    let choice = ChoiceBuffers {
        choice: &mb.choice,
        forward_best: &mb.forward_best,
        counters: sink.counters,
    };
    for axis in 0..3u32 {
        let a = axis as usize;
        for (mode, k, v) in [
            (KeyMode::Lo, &mb.lo_keys[a], &mb.lo_idx[a]),
            (KeyMode::Hi, order.keys, order.values),
        ] {
            let kp = KeyParams {
                n,
                pad: n,
                mode,
                axis,
                use_mark: false,
                buckets: 1,
            };
            Recorder::begin(ctx, enc, timer, arena, "keys")
                .record(|rec| keys.make_keys(rec, kp, inputs, k, v))?;
            sort.encode(ctx, enc, k, v, n, 32, Some(timer))?;
            if let Some(ranks) = worlds {
                Recorder::begin(ctx, enc, timer, arena, "keys")
                    .record(|rec| keys.world_keys(rec, n, &ranks.buffer, (k, v), false))?;
                sort.encode(ctx, enc, k, v, n, ranks.bits, Some(timer))?;
            }
        }
        let axis_order = AxisOrder {
            lo_keys: &mb.lo_keys[a],
            lo_idx: &mb.lo_idx[a],
            // One world: the sorted hi keys; many: the hi order's indices.
            hi_keys: if worlds.is_some() {
                order.values
            } else {
                order.keys
            },
            rank: &mb.rank[a],
        };
        Recorder::begin(ctx, enc, timer, arena, "min_axis").record(|rec| {
            let many = worlds.is_some();
            kernels.encode(rec, n, axis, inputs.spheres, &axis_order, &choice, many)
        })?;
    }
    let sorted = AxisSorted {
        spheres: order.sorted,
        choice: &mb.sorted_choice,
    };
    let shared_from = worlds.map(|w| w.shared_from);
    for axis in 0..3u32 {
        let a = axis as usize;
        Recorder::begin(ctx, enc, timer, arena, "gather").record(|rec| {
            kernels.gather(rec, n, inputs.spheres, &mb.lo_idx[a], &mb.choice, &sorted)
        })?;
        let axis_order = SortedOrder {
            sorted: order.sorted,
            keys: &mb.lo_keys[a],
            values: &mb.lo_idx[a],
        };
        Recorder::begin(ctx, enc, timer, arena, "pairs").record(|rec| {
            let choice = &mb.sorted_choice;
            pairs.owner(rec, n, axis, &axis_order, choice, shared_from, sink)?;
            match shared_from {
                Some(from) if axis == 2 && from < n => {
                    pairs.owner_shared(rec, n, from, &axis_order, sink)
                }
                _ => Ok(()),
            }
        })?;
    }
    Ok(())
}
