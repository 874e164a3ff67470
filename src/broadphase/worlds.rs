//! Many independent worlds in one call (docs/design.md §2.13): a world id beside each object,
//! pairs only between objects of the same world, [`SHARED`] objects (ground, walls) in every
//! world. The vocabulary lives here; the CPU's batched run is `cpu::WorldBatch`.

use super::Pair;
use crate::error::Result;
use rayon::prelude::*;

/// The world id of an object shared by every world (ground, terrain, walls): it meets the
/// objects of each world, and other shared objects once (their pairs are the group of world
/// `SHARED`, listed last).
pub const SHARED: u32 = u32::MAX;

/// A batch's pairs grouped by world: each world's pairs contiguous, canonical inside it
/// (`i < j`, sorted), the worlds in ascending id with [`SHARED`] last. Every world present in
/// the input has its group, empty or not, so `offsets` can be indexed by a world's rank.
/// Indices are the batch's (positions in the arrays the call was given).
///
/// ```
/// use sweepfan::{Method, Sphere, WorldPairs, cpu::WorldBatch};
/// use glam::Vec3;
///
/// // Two worlds at the same place: each world's spheres touch only each other.
/// let s = |x: f32| Sphere::new(Vec3::new(x, 0.0, 0.0), 1.0);
/// let spheres = [s(0.0), s(0.0), s(1.5), s(1.5)];
/// let worlds = [7, 9, 7, 9];
/// let mut out = WorldPairs::new();
/// WorldBatch::new(Method::Grid).find_pairs(&spheres, &worlds, Some(&mut out))?;
/// assert_eq!(out.worlds(), [7, 9]);
/// assert_eq!(out.of(7), [[0, 2]]);
/// assert_eq!(out.of(9), [[1, 3]]);
/// assert_eq!(out.pairs(), [[0, 2], [1, 3]]);
/// # Ok::<(), sweepfan::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldPairs {
    pairs: Vec<Pair>,
    worlds: Vec<u32>,
    offsets: Vec<usize>,
}

impl WorldPairs {
    /// No worlds, no pairs (one offset, 0).
    ///
    /// ```
    /// let none = sweepfan::WorldPairs::new();
    /// assert_eq!((none.worlds(), none.offsets()), (&[][..], &[0][..]));
    /// assert_eq!(none.into_parts().2, [0]);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Every pair, world by world.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// The worlds present in the input, ascending, [`SHARED`] last where shared objects were
    /// given.
    pub fn worlds(&self) -> &[u32] {
        &self.worlds
    }

    /// `worlds().len() + 1` offsets into [`Self::pairs`]: world `worlds()[k]`'s pairs are
    /// `pairs()[offsets()[k]..offsets()[k + 1]]`.
    pub fn offsets(&self) -> &[usize] {
        // No world yet (a new list): one offset, 0.
        if self.offsets.is_empty() {
            &[0]
        } else {
            &self.offsets
        }
    }

    /// The pairs of world `world` (empty for a world with none or not in the input).
    pub fn of(&self, world: u32) -> &[Pair] {
        match self.worlds.binary_search(&world) {
            Ok(k) => &self.pairs[self.offsets[k]..self.offsets[k + 1]],
            Err(_) => &[],
        }
    }

