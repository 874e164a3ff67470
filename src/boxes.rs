//! The broad phase over the caller's boxes (docs/design.md §4.7): axis-aligned boxes held by the
//! caller's ids, as a simulation holds its bodies; each [`BoxBroadPhase::update`] returns the
//! pairs that began and ended touching, named by those ids.
//!
//! ```
//! use sweepfan::{Aabb, BoxBroadPhase};
//! use glam::Vec3;
//!
//! let cube = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
//! let mut broad = BoxBroadPhase::cpu(); // or BoxBroadPhase::gpu(context)?
//! broad.set_many(&[70, 9, 1234], &[cube(0.0), cube(0.5), cube(5.0)])?;
//! let frame = broad.update()?;
//! assert_eq!(frame.found, [[9, 70]]);
//! broad.set(1234, cube(1.5))?; // moved: now touches 70's neighbour 9 (closed intervals)
//! broad.remove(70);
//! let frame = broad.update()?;
//! assert_eq!((frame.found, frame.lost), (vec![[9, 1234]], vec![[9, 70]]));
//! assert_eq!(broad.pairs(), [[9, 1234]]);
//! # Ok::<(), sweepfan::Error>(())
//! ```

use crate::broadphase::aabbs::AabbOverlaps;
use crate::broadphase::worlds::SHARED;
use crate::broadphase::{Backend, Pair, Stats};
use crate::cpu::aabb_sweep::BoxSweep;
use crate::error::{Error, Result, check_length};
use crate::events::merge_changes;
use crate::geom::aabb::Aabb;
use crate::gpu::{GpuBoxPipeline, GpuContext, Proxy};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

pub use crate::broadphase::{Id, IdPair};

/// What one [`BoxBroadPhase::update`] found, against the previous update.
#[derive(Clone, Debug, Default)]
pub struct BoxFrame {
    /// Pairs touching now that did not before (sorted; each `[a, b]` with `a < b`). A pair
    /// whose boxes changed world together and still touch is lost in its old world and found
    /// in its new, as the spheres' world events count it.
    pub found: Vec<IdPair>,
    /// Pairs that touched before and do not now, including those of removed objects (sorted).
    pub lost: Vec<IdPair>,
    /// The world of each pair of `found`, beside it: its boxes' world, or where one is
    /// [`SHARED`], the other's (`SHARED` where both are); 0 for boxes never put
    /// in a world ([`BoxBroadPhase::set_many_in_worlds`]).
    pub found_worlds: Vec<u32>,
    /// The world of each pair of `lost`, beside it, as it was when the pair touched (so removed
    /// boxes' pairs keep theirs).
    pub lost_worlds: Vec<u32>,
    /// Pairs touching both before and now, in the same world.
    pub persisting: u64,
    /// What the broad phase did.
    pub stats: Stats,
}

/// Axis-aligned boxes by the caller's ids, and the pairs of the last update.
///
/// [`Self::set`] and [`Self::set_many`] insert or move boxes, [`Self::remove`] drops them,
/// [`Self::update`] runs the broad phase (CPU sweep or GPU sweep, [`AabbOverlaps`]) over every
/// box held and returns the events. Exact: a pair is touching if and only if
/// [`Aabb::overlaps`] holds.
pub struct BoxBroadPhase {
    overlaps: Box<dyn AabbOverlaps>,
    ids: Vec<Id>,
    boxes: Vec<Aabb>,
    slots: HashMap<Id, u32, BuildHasherDefault<IdHasher>>,
    /// Each box's world, beside `boxes` (0 unless set: docs/design.md §2.13).
    worlds: Vec<u32>,
    /// Whether a box was ever put in a world other than 0 (since the last [`Self::clear`]):
    /// updates then find pairs world by world.
    in_worlds: bool,
    /// The last update's pairs, sorted, and each one's world beside it.
    pairs: Vec<IdPair>,
    pair_worlds: Vec<u32>,
    /// Whether the last update ran in worlds (`pair_worlds` may then hold worlds other than 0).
    pairs_in_worlds: bool,
    /// The update's pairs and their worlds being built (the lists before, kept for their
    /// allocations).
    now: Vec<IdPair>,
    now_worlds: Vec<u32>,
    positions: Vec<Pair>,
    /// The update's events being built, copied into the caller's frame once the update is
    /// kept.
    spare: BoxFrame,
}

