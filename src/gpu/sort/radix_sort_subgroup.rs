//! The subgroup scatter of [`crate::gpu::sort::radix_sort::RadixSort`] (warp-level multisplit, see
//! `shaders/sort/radix_sort_subgroup.wgsl`): each subgroup ranks whole chunks with ballots, two
//! barriers per workgroup instead of three per 256 keys, no second pass over the keys.
//! Needs `Features::SUBGROUP` and workgroup memory for one 256-digit table per chunk.

use crate::error::{Error, Result};
use crate::gpu::context::GpuContext;
use crate::gpu::context::WorkgroupMemory;

/// Invocations per workgroup; must match `WG` in the shader.
const WORKGROUP: u32 = 64;
/// The histogram's keys per chunk per round (its workgroup size).
const HISTOGRAM_ROUND: u32 = 256;
/// Digits per pass.
const RADIX: u32 = 256;

/// Workgroup bytes the shader declares: a u32 per digit per chunk.
fn workgroup_bytes(chunks: u32) -> u64 {
    chunks as u64 * RADIX as u64 * 4
}

/// Chunks per workgroup: one per subgroup of [`planned_lanes`].
pub(crate) fn chunks_per_group(ctx: &GpuContext) -> u32 {
    chunks_for_lanes(lanes_of(ctx))
}

/// [`planned_lanes`] of the adapter: the lanes a chunk is planned to be ranked by.
pub(crate) fn lanes_of(ctx: &GpuContext) -> u32 {
    planned_lanes(ctx.info.subgroup_min_size, ctx.info.subgroup_max_size)
}

fn chunks_for_lanes(lanes: u32) -> u32 {
    (WORKGROUP / lanes).max(1)
}

/// The subgroup size the chunking plans for, from the adapter's range (docs/design.md §9.17).
/// A range is what some report: Metal 4 to 32 for GPUs of 32 lanes, Intel 8 to 32 with the
/// compiler choosing per pipeline. Planning for the smallest (as before) serialises the chunks
/// in subgroups larger than that, S / min chunks each, one after the other; planning for the
/// largest idles all but min / S of smaller subgroups. The power of two at the floor of the
/// geometric mean bounds both to sqrt(max / min), leaning to serialising (a serialised
/// subgroup still works; an idle one does not).
pub(crate) fn planned_lanes(min: u32, max: u32) -> u32 {
    // wgpu never reports below 4 (WebGPU's minimum); guard anyway against a zero.
    let min = min.max(4).next_power_of_two();
    let max = max.max(min).next_power_of_two();
    1 << ((min.trailing_zeros() + max.trailing_zeros()) / 2)
}

/// The subgroup size when every subgroup has the same one, 4 or 8 (then digits are matched with
/// one broadcast per lane instead of 8 ballots), else 0.
fn broadcast_lanes(ctx: &GpuContext) -> u32 {
    let (min, max) = (ctx.info.subgroup_min_size, ctx.info.subgroup_max_size);
    if min == max && (min == 4 || min == 8) {
        min
    } else {
        0
    }
}

/// Why the subgroup scatter cannot run on this device, or `None` when it can.
pub(crate) fn unsupported(ctx: &GpuContext) -> Option<String> {
    if !ctx.has_subgroups() {
        return Some(format!(
            "the adapter '{}' offers no subgroup operations",
            ctx.info.name
        ));
    }
    let need = workgroup_bytes(chunks_per_group(ctx));
    let have = ctx.limits.max_compute_workgroup_storage_size as u64;
    if need > have {
        return Some(format!(
            "it needs {need} bytes of workgroup memory (planned for subgroups of {} lanes); \
             the adapter '{}' allows {have}",
            lanes_of(ctx),
            ctx.info.name
        ));
    }
    if ctx.limits.max_compute_invocations_per_workgroup < WORKGROUP
        || ctx.limits.max_compute_workgroup_size_x < WORKGROUP
    {
        return Some(format!(
            "it needs {WORKGROUP}-invocation workgroups; the adapter '{}' allows fewer",
            ctx.info.name
        ));
    }
    None
}

/// The scatter pipeline for chunks of 256 x `rounds` keys (`rounds` 1..=64, checked by the
/// caller): the portable histogram's blocks. `ballots_only` forces the any-size digit matching
/// (tests cover it on fixed-size adapters).
pub(crate) fn scatter_pipeline(
    ctx: &GpuContext,
    rounds: u32,
    ballots_only: bool,
) -> Result<wgpu::ComputePipeline> {
    if let Some(why) = unsupported(ctx) {
        return Err(Error::adapter_lacks(
            "subgroups",
            format!("radix sort: the subgroup variant cannot run: {why}"),
        ));
    }
    let broadcast = if ballots_only {
        0
    } else {
        broadcast_lanes(ctx)
    };
    scatter_pipeline_with(ctx, rounds, broadcast, chunks_per_group(ctx))
}

