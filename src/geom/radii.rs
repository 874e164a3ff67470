//! The exponent histogram of radii and the giants rule read from it (docs/design.md §2.7): the
//! CPU grid (`cpu::grid::giants`), the GPU grid's `grid_frame` kernel (`shaders/sort/keys.wgsl`,
//! the same rule on the same histogram) and the partitioned broad phase (`partition`) set the
//! same objects aside.
//!
//! **The rule**: radii are binned by their f32 exponent (`(bits & 0x7fffffff) >> 23`), each bin
//! with its count and its largest radius, both exact and independent of order. Walking the
//! non-empty bins from the top, bins above bin `e` are set aside when they hold at most
//! [`giants_budget`] objects in all (a sixteenth of the scene, 32 to [`GIANTS_MAX`]; more than
//! `GIANTS_NEAR_MAX` only where the largest radius is more than `FAR_GIANT_RATIO` times bin
//! `e`'s) and the largest radius is more than twice bin `e`'s (`2 r` exact in f32): setting
//! them aside at least halves the cells. Bin 0 counts too: a few spheres among points (radius
//! 0, whose cells the grid sizes by the scene's bounds) are set aside. (It once did not: one
//! sphere of radius 50 among 100,000 points sized the cells, and the grid tested all 5 10^9
//! pairs.) The lowest such `e` wins (the most giants, the smallest cells). Then the cell radius
//! is bin `e`'s largest radius. Without such an `e`, no giants and the cell radius is the
//! largest radius. (The rule once asked the lowest bin above `e` to be two exponents above it,
//! every giant more than twice the others: a ladder of five radii 2.5, 5, 10, 20, 40 among
//! 500,000 unit spheres fills adjacent bins, so nothing was set aside, the cells were 80 wide,
//! and `auto` took the sweep at 1.9 s a frame against 24 ms with those five as giants. It
//! also set aside at most 32: 33 boulders of radius 20 among 500,000 unit spheres made the
//! cells 40 wide, 1.13 s a frame against 27 ms with 32.)

use crate::geom::sphere::Sphere;
use glam::Vec3;

/// Most objects set aside as giants: each other object looks at every giant on the GPU (a
/// tile of them at a time in workgroup memory), and through a coarse index of their reach on
/// the CPU (`cpu::grid::giants`), so hundreds cost less than cells sized by one of them (a
/// lognormal tail: 287 radii of 8 to 21 above 200,000 of about 1). More than
/// `GIANTS_NEAR_MAX` only when they are more than `FAR_GIANT_RATIO` times the rest. It was
/// 1,024 for all: 2,000 boulders of radii 5 to 20 among 200,000 spheres of radius 0.5 (1% of
/// the scene) then sized the cells by the boulders, the grid testing 1.2 10^10 pairs in 10.4 s
/// a frame and `auto` sweeping x in 1.1 s, against 0.22 s for the grid with the boulders set
/// aside (2-core VM, CPU).
pub const GIANTS_MAX: u32 = 4096;
/// Most giants set aside when the largest radius is at most [`FAR_GIANT_RATIO`] times the
/// others': the cells they would size are at most that many times wider, and on the GPU each
/// object looks at every giant (4,096 of them: 6.6 10^10 comparisons at 16M objects, tens of
/// ms, where cells twice as wide cost a few).
pub(crate) const GIANTS_NEAR_MAX: u32 = 1024;
/// The radius ratio (largest to the others' largest) past which up to [`GIANTS_MAX`] giants are
/// set aside: cells that much narrower hold 512 times fewer candidates.
pub(crate) const FAR_GIANT_RATIO: f32 = 8.0;
/// The giants a scene of `objects` may set aside: a sixteenth of them, at least
/// [`WHOLE_SCENE_GIANTS_MAX`] and at most [`GIANTS_MAX`]. Giants are few by definition: radii
/// spread evenly from 0.1 to 0.5 over 1,500 spheres put 940 above 0.25, which the budget of
/// 1,024 alone set aside, and each other object then looked at most of them.
pub fn giants_budget(objects: u64) -> u32 {
    (objects / 16).clamp(u64::from(WHOLE_SCENE_GIANTS_MAX), u64::from(GIANTS_MAX)) as u32
}

/// Most giants where each is tested against every object, not only those in its reach: the
/// partitioned broad phase and the tool's MPI ranks (docs/design.md §2.12), which keep the
/// budget the grid had before.
pub const WHOLE_SCENE_GIANTS_MAX: u32 = 32;
/// Exponent bins of the radii.
pub const BINS: usize = 256;

