//! The grid's occupancy map (docs/design.md §9.9) against a count made here: the walk looks
//! up exactly the forward neighbour cells that hold an object.

use super::GpuBroadPhase;
use crate::broadphase::{BroadPhase, Diagnostics, Method};
use crate::geom::sphere::Sphere;
use crate::gpu::context::test_gpu;
use crate::test_scenes::{Scene, SceneKind, SceneParams};
use std::collections::HashSet;
use std::sync::Arc;

/// Forward neighbours (the 13 cells after an object's own in (z, y, x) order) that hold an
/// object, summed over the objects: the bucket lookups of a walk whose map holds the box whole
/// (no tile shares a bit). For spheres of radius 1 and no giants: cells of side 2, so a cell is
/// the floor of `c / 2`, exact in f64 (the grid's own cell function is the CPU layer's, which
/// this layer does not name).
fn occupied_forward_neighbours(spheres: &[Sphere]) -> u64 {
    assert!(spheres.iter().all(|s| s.radius == 1.0));
    let cells: Vec<[i64; 3]> = spheres
        .iter()
        .map(|s| {
            s.center
                .to_array()
                .map(|c| (f64::from(c) / 2.0).floor() as i64)
        })
        .collect();
    let occupied: HashSet<[i64; 3]> = cells.iter().copied().collect();
    let mut lookups = 0;
    for c in &cells {
        for dz in 0..2i64 {
            for dy in -1..2i64 {
                for dx in -1..2i64 {
                    let after_own = (dz, dy, dx) > (0, 0, 0);
                    if after_own && occupied.contains(&[c[0] + dx, c[1] + dy, c[2] + dz]) {
                        lookups += 1;
                    }
                }
            }
        }
    }
    lookups
}

/// The density scene at two sizes (keys in tiles; the map, 128 bits a bucket, holds its box
/// whole): the device's lookups are the count above, far fewer than the 13 an object the walk
/// made before the map. (With the map's test taken out of the walk, this fails.)
#[test]
fn the_walk_looks_up_exactly_the_occupied_neighbours() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    for (n, seed) in [(100_000, 7), (30_000, 8)] {
        let scene = Scene::generate(SceneKind::Density, &SceneParams::new(n, seed));
        let mut grid = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
        grid.find_pairs(&scene.spheres, None).unwrap();
        let n = n as f64;
        let device = grid.grid_lookups_per_object.unwrap() * n;
        let want = occupied_forward_neighbours(&scene.spheres) as f64;
        assert!(
            (device - want).abs() < 0.5,
            "{device} lookups, {want} counted"
        );
        assert!(want < 0.5 * n, "{want} lookups for {n} objects");
    }
}

/// A resident frame keeps the lookups it counted as a frame read back to the host does: the
/// traffic model of the same scene is the same either way (it fell back to 13 lookups an
/// object, 3.6x the host frame's model at n = 2,000).
#[test]
fn resident_frames_keep_the_grids_lookups() {
    use crate::gpu::readback::Readback;
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let scene = Scene::generate(SceneKind::Density, &SceneParams::new(20_000, 9));
    let n = scene.spheres.len();
    let mut host = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let stats = host.find_pairs(&scene.spheres, None).unwrap();
    let (tests, pairs) = (stats.tests as f64, stats.pairs as f64);
    let want = host.device_traffic(n, tests, pairs, false).unwrap();

    let mut resident = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let mut enc = resident.encode_resident(&scene.spheres).unwrap();
    let mut rb = Readback::new("resident totals");
    let plan = resident.plan_resident_readback(&mut rb);
    rb.record(&ctx, &mut enc).unwrap();
    ctx.queue().submit([enc.finish()]);
    let totals = rb
        .map(&ctx, |bytes| {
            resident.resident_totals_from(n as u32, bytes, &plan)
        })
        .unwrap()
        .unwrap();
    assert_eq!((totals.tests, totals.pairs), (stats.tests, stats.pairs));
    let got = resident.device_traffic(n, tests, pairs, false).unwrap();
    assert_eq!(got, want);
    let lookups = host.grid_lookups_per_object.unwrap();
    assert!(lookups < 13.0, "{lookups} lookups an object");
}
