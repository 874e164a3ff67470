//! The tiled radix sort (`shaders/sort/radix_tiles.wgsl`, docs/design.md §9.8): one read of the
//! keys counts every pass's digits (and pass 0's share counts); a pass where one digit holds
//! every key is skipped on the device; each live pass is three dispatches (the counts of each
//! share of tiles, pass 0's from that read; one scan per digit over the shares; the tiles ranked
//! in workgroup memory and written out in runs).
//! [`crate::gpu::sort::radix_sort`] runs it as
//! [`Variant::Tiles`](crate::gpu::sort::radix_sort::Variant::Tiles) where the adapter gives a
//! workgroup 16 KB.

use crate::error::{Error, Result};
use crate::gpu::context::{GpuContext, WorkgroupMemory, dispatch_2d};
use crate::gpu::sort::scan::exact_binding;
use crate::gpu::sort::{ParamTable, Scratch};

/// Invocations per workgroup (`WG` in the shader).
const WORKGROUP: u32 = 256;
/// Keys per invocation (`ITEMS`): the larger where the adapter gives a workgroup its memory
/// (longer digit runs: fewer sectors written a key), else the smaller. (32, 8,192-key tiles in
/// 40 KB, not offered: 3 x 32 words of registers an invocation, unmeasured on a GPU.)
const ITEMS_CHOICES: [u32; 2] = [16, 8];
const RADIX: u32 = 256;
const MAX_PASSES: u32 = 4;
/// Most shares whose counts one workgroup scans (`scan_small`: an invocation walks a digit's
/// shares); more take a workgroup a digit (`scan_shares`).
const SMALL_SCAN_SHARES: u32 = 32;
/// The most shares (workgroups of a pass's upsweep and downsweep; `MAX_SHARES` in the shader):
/// past `MAX_SHARES` tiles a workgroup takes several, so the counts that each pass writes, scans
/// and reads (256 words a share) shrink to a few per mille of the keys' bytes. 1,024 workgroups
/// of 24 KB are about what an H100 holds resident (9 of them an SM, 132 SMs): a guess until a
/// GPU measures it.
pub(crate) const MAX_SHARES: u32 = 1024;
/// Words of the digit counts and the plan (`STATE` + 16 in the shader).
const DIGIT_WORDS: u64 = (RADIX * MAX_PASSES + 16) as u64;
/// The plan's word holding the live passes (`STATE + LIVE_PASSES`).
const LIVE_PASSES_WORD: u64 = (RADIX * MAX_PASSES + 9) as u64;
/// Workgroup memory the ranking needs at `items` keys an invocation: a word a key of the tile
/// and 8 counters an invocation.
pub const fn workgroup_bytes(items: u32) -> u32 {
    4 * WORKGROUP * items + 8 * WORKGROUP * 4
}

/// Tiles a share holds at `tiles` tiles: as few as keep the shares at most `max_shares` (the
/// shader's `share_tiles`), and the shares that makes.
pub const fn shares(tiles: u32, max_shares: u32) -> (u32, u32) {
    let per = if tiles > max_shares {
        tiles.div_ceil(max_shares)
    } else {
        1
    };
    (per, tiles.div_ceil(per))
}

/// Keys per tile on `ctx` (4,096 where a workgroup may hold 24 KB, else 2,048 from 16 KB);
/// `None` where the tiled sort cannot run.
pub fn tile_keys(ctx: &GpuContext) -> Option<u32> {
    let have = ctx.limits.max_compute_workgroup_storage_size;
    ITEMS_CHOICES
        .into_iter()
        .find(|&items| workgroup_bytes(items) <= have)
        .map(|items| WORKGROUP * items)
}

/// Why the tiled sort cannot run on `ctx`, if it cannot.
pub fn unsupported(ctx: &GpuContext) -> Option<String> {
    let l = &ctx.limits;
    if tile_keys(ctx).is_none() {
        return Some(format!(
            "the tiled radix sort needs {} bytes of workgroup memory; the adapter gives {}",
            workgroup_bytes(ITEMS_CHOICES[1]),
            l.max_compute_workgroup_storage_size
        ));
    }
    if l.max_storage_buffers_per_shader_stage < 6 {
        return Some("the tiled radix sort binds 6 storage buffers".into());
    }
    None
}

/// How [`TileSort::record`] records a dispatch: (label, pipeline, bind group 0's entries,
/// workgroups in x and y).
pub type RecordDispatch<'r> = dyn FnMut(
        &'static str,
        &wgpu::ComputePipeline,
        &[wgpu::BindGroupEntry<'_>],
        (u32, u32),
    ) -> Result<()>
    + 'r;

