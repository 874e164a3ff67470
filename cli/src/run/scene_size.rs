//! A generated scene's parameters and a run's size, checked before anything is allocated
//! (docs/design.md §9.14): the parameters' ranges, the objects the library accepts, and the host
//! memory a run needs, whole or in parts (§2.10), with refusals whose hints name a count that
//! runs.

use sweepfan::broadphase::Backend;
use sweepfan::broadphase::limits::{
    HOST_BYTES_PER_OBJECT, check_scene_size, check_scene_size_with,
};
use sweepfan::error::{Error, Result};
use sweepfan::geom::sphere::Sphere;
use sweepfan_scenes::{SceneKind, SceneParams};

/// Parameters of a generated scene from the CLI's numbers (the generator's defaults where `None`),
/// with their ranges checked, and the scene's size against memory at `host_bytes_per_object` ([`HOST_BYTES_PER_OBJECT`], or
/// [`GPU_ONLY_HOST_BYTES_PER_OBJECT`] for a GPU run that verifies nothing).
pub fn scene_params(
    n: usize,
    seed: u64,
    volume_fraction: Option<f32>,
    radius: Option<f32>,
    host_bytes_per_object: u64,
) -> Result<SceneParams> {
    let mut p = SceneParams::new(n, seed);
    let volume_fraction = volume_fraction.unwrap_or(p.volume_fraction);
    let radius = radius.unwrap_or(p.radius);
    let max = sweepfan_scenes::MAX_VOLUME_FRACTION;
    if !(volume_fraction > 0.0 && volume_fraction < max) {
        return Err(Error::Config(format!(
            "--volume-fraction must be in (0, {max}), got {volume_fraction}"
        )));
    }
    if !(radius.is_finite() && radius > 0.0) {
        return Err(Error::Config(format!(
            "--radius must be positive and finite, got {radius}"
        )));
    }
    check_scene_size_with(n, host_bytes_per_object)?;
    p.volume_fraction = volume_fraction;
    p.radius = radius;
    Ok(p)
}

/// Refuses the objects `first..first + spheres.len()` of a generated scene (all of it, or one
/// rank's range under `dist`) when the parameters place one outside what the library accepts,
/// naming the parameters and the object by its index in the whole scene (`--radius 1e30` blamed
/// "brute_force object 0" before, and `dist`'s ranks their own object 0).
pub fn check_generated(
    kind: SceneKind,
    p: &SceneParams,
    spheres: &[Sphere],
    first: usize,
) -> Result<()> {
    // A rank's share may be empty (more ranks than objects): nothing in it is wrong.
    if spheres.is_empty() || sweepfan::validate_spheres(spheres).is_ok() {
        return Ok(());
    }
    refuse_generated(kind, p, spheres, first)
}

/// [`check_generated`] for any objects of a generated scene (the boxes placed like its
/// spheres), all of them.
pub fn check_generated_with<T: sweepfan::Validate>(
    kind: SceneKind,
    p: &SceneParams,
    objects: &[T],
) -> Result<()> {
    if objects
        .iter()
        .enumerate()
        .all(|(k, o)| sweepfan::Validate::check(o, k).is_ok())
    {
        return Ok(());
    }
    refuse_generated(kind, p, objects, 0)
}

/// The refusal of [`check_generated`]: the parameters and the first object refused.
fn refuse_generated<T: sweepfan::Validate>(
    kind: SceneKind,
    p: &SceneParams,
    objects: &[T],
    first: usize,
) -> Result<()> {
    let problem = objects
        .iter()
        .enumerate()
        .find_map(|(k, s)| sweepfan::Validate::check(s, first + k).err())
        .map_or_else(String::new, |e| e.to_string());
    Err(Error::Config(format!(
        "the {} scene with --n {} --radius {:?} --volume-fraction {:?} places objects outside \
         what the library accepts ({problem}); use a smaller --radius or --n",
        kind.name(),
        p.n,
        p.radius,
        p.volume_fraction
    )))
}

/// Host bytes per object of a run on the GPU alone that verifies nothing: the scene (28 B), the
/// partitioned frame's order (4 B) and sort keys (8 B), a part's copy and its pairs
/// (docs/design.md §2.10): 62 B measured (the growth of the peak RSS from 2M to 8M spheres),
/// with room to spare: 10^9 spheres need 72 GB.
pub const GPU_ONLY_HOST_BYTES_PER_OBJECT: u64 = 72;

/// Host bytes per object of a CPU run in parts: the scene (28 B), the partition's order and
/// sort keys (12 B), the pairs, a part's copy and the ghost lists, with room to spare
/// (docs/design.md §2.10).
pub const CPU_PARTS_HOST_BYTES_PER_OBJECT: u64 = 64;

