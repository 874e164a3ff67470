//! Peer crates as broad phases, for comparison benchmarks (cargo feature `peers`). Each is timed
//! as build + query, applies the same sphere test to the candidate pairs its structure reports
//! (`tests` = candidate pairs `i < j` tested), and emits `i < j` pairs.
//!
//! * `peer-parry`: parry3d's BVH (`Bvh::from_leaves`, binned SAH build) traversed against itself.
//! * `peer-rstar`: rstar's R-tree (`RTree::bulk_load`) intersected with itself.
//! * `peer-broccoli`: broccoli's 2D kd-tree/sweep hybrid on (x, y), the z overlap checked in the
//!   callback.
//!
//! All three run on one thread (as their default features build them).

use super::axis_order::{hi, lo};
use crate::broadphase::{BroadPhase, Clock, Pair, Stats};
use crate::error::Result;
use crate::geom::sphere::Sphere;
use web_time::Instant;

/// The peers by name (`peer-parry`, `peer-rstar`, `peer-broccoli`).
pub fn peer(name: &str) -> Option<Box<dyn BroadPhase + Send>> {
    match name {
        "peer-parry" => Some(Box::new(PeerParry::default())),
        "peer-rstar" => Some(Box::new(PeerRstar)),
        "peer-broccoli" => Some(Box::new(PeerBroccoli::default())),
        _ => None,
    }
}

/// The names [`peer`] knows.
pub const PEER_NAMES: [&str; 3] = ["peer-parry", "peer-rstar", "peer-broccoli"];

/// Counts and optionally stores the touching candidates.
struct Collector<'a> {
    spheres: &'a [Sphere],
    out: Option<&'a mut Vec<Pair>>,
    tests: u64,
    pairs: u64,
}

impl<'a> Collector<'a> {
    fn new(spheres: &'a [Sphere], mut out: Option<&'a mut Vec<Pair>>) -> Self {
        if let Some(out) = out.as_deref_mut() {
            out.clear();
        }
        Self {
            spheres,
            out,
            tests: 0,
            pairs: 0,
        }
    }

    #[inline(always)]
    fn candidate(&mut self, a: u32, b: u32) {
        let (i, j) = if a < b { (a, b) } else { (b, a) };
        self.tests += 1;
        if self.spheres[i as usize].touches(&self.spheres[j as usize]) {
            self.pairs += 1;
            if let Some(out) = self.out.as_deref_mut() {
                out.push([i, j]);
            }
        }
    }

    fn finish(self, start: Instant) -> Stats {
        let mut stats = Stats {
            tests: self.tests,
            pairs: self.pairs,
            ..Stats::default()
        };
        stats.stage("build+query", start.elapsed().as_secs_f64(), Clock::Wall);
        stats
    }
}

/// parry3d's BVH over the spheres' AABBs, then the sphere test on its candidate pairs.
#[derive(Default)]
pub struct PeerParry {
    leaves: Vec<parry3d::bounding_volume::Aabb>,
    workspace: parry3d::partitioning::BvhWorkspace,
}

super::cpu_broad_phase!(PeerParry, |_: &Self| "peer-parry");

impl PeerParry {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        use parry3d::bounding_volume::Aabb;
        use parry3d::math::Vector;
        use parry3d::partitioning::{Bvh, BvhBuildStrategy};
        let start = Instant::now();
        self.leaves.clear();
        self.leaves.extend(spheres.iter().map(|s| {
            Aabb::new(
                Vector::new(lo(s, 0), lo(s, 1), lo(s, 2)),
                Vector::new(hi(s, 0), hi(s, 1), hi(s, 2)),
            )
        }));
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &self.leaves);
        let mut collect = Collector::new(spheres, out);
        bvh.traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| {
            if a != b {
                collect.candidate(a, b);
            }
        });
        Ok(collect.finish(start))
    }
}

/// rstar's R*-tree, bulk-loaded from the spheres' AABBs and joined with itself.
pub struct PeerRstar;

