//! The selftest's many-worlds checks (docs/design.md §2.13): the GPU batch (`GpuWorldBatch`,
//! every method it runs) on batches of worlds overlapping in space with shared objects, and on
//! thousands of worlds of two, against the CPU batch running brute force in each world.

use super::{Checks, Level, SelftestConfig, Stage};
use std::sync::Arc;
use sweepfan::cpu::WorldBatch;
use sweepfan::gpu::{GpuContext, GpuWorldBatch};
use sweepfan::{Method, SHARED, Sphere, WorldPairs};
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// `worlds` paper worlds of `n` (world k from seed `seed + k`, all in one box), their ids
/// interleaved (world k's objects not contiguous), and three shared objects among them.
fn overlapping(worlds: u32, n: usize, seed: u64) -> (Vec<Sphere>, Vec<u32>) {
    let scenes: Vec<Vec<Sphere>> = (0..worlds)
        .map(|k| {
            Scene::generate(SceneKind::Paper, &SceneParams::new(n, seed + u64::from(k))).spheres
        })
        .collect();
    // Round robin: object i of every world, then object i + 1 of every world.
    let (mut interleaved, mut ids) = (Vec::new(), Vec::new());
    for i in 0..n {
        for (k, s) in scenes.iter().enumerate() {
            if let Some(&sphere) = s.get(i) {
                interleaved.push(sphere);
                ids.push(k as u32);
            }
        }
    }
    let shared = [
        Sphere::new(glam::Vec3::new(0.0, -1000.0, 0.0), 955.0),
        Sphere::new(glam::Vec3::new(1000.0, 0.0, 0.0), 955.0),
        Sphere::new(glam::Vec3::new(0.0, 20.0, 0.0), 10.0),
    ];
    for (j, s) in shared.into_iter().enumerate() {
        let at = (j + 1) * interleaved.len() / 4;
        interleaved.insert(at, s);
        ids.insert(at, SHARED);
    }
    (interleaved, ids)
}

/// `worlds` worlds of two unit spheres, every other pair touching.
fn pairs_of_two(worlds: u32) -> (Vec<Sphere>, Vec<u32>) {
    let mut spheres = Vec::new();
    let mut ids = Vec::new();
    for w in 0..worlds {
        let gap = if w % 2 == 0 { 1.5 } else { 2.5 };
        spheres.push(Sphere::new(glam::Vec3::ZERO, 1.0));
        spheres.push(Sphere::new(glam::Vec3::new(gap, 0.0, 0.0), 1.0));
        ids.extend([w, w]);
    }
    (spheres, ids)
}

pub(super) fn world_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    // Small enough for one 64 KiB binding (the batch runs whole: no parts), as every quick
    // sphere check is under `--max-binding-bytes 65536`.
    let mut batches = vec![
        ("overlapping", overlapping(96, 32, cfg.seed)),
        ("worlds-of-two", pairs_of_two(2000)),
    ];
    if cfg.level == Level::Full {
        batches.push(("overlapping-4096x64", overlapping(4096, 64, cfg.seed)));
    }
    for (label, (spheres, ids)) in batches {
        let mut reference = WorldPairs::new();
        let reference = WorldBatch::new(Method::BruteForce)
            .find_pairs(&spheres, &ids, Some(&mut reference))
            .map(|_| reference)
            .map_err(|e| e.to_string());
        for method in sweepfan::Method::ALL {
            let fault = checks.faulty(Stage::Spheres);
            let reference = reference.as_ref();
            let (spheres, ids) = (&spheres, &ids);
            checks.run(
                format!("spheres/worlds-{label}/{}", method.name()),
                spheres.len() as u64,
                || {
                    let mut batch = GpuWorldBatch::new(ctx.clone(), method)?;
                    let mut out = WorldPairs::new();
                    batch.find_pairs(spheres, ids, Some(&mut out))?;
                    Ok(out)
                },
                |got| {
                    let want = match reference {
                        Ok(want) => want,
                        Err(e) => return Ok(Err(format!("CPU reference failed: {e}"))),
                    };
                    let got_pairs = if fault {
                        &got.pairs()[..got.len().saturating_sub(1)]
                    } else {
                        got.pairs()
                    };
                    let worlds = want.worlds().len();
                    Ok(
                        if got_pairs == want.pairs()
                            && got.worlds() == want.worlds()
                            && got.offsets() == want.offsets()
                        {
                            Ok(format!(
                                "{} pairs in {worlds} worlds, grouped, equal to brute force in \
                                 each world on the CPU",
                                want.len()
                            ))
                        } else {
                            let differ = got
                                .iter()
                                .zip(want.iter())
                                .find(|(g, w)| g != w)
                                .map(|((w, _), _)| w);
                            Err(format!(
                                "{} pairs, brute force in each world {}; first world differing: \
                                 {differ:?}",
                                got_pairs.len(),
                                want.len()
                            ))
                        },
                    )
                },
            );
        }
    }
}