/// The tiled sort's pipelines and scratch (grown with n).
pub struct TileSort {
    clear: wgpu::ComputePipeline,
    count: wgpu::ComputePipeline,
    plan: wgpu::ComputePipeline,
    upsweep: wgpu::ComputePipeline,
    scan: wgpu::ComputePipeline,
    scan_small: wgpu::ComputePipeline,
    downsweep: wgpu::ComputePipeline,
    copy_back: wgpu::ComputePipeline,
    /// One `Params` per (key bits, pass).
    params: ParamTable,
    /// The ping-pong keys and values, and the share counts.
    scratch: Scratch,
    /// The digit counts of every pass, then the plan (which passes run, where the result is).
    digit_hist: wgpu::Buffer,
    /// Keys per tile.
    tile: u32,
    /// The most shares (`MAX_SHARES` of the module).
    max_shares: u32,
}

/// The module at `items` keys an invocation and at most `max_shares` shares, as the pipelines
/// compile it.
pub(crate) fn source(
    items: u32,
    max_shares: u32,
    math: crate::gpu::shader::MathMode,
) -> Result<String> {
    Ok(format!(
        "const ITEMS: u32 = {items}u;\nconst MAX_SHARES: u32 = {max_shares}u;\n{}",
        crate::gpu::shader::compose("sort/radix_tiles.wgsl", math)?
    ))
}

/// The keys an invocation may hold in a tile: the module variants ([`source`]).
pub(crate) fn items_choices() -> [u32; 2] {
    ITEMS_CHOICES
}

impl TileSort {
    /// The pipelines on `ctx`; [`Error::AdapterLacks`] where the adapter cannot run them.
    pub fn new(ctx: &GpuContext) -> Result<Self> {
        Self::with_max_shares(ctx, MAX_SHARES)
    }

    /// The same with at most `max_shares` shares (tests: shares of several tiles at small n).
    pub(crate) fn with_max_shares(ctx: &GpuContext, max_shares: u32) -> Result<Self> {
        if max_shares == 0 {
            return Err(Error::invalid_argument(
                "max_shares",
                "the tiled sort needs at least one share",
            ));
        }
        let Some(tile) = tile_keys(ctx) else {
            return Err(Error::adapter_lacks(
                "workgroup memory",
                unsupported(ctx).unwrap_or_default(),
            ));
        };
        if let Some(why) = unsupported(ctx) {
            return Err(Error::adapter_lacks("storage buffers", why));
        }
        ctx.check_workgroup("the tiled radix sort", WORKGROUP)?;
        let module = ctx.shader(
            "sort/radix_tiles.wgsl",
            &source(tile / WORKGROUP, max_shares, ctx.math())?,
        )?;
        let pipeline =
            |entry: &str| ctx.pipeline_with(&module, entry, &[], WorkgroupMemory::AsLeft);
        let slots = (1..=32u32).flat_map(|key_bits| {
            (0..MAX_PASSES).map(move |pass| {
                let bits = key_bits.saturating_sub(8 * pass).clamp(1, 8);
                let words = [
                    8 * pass,
                    (1u32 << bits) - 1,
                    pass,
                    key_bits.div_ceil(8),
                    key_bits,
                ];
                (param_slot(key_bits, pass), words)
            })
        });
        let count = 32 * MAX_PASSES as u64;
        let params = ParamTable::new(ctx, "tiled sort params", 32, count, slots);
        let digit_hist = ctx.storage_buffer("tiled sort digit counts", DIGIT_WORDS * 4)?;
        let sort = Self {
            clear: pipeline("clear")?,
            count: pipeline("count")?,
            plan: pipeline("plan")?,
            upsweep: pipeline("upsweep")?,
            scan: pipeline("scan_shares")?,
            scan_small: pipeline("scan_small")?,
            downsweep: pipeline("downsweep")?,
            copy_back: pipeline("copy_back")?,
            params,
            scratch: Scratch::default(),
            digit_hist,
            tile,
            max_shares,
        };
        ctx.check()?;
        Ok(sort)
    }

    /// The buffer whose word at [`Self::live_passes_offset`] holds how many digit passes the
    /// last recorded sort ran (the plan's count: passes where every key had the same digit
    /// are skipped).
    pub fn plan_buffer(&self) -> &wgpu::Buffer {
        &self.digit_hist
    }

    /// Byte offset of the live-pass count in [`Self::plan_buffer`].
    pub fn live_passes_offset() -> u64 {
        LIVE_PASSES_WORD * 4
    }

