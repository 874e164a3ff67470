//! Cascade stage of x/xy/xyz: after a sort on one axis (dropped objects carry the maximum key and
//! sort last), marks the survivors that overlap at least one other survivor on that axis. The
//! marks feed the next axis's keys, so n stays static and nothing is read back between axes.
//! The running maximum of `hi` before each block is scanned in levels of 256 (docs/design.md
//! §9.17), so no workgroup walks more than 256 values whatever n is.
//!
//! Many worlds (docs/design.md §2.13): the scan runs over (world, hi) pairs, compared world
//! first, so the running maximum before an object is its own world's (one scan, whatever the
//! number of worlds); the shared objects always survive, and so does an object that overlaps
//! one of them on the axis (every object when there are more than
//! [`GPU_CASCADE_SHARED_MAX`](crate::gpu::GPU_CASCADE_SHARED_MAX)).

use crate::error::Result;
use crate::gpu::frame::{FLAG_WORLDS, Params, Recorder, WG};
use crate::gpu::spheres::pairs::SortedOrder;

crate::gpu::context::entry_pipelines! {
    pub struct Cascade = "spheres/cascade.wgsl" [
        block_maxima, level_maxima, top_prefix, level_prefix, survivors
    ]
}

/// One level of the block-maximum scan: its offset and length in the scratch, in values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub offset: u32,
    pub len: u32,
}

/// The levels for `blocks` block maxima: level 0 holds them, each next level the maxima of the
/// one below's runs of 256, stored after it, until a level fits one workgroup.
pub fn levels(blocks: u32) -> Vec<Level> {
    let mut out = vec![Level {
        offset: 0,
        len: blocks.max(1),
    }];
    loop {
        let last = *out.last().expect("level 0");
        if last.len <= WG {
            return out;
        }
        out.push(Level {
            offset: last.offset + last.len,
            len: last.len.div_ceil(WG),
        });
    }
}

/// Bytes of the block-maximum scratch for n objects (every level; a (world, hi) pair each).
pub fn block_max_bytes(n: u32) -> u64 {
    let top = *levels(n.div_ceil(WG)).last().expect("level 0");
    8 * (top.offset + top.len) as u64
}

