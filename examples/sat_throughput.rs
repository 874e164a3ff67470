//! CPU separating-axis throughput measured in CPU time as well as wall time, for machines shared
//! with other work (where criterion's wall times mostly measure the neighbours).
//! `cargo run --release --example sat_throughput [n_boxes] [input-order]` (by default the
//! boxes are stored in the sweep's order, as `obb_overlaps` does; `input-order` keeps the random
//! generation order, so every test reads two random cache lines).

use std::time::Instant;
use sweepfan::cpu::sat::{obb_frame_pairs_unordered, obb_overlaps};
use sweepfan::geom::obb::obb_frames;
use sweepfan::geom::sat::{SatVerdict, obb_frames_verdict};
use sweepfan_scenes::boxes::random_boxes;

#[path = "common/sweep_boxes.rs"]
mod sweep_boxes;

/// On-CPU nanoseconds of the calling thread (Linux schedstat).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// On-CPU nanoseconds of the whole process, all threads (Linux schedstat per task).
fn process_cpu_ns() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(400_000);
    let boxes = random_boxes(n, 1);
    let in_input_order = std::env::args().nth(2).is_some_and(|s| s == "input-order");
    let boxes = if in_input_order {
        boxes
    } else {
        sweep_boxes::in_sweep_order(&boxes)
    };
    let frames = obb_frames(&boxes);
    let candidates = sweep_boxes::sweep_candidates(&boxes);
    let c = candidates.len() as f64;
    println!("{n} boxes, {} candidate pairs", candidates.len());

    // One thread, repeated so the run lasts long enough for the CPU clock.
    let reps = 10;
    let (cpu0, wall0) = (thread_cpu_ns(), Instant::now());
    let mut hits = 0usize;
    for _ in 0..reps {
        hits += candidates
            .iter()
            .filter(|p| {
                obb_frames_verdict(&frames[p[0] as usize], &frames[p[1] as usize])
                    != SatVerdict::Apart
            })
            .count();
    }
    let (cpu, wall) = (
        (thread_cpu_ns() - cpu0) as f64 * 1e-9,
        wall0.elapsed().as_secs_f64(),
    );
    println!(
        "1 thread : {:.1} M tests per CPU-second, {:.1} M tests/s wall ({} overlapping)",
        reps as f64 * c / cpu / 1e6,
        reps as f64 * c / wall / 1e6,
        hits / reps
    );

    let mut out = Vec::new();
    let (cpu0, wall0) = (process_cpu_ns(), Instant::now());
    for _ in 0..reps {
        obb_frame_pairs_unordered(&frames, |i| &boxes[i], &candidates, &mut out).unwrap();
    }
    let (cpu, wall) = (
        (process_cpu_ns() - cpu0) as f64 * 1e-9,
        wall0.elapsed().as_secs_f64(),
    );
    let threads = rayon::current_num_threads();
    println!(
        "rayon ({threads} threads): {:.1} M tests/s wall, {:.1} M tests per CPU-second \
         (x {threads} = {:.1} M/s if the cores were free)",
        reps as f64 * c / wall / 1e6,
        reps as f64 * c / cpu / 1e6,
        reps as f64 * c / cpu / 1e6 * threads as f64
    );

    let (cpu0, wall0) = (process_cpu_ns(), Instant::now());
    let (pairs, stats) = obb_overlaps(&boxes).unwrap();
    println!(
        "obb_overlaps: {} pairs, {:.3} s wall, {:.3} CPU-s; stages {:?}",
        pairs.len(),
        wall0.elapsed().as_secs_f64(),
        (process_cpu_ns() - cpu0) as f64 * 1e-9,
        stats
            .stages
            .iter()
            .map(|s| format!("{} {:.3}s", s.stage, s.seconds))
            .collect::<Vec<_>>()
    );
}
