//! The per-point classifier of the generalised accuracy experiment (`reproduce sector --pose
//! free`, docs/design.md §5.8): any body in any pose, the thesis's 100^3 grid and 100-step
//! reference. The per-rotation constants ([`FreeRotation`]) are what the CPU
//! (`cpu::sector_grid::pose_histograms`) and the GPU (`gpu::sector::free_accuracy`) both read.

use super::body::RotatingBody;
use super::classify::{
    AccuracyPose, REFERENCE_STEPS, candidate_range, methods, methods_vs_exact, v3, v4,
};
use super::exact_sweep::{Quadric, Turn, sweep_membership};
use super::general::{GeneralSweep, LocalSector, in_local_sector};
use crate::error::Result;
use crate::geom::aabb::Aabb;
use bytemuck::{Pod, Zeroable};
use glam::{DVec3, Vec3};

/// Membership bits: the thesis experiment's, with the sub-piece union where the thesis's
/// sector was (that sector is defined for the thesis's pose only).
pub mod bits {
    pub use super::super::classify::bits::{
        CONSERVATIVE_SECTOR, EXACT_SWEEP, REFERENCE, SPECULATIVE, SPECULATIVE_ENDPOINTS,
    };
    /// Inside the union of the sub-piece sectors (the thesis sector's bit).
    pub const PIECE_UNION: u32 = super::super::classify::bits::SECTOR;
}

/// The methods scored against the 100-step reference.
pub const METHODS: [(&str, u32); 5] = methods("piece_union");

/// The methods scored against the exact sweep.
pub const METHODS_VS_EXACT: [(&str, u32); 5] = methods_vs_exact("piece_union");

/// Pieces per axis of the sub-piece union (2^3 octants).
pub(crate) const PIECE_SPLIT: u32 = 2;
/// Most pieces a rotation carries.
pub(crate) const MAX_PIECES: usize = 8;
/// Most clauses of a body (a capsule has three: its two balls and its side).
pub(crate) const MAX_CLAUSES: usize = 3;

/// Slack of the gate inside which the sweeps are tested (grid units, radians): the truth is
/// computed a little beyond the conservative sector, so a sector that missed would show.
const GATE_SLACK: f64 = 0.01;
const GATE_ANGLE_SLACK: f64 = 1e-3;

/// Per-rotation constants, 34 `vec4` (shaders/sector/free_accuracy.wgsl `Rotation`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FreeRotationParams {
    /// O; w = alpha (>= 0: U is flipped for negative turns).
    pub origin: [f32; 4],
    /// e1; w = cos alpha.
    pub e1: [f32; 4],
    /// e2 = U x e1; w = sin alpha.
    pub e2: [f32; 4],
    /// U; w = tan(half-turn / 4), the quartics' u range.
    pub axis: [f32; 4],
    /// Per half-turn j: cos c_j, sin c_j, cos 2c_j, sin 2c_j.
    pub halves: [[f32; 4]; 2],
    /// First constraint, clause count, half-turn count, piece count.
    pub counts: [u32; 4],
    /// End (exclusive) of each clause's constraints; w unused.
    pub clause_ends: [u32; 4],
    /// The conservative sector, as `LocalSector::fields`.
    pub conservative: [[f32; 4]; 2],
    /// The conservative sector grown by the gate slack.
    pub gate: [[f32; 4]; 2],
    /// The sub-piece sectors, as `LocalSector::fields`; the first `counts[3]` are used.
    pub pieces: [[[f32; 4]; 2]; MAX_PIECES],
    /// Row candidates: centre of the gate's axial range (xyz), gate radius (w); then the
    /// gate's axial half-range (x).
    pub bound: [f32; 4],
    /// The gate's axial half-range (x); y, z, w unused.
    pub bound_half: [f32; 4],
    /// Speculative AABB min (w unused).
    pub speculative_min: [f32; 4],
    /// Speculative AABB max (w unused).
    pub speculative_max: [f32; 4],
    /// Start/end-pose AABB min (w unused).
    pub endpoints_min: [f32; 4],
    /// Start/end-pose AABB max (w unused).
    pub endpoints_max: [f32; 4],
}

