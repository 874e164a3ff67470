//! Frame-event checks (docs/design.md §10): over moving frames, the device's found and lost
//! lists must equal a CPU tracker fed the device's own pairs (the device's sort, search and
//! scan), the pairs must arrive in canonical order (`set_canonical`) and equal the CPU's up
//! to pairs within rounding of touching; the same for the box pipeline's SAT output.

use super::{Checks, Level, SelftestConfig, Stage};
use crate::run::verify::compare_pairs;
use glam::Vec3;
use std::sync::Arc;
use sweepfan::broadphase::{BroadPhase, FrameEvents, Method, Pair};
use sweepfan::error::Result;
use sweepfan::events::EventTracker;
use sweepfan::gpu::{GpuBoxPipeline, GpuBroadPhase, GpuContext, Proxy};
use sweepfan_scenes::boxes::generate_boxes;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// What a sphere check's GPU part returns: per frame the device events, the pairs, the scene.
type FramesSeen = (Vec<FrameEvents>, Vec<Vec<Pair>>, Vec<Scene>);

/// Frames per check: the first finds every pair, the others begin and end contacts.
const FRAMES: usize = 6;

/// The first frame whose device events differ from the tracker's, if any.
fn first_difference(got: &[FrameEvents], want: &[FrameEvents]) -> Option<String> {
    got.iter().zip(want).enumerate().find_map(|(t, (g, w))| {
        (g != w).then(|| {
            format!(
                "frame {t}: device found {} lost {}, tracker found {} lost {}",
                g.found.len(),
                g.lost.len(),
                w.found.len(),
                w.lost.len()
            )
        })
    })
}

pub(super) fn event_checks(ctx: &Arc<GpuContext>, cfg: &SelftestConfig, checks: &mut Checks<'_>) {
    // Full: the density scene at 1M (fixed density; the paper box's pairs grow as n^2), and
    // the methods whose work grows as n log n there.
    let (kind, n, methods): (SceneKind, usize, &[Method]) = if cfg.level == Level::Full {
        (SceneKind::Density, 1_000_000, &[Method::Grid, Method::Sap])
    } else {
        (
            SceneKind::Paper,
            4_000,
            &[Method::Grid, Method::Sap, Method::Xyz],
        )
    };
    let fault = checks.faulty(Stage::Events);
    let scene = Scene::generate(kind, &SceneParams::new(n, cfg.seed));
    for &method in methods {
        let scene = scene.clone();
        checks.run(
            format!("events/{}", method.name()),
            n as u64,
            || -> Result<FramesSeen> {
                let mut bp = GpuBroadPhase::new(ctx.clone(), method)?;
                bp.set_canonical(true)?;
                bp.track_events(true)?;
                let (mut events, mut lists, mut frames) = (Vec::new(), Vec::new(), Vec::new());
                let mut scene = scene;
                for _ in 0..FRAMES {
                    let mut pairs = Vec::new();
                    bp.find_pairs(&scene.spheres, Some(&mut pairs))?;
                    let mut e = bp.take_events().unwrap_or_default();
                    if fault {
                        e.found.pop();
                    }
                    events.push(e);
                    lists.push(pairs);
                    frames.push(scene.clone());
                    scene.step();
                }
                Ok((events, lists, frames))
            },
            |(events, lists, frames)| {
                let mut tracker = EventTracker::new();
                let mut want = Vec::new();
                for (t, (pairs, frame)) in lists.iter().zip(&frames).enumerate() {
                    if !pairs.windows(2).all(|w| w[0] < w[1]) {
                        return Ok(Err(format!("frame {t}: pairs not in canonical order")));
                    }
                    let mut cpu = Vec::new();
                    sweepfan::cpu::broad_phase(Method::Grid)
                        .find_pairs(&frame.spheres, Some(&mut cpu))?;
                    sweepfan::broadphase::canonicalize(&mut cpu);
                    let cmp = compare_pairs(&frame.spheres, &cpu, pairs);
                    if !cmp.is_ok() {
                        return Ok(Err(format!(
                            "frame {t}: pairs vs CPU grid: {}",
                            cmp.summary()
                        )));
                    }
                    want.push(tracker.update(pairs.clone()));
                }
                Ok(match first_difference(&events, &want) {
                    Some(d) => Err(d),
                    None => Ok(format!(
                        "{FRAMES} frames: events = tracker ({} found, {} lost), canonical order, \
                         pairs = CPU grid",
                        want.iter().map(|e| e.found.len()).sum::<usize>(),
                        want.iter().map(|e| e.lost.len()).sum::<usize>()
                    )),
                })
            },
        );
    }
    // The box pipeline: events of its SAT output, boxes moving.
    let boxes_n = if cfg.level == Level::Full {
        200_000
    } else {
        2_000
    };
    let mut p = SceneParams::new(boxes_n, cfg.seed);
    p.volume_fraction = 0.1;
    let boxes = generate_boxes(SceneKind::Density, &p);
    checks.run(
        "events/boxes".into(),
        boxes_n as u64,
        || -> Result<(Vec<FrameEvents>, Vec<Vec<Pair>>)> {
            let mut gpu = GpuBoxPipeline::new(ctx.clone(), Proxy::Aabb)?;
            gpu.track_events(true)?;
            let mut boxes = boxes;
            let (mut events, mut lists) = (Vec::new(), Vec::new());
            for _ in 0..FRAMES {
                let mut out = Vec::new();
                gpu.obb_overlaps(&boxes, Some(&mut out))?;
                let mut e = gpu.take_events().unwrap_or_default();
                if fault {
                    e.lost.push([0, 0]);
                }
                events.push(e);
                lists.push(out);
                for (i, b) in boxes.iter_mut().enumerate() {
                    let a = i as f32 * 2.399;
                    b.center += Vec3::new(a.cos(), a.sin(), (a * 0.7).sin()) * 0.3;
                }
            }
            Ok((events, lists))
        },
        |(events, lists)| {
            let mut tracker = EventTracker::new();
            let want: Vec<FrameEvents> = lists.into_iter().map(|l| tracker.update(l)).collect();
            Ok(match first_difference(&events, &want) {
                Some(d) => Err(d),
                None => Ok(format!(
                    "{FRAMES} frames of moving boxes: events = tracker ({} found, {} lost)",
                    want.iter().map(|e| e.found.len()).sum::<usize>(),
                    want.iter().map(|e| e.lost.len()).sum::<usize>()
                )),
            })
        },
    );
}
