//! A device-traffic model of the GPU sphere frame (docs/design.md §9.9): the bytes each stage
//! reads and writes in device memory per object, counted from what its kernels load and store.
//! It predicts a change before it is measured and shows the floor: a frame cannot move less than
//! the spheres once (16 B per object) and its pairs (8 B each). A model, not a measurement:
//! caches (an H100's L2 holds 50 MB) serve much of the random traffic, so it bounds the DRAM
//! bytes from above; rows show it beside the measured times.

use crate::broadphase::Method;
use crate::gpu::GpuContext;
use crate::gpu::sort::radix_sort::{bytes_per_key_per_pass, plan, plan_lanes};

/// Which sort a traffic model prices: the tiled one, or the older plan on an adapter with these
/// subgroup lanes (`None`: the portable scatter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortModel {
    /// [`Variant::Tiles`](crate::gpu::sort::radix_sort::Variant::Tiles) with tiles of this many
    /// keys.
    Tiles(u32),
    /// [`plan`](crate::gpu::sort::radix_sort::plan) with these lanes.
    Planned(Option<u64>),
}

impl SortModel {
    /// The sort [`plan_for`](crate::gpu::sort::radix_sort::plan_for) runs on `ctx`.
    pub fn of(ctx: &GpuContext) -> Self {
        if let Some(tile) = crate::gpu::sort::radix_tiles::tile_keys(ctx) {
            SortModel::Tiles(tile)
        } else {
            SortModel::Planned(plan_lanes(ctx))
        }
    }

    /// Modelled device bytes per (key, value) pair of a sort of `n` pairs on `key_bits` bits
    /// (every pass run: the tiled sort may skip some on the device).
    pub fn bytes_per_pair(self, n: u64, key_bits: u32) -> f64 {
        let passes = key_bits.div_ceil(8);
        match self {
            SortModel::Tiles(tile) => {
                crate::gpu::sort::radix_tiles::bytes_per_pair(passes, tile, n)
            }
            SortModel::Planned(lanes) => {
                let (_, rounds) = plan(n, lanes);
                passes as f64 * bytes_per_key_per_pass(256 * rounds)
            }
        }
    }
}

/// Bytes a random 4-to-16-byte read really costs: one 32-byte sector (NVIDIA and AMD L2).
pub const SECTOR: f64 = 32.0;
/// The floor: every sphere read once.
pub const FLOOR_BYTES_PER_OBJECT: f64 = 16.0;
/// Neighbour cells the grid walk may look up per object: the 13 after its own.
pub const GRID_NEIGHBOURS: f64 = 13.0;
/// Bits of the grid's occupancy map a bucket holds (`grid_map_words`, docs/design.md §9.9).
pub const GRID_MAP_BITS_PER_BUCKET: f64 = 128.0;

/// One stage's modelled bytes per object.
#[derive(Clone, Debug, PartialEq)]
pub struct StageBytes {
    /// The stage's name (`upload`, `keys`, `sort`, ...).
    pub stage: &'static str,
    /// Modelled bytes read and written in device memory, per object.
    pub bytes_per_object: f64,
}

/// What a frame found, which the walk stages' traffic depends on.
#[derive(Clone, Copy, Debug)]
pub struct FrameShape {
    /// Objects in the frame.
    pub n: u64,
    /// Sphere tests per frame (the candidates the walks reach).
    pub tests: f64,
    /// Touching pairs per frame.
    pub pairs: f64,
    /// Whether the pairs are stored and read back (not only counted).
    pub store: bool,
    /// The sort the adapter runs ([`SortModel::of`]).
    pub sort: SortModel,
    /// The pair list's capacity (pairs): at most that is read back.
    pub pair_capacity: f64,
    /// The pair list's slots the events' sorts walk: the capacity before a frame's count is
    /// known, then the last count with headroom (docs/design.md §9.16).
    pub sorted_slots: f64,
    /// With frame events tracked on the device: pairs found and lost per frame.
    pub events: Option<[f64; 2]>,
    /// The grid walk's bucket lookups per object, as counted by the device (None: every
    /// neighbour's).
    pub grid_lookups: Option<f64>,
}

/// Elements a readback by counts copies of a list that held `last` (docs/design.md §9.16):
/// `readback::ListHint::planned`, the last count and a quarter, at least 1,024 more, at most
/// the capacity.
pub fn copied_by_counts(last: f64, capacity: f64) -> f64 {
    (last * 1.25 + 1024.0).min(capacity)
}

