//! The sector accuracy experiment of thesis 3.1 (SPEC 4.4) on the CPU.
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

use super::sector_speed::THESIS_JSON;
use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sector::{RotatingBox, Sector};
use crate::geom::swept_box::GammaArcs;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::f32::consts::{PI, TAU};

/// Grid points per axis.
pub const GRID_SIDE: u32 = 100;
/// Points classified per rotation.
pub const GRID_POINTS: u32 = GRID_SIDE * GRID_SIDE * GRID_SIDE;
/// Steps of the thesis's reference ("detailed DCCD"): 101 poses.
pub const REFERENCE_STEPS: u32 = 100;
/// Default seed of the rotation list.
pub const DEFAULT_SEED: u64 = 2024;

/// Membership bits of the mask.
pub mod bits {
    pub const REFERENCE: u32 = 1;
    pub const SPECULATIVE: u32 = 2;
    pub const SPECULATIVE_ENDPOINTS: u32 = 4;
    pub const SECTOR: u32 = 8;
    pub const CONSERVATIVE_SECTOR: u32 = 16;
    pub const EXACT_SWEEP: u32 = 32;
}

/// Per-rotation count of grid points for each of the 64 membership masks.
pub type Histogram = [u32; 64];

/// The methods scored against the 100-step reference, with their bits.
pub const METHODS: [(&str, u32); 5] = [
    ("speculative", bits::SPECULATIVE),
    ("speculative_endpoints", bits::SPECULATIVE_ENDPOINTS),
    ("sector", bits::SECTOR),
    ("conservative_sector", bits::CONSERVATIVE_SECTOR),
    ("exact_sweep", bits::EXACT_SWEEP),
];

/// The methods scored against the exact continuous sweep (SPEC 4.3 "Ground truth").
pub const METHODS_VS_EXACT: [(&str, u32); 5] = [
    ("reference", bits::REFERENCE),
    ("speculative", bits::SPECULATIVE),
    ("speculative_endpoints", bits::SPECULATIVE_ENDPOINTS),
    ("sector", bits::SECTOR),
    ("conservative_sector", bits::CONSERVATIVE_SECTOR),
];

/// Grid coordinate of index i: -49.5 + i (exact in f32).
#[inline(always)]
pub fn grid_coord(i: i32) -> f32 {
    i as f32 - 0.5 * (GRID_SIDE - 1) as f32
}

/// Slack of the candidate bound around the conservative sector (grid units and radians). Only
/// decides which points are classified one by one; any slack > rounding gives the same result.
const BOUND_SLACK: f32 = 0.01;
const ANGLE_SLACK: f32 = 1e-3;

/// Everything the per-point test needs for one rotation, computed once on the CPU so the GPU
/// sees the very same numbers. Laid out as 14 `vec4<f32>` (shaders/sector.wgsl `Rotation`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RotationParams {
    /// Rotation centre O (w unused).
    pub origin: [f32; 4],
    /// e1 = Y' at the start pose; w = |P - O|.
    pub arm: [f32; 4],
    /// e2 = U x Y'; w = alpha.
    pub sweep_dir: [f32; 4],
    /// U; w = Wz / 2.
    pub axis: [f32; 4],
    /// Wx / 2, Wy / 2, candidate cylinder radius, candidate slab half-height.
    pub half_widths: [f32; 4],
    /// Thesis sector: centre axis A; w = cos(theta).
    pub sector_axis: [f32; 4],
    /// Thesis sector: r^2, R^2, full ring (1 or 0), unused.
    pub sector_radii: [f32; 4],
    /// Conservative sector: centre axis; w = cos(theta').
    pub conservative_axis: [f32; 4],
    /// Conservative sector: r'^2, R'^2, full ring (1 or 0), unused.
    pub conservative_radii: [f32; 4],
    /// Loosened conservative sector gating the arc tests: (r' - slack)^2, (R' + slack)^2,
    /// cos(theta' + slack) (or -2 for a full ring), unused.
    pub gate: [f32; 4],
    /// Speculative AABB min, max (w unused).
    pub speculative_min: [f32; 4],
    pub speculative_max: [f32; 4],
    /// Start/end-pose AABB min, max (w unused).
    pub endpoints_min: [f32; 4],
    pub endpoints_max: [f32; 4],
}

fn v4(v: Vec3, w: f32) -> [f32; 4] {
    [v.x, v.y, v.z, w]
}

