//! A device-traffic model of the GPU sphere frame (docs/design.md §9.9): the bytes each stage
//! reads and writes in device memory per object, counted from what its kernels load and store.
//! It predicts a change before it is measured and shows the floor: a frame cannot move less than
//! the spheres once (16 B per object) and its pairs (8 B each). A model, not a measurement:
//! caches (an H100's L2 holds 50 MB) serve much of the random traffic, so it bounds the DRAM
//! bytes from above; rows show it beside the measured times.

use crate::broadphase::Method;
use crate::gpu::sort::radix_sort::{bytes_per_key_per_pass, plan};

/// Bytes a random 4-to-16-byte read really costs: one 32-byte sector (NVIDIA and AMD L2).
pub const SECTOR: f64 = 32.0;
/// The floor: every sphere read once.
pub const FLOOR_BYTES_PER_OBJECT: f64 = 16.0;
/// Cells the grid walk visits per object: its own and the 13 after it (interior objects).
pub const GRID_CELLS_VISITED: f64 = 14.0;

/// One stage's modelled bytes per object.
#[derive(Clone, Debug, PartialEq)]
pub struct StageBytes {
    pub stage: &'static str,
    pub bytes_per_object: f64,
}

/// What a frame found, which the walk stages' traffic depends on.
#[derive(Clone, Copy, Debug)]
pub struct FrameShape {
    pub n: u64,
    /// Sphere tests per frame (the candidates the walks reach).
    pub tests: f64,
    /// Touching pairs per frame.
    pub pairs: f64,
    /// Whether the pairs are stored and read back (not only counted).
    pub store: bool,
    /// Subgroup lanes of the adapter when it runs the subgroup sort (the sort's plan).
    pub sort_lanes: Option<u64>,
}

/// Bytes of the grid's pair stage per object: per visited cell one random read of the bucket
/// start and one of the bucket's first key and value (3 sectors); per test one random read of
/// the candidate's stored cell and a contiguous read of its sphere (`SECTOR + 16`); plus the
/// object's own sphere, index and cell (36). `discarded` counts candidates read and skipped
/// (key and value, 8 B each) per object.
pub fn grid_pairs_bytes(cells_visited: f64, tests_per_object: f64, discarded: f64) -> f64 {
    36.0 + cells_visited * 3.0 * SECTOR + tests_per_object * (SECTOR + 16.0) + discarded * 8.0
}

/// The model of one frame of `method` (None for methods not modelled: xy, xyz, min_axis, whose
/// cascades depend on survivors per axis).
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
    let sort = |key_bits: u32| {
        let (_, rounds) = plan(f.n, f.sort_lanes);
        key_bits.div_ceil(8) as f64 * bytes_per_key_per_pass(256 * rounds)
    };
    match method {
        Method::BruteForce => {
            // Each row re-reads the spheres after it: n / 2 per object, from cache mostly.
            add("pairs", 16.0 * n / 2.0);
        }
        Method::Grid => {
            let buckets = (f.n.max(1).next_power_of_two()) as f64 / n;
            add("extents", 16.0);
            // Sphere in; key, value and the stored cell (16: three i32 and a pad) out.
            add("keys", 16.0 + 4.0 + 4.0 + 16.0);
            add(
                "sort",
                sort(f.n.max(2).next_power_of_two().trailing_zeros()),
            );
            // Value in, random sphere in (a sector), sphere out.
            add("gather", 4.0 + SECTOR + 16.0);
            // Keys read, starts cleared and written per bucket.
            add("starts", 4.0 + 8.0 * buckets);
            add("pairs", grid_pairs_bytes(GRID_CELLS_VISITED, tests, 0.0));
        }
        Method::X | Method::Sap | Method::OriginDistance => {
            add("extents", 16.0);
            add("keys", 16.0 + 4.0 + 4.0);
            add("sort", sort(32));
            add("gather", 4.0 + SECTOR + 16.0);
            // Own sphere, key, value; per candidate reached: key, sphere, value (contiguous).
            // For sap a lower bound: its tests are the candidates left after the y/z filter,
            // not all those its x sweep reads.
            add("pairs", 24.0 + tests * 24.0);
        }
        Method::Xy | Method::Xyz | Method::MinAxis => return None,
    }
    if f.store {
        // Appended pairs written, then copied into the readback (read + write).
        add("pair list", 8.0 * f.pairs / n * 3.0);
    }
    Some(out)
}

/// [`sphere_frame`] on `ctx`'s adapter (its sort plan), as (stage, bytes per object).
pub fn sphere_frame_on(
    ctx: &crate::gpu::GpuContext,
    method: Method,
    n: usize,
    tests: f64,
    pairs: f64,
    store: bool,
) -> Option<Vec<(&'static str, f64)>> {
    use crate::gpu::sort::radix_sort::Variant;
    let lanes =
        (Variant::best(ctx) == Variant::Subgroup).then(|| ctx.info.subgroup_min_size.max(4) as u64);
    let shape = FrameShape {
        n: n as u64,
        tests,
        pairs,
        store,
        sort_lanes: lanes,
    };
    sphere_frame(method, &shape).map(|stages| {
        stages
            .into_iter()
            .map(|s| (s.stage, s.bytes_per_object))
            .collect()
    })
}

/// Sum of a model's stages.
pub fn total(stages: &[StageBytes]) -> f64 {
    stages.iter().map(|s| s.bytes_per_object).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_model_at_the_density_million() {
        // Counts of the density scene at n = 1M (258,856 tests, 40,359 pairs), pairs stored,
        // no subgroup sort: by hand, upload 16 + extents 16 + keys 40 + sort 3 passes (20-bit
        // bucket keys) x (20 + 20 x 256 / 1024: rounds 4, the power of two below 10^6 / 2^17)
        // + gather 52 + starts (4 + 8 x 1.048576) + pairs (36 + 14 x 96 +
        // 0.258856 x 48) + pair list (8 x 0.040359 x 3).
        let f = FrameShape {
            n: 1_000_000,
            tests: 258_856.0,
            pairs: 40_359.0,
            store: true,
            sort_lanes: None,
        };
        let stages = sphere_frame(Method::Grid, &f).unwrap();
        let by_hand = 16.0
            + 16.0
            + 40.0
            + 3.0 * 25.0
            + 52.0
            + (4.0 + 8.0 * 1.048576)
            + (36.0 + 1344.0 + 0.258856 * 48.0)
            + 8.0 * 0.040359 * 3.0;
        assert!((total(&stages) - by_hand).abs() < 1e-9, "{stages:?}");
        // The walk over all 27 cells with j > i, as first written: twice the cells, and the
        // other half of the candidates read and skipped.
        let before = grid_pairs_bytes(27.0, 0.258856, 0.258856);
        let after = grid_pairs_bytes(GRID_CELLS_VISITED, 0.258856, 0.0);
        assert!(before > 1.85 * after);
        assert!(sphere_frame(Method::Xyz, &f).is_none());
    }
}
