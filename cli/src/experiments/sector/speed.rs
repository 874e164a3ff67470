//! Speed tables of the thesis (docs/design.md §5, 3.3-3.4, tables 3.2-3.6; docs/design.md §5.6), measured here
//! beside the thesis's numbers (C# on an i9-10900K, `reference/sector_thesis.json`).
//!
//! Protocol, as in the thesis: one "run" is `tests_per_run` (100,000) consecutive tests over
//! random shapes; a row reports the mean, fastest and slowest run over `runs` runs (the thesis
//! used 10,000). Sectors of the primitive tables sit in their canonical frame (O = 0, U = z,
//! A = x), as the thesis's did: no coordinate transform is timed there.
//!
//! CCD comparison (tables 3.4-3.6), per run: a rotating box drawn as in the accuracy experiment
//! (thesis 3.1); "construction" builds `tests_per_run` proxies from a pool of rotating boxes
//! (the thesis does not say how many shapes its construction time covers; we state ours);
//! "transform and test" checks `ccd_spheres` (100,000) random spheres against one proxy
//! (speculative AABB: sphere-box distance; sector: world-to-local transform and the thesis's
//! sphere test 2.5); "total" times both back to back.

use glam::{Vec2, Vec3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;
use sweepfan::cpu::{SphereColumns, count_sector_sphere_hits, count_sector_sphere_hits_parallel};
use sweepfan::error::{Error, Result};
use sweepfan::geom::aabb::Aabb;
use sweepfan::geom::aabb::aabb_touches_sphere;
use sweepfan::geom::obb::{Obb, ObbFrame};
use sweepfan::geom::sat::{SatVerdict, obb_frames_verdict, rects_overlap_sat};
use sweepfan::geom::sector::Rect2;
use sweepfan::geom::sector::Sector2;
use sweepfan::geom::sector::{Capsule2, Capsule3};
use sweepfan::geom::sector::{RotatingBox, Sector};
use sweepfan::geom::sphere::Sphere;
use sweepfan_scenes::random::*;

/// The thesis's tables, as shipped in the repository.
pub const THESIS_JSON: &str = include_str!("../../../../reference/sector_thesis.json");

/// What to measure.
#[derive(Clone, Debug, Serialize)]
pub struct SpeedConfig {
    /// Tests per timed run (the thesis: 100,000).
    pub tests_per_run: usize,
    /// Timed runs per row (the thesis: 10,000).
    pub runs: usize,
    /// Spheres tested against one CCD proxy per run (the thesis: 100,000).
    pub ccd_spheres: usize,
    /// Seed of every random shape.
    pub seed: u64,
}

impl Default for SpeedConfig {
    fn default() -> Self {
        Self {
            tests_per_run: 100_000,
            runs: 100,
            ccd_spheres: 100_000,
            seed: 3,
        }
    }
}

/// Mean, fastest and slowest run in milliseconds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Timing {
    pub mean_ms: f64,
    pub fastest_ms: f64,
    pub slowest_ms: f64,
}