/// A quadric for the GPU: (xx, yy, zz, xy), (xz, yz, lx, ly), (lz, k, max |M|, |l|).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ConstraintRow(pub [[f32; 4]; 3]);

impl ConstraintRow {
    /// The quadric `q` in f32, with its term magnitudes.
    pub fn new(q: &Quadric) -> Self {
        let m = q.m.map(|v| v as f32);
        let l = q.l.map(|v| v as f32);
        let (mmax, ln) = q.magnitudes();
        Self([
            [m[0], m[1], m[2], m[3]],
            [m[4], m[5], l[0], l[1]],
            [l[2], q.k as f32, mmax as f32, ln as f32],
        ])
    }

    /// The f32 quadric back in f64, exactly as the GPU reads it.
    pub fn quadric(&self) -> Quadric {
        let [a, b, c] = self.0.map(|v| v.map(|x| x as f64));
        Quadric {
            m: [a[0], a[1], a[2], a[3], b[0], b[1]],
            l: [b[2], b[3], c[0]],
            k: c[1],
        }
    }
}

/// One rotation as the classifiers read it.
#[derive(Clone, Debug)]
pub struct FreeRotation {
    /// The constants the GPU reads, one `Rotation` of the shader.
    pub params: FreeRotationParams,
    /// The body's quadric constraints, clause after clause (`params.clause_ends`).
    pub constraints: Vec<ConstraintRow>,
    /// (cos t_k, sin t_k) of the reference's 101 poses.
    pub steps: Vec<[f32; 2]>,
    /// The constraints as the CPU evaluates them (the f32 rows in f64), by clause.
    clauses: Vec<Vec<Quadric>>,
    turn: Turn,
    steps64: Vec<(f64, f64)>,
}

fn grown(s: &LocalSector) -> LocalSector {
    LocalSector {
        centre: s.centre,
        half_angle: (s.half_angle + GATE_ANGLE_SLACK).min(std::f64::consts::PI),
        r_min: (s.r_min - GATE_SLACK).max(0.0),
        r_max: s.r_max + GATE_SLACK,
        z_min: s.z_min - GATE_SLACK,
        z_max: s.z_max + GATE_SLACK,
    }
}

impl FreeRotation {
    /// Precomputes one rotation. Fails on an invalid body or more than `MAX_CLAUSES`.
    pub fn new(r: &RotatingBody, index: usize) -> Result<Self> {
        crate::geom::Validate::check(r, index)?;
        let g = GeneralSweep::new(r);
        let f = &g.frame;
        let alpha = f.alpha;
        let cons = g.conservative();
        let gate = grown(&cons);
        let pieces = g.piece_sectors(&r.body, PIECE_SPLIT);
        let mut p = FreeRotationParams {
            origin: v4(f.origin.as_vec3(), alpha as f32),
            e1: v4(f.e1.as_vec3(), alpha.cos() as f32),
            e2: v4(f.e2.as_vec3(), alpha.sin() as f32),
            axis: v4(f.axis.as_vec3(), g.turn.w as f32),
            conservative: cons.fields(),
            gate: gate.fields(),
            ..Default::default()
        };
        for (dst, h) in p.halves.iter_mut().zip(&g.turn.halves) {
            *dst = h.map(|v| v as f32);
        }
        for (dst, s) in p.pieces.iter_mut().zip(&pieces) {
            *dst = s.fields();
        }
        let mut constraints = Vec::new();
        for (c, clause) in g.clauses.iter().enumerate().take(MAX_CLAUSES) {
            constraints.extend(clause.iter().map(ConstraintRow::new));
            p.clause_ends[c] = constraints.len() as u32;
        }
        p.counts = [
            0,
            g.clauses.len().min(MAX_CLAUSES) as u32,
            g.turn.half_count as u32,
            pieces.len().min(MAX_PIECES) as u32,
        ];
        let mid = 0.5 * (gate.z_min + gate.z_max);
        p.bound = v4((f.origin + f.axis * mid).as_vec3(), gate.r_max as f32);
        p.bound_half = [(0.5 * (gate.z_max - gate.z_min)) as f32, 0.0, 0.0, 0.0];
        let spec = r.speculative_aabb();
        let ends = r.speculative_endpoints();
        p.speculative_min = v4(spec.min, 0.0);
        p.speculative_max = v4(spec.max, 0.0);
        p.endpoints_min = v4(ends.min, 0.0);
        p.endpoints_max = v4(ends.max, 0.0);
        let steps64: Vec<(f64, f64)> = (0..=REFERENCE_STEPS)
            .map(|k| {
                let t = alpha * k as f64 / REFERENCE_STEPS as f64;
                (t.cos(), t.sin())
            })
            .collect();
        let steps = steps64.iter().map(|&(c, s)| [c as f32, s as f32]).collect();
        let mut clauses = Vec::new();
        let mut start = 0;
        for &end in &p.clause_ends[..p.counts[1] as usize] {
            let end = end as usize;
            clauses.push(
                constraints[start..end]
                    .iter()
                    .map(|c| c.quadric())
                    .collect(),
            );
            start = end;
        }
        // The CPU reads the f32 step poses too.
        let steps64 = steps64
            .iter()
            .map(|&(c, s)| (c as f32 as f64, s as f32 as f64))
            .collect();
        Ok(Self {
            params: p,
            constraints,
            steps,
            clauses,
            turn: g.turn,
            steps64,
        })
    }

