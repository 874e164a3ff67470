//! Slabs of space, one per process, for the broad phase across machines (docs/design.md §2.11):
//! the partition rule of §2.10 with a process ("rank") in the place of a part. Rank `r` owns
//! the objects whose key — the centre on the slab axis, then the global index — lies between
//! the starts of slab `r` and slab `r + 1`; it receives as ghosts the objects of later slabs
//! whose lower end lies within its reach, and keeps the touching pairs with at least one object
//! of its own. A pair across slabs is then found by the earlier slab only: exactly once.
//!
//! ```
//! use glam::Vec3;
//! use sweepfan::Sphere;
//! use sweepfan::partition::slabs::{GhostRoutes, Slabs, slab_reach};
//!
//! // A line of spheres 1.5 apart (radius 1), three slabs balanced from every centre.
//! let spheres: Vec<Sphere> =
//!     (0..30).map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0)).collect();
//! let sample: Vec<(Vec3, u64)> = spheres.iter().enumerate().map(|(i, s)| (s.center, i as u64)).collect();
//! let slabs = Slabs::balanced(&sample, 3);
//! assert_eq!(slabs.axis, 0);
//! let owner: Vec<usize> = (0..30).map(|i| slabs.owner(spheres[i].center, i as u64)).collect();
//! assert_eq!(owner.iter().filter(|&&r| r == 1).count(), 10);
//! // Slab 0's reach takes in the first sphere of slab 1 (1.5 apart): its one ghost.
//! let reach: Vec<f64> = (0..3)
//!     .map(|r| {
//!         let own: Vec<Sphere> = (0..30).filter(|&i| owner[i] == r).map(|i| spheres[i]).collect();
//!         slab_reach(&own, slabs.axis, 1.0)
//!     })
//!     .collect();
//! let routes = GhostRoutes::new(reach);
//! let mut to = Vec::new();
//! routes.ranks_for(1, slabs.low_end(&spheres[10]), |r| to.push(r));
//! assert_eq!(to, [0]);
//! ```

use super::plan::{ordered_bits, reach_limit, spread_axis};
use crate::geom::sphere::Sphere;
use glam::Vec3;

/// A pair of global indices (`i < j`): scenes across machines may pass 2^32 objects.
pub type GlobalPair = [u64; 2];

/// An object's key on the slab axis: its centre as ordered bits, then its global index (a
/// total order: objects with equal centres are told apart by index).
pub type SlabKey = (u32, u64);

/// The slabs: an axis and the first key of every slab after the first.
#[derive(Clone, Debug, PartialEq)]
pub struct Slabs {
    /// The axis the slabs cut (0 = x, 1 = y, 2 = z).
    pub axis: usize,
    /// `starts[r - 1]`: the smallest key of slab `r` (nondecreasing).
    pub starts: Vec<SlabKey>,
}

impl Slabs {
    /// One slab holding everything.
    pub fn single() -> Slabs {
        Slabs {
            axis: 0,
            starts: Vec::new(),
        }
    }

    /// Slabs for `ranks` ranks holding about equal numbers of objects, from a sample of
    /// centres with their global indices drawn at the same rate from every rank's objects. The
    /// axis is the one of largest spread between the sample's 1st and 99th percentiles (a few
    /// outliers do not choose it). The same sample gives the same slabs on every rank.
    pub fn balanced(sample: &[(Vec3, u64)], ranks: usize) -> Slabs {
        let ranks = ranks.max(1);
        if sample.is_empty() {
            // Nothing to balance: everything in the last slab would do as well as the first.
            return Slabs {
                axis: 0,
                starts: vec![(u32::MAX, u64::MAX); ranks - 1],
            };
        }
        let centres: Vec<Vec3> = sample.iter().map(|s| s.0).collect();
        let axis = spread_axis(&centres);
        let mut keys: Vec<SlabKey> = sample
            .iter()
            .map(|&(c, id)| (ordered_bits(c[axis]), id))
            .collect();
        keys.sort_unstable();
        let starts = (1..ranks).map(|r| keys[r * keys.len() / ranks]).collect();
        Slabs { axis, starts }
    }