impl Timing {
    pub fn from_runs(ms: &[f64]) -> Self {
        Self {
            mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
            fastest_ms: ms.iter().copied().fold(f64::INFINITY, f64::min),
            slowest_ms: ms.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One row: our timing, the thesis's (mean, fastest, slowest) when it has the row, and how many
/// tests of the last run said "overlap" (a check that the workload is not trivial).
#[derive(Clone, Debug, Serialize)]
pub struct SpeedRow {
    pub name: String,
    pub ours: Timing,
    pub thesis: Option<[f64; 3]>,
    /// Thesis mean / our mean.
    pub speedup: Option<f64>,
    pub hits_last_run: u64,
    pub tests_per_run: usize,
}

impl SpeedRow {
    /// Our timing beside the thesis's row (mean, fastest, slowest ms), when it has one.
    fn new(name: &str, thesis: Option<[f64; 3]>, ours: Timing, hits: u64, tests: usize) -> Self {
        SpeedRow {
            name: name.to_string(),
            ours,
            speedup: thesis.map(|t| t[0] / ours.mean_ms.max(1e-9)),
            thesis,
            hits_last_run: hits,
            tests_per_run: tests,
        }
    }
}

/// Batched sector-sphere throughput (rayon, structure of arrays).
#[derive(Clone, Debug, Serialize)]
pub struct BatchedRow {
    pub spheres: usize,
    pub threads: usize,
    pub ours: Timing,
    /// The same loop on one thread (shows the vectorised kernel without threading).
    pub single_thread: Timing,
    pub target_ms: f64,
    pub thesis_sector_sphere_mean_ms: f64,
    pub speedup_vs_thesis: f64,
    pub hits_last_run: u64,
}

/// Everything measured, with the thesis's numbers beside ours.
#[derive(Clone, Debug, Serialize)]
pub struct SpeedReport {
    pub config: SpeedConfig,
    pub thesis_machine: String,
    pub table_2d: Vec<SpeedRow>,
    pub table_3d: Vec<SpeedRow>,
    pub ccd_transform_and_test: Vec<SpeedRow>,
    pub ccd_construction: Vec<SpeedRow>,
    pub ccd_total: Vec<SpeedRow>,
    pub batched_sector_sphere: BatchedRow,
}

/// Runs every table. Fails with `Error::Config` on a zero size.
pub fn run_speed_tables(cfg: &SpeedConfig) -> Result<SpeedReport> {
    if cfg.tests_per_run == 0 || cfg.runs == 0 || cfg.ccd_spheres == 0 {
        return Err(Error::Config(
            "speed tables: tests_per_run, runs and ccd_spheres must be > 0".into(),
        ));
    }
    let thesis: serde_json::Value = serde_json::from_str(THESIS_JSON)
        .map_err(|e| Error::Config(format!("reference/sector_thesis.json: {e}")))?;
    let lookup = |table: &str, key: &str| -> Option<[f64; 3]> {
        let a = thesis.get(table)?.get(key)?.as_array()?;
        Some([
            a.first()?.as_f64()?,
            a.get(1)?.as_f64()?,
            a.get(2)?.as_f64()?,
        ])
    };
    let n = cfg.tests_per_run;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let row = |name: &str, table: &str, key: &str, (ours, hits): (Timing, u64)| {
        SpeedRow::new(name, lookup(table, key), ours, hits, n)
    };

    let t2 = "table3_2_2d_ms_per_100k_tests";
    let circles: Vec<(Vec2, f32)> = (0..n).map(|_| random_circle(&mut rng)).collect();
    let circles_b: Vec<(Vec2, f32)> = (0..n).map(|_| random_circle(&mut rng)).collect();
    let caps2: Vec<Capsule2> = (0..n).map(|_| random_capsule2(&mut rng)).collect();
    let caps2_b: Vec<Capsule2> = (0..n).map(|_| random_capsule2(&mut rng)).collect();
    let rects: Vec<Rect2> = (0..n).map(|_| random_rect(&mut rng)).collect();
    let rects_b: Vec<Rect2> = (0..n).map(|_| random_rect(&mut rng)).collect();
    let aabbs2: Vec<(Vec2, Vec2)> = rects.iter().map(rect_bounds).collect();
    let aabbs2_b: Vec<(Vec2, Vec2)> = rects_b.iter().map(rect_bounds).collect();
    let fans2: Vec<Sector2> = (0..n).map(|_| random_sector2(&mut rng)).collect();
    let runs = cfg.runs;
    // One row per entry (name, the thesis's row in `table` or "" for none, shapes a, shapes b,
    // test): `test(a[i], b[i])` over the pairs, timed over `runs` runs.
    macro_rules! timed_rows {
        ($table:expr; $(($name:expr, $key:expr, $a:expr, $b:expr, $test:expr)),* $(,)?) => {
            vec![$(row($name, $table, $key, time_pairs(runs, &$a, &$b, $test)?)),*]
        };
    }
    let table_2d = timed_rows![t2;
        ("circle_circle", "circle_circle", circles, circles_b, |a, b| {
            (a.0 - b.0).length_squared() <= (a.1 + b.1) * (a.1 + b.1)
        }),
        ("capsule_capsule", "capsule_capsule", caps2, caps2_b, |a, b| a.overlaps(b)),
        ("aabb_aabb", "aabb_aabb", aabbs2, aabbs2_b, |a, b| {
            a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
        }),
        ("obb_obb", "obb_obb", rects, rects_b, rects_overlap_sat),
        ("sector_circle", "sector_circle", fans2, circles, |s, c| {
            s.overlaps_circle_local(c.0, c.1)
        }),
        ("sector_circle_signed_distance", "", fans2, circles, |s, c| {
            s.signed_distance_local(c.0) <= c.1
        }),
        ("sector_rectangle", "sector_rectangle", fans2, rects, |s, r| s.overlaps_rectangle(r)),
        ("sector_capsule", "sector_capsule", fans2, caps2, |s, c| {
            s.overlaps_capsule_local(c.start, c.end, c.radius)
        }),
    ];

    let t3 = "table3_3_3d_ms_per_100k_tests";
    let spheres: Vec<Sphere> = (0..n).map(|_| random_sphere(&mut rng, 10.0)).collect();
    let spheres_b: Vec<Sphere> = (0..n).map(|_| random_sphere(&mut rng, 10.0)).collect();
    let caps3: Vec<Capsule3> = (0..n).map(|_| random_capsule3(&mut rng)).collect();
    let caps3_b: Vec<Capsule3> = (0..n).map(|_| random_capsule3(&mut rng)).collect();
    let boxes: Vec<Obb> = (0..n).map(|_| random_box(&mut rng)).collect();
    let boxes_b: Vec<Obb> = (0..n).map(|_| random_box(&mut rng)).collect();
    // Axes precomputed outside the timing, as the thesis's boxes carried theirs.
    let frames: Vec<ObbFrame> = boxes.iter().map(Obb::frame).collect();
    let frames_b: Vec<ObbFrame> = boxes_b.iter().map(Obb::frame).collect();
    let oriented: Vec<ObbFrame> = boxes.iter().map(Obb::frame).collect();
    let aabbs3: Vec<Aabb> = boxes.iter().map(Obb::aabb).collect();
    let aabbs3_b: Vec<Aabb> = boxes_b.iter().map(Obb::aabb).collect();
    let fans3: Vec<Sector> = (0..n).map(|_| random_canonical_sector(&mut rng)).collect();
    let points: Vec<Vec3> = spheres.iter().map(|s| s.center).collect();
    let table_3d = timed_rows![t3;
        ("sphere_sphere", "sphere_sphere", spheres, spheres_b, |a, b| a.touches(b)),
        ("capsule_capsule", "capsule_capsule", caps3, caps3_b, |a, b| a.overlaps(b)),
        ("aabb_aabb", "aabb_aabb", aabbs3, aabbs3_b, Aabb::overlaps),
        ("obb_obb", "obb_obb", frames, frames_b, |a, b| {
            obb_frames_verdict(a, b) != SatVerdict::Apart
        }),
        ("sector_point", "sector_point", fans3, points, |s, p| s.contains_local(*p)),
        ("sector_sphere", "sector_sphere", fans3, spheres, |s, b| {
            s.overlaps_sphere_local(b.center, b.radius)
        }),
        ("sector_sphere_signed_distance", "", fans3, spheres, |s, b| {
            s.signed_distance_local(b.center) <= b.radius
        }),
        ("sector_capsule_approx", "sector_capsule", fans3, caps3, |s, c| {
            s.overlaps_capsule_approx(c)
        }),
        ("sector_capsule_certified", "", fans3, caps3, |s, c| {
            s.overlaps_capsule_certified_default(c)
        }),
        ("sector_box_exact", "", fans3, oriented, |s, b| s.overlaps_box(b)),
    ];

    // CCD comparison.
    let ccd_spheres: Vec<Sphere> = (0..cfg.ccd_spheres)
        .map(|_| random_sphere(&mut rng, 50.0))
        .collect();
    let rotating: Vec<RotatingBox> = (0..n).map(|_| random_rotation(&mut rng)).collect();
    let mut proxies_aabb = Vec::with_capacity(n);
    let mut proxies_sector = Vec::with_capacity(n);
    let (mut build_aabb, mut build_sector) = (Vec::new(), Vec::new());
    let (mut test_aabb, mut test_sector) = (Vec::new(), Vec::new());
    let (mut total_aabb, mut total_sector) = (Vec::new(), Vec::new());
    let (mut hits_aabb, mut hits_sector) = (0, 0);
    for run in 0..runs {
        crate::run::stop_if_interrupted()?;
        let motion = rotating[run % n];
        build_aabb.push(time_ms(|| {
            build(&mut proxies_aabb, &rotating, RotatingBox::speculative_aabb);
            black_box(&proxies_aabb);
        }));
        build_sector.push(time_ms(|| {
            build(&mut proxies_sector, &rotating, RotatingBox::sector);
            black_box(&proxies_sector);
        }));
        let (aabb, sector) = (motion.speculative_aabb(), motion.sector());
        test_aabb.push(time_ms(|| {
            let aabb = black_box(aabb);
            hits_aabb = count(&ccd_spheres, |s| aabb_touches_sphere(&aabb, s));
        }));
        test_sector.push(time_ms(|| {
            let sector = black_box(sector);
            hits_sector = count(&ccd_spheres, |s| sector.overlaps_sphere(s));
        }));
        total_aabb.push(time_ms(|| {
            build(&mut proxies_aabb, &rotating, RotatingBox::speculative_aabb);
            let proxy = proxies_aabb[run % n];
            black_box(count(&ccd_spheres, |s| aabb_touches_sphere(&proxy, s)));
        }));
        total_sector.push(time_ms(|| {
            build(&mut proxies_sector, &rotating, RotatingBox::sector);
            let sector = proxies_sector[run % n];
            black_box(count(&ccd_spheres, |s| sector.overlaps_sphere(s)));
        }));
    }
    let ccd_row = |name: &str, table: &str, key: &str, ms: &[f64], hits: u64, tests: usize| {
        SpeedRow::new(name, lookup(table, key), Timing::from_runs(ms), hits, tests)
    };
    let t4 = "table3_4_ccd_transform_and_test_ms_per_100k_spheres";
    let t5 = "table3_5_ccd_shape_construction_ms";
    let t6 = "table3_6_ccd_total_ms";
    let m = cfg.ccd_spheres;
    let ccd_transform_and_test = vec![
        ccd_row(
            "speculative_ccd",
            t4,
            "speculative_ccd",
            &test_aabb,
            hits_aabb,
            m,
        ),
        ccd_row("sector", t4, "sector", &test_sector, hits_sector, m),
    ];
    let ccd_construction = vec![
        ccd_row("speculative_ccd", t5, "speculative_ccd", &build_aabb, 0, n),
        ccd_row("sector", t5, "sector", &build_sector, 0, n),
    ];
    let ccd_total = vec![
        ccd_row(
            "speculative_ccd",
            t6,
            "speculative_ccd",
            &total_aabb,
            hits_aabb,
            m,
        ),
        ccd_row("sector", t6, "sector", &total_sector, hits_sector, m),
    ];

    // Batched throughput: the same workload as the sector_sphere CCD row, in parallel.
    let columns = SphereColumns::from_spheres(&ccd_spheres);
    let mut batch_ms = Vec::with_capacity(runs);
    let mut batch_hits = 0;
    for run in 0..runs {
        crate::run::stop_if_interrupted()?;
        let sector = rotating[run % n].sector();
        batch_ms.push(time_ms(|| {
            batch_hits = count_sector_sphere_hits_parallel(black_box(&sector), &columns);
        }));
    }
    let mut single_ms = Vec::with_capacity(runs);
    for run in 0..runs {
        crate::run::stop_if_interrupted()?;
        let sector = rotating[run % n].sector();
        single_ms.push(time_ms(|| {
            black_box(count_sector_sphere_hits(black_box(&sector), &columns));
        }));
    }
    let thesis_sector_sphere = lookup(t3, "sector_sphere").map_or(f64::NAN, |t| t[0]);
    let ours = Timing::from_runs(&batch_ms);
    let batched_sector_sphere = BatchedRow {
        spheres: m,
        threads: rayon::current_num_threads(),
        ours,
        single_thread: Timing::from_runs(&single_ms),
        target_ms: 0.5,
        thesis_sector_sphere_mean_ms: thesis_sector_sphere,
        speedup_vs_thesis: thesis_sector_sphere / ours.mean_ms.max(1e-9),
        hits_last_run: batch_hits,
    };

    Ok(SpeedReport {
        config: cfg.clone(),
        thesis_machine: thesis
            .get("source")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string(),
        table_2d,
        table_3d,
        ccd_transform_and_test,
        ccd_construction,
        ccd_total,
        batched_sector_sphere,
    })
}

fn rect_bounds(r: &Rect2) -> (Vec2, Vec2) {
    let corners = r.corners();
    let lo = corners.iter().fold(Vec2::splat(f32::MAX), |m, c| m.min(*c));
    let hi = corners.iter().fold(Vec2::splat(f32::MIN), |m, c| m.max(*c));
    (lo, hi)
}

/// Times `runs` runs of the test over every pair (a[i], b[i]); returns the timing and the number
/// of overlaps in the last run (`Interrupted` once Ctrl-C came, looked at between runs).
fn time_pairs<A, B>(
    runs: usize,
    a: &[A],
    b: &[B],
    test: impl Fn(&A, &B) -> bool,
) -> Result<(Timing, u64)> {
    let mut ms = Vec::with_capacity(runs);
    let mut hits = 0;
    for _ in 0..runs {
        crate::run::stop_if_interrupted()?;
        ms.push(time_ms(|| {
            let (a, b) = (black_box(a), black_box(b));
            let mut n = 0u64;
            for (x, y) in a.iter().zip(b) {
                n += black_box(test(x, y)) as u64;
            }
            hits = black_box(n);
        }));
    }
    Ok((Timing::from_runs(&ms), hits))
}

/// The construction step timed: `proxies` filled with `proxy` of every rotating box, in place.
#[inline(always)]
fn build<P>(proxies: &mut Vec<P>, rotating: &[RotatingBox], proxy: impl Fn(&RotatingBox) -> P) {
    proxies.clear();
    proxies.extend(black_box(rotating).iter().map(proxy));
}

fn count<T>(items: &[T], test: impl Fn(&T) -> bool) -> u64 {
    let mut n = 0u64;
    for x in black_box(items) {
        n += black_box(test(x)) as u64;
    }
    n
}

fn time_ms(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SpeedConfig {
        SpeedConfig {
            tests_per_run: 3000,
            runs: 2,
            ccd_spheres: 3000,
            seed: 1,
        }
    }

    #[test]
    fn every_row_runs_with_the_thesis_numbers_beside_it() {
        let report = run_speed_tables(&small()).unwrap();
        assert_eq!(report.table_2d.len(), 8);
        assert_eq!(report.table_3d.len(), 10);
        let circle = &report.table_2d[0];
        assert_eq!(circle.thesis, Some([9.26, 3.21, 64.96]));
        let sector_sphere = report
            .table_3d
            .iter()
            .find(|r| r.name == "sector_sphere")
            .unwrap();
        assert_eq!(sector_sphere.thesis, Some([24.69, 3.64, 81.99]));
        assert_eq!(report.ccd_total[1].thesis, Some([119.45, 95.87, 239.62]));
        for row in report.table_2d.iter().chain(&report.table_3d) {
            let t = row.ours;
            assert!(
                t.fastest_ms <= t.mean_ms && t.mean_ms <= t.slowest_ms,
                "{row:?}"
            );
            // Shapes are drawn so that both answers occur.
            assert!(
                row.hits_last_run > 0 && row.hits_last_run < row.tests_per_run as u64,
                "{} degenerate workload: {} hits",
                row.name,
                row.hits_last_run
            );
        }
        // The batched count is the CCD sector row's count for the same (last) rotation.
        assert_eq!(
            report.batched_sector_sphere.hits_last_run,
            report.ccd_transform_and_test[1].hits_last_run
        );
        serde_json::to_string(&report).unwrap();
    }

    #[test]
    fn zero_sizes_are_config_errors() {
        let cfg = SpeedConfig { runs: 0, ..small() };
        assert!(matches!(run_speed_tables(&cfg), Err(Error::Config(_))));
    }

    #[test]
    fn sat_tests_agree_with_point_sampling() {
        let mut rng = ChaCha8Rng::seed_from_u64(51);
        let (mut hits, mut unwitnessed) = (0, 0);
        for _ in 0..300 {
            let (obb_a, mut obb_b) = (random_box(&mut rng), random_box(&mut rng));
            obb_b.center = obb_a.center + v3(&mut rng, 5.0);
            let sat = obb_a.overlaps(&obb_b);
            let (a, b) = (obb_a.frame(), obb_b.frame());
            // Witness search: grid points of one box inside the other.
            let n = 12;
            let grid_hit = |a: &ObbFrame, b: &ObbFrame| {
                let f = |t: usize| 2.0 * t as f32 / n as f32 - 1.0;
                (0..(n + 1) * (n + 1) * (n + 1)).any(|t| {
                    let (i, j, k) = (
                        t / ((n + 1) * (n + 1)),
                        (t / (n + 1)) % (n + 1),
                        t % (n + 1),
                    );
                    let p = a.center()
                        + a.axis(0) * a.half(0) * f(i)
                        + a.axis(1) * a.half(1) * f(j)
                        + a.axis(2) * a.half(2) * f(k);
                    b.contains_point(p)
                })
            };
            let witness = grid_hit(&a, &b) || grid_hit(&b, &a);
            if witness {
                hits += 1;
                assert!(sat);
            } else if sat {
                unwitnessed += 1;
            }
            // Separated by more than their bounding spheres: SAT must say no.
            let apart = (a.center() - b.center()).length();
            if apart > a.half_extents().length() + b.half_extents().length() {
                assert!(!sat);
            }
        }
        assert!(hits > 10);
        // SAT "yes" with no grid point of one box in the other: only slivers, so rare.
        assert!(
            unwitnessed * 10 < hits,
            "{unwitnessed} unwitnessed vs {hits}"
        );
        for _ in 0..2000 {
            let (a, b) = (random_rect(&mut rng), random_rect(&mut rng));
            let inside = |r: &Rect2, p: Vec2| {
                let d = p - r.center;
                d.dot(r.axis).abs() <= r.half_extents.x
                    && d.dot(r.axis.perp()).abs() <= r.half_extents.y
            };
            let n = 30;
            let witness = (0..=n * n).any(|t| {
                let (i, j) = (t / (n + 1), t % (n + 1));
                let p = a.center
                    + a.axis * a.half_extents.x * (2.0 * i as f32 / n as f32 - 1.0)
                    + a.axis.perp() * a.half_extents.y * (2.0 * j as f32 / n as f32 - 1.0);
                inside(&b, p)
            });
            if witness {
                assert!(rects_overlap_sat(&a, &b));
            }
        }
    }
}
