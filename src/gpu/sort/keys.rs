//! Keys stage: scene extents (min/max centre per axis, max radius), the per-method sort keys
//! (origin distance, lo or hi endpoint on an axis, grid bucket, sap's lo on the axis of largest
//! spread), the gather of spheres into sorted order, and the grid's bucket starts.

use crate::error::Result;
use crate::gpu::frame::{FLAG_MARK, FLAG_WORLDS, Params, Recorder, WG};
use crate::gpu::sort::radix_sort::FILL_INVOCATIONS;

/// `mode` values of `make_keys` (`MODE_*` in `shaders/sort/keys.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum KeyMode {
    OriginDistance = 0,
    Lo = 1,
    Hi = 2,
    GridBucket = 3,
    SapLo = 4,
}

crate::gpu::context::entry_pipelines! {
    pub struct Keys = "sort/keys.wgsl" [
        extents, grid_frame, sap_frame, make_keys, world_keys, unrank_dropped, origin_of_sorted, gather,
        bucket_starts
    ]
}

/// Initial contents of the extents buffer's first words: min = all ones, max = 0 (ordered
/// encodings); the rest of its [`EXTENTS_WORDS`] start at 0.
pub const EXTENTS_INIT: [u32; 8] = [u32::MAX, u32::MAX, u32::MAX, 0, 0, 0, 0, 0];
/// Words of the extents buffer (`ext` in `shaders/frame.wgsl`): the extents, the grid's
/// decisions, the radius histogram (256 counts from word 64, 256 maxima from word 320), sap's
/// axis (word 576) and the giants' list (4,112 slots from word 577: `GIANT_SLOTS`).
pub const EXTENTS_WORDS: u64 = 577 + 4112;
/// Most workgroups of the extents: twice [`FILL_INVOCATIONS`] threads, enough to fill a large
/// GPU, while the global atomics (7 same-word ones per workgroup) stay below 7,168 whatever n
/// is (docs/design.md §9.17). Before, one workgroup per 256 spheres made 458,752 at 16M.
pub const EXTENT_GROUPS: u64 = 2 * FILL_INVOCATIONS / WG as u64;

impl Keys {
    /// Reduces the extents of `n` spheres into `ext` (which must hold [`EXTENTS_INIT`]), in at
    /// most [`EXTENT_GROUPS`] workgroups, each thread striding over the spheres; with
    /// `sap_axis`, then sap's sweep axis into word 576 (`sap_frame`, one workgroup:
    /// `broadphase::sweep_axis`'s rule, docs/design.md §2.6).
    pub fn extents(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        (spheres, ext): (&wgpu::Buffer, &wgpu::Buffer),
        sap_axis: bool,
    ) -> Result<()> {
        let buffers = [(2, ext), (3, spheres)];
        let threads = (n as u64).min(EXTENT_GROUPS * WG as u64);
        rec.launch(&self.extents, Params::n(n), &buffers, threads)?;
        if sap_axis {
            rec.launch(&self.sap_frame, Params::n(n), &buffers, 256)?;
        }
        Ok(())
    }

    /// The grid's giants and cell radius from the extents' radius histogram (one workgroup;
    /// docs/design.md §2.7), and the orders of its keys (`buckets` of them) and of its
    /// occupancy map (`occupied`'s size: a power of two of words; docs/design.md §9.9).
    pub fn grid_frame(
        &self,
        rec: &mut Recorder<'_, '_>,
        ext: &wgpu::Buffer,
        occupied: &wgpu::Buffer,
        buckets: u32,
    ) -> Result<()> {
        let params = Params {
            buckets,
            ..Params::n(1)
        };
        rec.launch(&self.grid_frame, params, &[(2, ext), (9, occupied)], 256)
    }