/// [`scatter_pipeline`] with `chunks` per workgroup and `broadcast` lanes chosen by the caller
/// (tests run chunkings that do not match the device's subgroups).
fn scatter_pipeline_with(
    ctx: &GpuContext,
    rounds: u32,
    broadcast: u32,
    chunks: u32,
) -> Result<wgpu::ComputePipeline> {
    let source = source(rounds, chunks, broadcast, ctx.math())?;
    let module = ctx.shader("radix_sort_subgroup.wgsl", &source)?;
    ctx.pipeline_with(&module, "scatter", &[], WorkgroupMemory::AsLeft)
}

/// The scatter module as the pipeline compiles it: the sizes of workgroup arrays and the
/// matching choice are written into the source as constants (`shaders/sort/radix_sort_subgroup.wgsl`).
pub(crate) fn source(
    rounds: u32,
    chunks: u32,
    broadcast_lanes: u32,
    math: crate::gpu::shader::MathMode,
) -> Result<String> {
    Ok(format!(
        "const CHUNK: u32 = {}u;\nconst CHUNKS: u32 = {chunks}u;\nconst BROADCAST_LANES: u32 = \
         {broadcast_lanes}u;\n{}",
        rounds * HISTOGRAM_ROUND,
        crate::gpu::shader::compose("sort/radix_sort_subgroup.wgsl", math)?
    ))
}