fn v3(a: [f32; 4]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

fn sector_fields(s: &Sector) -> ([f32; 4], [f32; 4]) {
    (
        v4(s.centre_axis, s.half_angle.cos()),
        [
            s.inner_radius * s.inner_radius,
            s.outer_radius * s.outer_radius,
            if s.is_full_ring() { 1.0 } else { 0.0 },
            0.0,
        ],
    )
}

impl RotationParams {
    /// Precomputes the shapes of one rotating box.
    pub fn new(b: &RotatingBox) -> Self {
        let (sector_axis, sector_radii) = sector_fields(&b.sector());
        let cons = b.conservative_sector();
        let (conservative_axis, conservative_radii) = sector_fields(&cons);
        let gate_inner = (cons.inner_radius - BOUND_SLACK).max(0.0);
        let gate_outer = cons.outer_radius + BOUND_SLACK;
        let gate_cos = if cons.half_angle + ANGLE_SLACK >= PI {
            -2.0
        } else {
            (cons.half_angle + ANGLE_SLACK).cos()
        };
        let spec = b.speculative_aabb();
        let ends = b.speculative_endpoints();
        Self {
            origin: v4(b.origin, 0.0),
            arm: v4(b.arm, b.distance),
            sweep_dir: v4(b.sweep_direction(), b.angle),
            axis: v4(b.axis, 0.5 * b.widths.z),
            half_widths: [
                0.5 * b.widths.x,
                0.5 * b.widths.y,
                gate_outer,
                0.5 * b.widths.z + BOUND_SLACK,
            ],
            sector_axis,
            sector_radii,
            conservative_axis,
            conservative_radii,
            gate: [
                gate_inner * gate_inner,
                gate_outer * gate_outer,
                gate_cos,
                0.0,
            ],
            speculative_min: v4(spec.min, 0.0),
            speculative_max: v4(spec.max, 0.0),
            endpoints_min: v4(ends.min, 0.0),
            endpoints_max: v4(ends.max, 0.0),
        }
    }

    fn speculative(&self) -> Aabb {
        Aabb {
            min: v3(self.speculative_min),
            max: v3(self.speculative_max),
        }
    }

    fn endpoints(&self) -> Aabb {
        Aabb {
            min: v3(self.endpoints_min),
            max: v3(self.endpoints_max),
        }
    }

    /// The membership mask of one point.
    #[inline]
    pub fn classify(&self, p: Vec3) -> u32 {
        let mut mask = 0;
        if self.speculative().contains(p) {
            mask |= bits::SPECULATIVE;
        }
        if self.endpoints().contains(p) {
            mask |= bits::SPECULATIVE_ENDPOINTS;
        }
        let q = p - v3(self.origin);
        let z = q.dot(v3(self.axis));
        if z.abs() > self.axis[3] {
            return mask; // every other shape has half-thickness Wz / 2
        }
        let x = q.dot(v3(self.arm));
        let y = q.dot(v3(self.sweep_dir));
        let rho2 = x * x + y * y;
        if in_sector(q, rho2, self.sector_axis, self.sector_radii) {
            mask |= bits::SECTOR;
        }
        if in_sector(q, rho2, self.conservative_axis, self.conservative_radii) {
            mask |= bits::CONSERVATIVE_SECTOR;
        }
        // The sweep lies inside the conservative sector: skip the arcs well outside it.
        let gate = self.gate;
        let near_sweep = rho2 >= gate[0]
            && rho2 <= gate[1]
            && q.dot(v3(self.conservative_axis)) >= gate[2] * rho2.sqrt();
        if near_sweep {
            let rho = rho2.sqrt();
            let beta = y.atan2(x);
            let alpha = self.sweep_dir[3];
            let arcs = GammaArcs::new(rho, self.arm[3], self.half_widths[0], self.half_widths[1]);
            if arcs.swept_discretely(beta, alpha, REFERENCE_STEPS) {
                mask |= bits::REFERENCE;
            }
            if arcs.swept_continuously(beta, alpha) {
                mask |= bits::EXACT_SWEEP;
            }
        }
        mask
    }
}

/// `Sector::contains_local` on precomputed fields (|z| <= h already checked).
#[inline(always)]
fn in_sector(q: Vec3, rho2: f32, axis: [f32; 4], radii: [f32; 4]) -> bool {
    rho2 >= radii[0]
        && rho2 <= radii[1]
        && (radii[2] != 0.0 || q.dot(v3(axis)) >= axis[3] * rho2.sqrt())
}

/// Grid indices i in 0..GRID_SIDE with lo <= grid_coord(i) <= hi, as an inclusive range
/// (empty when first > last). Exactly the points the comparison accepts: the guess from ceil /
/// floor is corrected with the same comparison.
#[inline]
pub fn index_range(lo: f32, hi: f32) -> (i32, i32) {
    let n = GRID_SIDE as i32;
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return (0, -1);
    }
    let offset = 0.5 * (GRID_SIDE - 1) as f32;
    let mut a = (lo + offset).ceil().clamp(0.0, n as f32) as i32;
    while a > 0 && grid_coord(a - 1) >= lo {
        a -= 1;
    }
    while a < n && grid_coord(a) < lo {
        a += 1;
    }
    let mut b = (hi + offset).floor().clamp(-1.0, (n - 1) as f32) as i32;
    while b < n - 1 && grid_coord(b + 1) <= hi {
        b += 1;
    }
    while b >= 0 && grid_coord(b) > hi {
        b -= 1;
    }
    (a, b)
}

