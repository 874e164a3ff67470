//! Scene checks: sphere broad phases, the box and polygon pipeline, the sector accuracy
//! histograms and the rotating scene, each on the GPU against the CPU.

use super::{BRUTE_FORCE_MAX_N, Checks, Level, SelftestConfig, Stage};
use crate::experiments::sector::accuracy::{ROUNDING_BAND, differing_points};
use crate::experiments::sector::rotating::compare_hits;
use crate::run::verify::compare_pairs;
use crate::run::verify_shapes::Shapes;
use std::sync::Arc;
use sweepfan::broadphase::{BroadPhase, Method, Pair, canonicalize};
use sweepfan::cpu::cpu_histograms;
use sweepfan::cpu::pose_histograms as free_cpu_histograms;
use sweepfan::cpu::rotating_frame_cpu;
use sweepfan::error::Result;
use sweepfan::geom::sector::Proxy as SectorProxy;
use sweepfan::geom::sector::classify::{GRID_POINTS, Histogram};
use sweepfan::geom::sector::free_classify::free_rotations;
use sweepfan::geom::sphere::Sphere;
use sweepfan::gpu::FreeExperimentGpu;
use sweepfan::gpu::RotatingGpu;
use sweepfan::gpu::SectorExperimentGpu;
use sweepfan::gpu::{GpuBoxPipeline, GpuBroadPhase, GpuContext, Proxy};
use sweepfan_scenes::boxes::{
    generate_boxes, generate_polygons, near_touching_pairs, needle_boxes,
};
use sweepfan_scenes::free_bodies::{BodyKind, random_free_rotations};
use sweepfan_scenes::random::random_rotations;
use sweepfan_scenes::rotating::{RotatingParams, RotatingScene};
use sweepfan_scenes::walls::grid_cell_walls;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

fn spheres(kind: SceneKind, n: usize, seed: u64) -> Vec<Sphere> {
    Scene::generate(kind, &SceneParams::new(n, seed)).spheres
}

/// A flat layer (100 x 50 x 0.01) of `n` spheres with 1% of them far above it: sap's sweep axis
/// from the sample's deciles (docs/design.md §2.6), the device's against the CPU's (their
/// tests must agree), where the centres' range would choose z.
fn far_layer(n: usize, seed: u64) -> Vec<Sphere> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let z = if i % 100 == 7 {
                1e6
            } else {
                rng.random_range(0.0..0.01)
            };
            let c = glam::Vec3::new(rng.random_range(0.0..100.0), rng.random_range(0.0..50.0), z);
            Sphere::new(c, 0.05)
        })
        .collect()
}

/// The CPU pairs every method must find: brute force up to [`BRUTE_FORCE_MAX_N`], the grid
/// above.
fn reference_pairs(v: &[Sphere]) -> Result<(&'static str, Vec<Pair>)> {
    let method = if v.len() <= BRUTE_FORCE_MAX_N {
        Method::BruteForce
    } else {
        Method::Grid
    };
    let mut pairs = Vec::new();
    sweepfan::cpu::broad_phase(method).find_pairs(v, Some(&mut pairs))?;
    canonicalize(&mut pairs);
    Ok((method.name(), pairs))
}

