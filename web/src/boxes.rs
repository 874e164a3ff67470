//! The caller's boxes by id in the page (docs/design.md §4.7, §8.5): a scene's spheres as
//! stretched boxes under scattered 64-bit ids, moved and partly removed frame by frame, through
//! a [`BoxBroadPhase`] on the GPU (awaited) or the CPU; each frame's pairs and found and lost
//! events compared with a reference computed in the same page.

use crate::{Check, Run, gpu_result, input, page_gpu, put_back, take_kept};
use std::cell::RefCell;
use sweepfan::{Aabb, BoxBroadPhase, Id, IdPair};
use sweepfan_scenes::Scene;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The page's GPU box broad phase, kept across checks (its pipelines compile once).
    static GPU_BOXES: RefCell<Option<BoxBroadPhase>> = const { RefCell::new(None) };
}

/// `run`'s scene with its `n` objects from its seed as boxes by id, moved `frames - 1` times,
/// through the CPU's [`BoxBroadPhase`]; every frame compared with brute force over the same
/// boxes (so `n` at most [`crate::BRUTE_FORCE_MAX`]). Awaits a turn of the page between
/// frames.
#[wasm_bindgen]
pub async fn check_boxes_cpu(run: &Run) -> Result<Check, JsError> {
    Ok(check_boxes_async(run).await?)
}

/// [`check_boxes_cpu`] with the library's error, natively.
pub fn check_boxes(scene: &str, n: u32, seed: u32, frames: u32) -> sweepfan::Result<Check> {
    pollster::block_on(check_boxes_async(&Run::of(scene.into(), n, seed, frames)))
}

async fn check_boxes_async(run: &Run) -> sweepfan::Result<Check> {
    let scene = run.generate()?;
    input::brute_force_fits(run.n, "the boxes check's brute-force reference")?;
    let reference = |ids: &[Id], boxes: &[Aabb]| input::limited(|| brute_force(ids, boxes));
    let (check, _) = compare(scene, run.frames, BoxBroadPhase::cpu(), reference).await;
    check.map(|c| c.against("brute force over the same boxes"))
}

/// [`check_boxes_cpu`] with the boxes on the GPU opened by `open_gpu_async`, every frame
/// compared with the CPU's [`BoxBroadPhase`] fed the same boxes.
#[wasm_bindgen]
pub async fn check_boxes_gpu_async(run: &Run) -> Result<Check, JsError> {
    let ctx = page_gpu()?;
    let scene = run.generate()?;
    let tested = take_kept(&GPU_BOXES, || BoxBroadPhase::gpu(ctx.clone()))?;
    let mut cpu = BoxBroadPhase::cpu();
    let reference = move |ids: &[Id], boxes: &[Aabb]| {
        input::limited(|| {
            cpu.clear();
            cpu.set_many(ids, boxes)?;
            cpu.update()?;
            Ok(cpu.pairs().to_vec())
        })
    };
    let (check, tested) = compare(scene, run.frames, tested, reference).await;
    put_back(&GPU_BOXES, &ctx, tested);
    let check = check.map(|c| c.against("the CPU's box broad phase fed the same boxes"));
    Ok(gpu_result(check)?)
}

/// Forgets the kept GPU box broad phase (a new GPU context was opened).
pub(crate) fn forget_gpu_boxes() {
    GPU_BOXES.with(|b| *b.borrow_mut() = None);
}

/// Object `i`'s id: scattered over all 64 bits, as a simulation's handles may be.
fn id_of(i: usize) -> Id {
    (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Whether object `i` is held in `frame`: all in the first; after it, one in eleven is
/// removed, a different one each frame (and comes back the next).
fn held(i: usize, frame: u32) -> bool {
    frame == 0 || !(i + frame as usize).is_multiple_of(11)
}

/// The held objects of `scene` in `frame`, as ids and boxes: each sphere's box, stretched
/// along one axis by up to half its radius again (by the object's index).
fn boxes_of(scene: &Scene, frame: u32) -> (Vec<Id>, Vec<Aabb>) {
    scene
        .spheres
        .iter()
        .enumerate()
        .filter(|&(i, _)| held(i, frame))
        .map(|(i, s)| {
            let mut half = glam::Vec3::splat(s.radius);
            half[i % 3] *= 1.0 + 0.25 * (i % 3) as f32;
            (id_of(i), Aabb::new(s.center - half, s.center + half))
        })
        .unzip()
}

/// Every overlapping pair of `boxes` by id, tested pair by pair, sorted.
fn brute_force(ids: &[Id], boxes: &[Aabb]) -> sweepfan::Result<Vec<IdPair>> {
    let mut pairs = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if a.overlaps(b) {
                pairs.push([ids[i].min(ids[j]), ids[i].max(ids[j])]);
            }
        }
    }
    pairs.sort_unstable();
    Ok(pairs)
}

