//! The sector accuracy experiment of thesis 3.1 (docs/design.md §5.5) on the CPU.
//!
//! 100^3 grid points (spacing 1, coordinates -49.5..49.5); per random rotation every point gets
//! a 6-bit membership mask (reference, speculative, speculative_endpoints, sector,
//! conservative_sector, exact_sweep) and only the 64-bin histogram of masks leaves the loop.
//! Every score (accuracy / over / under, the thesis's groups A..G, the bins) comes from those
//! histograms, so the GPU (`gpu::sector`) only has to produce the same histograms.
//!
//! Speed: the grid is walked row by row (x varies). On a row, the two speculative AABBs are
//! index intervals counted in O(1); only the points inside a cylinder-and-slab bound of the
//! conservative sector (which holds every other shape) are classified one by one.

use super::speed::THESIS_JSON;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use sweepfan::cpu::{cpu_histograms, rotation_histogram};
use sweepfan::error::{Error, Result};
use sweepfan::geom::sector::RotatingBox;
pub use sweepfan::geom::sector::classify::*;
use sweepfan::gpu::GpuContext;
use sweepfan::gpu::SectorExperimentGpu;
pub use sweepfan_scenes::random::{random_rotation, random_rotations};

/// Accuracy, over- and under-detection (percent of |truth | method|) and missed points.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MethodScore {
    pub accuracy: f64,
    pub over: f64,
    pub under: f64,
    /// Total truth points the method missed, over all scored rotations.
    pub under_points: u64,
    /// Rotations scored (those where truth | method is not empty).
    pub rotations: u64,
}

impl MethodScore {
    /// The table columns "acc over under missed-points" (6, 6, 6 and 12 wide).
    pub fn columns(&self) -> String {
        format!(
            "{:6.2} {:6.2} {:6.2} {:>12}",
            self.accuracy, self.over, self.under, self.under_points
        )
    }
}

/// The scores in `table` of `methods` (name, bit), in the order of `methods`; a method without a
/// score is left out.
pub fn scored<'a>(
    methods: &'a [(&'a str, u32)],
    table: &'a BTreeMap<String, MethodScore>,
) -> impl Iterator<Item = (&'a str, &'a MethodScore)> {
    methods
        .iter()
        .filter_map(|&(name, _)| Some((name, table.get(name)?)))
}

/// One rotation's scores: (accuracy, over, under) in percent and missed points, or `None` when
/// neither shape holds a grid point.
pub fn score(hist: &Histogram, truth: u32, method: u32) -> Option<(f64, f64, f64, u64)> {
    let (mut both, mut truth_only, mut method_only) = (0u64, 0u64, 0u64);
    for (mask, &n) in hist.iter().enumerate() {
        let (t, m) = (mask as u32 & truth != 0, mask as u32 & method != 0);
        match (t, m) {
            (true, true) => both += n as u64,
            (true, false) => truth_only += n as u64,
            (false, true) => method_only += n as u64,
            (false, false) => {}
        }
    }
    let union = (both + truth_only + method_only) as f64;
    if union == 0.0 {
        return None;
    }
    Some((
        100.0 * both as f64 / union,
        100.0 * method_only as f64 / union,
        100.0 * truth_only as f64 / union,
        truth_only,
    ))
}

#[derive(Default)]
struct Mean {
    sum: [f64; 3],
    under_points: u64,
    n: u64,
}

impl Mean {
    fn add(&mut self, s: Option<(f64, f64, f64, u64)>) {
        if let Some((a, o, u, missed)) = s {
            self.sum[0] += a;
            self.sum[1] += o;
            self.sum[2] += u;
            self.under_points += missed;
            self.n += 1;
        }
    }

    fn finish(&self) -> MethodScore {
        let n = self.n.max(1) as f64;
        MethodScore {
            accuracy: self.sum[0] / n,
            over: self.sum[1] / n,
            under: self.sum[2] / n,
            under_points: self.under_points,
            rotations: self.n,
        }
    }
}

pub(crate) fn mean_scores<'a>(
    hists: impl Iterator<Item = &'a Histogram> + Clone,
    truth: u32,
    methods: &[(&str, u32)],
) -> BTreeMap<String, MethodScore> {
    methods
        .iter()
        .map(|&(name, bit)| {
            let mut m = Mean::default();
            for h in hists.clone() {
                m.add(score(h, truth, bit));
            }
            (name.to_string(), m.finish())
        })
        .collect()
}