/// Bytes of the pair list per frame: the pairs appended (8 B each), and the copy of the part the
/// readback plans (read and written, 8 B each) when they are stored.
pub fn pair_list_bytes(pairs: f64, capacity: f64, store: bool) -> f64 {
    if !store {
        return 0.0;
    }
    8.0 * pairs + 2.0 * 8.0 * copied_by_counts(pairs, capacity.max(pairs))
}

/// Bytes of the device's frame events per frame (`gpu::events`). Over every slot of the pair
/// list's `capacity` (the kernels and sorts are sized by it): keys by j and by i written (8 B
/// each), two sorts of them on the object index bits, the gather's value read and sorted pair
/// written (12), and for the found and for the lost pairs a flag written (4), scanned (12) and
/// read by the scatter (8). Per pair: its two key reads (16), the gather's random read (a
/// sector) and, found and lost, its own read and a binary search in the other frame's list
/// (8 + log2(pairs) sectors). Per event: written (8), and the readback's copy by counts.
pub fn events_bytes(
    n: u64,
    capacity: f64,
    pairs: f64,
    [found, lost]: [f64; 2],
    sort_model: SortModel,
) -> f64 {
    let cap = capacity.max(pairs).max(1.0);
    let index_bits = (64 - n.max(1).leading_zeros()).clamp(1, 32);
    let sort = sort_model.bytes_per_pair(cap as u64, index_bits);
    let per_slot = 16.0 + 2.0 * sort + 12.0 + 2.0 * (4.0 + 12.0 + 8.0);
    let per_pair = 16.0 + SECTOR + 2.0 * (8.0 + pairs.max(2.0).log2() * SECTOR);
    let lists = [found, lost].map(|e| 8.0 * e + 2.0 * 8.0 * copied_by_counts(e, cap));
    per_slot * cap + per_pair * pairs + lists[0] + lists[1]
}

/// Distinct 32-byte sectors of the occupancy map an object's 13 forward neighbours fall in, on
/// average over its cell's position: in Z-order a sector (256 bits) is an aligned block of
/// 8 x 8 x 4 cells (x, y, z) where every axis has 3 map bits or more. Counted, not estimated.
pub fn grid_map_sectors() -> f64 {
    let mut offsets = Vec::new();
    for dz in 0..2 {
        for dy in -1..2 {
            for dx in -1..2 {
                // (z, y, x) order after (0, 0, 0).
                if (dz, dy, dx) > (0, 0, 0) {
                    offsets.push([dx, dy, dz]);
                }
            }
        }
    }
    debug_assert_eq!(offsets.len(), GRID_NEIGHBOURS as usize);
    let block = [8, 8, 4];
    let mut sectors = 0usize;
    for x in 0..8i32 {
        for y in 0..8i32 {
            for z in 0..4i32 {
                let mut seen: Vec<[i32; 3]> = offsets
                    .iter()
                    .map(|o| [x + o[0], y + o[1], z + o[2]])
                    .map(|c| [0, 1, 2].map(|a| c[a].div_euclid(block[a])))
                    .collect();
                seen.sort();
                seen.dedup();
                sectors += seen.len();
            }
        }
    }
    sectors as f64 / 256.0
}

/// Bytes of the grid's pair stage per object (`grid` in `shaders/spheres/pairs.wgsl`), with
/// `load` objects a bucket: the object's own sphere, key and index (24); its own bucket's
/// objects after it, key and sphere each (load / 2 of them, contiguous), and the key that ends
/// the walk (4); the map's sectors its 13 neighbours fall in ([`grid_map_sectors`]); per bucket
/// lookup a random read of the bucket's start, of its first key and of its first sphere (3
/// sectors), its other objects (`load`, contiguous) and the key that ends it (4); per touching
/// pair the candidate's index (a sector). Candidates' cells are computed, not read.
pub fn grid_pairs_bytes(load: f64, lookups_per_object: f64, pairs_per_object: f64) -> f64 {
    24.0 + load / 2.0 * 20.0
        + 4.0
        + grid_map_sectors() * SECTOR
        + lookups_per_object * (3.0 * SECTOR + load * 20.0 + 4.0)
        + pairs_per_object * SECTOR
}