pub(super) fn sphere_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    // Named scenes first, then the grid's cell walls (exact cells, docs/design.md §9.2).
    let walls = grid_cell_walls(4000);
    let mut scenes: Vec<(SceneKind, usize, &[Method])> = vec![
        (SceneKind::Paper, 5_000, &Method::ALL),
        (SceneKind::Density, 20_000, &Method::ALL),
        (SceneKind::Clusters, 3_000, &Method::ALL),
        (SceneKind::Giant, 2_000, &Method::ALL),
        (SceneKind::OnePoint, 1_000, &Method::ALL),
        (SceneKind::LineX, 2_000, &Method::ALL),
        (SceneKind::MixedRadii, 3_000, &Method::ALL),
        (SceneKind::Wide, 3_000, &Method::ALL),
    ];
    if cfg.level == Level::Full {
        // Past the old 2^20-cell clamp, and one giant among 200,000 (docs/design.md §2.7).
        scenes.push((SceneKind::Wide, 1 << 20, &[Method::Grid, Method::Sap]));
        scenes.push((SceneKind::Giant, 200_000, &[Method::Grid]));
        // The methods whose work grows as n log n at fixed density (x's single-axis sweep
        // grows as n^2: 29 billion tests at 4M, minutes even on a large GPU and its CPU check).
        let large: &[Method] = &[Method::Grid, Method::Sap];
        let max_n = (ctx.max_binding_bytes() / 16) as usize;
        for n in [1 << 20, 1 << 22, 1 << 24] {
            if n <= max_n {
                scenes.push((SceneKind::Density, n, large));
            }
        }
    }
    let mut gpu: Vec<(Method, Result<GpuBroadPhase>)> = Method::ALL
        .iter()
        .map(|&m| (m, GpuBroadPhase::new(ctx.clone(), m)))
        .collect();
    let mut sets: Vec<(&str, Vec<Sphere>, &[Method])> = scenes
        .iter()
        .enumerate()
        .map(|(s, &(kind, n, methods))| {
            (kind.name(), spheres(kind, n, cfg.seed + s as u64), methods)
        })
        .collect();
    sets.insert(1, ("cell-walls", walls, &[Method::Grid, Method::Sap]));
    sets.insert(
        2,
        (
            "far-layer",
            far_layer(8_000, cfg.seed),
            &[Method::Sap, Method::Grid],
        ),
    );
    for (scene, v, methods) in sets {
        let n = v.len();
        let reference = reference_pairs(&v);
        for (method, bp) in gpu.iter_mut().filter(|(m, _)| methods.contains(m)) {
            let name = format!("spheres/{scene}/{}", method.name());
            let fault = checks.faulty(Stage::Spheres);
            let reference = reference.as_ref().map_err(|e| e.to_string());
            checks.run(
                name,
                n as u64,
                || {
                    let bp = bp.as_mut().map_err(again)?;
                    let mut pairs = Vec::new();
                    let stats = bp.find_pairs(&v, Some(&mut pairs))?;
                    Ok((stats, pairs, bp.diagnostics().and_then(|d| d.parts())))
                },
                |(stats, mut pairs, parts)| {
                    let (reference_name, want) = match reference {
                        Ok((name, want)) => (*name, want),
                        Err(e) => return Ok(Err(format!("CPU reference failed: {e}"))),
                    };
                    if fault {
                        pairs.pop();
                    }
                    canonicalize(&mut pairs);
                    let cpu = sweepfan::cpu::broad_phase(*method).find_pairs(&v, None)?;
                    Ok(judge_spheres(
                        &v,
                        reference_name,
                        want,
                        &pairs,
                        (stats.tests, cpu.tests),
                        parts,
                    ))
                },
            );
        }
    }
}

/// A stage's construction error, given again to each check that needed the stage: a size
/// limit stays one (so a limit set for the run marks the check not run), anything else is the
/// GPU's.
fn again(e: &mut sweepfan::error::Error) -> sweepfan::error::Error {
    match e {
        sweepfan::error::Error::TooLarge { exceeds, message } => {
            sweepfan::error::Error::too_large(*exceeds, message.clone())
        }
        other => sweepfan::error::Error::gpu(sweepfan::GpuFailure::Internal, other.to_string()),
    }
}

