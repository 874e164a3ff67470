//! Verification of the box / polygon pipelines: the all-pairs SAT oracle for small scenes, the
//! CPU pipeline above that. Boxes and polygons are decided exactly (docs/design.md §4.2, §4.6):
//! any difference is wrong.

use rayon::prelude::*;
use sweepfan::broadphase::{Pair, Stats, canonicalize};
use sweepfan::cpu::sat::CpuBoxPipeline;
use sweepfan::error::Result;
use sweepfan::geom::aabb::Aabb;
use sweepfan::geom::obb::Obb;
use sweepfan::geom::polygon::Polygon;
use sweepfan::gpu::GpuBoxPipeline;
use sweepfan::{AabbOverlaps, ShapeOverlaps};

/// Largest n for which `verify --shape obb|polygon` checks against the all-pairs SAT (above it:
/// the CPU pipeline).
pub const SAT_ALL_PAIRS_MAX_N: usize = 5_000;

/// SAT shapes behind one interface for the verify / bench code.
pub enum Shapes {
    /// Oriented boxes (the SAT pipeline).
    Boxes(Vec<Obb>),
    /// Convex polygons (the SAT pipeline, 2D).
    Polygons(Vec<Polygon>),
    /// Axis-aligned boxes: the box job alone (docs/design.md §4.7), no SAT.
    Aabbs(Vec<Aabb>),
}