    /// Writes `keys[i]`, `values[i] = i` for i < n and (MAX, MAX) padding up to `pad`.
    /// `mark`: with `use_mark`, objects whose mark is 0 get the maximum key (cascade survivors).
    pub fn make_keys(
        &self,
        rec: &mut Recorder<'_, '_>,
        p: KeyParams,
        inputs: KeyInputs<'_>,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
    ) -> Result<()> {
        // Grid keys in a batch of worlds take each object's world rank above the bucket.
        let worlds = inputs.world_rank.filter(|_| p.mode == KeyMode::GridBucket);
        let params = Params {
            n: p.n,
            pad: p.pad,
            axis: p.axis,
            mode: p.mode as u32,
            flags: if p.use_mark { FLAG_MARK } else { 0 }
                | if worlds.is_some() { FLAG_WORLDS } else { 0 },
            buckets: p.buckets,
            shared_from: worlds.map_or(u32::MAX, |(_, shared)| shared),
            ..Default::default()
        };
        let buffers = [
            (2, inputs.ext),
            (3, inputs.spheres),
            (4, keys),
            (5, values),
            (6, inputs.mark),
            (9, inputs.occupied),
            // Read only with FLAG_WORLDS; any buffer otherwise.
            (10, worlds.map_or(inputs.spheres, |(ranks, _)| ranks)),
        ];
        rec.launch(&self.make_keys, params, &buffers, p.pad as u64)
    }

    /// Many worlds (docs/design.md §2.13): `keys[p] = world_rank[values[p]]` for p < n, the key
    /// of the stable sort that orders the objects by (world, key, index). With `dropped_first`
    /// (a cascade's later axis) a key already NONE (an object the cascade dropped) becomes 0
    /// and every other rank one more, so the dropped objects sort first; [`Self::unrank_dropped`]
    /// gives them NONE again after the sort.
    pub fn world_keys(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        world_rank: &wgpu::Buffer,
        (keys, values): (&wgpu::Buffer, &wgpu::Buffer),
        dropped_first: bool,
    ) -> Result<()> {
        let buffers = [(4, keys), (5, values), (10, world_rank)];
        let params = Params {
            flags: if dropped_first { FLAG_MARK } else { 0 },
            ..Params::n(n)
        };
        rec.launch(&self.world_keys, params, &buffers, n as u64)
    }

    /// After the sort by [`Self::world_keys`]' ranks with `dropped_first`: keys 0 (the dropped
    /// objects) := NONE.
    pub fn unrank_dropped(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        keys: &wgpu::Buffer,
    ) -> Result<()> {
        rec.launch(&self.unrank_dropped, Params::n(n), &[(4, keys)], n as u64)
    }

    /// Many worlds under origin_distance: `out[p]` = the ordered `|c|` of `sorted[p]` for p < n
    /// (docs/design.md §2.13).
    pub fn origin_of_sorted(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        sorted: &wgpu::Buffer,
        out: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(7, sorted), (8, out)];
        rec.launch(&self.origin_of_sorted, Params::n(n), &buffers, n as u64)
    }

    /// `sorted[p] = spheres[values[p]]` for p < n.
    pub fn gather(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        spheres: &wgpu::Buffer,
        values: &wgpu::Buffer,
        sorted: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(3, spheres), (5, values), (7, sorted)];
        rec.launch(&self.gather, Params::n(n), &buffers, n as u64)
    }

    /// `starts[bucket] = 1 + first sorted position` (the buffer must be zeroed first), a key's
    /// bucket its bits below `buckets` (a power of two).
    pub fn bucket_starts(
        &self,
        rec: &mut Recorder<'_, '_>,
        n: u32,
        buckets: u32,
        keys: &wgpu::Buffer,
        starts: &wgpu::Buffer,
    ) -> Result<()> {
        let buffers = [(4, keys), (8, starts)];
        let params = Params {
            buckets,
            ..Params::n(n)
        };
        rec.launch(&self.bucket_starts, params, &buffers, n as u64)
    }
}

/// What `make_keys` reads (the spheres, the scene extents and the cascade marks) and, for grid
/// keys, where it stores each object's cell (16 bytes per object; any 16 bytes otherwise).
#[derive(Clone, Copy)]
pub struct KeyInputs<'a> {
    pub spheres: &'a wgpu::Buffer,
    pub ext: &'a wgpu::Buffer,
    pub mark: &'a wgpu::Buffer,
    pub occupied: &'a wgpu::Buffer,
    /// Grid keys in a batch of worlds: each object's world rank, by original index, and the
    /// shared objects' rank (`u32::MAX` when there are none).
    pub world_rank: Option<(&'a wgpu::Buffer, u32)>,
}