    /// Number of slabs (one per rank).
    pub fn ranks(&self) -> usize {
        self.starts.len() + 1
    }

    /// The key of an object.
    #[inline]
    pub fn key(&self, center: Vec3, id: u64) -> SlabKey {
        (ordered_bits(center[self.axis]), id)
    }

    /// The rank owning an object.
    #[inline]
    pub fn owner(&self, center: Vec3, id: u64) -> usize {
        let key = self.key(center, id);
        self.starts.partition_point(|s| *s <= key)
    }

    /// An object's lower end on the slab axis, `centre - radius`, in f64 (exact but for values
    /// far apart in magnitude, which the reach's slack covers).
    #[inline]
    pub fn low_end(&self, s: &Sphere) -> f64 {
        s.center[self.axis] as f64 - s.radius as f64
    }
}

/// The reach of a slab's own objects (`owned`): the highest lower end a later object may have
/// and still touch one of them, where no object of the scene but giants has a radius above
/// `r_max` (docs/design.md §2.10's bound). `-inf` for an empty slab.
pub fn slab_reach(owned: &[Sphere], axis: usize, r_max: f32) -> f64 {
    if owned.is_empty() {
        return f64::NEG_INFINITY;
    }
    let (hi, rk) = owned.iter().fold((f32::NEG_INFINITY, 0.0f32), |(h, r), s| {
        (h.max(s.center[axis]), r.max(s.radius))
    });
    reach_limit(hi as f64, rk as f64, r_max.max(rk) as f64)
}

/// Which earlier ranks need an object as a ghost: those whose reach is at or above its lower end.
pub struct GhostRoutes {
    reach: Vec<f64>,
    /// `prefix_max[r]`: the largest reach of ranks `0..=r`, to stop the walk down early.
    prefix_max: Vec<f64>,
}

impl GhostRoutes {
    /// From every rank's reach ([`slab_reach`]), in rank order.
    pub fn new(reach: Vec<f64>) -> GhostRoutes {
        let prefix_max = reach
            .iter()
            .scan(f64::NEG_INFINITY, |m, &r| {
                *m = m.max(r);
                Some(*m)
            })
            .collect();
        GhostRoutes { reach, prefix_max }
    }

    /// Calls `to(r)` for every rank `r < home` (from `home - 1` down) whose reach takes in an
    /// object of rank `home` with lower end `low`. The walk ends at the first rank below which
    /// no reach is high enough: usually after one step, as reaches grow with the slabs.
    #[inline]
    pub fn ranks_for(&self, home: usize, low: f64, mut to: impl FnMut(usize)) {
        for r in (0..home).rev() {
            if self.prefix_max[r] < low {
                break;
            }
            if self.reach[r] >= low {
                to(r);
            }
        }
    }
}