/// `frames` frames of `scene` through `tested`: each frame's pairs equal to `reference`'s,
/// and its found and lost events to the differences of the reference's consecutive frames.
/// Returns `tested` too, for the page to keep.
async fn compare(
    mut scene: Scene,
    frames: u32,
    mut tested: BoxBroadPhase,
    mut reference: impl FnMut(&[Id], &[Aabb]) -> sweepfan::Result<Vec<IdPair>>,
) -> (sweepfan::Result<Check>, BoxBroadPhase) {
    let mut run = async || {
        if frames == 0 {
            return Err(sweepfan::Error::Config("frames: at least 1".into()));
        }
        // A kept broad phase starts empty (no device frame runs without two boxes).
        tested.clear();
        tested.update_async().await?;
        let mut out = Check::empty();
        let mut before: Vec<IdPair> = Vec::new();
        let mut last = Vec::new();
        input::begin();
        for frame in 0..frames {
            input::next_frame(frame, || scene.step()).await?;
            let (ids, boxes) = boxes_of(&scene, frame);
            let start = web_time::Instant::now();
            for i in (0..scene.spheres.len()).filter(|&i| !held(i, frame)) {
                tested.remove(id_of(i));
            }
            tested.set_many(&ids, &boxes)?;
            let events = tested.update_async().await?;
            out.frame_done(frame, frames, start);
            let expected = reference(&ids, &boxes)?;
            let found: Vec<IdPair> = difference(&expected, &before);
            let lost: Vec<IdPair> = difference(&before, &expected);
            (out.pairs, out.reference_pairs) = (tested.pairs().len() as u32, expected.len() as u32);
            out.agrees &=
                tested.pairs() == expected && events.found == found && events.lost == lost;
            out.count_events(frame, events.found.len(), events.lost.len());
            before = expected;
            last = boxes;
        }
        // For the drawing: each box as its centre and the larger of its x and y half extents.
        out.spheres = last
            .iter()
            .flat_map(|b| {
                let (c, h) = ((b.min + b.max) * 0.5, (b.max - b.min) * 0.5);
                [c.x, c.y, c.z, h.x.max(h.y)]
            })
            .collect();
        let (ids, _) = boxes_of(&scene, frames - 1);
        let touching: std::collections::HashSet<Id> =
            tested.pairs().iter().flatten().copied().collect();
        out.touching = ids
            .iter()
            .map(|id| u8::from(touching.contains(id)))
            .collect();
        Ok(out)
    };
    let check = run().await;
    (check, tested)
}

/// The pairs of sorted `a` not in sorted `b`.
fn difference(a: &[IdPair], b: &[IdPair]) -> Vec<IdPair> {
    a.iter()
        .filter(|p| b.binary_search(p).is_err())
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively, the page's box check on the CPU: pairs and events equal brute force's over
    /// frames that move and remove boxes, and none of the counts is trivially zero.
    #[test]
    fn cpu_boxes_agree_with_brute_force_on_a_moving_scene() {
        let c = check_boxes("paper", 3000, 4, 4).unwrap();
        assert!(c.agrees, "{c:?}");
        assert!(c.pairs > 100 && c.found > 0 && c.lost > 0, "{c:?}");
    }

    /// The GPU box check natively, through the async update the page awaits (lavapipe here).
    #[test]
    fn gpu_boxes_agree_with_the_cpu_natively() {
        crate::open_test_gpu();
        for scene in ["paper", "clusters"] {
            let run = Run::new(scene.into(), 3000.0, 6.0, 3.0).unwrap();
            let c = pollster::block_on(check_boxes_gpu_async(&run)).unwrap();
            assert!(
                c.agrees && c.pairs > 0 && c.found > 0 && c.lost > 0,
                "{scene}: {c:?}"
            );
        }
    }

    #[test]
    fn the_oracle_counts_touching_boxes_and_the_ids_are_distinct() {
        let cube = |x: f32| {
            Aabb::new(
                glam::Vec3::new(x, 0.0, 0.0),
                glam::Vec3::new(x + 1.0, 1.0, 1.0),
            )
        };
        let pairs = brute_force(&[30, 10, 20], &[cube(0.0), cube(1.0), cube(3.0)]).unwrap();
        assert_eq!(pairs, [[10, 30]]);
        let mut ids: Vec<Id> = (0..10_000).map(id_of).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 10_000);
        assert_eq!(
            difference(&[[1, 2], [1, 3], [2, 5]], &[[1, 3]]),
            [[1, 2], [2, 5]]
        );
    }
}
