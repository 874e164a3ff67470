//! `bench --worlds W`: a batch of W independent worlds (each its own seeded scene) in one call
//! (`cpu::WorldBatch`, `gpu::GpuWorldBatch`), beside a loop of one call per world with the same
//! method on the same backend, in the same run; each batch's pairs checked world by world
//! against a reference loop (docs/design.md §2.13).

use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;
use sweepfan::broadphase::BroadPhase;
use sweepfan::cpu::WorldBatch;
use sweepfan::error::{Error, Result};
use sweepfan::gpu::GpuWorldBatch;
use sweepfan::{
    Backend, GpuBroadPhase, GpuContext, Method, Pair, Sphere, WorldBroadPhase, WorldPairs,
    canonicalize, cpu, gpu,
};
use sweepfan_scenes::Scene;

/// The batch: every world's spheres one after the other, the world ids beside them, and the
/// worlds as the scenes a loop would call on.
pub struct WorldScenes {
    pub scenes: Vec<Scene>,
    pub spheres: Vec<Sphere>,
    pub worlds: Vec<u32>,
}

impl WorldScenes {
    /// World `k` is `scenes[k]`, with world id `k`.
    pub fn new(scenes: Vec<Scene>) -> Self {
        let spheres = scenes
            .iter()
            .flat_map(|s| s.spheres.iter().copied())
            .collect();
        let worlds = scenes
            .iter()
            .enumerate()
            .flat_map(|(k, s)| std::iter::repeat_n(k as u32, s.len()))
            .collect();
        Self {
            scenes,
            spheres,
            worlds,
        }
    }
}

/// One method's batch beside its loop.
#[derive(Clone, Debug, Serialize)]
pub struct WorldsRow {
    pub method: String,
    pub backend: &'static str,
    /// Where it ran (`run::gpu::device_label`: a software adapter marked so).
    pub device: String,
    /// Calls timed each side (medians over them).
    pub frames: usize,
    pub worlds: usize,
    /// Objects of the batch (all worlds).
    pub n: usize,
    pub pairs: u64,
    /// Median wall time of one batched call.
    pub batch_ms: f64,
    /// Median wall time of the loop of one call per world.
    pub loop_ms: f64,
    /// `loop_ms / batch_ms`.
    pub speedup: f64,
    /// The batch's time per world and step, the figure MuJoCo Warp publishes.
    pub batch_ns_per_world: f64,
    pub loop_ns_per_world: f64,
    /// Whether every world's pairs equal the reference's (`None`: not checked).
    pub verified: Option<bool>,
}

/// The least time each side of a row is run, untimed, before its frames.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(100);