/// The constants [`scatter_pipeline`] writes on an adapter whose subgroups all have
/// `subgroup_size` lanes: (chunks per workgroup, broadcast lanes).
pub(crate) fn constants_for_size(subgroup_size: u32) -> (u32, u32) {
    let chunks = chunks_for_lanes(planned_lanes(subgroup_size, subgroup_size));
    let broadcast = if subgroup_size == 4 || subgroup_size == 8 {
        subgroup_size
    } else {
        0
    };
    (chunks, broadcast)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::test_gpu;
    use crate::gpu::sort::scan::exact_binding;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The scatter kernel alone, fed a histogram scanned on the CPU: every key must land where
    /// a stable partition by the digit puts it, whichever matching the kernel uses.
    #[test]
    fn scatter_alone_is_a_stable_partition_by_digit() {
        let Some(ctx) = test_gpu() else { return };
        if unsupported(&ctx).is_some() {
            eprintln!("note: '{}' cannot run the subgroup scatter", ctx.info.name);
            return;
        }
        let chunk = 256usize; // rounds = 1
        let planned = chunks_per_group(&ctx) as usize;
        // Several workgroups, the last one with a partial chunk and missing chunks (at the
        // most chunks a workgroup takes).
        let n = chunk * 16 * 3 + chunk + 77;
        let chunks = n.div_ceil(chunk);
        let (shift, mask) = (8u32, 0xFFu32);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for few_digits in [false, true] {
            let keys: Vec<u32> = (0..n)
                .map(|_| {
                    if few_digits {
                        [0x0000u32, 0x0100, 0xFF00, 0x1234][rng.random_range(0..4)]
                    } else {
                        rng.random()
                    }
                })
                .collect();
            let values: Vec<u32> = (0..n as u32).collect();
            let digit = |k: u32| ((k >> shift) & mask) as usize;
            // Oracle histogram, digit-major, exclusively scanned.
            let mut hist = vec![0u32; 256 * chunks];
            for (i, &k) in keys.iter().enumerate() {
                hist[digit(k) * chunks + i / chunk] += 1;
            }
            let mut run = 0;
            for h in hist.iter_mut() {
                (*h, run) = (run, run + *h);
            }
            let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(values.clone()).collect();
            want.sort_by_key(|&(k, _)| digit(k));

            // The planned chunking, then chunkings that match no subgroup count: 1 and 2 chunks
            // a workgroup (subgroups left idle), 16 (subgroups taking several in turn).
            let broadcast = broadcast_lanes(&ctx);
            for (ballots_only, groups_of_chunks) in [
                (false, planned),
                (true, planned),
                (false, 1),
                (false, 2),
                (true, 16),
            ] {
                let broadcast = if ballots_only { 0 } else { broadcast };
                let pipeline =
                    scatter_pipeline_with(&ctx, 1, broadcast, groups_of_chunks as u32).unwrap();
                let params = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: bytemuck::cast_slice(&[shift, mask, 0, 0]),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let make = |data: &[u32]| {
                    let b = ctx.storage_buffer("t", data.len() as u64 * 4).unwrap();
                    ctx.write_buffer(&b, 0, bytemuck::cast_slice(data));
                    b
                };
                let (kb, hb, vb) = (make(&keys), make(&hist), make(&values));
                let (ko, vo) = (make(&vec![0; n]), make(&vec![0; n]));
                let bg = ctx.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: params.as_entire_binding(),
                        },
                        exact_binding(1, &kb, n as u32),
                        exact_binding(2, &hb, hist.len() as u32),
                        exact_binding(3, &vb, n as u32),
                        exact_binding(4, &ko, n as u32),
                        exact_binding(5, &vo, n as u32),
                    ],
                });
                ctx.submit_dispatch(
                    &pipeline,
                    &bg,
                    [chunks.div_ceil(groups_of_chunks) as u32, 1, 1],
                );
                ctx.wait().unwrap();
                let got_k: Vec<u32> = ctx.read(&ko, n).unwrap();
                let got_v: Vec<u32> = ctx.read(&vo, n).unwrap();
                let got: Vec<(u32, u32)> = got_k.into_iter().zip(got_v).collect();
                assert!(
                    got == want,
                    "few digits {few_digits}, ballots only {ballots_only}, {groups_of_chunks} \
                     chunks a workgroup: first difference at {:?}",
                    (0..n).find(|&i| got[i] != want[i])
                );
            }
        }
    }

    /// The planned subgroup size and chunks per workgroup for the ranges adapters report, by
    /// hand: the floor of the mean of the log2 bounds.
    #[test]
    fn chunking_plans_between_the_smallest_and_largest_subgroups() {
        for (min, max, lanes, chunks) in [
            (4, 4, 4, 16),
            (8, 8, 8, 8),
            (32, 32, 32, 2),
            (64, 64, 64, 1),
            (128, 128, 128, 1),
            (4, 32, 8, 8),   // Metal on a 32-lane GPU
            (8, 32, 16, 4),  // Intel
            (32, 64, 32, 2), // AMD
            (4, 128, 16, 4),
            (0, 0, 4, 16),
        ] {
            assert_eq!(planned_lanes(min, max), lanes, "{min}..{max}");
            assert_eq!(chunks_for_lanes(lanes), chunks, "{min}..{max}");
        }
    }

    /// The ballot arithmetic of `shaders/sort/ballot.wgsl` for every lane 0..127 and masks with
    /// bits in all four words: a device with 8 lanes (lavapipe) only ever sets the first word
    /// in the scatter, so these run here as plain functions against u128 arithmetic.
    #[test]
    fn ballot_arithmetic_for_every_lane_up_to_128() {
        let Some(ctx) = test_gpu() else { return };
        let source = crate::gpu::shader::compose_text(
            "// #import sort/ballot.wgsl
             @group(0) @binding(0) var<storage, read_write> io: array<vec4<u32>>;
             @compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                 let t = id.x;
                 if (2u * t + 1u < arrayLength(&io)) {
                     let m = io[2u * t];
                     let lane = io[2u * t + 1u].x;
                     let below = lanes_below(lane);
                     io[2u * t] = below;
                     io[2u * t + 1u] = vec4<u32>(first_lane(m), popcount4(m & below),
                                                 popcount4(m), 0u);
                 }
             }",
            ctx.math(),
        )
        .unwrap();
        let module = ctx.shader("ballot test", &source).unwrap();
        let pipeline = ctx.pipeline(&module, "main", &[]).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut cases: Vec<(u128, u32)> = Vec::new();
        for lane in 0..128u32 {
            for _ in 0..8 {
                // Sparse and dense masks, never zero (first_lane's precondition).
                let mut m: u128 = rng.random::<u128>() & rng.random::<u128>();
                if rng.random_bool(0.5) {
                    m &= !0u128 << rng.random_range(0..128);
                }
                cases.push((m | 1u128 << rng.random_range(0..128), lane));
            }
        }
        let words: Vec<u32> = cases
            .iter()
            .flat_map(|&(m, lane)| {
                let w = |k: u32| (m >> (32 * k)) as u32;
                [w(0), w(1), w(2), w(3), lane, 0, 0, 0]
            })
            .collect();
        let buf = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("ballot io"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let bg = ctx.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buf.as_entire_binding(),
            }],
        });
        ctx.submit_dispatch(&pipeline, &bg, [(cases.len() as u32).div_ceil(64), 1, 1]);
        let out: Vec<u32> = ctx.read(&buf, words.len()).unwrap();
        for (c, &(m, lane)) in cases.iter().enumerate() {
            let o = &out[8 * c..8 * c + 8];
            let below =
                o[0] as u128 | (o[1] as u128) << 32 | (o[2] as u128) << 64 | (o[3] as u128) << 96;
            let want_below = (1u128 << lane) - 1;
            assert_eq!(below, want_below, "lanes_below({lane})");
            assert_eq!(o[4], m.trailing_zeros(), "first_lane({m:#x})");
            assert_eq!(
                o[5],
                (m & want_below).count_ones(),
                "rank of {lane} in {m:#x}"
            );
            assert_eq!(o[6], m.count_ones(), "popcount4({m:#x})");
        }
    }
}