    /// Each world with its pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[Pair])> + '_ {
        self.worlds
            .iter()
            .zip(self.offsets.windows(2))
            .map(|(&w, o)| (w, &self.pairs[o[0]..o[1]]))
    }

    /// Touching pairs over every world.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no world has a pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The world of each pair, beside [`Self::pairs`].
    pub fn world_of_each_pair(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.pairs.len());
        for (w, pairs) in self.iter() {
            out.extend(std::iter::repeat_n(w, pairs.len()));
        }
        out
    }

    /// Takes the parts: (pairs, worlds, offsets).
    pub fn into_parts(mut self) -> (Vec<Pair>, Vec<u32>, Vec<usize>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        (self.pairs, self.worlds, self.offsets)
    }

    /// Empties the lists, keeping their memory (a caller's list reused frame after frame).
    pub fn clear(&mut self) {
        self.pairs.clear();
        self.worlds.clear();
        self.offsets.clear();
    }

    /// The lists to fill: pairs, worlds, offsets.
    pub(crate) fn parts_mut(&mut self) -> (&mut Vec<Pair>, &mut Vec<u32>, &mut Vec<usize>) {
        (&mut self.pairs, &mut self.worlds, &mut self.offsets)
    }

    /// Fills the lists from pairs `found` in any order (each `i < j`, both of one world or one
    /// of them shared): `rank[i]` is object i's world's place in `groups.ids`, the shared
    /// objects' `groups.ids.len()`. A pair takes the world of its non-shared object (world
    /// [`SHARED`] when both are shared). `keys` is scratch. Both lists grow within the
    /// caller's memory budget (docs/design.md §9.14): a refusal is an error, the lists empty.
    pub(crate) fn group_found(
        &mut self,
        found: &[Pair],
        rank: &[u32],
        groups: &WorldGroups,
        keys: &mut Vec<u128>,
    ) -> crate::error::Result<()> {
        use crate::broadphase::memory;
        let shared_rank = groups.ids.len() as u32;
        let key = |p: &Pair| {
            let r = rank[p[0] as usize];
            let world = if r == shared_rank {
                rank[p[1] as usize]
            } else {
                r
            };
            u128::from(world) << 64 | u128::from(p[0]) << 32 | u128::from(p[1])
        };
        self.clear();
        keys.clear();
        let pairs = found.len() as u64;
        // Both only for a stored list (a count needs neither): the pair list's refusal.
        memory::reserve(
            keys,
            found.len(),
            &format!("the world order of {pairs} pairs"),
        )
        .map_err(|e| memory::for_pair_list(e, pairs))?;
        memory::reserve_pairs(&mut self.pairs, found.len(), pairs)?;
        if found.len() >= 1 << 16 {
            keys.par_extend(found.par_iter().map(key));
            keys.par_sort_unstable();
        } else {
            keys.extend(found.iter().map(key));
            keys.sort_unstable();
        }
        self.worlds.extend_from_slice(&groups.ids);
        if !groups.shared.is_empty() {
            self.worlds.push(SHARED);
        }
        self.offsets.push(0);
        for &k in keys.iter() {
            let world = (k >> 64) as usize;
            while self.offsets.len() <= world {
                self.offsets.push(self.pairs.len());
            }
            self.pairs.push([(k >> 32) as u32, k as u32]);
        }
        while self.offsets.len() <= self.worlds.len() {
            self.offsets.push(self.pairs.len());
        }
        Ok(())
    }
}

/// Many worlds in one call, on the CPU (`cpu::WorldBatch`) or the GPU (`gpu::GpuWorldBatch`):
/// one trait, both behind it.
pub trait WorldBroadPhase {
    /// The method's name (`"grid"`, `"auto"`).
    fn name(&self) -> &str;
    /// Where it runs.
    fn backend(&self) -> super::Backend;
    /// The most pairs one call may store over all worlds; a call finding more fails with
    /// `Error::TooLarge`.
    fn set_pair_limit(&mut self, limit: u64);
    /// The touching pairs of each world: `worlds[i]` is sphere `i`'s world ([`SHARED`]: every
    /// world's). With `out = None` only counts (`Stats::pairs`). An empty batch has no pairs.
    fn find_pairs(
        &mut self,
        spheres: &[crate::geom::sphere::Sphere],
        worlds: &[u32],
        out: Option<&mut WorldPairs>,
    ) -> Result<super::Stats>;
}