/// Refuses a run of `n` objects on `backends` (verifying or not) that host memory cannot hold,
/// before anything is allocated; else the CPU's part size ([`cpu_part_size`]). The GPU's own
/// run ([`GPU_ONLY_HOST_BYTES_PER_OBJECT`]) is checked first: where both run, the count its
/// refusal names as fitting also fits the CPU's run in parts, so a retry at the hinted count
/// passes.
pub fn check_run_size(n: usize, backends: &[Backend], verify: bool) -> Result<Option<usize>> {
    if backends.contains(&Backend::Gpu) {
        check_scene_size_with(n, GPU_ONLY_HOST_BYTES_PER_OBJECT)?;
    }
    let gpu_only = !verify && backends == [Backend::Gpu];
    if gpu_only { Ok(None) } else { cpu_part_size(n) }
}

/// The smallest part the CPU runs a scene in (objects): below it, parts cost more than they save.
pub const CPU_MIN_PART: usize = 4096;

/// How the CPU runs a scene of `n`: whole (`None`) where [`check_scene_size`] passes, else in
/// parts of the returned size where the scene itself fits ([`CPU_PARTS_HOST_BYTES_PER_OBJECT`])
/// and the memory left holds parts of at least [`CPU_MIN_PART`] objects; else the refusal, whose
/// hint is [`cpu_objects_that_fit`]: the count a retry may ask for.
pub fn cpu_part_size(n: usize) -> Result<Option<usize>> {
    let whole = check_scene_size(n);
    let Err(Error::TooLarge { .. }) = whole else {
        return whole.map(|()| None);
    };
    match sweepfan::broadphase::limits::available() {
        Some(a) => cpu_part_size_within(n, &a),
        None => whole.map(|()| None),
    }
}

/// [`cpu_part_size`] for a scene too large to run whole in `available`.
fn cpu_part_size_within(
    n: usize,
    available: &sweepfan::broadphase::limits::Available,
) -> Result<Option<usize>> {
    let usable = available.usable();
    let scene = (n as u64).saturating_mul(CPU_PARTS_HOST_BYTES_PER_OBJECT);
    let part = usable.saturating_sub(scene) / HOST_BYTES_PER_OBJECT;
    if part >= CPU_MIN_PART as u64 {
        return Ok(Some(part as usize));
    }
    let needed = scene.saturating_add(CPU_MIN_PART as u64 * HOST_BYTES_PER_OBJECT);
    Err(sweepfan::broadphase::limits::too_large(
        &format!("a scene of {n} objects"),
        needed,
        available,
        &format!(
            "use a smaller n (about {} objects fit)",
            cpu_objects_that_fit(available.hinted())
        ),
    ))
}

/// The most objects a CPU run (whole or in parts, [`cpu_part_size`]) takes in `usable` bytes.
pub fn cpu_objects_that_fit(usable: u64) -> u64 {
    let whole = usable / HOST_BYTES_PER_OBJECT;
    let in_parts = usable.saturating_sub(CPU_MIN_PART as u64 * HOST_BYTES_PER_OBJECT)
        / CPU_PARTS_HOST_BYTES_PER_OBJECT;
    whole.max(in_parts).min(u32::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepfan_scenes::Scene;

    /// The count a refusal names as fitting is one a run with 1% less memory still takes
    /// (whole where a frame fits, in parts where only the scene does), and not more than 2% of
    /// the memory below what fits: the hint once counted 64 B an object while the run needed 256.
    #[test]
    fn the_count_a_refusal_names_fits() {
        use sweepfan::broadphase::limits::{Available, Limit};
        let with = |bytes: u64| Available {
            bytes,
            limit: Limit::MemAvailable,
        };
        let runs = |n: u64, a: &Available| {
            n * HOST_BYTES_PER_OBJECT <= a.usable() || cpu_part_size_within(n as usize, a).is_ok()
        };
        for bytes in [2u64 << 20, 8 << 20, 1 << 30, 3 << 30, 24 << 30, 96 << 30] {
            let a = with(bytes);
            let refusal = cpu_part_size_within(u32::MAX as usize, &a)
                .unwrap_err()
                .to_string();
            let named: u64 = refusal
                .split("about ")
                .last()
                .and_then(|t| t.split(' ').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("no count in {refusal}"));
            assert!(runs(named, &with(bytes - bytes / 100)), "{refusal}");
            let spare = a.usable() / 50 / CPU_PARTS_HOST_BYTES_PER_OBJECT;
            assert!(!runs(named + spare + 1, &a), "{refusal}");
        }
    }

    /// A generated range's bad object is named by its index in the whole scene, with the
    /// parameters that placed it.
    #[test]
    fn a_generated_range_names_objects_by_their_index_in_the_scene() {
        let mut p = SceneParams::new(1000, 1);
        p.radius = 1e17;
        let whole = Scene::generate(SceneKind::LineX, &p);
        let range = 600..700;
        let part = &whole.spheres[range.clone()];
        let e = check_generated(SceneKind::LineX, &p, part, range.start)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("object 600:") && e.contains("--radius 1e17"),
            "{e}"
        );
        p.radius = 1.0;
        let fine = Scene::generate(SceneKind::LineX, &p);
        assert!(check_generated(SceneKind::LineX, &p, &fine.spheres[range], 600).is_ok());
    }
}
