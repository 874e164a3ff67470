//! The frame loop a simulation writes around sweepfan, on the CPU and on the GPU side by side:
//! bodies (rotated boxes) under the simulation's own u64 ids, moved every step, a few removed
//! and added; the broad phase by id (`BoxBroadPhase`) gives the pairs begun and ended, and the
//! narrow phase (`NarrowPhase`: the separating axis theorem, on the same side) keeps the
//! candidates whose boxes really overlap.
//! `cargo run --release --example simulation -- [bodies] [steps]`; exits 1 where the GPU's
//! events or overlaps differ from the CPU's. Without a GPU adapter the CPU side runs alone.

use glam::{Quat, Vec3};
use std::sync::Arc;
use sweepfan::cpu::CpuNarrowPhase;
use sweepfan::gpu::GpuNarrowPhase;
use sweepfan::{BoxBroadPhase, BoxFrame, GpuContext, Id, NarrowPhase, Obb, Shapes};

fn main() -> sweepfan::Result<()> {
    let arg = |i: usize, d: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (n, steps) = (arg(1, 2000), arg(2, 20));
    // Each side a broad phase by id and a narrow phase, on the same device.
    let mut sides: Vec<(BoxBroadPhase, Box<dyn NarrowPhase>)> =
        vec![(BoxBroadPhase::cpu(), Box::new(CpuNarrowPhase::default()))];
    match GpuContext::default_adapter() {
        Ok(ctx) => {
            let ctx = Arc::new(ctx);
            let narrow = Box::new(GpuNarrowPhase::new(ctx.clone()));
            sides.push((BoxBroadPhase::gpu(ctx)?, narrow));
        }
        Err(e) => println!("the CPU side alone ({e})"),
    }
    // One frame per side, its lists reused every step.
    let mut frames = vec![BoxFrame::default(); sides.len()];
    let side = (n as f32 * 30.0).cbrt(); // about one body a 30 unit cubes
    let body = |id: usize, t: f32| {
        let k = id as f32;
        let home = Vec3::new(k * 0.618_034, k * 0.754_877, k * 0.569_840).fract() * side;
        let drift = Vec3::new(
            (0.3 * t + k).sin(),
            (0.2 * t + 2.0 * k).cos(),
            (0.25 * t).sin(),
        );
        let spin = Quat::from_rotation_y(k + 0.1 * t) * Quat::from_rotation_x(0.5 * k);
        Obb::new(home + 2.0 * drift, Vec3::new(1.6, 0.7, 0.4), spin)
    };
    for step in 0..steps {
        let t = step as f32;
        // Ids 0..n, but every 10th body leaves at odd steps and comes back at even ones.
        let alive: Vec<usize> = (0..n).filter(|i| step % 2 == 0 || i % 10 != 0).collect();
        let boxes: Vec<Obb> = alive.iter().map(|&i| body(i, t)).collect();
        let ids: Vec<Id> = alive.iter().map(|&i| i as Id).collect();
        let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
        let mut results = Vec::new();
        for ((broad, narrow), frame) in sides.iter_mut().zip(&mut frames) {
            broad.set_many(&ids, &aabbs)?;
            for i in (0..n).filter(|i| step % 2 == 1 && i % 10 == 0) {
                broad.remove(i as Id);
            }
            broad.update_into(frame)?;
            // Narrow phase: the broad phase's pairs by id as they are, SAT on the boxes by id.
            let mut overlapping = Vec::new();
            narrow.pairs_by_id(
                &ids,
                Shapes::Obbs(&boxes),
                broad.pairs(),
                Some(&mut overlapping),
            )?;
            results.push((frame.found.clone(), frame.lost.clone(), overlapping));
        }
        let (found, lost, overlapping) = &results[0];
        let agrees = results.iter().all(|r| r == &results[0]);
        println!(
            "step {step}: {} bodies, {} candidate pairs begun, {} ended, {} overlapping ({})",
            alive.len(),
            found.len(),
            lost.len(),
            overlapping.len(),
            match (results.len(), agrees) {
                (1, _) => "CPU",
                (_, true) => "the GPU agrees",
                _ => "THE GPU DIFFERS",
            }
        );
        if !agrees {
            std::process::exit(1);
        }
    }
    Ok(())
}
