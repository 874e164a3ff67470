//! The grid's occupancy map (docs/design.md §9.9) against a count made here: the walk looks
//! up exactly the forward neighbour cells that hold an object which is not a giant.

use super::GpuBroadPhase;
use crate::broadphase::{BroadPhase, Method};
use crate::cpu::grid::GridFrame;
use crate::geom::sphere::Sphere;
use crate::gpu::context::test_gpu;
use crate::scenes::{Scene, SceneKind, SceneParams};
use std::collections::HashSet;
use std::sync::Arc;

/// Forward neighbours (the 13 cells after an object's own in (z, y, x) order) that hold an
/// object that is not a giant, summed over the objects that are not giants: the bucket
/// lookups of a walk whose map holds the box whole (no tile shares a bit).
fn occupied_forward_neighbours(spheres: &[Sphere]) -> u64 {
    let frame = GridFrame::of(spheres);
    let members: Vec<[i64; 3]> = spheres
        .iter()
        .filter(|s| !frame.is_giant(s))
        .map(|s| frame.cell(s.center).map(i64::from))
        .collect();
    let occupied: HashSet<[i64; 3]> = members.iter().copied().collect();
    let mut lookups = 0;
    for c in &members {
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

/// The density scene (keys in tiles; the map, 128 bits for each of 2^17 buckets, holds its
/// box whole) and the giant scene (crowded: most neighbours hold an object): the device's
/// lookups are the count above, and on the density scene far fewer than the 13 an object the
/// walk made before the map.
#[test]
fn the_walk_looks_up_exactly_the_occupied_neighbours() {
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    for kind in [SceneKind::Density, SceneKind::Giant] {
        let scene = Scene::generate(kind, &SceneParams::new(100_000, 7));
        let mut grid = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
        grid.find_pairs(&scene.spheres, None).unwrap();
        let n = scene.len() as f64;
        let device = grid.grid_lookups_per_object.unwrap() * n;
        let want = occupied_forward_neighbours(&scene.spheres) as f64;
        assert!((device - want).abs() < 0.5, "{kind:?}: {device} lookups, {want} counted");
        if kind == SceneKind::Density {
            assert!(want < 0.5 * n, "{want} lookups for {n} objects");
        }
    }
}