/// A bin's mean scores against the reference: a method no rotation of the bin scored (an empty
/// bin) has no score there, left out rather than 0.0.
fn bin_scores<'a>(
    hists: impl Iterator<Item = &'a Histogram> + Clone,
) -> BTreeMap<String, MethodScore> {
    let mut scores = mean_scores(hists, bits::REFERENCE, &METHODS);
    scores.retain(|_, score| score.rotations > 0);
    scores
}

/// The thesis's seven groups (membership in reference R / speculative S / sector C), summed
/// over rotations: A = R only, B = S only, C = C only, D = R & S, E = R & C, F = S & C,
/// G = all three.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
    pub e: u64,
    pub f: u64,
    pub g: u64,
}

fn groups(hists: &[Histogram]) -> Groups {
    let mut g = Groups::default();
    for h in hists {
        for (mask, &n) in h.iter().enumerate() {
            let m = mask as u32;
            let key = (
                m & bits::REFERENCE != 0,
                m & bits::SPECULATIVE != 0,
                m & bits::SECTOR != 0,
            );
            let slot = match key {
                (true, false, false) => &mut g.a,
                (false, true, false) => &mut g.b,
                (false, false, true) => &mut g.c,
                (true, true, false) => &mut g.d,
                (true, false, true) => &mut g.e,
                (false, true, true) => &mut g.f,
                (true, true, true) => &mut g.g,
                (false, false, false) => continue,
            };
            *slot += n as u64;
        }
    }
    g
}

/// Mean scores (against the reference) of the rotations whose key falls in [lo, hi).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub rotations: u64,
    pub methods: BTreeMap<String, MethodScore>,
}

/// Accuracy / over / under as the thesis and the prior Monte Carlo (docs/design.md §5.5) give them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedScore {
    pub accuracy: f64,
    pub over: f64,
    pub under: f64,
}

/// What both accuracy experiments (the thesis's pose and the free one, `free`) report of a run:
/// its size and seed, and each method's scores (flattened into the report's JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunScores {
    pub rotations: u64,
    pub seed: u64,
    pub grid_points_per_rotation: u64,
    pub reference_steps: u32,
    /// Scored against the 100-step reference.
    pub methods: BTreeMap<String, MethodScore>,
    /// Scored against the exact continuous sweep.
    pub methods_vs_exact: BTreeMap<String, MethodScore>,
}

/// The full result of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectorAccuracyReport {
    /// `methods` are those of the thesis's table 3.1: `speculative` is the start-pose AABB grown
    /// by the chord; `speculative_endpoints` the AABB of both end poses.
    #[serde(flatten)]
    pub scores: RunScores,
    pub groups: Groups,
    /// 36 bins of 10 degrees of the rotation angle (lo, hi in degrees).
    pub angle_bins: Vec<Bin>,
    /// 20 equal bins of rotations sorted by Wy - Wx (lo, hi: the Wy - Wx range of the bin).
    pub shape_bins: Vec<Bin>,
    /// Thesis table 3.1 (`reference/sector_thesis.json`), keyed like `methods`.
    pub thesis: BTreeMap<String, PublishedScore>,
    /// The prior Monte Carlo (docs/design.md §5.5) of the same protocol (docs/design.md §5.5).
    pub spec_monte_carlo: BTreeMap<String, PublishedScore>,
}

/// Thesis table 3.1, from the embedded `reference/sector_thesis.json`.
pub fn thesis_scores() -> Result<BTreeMap<String, PublishedScore>> {
    let v: serde_json::Value = serde_json::from_str(THESIS_JSON)
        .map_err(|e| Error::Config(format!("reference/sector_thesis.json: {e}")))?;
    let table = &v["table3_1_accuracy_percent"];
    [("speculative", "speculative_ccd"), ("sector", "sector")]
        .iter()
        .map(|&(ours, theirs)| {
            let row = &table[theirs];
            let get = |k: &str| {
                row[k].as_f64().ok_or_else(|| {
                    Error::Config(format!(
                        "reference/sector_thesis.json: table3_1 {theirs}.{k} missing"
                    ))
                })
            };
            Ok((
                ours.to_string(),
                PublishedScore {
                    accuracy: get("accuracy")?,
                    over: get("over")?,
                    under: get("under")?,
                },
            ))
        })
        .collect()
}

