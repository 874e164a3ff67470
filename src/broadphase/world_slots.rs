//! Many worlds through any box job in one call (docs/design.md §2.13): each world's y
//! coordinates are replaced by their ranks among that world's own, at slots of their own, so
//! that boxes of different worlds lie apart on y and boxes of one world compare on y exactly as
//! before (a strictly increasing map keeps every `<=`). Shared boxes are copied into each world
//! (their y mapped by that world's ranks) and once among themselves. One run of the job over
//! the mapped boxes then finds exactly the pairs within worlds.

use super::Pair;
use super::worlds::WorldGroups;
use crate::geom::aabb::Aabb;
use rayon::prelude::*;

/// Slots an f32 holds exactly (integers up to 2^24).
pub(crate) const EXACT_SLOTS: u64 = 1 << 24;

/// The mapped boxes and, for each, the batch position it stands for.
pub(crate) struct WorldSlots {
    pub boxes: Vec<Aabb>,
    /// Batch position of each mapped box.
    origin: Vec<u32>,
    /// Mapped boxes from `copies_from` on are copies of shared boxes, `shared.len()` a world.
    copies_from: usize,
    shared: usize,
}

/// A world's y values, sorted without repeats (`-0.0` and `0.0` are one value, as `<=` has
/// them), and the slot where the world starts.
struct Ranks {
    values: Vec<f32>,
    base: u64,
}

impl Ranks {
    fn new(values: Vec<f32>) -> Self {
        let mut values = values;
        values.sort_unstable_by(f32::total_cmp);
        values.dedup_by(|a, b| a == b);
        Self { values, base: 0 }
    }

    /// Slots the world takes: a value's own (odd) and those between and around (even).
    fn span(&self) -> u64 {
        2 * self.values.len() as u64 + 1
    }

    /// `y`'s slot: its own where it is one of the world's values, else the slot between its
    /// neighbours, so that it compares with every value of the world as `y` does.
    fn slot(&self, y: f32) -> f32 {
        let k = self.values.partition_point(|&v| v < y);
        let own = self.values.get(k).is_some_and(|&v| v == y);
        (self.base + 2 * k as u64 + u64::from(own)) as f32
    }

    fn map(&self, b: &Aabb) -> Aabb {
        let mut m = *b;
        m.min.y = self.slot(b.min.y);
        m.max.y = self.slot(b.max.y);
        m
    }
}

impl WorldSlots {
    /// The mapped batch, or `None` when it would take more than `max_slots` slots
    /// ([`EXACT_SLOTS`]: what an f32 holds exactly, about 4 million boxes), or hold more boxes
    /// (the shared ones copied into every world): the caller runs the worlds one by one instead.
    pub fn new(boxes: &[Aabb], groups: &WorldGroups, max_slots: u64) -> Option<Self> {
        let ys = |members: &[u32]| -> Vec<f32> {
            members
                .iter()
                .flat_map(|&i| [boxes[i as usize].min.y, boxes[i as usize].max.y])
                .collect()
        };
        let worlds: Vec<&[u32]> = groups
            .starts
            .windows(2)
            .map(|s| &groups.order[s[0]..s[1]])
            .collect();
        // Each world takes a copy of every shared box: more boxes than slots (10,000 shared
        // among 100,000 worlds would be 10^9 copies, 24 GB) also go one world at a time.
        let copies = (groups.shared.len() as u64).saturating_mul(worlds.len() as u64 + 1);
        if copies.saturating_add(boxes.len() as u64) > max_slots {
            return None;
        }
        let mut ranks: Vec<Ranks> = worlds.par_iter().map(|m| Ranks::new(ys(m))).collect();
        // The shared boxes among themselves: one more world, after the others.
        ranks.push(Ranks::new(ys(&groups.shared)));
        let mut next = 0u64;
        for r in &mut ranks {
            r.base = next;
            next += r.span() + 1;
        }
        if next > max_slots {
            return None;
        }
        let s = groups.shared.len();
        let own: usize = worlds.iter().map(|m| m.len()).sum();
        let mut mapped = Vec::with_capacity(own + s * (worlds.len() + 1));
        let mut origin = Vec::with_capacity(mapped.capacity());
        for (m, r) in worlds.iter().zip(&ranks) {
            mapped.extend(m.iter().map(|&i| r.map(&boxes[i as usize])));
            origin.extend_from_slice(m);
        }
        let shared_ranks = ranks.last().expect("pushed above");
        mapped.extend(
            groups
                .shared
                .iter()
                .map(|&i| shared_ranks.map(&boxes[i as usize])),
        );
        origin.extend_from_slice(&groups.shared);
        let copies_from = mapped.len();
        if s > 0 {
            for r in &ranks[..worlds.len()] {
                mapped.extend(groups.shared.iter().map(|&i| r.map(&boxes[i as usize])));
                origin.extend_from_slice(&groups.shared);
            }
        }
        Some(Self {
            boxes: mapped,
            origin,
            copies_from,
            shared: s,
        })
    }