impl BoxBroadPhase {
    /// Over any implementation of the box job.
    pub fn new(overlaps: Box<dyn AabbOverlaps>) -> Self {
        Self {
            overlaps,
            ids: Vec::new(),
            boxes: Vec::new(),
            worlds: Vec::new(),
            in_worlds: false,
            slots: HashMap::default(),
            pairs: Vec::new(),
            pair_worlds: Vec::new(),
            pairs_in_worlds: false,
            now: Vec::new(),
            now_worlds: Vec::new(),
            positions: Vec::new(),
            spare: BoxFrame::default(),
        }
    }

    /// On the CPU: the sweep of the box pipelines (docs/design.md §4.4).
    pub fn cpu() -> Self {
        Self::new(Box::new(BoxSweep::new()))
    }

    /// On `ctx`'s GPU: the sweep of the GPU box pipeline (docs/design.md §4.5).
    pub fn gpu(ctx: Arc<GpuContext>) -> Result<Self> {
        Ok(Self::new(Box::new(GpuBoxPipeline::new(ctx, Proxy::Aabb)?)))
    }

    /// The implementation's name.
    pub fn name(&self) -> String {
        self.overlaps.name()
    }

    /// Where the updates run.
    pub fn backend(&self) -> Backend {
        self.overlaps.backend()
    }

    /// Boxes held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no box is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The box held for `id`.
    pub fn get(&self, id: Id) -> Option<Aabb> {
        self.slots.get(&id).map(|&s| self.boxes[s as usize])
    }

    /// Inserts the box of `id`, or moves it there; takes effect at the next [`Self::update`].
    /// A box with a NaN or infinite coordinate or `min > max` is an [`Error::InvalidId`], and
    /// nothing changes.
    pub fn set(&mut self, id: Id, aabb: Aabb) -> Result<()> {
        self.set_many(&[id], &[aabb])
    }

    /// [`Self::set`] for many boxes: `ids[k]` gets `boxes[k]`. All or nothing: the first bad box,
    /// an id given twice or lengths that differ is an error and nothing changes. A new box is in
    /// world 0; a moved one keeps its world.
    pub fn set_many(&mut self, ids: &[Id], boxes: &[Aabb]) -> Result<()> {
        self.set_many_with(ids, boxes, None)
    }

    /// Many worlds in one broad phase (docs/design.md §2.13): [`Self::set_many`] with each box's
    /// world, `worlds[k]` for `ids[k]`. Boxes of different worlds never pair; a box of world
    /// [`SHARED`] (ground, walls) pairs with every world's. Ids stay unique over
    /// all worlds, so the events name pairs by id as before.
    ///
    /// ```
    /// use sweepfan::{Aabb, BoxBroadPhase, SHARED};
    /// use glam::Vec3;
    ///
    /// let cube = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    /// let floor = Aabb::new(Vec3::new(-100.0, -1.0, -100.0), Vec3::new(100.0, 0.0, 100.0));
    /// let mut broad = BoxBroadPhase::cpu();
    /// // Two worlds with the same two boxes at the same place, and a floor shared by both.
    /// broad.set_many_in_worlds(
    ///     &[1, 2, 11, 12, 99],
    ///     &[cube(0.0), cube(0.5), cube(0.0), cube(0.5), floor],
    ///     &[7, 7, 8, 8, SHARED],
    /// )?;
    /// let frame = broad.update()?;
    /// assert_eq!(frame.found, [[1, 2], [1, 99], [2, 99], [11, 12], [11, 99], [12, 99]]);
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn set_many_in_worlds(&mut self, ids: &[Id], boxes: &[Aabb], worlds: &[u32]) -> Result<()> {
        check_length("worlds", worlds.len(), ids.len(), || {
            format!(
                "worlds has {} world ids for {} boxes; give one per box",
                worlds.len(),
                ids.len()
            )
        })?;
        self.set_many_with(ids, boxes, Some(worlds))
    }