    /// The exact sweep test alone, at a frame point.
    pub fn exact(&self, q: DVec3) -> bool {
        sweep_membership(
            self.clauses.iter().map(|c| c.as_slice()),
            &self.turn,
            q,
            &[],
        )
        .0
    }
}

impl AccuracyPose for FreeRotation {
    fn speculative(&self) -> Aabb {
        Aabb::new(
            v3(self.params.speculative_min),
            v3(self.params.speculative_max),
        )
    }

    fn endpoints(&self) -> Aabb {
        Aabb::new(v3(self.params.endpoints_min), v3(self.params.endpoints_max))
    }

    /// The gate's cylinder and slab.
    fn candidates(&self, y: f32, z: f32) -> (i32, i32) {
        let p = &self.params;
        let (centre, radius, half) = (v3(p.bound), p.bound[3], p.bound_half[0]);
        candidate_range(centre, v3(p.axis), radius, half, y, z)
    }

    /// The membership mask of one grid point (the GPU twin is `classify` in
    /// shaders/sector/free_accuracy.wgsl).
    fn classify(&self, p: Vec3) -> u32 {
        let r = &self.params;
        let mut mask = 0;
        if self.speculative().contains(p) {
            mask |= bits::SPECULATIVE;
        }
        if self.endpoints().contains(p) {
            mask |= bits::SPECULATIVE_ENDPOINTS;
        }
        let q = p - v3(r.origin);
        let (x, y, z) = (q.dot(v3(r.e1)), q.dot(v3(r.e2)), q.dot(v3(r.axis)));
        if in_local_sector(&r.conservative, x, y, z) {
            mask |= bits::CONSERVATIVE_SECTOR;
        }
        let pieces = &r.pieces[..r.counts[3] as usize];
        if pieces.iter().any(|s| in_local_sector(s, x, y, z)) {
            mask |= bits::PIECE_UNION;
        }
        if in_local_sector(&r.gate, x, y, z) {
            let (exact, reference) = sweep_membership(
                self.clauses.iter().map(|c| c.as_slice()),
                &self.turn,
                DVec3::new(x as f64, y as f64, z as f64),
                &self.steps64,
            );
            mask |= (bits::EXACT_SWEEP * exact as u32) | (bits::REFERENCE * reference as u32);
        }
        mask
    }
}

/// Each rotation's constants, checked (the index of a bad one is named).
pub fn free_rotations(rotations: &[RotatingBody]) -> Result<Vec<FreeRotation>> {
    rotations
        .iter()
        .enumerate()
        .map(|(i, r)| FreeRotation::new(r, i))
        .collect()
}