    /// Pairs `found` among the mapped boxes into batch positions in `out` (cleared first): two
    /// copies of shared boxes in one world are the shared boxes' own pair, kept only where they
    /// meet among themselves.
    pub fn to_batch(&self, found: &[Pair], out: &mut Vec<Pair>) {
        out.clear();
        let copy_world = |t: u32| {
            let t = t as usize;
            (t >= self.copies_from).then(|| (t - self.copies_from) / self.shared.max(1))
        };
        out.extend(found.iter().filter_map(|&[a, b]| {
            if let (Some(x), Some(y)) = (copy_world(a), copy_world(b))
                && x == y
            {
                return None;
            }
            let (a, b) = (self.origin[a as usize], self.origin[b as usize]);
            Some([a.min(b), a.max(b)])
        }));
    }
}

#[cfg(test)]
mod tests {
    use crate::broadphase::aabbs::{AabbOverlaps, overlaps_in_worlds_within};
    use crate::broadphase::worlds::SHARED;
    use crate::broadphase::{Backend, Pair, Stats};
    use crate::geom::aabb::Aabb;
    use glam::Vec3;

    /// The job as all pairs, written here: the mapping is checked through it.
    struct AllPairs;
    impl AabbOverlaps for AllPairs {
        fn name(&self) -> String {
            "all pairs".into()
        }
        fn backend(&self) -> Backend {
            Backend::Cpu
        }
        fn aabb_overlaps_unordered(
            &mut self,
            boxes: &[Aabb],
            out: &mut Vec<Pair>,
        ) -> crate::Result<Stats> {
            out.clear();
            for i in 0..boxes.len() {
                for j in i + 1..boxes.len() {
                    if boxes[i].overlaps(&boxes[j]) {
                        out.push([i as u32, j as u32]);
                    }
                }
            }
            Ok(Stats::default())
        }
    }

    fn expected(boxes: &[Aabb], worlds: &[u32]) -> Vec<Pair> {
        let mut out = Vec::new();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                let same = worlds[i] == worlds[j] || worlds[i] == SHARED || worlds[j] == SHARED;
                if same && boxes[i].overlaps(&boxes[j]) {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    }

    #[test]
    fn mapped_worlds_find_exactly_the_pairs_within_worlds() {
        let mut state = 7u64;
        let mut next = |m: u64| (crate::geom::test_util::lcg_next(&mut state) >> 33) % m;
        for round in 0..30 {
            let n = 2 + next(120) as usize;
            let mut boxes = Vec::new();
            let mut worlds = Vec::new();
            for k in 0..n {
                // Quarter-grid corners (exact touches), signed zeros, and degenerate boxes.
                let lo = Vec3::new(
                    next(16) as f32 / 4.0,
                    next(16) as f32 / 4.0 - 2.0,
                    next(16) as f32 / 4.0,
                );
                let mut size = Vec3::new(next(6) as f32, next(6) as f32, next(6) as f32) / 4.0;
                if k % 9 == 0 {
                    size = Vec3::ZERO;
                }
                let mut b = Aabb::new(lo, lo + size);
                if b.min.y == 0.0 && k % 2 == 0 {
                    b.min.y = -0.0;
                }
                boxes.push(b);
                worlds.push(match next(10) {
                    0 => SHARED,
                    w => (w as u32 + round) * 1000,
                });
            }
            // A wide shared floor whose y lies between and on the worlds' values.
            boxes.push(Aabb::new(
                Vec3::new(-9.0, -1.125, -9.0),
                Vec3::new(9.0, -0.5, 9.0),
            ));
            worlds.push(SHARED);
            let want = expected(&boxes, &worlds);
            for max_slots in [super::EXACT_SLOTS, 0] {
                let mut got = Vec::new();
                overlaps_in_worlds_within(&mut AllPairs, &boxes, &worlds, &mut got, max_slots)
                    .unwrap();
                got.sort_unstable();
                assert_eq!(got, want, "round {round}, slots {max_slots}");
            }
        }
    }

    #[test]
    fn slots_past_the_limit_fall_back() {
        let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE); 3];
        let mut groups = crate::broadphase::worlds::WorldGroups::default();
        groups.group(&[1, 2, 2]);
        assert!(super::WorldSlots::new(&boxes, &groups, 8).is_none());
        assert!(super::WorldSlots::new(&boxes, &groups, 100).is_some());
        // 100 worlds of one box and 50 shared boxes: 650 slots, but 5,050 copies of the
        // shared ones; within 1,000 slots that is one world at a time, and still exact.
        let boxes: Vec<Aabb> = (0..150)
            .map(|k| {
                Aabb::new(
                    Vec3::splat(k as f32 * 0.1),
                    Vec3::splat(k as f32 * 0.1 + 1.0),
                )
            })
            .collect();
        let worlds: Vec<u32> = (0..150).map(|k| if k < 100 { k } else { SHARED }).collect();
        let mut groups = crate::broadphase::worlds::WorldGroups::default();
        groups.group(&worlds);
        assert!(super::WorldSlots::new(&boxes, &groups, 1000).is_none());
        let mut got = Vec::new();
        overlaps_in_worlds_within(&mut AllPairs, &boxes, &worlds, &mut got, 1000).unwrap();
        got.sort_unstable();
        assert_eq!(got, expected(&boxes, &worlds));
    }
}