    /// The world of the box of `id` (`None`: no box has that id).
    pub fn world(&self, id: Id) -> Option<u32> {
        self.slots.get(&id).map(|&s| self.worlds[s as usize])
    }

    fn set_many_with(&mut self, ids: &[Id], boxes: &[Aabb], worlds: Option<&[u32]>) -> Result<()> {
        check_length("ids", ids.len(), boxes.len(), || {
            format!(
                "{} ids for {} boxes: one id per box",
                ids.len(),
                boxes.len()
            )
        })?;
        // More than positions can number: refused before the boxes are read or the ids' set
        // is allocated (2^32 ids aborted the process allocating 77 GB for it).
        if ids.len() > u32::MAX as usize - 1 {
            return Err(Error::past_u32(
                ids.len() as u64,
                format!("{} boxes in one call: positions are u32", ids.len()),
            ));
        }
        if let Some((&id, problem)) = ids
            .iter()
            .zip(boxes)
            .find_map(|(id, b)| crate::geom::Validate::problem(b).map(|p| (id, p)))
        {
            return Err(Error::InvalidId { id, problem });
        }
        let mut given: HashSet<Id, BuildHasherDefault<IdHasher>> = HashSet::default();
        if given.try_reserve(ids.len()).is_err() {
            let needed = ids.len() as u64 * 16;
            let usable = crate::broadphase::memory::available().map(|a| a.usable());
            return Err(Error::too_large(
                crate::error::Exceeds::HostMemory { needed, usable },
                format!(
                    "checking {} ids for repeats needs about {}, which the allocator refused; \
                     set fewer boxes a call",
                    ids.len(),
                    crate::broadphase::memory::human(needed)
                ),
            ));
        }
        if let Some(&id) = ids.iter().find(|&&id| !given.insert(id)) {
            return Err(Error::InvalidId {
                id,
                problem: "given twice in one call".into(),
            });
        }
        let new = ids.iter().filter(|id| !self.slots.contains_key(id)).count();
        let total = self.ids.len() + new;
        if total > u32::MAX as usize - 1 {
            return Err(Error::past_u32(
                total as u64,
                format!("{total} boxes: positions are u32"),
            ));
        }
        for (k, (&id, &aabb)) in ids.iter().zip(boxes).enumerate() {
            let slot = match self.slots.get(&id) {
                Some(&s) => {
                    self.boxes[s as usize] = aabb;
                    s as usize
                }
                None => {
                    self.slots.insert(id, self.ids.len() as u32);
                    self.ids.push(id);
                    self.boxes.push(aabb);
                    self.worlds.push(0);
                    self.ids.len() - 1
                }
            };
            if let Some(worlds) = worlds {
                self.worlds[slot] = worlds[k];
                self.in_worlds |= worlds[k] != 0;
            }
        }
        Ok(())
    }

    /// Drops the box of `id` (its pairs are `lost` at the next update); returns it, or `None`
    /// when no box has that id.
    pub fn remove(&mut self, id: Id) -> Option<Aabb> {
        let slot = self.slots.remove(&id)? as usize;
        let removed = self.boxes.swap_remove(slot);
        self.ids.swap_remove(slot);
        self.worlds.swap_remove(slot);
        if let Some(&moved) = self.ids.get(slot) {
            self.slots.insert(moved, slot as u32);
        }
        Some(removed)
    }

    /// Drops every box (every pair is `lost` at the next update).
    pub fn clear(&mut self) {
        self.ids.clear();
        self.boxes.clear();
        self.worlds.clear();
        self.in_worlds = false;
        self.slots.clear();
    }