/// The [`WorldBroadPhase`] of a type whose own methods of the same names answer it (`name`,
/// `set_pair_limit`, `find_pairs`), running on `$backend`.
macro_rules! world_broad_phase_by_own_methods {
    ($t:ident, $backend:expr) => {
        impl $crate::broadphase::worlds::WorldBroadPhase for $t {
            fn name(&self) -> &str {
                $t::name(self)
            }
            fn backend(&self) -> $crate::broadphase::Backend {
                $backend
            }
            fn set_pair_limit(&mut self, limit: u64) {
                $t::set_pair_limit(self, limit);
            }
            fn find_pairs(
                &mut self,
                spheres: &[$crate::geom::sphere::Sphere],
                worlds: &[u32],
                out: Option<&mut $crate::broadphase::worlds::WorldPairs>,
            ) -> $crate::error::Result<$crate::broadphase::Stats> {
                $t::find_pairs(self, spheres, worlds, out)
            }
        }
    };
}
pub(crate) use world_broad_phase_by_own_methods;

/// A batch's objects grouped by world: `order` lists the objects of each world together
/// (ascending world, ascending index inside one), world `ids[k]` at `order[starts[k]..starts[k
/// + 1]]`; the [`SHARED`] objects apart, ascending.
#[derive(Clone, Debug, Default)]
pub(crate) struct WorldGroups {
    pub order: Vec<u32>,
    pub ids: Vec<u32>,
    pub starts: Vec<usize>,
    pub shared: Vec<u32>,
    /// Whether `order` is `0..order.len()` (the objects came world by world, none shared): a
    /// world's objects are then a slice of the caller's own.
    pub contiguous: bool,
    keys: Vec<u64>,
}

/// An error unless there is one world id per object (`what` names the ids' argument).
pub(crate) fn check_world_ids(objects: usize, worlds: &[u32], what: &'static str) -> Result<()> {
    crate::error::check_length(what, worlds.len(), objects, || {
        format!(
            "{what} has {} world ids for {objects} objects; give one per object",
            worlds.len()
        )
    })
}

/// The start of a batch's call: its ids checked ([`check_world_ids`]) and `out` cleared; false
/// when there are no objects (no pairs, nothing to run).
pub(crate) fn start_batch(
    objects: usize,
    worlds: &[u32],
    out: &mut Option<&mut WorldPairs>,
) -> Result<bool> {
    check_world_ids(objects, worlds, "worlds")?;
    if let Some(out) = out.as_deref_mut() {
        out.clear();
    }
    Ok(objects > 0)
}

