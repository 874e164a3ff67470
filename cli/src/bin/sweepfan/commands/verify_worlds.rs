//! `sweepfan verify` on a sphere file with a world column (`x,y,z,r,world`): the file is one
//! batch of worlds (docs/design.md §2.13), run by the method's batch on the backend, its pairs
//! written as CSV `world,i,j` (the shared objects' own pairs under `shared`, as the scene file names them) and checked world by world against
//! a reference that groups the objects itself.

use super::verify::VerifyArgs;
use anyhow::{Result, bail};
use std::path::Path;
use sweepfan::events::WorldEventTracker;
use sweepfan::{Backend, Pair, Sphere, WorldBroadPhase, WorldPairs, canonicalize};
use sweepfan_cli::report::output::write_with;
use sweepfan_cli::run::gpu::LazyGpu;
use sweepfan_cli::run::verify::compare_pairs;
use sweepfan_cli::run::worlds_bench::{
    WORLD_REFERENCE, grouping_faults, world_batch, world_reference,
};
use sweepfan_scenes::files::read_world_spheres_csv;

/// Verifies the batch of `a.scene_file`, read as `(spheres, worlds)` (and, given, of
/// `a.next_scene_file` with the events between the two); whether every check passed.
pub fn exec(
    a: &VerifyArgs,
    (spheres, worlds): (Vec<Sphere>, Vec<u32>),
    gpu: &mut LazyGpu,
) -> Result<bool> {
    if a.contacts_out.is_some() {
        bail!(
            "--contacts-out: not with a world column yet (a pair's contact does not depend on \
             its world: verify the file without the column for contacts)"
        );
    }
    let backend = a.backend.0;
    let ctx = match backend {
        Backend::Gpu => Some(gpu.get()?),
        Backend::Cpu => None,
    };
    let method = a.method();
    let mut batch = world_batch(method, backend, ctx.as_ref())?;
    // The next frame read and checked before anything is written.
    let next = match (&a.next_scene_file, &a.found_out, &a.lost_out) {
        (Some(next_file), Some(found_out), Some(lost_out)) => {
            let (next, next_worlds) = read_world_spheres_csv(next_file)?;
            if next.len() != spheres.len() {
                bail!(
                    "--next-scene-file {}: {} spheres, but --scene-file has {}: the two frames \
                     must list the same spheres in the same order",
                    next_file.display(),
                    next.len(),
                    spheres.len()
                );
            }
            Some((next_file, found_out, lost_out, next, next_worlds))
        }
        _ => None,
    };
    let mut found = WorldPairs::new();
    let mut ok = frame(
        a,
        batch.as_mut(),
        &spheres,
        &worlds,
        &mut found,
        Some(&a.pairs_out),
    )?;
    if let Some((next_file, found_out, lost_out, next, next_worlds)) = next {
        say!(
            a.stdout_taken(),
            "next frame ({}):",
            sweepfan_scenes::files::input_name(next_file).display()
        );
        let mut tracker = WorldEventTracker::new();
        tracker.update(&found);
        let mut next_found = WorldPairs::new();
        ok &= frame(
            a,
            batch.as_mut(),
            &next,
            &next_worlds,
            &mut next_found,
            None,
        )?;
        let events = tracker.update(&next_found);
        write_world_pairs(found_out, &events.found)?;
        write_world_pairs(lost_out, &events.lost)?;
        super::verify::say_events(
            a.stdout_taken(),
            (events.found.len(), found_out),
            (events.lost.len(), lost_out),
            events.persisting,
        );
    }
    Ok(ok)
}

/// The worlds of a reference in words: its own worlds (the shared objects are none), and the
/// shared objects where there are some.
fn worlds_named(reference: &[(u32, Vec<Pair>)]) -> String {
    let own = reference
        .iter()
        .filter(|(w, _)| *w != sweepfan::SHARED)
        .count();
    let shared = if own < reference.len() {
        " and shared objects"
    } else {
        ""
    };
    match own {
        1 => format!("1 world{shared}"),
        n => format!("{n} worlds{shared}"),
    }
}

/// One batch: its pairs into `found` (written to `written` when given), compared with the
/// reference's and its grouping checked, the result said; whether it verified.
fn frame(
    a: &VerifyArgs,
    batch: &mut dyn WorldBroadPhase,
    spheres: &[Sphere],
    worlds: &[u32],
    found: &mut WorldPairs,
    written: Option<&Path>,
) -> Result<bool> {
    let stats = batch.find_pairs(spheres, worlds, Some(found))?;
    if let Some(path) = written {
        write_world_pairs(path, found)?;
    }
    let reference = world_reference(spheres, worlds)?;
    let taken = a.stdout_taken();
    say!(
        taken,
        "{} [{}]: {}, {} pairs ({} tests){}; {WORLD_REFERENCE} [cpu]: {} pairs",
        batch.name(),
        batch.backend().as_str(),
        worlds_named(&reference),
        found.len(),
        stats.tests,
        written.map_or(String::new(), |p| format!(" written to {}", p.display())),
        reference.iter().map(|(_, p)| p.len()).sum::<usize>()
    );
    let flat = |pairs: &mut Vec<Pair>| canonicalize(pairs);
    let mut expected: Vec<Pair> = reference.iter().flat_map(|(_, p)| p.clone()).collect();
    let mut candidate = found.pairs().to_vec();
    flat(&mut expected);
    flat(&mut candidate);
    let cmp = compare_pairs(spheres, &expected, &candidate);
    for p in &cmp.near_touching {
        say!(
            taken,
            "differs within 1e-5 of touching (a failure, the touch is exact): {},{}",
            p[0],
            p[1]
        );
    }
    let reference_worlds: Vec<u32> = reference.iter().map(|(w, _)| *w).collect();
    let mut faults = grouping_faults(found, worlds);
    if found.worlds() != reference_worlds.as_slice() {
        faults.push(format!(
            "{} worlds listed, {} in the file",
            found.worlds().len(),
            reference_worlds.len()
        ));
    }
    let mismatch = match (cmp.is_ok(), faults.is_empty()) {
        (true, true) => None,
        (false, _) => Some(cmp.summary()),
        (true, false) => Some(faults.join("; ")),
    };
    match &mismatch {
        None => say!(
            taken,
            "verified: same pairs as the reference, grouped by world"
        ),
        Some(why) => say!(taken, "MISMATCH against the reference: {why}"),
    }
    Ok(mismatch.is_none())
}

/// Writes grouped pairs as CSV `world,i,j`.
fn write_world_pairs(path: &Path, pairs: &WorldPairs) -> Result<()> {
    write_with(path, |w| {
        writeln!(w, "world,i,j")?;
        for (world, list) in pairs.iter() {
            // The scene file's word for SHARED, which its reader refuses as a number.
            let world = if world == sweepfan::SHARED {
                "shared".to_string()
            } else {
                world.to_string()
            };
            for p in list {
                writeln!(w, "{world},{},{}", p[0], p[1])?;
            }
        }
        Ok(())
    })?;
    Ok(())
}