/// The model of one frame of `method` (None for methods not modelled: xy, xyz, min_axis, whose
/// cascades depend on survivors per axis, and auto, which runs one of the others).
pub fn sphere_frame(method: Method, f: &FrameShape) -> Option<Vec<StageBytes>> {
    let n = f.n.max(1) as f64;
    let tests = f.tests / n;
    let mut out = vec![StageBytes {
        stage: "upload",
        bytes_per_object: 16.0,
    }];
    let mut add = |stage, bytes| {
        out.push(StageBytes {
            stage,
            bytes_per_object: bytes,
        })
    };
    let sort = |key_bits: u32| f.sort.bytes_per_pair(f.n, key_bits);
    match method {
        Method::BruteForce => {
            // Each row re-reads the spheres after it: n / 2 per object, from cache mostly.
            add("pairs", 16.0 * n / 2.0);
        }
        Method::Grid => {
            let buckets = (f.n.max(1).next_power_of_two()) as f64 / n;
            add("extents", 16.0);
            // Sphere in; key and value out.
            add("keys", 16.0 + 4.0 + 4.0);
            // The occupancy map cleared, and a bit set per object (a random atomic).
            add("map", buckets * GRID_MAP_BITS_PER_BUCKET / 8.0 + SECTOR);
            add(
                "sort",
                sort(f.n.max(2).next_power_of_two().trailing_zeros()),
            );
            // Value in, random sphere in (a sector), sphere out.
            add("gather", 4.0 + SECTOR + 16.0);
            // Keys read, starts cleared and written per bucket.
            add("starts", 4.0 + 8.0 * buckets);
            let lookups = f.grid_lookups.unwrap_or(GRID_NEIGHBOURS);
            add(
                "pairs",
                grid_pairs_bytes(1.0 / buckets, lookups, f.pairs / n),
            );
        }
        Method::X | Method::Sap | Method::OriginDistance => {
            // sap's axis (`sap_frame`) reads a sample of up to 1,024 spheres, a sector each.
            let sample = if method == Method::Sap {
                crate::broadphase::sweep_axis::sampled(f.n as usize) as f64 * SECTOR / n
            } else {
                0.0
            };
            add("extents", 16.0 + sample);
            add("keys", 16.0 + 4.0 + 4.0);
            add("sort", sort(32));
            add("gather", 4.0 + SECTOR + 16.0);
            // Own sphere, key, value; per candidate reached: key, sphere, value (contiguous).
            // For sap a lower bound: its tests are the candidates left after the y/z filter,
            // not all those its x sweep reads.
            add("pairs", 24.0 + tests * 24.0);
        }
        Method::Xy | Method::Xyz | Method::MinAxis | Method::Auto => return None,
    }
    if f.store {
        add(
            "pair list",
            pair_list_bytes(f.pairs, f.pair_capacity, true) / n,
        );
    }
    if let Some([found, lost]) = f.events {
        add(
            "events",
            events_bytes(f.n, f.sorted_slots, f.pairs, [found, lost], f.sort) / n,
        );
    }
    Some(out)
}

/// [`sphere_frame`] on `ctx`'s adapter (its sort plan), as (stage, bytes per object), from the
/// pair list's capacity, the slots the events' sorts walk, and the events found and lost per
/// frame when tracked.
pub fn sphere_frame_on(
    ctx: &crate::gpu::GpuContext,
    method: Method,
    (n, tests, pairs, store): (usize, f64, f64, bool),
    (pair_capacity, sorted_slots, events): (f64, f64, Option<[f64; 2]>),
    grid_lookups: Option<f64>,
) -> Option<Vec<(&'static str, f64)>> {
    let shape = FrameShape {
        n: n as u64,
        tests,
        pairs,
        store,
        sort: SortModel::of(ctx),
        pair_capacity,
        sorted_slots,
        events,
        grid_lookups,
    };
    sphere_frame(method, &shape).map(|stages| {
        stages
            .into_iter()
            .map(|s| (s.stage, s.bytes_per_object))
            .collect()
    })
}