fn spec_monte_carlo() -> BTreeMap<String, PublishedScore> {
    [
        ("speculative", 4.45, 92.6, 2.96),
        ("speculative_endpoints", 15.4, 71.3, 13.3),
        ("sector", 67.0, 1.45, 31.6),
        ("conservative_sector", 88.3, 11.7, 0.0),
    ]
    .iter()
    .map(|&(k, accuracy, over, under)| {
        (
            k.to_string(),
            PublishedScore {
                accuracy,
                over,
                under,
            },
        )
    })
    .collect()
}

/// Scores, groups and bins from the per-rotation histograms (CPU or GPU).
pub fn build_report(
    rotations: &[RotatingBox],
    hists: &[Histogram],
    seed: u64,
) -> Result<SectorAccuracyReport> {
    if rotations.is_empty() {
        return Err(Error::Config("sector experiment: no rotations".into()));
    }
    if rotations.len() != hists.len() {
        return Err(Error::Config(format!(
            "sector experiment: {} rotations but {} histograms",
            rotations.len(),
            hists.len()
        )));
    }
    let methods = mean_scores(hists.iter(), bits::REFERENCE, &METHODS);
    let methods_vs_exact = mean_scores(hists.iter(), bits::EXACT_SWEEP, &METHODS_VS_EXACT);

    let bin_width = 10.0f64.to_radians();
    let angle_bins = (0..36)
        .map(|b| {
            let members: Vec<&Histogram> = rotations
                .iter()
                .zip(hists)
                .filter(|(r, _)| ((r.angle as f64 / bin_width) as usize).min(35) == b)
                .map(|(_, h)| h)
                .collect();
            Bin {
                lo: 10.0 * b as f64,
                hi: 10.0 * (b + 1) as f64,
                rotations: members.len() as u64,
                methods: bin_scores(members.iter().copied()),
            }
        })
        .collect();

    let key = |r: &RotatingBox| (r.widths.y - r.widths.x) as f64;
    let mut order: Vec<usize> = (0..rotations.len()).collect();
    order.sort_by(|&i, &j| key(&rotations[i]).total_cmp(&key(&rotations[j])));
    let n = order.len();
    let shape_bins = (0..20)
        .map(|b| {
            let idx = &order[b * n / 20..(b + 1) * n / 20];
            let (lo, hi) = match (idx.first(), idx.last()) {
                (Some(&f), Some(&l)) => (key(&rotations[f]), key(&rotations[l])),
                _ => (f64::NAN, f64::NAN),
            };
            Bin {
                lo,
                hi,
                rotations: idx.len() as u64,
                methods: bin_scores(idx.iter().map(|&i| &hists[i])),
            }
        })
        .collect();

    Ok(SectorAccuracyReport {
        scores: RunScores {
            rotations: rotations.len() as u64,
            seed,
            grid_points_per_rotation: GRID_POINTS as u64,
            reference_steps: REFERENCE_STEPS,
            methods,
            methods_vs_exact,
        },
        groups: groups(hists),
        angle_bins,
        shape_bins,
        thesis: thesis_scores()?,
        spec_monte_carlo: spec_monte_carlo(),
    })
}

/// Host bytes per rotation of the experiment: the rotation, its histogram, and the report's
/// index and bin entries (docs/design.md §9.14).
pub const BYTES_PER_ROTATION: u64 = (std::mem::size_of::<RotatingBox>()
    + std::mem::size_of::<Histogram>()
    + 2 * std::mem::size_of::<usize>()) as u64;

/// Refuses a rotation count before anything is allocated for it: zero, or more than the memory
/// this process may use holds ([`BYTES_PER_ROTATION`] each), naming what it would need.
pub fn check_rotations(count: usize) -> Result<()> {
    if count == 0 {
        return Err(Error::Config(
            "sector experiment: --rotations must be at least 1".into(),
        ));
    }
    crate::run::check_count_fits(
        &format!("--rotations {count}"),
        count,
        BYTES_PER_ROTATION,
        |fit| format!("use fewer --rotations (about {fit} fit; the thesis scored 100000)"),
    )
}

