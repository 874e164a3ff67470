//! Host-side layout of the sweep: the (y, z) columns and the wide shapes kept out of them
//! (docs/design.md §4.5). No device work here.

use crate::geom::aabb::Aabb;
use crate::geom::obb::ObbFrame;
use crate::geom::polygon::PolygonSet;

/// A shape is wide when its AABB is more than this many times the median width on y or z:
/// columns stay at most this many typical shapes wide, and ordinary scenes (sizes spread 4 to 1,
/// random rotations, needles) have no wide shape, so nothing changes for them.
const WIDE_FACTOR: f32 = 8.0;

/// How the (y, z) plane is cut into sweep columns. Any layout gives the same candidates as long
/// as `reach` is at least every AABB's width on y and z (the walk visits the columns between
/// column(min - reach) and column(max)); `cell` and `dims` only set the speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepColumns {
    /// Lower (y, z) corner of column (0, 0).
    pub origin: [f32; 2],
    /// Side of a column.
    pub cell: f32,
    /// At least the width on y and on z of every shape's AABB.
    pub reach: f32,
    /// Columns along y and z (at least 1 each); coordinates beyond are clamped into the edge
    /// columns.
    pub dims: [u32; 2],
}

impl SweepColumns {
    /// One column: the plain sweep along x.
    pub fn single() -> Self {
        Self {
            origin: [0.0; 2],
            cell: 1.0,
            reach: 0.0,
            dims: [1, 1],
        }
    }

    /// Columns for `n` shapes whose AABB lower corners lie (mostly) in `lo..=hi` on (y, z) and
    /// whose AABB widths on y and z are at most `max_width`: cells as wide as the widest AABB (so a
    /// walk meets about 2 x 2 columns) but at most about n columns in all.
    pub fn covering(lo: [f32; 2], hi: [f32; 2], max_width: f32, n: u32) -> Self {
        let per_axis = ((n as f64).sqrt().floor() as u32).max(1);
        let extent = [(hi[0] - lo[0]).max(0.0), (hi[1] - lo[1]).max(0.0)];
        let cell = max_width
            .max(extent[0] / per_axis as f32)
            .max(extent[1] / per_axis as f32);
        let usable = cell.is_finite()
            && cell > 0.0
            && (1.0 / cell).is_finite()
            && lo.iter().chain(&hi).all(|v| v.is_finite());
        if !usable {
            return Self::single();
        }
        let dims = extent.map(|e| ((e / cell).floor() as u32).saturating_add(1).min(per_axis));
        Self {
            origin: lo,
            cell,
            reach: max_width,
            dims,
        }
    }

    /// Columns for validated boxes, every one in the columns (see `frame_extents`).
    pub fn for_frames(frames: &[ObbFrame]) -> Self {
        columns_over(&frame_extents(frames), &[])
    }

    /// Columns for polygons (z = 0: columns along y only), every one in the columns.
    pub fn for_polygons(set: &PolygonSet) -> Self {
        columns_over(&polygon_extents(set), &[])
    }
}

/// Per box: its centre's (y, z) and a bound on its AABB width on y and z. The half-width on
/// axis a is `sum_k |axis_k[a]| h_k` plus the GPU's margin of 5 epsilons of (extent + |centre| +
/// the half-extents' sum), bounded here with room to spare for rounding.
fn frame_extents(frames: &[ObbFrame]) -> Vec<([f32; 2], f32)> {
    frames
        .iter()
        .map(|f| {
            let c = f.center();
            let ext = f.axis(0).abs() * f.half(0)
                + f.axis(1).abs() * f.half(1)
                + f.axis(2).abs() * f.half(2);
            let half = ext.y.max(ext.z);
            let far = c.y.abs().max(c.z.abs()) + f.half(0) + f.half(1) + f.half(2);
            (
                [c.y, c.z],
                2.0 * (half + 1e-6 * (half + far)) * (1.0 + 1e-5),
            )
        })
        .collect()
}

/// Per polygon: its lowest y (z = 0) and its width on y (vertex bounds: exact, plus room).
fn polygon_extents(set: &PolygonSet) -> Vec<([f32; 2], f32)> {
    (0..set.len())
        .map(|i| {
            let (a, b) = set
                .polygon(i)
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.y), b.max(p.y))
                });
            ([a, 0.0], (b - a) * (1.0 + 1e-5))
        })
        .collect()
}