#[inline(always)]
fn range_len(r: (i32, i32)) -> u32 {
    (r.1 - r.0 + 1).max(0) as u32
}

#[inline(always)]
fn overlap(a: (i32, i32), b: (i32, i32)) -> (i32, i32) {
    (a.0.max(b.0), a.1.min(b.1))
}

/// The x indices of a row (y, z) that may lie in the conservative sector: the row's
/// intersection with its cylinder (radius `half_widths[2]` about U) and slab (|z| <=
/// `half_widths[3]`), padded by one index. A superset is all that matters.
fn candidate_range(p: &RotationParams, y: f32, z: f32) -> (i32, i32) {
    let o = v3(p.origin);
    let u = v3(p.axis);
    let q = Vec3::new(0.0, y, z) - o; // the row is q + t e_x
    let (r_bound, h_bound) = (p.half_widths[2], p.half_widths[3]);
    let ux = u.x;
    let c0 = q.dot(u);
    let (mut t_lo, mut t_hi) = (-1e4_f32, 1e4_f32);
    // Slab: |ux t + c0| <= h.
    if ux.abs() < 1e-6 {
        if c0.abs() > h_bound {
            return (0, -1);
        }
    } else {
        let a = (-h_bound - c0) / ux;
        let b = (h_bound - c0) / ux;
        t_lo = t_lo.max(a.min(b));
        t_hi = t_hi.min(a.max(b));
    }
    // Cylinder: in-plane distance of q + t e_x to the axis <= R.
    let q_perp = q - c0 * u;
    let e_perp = Vec3::X - ux * u;
    let a = e_perp.length_squared();
    if a > 1e-4 {
        let t0 = -q_perp.dot(e_perp) / a;
        let d2 = (q_perp + t0 * e_perp).length_squared();
        let room = r_bound * r_bound - d2;
        if room < 0.0 {
            return (0, -1);
        }
        let half = (room / a).sqrt();
        t_lo = t_lo.max(t0 - half);
        t_hi = t_hi.min(t0 + half);
    } else if q_perp.length_squared() > r_bound * r_bound + 1.0 {
        // Row nearly parallel to U: its distance to the axis barely changes along it.
        return (0, -1);
    }
    if t_lo > t_hi {
        return (0, -1);
    }
    let offset = 0.5 * (GRID_SIDE - 1) as f32;
    let n = GRID_SIDE as i32;
    let lo = ((t_lo + offset).floor() - 1.0).clamp(0.0, n as f32) as i32;
    let hi = ((t_hi + offset).ceil() + 1.0).clamp(-1.0, (n - 1) as f32) as i32;
    (lo, hi)
}

/// The 64-bin histogram of one rotation.
pub fn rotation_histogram(p: &RotationParams) -> Histogram {
    let mut hist = [0u32; 64];
    let spec = p.speculative();
    let ends = p.endpoints();
    let in_span = |v: f32, lo: f32, hi: f32| lo <= v && v <= hi;
    for k in 0..GRID_SIDE as i32 {
        let z = grid_coord(k);
        for j in 0..GRID_SIDE as i32 {
            let y = grid_coord(j);
            let s = if in_span(y, spec.min.y, spec.max.y) && in_span(z, spec.min.z, spec.max.z) {
                index_range(spec.min.x, spec.max.x)
            } else {
                (0, -1)
            };
            let e = if in_span(y, ends.min.y, ends.max.y) && in_span(z, ends.min.z, ends.max.z) {
                index_range(ends.min.x, ends.max.x)
            } else {
                (0, -1)
            };
            let c = candidate_range(p, y, z);
            for i in c.0..=c.1 {
                hist[p.classify(Vec3::new(grid_coord(i), y, z)) as usize] += 1;
            }
            // Outside the candidate range only the two AABB bits can be set.
            let se = overlap(s, e);
            let both = range_len(se) - range_len(overlap(se, c));
            let spec_only = range_len(s) - range_len(overlap(s, c)) - both;
            let ends_only = range_len(e) - range_len(overlap(e, c)) - both;
            hist[(bits::SPECULATIVE | bits::SPECULATIVE_ENDPOINTS) as usize] += both;
            hist[bits::SPECULATIVE as usize] += spec_only;
            hist[bits::SPECULATIVE_ENDPOINTS as usize] += ends_only;
        }
    }
    fill_empty_bin(&mut hist);
    hist
}