/// Pairs must equal the reference's exactly (the touch is exact on every device, even where a
/// driver fuses the sphere test's dot product, docs/design.md §9.6a); test counts
/// (`(gpu, cpu)`) must equal the CPU method's exactly when the frame ran whole. A frame run in
/// `parts` (a binding limit set below the scene, docs/design.md §2.10) keeps the pairs but not
/// the tests: each part tests its ghosts again, and a method's walk sees each part alone.
fn judge_spheres(
    v: &[Sphere],
    reference_name: &str,
    want: &[Pair],
    got: &[Pair],
    (gpu_tests, cpu_tests): (u64, u64),
    parts: Option<sweepfan::broadphase::PartsReport>,
) -> std::result::Result<String, String> {
    let c = compare_pairs(v, want, got);
    let near = c.near_touching.len();
    if !c.is_ok() {
        return Err(format!("pairs vs {reference_name}: {}", c.summary()));
    }
    // Every method's walk, origin_distance's included (its keys are the CPU's bits on every
    // device, docs/design.md §9.13), tests exactly what the CPU's does.
    let tests = if let Some(p) = parts {
        format!(
            "{gpu_tests} tests {} (the CPU's whole frame: {cpu_tests}; parts keep the pairs, \
             not the tests)",
            p.describe()
        )
    } else if gpu_tests == cpu_tests {
        format!("{gpu_tests} tests = CPU")
    } else {
        return Err(format!(
            "{gpu_tests} tests where the CPU counts {cpu_tests}"
        ));
    };
    Ok(format!(
        "{} pairs = {reference_name}{}; {tests}",
        want.len(),
        if near > 0 {
            format!(" ({near} near-touching differences)")
        } else {
            String::new()
        }
    ))
}

pub(super) fn shape_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    // The paper box keeps its size as n grows (200k polygons in it overlap by the million and
    // overflow a 128 MiB binding): the large sizes use the density scene, whose volume grows
    // with n.
    let (kind, n) = if cfg.level == Level::Full {
        (SceneKind::Density, 200_000)
    } else {
        (SceneKind::Paper, 2_000)
    };
    let params = SceneParams::new(n, cfg.seed);
    let sets = [
        (
            format!("boxes/{}", kind.name()),
            Shapes::Boxes(generate_boxes(kind, &params)),
        ),
        (
            "boxes/needles".to_string(),
            Shapes::Boxes(needle_boxes(n.min(20_000), cfg.seed)),
        ),
        (
            // Pairs within a few ulps of touching: where the device's error bound leaves pairs
            // for the host to settle (docs/design.md §4.2).
            "boxes/near-touching".to_string(),
            Shapes::Boxes(near_touching_pairs(1_000, cfg.seed)),
        ),
        (
            format!("polygons/{}", kind.name()),
            Shapes::Polygons(
                generate_polygons(kind, &params)
                    .expect("the paper and density scenes make convex polygons"),
            ),
        ),
    ];
    box_pipeline_checks(
        ctx,
        checks,
        sets,
        "aabb_sap+sat",
        Shapes::len,
        |p, shapes| {
            let mut pairs = Vec::new();
            let stats = shapes.gpu(p, Some(&mut pairs))?;
            Ok((stats, pairs))
        },
        |shapes, (stats, mut got), fault| {
            if fault {
                got.pop();
            }
            canonicalize(&mut got);
            let (reference_name, want) = shapes.reference()?;
            let (_, cpu) = shapes.cpu()?;
            let others = Shapes::differences(&want, &got);
            if !others.is_empty() {
                return Ok(Err(format!(
                    "{} pairs, {reference_name} {}: {} differ, first {:?}",
                    got.len(),
                    want.len(),
                    others.len(),
                    &others[..others.len().min(5)]
                )));
            }
            // The GPU bounds are widened by one more epsilon than the CPU's (a fused
            // multiply-add may round an extent lower): at least the CPU's candidates.
            if stats.tests < cpu.tests {
                return Ok(Err(format!(
                    "{} SAT tests, fewer than the CPU pipeline's {}",
                    stats.tests, cpu.tests
                )));
            }
            Ok(Ok(format!(
                "{} pairs = {reference_name}; {} SAT tests (CPU {})",
                want.len(),
                stats.tests,
                cpu.tests
            )))
        },
    );
}