    /// Runs the broad phase over every box held: the pairs touching now ([`Self::pairs`]) and
    /// the events against the previous update. On an error nothing changes.
    pub fn update(&mut self) -> Result<BoxFrame> {
        let mut frame = BoxFrame::default();
        self.update_into(&mut frame)?;
        Ok(frame)
    }

    /// [`Self::update`] into the caller's frame, whose `found` and `lost` are cleared and
    /// refilled in the allocations they have (a simulation's loop allocates nothing once they
    /// have grown to its contacts' churn). On an error nothing changes, `frame` included.
    ///
    /// ```
    /// use sweepfan::{Aabb, BoxBroadPhase, BoxFrame};
    /// use glam::Vec3;
    ///
    /// let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    /// let mut broad = BoxBroadPhase::cpu();
    /// let mut frame = BoxFrame::default();
    /// broad.set_from([(1, unit(0.0)), (2, unit(0.5)), (3, unit(5.0))])?;
    /// broad.update_into(&mut frame)?;
    /// assert_eq!(frame.found, [[1, 2]]);
    /// broad.set(3, unit(1.2))?;
    /// broad.update_into(&mut frame)?; // the same vectors, refilled
    /// assert_eq!(frame.found, [[2, 3]]);
    /// assert_eq!((frame.lost.len(), frame.persisting), (0, 1));
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn update_into(&mut self, frame: &mut BoxFrame) -> Result<()> {
        let stats = match self.without_sweep()? {
            Some(stats) => stats,
            None => self
                .overlaps
                .aabb_overlaps_unordered(&self.boxes, &mut self.positions)?,
        };
        self.events(stats, frame)
    }

    /// [`Self::set_many`] from `(id, box)` items (a map's entries, an iterator over the
    /// simulation's bodies): all or nothing, as `set_many`.
    pub fn set_from(&mut self, items: impl IntoIterator<Item = (Id, Aabb)>) -> Result<()> {
        let (ids, boxes): (Vec<Id>, Vec<Aabb>) = items.into_iter().unzip();
        self.set_many(&ids, &boxes)
    }

    /// [`Self::update`] as a future, for a browser's page, where the GPU's update awaits the
    /// device (docs/design.md §8.5); on the CPU it is ready at once.
    pub async fn update_async(&mut self) -> Result<BoxFrame> {
        let stats = match self.without_sweep()? {
            Some(stats) => stats,
            None => {
                self.overlaps
                    .aabb_overlaps_unordered_async(&self.boxes, &mut self.positions)
                    .await?
            }
        };
        let mut frame = BoxFrame::default();
        self.events(stats, &mut frame)?;
        Ok(frame)
    }

    /// The update's stats where it needs no one-world sweep: with fewer than two boxes no pair
    /// (the broad phase does not run); boxes in worlds run the blocking path (a browser's GPU
    /// refuses it with `Unsupported`). `None`: the caller sweeps, blocking or awaiting.
    fn without_sweep(&mut self) -> Result<Option<Stats>> {
        if self.boxes.len() < 2 {
            self.positions.clear();
            return Ok(Some(Stats::default()));
        }
        // Worlds once set may all be world 0 again (boxes removed or set back): then one
        // world, the plain sweep (which a browser's GPU runs), until a world is set again.
        if self.in_worlds && self.worlds.iter().all(|&w| w == 0) {
            self.in_worlds = false;
        }
        if !self.in_worlds {
            return Ok(None);
        }
        let stats = self.overlaps.aabb_overlaps_in_worlds_unordered(
            &self.boxes,
            &self.worlds,
            &mut self.positions,
        )?;
        Ok(Some(stats))
    }