    /// Records the stable sort of `(keys[i], values[i])`, `i < n`, on the low `key_bits` bits
    /// into `pass` (`n >= 2`, buffers checked by the caller): its dispatches go through
    /// `record(label, pipeline, bind entries, groups)`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        ctx: &GpuContext,
        keys: &wgpu::Buffer,
        values: &wgpu::Buffer,
        n: u32,
        key_bits: u32,
        max_groups_per_dim: u32,
        record: &mut RecordDispatch<'_>,
    ) -> Result<()> {
        let bytes = n as u64 * 4;
        let (_, shares) = shares(n.div_ceil(self.tile), self.max_shares);
        let hist_words = (RADIX as u64) * shares as u64;
        let labels = [
            "tiled sort scratch keys",
            "tiled sort scratch values",
            "tiled sort share counts",
        ];
        let [tmp_keys, tmp_values, share_hist] =
            self.scratch.grow(ctx, labels, bytes, hist_words * 4)?;
        let passes = key_bits.div_ceil(8);
        let params = |pass: u32| self.params.entry(param_slot(key_bits, pass), 20);
        fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let share_groups = dispatch_2d(shares, max_groups_per_dim);
        let digits = whole(6, &self.digit_hist);
        record(
            "sort clear",
            &self.clear,
            std::slice::from_ref(&digits),
            (1, 1),
        )?;
        let count = [
            params(0),
            exact_binding(1, keys, n),
            whole(5, &share_hist),
            digits.clone(),
        ];
        record("sort count", &self.count, &count, share_groups)?;
        record(
            "sort plan",
            &self.plan,
            &[params(0), exact_binding(1, keys, n), digits.clone()],
            (1, 1),
        )?;
        for pass in 0..passes {
            let all = [
                params(pass),
                exact_binding(1, keys, n),
                exact_binding(2, values, n),
                exact_binding(3, &tmp_keys, n),
                exact_binding(4, &tmp_values, n),
                whole(5, &share_hist),
                digits.clone(),
            ];
            let upsweep = [
                all[0].clone(),
                all[1].clone(),
                all[3].clone(),
                all[5].clone(),
                all[6].clone(),
            ];
            // Pass 0's share counts come from `count`.
            if pass > 0 {
                record("sort upsweep", &self.upsweep, &upsweep, share_groups)?;
            }
            let scan = [
                all[0].clone(),
                all[1].clone(),
                all[5].clone(),
                all[6].clone(),
            ];
            if shares <= SMALL_SCAN_SHARES {
                record("sort scan", &self.scan_small, &scan, (1, 1))?;
            } else {
                record("sort scan", &self.scan, &scan, (RADIX, 1))?;
            }
            record("sort downsweep", &self.downsweep, &all, share_groups)?;
        }
        let copy = [
            exact_binding(1, keys, n),
            exact_binding(2, values, n),
            exact_binding(3, &tmp_keys, n),
            exact_binding(4, &tmp_values, n),
            digits,
        ];
        let groups = dispatch_2d(n.div_ceil(WORKGROUP), max_groups_per_dim);
        record("sort copy back", &self.copy_back, &copy, groups)
    }
}

/// Bytes of device traffic a (key, value) pair costs in the tiled sort of `n` pairs in
/// `tile`-key tiles (a model, not a measurement): the count pass reads the key once for every
/// pass and pass 0's share counts (4); each later pass reads the key for its share counts (4);
/// every pass reads key and value (8) and writes both (8); the share counts (256 words a share:
/// written, read and written by the scan, read) are `16 * 256 * shares / n` a pair.
pub fn bytes_per_pair(passes: u32, tile: u32, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let tiles = n.div_ceil(tile as u64).min(u32::MAX as u64) as u32;
    let (_, shares) = shares(tiles, MAX_SHARES);
    let passes = passes as f64;
    4.0 * passes + passes * (16.0 + 16.0 * RADIX as f64 * shares as f64 / n as f64)
}

