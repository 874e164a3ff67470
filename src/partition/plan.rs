//! The order along the split axis, the parts (blocks of owned objects with a chunk of ghosts),
//! their reach and their splitting (docs/design.md §2.10).

use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use std::ops::Range;

/// Relative widening of a part's reach: the f32 touch test (`d . d <= s * s`, each operation
/// rounded) can accept a pair whose exact axis gap exceeds `r_i + r_j` by a few units in the
/// last place of `r_i + r_j`; 2^-18 is 64 times that bound.
const REACH_SLACK: f64 = 1.0 / (1u64 << 18) as f64;
/// Widening relative to the coordinate itself, for the f64 differences of f32 values far
/// apart in magnitude.
const COORD_SLACK: f64 = 1.0 / (1u64 << 36) as f64;

/// From this many owned objects a block's largest radius is found in parallel.
const PARALLEL_BLOCK: usize = 1 << 16;

/// The members (objects that are not giants) in order of their centre on the split axis. Only
/// the order is stored (4 B an object): centres and radii are read from the scene where needed.
pub struct Order<'a> {
    /// Global index of the object at each position.
    pub ids: Vec<u32>,
    spheres: &'a [Sphere],
    axis: usize,
    /// Largest radius of the members.
    r_max: f64,
}

impl<'a> Order<'a> {
    /// The members of `spheres` sorted by `(centre on the axis of largest spread, index)`.
    pub fn new(spheres: &'a [Sphere], members: Vec<u32>) -> Order<'a> {
        let r_max = members
            .par_iter()
            .map(|&i| spheres[i as usize].radius)
            .reduce(|| 0.0f32, f32::max);
        let axis = split_axis(spheres, &members);
        // Sorted as u64 keys: the centre's f32 bits mapped to an unsigned order above the
        // index (a total order equal to `(f32::total_cmp, index)`), sorted in parallel.
        // (Tried: the grid's LSD radix sort on the 32 key bits, three 11-bit passes, which
        // also needs a scratch of 8 B an object: 8M random keys took 209-229 ms against
        // 171-185 ms here, 2 cores.)
        let ordered = ordered_bits;
        let mut packed: Vec<u64> = members
            .par_iter()
            .map(|&i| (ordered(spheres[i as usize].center[axis]) as u64) << 32 | i as u64)
            .collect();
        drop(members);
        packed.par_sort_unstable();
        let ids: Vec<u32> = packed.par_iter().map(|&k| k as u32).collect();
        Order {
            ids,
            spheres,
            axis,
            r_max: r_max as f64,
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    fn sphere(&self, p: u32) -> &Sphere {
        &self.spheres[self.ids[p as usize] as usize]
    }

    /// The centre on the axis of the object at position `p`.
    fn key(&self, p: u32) -> f64 {
        self.sphere(p).center[self.axis] as f64
    }

    /// Its lower end on the axis, `centre - radius` (exact in f64 but for values far apart).
    fn low(&self, p: u32) -> f64 {
        let s = self.sphere(p);
        s.center[self.axis] as f64 - s.radius as f64
    }

    /// The highest lower end a later object may have and still touch an object of `owned`:
    /// its largest centre plus its largest radius, widened ([`REACH_SLACK`]).
    fn reach_limit(&self, owned: &Range<u32>) -> f64 {
        let hi = self.key(owned.end - 1);
        // The radii are read at random (by the order): in parallel for a large block, where
        // on one thread this read was a quarter of a partitioned frame's host time (8M
        // objects in 7 parts, with a runner that does no search).
        let radius = |p: u32| self.sphere(p).radius;
        let rk = if owned.len() < PARALLEL_BLOCK {
            owned.clone().map(radius).fold(0.0f32, f32::max)
        } else {
            owned
                .clone()
                .into_par_iter()
                .map(radius)
                .reduce(|| 0.0, f32::max)
        };
        reach_limit(hi, rk as f64, self.r_max)
    }

    /// The objects after `owned` within its reach (its ghosts), from every later position.
    pub fn ghosts_after(&self, owned: &Range<u32>) -> Vec<u32> {
        let limit = self.reach_limit(owned);
        // A lower end at or below `limit` needs a centre at or below `limit + r_max`: the last
        // such position by binary search over the order.
        let last = limit + self.r_max + COORD_SLACK * limit.abs();
        let (mut lo, mut hi) = (owned.end, self.ids.len() as u32);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key(mid) <= last {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (owned.end..lo).filter(|&p| self.low(p) <= limit).collect()
    }

    /// Those of `candidates` (later positions) within the reach of `owned`.
    pub fn ghosts_among(
        &self,
        owned: &Range<u32>,
        candidates: impl Iterator<Item = u32>,
    ) -> Vec<u32> {
        let limit = self.reach_limit(owned);
        candidates.filter(|&p| self.low(p) <= limit).collect()
    }
}

pub(crate) use crate::broadphase::keys::ordered_bits;

/// The highest lower end (`centre - radius` on the axis) an object may have and still touch
/// one of a set whose largest centre on the axis is `hi` and largest radius `rk`, where no
/// object's radius exceeds `r_max` (docs/design.md §2.10).
pub(crate) fn reach_limit(hi: f64, rk: f64, r_max: f64) -> f64 {
    hi + rk + REACH_SLACK * (rk + r_max) + COORD_SLACK * hi.abs()
}

/// The axis of largest spread between the 1st and 99th percentiles of `sample` (centres).
pub(crate) fn spread_axis(sample: &[glam::Vec3]) -> usize {
    if sample.is_empty() {
        return 0;
    }
    let spread = |axis: usize| {
        let mut v: Vec<f32> = sample.iter().map(|c| c[axis]).collect();
        v.sort_unstable_by(f32::total_cmp);
        let at = |q: usize| v[(v.len() - 1) * q / 100];
        at(99) as f64 - at(1) as f64
    };
    let spreads = [spread(0), spread(1), spread(2)];
    (0..3)
        .max_by(|&a, &b| spreads[a].total_cmp(&spreads[b]))
        .unwrap_or(0)
}

/// Objects sampled to choose the split axis.
const AXIS_SAMPLE: usize = 4096;

/// The axis of largest spread between the 1st and 99th percentiles of a sample of the centres:
/// a few outliers far out on one axis (whose full extent they would set) do not choose it,
/// where every block would then reach every later object.
fn split_axis(spheres: &[Sphere], members: &[u32]) -> usize {
    let step = (members.len() / AXIS_SAMPLE).max(1);
    let sample: Vec<glam::Vec3> = members
        .iter()
        .step_by(step)
        .map(|&i| spheres[i as usize].center)
        .collect();
    spread_axis(&sample)
}

/// One part: objects at positions `owned` of the [`Order`], plus `ghosts` (later positions
/// within their reach). It keeps the touching pairs with at least one owned object; with
/// `duty` those among owned objects too (exactly one part of each block has the duty).
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    pub owned: Range<u32>,
    pub ghosts: Vec<u32>,
    pub duty: bool,
}

impl Tile {
    /// Whether the local pair `(p, q)` (`p < q`, owned objects first) belongs to this part.
    #[inline]
    pub fn keeps(&self, p: u32, q: u32) -> bool {
        let owned = self.owned.len() as u32;
        p < owned && (q >= owned || self.duty)
    }

    /// Two or three parts that together keep exactly the pairs this one keeps, each smaller;
    /// `None` for a part of one owned object with at most one ghost.
    pub fn split(&self, order: &Order) -> Option<Vec<Tile>> {
        if self.ghosts.len() > self.owned.len() {
            // Halve the ghosts: the owned pairs stay with the first half.
            let (a, b) = self.ghosts.split_at(self.ghosts.len() / 2);
            return Some(vec![
                Tile {
                    owned: self.owned.clone(),
                    ghosts: a.to_vec(),
                    duty: self.duty,
                },
                Tile {
                    owned: self.owned.clone(),
                    ghosts: b.to_vec(),
                    duty: false,
                },
            ]);
        }
        if self.owned.len() < 2 {
            return None;
        }
        // Halve the owned block; each half keeps the ghosts within its own reach. With the
        // duty, the pairs across the halves go to a third part: the first half owned, the
        // second as its ghosts (a pair across the halves is the first half's, as in the rule),
        // so that every part is smaller than this one.
        let mid = self.owned.start + self.owned.len() as u32 / 2;
        let (first, second) = (self.owned.start..mid, mid..self.owned.end);
        let mut halves = vec![
            Tile {
                owned: first.clone(),
                ghosts: order.ghosts_among(&first, self.ghosts.iter().copied()),
                duty: self.duty,
            },
            Tile {
                owned: second.clone(),
                ghosts: order.ghosts_among(&second, self.ghosts.iter().copied()),
                duty: self.duty,
            },
        ];
        if self.duty {
            halves.push(Tile {
                owned: first.clone(),
                ghosts: order.ghosts_among(&first, second),
                duty: false,
            });
        }
        Some(halves)
    }
}

/// The first parts: blocks of `max_objects / 2` consecutive positions, each with its ghosts in
/// chunks of the room left (the first chunk's part has the owned pairs).
pub fn initial_tiles(order: &Order, max_objects: usize) -> Vec<Tile> {
    let max_objects = max_objects.max(2);
    let block = (max_objects / 2).max(1);
    let n = order.len();
    let starts: Vec<usize> = (0..n).step_by(block).collect();
    starts
        .par_iter()
        .flat_map_iter(|&start| {
            let owned = start as u32..(start + block).min(n) as u32;
            let ghosts = order.ghosts_after(&owned);
            let room = (max_objects - owned.len()).max(1);
            let mut tiles = Vec::new();
            let mut chunks = ghosts.chunks(room);
            tiles.push(Tile {
                owned: owned.clone(),
                ghosts: chunks.next().unwrap_or(&[]).to_vec(),
                duty: true,
            });
            tiles.extend(chunks.map(|c| Tile {
                owned: owned.clone(),
                ghosts: c.to_vec(),
                duty: false,
            }));
            tiles
        })
        .collect()
}