    /// The update's pairs by id, from the positions the broad phase found, and its events into
    /// `frame` (its lists cleared first).
    fn events(&mut self, stats: Stats, frame: &mut BoxFrame) -> Result<()> {
        // A look at the caller's cancellation before the pairs are mapped to ids and sorted,
        // and one before the sort: with 32M pairs that tail took 2 s past a Ctrl-C.
        let token = crate::broadphase::cancel::current();
        crate::broadphase::cancel::check(&token)?;
        // The pairs by id and the events, before they are made (any backend, any worlds).
        let budget = crate::broadphase::memory::LazyBudget::new();
        crate::broadphase::aabbs::check_box_job_pairs(self.positions.len() as u64, &budget)?;
        // A caller's own `AabbOverlaps` may return anything (a pair it returns twice is one
        // pair, below).
        crate::broadphase::aabbs::check_positions(&self.positions, self.ids.len())?;
        let ids = &self.ids;
        self.now.clear();
        self.now
            .par_extend(self.positions.par_iter().map(|&[i, j]| {
                let (a, b) = (ids[i as usize], ids[j as usize]);
                [a.min(b), a.max(b)]
            }));
        crate::broadphase::cancel::check(&token)?;
        self.now.par_sort_unstable();
        self.now.dedup();
        crate::broadphase::cancel::check(&token)?;
        // Each pair's world: its boxes' (a shared box's partner's); all 0 outside worlds.
        self.now_worlds.clear();
        if self.in_worlds {
            let (slots, worlds) = (&self.slots, &self.worlds);
            let world = |id: &Id| worlds[slots[id] as usize];
            self.now_worlds
                .par_extend(self.now.par_iter().map(|[a, b]| match world(a) {
                    SHARED => world(b),
                    w => w,
                }));
        } else {
            self.now_worlds.resize(self.now.len(), 0);
        }
        // The events into the spare frame, copied into the caller's once kept.
        let spare = &mut self.spare;
        spare.found.clear();
        spare.lost.clear();
        spare.found_worlds.clear();
        spare.lost_worlds.clear();
        let (found, lost) = (&mut spare.found, &mut spare.lost);
        let (found_worlds, lost_worlds) = (&mut spare.found_worlds, &mut spare.lost_worlds);
        let (before, before_worlds) = (&self.pairs, &self.pair_worlds);
        let (now, now_worlds) = (&self.now, &self.now_worlds);
        // The events come in each list's order: a cursor per list finds their worlds.
        let (mut at_before, mut at_now) = (0, 0);
        let mut persisting = merge_changes(before, now, |&p, is_found| {
            if is_found {
                at_now += now[at_now..].partition_point(|q| *q < p);
                found.push(p);
                found_worlds.push(now_worlds[at_now]);
            } else {
                at_before += before[at_before..].partition_point(|q| *q < p);
                lost.push(p);
                lost_worlds.push(before_worlds.get(at_before).copied().unwrap_or(0));
            }
        });
        // Worlds now or before (every box back in world 0 leaves `in_worlds`, and a pair of
        // world 3 that moved to 0 is lost in 3 and found in 0).
        if self.in_worlds || self.pairs_in_worlds {
            let moved = moved_worlds((before, before_worlds), (now, now_worlds));
            if !moved.is_empty() {
                persisting -= moved.len() as u64;
                let refused = |_| {
                    crate::broadphase::memory::refused(
                        "the update's events",
                        moved.len() as u64 * 24,
                    )
                };
                let old = moved.iter().map(|&(p, from, _)| (p, from));
                insert_sorted(lost, lost_worlds, old).map_err(refused)?;
                let new = moved.iter().map(|&(p, _, to)| (p, to));
                insert_sorted(found, found_worlds, new).map_err(refused)?;
            }
        }
        // Room in the caller's lists first (their contents kept until the update is): a
        // refusal is an error, not an abort.
        let spare = &self.spare;
        let room = |now: usize, have: usize| now.saturating_sub(have);
        let refused = |_| {
            let events = spare.found.len() + spare.lost.len();
            crate::broadphase::memory::refused("the update's events", events as u64 * 20)
        };
        frame
            .found
            .try_reserve(room(spare.found.len(), frame.found.len()))
            .map_err(refused)?;
        frame
            .lost
            .try_reserve(room(spare.lost.len(), frame.lost.len()))
            .map_err(refused)?;
        let worlds = |to: &mut Vec<u32>, n: usize| to.try_reserve(room(n, to.len()));
        worlds(&mut frame.found_worlds, spare.found_worlds.len()).map_err(refused)?;
        worlds(&mut frame.lost_worlds, spare.lost_worlds.len()).map_err(refused)?;
        // The last look at the caller's cancellation before the update is kept
        // (docs/design.md §9.18): an interrupted update changes nothing, `frame` included.
        // After the events' merge: before it, a Ctrl-C during the merge (and a Python
        // caller's copies) kept a frame whose events the caller never saw.
        crate::broadphase::cancel::check(&token)?;
        // Into the caller's lists, in their allocations (`update_into`'s promise).
        for (to, from) in [
            (&mut frame.found, &spare.found),
            (&mut frame.lost, &spare.lost),
        ] {
            to.clear();
            to.extend_from_slice(from);
        }
        for (to, from) in [
            (&mut frame.found_worlds, &spare.found_worlds),
            (&mut frame.lost_worlds, &spare.lost_worlds),
        ] {
            to.clear();
            to.extend_from_slice(from);
        }
        frame.stats = stats;
        frame.persisting = persisting;
        std::mem::swap(&mut self.pairs, &mut self.now);
        std::mem::swap(&mut self.pair_worlds, &mut self.now_worlds);
        self.pairs_in_worlds = self.in_worlds;
        Ok(())
    }