/// Sum of a model's stages.
#[cfg(test)]
pub fn total(stages: &[StageBytes]) -> f64 {
    stages.iter().map(|s| s.bytes_per_object).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The density scene's frame at n = 1M (258,856 tests, 40,359 pairs, 250,000 bucket
    /// lookups), pairs stored in a list of 65,536, no subgroup sort.
    fn density_million(events: Option<[f64; 2]>) -> FrameShape {
        FrameShape {
            n: 1_000_000,
            tests: 258_856.0,
            pairs: 40_359.0,
            store: true,
            sort: SortModel::Planned(None),
            pair_capacity: 65_536.0,
            sorted_slots: 65_536.0,
            events,
            grid_lookups: Some(0.25),
        }
    }

    /// 488 sectors over the 256 positions of a cell in its 8 x 8 x 4 block, counted by a
    /// separate script (Python, sets of block coordinates): 1.90625 a cell.
    #[test]
    fn the_map_sectors_of_thirteen_neighbours() {
        assert_eq!(grid_map_sectors(), 488.0 / 256.0);
    }

    #[test]
    fn the_grid_model_at_the_density_million() {
        // By hand: upload 16 + extents 16 + keys 24 + map (2^27 bits cleared over 10^6
        // objects: 16 x 1.048576, and a sector set) + sort 3 passes (20-bit bucket keys) x
        // (20 + 20 x 256 / 1024: rounds 4, the power of two below 10^6 / 2^17) + gather 52 +
        // starts (4 + 8 x 1.048576) + pairs (load 10^6 / 2^20: 24 + load / 2 x 20 + 4 +
        // 1.90625 x 32 + 0.25 x (96 + load x 20 + 4) + 0.040359 x 32) + pair list (40,359
        // appended, then 1.25 x 40,359 + 1,024 copied: 8 B written, 16 B copied each).
        let f = density_million(None);
        let stages = sphere_frame(Method::Grid, &f).unwrap();
        let load = 1e6 / 1_048_576.0;
        let pairs =
            24.0 + load * 10.0 + 4.0 + 61.0 + 0.25 * (100.0 + load * 20.0) + 0.040359 * 32.0;
        let by_hand = 16.0
            + 16.0
            + 24.0
            + (16.0 * 1.048576 + 32.0)
            + 3.0 * 25.0
            + 52.0
            + (4.0 + 8.0 * 1.048576)
            + pairs
            + (8.0 * 40_359.0 + 16.0 * (1.25 * 40_359.0 + 1024.0)) / 1e6;
        assert!((total(&stages) - by_hand).abs() < 1e-9, "{stages:?}");
        // Issue 37's bound, and the walk before the occupancy map: per visited cell (14) the
        // bucket's start, first key and value (3 sectors), per test the candidate's stored
        // cell (a sector) and sphere, the own sphere, index and cell (36): 1,589 B a frame.
        assert!(total(&stages) <= 400.0, "{}", total(&stages));
        let before = 36.0 + 14.0 * 96.0 + 0.258856 * 48.0;
        let now = stages.iter().find(|s| s.stage == "pairs").unwrap();
        assert!(before > 9.0 * now.bytes_per_object, "{now:?}");
        // Lookups unknown: every neighbour's.
        let unknown = FrameShape {
            grid_lookups: None,
            ..f
        };
        let all = sphere_frame(Method::Grid, &unknown).unwrap();
        let gap = total(&all) - total(&stages);
        assert!((gap - 12.75 * (100.0 + load * 20.0)).abs() < 1e-9);
        assert!(sphere_frame(Method::Xyz, &f).is_none());
    }

    /// The pair list read back by counts against the whole capacity, as before (§9.16): at 1M
    /// pairs in a list of 50M, 8 B appended plus 16 B copied per planned pair, not per slot.
    #[test]
    fn the_pair_list_by_counts_and_by_capacity() {
        let by_counts = pair_list_bytes(1e6, 5e7, true);
        assert_eq!(by_counts, 8e6 + 16.0 * (1.25e6 + 1024.0));
        let by_capacity = 8e6 + 16.0 * 5e7;
        assert!(by_capacity > 28.0 * by_counts);
        assert_eq!(pair_list_bytes(1e6, 5e7, false), 0.0);
        // Small lists: at most the capacity is copied.
        assert_eq!(pair_list_bytes(10.0, 100.0, true), 80.0 + 1600.0);
    }

    /// The events at the density million by hand: 20 index bits (3 digit passes), a list of
    /// 65,536 slots sorted in blocks of 4 x 256 (25 B a key a pass), 40,359 pairs, 1,000 found
    /// and 500 lost.
    #[test]
    fn the_events_model_by_hand() {
        assert_eq!(crate::gpu::sort::radix_sort::plan(65_536, None).1, 4);
        let per_slot = 16.0 + 2.0 * 75.0 + 12.0 + 2.0 * 24.0;
        let per_pair = 16.0 + 32.0 + 2.0 * (8.0 + 40_359f64.log2() * 32.0);
        let found = 8.0 * 1000.0 + 16.0 * (1250.0 + 1024.0);
        let lost = 8.0 * 500.0 + 16.0 * (625.0 + 1024.0);
        let by_hand = 65_536.0 * per_slot + 40_359.0 * per_pair + found + lost;
        let got = events_bytes(
            1_000_000,
            65_536.0,
            40_359.0,
            [1000.0, 500.0],
            SortModel::Planned(None),
        );
        assert!((got - by_hand).abs() < 1e-6, "{got} vs {by_hand}");
        let stages = sphere_frame(Method::Grid, &density_million(Some([1000.0, 500.0]))).unwrap();
        let last = stages.last().unwrap();
        assert_eq!(last.stage, "events");
        assert!((last.bytes_per_object - by_hand / 1e6).abs() < 1e-9);
    }
}
