//! A small simulation embedding sweepfan: a few thousand spheres fly in a box and bounce off its
//! walls; each frame the CPU grid and the GPU grid find the touching pairs, one
//! [`EventTracker`] per backend turns them into contacts begun and ended, and the two logs must
//! agree (docs/design.md §10). Prints a short log; exits 1 when the backends' events differ by a
//! pair that is not within rounding of touching.
//! `cargo run --release --example bouncing -- [SPHERES (3000)] [FRAMES (60)]`

use glam::Vec3;
use rand::{Rng, SeedableRng};
use sweepfan::{BroadPhase, EventTracker, GpuBroadPhase, GpuContext, Method, Pair, Sphere, cpu};
use sweepfan_cli::run::verify::{first_pairs, near_touching};

/// Side of the box the spheres fly in.
const SIDE: f32 = 60.0;
const RADIUS: f32 = 1.0;

fn main() -> sweepfan::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3_000);
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut spheres: Vec<Sphere> = (0..n)
        .map(|_| {
            let c = Vec3::new(rng.random(), rng.random(), rng.random()) * (SIDE - 2.0 * RADIUS);
            Sphere::new(c + Vec3::splat(RADIUS), RADIUS)
        })
        .collect();
    let mut velocity: Vec<Vec3> = (0..n)
        .map(|_| (Vec3::new(rng.random(), rng.random(), rng.random()) - 0.5) * 0.4)
        .collect();

    let ctx = std::sync::Arc::new(GpuContext::default_adapter()?);
    println!(
        "{n} spheres in a {SIDE} box, {frames} frames, grid on cpu and on '{}'",
        ctx.info().name
    );
    let mut backends: Vec<(&str, Box<dyn BroadPhase>, EventTracker)> = vec![
        ("cpu", cpu::broad_phase(Method::Grid), EventTracker::new()),
        (
            "gpu",
            Box::new(GpuBroadPhase::new(ctx, Method::Grid)?),
            EventTracker::new(),
        ),
    ];
    let (mut began, mut ended, mut allowed) = (0u64, 0u64, 0usize);
    let mut pairs: Vec<Pair> = Vec::new();
    for frame in 0..frames {
        let mut events = Vec::new();
        for (_, bp, tracker) in &mut backends {
            bp.find_pairs(&spheres, Some(&mut pairs))?;
            events.push(tracker.update(std::mem::take(&mut pairs)));
        }
        let (c, g) = (&events[0], &events[1]);
        if c != g {
            // Only pairs within rounding of touching may be decided differently (docs/design.md
            // §9.3); anything else is a bug.
            let mut differing: Vec<Pair> = Vec::new();
            for (a, b) in [(&c.found, &g.found), (&c.lost, &g.lost)] {
                differing.extend(a.iter().filter(|p| b.binary_search(p).is_err()));
                differing.extend(b.iter().filter(|p| a.binary_search(p).is_err()));
            }
            if let Some(p) = differing.iter().find(|&&p| !near_touching(&spheres, p)) {
                eprintln!("frame {frame}: cpu and gpu events differ on pair {p:?}");
                std::process::exit(1);
            }
            allowed += differing.len();
        }
        began += c.found.len() as u64;
        ended += c.lost.len() as u64;
        if frame < 5 || frame % 10 == 0 || frame + 1 == frames {
            let show = |list: &[Pair]| first_pairs(list, 3, |p| format!("{}-{}", p[0], p[1]));
            println!(
                "frame {frame:>3}: {:>5} contacts  +{:<4} began ({})  -{:<4} ended ({})",
                c.pairs_now(),
                c.found.len(),
                show(&c.found),
                c.lost.len(),
                show(&c.lost)
            );
        }
        // Move, bouncing off the walls.
        for (s, v) in spheres.iter_mut().zip(&mut velocity) {
            s.center += *v;
            for k in 0..3 {
                if s.center[k] < RADIUS || s.center[k] > SIDE - RADIUS {
                    v[k] = -v[k];
                    s.center[k] = s.center[k].clamp(RADIUS, SIDE - RADIUS);
                }
            }
        }
    }
    println!(
        "same events on both backends: {began} contacts began, {ended} ended over {frames} \
         frames ({allowed} near-touching differences allowed)"
    );
    Ok(())
}