/// The check `what` (named `{name}/{what}`) of each named set of `sets` on one box pipeline,
/// built once (its construction error given again to each check): `gpu` runs the set (of
/// `len` shapes) on the pipeline, `compare` judges its output (with the set, and whether the
/// boxes stage is the faulty one).
fn box_pipeline_checks<N: std::fmt::Display, S, T>(
    ctx: &Arc<GpuContext>,
    checks: &mut Checks<'_>,
    sets: impl IntoIterator<Item = (N, S)>,
    what: &str,
    len: impl Fn(&S) -> usize,
    gpu: impl Fn(&mut GpuBoxPipeline, &S) -> Result<T>,
    compare: impl Fn(&S, T, bool) -> Result<std::result::Result<String, String>>,
) {
    let mut pipeline = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb);
    for (name, set) in sets {
        let fault = checks.faulty(Stage::Boxes);
        checks.run(
            format!("{name}/{what}"),
            len(&set) as u64,
            || gpu(pipeline.as_mut().map_err(again)?, &set),
            |out| compare(&set, out, fault),
        );
    }
}

/// The GPU's box pairs and contacts in one submission (docs/design.md §4.8) against the CPU
/// pipeline's pairs and the CPU's contacts of them, on the boxes scene and on pairs within a few
/// ulps of touching (which the device leaves unsure and the host settles, contacts and all):
/// the same pairs, every depth within `cpu::contacts::CONTACT_REL` of the pair's extent,
/// normals equal but where two axes tie. With the stage's fault, one depth is moved, which
/// must fail.
pub(super) fn contact_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    let n = if cfg.level == Level::Full {
        50_000
    } else {
        2_000
    };
    let sets = [
        (
            "boxes/paper",
            generate_boxes(SceneKind::Paper, &SceneParams::new(n, cfg.seed)),
        ),
        ("boxes/near-touching", near_touching_pairs(1_000, cfg.seed)),
    ];
    box_pipeline_checks(
        ctx,
        checks,
        sets,
        "contacts",
        Vec::len,
        |p, boxes| {
            let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
            p.obb_contacts(boxes, &mut pairs, &mut contacts)?;
            Ok((pairs, contacts))
        },
        |boxes, (pairs, mut got), fault| {
            if fault && let Some(c) = got.first_mut() {
                c.depth += 1.0;
            }
            let (mut expected, _) = sweepfan::cpu::sat::obb_overlaps(boxes)?;
            canonicalize(&mut expected);
            if pairs != expected {
                return Ok(Err(format!(
                    "{} pairs, the CPU pipeline {}",
                    pairs.len(),
                    expected.len()
                )));
            }
            let mut want = Vec::new();
            sweepfan::cpu::contacts::obb_contacts(boxes, &pairs, &mut want)?;
            let check = sweepfan::cpu::contacts::compare_contacts(boxes, &pairs, &got, &want);
            Ok(match check.first_wrong {
                Some(w) => Err(format!(
                    "{} of {} contacts differ, first {w}",
                    check.wrong, check.pairs
                )),
                None => Ok(format!(
                    "{} pairs and contacts = the CPU's (depths within {:.1e} of the extent, \
                     {} tied normals)",
                    check.pairs, check.worst_depth, check.ties
                )),
            })
        },
    );
}

/// The GPU's accuracy histograms against the CPU's: a pass when fewer points than the rounding
/// band are classified differently. With `fault`, a tenth of the first rotation's fullest bin
/// is moved to another first (points misclassified), which must fail.
fn compare_histograms(
    cpu: &[Histogram],
    mut gpu: Vec<Histogram>,
    fault: bool,
) -> std::result::Result<String, String> {
    if fault && let Some(h) = gpu.first_mut() {
        let full = (0..h.len()).max_by_key(|&i| h[i]).unwrap_or(0);
        let moved = h[full] / 10;
        h[full] -= moved;
        h[(full + 1) % h.len()] += moved;
    }
    let differing = differing_points(cpu, &gpu);
    let total = cpu.len() as u64 * GRID_POINTS as u64;
    let detail = format!("{differing} of {total} grid points classified differently");
    if (differing as f64) < ROUNDING_BAND * total as f64 {
        Ok(format!("{detail} (rounding band {ROUNDING_BAND:e})"))
    } else {
        Err(format!(
            "{detail}: more than the rounding band {ROUNDING_BAND:e}"
        ))
    }
}