/// What `make_keys` computes.
#[derive(Clone, Copy, Debug)]
pub struct KeyParams {
    pub n: u32,
    pub pad: u32,
    pub mode: KeyMode,
    pub axis: u32,
    pub use_mark: bool,
    pub buckets: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::context::{GpuContext, test_gpu};
    use crate::gpu::frame::run_stage;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The order-preserving map of `ordered` (frame.wgsl), -0 folded into +0: written here
    /// again, as the test's own oracle.
    fn ordered_bits(x: f32) -> u32 {
        let b = if x == 0.0 { 0 } else { x.to_bits() };
        if b & 0x8000_0000 != 0 {
            !b
        } else {
            b | 0x8000_0000
        }
    }

    /// The giants' list in `shaders/frame.wgsl` is the host's: as many giants as the rule
    /// allows (`geom/radii.rs`), the grid's shared objects of a batch beside them, and the
    /// extents buffer ending with the list.
    #[test]
    fn the_giants_list_is_sized_as_the_host_says() {
        let constant = |name| crate::gpu::shader::wgsl_constant("frame.wgsl", name) as u64;
        let (most, slots) = (constant("GIANTS_MAX"), constant("GIANT_SLOTS"));
        assert_eq!(most, u64::from(crate::geom::radii::GIANTS_MAX));
        assert_eq!(
            constant("GIANTS_NEAR_MAX"),
            u64::from(crate::geom::radii::GIANTS_NEAR_MAX)
        );
        let ratio = crate::gpu::shader::wgsl_constant("frame.wgsl", "FAR_GIANT_RATIO");
        assert_eq!(ratio as f32, crate::geom::radii::FAR_GIANT_RATIO);
        assert_eq!(slots - most, crate::gpu::GPU_GRID_SHARED_MAX as u64);
        assert_eq!(EXTENTS_WORDS, constant("EXT_GIANTS") + slots);
    }

