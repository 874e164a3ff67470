//! What `auto` sees on each of `auto-bench`'s scenes (docs/design.md §2.12): the survey's
//! statistics, the survey's time, and each candidate's price on each backend, to fit `Costs`
//! against `sweepfan auto-bench` times.
//!
//! `cargo run --release --example auto_prices`

use std::time::Instant;
use sweepfan::broadphase::auto::{Costs, SPREAD_CELLS_PER_OBJECT, choose_from, survey};
use sweepfan::run::auto_bench::{DEFAULT_SCENES, generate, parse_scenes};
use sweepfan::{Backend, Method};

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
            let grid_a = if s.cells_per_object > SPREAD_CELLS_PER_OBJECT {
                c.grid_spread_object
            } else {
                c.grid.0
            };
            let ms = |(a, b): (f64, f64), k: f64| (a * n + b * k) * 1e-6;
            let prices = [
                (Method::Grid, ms((grid_a, c.grid.1), s.grid_pairs)),
                (Method::Sap, ms(c.sap, s.sweep_pairs)),
                (Method::X, ms(c.x, s.x_pairs)),
                (Method::BruteForce, ms(c.brute_force, n * (n - 1.0) / 2.0)),
            ];
            let shown: Vec<String> = prices.iter().map(|(m, p)| format!("{m} {p:.3}")).collect();
            println!(
                "  {label:>12}: chose {}; predicted ms: {}",
                choose_from(&s, &c).method,
                shown.join(", ")
            );
        }
    }
    Ok(())
}