    /// The pairs of the last update, sorted, each `[a, b]` with `a < b`.
    pub fn pairs(&self) -> &[IdPair] {
        &self.pairs
    }
}

/// A hasher for ids: one multiply-xorshift round of the splitmix64 finaliser (ids are often
/// small consecutive integers, which this spreads over the table).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).rotate_left(5);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id;
    }
}

/// The pairs touching before and now whose world changed (their boxes moved to another world
/// together): `(pair, world before, world now)`, in pair order. Each is lost in its old world
/// and found in its new, as the spheres' world events have it (a touching pair that changed
/// world had no event, and per-world bookkeeping could not balance its later loss).
fn moved_worlds(
    (before, before_worlds): (&[IdPair], &[u32]),
    (now, now_worlds): (&[IdPair], &[u32]),
) -> Vec<(IdPair, u32, u32)> {
    let (mut i, mut j, mut moved) = (0, 0, Vec::new());
    while i < before.len() && j < now.len() {
        match before[i].cmp(&now[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let (from, to) = (before_worlds.get(i).copied().unwrap_or(0), now_worlds[j]);
                if from != to {
                    moved.push((before[i], from, to));
                }
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    moved
}

/// Merges `add` (sorted, none already in `list`) into the sorted `list` and its `worlds`, in
/// place (from the back); room for them refused is an error, not an abort.
fn insert_sorted(
    list: &mut Vec<IdPair>,
    worlds: &mut Vec<u32>,
    add: impl ExactSizeIterator<Item = (IdPair, u32)> + DoubleEndedIterator,
) -> std::result::Result<(), std::collections::TryReserveError> {
    let (old, more) = (list.len(), add.len());
    list.try_reserve(more)?;
    worlds.try_reserve(more)?;
    list.resize(old + more, [0, 0]);
    worlds.resize(old + more, 0);
    let (mut kept, mut to) = (old, old + more);
    for (pair, world) in add.rev() {
        // The kept entries past `pair` move up first.
        while kept > 0 && list[kept - 1] > pair {
            to -= 1;
            kept -= 1;
            list[to] = list[kept];
            worlds[to] = worlds[kept];
        }
        to -= 1;
        list[to] = pair;
        worlds[to] = world;
    }
    Ok(())
}