    /// The extents words against a loop over the spheres: counts that leave threads with
    /// several spheres each (600,001 > 262,144 threads), one, or none; runs of equal radius
    /// bins and alternating ones; a few invalid spheres.
    #[test]
    fn extents_in_two_levels_match_a_loop() {
        let Some(ctx) = test_gpu() else { return };
        let keys = Keys::new(&ctx).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        for n in [1usize, 300, 70_000, 600_001] {
            let spheres: Vec<[f32; 4]> = (0..n)
                .map(|i| {
                    let r = match i % 3 {
                        0 => 0.5,
                        1 => rng.random_range(1e-3..10.0f32),
                        _ => rng.random_range(0.0..1e5f32),
                    };
                    let mut s = [
                        rng.random_range(-1e4..1e4f32),
                        rng.random_range(-3.0..7.0f32),
                        rng.random_range(-1e6..-1.0f32),
                        r,
                    ];
                    if i % 99_991 == 7 {
                        s[3] = -1.0; // invalid: counted in ext[7]
                    }
                    s
                })
                .collect();
            let mut want = vec![0u32; EXTENTS_WORDS as usize];
            want[..8].copy_from_slice(&EXTENTS_INIT);
            for s in &spheres {
                for a in 0..3 {
                    want[a] = want[a].min(ordered_bits(s[a]));
                    want[3 + a] = want[3 + a].max(ordered_bits(s[a]));
                }
                want[6] = want[6].max(ordered_bits(s[3]));
                let negative = s[3] < 0.0;
                want[7] += u32::from(negative);
                let bits = s[3].to_bits() & 0x7fff_ffff;
                let bin = (bits >> 23) as usize;
                want[64 + bin] += 1;
                want[320 + bin] = want[320 + bin].max(bits);
            }
            let sb = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("spheres"),
                contents: bytemuck::cast_slice(&spheres),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let ext = extents_buffer(&ctx);
            run_stage(&ctx, 1, |rec| {
                keys.extents(rec, n as u32, (&sb, &ext), false)
            })
            .unwrap();
            let got: Vec<u32> = ctx.read(&ext, EXTENTS_WORDS as usize).unwrap();
            for (w, (g, e)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, e, "n = {n}: extents word {w}");
            }
        }
    }

    /// `sap_frame`'s axis against `broadphase::sweep_axis` (whose own tests check the rule by
    /// hand): the range below 4,096 objects, the sample's deciles from there; outliers that
    /// set one axis's range, exact ties, a sample whose objects alone are spread, one object.
    #[test]
    fn the_sap_axis_is_the_cpus() {
        use crate::broadphase::sweep_axis::sweep_axis;
        use crate::geom::sphere::Sphere;
        let Some(ctx) = test_gpu() else { return };
        let keys = Keys::new(&ctx).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        let mut layer = |n: usize, size: [f32; 3], far: usize, axis: usize| {
            let mut spheres: Vec<Sphere> = (0..n)
                .map(|_| {
                    let c = size.map(|s| rng.random_range(0.0..=s));
                    Sphere::new(glam::Vec3::from_array(c), 0.05)
                })
                .collect();
            for s in spheres
                .iter_mut()
                .step_by((n / far.max(1)).max(1))
                .take(far)
            {
                s.center[axis] = 1e6;
            }
            spheres
        };
        let diagonal = |n: usize, y: f32| -> Vec<Sphere> {
            (0..n)
                .map(|t| Sphere::new(glam::Vec3::new(t as f32, y * t as f32, -(t as f32)), 1.0))
                .collect()
        };
        let strided: Vec<Sphere> = (0..3 * 1024 + 2)
            .map(|i| {
                let x = if i % 3 == 0 { (i / 3) as f32 } else { 1e9 };
                Sphere::new(glam::Vec3::new(x, i as f32 / 1000.0, 0.0), 1.0)
            })
            .collect();
        // Two planes far apart on x, and an elongated lattice (`crowded_axes_are_not_swept`).
        let mut plane_rng = ChaCha8Rng::seed_from_u64(4);
        let planes: Vec<Sphere> = (0..20_000)
            .map(|i| {
                let x = if i % 2 == 0 { 0.0 } else { 1e4 };
                let y = plane_rng.random_range(0.0..300.0);
                let z = plane_rng.random_range(0.0..900.0);
                Sphere::new(glam::Vec3::new(x, y, z), 1.0)
            })
            .collect();
        let lattice: Vec<Sphere> = (0..10_000)
            .map(|i| {
                let c = [i % 10, i / 10 % 10, i / 100].map(|k| k as f32);
                Sphere::new(glam::Vec3::from_array(c), 0.5)
            })
            .collect();
        let mut boulders = planes.clone();
        for s in boulders.iter_mut().take(40) {
            s.radius = 300.0;
        }
        let scenes = [
            (planes, 2),
            (boulders, 2),
            (lattice, 2),
            (layer(1, [1.0; 3], 0, 0), 0),
            (layer(4095, [100.0, 50.0, 0.01], 1, 2), 2),
            (layer(4096, [100.0, 50.0, 0.01], 1, 2), 0),
            (layer(20_000, [0.01, 50.0, 100.0], 300, 0), 2),
            (layer(100_003, [5.0, 50.0, 0.01], 2_000, 2), 1),
            (layer(70_000, [3.0, 2.0, 1.0], 0, 0), 0),
            (diagonal(5000, 1.0), 0),
            (diagonal(5000, -2.0), 1),
            (strided, 0),
        ];
        for (k, (spheres, want)) in scenes.iter().enumerate() {
            assert_eq!(sweep_axis(spheres), *want, "scene {k}: the CPU's axis");
            let sb = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("spheres"),
                contents: bytemuck::cast_slice(spheres),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let ext = extents_buffer(&ctx);
            let n = spheres.len() as u32;
            run_stage(&ctx, 2, |rec| keys.extents(rec, n, (&sb, &ext), true)).unwrap();
            let got: Vec<u32> = ctx.read(&ext, EXTENTS_WORDS as usize).unwrap();
            assert_eq!(got[576] as usize, *want, "scene {k}: the GPU's axis");
        }
    }

    /// An extents buffer as a frame starts it: [`EXTENTS_INIT`], then zeros.
    fn extents_buffer(ctx: &GpuContext) -> wgpu::Buffer {
        let mut init = vec![0u32; EXTENTS_WORDS as usize];
        init[..8].copy_from_slice(&EXTENTS_INIT);
        ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("extents"),
            contents: bytemuck::cast_slice(&init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        })
    }

    /// Z-order code by hand: bit k of the key is bit k / (axes left) of the axes that still
    /// have bits at that level, x before y before z (docs/design.md §9.17).
    fn z_order_by_hand(rel: [u32; 3], bits: [u32; 3]) -> u32 {
        let mut key = 0;
        let mut at = 0;
        for level in 0..32 {
            for a in 0..3 {
                if level < bits[a] {
                    key |= ((rel[a] >> level) & 1) << at;
                    at += 1;
                }
            }
        }
        key
    }

    /// `cell_hash` of `shaders/frame.wgsl`, by hand.
    fn cell_hash_by_hand(k: [u32; 3]) -> u32 {
        let mut h = k[0].wrapping_mul(0x8da6b343)
            ^ k[1].wrapping_mul(0xd8163841)
            ^ k[2].wrapping_mul(0xcb1ab31f);
        h ^= h >> 16;
        h = h.wrapping_mul(0x7feb352d);
        h ^= h >> 15;
        h = h.wrapping_mul(0x846ca68b);
        h ^ (h >> 16)
    }

    /// Grid keys on a 10 x 3 x 1 lattice of unit cells (spheres of radius 0.5, so the side is
    /// 1): 4 + 2 + 0 bits of cells. With 64 buckets they are the cells' Z-order codes from the
    /// lowest cell (one cell per key). With 32, one bit too few, the box is cut into tiles of
    /// 4 + 1 + 0 bits (the key's 5 bits dealt one at a time to the axis with most left: x, x,
    /// x, y, x): a key is the code within the tile XOR the tile's hash. With an invalid sphere
    /// among them the cells are hashed (the order word stays 0). The occupancy map follows the
    /// same rule with its own bits (docs/design.md §9.9): 8 words (256 bits) hold the box in
    /// Z-order, 1 word (32 bits) cuts it into the same tiles; exactly the objects' cells are set.
    #[test]
    fn grid_keys_follow_the_z_order_whole_or_in_tiles() {
        let Some(ctx) = test_gpu() else { return };
        let keys_stage = Keys::new(&ctx).unwrap();
        let origin = [-3i32, 7, 2];
        let mut spheres = Vec::new();
        for y in 0..3 {
            for x in 0..10 {
                let c = [x + origin[0], y + origin[1], origin[2]].map(|k| k as f32 + 0.5);
                spheres.push([c[0], c[1], c[2], 0.5f32]);
            }
        }
        assert_eq!(z_order_by_hand([9, 2, 0], [4, 2, 0]), 0b101001);
        // A cell's code below `codes` in tiles of `tile` bits (mode 1: the whole box).
        let code = |rel: [u32; 3], tile: [u32; 3], mode: u32, codes: u32| {
            let high = [0, 1, 2].map(|a| rel[a] >> tile[a]);
            let scatter = if mode == 2 {
                cell_hash_by_hand(high) % codes
            } else {
                0
            };
            z_order_by_hand(rel, tile) ^ scatter
        };
        let tiles = |mode: u32| if mode == 1 { [4, 2, 0] } else { [4, 1, 0] };
        // The third: one invalid sphere (a negative radius, from a caller's buffer; the frame
        // is an error) and the cells are hashed: an invalid sphere's extents (a NaN's) could
        // shrink the box below valid cells.
        for (buckets, mode, nan, map_words, map_mode) in [
            (64u32, 1, false, 8u32, 1),
            (32, 2, false, 8, 1),
            (64, 0, true, 8, 0),
            (64, 1, false, 1, 2),
        ] {
            let mut spheres = spheres.clone();
            if nan {
                spheres.push([0.5, 7.5, 2.5, -0.5]);
            }
            let n = spheres.len() as u32;
            let sb = ctx.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("spheres"),
                contents: bytemuck::cast_slice(&spheres),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let ext = extents_buffer(&ctx);
            let scratch = |label, bytes| ctx.storage_buffer(label, bytes).unwrap();
            let (kb, vb) = (
                scratch("keys", 4 * n as u64),
                scratch("values", 4 * n as u64),
            );
            let (mark, occupied) = (scratch("mark", 4), scratch("map", 4 * map_words as u64));
            let p = KeyParams {
                n,
                pad: n,
                mode: KeyMode::GridBucket,
                axis: 0,
                use_mark: false,
                buckets,
            };
            let inputs = KeyInputs {
                spheres: &sb,
                ext: &ext,
                mark: &mark,
                occupied: &occupied,
                world_rank: None,
            };
            run_stage(&ctx, 4, |rec| {
                keys_stage.extents(rec, n, (&sb, &ext), false)?;
                keys_stage.grid_frame(rec, &ext, &occupied, buckets)?;
                keys_stage.make_keys(rec, p, inputs, &kb, &vb)
            })
            .unwrap();
            let words: Vec<u32> = ctx.read(&ext, EXTENTS_WORDS as usize).unwrap();
            let got: Vec<u32> = ctx.read(&kb, n as usize).unwrap();
            let map: Vec<u32> = ctx.read(&occupied, map_words as usize).unwrap();
            let map_bits = 32 * map_words;
            let set: Vec<u32> = (0..map_bits)
                .filter(|&b| map[(b / 32) as usize] >> (b % 32) & 1 == 1)
                .collect();
            let mut want_set: Vec<u32> = if mode != 0 {
                let tile = tiles(mode);
                let word = tile[0] | tile[1] << 8 | mode << 24;
                assert_eq!(words[14], word, "tile bits {tile:?}, mode {mode}");
                let map_tile = tiles(map_mode);
                let map_word = map_tile[0] | map_tile[1] << 8 | map_mode << 24;
                assert_eq!(words[15], map_word, "the map's tiles, {map_words} words");
                assert_eq!(words[11..14], origin.map(|k| k as u32), "the lowest cell");
                for (i, &key) in got.iter().enumerate() {
                    let rel = [i as u32 % 10, i as u32 / 10, 0];
                    assert_eq!(key, code(rel, tile, mode, buckets), "cell {rel:?}");
                }
                // One cell a key within each tile: the whole box when the cells fit; when tiled
                // the rows y = 0, 1 and the row y = 2 (whose tile's hash is not 0).
                let tiles = if mode == 1 {
                    vec![&got[..]]
                } else {
                    vec![&got[..20], &got[20..]]
                };
                for tile_cells in tiles {
                    let mut distinct = tile_cells.to_vec();
                    distinct.sort();
                    distinct.dedup();
                    assert_eq!(distinct.len(), tile_cells.len(), "one cell per key");
                }
                assert_eq!(cell_hash_by_hand([0, 0, 0]), 0);
                assert_ne!(cell_hash_by_hand([0, 1, 0]) % buckets, 0);
                (0..n)
                    .map(|i| code([i % 10, i / 10, 0], map_tile, map_mode, map_bits))
                    .collect()
            } else {
                assert_eq!(words[7], u32::from(nan), "invalid spheres");
                assert_eq!([words[14], words[15]], [0, 0], "hashed");
                assert!(got.iter().all(|&k| k < buckets));
                spheres
                    .iter()
                    .map(|s| cell_hash_by_hand([0, 1, 2].map(|a| s[a].floor() as i32 as u32)))
                    .map(|h| h % map_bits)
                    .collect()
            };
            want_set.sort();
            want_set.dedup();
            assert_eq!(
                set, want_set,
                "the map's bits, {map_words} words, mode {mode}"
            );
        }
    }
}
