//! Contacts timed (`bench --shape obb|polygon --contacts`, docs/design.md §4.8): the CPU's
//! contacts of the pipeline's pairs, on every thread and on one, beside parry's cuboid manifolds
//! on the same pairs on one thread (feature `peers`). The rows reuse the pipeline row's scene
//! and device; `tests_per_frame` is the pairs taken, `pairs_per_frame` the contact points.

use crate::run::bench::median;
use crate::run::row::Row;
use crate::run::verify_shapes::Shapes;
use std::sync::Arc;
use std::time::Instant;
use sweepfan::Contact;
use sweepfan::broadphase::Pair;
use sweepfan::cpu::contacts::ContactCheck;
use sweepfan::error::{Error, Result};

/// Contacts per second of each row beside parry's, for the summary line.
pub struct ContactRates {
    /// (row method, contacts per second).
    pub rates: Vec<(String, f64)>,
}

impl ContactRates {
    /// `contacts (1 thread): 12.3 M/s; peer-parry-manifolds (1 thread): 8.1 M/s; 1.52x parry`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .rates
            .iter()
            .map(|(m, r)| format!("{m}: {:.2} M contacts/s", r / 1e6))
            .collect();
        let rate = |name: &str| self.rates.iter().find(|(m, _)| m == name).map(|r| r.1);
        if let (Some(ours), Some(parry)) = (rate(ONE_THREAD), rate(PARRY)) {
            parts.push(format!(
                "{:.2}x parry's manifolds, one thread each",
                ours / parry
            ));
        }
        parts.join("; ")
    }
}

const ALL_THREADS: &str = "contacts";
const ONE_THREAD: &str = "contacts (1 thread)";
const PARRY: &str = "peer-parry-manifolds (1 thread)";
const GPU: &str = "contacts (gpu)";
const FRAME: &str = "pipeline + contacts (gpu, one submission)";

/// Marks a GPU row verified by `check` (and `same_pairs`), on `device`.
fn verified(row: &mut Row, device: &str, check: ContactCheck, same_pairs: bool) {
    if let Some(w) = &check.first_wrong {
        eprintln!(
            "MISMATCH {} contacts vs the CPU's on {} pairs, first {w}",
            row.method, check.wrong
        );
    }
    row.backend = sweepfan::Backend::Gpu;
    row.device = device.to_string();
    row.verified = Some(check.wrong == 0 && same_pairs);
    row.verified_against = Some(format!(
        "the CPU's contacts: depths within {:.1e} of the extent, {} tied normals",
        check.worst_depth, check.ties
    ));
}

/// Times `frames` runs of each contact computation on `pairs` of `shapes`; `template` is the
/// CPU pipeline's row (scene, n, device). With `gpu`, the GPU's contacts too: from the host's
/// pairs (upload, one dispatch, read-back), and the whole frame from the shapes to the pairs
/// and their contacts in one submission (`GpuBoxPipeline::obb_contacts`), each verified against
/// the CPU's (`Shapes::compare_contacts`; the frame's pairs against the CPU pipeline's).
pub fn bench_contacts(
    shapes: &Shapes,
    pairs: &[Pair],
    frames: usize,
    template: &Row,
    gpu: Option<(Arc<sweepfan::GpuContext>, String)>,
) -> Result<(Vec<Row>, ContactRates)> {
    let frames = frames.max(1);
    // Each row's contacts of its last frame come back beside it.
    let run = |label: &str, f: &mut dyn FnMut(&mut Vec<Contact>) -> Result<u64>| {
        let mut out: Vec<Contact> = Vec::new();
        crate::run::check_frames(frames)?;
        let mut ms = Vec::new();
        let mut points = 0;
        for _ in 0..frames {
            crate::run::stop_if_interrupted()?;
            let t = Instant::now();
            points = f(&mut out)?;
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        // The template's scene and shape; nothing of the frame it measured (a GPU frame's
        // traffic, waits and dispatches once stood in the CPU's contact rows). The CPU's
        // device; `verified` makes a GPU row the GPU's.
        let mut row = template.clone().scene_only();
        row.method = label.to_string();
        row.backend = sweepfan::Backend::Cpu;
        row.device = match label {
            ONE_THREAD | PARRY => "cpu (1 thread)".to_string(),
            _ => crate::run::row::cpu_device(),
        };
        row.frames = frames;
        row.tests_per_frame = pairs.len() as f64;
        row.pairs_per_frame = points as f64;
        row.ms_per_frame = median(&ms);
        row.ms_per_frame_min = ms.iter().copied().fold(f64::INFINITY, f64::min);
        Ok::<(Row, Vec<Contact>), Error>((row, out))
    };
    let points = |c: &[Contact]| c.iter().map(|c| c.count as u64).sum::<u64>();
    let mut contacts = |out: &mut Vec<Contact>| {
        shapes.contacts_into(pairs, out)?;
        Ok(points(out))
    };
    let mut rows = vec![run(ALL_THREADS, &mut contacts)?.0];
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Config(format!("a one-thread pool: {e}")))?;
    rows.push(one.install(|| run(ONE_THREAD, &mut contacts))?.0);
    #[cfg(feature = "peers")]
    if let Shapes::Boxes(boxes) = shapes {
        rows.push(
            run(PARRY, &mut |_| {
                Ok(sweepfan::cpu::peers::parry_obb_manifolds(boxes, pairs))
            })?
            .0,
        );
    }
    if let (Some((ctx, device)), false) = (gpu, matches!(shapes, Shapes::Aabbs(_))) {
        let mut on_cpu = Vec::new();
        shapes.contacts_into(pairs, &mut on_cpu)?;
        let mut kernel = sweepfan::gpu::GpuContacts::new(&ctx)?;
        let (mut row, out) = run(GPU, &mut |out| {
            let shapes = match shapes {
                Shapes::Boxes(b) => sweepfan::Shapes::Obbs(b),
                Shapes::Polygons(p) => sweepfan::Shapes::Polygons(p),
                Shapes::Aabbs(_) => unreachable!("no contacts"),
            };
            kernel.contacts(&ctx, shapes, pairs, out)?;
            Ok(points(out))
        })?;
        verified(
            &mut row,
            &device,
            shapes.compare_contacts(pairs, &out, &on_cpu),
            true,
        );
        rows.push(row);
        // The whole frame in one submission: upload, broad phase, SAT, contacts, read-back.
        let mut pipeline = sweepfan::GpuBoxPipeline::new(ctx.clone(), sweepfan::gpu::Proxy::Aabb)?;
        let mut frame_pairs = Vec::new();
        let (mut row, out) = run(FRAME, &mut |out| {
            shapes.gpu_with_contacts(&mut pipeline, &mut frame_pairs, out)?;
            Ok(points(out))
        })?;
        let mut sorted = pairs.to_vec();
        sweepfan::canonicalize(&mut sorted);
        let mut frame_cpu = Vec::new();
        shapes.contacts_into(&frame_pairs, &mut frame_cpu)?;
        let same_pairs = frame_pairs == sorted;
        if !same_pairs {
            eprintln!(
                "MISMATCH gpu frame pairs: {} against the CPU pipeline's {}",
                frame_pairs.len(),
                sorted.len()
            );
        }
        let check = shapes.compare_contacts(&frame_pairs, &out, &frame_cpu);
        verified(&mut row, &device, check, same_pairs);
        rows.push(row);
    }
    let rates = rows
        .iter()
        .map(|r| {
            (
                r.method.clone(),
                pairs.len() as f64 / (r.ms_per_frame / 1e3),
            )
        })
        .collect();
    Ok((rows, ContactRates { rates }))
}