/// Per box: its lower (y, z) corner and its wider side on y and z, widened past the rounding of
/// `max - min` (the walk needs `reach` >= the exact width; see the shader). A width that
/// overflows to infinity marks the box wide, or makes the layout one column.
fn aabb_extents(boxes: &[Aabb]) -> Vec<([f32; 2], f32)> {
    boxes
        .iter()
        .map(|b| {
            let w = (b.max.y - b.min.y).max(b.max.z - b.min.z);
            ([b.min.y, b.min.z], w * (1.0 + 1e-5))
        })
        .collect()
}

/// Columns covering the shapes (from [`frame_extents`] or [`polygon_extents`]) except those
/// listed in `skip` (increasing indices), with reach their widest.
fn columns_over(shapes: &[([f32; 2], f32)], skip: &[u32]) -> SweepColumns {
    let (mut lo, mut hi, mut reach) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2], 0.0f32);
    let mut next_skip = skip.iter().peekable();
    for (i, &(p, w)) in shapes.iter().enumerate() {
        if next_skip.next_if_eq(&&(i as u32)).is_some() {
            continue;
        }
        lo = [lo[0].min(p[0]), lo[1].min(p[1])];
        hi = [hi[0].max(p[0]), hi[1].max(p[1])];
        reach = reach.max(w);
    }
    let counted = (shapes.len() - skip.len()).min(u32::MAX as usize) as u32;
    SweepColumns::covering(lo, hi, reach, counted)
}

/// Columns plus the shapes kept out of them: the input indices (increasing) of the *wide* shapes,
/// which the sweep tests against every shape instead. `columns.reach` must bound the widths on y
/// and z of the other shapes only.
///
/// Rule ([`Self::for_frames`], [`Self::for_polygons`]): wide = AABB width on y or z above
/// `WIDE_FACTOR` x the median. They are set apart only when there are at most
/// min(n / 64, n^(2/3)) of them: their pass costs (wide count) x n AABB tests, which this keeps
/// below both n^2 / 64 and the n^(5/3) steps of the plain sweep they would otherwise force.
/// Past that, or with none, every shape goes in the columns (reach = the widest, as before).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLayout {
    /// The columns the other shapes are swept in.
    pub columns: SweepColumns,
    /// Input indices of the wide shapes, increasing (empty when none is set apart).
    pub wide: Vec<u32>,
}

impl From<SweepColumns> for SweepLayout {
    fn from(columns: SweepColumns) -> Self {
        Self {
            columns,
            wide: Vec::new(),
        }
    }
}

impl SweepLayout {
    /// One column, no wide shapes: the plain sweep along x.
    pub fn single() -> Self {
        SweepColumns::single().into()
    }

    /// Layout for validated boxes (widths bounded as in `SweepColumns::for_frames`).
    pub fn for_frames(frames: &[ObbFrame]) -> Self {
        Self::from_extents(&frame_extents(frames))
    }

    /// Layout for the caller's boxes (validated: finite, `min <= max`).
    pub fn for_aabbs(boxes: &[Aabb]) -> Self {
        Self::from_extents(&aabb_extents(boxes))
    }

    /// Layout for polygons (z = 0: width on y).
    pub fn for_polygons(set: &PolygonSet) -> Self {
        Self::from_extents(&polygon_extents(set))
    }

    /// Most wide shapes set apart among `n`: min(n / 64, floor(cbrt(n))^2).
    pub(crate) fn max_wide(n: usize) -> usize {
        // Integer cube root, so that exact cubes give exact squares.
        let mut root = (n as f64).cbrt() as usize;
        while (root + 1).pow(3) <= n {
            root += 1;
        }
        while root.pow(3) > n {
            root -= 1;
        }
        (n / 64).min(root * root)
    }

    /// From each shape's (y, z) position (centre or lower corner) and an upper bound on its AABB
    /// width on y and z.
    fn from_extents(shapes: &[([f32; 2], f32)]) -> Self {
        let n = shapes.len();
        let mut widths: Vec<f32> = shapes.iter().map(|s| s.1).collect();
        let wide: Vec<u32> = if n == 0 {
            Vec::new()
        } else {
            let (_, median, _) = widths.select_nth_unstable_by(n / 2, f32::total_cmp);
            let cutoff = *median * WIDE_FACTOR;
            (0..n as u32)
                .filter(|&i| shapes[i as usize].1 > cutoff)
                .collect()
        };
        let wide = if wide.len() > Self::max_wide(n) {
            Vec::new()
        } else {
            wide
        };
        Self {
            columns: columns_over(shapes, &wide),
            wide,
        }
    }
}