/// Bin 0 (points in no shape) is the rest of the grid: kernels only count the other bins.
pub fn fill_empty_bin(hist: &mut Histogram) {
    let counted: u32 = hist[1..].iter().sum();
    hist[0] = GRID_POINTS - counted;
}

/// The rotation list of the experiment: `count` draws of [`random_rotation`] from a ChaCha8
/// generator seeded with `seed`, so CPU and GPU runs score the same rotations.
pub fn random_rotations(count: usize, seed: u64) -> Vec<RotatingBox> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|_| random_rotation(&mut rng)).collect()
}

/// One rotation of the experiment (SPEC 4.4, thesis 3.1): O = origin, U uniform on the sphere,
/// Y' uniform perpendicular to U, alpha in [0, 2 pi], |P - O| in [12.5, 25], widths in [0, 25].
pub fn random_rotation(rng: &mut impl Rng) -> RotatingBox {
    let uz: f64 = rng.random_range(-1.0..=1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let s = (1.0 - uz * uz).max(0.0).sqrt();
    let axis = glam::DVec3::new(s * phi.cos(), s * phi.sin(), uz).normalize();
    let b1 = axis.any_orthonormal_vector();
    let b2 = axis.cross(b1);
    let psi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let arm = (b1 * psi.cos() + b2 * psi.sin()).normalize();
    let angle: f32 = rng.random_range(0.0..=TAU);
    let distance: f32 = rng.random_range(12.5..=25.0);
    let widths = Vec3::new(
        rng.random_range(0.0..=25.0),
        rng.random_range(0.0..=25.0),
        rng.random_range(0.0..=25.0),
    );
    RotatingBox {
        origin: Vec3::ZERO,
        axis: axis.as_vec3(),
        arm: arm.as_vec3(),
        distance,
        widths,
        angle,
    }
}

/// Checks a rotation list for this experiment: [`RotatingBox::problem`], and an angle of at most
/// 2 pi.
pub fn validate_rotations(rotations: &[RotatingBox]) -> Result<()> {
    for (index, b) in rotations.iter().enumerate() {
        let problem = b
            .problem()
            .or((b.angle > TAU).then_some("angle must be in [0, 2 pi]"));
        if let Some(problem) = problem {
            return Err(Error::InvalidObject {
                index,
                problem: format!("rotating box: {problem}"),
            });
        }
    }
    Ok(())
}

/// Histograms of every rotation on the CPU (rayon over rotations). `progress` is called with
/// the number of rotations just finished.
pub fn cpu_histograms(
    rotations: &[RotatingBox],
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> Result<Vec<Histogram>> {
    validate_rotations(rotations)?;
    Ok(rotations
        .par_iter()
        .map(|b| {
            let h = rotation_histogram(&RotationParams::new(b));
            if let Some(f) = progress {
                f(1);
            }
            h
        })
        .collect())
}

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

fn mean_scores<'a>(
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

/// Accuracy / over / under as the thesis and the SPEC's Monte Carlo give them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublishedScore {
    pub accuracy: f64,
    pub over: f64,
    pub under: f64,
}

/// The full result of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectorAccuracyReport {
    pub rotations: u64,
    pub seed: u64,
    pub grid_points_per_rotation: u64,
    pub reference_steps: u32,
    /// Scored against the 100-step reference (the thesis's table 3.1). `speculative` is the
    /// start-pose AABB grown by the chord; `speculative_endpoints` the AABB of both end poses.
    pub methods: BTreeMap<String, MethodScore>,
    /// Scored against the exact continuous sweep.
    pub methods_vs_exact: BTreeMap<String, MethodScore>,
    pub groups: Groups,
    /// 36 bins of 10 degrees of the rotation angle (lo, hi in degrees).
    pub angle_bins: Vec<Bin>,
    /// 20 equal bins of rotations sorted by Wy - Wx (lo, hi: the Wy - Wx range of the bin).
    pub shape_bins: Vec<Bin>,
    /// Thesis table 3.1 (`reference/sector_thesis.json`), keyed like `methods`.
    pub thesis: BTreeMap<String, PublishedScore>,
    /// The SPEC's Monte Carlo of the same protocol (SPEC 4.3, 4.4).
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
                methods: mean_scores(members.iter().copied(), bits::REFERENCE, &METHODS),
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
                methods: mean_scores(idx.iter().map(|&i| &hists[i]), bits::REFERENCE, &METHODS),
            }
        })
        .collect();

    Ok(SectorAccuracyReport {
        rotations: rotations.len() as u64,
        seed,
        grid_points_per_rotation: GRID_POINTS as u64,
        reference_steps: REFERENCE_STEPS,
        methods,
        methods_vs_exact,
        groups: groups(hists),
        angle_bins,
        shape_bins,
        thesis: thesis_scores()?,
        spec_monte_carlo: spec_monte_carlo(),
    })
}

