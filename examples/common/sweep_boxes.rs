//! What the SAT bench (`benches/sat.rs`) and the `sat_throughput` example share: boxes stored
//! and their candidate pairs found as the CPU pipeline (`obb_overlaps`) does.

use sweepfan::Pair;
use sweepfan::cpu::{BoxSweep, sweep_order};
use sweepfan::geom::obb::Obb;

/// `boxes` in the sweep's order, as `obb_overlaps` stores them (see `sweep_order`).
pub fn in_sweep_order(boxes: &[Obb]) -> Vec<Obb> {
    let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
    sweep_order(&aabbs)
        .iter()
        .map(|&i| boxes[i as usize])
        .collect()
}

/// The candidate pairs of `boxes` (their AABBs overlap) in the sweep's own order (`aabb_sweep`
/// would sort them).
pub fn sweep_candidates(boxes: &[Obb]) -> Vec<Pair> {
    let aabbs: Vec<_> = boxes.iter().map(Obb::aabb).collect();
    let mut candidates = Vec::new();
    let mut sweep = BoxSweep::new();
    sweep.plan(&aabbs);
    sweep.pairs(&aabbs, &mut candidates).unwrap();
    candidates
}
