//! What `auto` sees on each of `auto-bench`'s scenes (docs/design.md §2.12): the survey's
//! statistics, the survey's time, and each candidate's price on each backend, to fit `Costs`
//! against `sweepfan auto-bench` times.
//!
//! `cargo run --release --example auto_prices`

use std::time::Instant;
use sweepfan::Backend;
use sweepfan::broadphase::auto::{Costs, SPREAD_CELLS_PER_OBJECT, choose_from, prices, survey};
use sweepfan_cli::run::auto_bench::{DEFAULT_SCENES, generate, parse_scenes};

fn main() -> sweepfan::Result<()> {
    for scene in generate(&parse_scenes(DEFAULT_SCENES)?, 1) {
        let start = Instant::now();
        let s = survey(&scene.spheres);
        let took = start.elapsed().as_secs_f64() * 1e3;
        let n = s.n as f64;
        println!(
            "{} n = {}: survey {took:.3} ms; per object: grid {:.2}, sweep {:.1}, x {:.1}; \
             {:.2} a cell; {:.3e} cells an object{}",
            scene.name,
            s.n,
            s.grid_pairs / n,
            s.sweep_pairs / n,
            s.x_pairs / n,
            s.cell_occupancy,
            s.cells_per_object,
            if s.cells_per_object > SPREAD_CELLS_PER_OBJECT {
                " (spread)"
            } else {
                ""
            }
        );
        for (label, backend, software) in [
            ("cpu", Backend::Cpu, false),
            ("software gpu", Backend::Gpu, true),
            ("gpu", Backend::Gpu, false),
        ] {
            let c = Costs::of(backend, software);
            let priced = prices(&s, &c);
            let shown: Vec<String> = priced
                .iter()
                .map(|(m, p)| format!("{m} {:.3}", p * 1e-6))
                .collect();
            println!(
                "  {label:>12}: chose {}; predicted ms: {}",
                choose_from(&s, &c).method,
                shown.join(", ")
            );
        }
    }
    Ok(())
}