/// The canonical form of a pair of global indices: smaller first.
#[inline]
pub fn global_pair(a: u64, b: u64) -> GlobalPair {
    [a.min(b), a.max(b)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::tests::{clustered, mixed_radii, uniform};

    /// Every touching pair by brute force, canonical.
    fn brute(spheres: &[Sphere]) -> Vec<GlobalPair> {
        let mut out = Vec::new();
        for i in 0..spheres.len() {
            for j in i + 1..spheres.len() {
                if spheres[i].touches(&spheres[j]) {
                    out.push([i as u64, j as u64]);
                }
            }
        }
        out
    }

    /// The rule run in one process: slabs from a sample of every `step`-th object, ghosts
    /// routed by reach, a brute force per slab keeping pairs with an own object.
    fn by_slabs(spheres: &[Sphere], ranks: usize, step: usize) -> Vec<GlobalPair> {
        let sample: Vec<(Vec3, u64)> = spheres
            .iter()
            .enumerate()
            .step_by(step)
            .map(|(i, s)| (s.center, i as u64))
            .collect();
        let slabs = Slabs::balanced(&sample, ranks);
        let r_max = spheres.iter().map(|s| s.radius).fold(0.0, f32::max);
        let mut own: Vec<Vec<u64>> = vec![Vec::new(); ranks];
        for (i, s) in spheres.iter().enumerate() {
            own[slabs.owner(s.center, i as u64)].push(i as u64);
        }
        let reach = own
            .iter()
            .map(|ids| {
                let v: Vec<Sphere> = ids.iter().map(|&i| spheres[i as usize]).collect();
                slab_reach(&v, slabs.axis, r_max)
            })
            .collect();
        let routes = GhostRoutes::new(reach);
        let mut ghosts: Vec<Vec<u64>> = vec![Vec::new(); ranks];
        for (home, ids) in own.iter().enumerate() {
            for &i in ids {
                routes.ranks_for(home, slabs.low_end(&spheres[i as usize]), |r| {
                    ghosts[r].push(i)
                });
            }
        }
        let mut out = Vec::new();
        for r in 0..ranks {
            let local: Vec<u64> = own[r].iter().chain(&ghosts[r]).copied().collect();
            for p in 0..own[r].len() {
                for q in p + 1..local.len() {
                    let (a, b) = (local[p] as usize, local[q] as usize);
                    if spheres[a].touches(&spheres[b]) {
                        out.push(global_pair(a as u64, b as u64));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn every_pair_is_found_by_exactly_one_slab() {
        let mut giant = uniform(1500, 100.0, 2.0, 4);
        giant[700] = Sphere::new(Vec3::splat(50.0), 40.0);
        // Wide: most spheres far apart on a huge cube, a dense knot near the origin.
        let mut wide = uniform(1200, 2e7, 0.5, 5);
        wide.extend(uniform(300, 6.0, 0.5, 6));
        let scenes = [
            ("clustered", clustered(1500, 2)),
            ("mixed radii", mixed_radii(1500, 3)),
            ("giant", giant),
            ("wide", wide),
            (
                "line",
                (0..800)
                    .map(|i| Sphere::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), 1.0))
                    .collect(),
            ),
            ("one point", vec![Sphere::new(Vec3::ONE, 1.0); 60]),
        ];
        for (name, spheres) in &scenes {
            let expected = brute(spheres);
            for ranks in [1, 2, 3, 5, 8] {
                for step in [1, 7] {
                    let got = by_slabs(spheres, ranks, step);
                    // Sorted with duplicates kept: a pair found twice would show here.
                    assert_eq!(got, expected, "{name} ranks {ranks} step {step}");
                }
            }
        }
    }

    #[test]
    fn slabs_are_balanced_and_ordered() {
        let spheres = clustered(20_000, 3);
        let sample: Vec<(Vec3, u64)> = spheres
            .iter()
            .enumerate()
            .map(|(i, s)| (s.center, i as u64))
            .collect();
        let slabs = Slabs::balanced(&sample, 4);
        let mut counts = [0usize; 4];
        for (i, s) in spheres.iter().enumerate() {
            counts[slabs.owner(s.center, i as u64)] += 1;
        }
        assert_eq!(counts, [5000; 4]);
        assert!(slabs.starts.windows(2).all(|w| w[0] <= w[1]));
        // Equal centres are split by index: one point, 4 slabs of 25.
        let same: Vec<(Vec3, u64)> = (0..100).map(|i| (Vec3::ZERO, i)).collect();
        let slabs = Slabs::balanced(&same, 4);
        let counts = (0..100).fold([0; 4], |mut c, i| {
            c[slabs.owner(Vec3::ZERO, i)] += 1;
            c
        });
        assert_eq!(counts, [25; 4]);
    }

    #[test]
    fn routes_stop_at_the_first_rank_out_of_reach() {
        let routes = GhostRoutes::new(vec![10.0, 5.0, 20.0, f64::NEG_INFINITY, 30.0]);
        let mut to = Vec::new();
        routes.ranks_for(4, 7.0, |r| to.push(r));
        assert_eq!(to, [2, 0]);
        to.clear();
        routes.ranks_for(5, 25.0, |r| to.push(r));
        assert_eq!(to, [4]);
        to.clear();
        routes.ranks_for(2, 11.0, |r| to.push(r));
        assert!(to.is_empty());
    }
}