/// The 32-byte sectors a 32-lane subgroup's store of keys touches, per key, in one digit pass
/// (the low byte) over `keys`, counted from the scatter's own addresses (a model of coalescing
/// that needs no GPU): with `tile`, the tiled sort's writes (a tile ordered by digit, place
/// `k * 256 + lane` by invocation `lane` in store `k`); without, a scatter that writes each
/// round's 256 keys from the lanes holding them in input order (the portable and subgroup
/// scatters). Both write every key to its stable place; they differ in which keys one store
/// instruction carries.
pub fn write_sectors_per_key(keys: &[u32], tile: Option<u32>) -> f64 {
    const LANES: usize = 32;
    if keys.is_empty() {
        return 0.0;
    }
    let digit = |k: u32| (k & 0xff) as usize;
    // Every key's place after the pass: a stable counting sort.
    let mut start = [0usize; RADIX as usize];
    for &k in keys {
        start[digit(k)] += 1;
    }
    let mut at = 0;
    for s in start.iter_mut() {
        let c = *s;
        *s = at;
        at += c;
    }
    let dest: Vec<usize> = keys
        .iter()
        .map(|&k| {
            let d = &mut start[digit(k)];
            *d += 1;
            *d - 1
        })
        .collect();
    let sectors = |indices: &mut dyn Iterator<Item = usize>| {
        let mut s: Vec<usize> = indices.map(|i| dest[i] * 4 / 32).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let mut total = 0;
    let tiled = tile.is_some();
    let tile = tile.unwrap_or(4096) as usize;
    let wg = WORKGROUP as usize;
    for (t, chunk) in keys.chunks(tile).enumerate() {
        // The input indices in the order each store reads them.
        let order: Vec<usize> = if tiled {
            let mut o: Vec<usize> = (0..chunk.len()).map(|i| t * tile + i).collect();
            o.sort_by_key(|&i| digit(keys[i]));
            o
        } else {
            (0..chunk.len()).map(|i| t * tile + i).collect()
        };
        for store in (0..order.len()).step_by(wg) {
            let round = &order[store..(store + wg).min(order.len())];
            for lanes in round.chunks(LANES) {
                total += sectors(&mut lanes.iter().copied());
            }
        }
    }
    total as f64 / keys.len() as f64
}

fn param_slot(key_bits: u32, pass: u32) -> u64 {
    ((key_bits - 1) * MAX_PASSES + pass) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random keys: a round's 32 lanes hold about 32 digits, so the scatter in input order
    /// writes nearly a sector a key; the tile ordered by digit writes runs (2,048 or 4,096 keys
    /// over 256 digits). Keys already in digit order are runs either way: 8 keys to a sector.
    #[test]
    fn tiles_write_runs_and_the_scatter_a_sector_a_key() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let keys: Vec<u32> = (0..1 << 16).map(|_| rng.random()).collect();
        let scattered = write_sectors_per_key(&keys, None);
        assert!(scattered > 0.9 && scattered <= 1.0, "{scattered}");
        // 2,048-key tiles: runs of 8 keys (32 bytes, two sectors when unaligned); 4,096: runs
        // of 16, the 24 KB adapters' tiles, within the target of a quarter sector a key.
        let small = write_sectors_per_key(&keys, Some(2048));
        let large = write_sectors_per_key(&keys, Some(4096));
        assert!(small > 0.25 && small < 0.27, "{small}");
        assert!(large < 0.22, "{large}");
        // Keys already in digit order (the low byte rising every 256 keys).
        let sorted: Vec<u32> = (0..1u32 << 16).map(|i| i >> 8).collect();
        for tile in [None, Some(2048), Some(4096)] {
            let s = write_sectors_per_key(&sorted, tile);
            assert!((0.12..0.16).contains(&s), "{tile:?}: {s}");
        }
        assert_eq!(write_sectors_per_key(&[], Some(2048)), 0.0);
    }

    /// The model by hand: the count pass 4 bytes (pass 0's upsweep), each later pass's upsweep
    /// 4, every pass 16 for its keys and values and the share counts' 16 x 256 words a share.
    #[test]
    fn the_model_by_hand() {
        // 1M pairs: 512 tiles of 2,048, a share each.
        assert_eq!(
            bytes_per_pair(3, 2048, 1 << 20),
            4.0 + 2.0 * 4.0 + 3.0 * 18.0
        );
        assert_eq!(bytes_per_pair(4, 2048, 1 << 20), 88.0);
        assert_eq!(bytes_per_pair(4, 4096, 1 << 20), 84.0);
        assert_eq!(
            bytes_per_pair(3, 4096, 1 << 20),
            4.0 + 2.0 * 4.0 + 3.0 * 17.0
        );
        // 16M pairs: 4,096 tiles in 1,024 shares of 4: a quarter byte a pass.
        assert_eq!(bytes_per_pair(4, 4096, 1 << 24), 4.0 * 20.25);
        // One short tile: its counts are the whole share's.
        assert_eq!(bytes_per_pair(1, 4096, 1024), 20.0 + 16.0 * 256.0 / 1024.0);
        assert_eq!(bytes_per_pair(4, 4096, 0), 0.0);
    }

    /// Shares by hand: a tile each up to the most, then as few tiles each as keep them within.
    #[test]
    fn shares_by_hand() {
        assert_eq!(shares(0, 1024), (1, 0));
        assert_eq!(shares(1, 1024), (1, 1));
        assert_eq!(shares(1024, 1024), (1, 1024));
        assert_eq!(shares(1025, 1024), (2, 513));
        assert_eq!(shares(4096, 1024), (4, 1024));
        assert_eq!(shares(10, 3), (4, 3));
        assert_eq!(shares(9, 3), (3, 3));
        for tiles in 0..200 {
            for most in 1..20 {
                let (per, count) = shares(tiles, most);
                assert!(count <= most, "{tiles} {most}");
                assert!(count * per >= tiles && (count == 0 || (count - 1) * per < tiles));
            }
        }
    }
}