impl Shapes {
    pub fn len(&self) -> usize {
        match self {
            Shapes::Boxes(b) => b.len(),
            Shapes::Polygons(p) => p.len(),
            Shapes::Aabbs(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn name(&self) -> &'static str {
        match self {
            Shapes::Boxes(_) => "obb",
            Shapes::Polygons(_) => "polygon",
            Shapes::Aabbs(_) => "aabb",
        }
    }

    /// The contacts of `pairs` on the CPU (docs/design.md §4.8); axis-aligned boxes have none.
    pub fn contacts(&self, pairs: &[Pair]) -> Result<Vec<sweepfan::Contact>> {
        let mut out = Vec::new();
        self.contacts_into(pairs, &mut out)?;
        Ok(out)
    }

    /// [`Shapes::contacts`] into `out` (cleared first).
    pub fn contacts_into(&self, pairs: &[Pair], out: &mut Vec<sweepfan::Contact>) -> Result<()> {
        match self {
            Shapes::Boxes(b) => sweepfan::cpu::contacts::obb_contacts(b, pairs, out),
            Shapes::Polygons(p) => sweepfan::cpu::contacts::polygon_contacts(p, pairs, out),
            Shapes::Aabbs(_) => Err(sweepfan::Error::Config(
                "axis-aligned boxes by themselves have no contacts (no SAT stage): --contacts \
                 takes --shape obb or polygon"
                    .into(),
            )),
        }
    }

    /// One GPU frame from the upload to the contacts (docs/design.md §4.8): the overlapping
    /// pairs, sorted, into `pairs` and their contacts into `contacts`, in one submission.
    pub fn gpu_with_contacts(
        &self,
        pipeline: &mut GpuBoxPipeline,
        pairs: &mut Vec<Pair>,
        contacts: &mut Vec<sweepfan::Contact>,
    ) -> Result<Stats> {
        match self {
            Shapes::Boxes(b) => pipeline.obb_contacts(b, pairs, contacts),
            Shapes::Polygons(p) => pipeline.polygon_contacts(p, pairs, contacts),
            Shapes::Aabbs(_) => self.contacts_into(&[], contacts).map(|_| Stats::default()),
        }
    }

    /// How a device's `contacts` of `pairs` compare with the CPU's (`cpu`).
    pub fn compare_contacts(
        &self,
        pairs: &[Pair],
        device: &[sweepfan::Contact],
        cpu: &[sweepfan::Contact],
    ) -> sweepfan::cpu::contacts::ContactCheck {
        use sweepfan::cpu::contacts::compare_contacts;
        match self {
            Shapes::Boxes(b) => compare_contacts(b, pairs, device, cpu),
            Shapes::Polygons(p) => compare_contacts(p, pairs, device, cpu),
            Shapes::Aabbs(_) => Default::default(),
        }
    }

    /// The CPU pipeline (bounds sweep + SAT).
    pub fn cpu(&self) -> Result<(Vec<Pair>, Stats)> {
        self.cpu_with(&mut CpuBoxPipeline::new())
    }

    /// [`Shapes::cpu`] on a pipeline kept between frames.
    pub fn cpu_with(&self, pipeline: &mut CpuBoxPipeline) -> Result<(Vec<Pair>, Stats)> {
        let mut pairs = Vec::new();
        let stats = match self {
            Shapes::Boxes(b) => pipeline.obb_overlaps(b, Some(&mut pairs))?,
            Shapes::Polygons(p) => pipeline.polygon_overlaps(p, Some(&mut pairs))?,
            Shapes::Aabbs(a) => pipeline.aabb_overlaps(a, &mut pairs)?,
        };
        Ok((pairs, stats))
    }

    pub fn gpu(&self, pipeline: &mut GpuBoxPipeline, out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        Ok(match self {
            Shapes::Boxes(b) => pipeline.obb_overlaps(b, out)?,
            Shapes::Polygons(p) => pipeline.polygon_overlaps(p, out)?,
            // The box job returns its pairs: they are the frame's result, counted or not (a
            // count needs no order).
            Shapes::Aabbs(a) => match out {
                Some(out) => pipeline.aabb_overlaps(a, out)?,
                None => AabbOverlaps::aabb_overlaps_unordered(pipeline, a, &mut Vec::new())?,
            },
        })
    }

    /// The name of [`Self::all_pairs`]'s answer: every pair tested by SAT, or, for
    /// axis-aligned boxes, by the interval test.
    pub fn all_pairs_name(&self) -> &'static str {
        match self {
            Shapes::Aabbs(_) => "all pairs",
            _ => "all-pairs SAT",
        }
    }

    /// Every pair tested (SAT), for small n, in canonical order. Ctrl-C stops it between rows
    /// (a row of 5,000 polygons of 300 vertices takes milliseconds; the whole, minutes).
    pub fn all_pairs(&self) -> Result<Vec<Pair>> {
        let n = self.len();
        let rows: Vec<Vec<Pair>> = (0..n)
            .into_par_iter()
            .map(|i| {
                crate::run::stop_if_interrupted()?;
                Ok((i + 1..n)
                    .filter(|&j| self.overlap(i, j))
                    .map(|j| [i as u32, j as u32])
                    .collect())
            })
            .collect::<Result<_>>()?;
        // Rows in order, each ascending: already canonical.
        Ok(rows.concat())
    }

    /// Whether shapes i and j overlap, as they are given: the exact pair tests
    /// ([`Obb::overlaps`], [`Polygon::overlaps`], [`Aabb::overlaps`]), no copy of either made
    /// (a polygon rebuilt about its f32 centroid moved a vertex by an ulp and the oracle then
    /// tested another polygon than the pipelines did).
    pub fn overlap(&self, i: usize, j: usize) -> bool {
        match self {
            Shapes::Boxes(b) => b[i].overlaps(&b[j]),
            Shapes::Polygons(p) => p[i].overlaps(&p[j]),
            Shapes::Aabbs(a) => a[i].overlaps(&a[j]),
        }
    }

    /// Sorted pairs in one list more often than in the other (a pair missing, added, or
    /// listed twice): every one is wrong (both answers are exact). One merge of the two sorted
    /// lists (a list not sorted is sorted in a copy first), so the check holds no more than
    /// the lists and what differs: sets of 18 million pairs took 104 bytes a node and ran a
    /// verify out of memory.
    pub fn differences(expected: &[Pair], got: &[Pair]) -> Vec<Pair> {
        fn sorted(list: &[Pair]) -> std::borrow::Cow<'_, [Pair]> {
            if list.is_sorted() {
                list.into()
            } else {
                let mut copy = list.to_vec();
                copy.sort_unstable();
                copy.into()
            }
        }
        let (a, b) = (sorted(expected), sorted(got));
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        loop {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => match x.cmp(y) {
                    std::cmp::Ordering::Equal => {
                        i += 1;
                        j += 1;
                    }
                    std::cmp::Ordering::Less => {
                        out.push(*x);
                        i += 1;
                    }
                    std::cmp::Ordering::Greater => {
                        out.push(*y);
                        j += 1;
                    }
                },
                (Some(x), None) => {
                    out.push(*x);
                    i += 1;
                }
                (None, Some(y)) => {
                    out.push(*y);
                    j += 1;
                }
                (None, None) => return out,
            }
        }
    }

    /// The `k` shapes nearest the first one's centre (all of them when `k >= len`): a dense
    /// region, so a sample checked against the all-pairs SAT holds many pairs.
    pub fn sample_near_first(&self, k: usize) -> Shapes {
        let centres: Vec<glam::Vec2> = match self {
            Shapes::Boxes(b) => b.iter().map(|o| o.center.truncate()).collect(),
            Shapes::Aabbs(a) => a
                .iter()
                .map(|b| ((b.min + b.max) * 0.5).truncate())
                .collect(),
            Shapes::Polygons(p) => p
                .iter()
                .map(|q| {
                    q.vertices().iter().copied().sum::<glam::Vec2>() / q.vertices().len() as f32
                })
                .collect(),
        };
        let z = |i: usize| match self {
            Shapes::Boxes(b) => b[i].center.z - b[0].center.z,
            Shapes::Aabbs(a) => (a[i].min.z + a[i].max.z - a[0].min.z - a[0].max.z) * 0.5,
            Shapes::Polygons(_) => 0.0,
        };
        let mut order: Vec<usize> = (0..self.len()).collect();
        if let Some(&c0) = centres.first() {
            order.sort_by(|&i, &j| {
                let d = |i: usize| (centres[i] - c0).length_squared() + z(i) * z(i);
                d(i).total_cmp(&d(j))
            });
        }
        order.truncate(k);
        order.sort_unstable();
        match self {
            Shapes::Boxes(b) => Shapes::Boxes(order.iter().map(|&i| b[i]).collect()),
            Shapes::Polygons(p) => Shapes::Polygons(order.iter().map(|&i| p[i].clone()).collect()),
            Shapes::Aabbs(a) => Shapes::Aabbs(order.iter().map(|&i| a[i]).collect()),
        }
    }

    /// The CPU pipeline checked against the all-pairs SAT on [`Self::sample_near_first`] of
    /// [`SAT_ALL_PAIRS_MAX_N`] shapes: the independent check of the reference itself when the
    /// scene is too large for the all-pairs SAT. Returns (pairs in the sample, differing pairs).
    pub fn check_cpu_on_sample(&self) -> Result<(usize, usize)> {
        let sample = self.sample_near_first(SAT_ALL_PAIRS_MAX_N);
        let want = sample.all_pairs()?;
        let (mut got, _) = sample.cpu()?;
        canonicalize(&mut got);
        let wrong = Self::differences(&want, &got);
        Ok((want.len(), wrong.len()))
    }

    /// The reference pairs: the all-pairs SAT up to [`SAT_ALL_PAIRS_MAX_N`] shapes, the CPU
    /// pipeline above; with the reference's name.
    pub fn reference(&self) -> Result<(&'static str, Vec<Pair>)> {
        Ok(if self.len() <= SAT_ALL_PAIRS_MAX_N {
            (self.all_pairs_name(), self.all_pairs()?)
        } else {
            let (mut e, _) = self.cpu()?;
            canonicalize(&mut e);
            ("CPU pipeline", e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Quat, Vec3};

    fn unit_box(x: f32) -> Obb {
        Obb::new(Vec3::new(x, 0.0, 0.0), Vec3::splat(0.5), Quat::IDENTITY)
    }

    #[test]
    fn the_all_pairs_oracle_is_exact_on_the_shapes_as_given() {
        // 0 and 1 touch face to face (gap 0); 0 and 2 overlap by half a box; 0 and 3 are apart.
        let shapes = Shapes::Boxes(vec![
            unit_box(0.0),
            unit_box(1.0),
            unit_box(0.5),
            unit_box(3.0),
        ]);
        // Exact: a missing touching pair is wrong like any other.
        let wrong = Shapes::differences(&[[0, 1], [0, 2]], &[[0, 2], [0, 3]]);
        assert_eq!(wrong, [[0, 1], [0, 3]]);
        // A pair listed twice is wrong too; a list out of order is compared as a set.
        let wrong = Shapes::differences(&[[0, 1], [0, 2]], &[[0, 2], [0, 1], [0, 2]]);
        assert_eq!(wrong, [[0, 2]]);
        assert_eq!(shapes.all_pairs().unwrap(), [[0, 1], [0, 2], [1, 2]]);
        // Unit squares: 0 and 1 share an edge, 0 and 2 are apart.
        let square = |x: f32| {
            let v = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
            let v: Vec<glam::Vec2> = v.iter().map(|&(a, b)| glam::Vec2::new(a + x, b)).collect();
            Polygon::new(&v).unwrap()
        };
        let shapes = Shapes::Polygons(vec![square(0.0), square(1.0), square(3.0)]);
        assert_eq!(shapes.all_pairs().unwrap(), [[0, 1]]);
        // Two triangles apart by less than an ulp of their centroids' arithmetic: the oracle
        // tests them as given (it found them touching once, and verify failed right pairs).
        let triangle = |v: [(f32, f32); 3]| {
            let v: Vec<glam::Vec2> = v.iter().map(|&(x, y)| glam::Vec2::new(x, y)).collect();
            Polygon::new(&v).unwrap()
        };
        let a = triangle([(0.0, 0.0), (1317.6108, 0.0), (0.0, 22.546387)]);
        let b = triangle([
            (236.48512, 18.499756),
            (1554.096, 18.5),
            (236.48535, 41.046143),
        ]);
        assert!(!a.overlaps(&b));
        let shapes = Shapes::Polygons(vec![a, b]);
        assert_eq!(shapes.all_pairs().unwrap(), Vec::<Pair>::new());
    }
}