impl Cascade {
    /// `order`: the gathered spheres, keys and indices in sorted order on `axis`. Writes
    /// `mark[i]` for every object. Many worlds: `shared_from` is `Some` (the first sorted
    /// position of the shared objects, `n` when there are none), the order is (world, lo,
    /// index) and the keys world ranks, dropped objects' NONE first.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        axis: u32,
        order: &SortedOrder<'_>,
        block_max: &wgpu::Buffer,
        mark: &wgpu::Buffer,
        shared_from: Option<u32>,
    ) -> Result<()> {
        let params = Params {
            n,
            axis,
            flags: if shared_from.is_some() {
                FLAG_WORLDS
            } else {
                0
            },
            shared_from: shared_from.unwrap_or(n),
            ..Default::default()
        };
        let threads = n as u64;
        let maxima = [(3, order.sorted), (4, order.keys), (6, block_max)];
        rec.launch(&self.block_maxima, params, &maxima, threads)?;
        self.encode_prefix(rec, n.div_ceil(WG), block_max)?;
        let survivors = [
            (3, order.sorted),
            (4, order.keys),
            (5, order.values),
            (6, block_max),
            (7, mark),
        ];
        rec.launch(&self.survivors, params, &survivors, threads)
    }

    /// `block_max[0..blocks)` := its exclusive running maximum (the scratch sized by
    /// [`block_max_bytes`]): the upsweep over [`levels`], one workgroup on the top, the
    /// downsweep.
    pub fn encode_prefix(
        &self,
        rec: &mut Recorder<'_, '_>,
        blocks: u32,
        block_max: &wgpu::Buffer,
    ) -> Result<()> {
        let levels = levels(blocks);
        let at = |l: usize| Params {
            j: levels[l].offset,
            pad: levels[l].len,
            k: levels.get(l + 1).map_or(0, |up| up.offset),
            ..Default::default()
        };
        let scratch = [(6, block_max)];
        let top = levels.len() - 1;
        for (l, level) in levels[..top].iter().enumerate() {
            rec.launch(&self.level_maxima, at(l), &scratch, level.len as u64)?;
        }
        rec.launch(&self.top_prefix, at(top), &scratch, 1)?;
        for (l, level) in levels[..top].iter().enumerate().rev() {
            rec.launch(&self.level_prefix, at(l), &scratch, level.len as u64)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::test_gpu;
    use crate::gpu::frame::run_stage;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The shader's bound is the library's.
    #[test]
    fn the_shared_bound_is_the_constant() {
        let wgsl = include_str!("../../../shaders/spheres/cascade.wgsl");
        let line = format!(
            "const SHARED_SCAN_MAX: u32 = {}u;",
            crate::gpu::GPU_CASCADE_SHARED_MAX
        );
        assert!(wgsl.contains(&line), "{line}");
    }

    #[test]
    fn levels_by_hand() {
        assert_eq!(levels(0), [Level { offset: 0, len: 1 }]);
        assert_eq!(
            levels(256),
            [Level {
                offset: 0,
                len: 256
            }]
        );
        assert_eq!(
            levels(257),
            [
                Level {
                    offset: 0,
                    len: 257
                },
                Level {
                    offset: 257,
                    len: 2
                }
            ]
        );
        // 16M objects: 65,536 blocks, 256 above them.
        assert_eq!(
            levels(65_536)[1],
            Level {
                offset: 65_536,
                len: 256
            }
        );
        assert_eq!(levels(65_537).len(), 3);
        assert_eq!(block_max_bytes(256 * 257), 8 * (257 + 2));
    }

    /// The exclusive running maximum of (world, hi) block maxima at one, two and three levels
    /// (70,000 blocks stand for 17.9M objects) against a plain loop: in one world (0), and in
    /// worlds rising in runs of random length, where the maximum restarts with each world.
    #[test]
    fn block_prefix_in_levels_matches_a_running_max() {
        let Some(ctx) = test_gpu() else { return };
        let cascade = Cascade::new(&ctx).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        const LOWEST: f32 = -3.0e38;
        for blocks in [1u32, 200, 256, 257, 5_000, 65_537, 70_000] {
            for in_worlds in [false, true] {
                // Mostly rising with dips, so the carry across runs and levels matters.
                let mut world = 1u32;
                let values: Vec<(u32, f32)> = (0..blocks)
                    .map(|i| {
                        if in_worlds && rng.random_range(0..40) == 0 {
                            world += rng.random_range(1..3);
                        }
                        let w = if in_worlds { world } else { 0 };
                        (w, i as f32 * 0.5 - rng.random_range(0.0..4000.0f32))
                    })
                    .collect();
                let top = *levels(blocks).last().unwrap();
                let mut scratch: Vec<[u32; 2]> =
                    values.iter().map(|&(w, v)| [w, v.to_bits()]).collect();
                scratch.resize((top.offset + top.len) as usize, [7, f32::NAN.to_bits()]);
                let buf = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("block maxima"),
                    contents: bytemuck::cast_slice(&scratch),
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                });
                run_stage(&ctx, 16, |rec| cascade.encode_prefix(rec, blocks, &buf)).unwrap();
                let got: Vec<[u32; 2]> = ctx.read(&buf, blocks as usize).unwrap();
                let mut running = (0u32, LOWEST);
                for (b, (&g, &(w, v))) in got.iter().zip(&values).enumerate() {
                    assert_eq!(
                        (g[0], f32::from_bits(g[1])),
                        running,
                        "{blocks} blocks, worlds {in_worlds}: block {b}"
                    );
                    running = if w > running.0 {
                        (w, v)
                    } else {
                        (w, running.1.max(v))
                    };
                }
            }
        }
    }
}
