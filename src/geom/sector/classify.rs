//! The per-point classifier of the sector accuracy experiment (docs/design.md, sector
//! accuracy): a 100^3 grid, six membership bits per point, and the per-rotation constants
//! ([`RotationParams`]) that the CPU (`cpu::sector_grid`) and the GPU (`gpu::sector::accuracy`)
//! both evaluate the same way.

use crate::error::{Error, Result};
use crate::geom::aabb::Aabb;
use crate::geom::sector::swept_box::GammaArcs;
use crate::geom::sector::{RotatingBox, Sector};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
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
    /// Swept by the box at one of the reference's 101 poses.
    pub const REFERENCE: u32 = 1;
    /// Inside the speculative AABB.
    pub const SPECULATIVE: u32 = 2;
    /// Inside the AABB of the start and end poses.
    pub const SPECULATIVE_ENDPOINTS: u32 = 4;
    /// Inside the thesis sector.
    pub const SECTOR: u32 = 8;
    /// Inside the conservative sector.
    pub const CONSERVATIVE_SECTOR: u32 = 16;
    /// Swept by the box at some angle of the continuous rotation.
    pub const EXACT_SWEEP: u32 = 32;
}

/// Per-rotation count of grid points for each of the 64 membership masks.
pub type Histogram = [u32; 64];

/// The methods scored against the 100-step reference, with their bits; `sector` names the bit
/// [`bits::SECTOR`] (the thesis's sector, or the general pose's piece union).
pub const fn methods(sector: &'static str) -> [(&'static str, u32); 5] {
    [
        ("speculative", bits::SPECULATIVE),
        ("speculative_endpoints", bits::SPECULATIVE_ENDPOINTS),
        (sector, bits::SECTOR),
        ("conservative_sector", bits::CONSERVATIVE_SECTOR),
        ("exact_sweep", bits::EXACT_SWEEP),
    ]
}

/// The methods scored against the exact continuous sweep (docs/design.md §5.3 "Ground truth"),
/// `sector` as in [`methods`].
pub const fn methods_vs_exact(sector: &'static str) -> [(&'static str, u32); 5] {
    [
        ("reference", bits::REFERENCE),
        ("speculative", bits::SPECULATIVE),
        ("speculative_endpoints", bits::SPECULATIVE_ENDPOINTS),
        (sector, bits::SECTOR),
        ("conservative_sector", bits::CONSERVATIVE_SECTOR),
    ]
}

/// The thesis pose's methods scored against the 100-step reference.
pub const METHODS: [(&str, u32); 5] = methods("sector");

/// The thesis pose's methods scored against the exact sweep.
pub const METHODS_VS_EXACT: [(&str, u32); 5] = methods_vs_exact("sector");

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
    /// Speculative AABB max (w unused).
    pub speculative_max: [f32; 4],
    /// Start/end-pose AABB min, max (w unused).
    pub endpoints_min: [f32; 4],
    /// Start/end-pose AABB max (w unused).
    pub endpoints_max: [f32; 4],
}

/// `v` with `w` appended, as a `vec4<f32>`.
pub(crate) fn v4(v: Vec3, w: f32) -> [f32; 4] {
    [v.x, v.y, v.z, w]
}

/// The x, y, z of a `vec4<f32>` (w dropped).
pub fn v3(a: [f32; 4]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

/// A sector as the two `vec4`s of `RotationParams`: centre axis with cos(half-angle), and
/// inner radius^2, outer radius^2, full ring (1 or 0), unused.
pub(crate) fn sector_fields(s: &Sector) -> ([f32; 4], [f32; 4]) {
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
}

/// One rotation of an accuracy experiment as the grid walk reads it (docs/design.md §5.8): the
/// thesis's box ([`RotationParams`], its own sector among the shapes) is one pose, any convex
/// body in any pose (`free_classify::FreeRotation`) the other. The CPU walk
/// (`cpu::sector_grid::pose_histograms`) and the GPU runner (`gpu::sector::accuracy`) take
/// either.
pub trait AccuracyPose: Sync {
    /// The speculative AABB (bit [`bits::SPECULATIVE`]).
    fn speculative(&self) -> Aabb;
    /// The AABB of the start and end poses (bit [`bits::SPECULATIVE_ENDPOINTS`]).
    fn endpoints(&self) -> Aabb;
    /// The x indices of the grid row (y, z) to classify one by one, a superset of the points
    /// any shape but the two AABBs holds.
    fn candidates(&self, y: f32, z: f32) -> (i32, i32);
    /// The membership mask of one point.
    fn classify(&self, p: Vec3) -> u32;
}

impl AccuracyPose for RotationParams {
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

    fn candidates(&self, y: f32, z: f32) -> (i32, i32) {
        let (r, h) = (self.half_widths[2], self.half_widths[3]);
        candidate_range(v3(self.origin), v3(self.axis), r, h, y, z)
    }

    #[inline]
    fn classify(&self, p: Vec3) -> u32 {
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

/// The thesis's point test (eq. 2.7, `x >= cos(theta) |q|`) on precomputed fields (|z| <= h
/// already checked), as the accuracy experiment's shader takes it. `Sector::contains_local`
/// tests the wedge by sides instead (docs/design.md §5.3). Kept for the reproduction: below
/// about 3.5e-4 rad `cos(theta)` rounds to 1 and this over-counts (a turn alpha uniform in
/// [0, 2 pi] gives such a half-angle about once in 9,000 rotations).
#[inline(always)]
pub(crate) fn in_sector(q: Vec3, rho2: f32, axis: [f32; 4], radii: [f32; 4]) -> bool {
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

/// The x indices of a row (y, z) that may lie in a cylinder of radius `r_bound` about the
/// line through `o` along the unit `u`, within `h_bound` of `o` along it (the conservative
/// sector's bound), padded by one index. A superset is all that matters.
pub(crate) fn candidate_range(
    o: Vec3,
    u: Vec3,
    r_bound: f32,
    h_bound: f32,
    y: f32,
    z: f32,
) -> (i32, i32) {
    let q = Vec3::new(0.0, y, z) - o; // the row is q + t e_x
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

/// Checks a rotation list for this experiment ([`crate::geom::Validate`]'s convention):
/// [`crate::geom::Validate::problem`], and an angle of at most 2 pi.
pub(crate) fn validate_rotations(rotations: &[RotatingBox]) -> Result<()> {
    crate::geom::check_u32_count(rotations.len(), "rotating boxes")?;
    crate::geom::check_each(rotations, |b, index| {
        let problem = crate::geom::Validate::problem(b)
            .or((b.angle > TAU).then(|| "angle must be in [0, 2 pi]".to_string()));
        match problem {
            Some(problem) => Err(Error::InvalidObject {
                index,
                problem: format!("rotating box: {problem}"),
            }),
            None => Ok(()),
        }
    })
}

/// Each rotation's constants, after [`validate_rotations`].
pub(crate) fn rotation_params(rotations: &[RotatingBox]) -> Result<Vec<RotationParams>> {
    validate_rotations(rotations)?;
    Ok(rotations.iter().map(RotationParams::new).collect())
}

/// Bin 0 (points in no shape) is the rest of the grid: kernels only count the other bins.
pub(crate) fn fill_empty_bin(hist: &mut Histogram) {
    let counted: u32 = hist[1..].iter().sum();
    hist[0] = GRID_POINTS - counted;
}