/// The rotation list of a run of `count` (>= 1) rotations: the same on every backend.
pub fn experiment_rotations(count: usize, seed: u64) -> Result<Vec<RotatingBox>> {
    check_rotations(count)?;
    Ok(random_rotations(count, seed))
}

/// Grid points classified differently by two runs over the same rotations (each misclassified
/// point moves one count between two bins of its rotation's histogram).
pub fn differing_points(a: &[Histogram], b: &[Histogram]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            x.iter()
                .zip(y)
                .map(|(m, n)| m.abs_diff(*n) as u64)
                .sum::<u64>()
                / 2
        })
        .sum()
}

/// Fraction of the classified points that rounding may move across a face: f32 evaluation
/// order differs between the row intervals, the one-by-one test and the GPU, and only points
/// within rounding of a face can flip. The GPU and CPU histograms agree within it
/// (`gpu::sector` tests); a shape that encloses another in exact arithmetic may miss at most
/// this many of its points, more is a bug.
pub const ROUNDING_BAND: f64 = 1e-5;

/// The whole experiment on the CPU: `count` rotations from `seed`.
pub fn run_cpu(
    count: usize,
    seed: u64,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<SectorAccuracyReport> {
    let rotations = experiment_rotations(count, seed)?;
    let hists = cpu_histograms(&rotations, progress)?;
    build_report(&rotations, &hists, seed)
}

impl SectorAccuracyReport {
    /// A plain-text table: ours against the reference, the thesis and the prior Monte Carlo (docs/design.md §5.5),
    /// then ours against the exact sweep.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let fmt3 = |s: Option<&PublishedScore>| match s {
            Some(s) => format!("{:6.2} {:6.2} {:6.2}", s.accuracy, s.over, s.under),
            None => format!("{:>20}", "-"),
        };
        let s = &self.scores;
        let _ = writeln!(
            out,
            "sector accuracy, {} rotations x {} points (seed {}); acc / over / under in %",
            s.rotations, s.grid_points_per_rotation, s.seed
        );
        let _ = writeln!(
            out,
            "{:<22} {:>20} {:>12} {:>20} {:>20}",
            "vs 100-step reference", "ours", "missed pts", "thesis", "SPEC Monte Carlo"
        );
        for (name, m) in scored(&METHODS, &self.scores.methods) {
            let _ = writeln!(
                out,
                "{name:<22} {} {} {}",
                m.columns(),
                fmt3(self.thesis.get(name)),
                fmt3(self.spec_monte_carlo.get(name))
            );
        }
        let _ = writeln!(
            out,
            "{:<22} {:>20} {:>12}",
            "vs exact sweep", "ours", "missed pts"
        );
        for (name, m) in scored(&METHODS_VS_EXACT, &self.scores.methods_vs_exact) {
            let _ = writeln!(out, "{name:<22} {}", m.columns());
        }
        let g = &self.groups;
        let _ = writeln!(
            out,
            "groups (points, all rotations): A {} B {} C {} D {} E {} F {} G {}",
            g.a, g.b, g.c, g.d, g.e, g.f, g.g
        );
        out
    }
}