super::cpu_broad_phase!(PeerRstar, |_: &Self| "peer-rstar");

impl PeerRstar {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        use rstar::RTree;
        use rstar::primitives::{GeomWithData, Rectangle};
        let start = Instant::now();
        // bulk_load takes its elements by value: one allocation per call is the crate's API.
        let boxes: Vec<GeomWithData<Rectangle<[f32; 3]>, u32>> = spheres
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let rect = Rectangle::from_corners(
                    [lo(s, 0), lo(s, 1), lo(s, 2)],
                    [hi(s, 0), hi(s, 1), hi(s, 2)],
                );
                GeomWithData::new(rect, i as u32)
            })
            .collect();
        let tree = RTree::bulk_load(boxes);
        let mut collect = Collector::new(spheres, out);
        // The self-intersection yields every ordered pair, including (a, a): keep a < b.
        for (a, b) in tree.intersection_candidates_with_other_tree(&tree) {
            if a.data < b.data {
                collect.candidate(a.data, b.data);
            }
        }
        Ok(collect.finish(start))
    }
}

/// broccoli's kd-tree of the spheres' AABBs, its colliding-pairs query, then the sphere test.
#[derive(Default)]
pub struct PeerBroccoli {
    boxes: Vec<(broccoli::axgeom::Rect<f32>, u32)>,
}

super::cpu_broad_phase!(PeerBroccoli, |_: &Self| "peer-broccoli");

impl PeerBroccoli {
    fn pairs(&mut self, spheres: &[Sphere], out: Option<&mut Vec<Pair>>) -> Result<Stats> {
        let start = Instant::now();
        self.boxes.clear();
        self.boxes.extend(spheres.iter().enumerate().map(|(i, s)| {
            (
                broccoli::rect(lo(s, 0), hi(s, 0), lo(s, 1), hi(s, 1)),
                i as u32,
            )
        }));
        let mut tree = broccoli::Tree::new(&mut self.boxes);
        let mut collect = Collector::new(spheres, out);
        tree.find_colliding_pairs(|a, b| {
            let (a, b) = (*a.unpack_inner(), *b.unpack_inner());
            let (sa, sb) = (&spheres[a as usize], &spheres[b as usize]);
            if lo(sa, 2) <= hi(sb, 2) && lo(sb, 2) <= hi(sa, 2) {
                collect.candidate(a, b);
            }
        });
        Ok(collect.finish(start))
    }
}

/// parry3d's cuboid contact manifolds (`contact_manifold_cuboid_cuboid`) for `pairs` of
/// `boxes`, on this thread, the manifold reused: the peer of `cpu::contacts::obb_contacts` in
/// `bench --shape obb --contacts`. Returns the points found (all pairs), so the work is used.
pub fn parry_obb_manifolds(boxes: &[crate::geom::obb::Obb], pairs: &[Pair]) -> u64 {
    use parry3d::math::{Pose, Rot3, Vec3 as PVec3};
    use parry3d::query::ContactManifold;
    use parry3d::query::details::contact_manifold_cuboid_cuboid;
    use parry3d::shape::Cuboid;
    let parts: Vec<(Pose, Cuboid)> = boxes
        .iter()
        .map(|b| {
            let q = b.rotation.normalize();
            let h = b.half_extents;
            (
                Pose::from_parts(
                    PVec3::new(b.center.x, b.center.y, b.center.z),
                    Rot3::from_xyzw(q.x, q.y, q.z, q.w),
                ),
                Cuboid::new(PVec3::new(h.x, h.y, h.z)),
            )
        })
        .collect();
    let mut manifold = ContactManifold::<(), ()>::new();
    let mut points = 0u64;
    for p in pairs {
        let (pa, ca) = &parts[p[0] as usize];
        let (pb, cb) = &parts[p[1] as usize];
        manifold.clear();
        contact_manifold_cuboid_cuboid(&pa.inv_mul(pb), ca, cb, 0.0, &mut manifold);
        points += manifold.points.len() as u64;
    }
    points
}
