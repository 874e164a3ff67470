//! Contacts in the page (docs/design.md §4.8, §8.5): a scene's oriented boxes (the tool's box
//! scenes), their touching pairs and each pair's contact (normal, depth, points): on the GPU in
//! one submission from the boxes to the contacts, awaited, the pairs checked against the CPU
//! pipeline's and the contacts against the CPU's, in the same page; or on the CPU, whose pairs
//! are checked against the all-pairs test and whose contacts each hold a point and a depth of
//! at least zero.

use crate::{Check, gpu_result, input, kind_of, ms_since, page_gpu, put_back, take_kept};
use std::cell::RefCell;
use sweepfan::cpu::contacts::{compare_contacts, obb_contacts};
use sweepfan::gpu::{GpuBoxPipeline, Proxy};
use sweepfan::{Contact, Obb, Pair};
use sweepfan_scenes::SceneParams;
use sweepfan_scenes::boxes::generate_boxes;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The page's GPU box pipeline, kept across checks (it compiles once).
    static GPU_CONTACTS: RefCell<Option<GpuBoxPipeline>> = const { RefCell::new(None) };
}

/// The boxes of `scene` with `n` objects from `seed`, and their touching pairs.
fn boxes_and_pairs(scene: &str, n: u32, seed: u32) -> sweepfan::Result<(Vec<Obb>, Vec<Pair>)> {
    let boxes = generate_boxes(kind_of(scene)?, &SceneParams::new(n as usize, seed.into()));
    let (mut pairs, _) = sweepfan::cpu::sat::obb_overlaps(&boxes)?;
    sweepfan::canonicalize(&mut pairs);
    Ok((boxes, pairs))
}

/// The check of `contacts` of `pairs` of `boxes` (agreeing as `agrees` says), with the drawing:
/// each box as its centre and largest half-extent, the touching ones marked, and the points.
fn check_of(
    boxes: &[Obb],
    pairs: &[Pair],
    contacts: &[Contact],
    reference_pairs: usize,
    agrees: bool,
    ms: f64,
) -> Check {
    let touching = contacts.iter().filter(|c| c.count > 0).count();
    let mut out = Check::still(touching, reference_pairs, agrees, ms);
    out.spheres = boxes
        .iter()
        .flat_map(|b| {
            [
                b.center.x,
                b.center.y,
                b.center.z,
                b.half_extents.max_element(),
            ]
        })
        .collect();
    out.touching = crate::touching(boxes.len(), pairs);
    out.points = contacts
        .iter()
        .flat_map(|c| {
            c.points()
                .iter()
                .flat_map(|p| [p.x, p.y])
                .collect::<Vec<_>>()
        })
        .collect();
    out
}

/// The contacts of `scene`'s boxes on the CPU (the page's one thread): their pairs against the
/// all-pairs test over the same boxes (so `n` at most [`crate::BRUTE_FORCE_MAX`]), every
/// contact with a point and a depth >= 0.
#[wasm_bindgen]
pub fn check_contacts_cpu(scene: &str, n: f64, seed: f64) -> Result<Check, JsError> {
    crate::still_check(n, seed, |n, seed| check_contacts(scene, n, seed))
}

/// [`check_contacts_cpu`] with the library's error.
pub fn check_contacts(scene: &str, n: u32, seed: u32) -> sweepfan::Result<Check> {
    input::brute_force_fits(n, "the contacts check's all-pairs reference")?;
    let (boxes, pairs) = input::limited(|| boxes_and_pairs(scene, n, seed))?;
    let mut all = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes[i].overlaps(&boxes[j]) {
                all.push([i as u32, j as u32]);
            }
        }
    }
    let started = web_time::Instant::now();
    let mut contacts = Vec::new();
    obb_contacts(&boxes, &pairs, &mut contacts)?;
    let ms = ms_since(started);
    let sound = contacts.iter().all(|c| c.count >= 1 && c.depth >= 0.0);
    let check = check_of(
        &boxes,
        &pairs,
        &contacts,
        all.len(),
        sound && all == pairs,
        ms,
    );
    Ok(check.against("the all-pairs test's pairs; each contact a point, depth >= 0"))
}

/// The pairs and contacts of `scene`'s boxes on the GPU opened by `open_gpu_async`, in one
/// submission (`GpuBoxPipeline::obb_contacts_async`): the pairs checked against the CPU
/// pipeline's, the contacts against the CPU's (`compare_contacts`: every depth within its
/// tolerance, normals equal but where two axes tie: as deep along the GPU's normal).
#[wasm_bindgen]
pub async fn check_contacts_gpu_async(scene: String, n: f64, seed: f64) -> Result<Check, JsError> {
    let (n, seed, _) = input::counts(n, seed, 1.0)?;
    let ctx = page_gpu()?;
    let (boxes, pairs) = input::limited(|| boxes_and_pairs(&scene, n, seed))?;
    let mut pipeline = take_kept(&GPU_CONTACTS, || {
        GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb)
    })?;
    let started = web_time::Instant::now();
    let (mut on_gpu_pairs, mut on_gpu) = (Vec::new(), Vec::new());
    let result = pipeline
        .obb_contacts_async(&boxes, &mut on_gpu_pairs, &mut on_gpu)
        .await;
    let ms = ms_since(started);
    put_back(&GPU_CONTACTS, &ctx, pipeline);
    gpu_result(result)?;
    let mut on_cpu = Vec::new();
    input::limited(|| obb_contacts(&boxes, &pairs, &mut on_cpu))?;
    let same_pairs = on_gpu_pairs == pairs;
    let check = compare_contacts(&boxes, &pairs, &on_gpu, &on_cpu);
    let reference = on_cpu.iter().filter(|c| c.count > 0).count();
    let out = check_of(
        &boxes,
        &pairs,
        &on_gpu,
        reference,
        same_pairs && check.wrong == 0,
        ms,
    );
    Ok(out.against("the CPU's pairs and contacts"))
}

/// Forgets the kept GPU box pipeline (a new GPU context was opened).
pub(crate) fn forget_gpu_contacts() {
    GPU_CONTACTS.with(|k| *k.borrow_mut() = None);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively, the page's contact checks: the CPU's pairs and contacts, and the GPU's
    /// (on the test machine's adapter) against the CPU's.
    #[test]
    fn contacts_agree_natively() {
        let c = check_contacts("paper", 1500, 2).unwrap();
        assert!(
            c.agrees && c.pairs > 50 && c.pairs == c.reference_pairs,
            "{c:?}"
        );
        assert!(c.points.len() >= 2 * c.pairs as usize, "{c:?}");
        crate::open_test_gpu();
        let g = pollster::block_on(check_contacts_gpu_async("paper".into(), 1500.0, 2.0)).unwrap();
        assert!(g.agrees && g.pairs == c.pairs, "{g:?}");
        assert!(check_contacts("pape", 10, 1).is_err());
    }
}