/// The rotation list of a run of `count` (>= 1) rotations: the same on every backend.
pub fn experiment_rotations(count: usize, seed: u64) -> Result<Vec<RotatingBox>> {
    if count == 0 {
        return Err(Error::Config(
            "sector experiment: --rotations must be at least 1".into(),
        ));
    }
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
    /// A plain-text table: ours against the reference, the thesis and the SPEC's Monte Carlo,
    /// then ours against the exact sweep.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let fmt3 = |s: Option<&PublishedScore>| match s {
            Some(s) => format!("{:6.2} {:6.2} {:6.2}", s.accuracy, s.over, s.under),
            None => format!("{:>20}", "-"),
        };
        let _ = writeln!(
            out,
            "sector accuracy, {} rotations x {} points (seed {}); acc / over / under in %",
            self.rotations, self.grid_points_per_rotation, self.seed
        );
        let _ = writeln!(
            out,
            "{:<22} {:>20} {:>12} {:>20} {:>20}",
            "vs 100-step reference", "ours", "missed pts", "thesis", "SPEC Monte Carlo"
        );
        for (name, _) in METHODS {
            let Some(m) = self.methods.get(name) else {
                continue;
            };
            let _ = writeln!(
                out,
                "{:<22} {:6.2} {:6.2} {:6.2} {:>12} {} {}",
                name,
                m.accuracy,
                m.over,
                m.under,
                m.under_points,
                fmt3(self.thesis.get(name)),
                fmt3(self.spec_monte_carlo.get(name))
            );
        }
        let _ = writeln!(
            out,
            "{:<22} {:>20} {:>12}",
            "vs exact sweep", "ours", "missed pts"
        );
        for (name, _) in METHODS_VS_EXACT {
            let Some(m) = self.methods_vs_exact.get(name) else {
                continue;
            };
            let _ = writeln!(
                out,
                "{:<22} {:6.2} {:6.2} {:6.2} {:>12}",
                name, m.accuracy, m.over, m.under, m.under_points
            );
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let got = r.methods[name].accuracy;
            assert!((got - acc).abs() < band, "{name}: {got} vs {acc}");
        };
        // SPEC 4.3/4.4 Monte Carlo of the protocol, not produced by this code.
        near("sector", 67.0, 5.0);
        near("speculative", 4.45, 1.5);
        near("speculative_endpoints", 15.4, 3.0);
        near("conservative_sector", 88.3, 2.5);
        assert!(r.methods["exact_sweep"].accuracy >= 96.0);
        assert_eq!(r.methods["conservative_sector"].under_points, 0);
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
        assert_eq!(r.methods.len(), 5);
        assert_eq!(r.angle_bins.len(), 36);
        assert_eq!(r.shape_bins.len(), 20);
        assert_eq!(r.shape_bins.iter().map(|b| b.rotations).sum::<u64>(), 25);
        assert_eq!(r.angle_bins.iter().map(|b| b.rotations).sum::<u64>(), 25);
        assert_eq!(r.thesis["sector"].accuracy, 67.68);
        assert_eq!(r.thesis["speculative"].over, 93.90);
        // Enclosing shapes never miss a point of what they enclose.
        assert_eq!(r.methods["conservative_sector"].under_points, 0);
        assert_eq!(r.methods_vs_exact["conservative_sector"].under_points, 0);
        assert_eq!(r.methods["exact_sweep"].under_points, 0);
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