/// The whole experiment on the GPU: `count` rotations from `seed` (the same list as
/// [`run_cpu`]), scored on the CPU from the read-back histograms.
pub fn run_gpu(
    ctx: &GpuContext,
    count: usize,
    seed: u64,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<SectorAccuracyReport> {
    let rotations = experiment_rotations(count, seed)?;
    let hists = SectorExperimentGpu::new(ctx)?.box_histograms(ctx, &rotations, progress)?;
    build_report(&rotations, &hists, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// Classifies every grid point of the rotation directly with the geometry types: no
    /// precomputed parameters, no row intervals.
    fn brute_histogram(b: &RotatingBox) -> Histogram {
        let spec = b.speculative_aabb();
        let ends = b.speculative_endpoints();
        let sector = b.sector();
        let cons = b.conservative_sector();
        let mut hist = [0u32; 64];
        for k in 0..GRID_SIDE as i32 {
            for j in 0..GRID_SIDE as i32 {
                for i in 0..GRID_SIDE as i32 {
                    let p = Vec3::new(grid_coord(i), grid_coord(j), grid_coord(k));
                    let mut m = 0;
                    m |= bits::REFERENCE * b.discrete_sweep_contains(p, REFERENCE_STEPS) as u32;
                    m |= bits::SPECULATIVE * spec.contains(p) as u32;
                    m |= bits::SPECULATIVE_ENDPOINTS * ends.contains(p) as u32;
                    m |= bits::SECTOR * sector.contains_point(p) as u32;
                    m |= bits::CONSERVATIVE_SECTOR * cons.contains_point(p) as u32;
                    m |= bits::EXACT_SWEEP * b.sweep_contains(p) as u32;
                    hist[m as usize] += 1;
                }
            }
        }
        hist
    }

    #[test]
    fn a_short_run_reproduces_the_published_means_within_sampling_noise() {
        // 300 rotations: standard errors of the means are about 1.2 points (sector), 0.4
        // (speculative) and 0.6 (conservative); the bands are about 4 of them.
        let done = std::sync::atomic::AtomicU64::new(0);
        let progress = |n: u64| {
            done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        };
        let r = run_cpu(300, 77, Some(&progress)).unwrap();
        assert_eq!(done.into_inner(), 300);
        let near = |name: &str, acc: f64, band: f64| {
            let got = r.scores.methods[name].accuracy;
            assert!((got - acc).abs() < band, "{name}: {got} vs {acc}");
        };
        // docs/design.md §5.5 Monte Carlo of the protocol, not produced by this code.
        near("sector", 67.0, 5.0);
        near("speculative", 4.45, 1.5);
        near("speculative_endpoints", 15.4, 3.0);
        near("conservative_sector", 88.3, 2.5);
        assert!(r.scores.methods["exact_sweep"].accuracy >= 96.0);
        assert_eq!(r.scores.methods["conservative_sector"].under_points, 0);
    }

    #[test]
    fn row_intervals_match_classifying_every_point() {
        let mut rots = random_rotations(3, 11);
        // Also a box reaching the axis and a near-full turn about a grid axis.
        rots.push(RotatingBox {
            origin: Vec3::ZERO,
            axis: Vec3::X,
            arm: Vec3::Y,
            distance: 5.0,
            widths: Vec3::new(3.0, 14.0, 7.0),
            angle: 6.2,
        });
        for b in &rots {
            let fast = rotation_histogram(&RotationParams::new(b));
            let slow = brute_histogram(b);
            assert!(slow[1..].iter().any(|&n| n > 0));
            // Rounding differences (dot products in another order) only at faces.
            assert!(
                differing_points(&[fast], &[slow]) <= 3,
                "{b:?}\n{fast:?}\n{slow:?}"
            );
        }
    }

    #[test]
    fn index_range_matches_the_comparison() {
        for (lo, hi) in [
            (-49.5, 49.5),
            (-60.0, 60.0),
            (0.0, 0.0),
            (0.5, 0.5),
            (-3.2, 7.9),
            (49.6, 80.0),
            (-80.0, -49.6),
            (2.0, 1.0),
            (f32::NAN, 1.0),
        ] {
            let (a, b) = index_range(lo, hi);
            for i in 0..GRID_SIDE as i32 {
                let x = grid_coord(i);
                assert_eq!((a..=b).contains(&i), lo <= x && x <= hi, "{lo} {hi} {i}");
            }
        }
    }

    #[test]
    fn scores_follow_the_definitions() {
        let mut h = [0u32; 64];
        h[bits::REFERENCE as usize] = 10; // reference only
        h[(bits::REFERENCE | bits::SECTOR) as usize] = 30;
        h[bits::SECTOR as usize] = 10;
        h[0] = 100; // neither: not part of the union
        let (acc, over, under, missed) = score(&h, bits::REFERENCE, bits::SECTOR).unwrap();
        assert_eq!((acc, over, under, missed), (60.0, 20.0, 20.0, 10));
        assert!(score(&h, bits::SPECULATIVE, bits::EXACT_SWEEP).is_none());
    }

    #[test]
    fn report_has_every_method_bin_and_the_thesis() {
        let rots = random_rotations(25, 3);
        let hists = cpu_histograms(&rots, None).unwrap();
        let r = build_report(&rots, &hists, 3).unwrap();
        assert_eq!(r.scores.methods.len(), 5);
        assert_eq!(r.angle_bins.len(), 36);
        assert_eq!(r.shape_bins.len(), 20);
        assert_eq!(r.shape_bins.iter().map(|b| b.rotations).sum::<u64>(), 25);
        assert_eq!(r.angle_bins.iter().map(|b| b.rotations).sum::<u64>(), 25);
        // 25 rotations over 36 angle bins: the empty ones hold no score (they held 0.0), the
        // others one per method.
        assert!(r.angle_bins.iter().any(|b| b.rotations == 0));
        for b in &r.angle_bins {
            let want = if b.rotations == 0 { 0 } else { 5 };
            assert_eq!(b.methods.len(), want, "{b:?}");
        }
        assert_eq!(r.thesis["sector"].accuracy, 67.68);
        assert_eq!(r.thesis["speculative"].over, 93.90);
        // Enclosing shapes never miss a point of what they enclose.
        assert_eq!(r.scores.methods["conservative_sector"].under_points, 0);
        assert_eq!(
            r.scores.methods_vs_exact["conservative_sector"].under_points,
            0
        );
        assert_eq!(r.scores.methods["exact_sweep"].under_points, 0);
        let g = &r.groups;
        let ref_points: u64 = hists
            .iter()
            .flat_map(|h| h.iter().enumerate())
            .filter(|(m, _)| *m as u32 & bits::REFERENCE != 0)
            .map(|(_, &n)| n as u64)
            .sum();
        assert_eq!(g.a + g.d + g.e + g.g, ref_points);
        assert!(serde_json::to_string(&r).is_ok());
        assert!(r.table().contains("conservative_sector"));
        assert!(run_cpu(0, 1, None).is_err());
        assert!(build_report(&rots[..2], &hists, 3).is_err());
        let mut bad = rots[0];
        bad.angle = f32::NAN;
        assert!(matches!(
            cpu_histograms(&[rots[1], bad], None),
            Err(Error::InvalidObject { index: 1, .. })
        ));
        bad.angle = 7.0;
        assert!(cpu_histograms(&[bad], None).is_err());
    }
}

#[cfg(test)]
mod gpu_tests {
    use super::*;
    use crate::run::gpu::test_gpu;
    use sweepfan::gpu::SectorExperimentGpu;

    #[test]
    fn gpu_histograms_match_the_cpu() {
        let Some(ctx) = test_gpu() else { return };
        let rotations = random_rotations(450, 5);
        let mut gpu = SectorExperimentGpu::new(&ctx).unwrap();
        // Two batches through the same buffers: the first needs a 2D dispatch (430 x 157
        // groups > 65,535), the second is partial.
        gpu.batch = 430;
        let done = std::sync::atomic::AtomicU64::new(0);
        let progress = |n: u64| {
            done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        };
        let g = gpu
            .box_histograms(&ctx, &rotations, Some(&progress))
            .unwrap();
        assert_eq!(done.into_inner(), 450);
        let c = cpu_histograms(&rotations, None).unwrap();
        assert_eq!(g.len(), c.len());
        let differing = differing_points(&c, &g);
        let total = 450 * GRID_POINTS as u64;
        eprintln!("GPU vs CPU: {differing} of {total} points differ");
        assert!(
            (differing as f64) < ROUNDING_BAND * total as f64,
            "{differing} of {total}"
        );
        let (rc, rg) = (
            build_report(&rotations, &c, 5).unwrap(),
            build_report(&rotations, &g, 5).unwrap(),
        );
        for (name, _) in METHODS {
            let (a, b) = (&rc.scores.methods[name], &rg.scores.methods[name]);
            assert!((a.accuracy - b.accuracy).abs() < 0.01, "{name}");
            assert!((a.over - b.over).abs() < 0.01, "{name}");
            assert!((a.under - b.under).abs() < 0.01, "{name}");
        }
        // Non-trivial: the shapes hold points.
        assert!(rc.scores.methods["sector"].accuracy > 30.0);
        let mut bad = rotations[0];
        bad.widths.y = f32::INFINITY;
        assert!(matches!(
            gpu.box_histograms(&ctx, &[bad], None),
            Err(Error::InvalidObject { index: 0, .. })
        ));
        assert!(run_gpu(&ctx, 0, 1, None).is_err());
    }
}