/// The exponent bin of a radius.
#[inline(always)]
pub fn bin(radius: f32) -> usize {
    ((radius.to_bits() & 0x7fff_ffff) >> 23) as usize
}

/// Count and largest radius (bits) per exponent bin.
#[derive(Clone)]
pub struct Histogram {
    /// Radii in each bin.
    pub count: [u32; BINS],
    /// Largest radius in each bin, as its f32 bits (0 when the bin is empty).
    pub max_bits: [u32; BINS],
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            count: [0; BINS],
            max_bits: [0; BINS],
        }
    }
}

impl Histogram {
    /// Counts `radius` in its bin.
    #[inline(always)]
    pub fn add(&mut self, radius: f32) {
        let (b, bits) = (bin(radius), radius.to_bits() & 0x7fff_ffff);
        self.count[b] += 1;
        self.max_bits[b] = self.max_bits[b].max(bits);
    }

    /// The histogram of both sets of radii (counts added, largest kept per bin).
    pub fn merge(mut self, other: &Self) -> Self {
        for b in 0..BINS {
            self.count[b] += other.count[b];
            self.max_bits[b] = self.max_bits[b].max(other.max_bits[b]);
        }
        self
    }

    /// `(split, cell radius)`: objects whose bin is above `split` are giants (`split` = 255:
    /// none); the cell radius is the largest radius of the others (module docs).
    pub fn decide(&self) -> (u32, f32) {
        let objects: u64 = self.count.iter().map(|&c| u64::from(c)).sum();
        self.decide_within(giants_budget(objects))
    }

    /// [`Histogram::decide`] with at most `most` giants.
    pub fn decide_within(&self, most: u32) -> (u32, f32) {
        let largest = (0..BINS)
            .rev()
            .find(|&b| self.count[b] > 0)
            .map_or(0.0, |b| f32::from_bits(self.max_bits[b]));
        let mut decision = (255u32, largest);
        let mut above = 0u32;
        for b in (0..BINS).rev() {
            if self.count[b] == 0 {
                continue;
            }
            let below = f32::from_bits(self.max_bits[b]);
            let few_or_far = above <= GIANTS_NEAR_MAX || largest > FAR_GIANT_RATIO * below;
            if above > 0 && largest > 2.0 * below && few_or_far {
                decision = (b as u32, below);
            }
            above += self.count[b];
            if above > most {
                break;
            }
        }
        decision
    }
}

/// The giants of `spheres` by [`Histogram::decide_within`] with at most `most`, in index
/// order, and the largest radius of the others.
pub fn giants_of(spheres: &[Sphere], most: u32) -> (Vec<u32>, f32) {
    let mut h = Histogram::default();
    for s in spheres {
        h.add(s.radius);
    }
    let (split, radius) = h.decide_within(most);
    if split >= 255 {
        return (Vec::new(), radius);
    }
    let giants = (0..spheres.len() as u32)
        .filter(|&i| bin(spheres[i as usize].radius) as u32 > split)
        .collect();
    (giants, radius)
}

/// The smallest side [`points_side`] gives, 2^-100 (below it: 1, one cell).
const POINTS_SIDE_MIN: f32 = f32::from_bits((127 - 100) << 23);

/// The cell side of a frame of points (every radius the grid sizes its cells by is 0 or
/// subnormal: only coincident centres touch, and any side finds them), from the centres'
/// bounds `[min, max]` and the count: the bounds' longest side over `2^k`, `k` =
/// ceil(bits(objects) / 3), so points spread through a cube get about one a cell; 1 where that
/// is below 2^-100. Exact in f32 (a difference and a power of two), as `grid_frame` in
/// `shaders/sort/keys.wgsl` computes it; the CPU grid (`cpu::grid::frame`) and `auto`'s survey
/// size their cells by it. (The side was 1: 100,000 points in a cube of 0.5 fell
/// in one cell, and the grid tested all 5 10^9 pairs in 3.2 s; sap tested 10.)
pub(crate) fn points_side(min: Vec3, max: Vec3, objects: u64) -> f32 {
    let span = (max - min).max_element();
    let k = (64 - objects.leading_zeros()).div_ceil(3);
    let side = span * f32::from_bits((127 - k) << 23);
    if side >= POINTS_SIDE_MIN { side } else { 1.0 }
}