pub(super) fn sector_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    let count = if cfg.level == Level::Full { 1_024 } else { 12 };
    let rotations = random_rotations(count, cfg.seed);
    let fault = checks.faulty(Stage::Sector);
    checks.run(
        "sector/accuracy-histograms".into(),
        count as u64,
        || SectorExperimentGpu::new(ctx)?.box_histograms(ctx, &rotations, None),
        |gpu| {
            let cpu = cpu_histograms(&rotations, None)?;
            Ok(compare_histograms(&cpu, gpu, fault))
        },
    );
}

/// The generalised experiment's kernel (docs/design.md §5.8): per body, its histograms against
/// the CPU's.
pub(super) fn free_sector_checks(
    ctx: &Arc<GpuContext>,
    cfg: &SelftestConfig,
    checks: &mut Checks<'_>,
) {
    let count = if cfg.level == Level::Full { 64 } else { 2 };
    let fault = checks.faulty(Stage::Sector);
    for kind in BodyKind::ALL {
        let rotations = match free_rotations(&random_free_rotations(count, cfg.seed, kind)) {
            Ok(r) => r,
            Err(e) => {
                let name = format!("sector/free-histograms/{}", kind.name());
                checks.run(name, 0, || Err::<(), _>(e), |_| Ok(Ok(String::new())));
                continue;
            }
        };
        checks.run(
            format!("sector/free-histograms/{}", kind.name()),
            count as u64,
            || FreeExperimentGpu::new(ctx)?.histograms(ctx, &rotations, None),
            |gpu| {
                Ok(compare_histograms(
                    &free_cpu_histograms(&rotations, None)?,
                    gpu,
                    fault,
                ))
            },
        );
    }
}

pub(super) fn rotating_checks(
    ctx: &Arc<GpuContext>,
    cfg: &SelftestConfig,
    checks: &mut Checks<'_>,
) {
    let (boxes, n) = if cfg.level == Level::Full {
        (20_000, 1_000_000)
    } else {
        (200, 5_000)
    };
    let scene = match RotatingScene::generate(&RotatingParams::new(boxes, n, cfg.seed)) {
        Ok(s) => s,
        Err(e) => {
            checks.run(
                "rotating".into(),
                n as u64,
                || Err::<(), _>(e),
                |_| Ok(Ok(String::new())),
            );
            return;
        }
    };
    let mut gpu = RotatingGpu::new(ctx);
    for proxy in SectorProxy::ALL {
        let fault = checks.faulty(Stage::Rotating);
        checks.run(
            format!("rotating/{}", proxy.method_name()),
            n as u64,
            || {
                let g = gpu.as_mut().map_err(again)?;
                g.frame(ctx, &scene.boxes, &scene.spheres, &[proxy], true)
            },
            |mut out| {
                let mut g = out.pop().unwrap_or_default();
                let mut c = rotating_frame_cpu(&scene.boxes, &scene.spheres, &[proxy], true)?
                    .pop()
                    .unwrap_or_default();
                if fault && let Some(h) = g.hit_pairs.as_mut() {
                    h.pop();
                }
                let (gh, ch) = (
                    g.hit_pairs.take().unwrap_or_default(),
                    c.hit_pairs.take().unwrap_or_default(),
                );
                let (ok, ties) = compare_hits(&scene, &ch, &gh);
                Ok(if !ok {
                    Err(format!(
                        "{} hits, CPU {}: beyond rounding ties",
                        gh.len(),
                        ch.len()
                    ))
                } else if g.candidates != c.candidates {
                    Err(format!("{} candidates, CPU {}", g.candidates, c.candidates))
                } else {
                    Ok(format!(
                        "{} hits = CPU ({ties} rounding ties); {} candidates = CPU",
                        ch.len(),
                        c.candidates
                    ))
                })
            },
        );
    }
}
