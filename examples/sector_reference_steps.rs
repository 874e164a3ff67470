//! How much of the exact sweep the thesis's discrete reference finds, with 100 and 1,000 poses,
//! per body kind in any pose (docs/design.md §5.8): the share of sampled swept points that a
//! pose holds, and the bodies' mean smallest width. The 100-step reference misses what a body
//! crosses between two poses; thinner bodies lose more, and 1,000 poses close most of the gap.
//!
//! `cargo run --release --example sector_reference_steps [rotations]` (default 40; 20,000
//! points per rotation in the box of its conservative sector).

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sweepfan::geom::sector::general::GeneralSweep;
use sweepfan_scenes::free_bodies::{BodyKind, random_free_rotations};

fn main() {
    let rotations: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 40,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: sector_reference_steps [rotations >= 1]");
            std::process::exit(2);
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let unit = |rng: &mut ChaCha8Rng| {
        Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    };
    println!("body      swept  100-step ref  1000-step ref  mean smallest width");
    for kind in BodyKind::ALL {
        let (mut swept, mut r100, mut r1000, mut width) = (0u64, 0u64, 0u64, 0.0f64);
        for r in &random_free_rotations(rotations, 2024, kind) {
            let g = GeneralSweep::new(r);
            let s = r.conservative_sector();
            let reach = s.outer_radius + s.half_thickness;
            let mut w = f32::MAX;
            for _ in 0..256 {
                let d = unit(&mut rng).normalize_or_zero();
                if d.length() > 0.5 {
                    w = w.min((r.body.support(d) - r.body.support(-d)).dot(d));
                }
            }
            width += w as f64;
            for _ in 0..20_000 {
                let p = s.origin + unit(&mut rng) * reach;
                if !g.contains(p, 1).0 {
                    continue;
                }
                swept += 1;
                r100 += g.contains(p, 100).1 as u64;
                r1000 += g.contains(p, 1000).1 as u64;
            }
        }
        let pct = |n: u64| 100.0 * n as f64 / swept.max(1) as f64;
        println!(
            "{:<9} {swept:>6} {:>12.2}% {:>13.2}% {:>20.2}",
            kind.name(),
            pct(r100),
            pct(r1000),
            width / rotations as f64
        );
    }
}