/// Calls `call` until it has run at least once and for at least [`WARM_UP`].
fn warm_up(mut call: impl FnMut() -> Result<()>) -> Result<()> {
    let start = Instant::now();
    loop {
        call()?;
        if start.elapsed() >= WARM_UP {
            return Ok(());
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Worlds up to this many objects are checked against brute force.
const WORLD_BRUTE_FORCE_MAX: usize = 2048;
/// A larger world whose two references disagree is decided by brute force up to this many
/// objects (about 1.25e9 tests); past it the check fails, naming the disagreement.
const WORLD_BRUTE_FORCE_TIEBREAK_MAX: usize = 50_000;

/// What the references of [`world_pairs`] are, in words.
pub const WORLD_REFERENCE: &str = "brute force per world (past 2,048 objects: the two cheapest CPU \
     methods, which must agree)";

/// The canonical pairs of one world's spheres, found independently of any batch: brute force
/// up to 2,048 objects (`WORLD_BRUTE_FORCE_MAX`); above, the two CPU methods `auto`'s prices rank
/// cheapest on it, which must find the same pairs (one method alone could be the method under
/// check: the CPU grid once missed a giant's pairs and verified against itself), brute force
/// deciding where they do not.
pub fn world_pairs(local: &[Sphere]) -> Result<Vec<Pair>> {
    let mut pairs = Vec::new();
    if local.len() < 2 {
        return Ok(pairs);
    }
    let run = |method: Method, out: &mut Vec<Pair>| -> Result<()> {
        cpu::broad_phase(method).find_pairs(local, Some(&mut *out))?;
        canonicalize(out);
        Ok(())
    };
    if local.len() <= WORLD_BRUTE_FORCE_MAX {
        run(Method::BruteForce, &mut pairs)?;
        return Ok(pairs);
    }
    let cheapest: Vec<Method> = crate::run::bench::cpu_methods_by_price(local)
        .into_iter()
        .filter(|&m| m != Method::BruteForce)
        .take(2)
        .collect();
    let mut second = Vec::new();
    run(cheapest[0], &mut pairs)?;
    run(cheapest[1], &mut second)?;
    if pairs != second {
        if local.len() > WORLD_BRUTE_FORCE_TIEBREAK_MAX {
            return Err(Error::Config(format!(
                "the references disagree on a world of {} objects: {} finds {} pairs, {} {} \
                 (a bug in one of them: please report it with the scene)",
                local.len(),
                cheapest[0],
                pairs.len(),
                cheapest[1],
                second.len()
            )));
        }
        run(Method::BruteForce, &mut pairs)?;
    }
    Ok(pairs)
}

/// The reference loop's pairs, world by world ([`world_pairs`]), in batch indices.
fn reference(batch: &WorldScenes) -> Result<Vec<Vec<Pair>>> {
    let mut out = Vec::with_capacity(batch.scenes.len());
    let mut offset = 0u32;
    for s in &batch.scenes {
        let pairs = world_pairs(&s.spheres)?;
        out.push(
            pairs
                .iter()
                .map(|p| [p[0] + offset, p[1] + offset])
                .collect(),
        );
        offset += s.len() as u32;
    }
    Ok(out)
}

/// The batch of `name` (`auto` or a method's name) on `backend` (the GPU's on `ctx`).
pub fn world_batch(
    name: &str,
    backend: Backend,
    ctx: Option<&Arc<GpuContext>>,
) -> Result<Box<dyn WorldBroadPhase>> {
    let method = (name != "auto").then(|| Method::parse(name)).transpose()?;
    Ok(match (backend, ctx) {
        (Backend::Gpu, Some(ctx)) => Box::new(match method {
            None => GpuWorldBatch::auto(ctx.clone())?,
            Some(m) => GpuWorldBatch::new(ctx.clone(), m)?,
        }),
        (Backend::Gpu, None) => {
            return Err(Error::Config("the GPU rows need a GPU context".into()));
        }
        _ => match method {
            None => Box::new(WorldBatch::auto()),
            Some(m) => Box::new(WorldBatch::new(m)),
        },
    })
}

/// The batched and the looped broad phase of `name` on `backend`.
#[allow(clippy::type_complexity)]
fn pair_of(
    name: &str,
    backend: Backend,
    ctx: Option<&Arc<GpuContext>>,
) -> Result<(Box<dyn WorldBroadPhase>, Box<dyn BroadPhase + Send>)> {
    let batched = world_batch(name, backend, ctx)?;
    let method = (name != "auto").then(|| Method::parse(name)).transpose()?;
    let single: Box<dyn BroadPhase + Send> = match (backend, ctx, method) {
        (Backend::Gpu, Some(ctx), None) => Box::new(gpu::auto(ctx.clone())),
        (Backend::Gpu, Some(ctx), Some(m)) => Box::new(GpuBroadPhase::new(ctx.clone(), m)?),
        (_, _, None) => Box::new(cpu::auto()),
        (_, _, Some(m)) => cpu::broad_phase(m),
    };
    Ok((batched, single))
}

/// Times `methods` (`auto` or a method's name) batched and looped over `frames` calls each,
/// on each of `backends` (the GPU's on `ctx`); with `verify`, checks each batch's pairs against
/// the reference loop. Returns the rows.
pub fn bench_worlds(
    batch: &WorldScenes,
    methods: &[String],
    backends: &[Backend],
    ctx: Option<Arc<GpuContext>>,
    frames: usize,
    verify: bool,
) -> Result<Vec<WorldsRow>> {
    let expected = if verify {
        Some(reference(batch)?)
    } else {
        None
    };
    let mut rows = Vec::new();
    for (name, &backend) in methods
        .iter()
        .flat_map(|m| backends.iter().map(move |b| (m, b)))
    {
        let (mut batched, mut single) = pair_of(name, backend, ctx.as_ref())?;
        let mut out = WorldPairs::new();
        let mut pairs = Vec::new();
        let mut run_loop = |pairs: &mut Vec<Pair>| -> Result<u64> {
            let mut looped = 0;
            for s in &batch.scenes {
                if s.spheres.len() >= 2 {
                    looped += single.find_pairs(&s.spheres, Some(&mut *pairs))?.pairs;
                }
            }
            Ok(looped)
        };
        // Each side warmed up by untimed calls for at least WARM_UP (buffers grown, and the
        // pool's threads awake: after the loop's single thread ran alone, the first batches
        // of a row took up to twice their steady time on the 2-core VM), then its frames back
        // to back, as a simulation calls one of them every step.
        let mut found = 0;
        warm_up(|| {
            found = batched
                .find_pairs(&batch.spheres, &batch.worlds, Some(&mut out))?
                .pairs;
            Ok(())
        })?;
        crate::run::check_frames(frames)?;
        let mut batch_s = Vec::new();
        for _ in 0..frames {
            crate::run::stop_if_interrupted()?;
            let start = Instant::now();
            let again = batched
                .find_pairs(&batch.spheres, &batch.worlds, Some(&mut out))?
                .pairs;
            batch_s.push(start.elapsed().as_secs_f64());
            if again != found {
                return Err(Error::Config(format!(
                    "{name}: the batch found {found} pairs, then {again}"
                )));
            }
        }
        let mut looped = 0;
        warm_up(|| {
            looped = run_loop(&mut pairs)?;
            Ok(())
        })?;
        if looped != found {
            return Err(Error::Config(format!(
                "{name}: the batch found {found} pairs, the loop {looped}"
            )));
        }
        let mut loop_s = Vec::new();
        for _ in 0..frames {
            crate::run::stop_if_interrupted()?;
            let start = Instant::now();
            run_loop(&mut pairs)?;
            loop_s.push(start.elapsed().as_secs_f64());
        }
        let verified = expected.as_ref().map(|e| {
            out.worlds().len() == e.len()
                && out
                    .iter()
                    .all(|(w, p)| e.get(w as usize).is_some_and(|x| x.as_slice() == p))
        });
        let (b, l) = (median(batch_s), median(loop_s));
        let worlds = batch.scenes.len();
        rows.push(WorldsRow {
            method: name.clone(),
            backend: if backend == Backend::Gpu {
                "gpu"
            } else {
                "cpu"
            },
            device: match (backend, &ctx) {
                (Backend::Gpu, Some(ctx)) => crate::run::gpu::device_label(ctx),
                _ => crate::run::row::cpu_device(),
            },
            frames,
            worlds,
            n: batch.spheres.len(),
            pairs: found,
            batch_ms: b * 1e3,
            loop_ms: l * 1e3,
            speedup: l / b,
            batch_ns_per_world: b * 1e9 / worlds as f64,
            loop_ns_per_world: l * 1e9 / worlds as f64,
            verified,
        });
    }
    Ok(rows)
}

/// The rows as a table.
pub fn worlds_table(rows: &[WorldsRow]) -> String {
    let mut t = format!(
        "{:<15} {:>7} {:>7} {:>9} {:>10} {:>10} {:>10} {:>8} {:>12} {:>9}\n",
        "method",
        "backend",
        "worlds",
        "objects",
        "pairs",
        "batch ms",
        "loop ms",
        "speedup",
        "ns/world",
        "verified"
    );
    for r in rows {
        t += &format!(
            "{:<15} {:>7} {:>7} {:>9} {:>10} {:>10.3} {:>10.3} {:>7.2}x {:>12.0} {:>9}\n",
            r.method,
            r.backend,
            r.worlds,
            r.n,
            r.pairs,
            r.batch_ms,
            r.loop_ms,
            r.speedup,
            r.batch_ns_per_world,
            match r.verified {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        );
    }
    t + &crate::run::row::device_lines(rows.iter().map(|r| (r.backend, r.device.as_str())))
}

/// Most tests of a world's objects against the shared ones that [`world_reference`] makes one
/// by one (beyond, one run over both).
const CROSS_TESTED_MAX: usize = 1 << 22;

/// A batch's pairs world by world, found independently of the batches: the objects grouped
/// here, each world (with the shared objects) run through [`world_pairs`], the shared
/// objects' own pairs once as world `SHARED` (a world's pairs with the shared objects tested
/// one by one where they are few, `CROSS_TESTED_MAX`). Ascending worlds,
/// `SHARED` last when there are shared objects; canonical pairs in batch indices.
pub fn world_reference(spheres: &[Sphere], worlds: &[u32]) -> Result<Vec<(u32, Vec<Pair>)>> {
    use std::collections::BTreeMap;
    let mut members: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, &w) in worlds.iter().enumerate() {
        members.entry(w).or_default().push(i as u32);
    }
    let shared = members.remove(&sweepfan::SHARED).unwrap_or_default();
    let run = |ids: &[u32]| -> Result<Vec<Pair>> {
        let local: Vec<Sphere> = ids.iter().map(|&i| spheres[i as usize]).collect();
        let pairs = world_pairs(&local)?;
        let mut global: Vec<Pair> = pairs
            .iter()
            .map(|p| {
                let (a, b) = (ids[p[0] as usize], ids[p[1] as usize]);
                [a.min(b), a.max(b)]
            })
            .collect();
        canonicalize(&mut global);
        Ok(global)
    };
    let is_shared = |i: u32| worlds[i as usize] == sweepfan::SHARED;
    let mut out = Vec::with_capacity(members.len() + 1);
    for (w, own) in members {
        crate::run::stop_if_interrupted()?;
        // A world's own pairs, then its pairs with the shared objects: every one tested where
        // that is few tests, else a run over both whose shared pairs are dropped. (Every
        // world once ran with the shared objects and dropped their pairs: 500 shared spheres
        // touching one another kept 1 MB of dropped pairs a world, 3.9 GB over 4,000 worlds.)
        let pairs = if own.len().saturating_mul(shared.len()) <= CROSS_TESTED_MAX {
            let mut pairs = run(&own)?;
            for &i in &own {
                for &j in &shared {
                    if spheres[i as usize].touches(&spheres[j as usize]) {
                        pairs.push([i.min(j), i.max(j)]);
                    }
                }
            }
            canonicalize(&mut pairs);
            pairs
        } else {
            let ids: Vec<u32> = own.iter().chain(&shared).copied().collect();
            let mut pairs = run(&ids)?;
            pairs.retain(|p| !(is_shared(p[0]) && is_shared(p[1])));
            pairs.shrink_to_fit();
            pairs
        };
        out.push((w, pairs));
    }
    if !shared.is_empty() {
        out.push((sweepfan::SHARED, run(&shared)?));
    }
    Ok(out)
}

/// Where a batch's grouped pairs break the grouping: a pair under a world that is not its own
/// (its non-shared object's; `SHARED` when both are shared), or a world's pairs not strictly
/// ascending. The first few, in words; empty when the grouping holds.
pub fn grouping_faults(found: &WorldPairs, worlds: &[u32]) -> Vec<String> {
    let mut faults = Vec::new();
    for (w, pairs) in found.iter() {
        for (k, p) in pairs.iter().enumerate() {
            let (a, b) = (worlds[p[0] as usize], worlds[p[1] as usize]);
            let own = if a == sweepfan::SHARED { b } else { a };
            if own != w {
                faults.push(format!(
                    "pair ({},{}) of world {own} under world {w}",
                    p[0], p[1]
                ));
            }
            if k > 0 && pairs[k - 1] >= *p {
                faults.push(format!(
                    "world {w}'s pairs not ascending at ({},{})",
                    p[0], p[1]
                ));
            }
            if faults.len() >= 5 {
                return faults;
            }
        }
    }
    faults
}