impl WorldGroups {
    /// Groups `worlds` (one id per object, already checked).
    pub fn group(&mut self, worlds: &[u32]) {
        self.ids.clear();
        self.starts.clear();
        self.shared.clear();
        self.order.clear();
        let n = worlds.len();
        // Objects that come world by world (ids never decreasing): each world starts where
        // the id changes, found in the same pass that checks the order (in parallel for large
        // batches); shared objects, if any, are the tail.
        let starts_if_sorted = |from: usize, ids: &[u32]| -> Option<Vec<usize>> {
            let mut starts = Vec::new();
            for (k, w) in ids.windows(2).enumerate() {
                if w[1] < w[0] {
                    return None;
                }
                if w[1] != w[0] {
                    starts.push(from + k + 1);
                }
            }
            Some(starts)
        };
        const PIECE: usize = 1 << 14;
        let starts: Option<Vec<usize>> = if n >= 1 << 16 {
            // Pieces overlapping by one id, so every change is seen once.
            let pieces: Option<Vec<Vec<usize>>> = (0..n.div_ceil(PIECE))
                .into_par_iter()
                .map(|k| {
                    let from = (k * PIECE).saturating_sub(1);
                    starts_if_sorted(from, &worlds[from..((k + 1) * PIECE).min(n)])
                })
                .collect();
            pieces.map(|p| p.concat())
        } else {
            starts_if_sorted(0, worlds)
        };
        if let Some(changes) = starts {
            let owned = worlds.partition_point(|&w| w != SHARED);
            self.shared.extend(owned as u32..n as u32);
            self.order.extend(0..owned as u32);
            self.contiguous = owned == n;
            if owned > 0 {
                self.starts.push(0);
            }
            self.starts
                .extend(changes.into_iter().take_while(|&p| p < owned));
            self.ids.extend(self.starts.iter().map(|&p| worlds[p]));
            self.starts.push(owned);
            return;
        }
        // Else by a sort of (world, index).
        self.contiguous = false;
        self.keys.clear();
        let pack = |(i, &w): (usize, &u32)| (u64::from(w) << 32) | i as u64;
        if n >= 1 << 16 {
            self.keys
                .par_extend(worlds.par_iter().enumerate().map(pack));
        } else {
            self.keys.extend(worlds.iter().enumerate().map(pack));
        }
        // (A radix sort on the world bits would be faster; batches from a simulation come
        // world by world and take the branch above.)
        if n >= 1 << 16 {
            self.keys.par_sort_unstable();
        } else {
            self.keys.sort_unstable();
        }
        for &k in &self.keys {
            let (w, i) = ((k >> 32) as u32, k as u32);
            if w == SHARED {
                self.shared.push(i);
            } else {
                self.order.push(i);
            }
        }
        let world = |p: usize| worlds[self.order[p] as usize];
        let mut p = 0;
        while p < self.order.len() {
            let w = world(p);
            self.ids.push(w);
            self.starts.push(p);
            // The world's end: a galloping search, as most worlds are small (the grouping is
            // world-major, so "in world w" is a prefix of what follows p).
            let (mut lo, mut step) = (p + 1, 1);
            let hi = loop {
                let probe = p + step;
                if probe >= self.order.len() || world(probe) != w {
                    break probe.min(self.order.len());
                }
                lo = probe + 1;
                step *= 2;
            };
            let end = lo + self.order[lo..hi].partition_point(|&i| worlds[i as usize] == w);
            p = end;
        }
        self.starts.push(self.order.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups_of(worlds: &[u32]) -> Vec<(u32, Vec<u32>)> {
        let mut g = WorldGroups::default();
        g.group(worlds);
        let mut out: Vec<(u32, Vec<u32>)> = g
            .ids
            .iter()
            .zip(g.starts.windows(2))
            .map(|(&w, s)| (w, g.order[s[0]..s[1]].to_vec()))
            .collect();
        if !g.shared.is_empty() {
            out.push((SHARED, g.shared.clone()));
        }
        out
    }

    /// The grouping equals a map from world to its objects built the plain way, on sorted,
    /// interleaved, shared and single-world ids, sizes around the galloping steps.
    #[test]
    fn groups_equal_a_plain_map() {
        use std::collections::BTreeMap;
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![5],
            vec![SHARED],
            vec![3, 3, 3, 3, 3, 3, 3],
            vec![0, 1, 1, 2, 2, 2, 2, 2, 3, 9, 9, SHARED, SHARED],
            vec![9, 2, SHARED, 2, 7, 9, 0, SHARED, 7, 7],
            (0..1000).map(|i| (i * 7919 % 13) as u32).collect(),
            (0..1000).map(|i| i / 17).collect(),
            (0..1000)
                .map(|i| {
                    if i % 5 == 0 {
                        SHARED
                    } else {
                        u32::MAX - 1 - i / 100
                    }
                })
                .collect(),
            // Past 2^16 ids, sorted ones are checked and split in pieces of 2^14: worlds
            // changing at a piece's first id, at its last, spanning pieces; one id out of
            // order in the last piece; a shared tail.
            (0..70_000u32)
                .map(|i| {
                    if i % 16_384 < 2 {
                        i / 16_384 * 3 + i % 2
                    } else {
                        i / 16_384 * 3 + 2
                    }
                })
                .collect(),
            (0..70_000u32).map(|i| i / 40_000).collect(),
            (0..70_000u32)
                .map(|i| if i == 69_999 { 0 } else { i / 64 })
                .collect(),
            (0..70_000u32)
                .map(|i| if i >= 65_536 { SHARED } else { i / 64 })
                .collect(),
        ];
        for worlds in cases {
            let mut plain: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for (i, &w) in worlds.iter().enumerate() {
                plain.entry(w).or_default().push(i as u32);
            }
            let expected: Vec<(u32, Vec<u32>)> = plain.into_iter().collect();
            assert!(
                groups_of(&worlds) == expected,
                "{:?}",
                &worlds[..worlds.len().min(50)]
            );
        }
    }
}
