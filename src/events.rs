//! Frame events (docs/design.md §10): which contacts began and which ended between two frames.
//! [`EventTracker`] owns the previous frame's canonical pair set; each new frame's pairs, from
//! any method on any backend, give [`FrameEvents`]: `found` (new this frame), `lost` (gone) and
//! the count persisting, so that `pairs[t] = pairs[t-1] + found[t] - lost[t]` exactly.
//!
//! ```
//! use sweepfan::{EventTracker, Pair};
//!
//! let mut tracker = EventTracker::new();
//! let first = tracker.update(vec![[0, 1], [2, 3]]);
//! assert_eq!(first.found, [[0, 1], [2, 3]]);
//! assert!(first.lost.is_empty());
//! // Next frame: (0, 1) still touches, (2, 3) separated, (1, 4) began. Any order is accepted.
//! let next = tracker.update(vec![[1, 4], [0, 1]]);
//! assert_eq!(next.found, [[1, 4]]);
//! assert_eq!(next.lost, [[2, 3]]);
//! assert_eq!(next.persisting, 1);
//! let now: &[Pair] = &[[0, 1], [1, 4]];
//! assert_eq!(tracker.pairs(), now);
//! ```

pub use crate::broadphase::FrameEvents;
pub use crate::broadphase::frame::merge_changes;
use crate::broadphase::memory;
use crate::broadphase::worlds::WorldPairs;
use crate::broadphase::{Pair, canonicalize};
use crate::error::Result;

/// The previous frame's canonical pair set, and the events of each new frame against it.
#[derive(Clone, Debug, Default)]
pub struct EventTracker {
    previous: Vec<Pair>,
    /// [`Self::try_update`]'s copy of a frame, kept to be filled again (no allocation a frame
    /// once it is large enough).
    spare: Vec<Pair>,
    frames: u64,
}

impl EventTracker {
    /// A tracker before its first frame: every pair of the first frame is `found`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes this frame's pairs (each `i < j`, any order, no duplicates: what every
    /// [`crate::BroadPhase`] returns), returns the events against the previous frame and keeps
    /// the pairs, canonicalised, as the next frame's previous set. A pair given as `[j, i]` is
    /// turned round and a duplicate dropped (else the merge would report it wrongly).
    ///
    /// Its events grow as they are found, outside any memory budget: a frame of hundreds of
    /// millions of pairs that may not fit is [`Self::try_update`]'s.
    pub fn update(&mut self, mut pairs: Vec<Pair>) -> FrameEvents {
        tidy(&mut pairs);
        let events = difference(&self.previous, &pairs);
        self.previous = pairs;
        self.frames += 1;
        events
    }

    /// [`Self::update`] from a borrowed list, within the calling thread's memory budget
    /// ([`crate::Limits`]): the copy it keeps and the events are sized first (the events by a
    /// counting merge) and refused as [`crate::Error::TooLarge`] where they do not fit, the
    /// tracker then unchanged, instead of an allocation failure that aborts the process.
    ///
    /// ```
    /// use sweepfan::{EventTracker, Limits, MemoryBudget};
    /// let mut tracker = EventTracker::new();
    /// let many: Vec<[u32; 2]> = (0..1000).map(|i| [i, i + 1]).collect();
    /// let tight = Limits::new().with_memory(MemoryBudget::Bytes(1000));
    /// assert!(tight.run(|| tracker.try_update(&many)).is_err());
    /// assert_eq!(tracker.frames(), 0);
    /// assert_eq!(tracker.try_update(&many)?.found.len(), 1000);
    /// # Ok::<(), sweepfan::Error>(())
    /// ```
    pub fn try_update(&mut self, pairs: &[Pair]) -> Result<FrameEvents> {
        let mut now = std::mem::take(&mut self.spare);
        now.clear();
        // Only new memory is checked: a steady loop refills the spare list it already holds.
        if now.capacity() < pairs.len()
            && let Err(e) = memory::reserve(
                &mut now,
                pairs.len(),
                "the frame's pairs, kept for its events",
            )
        {
            self.spare = now;
            return Err(e);
        }
        now.extend_from_slice(pairs);
        tidy(&mut now);
        let (mut found, mut lost) = (0usize, 0usize);
        merge_changes(&self.previous, &now, |_, is_found| match is_found {
            true => found += 1,
            false => lost += 1,
        });
        let mut events = FrameEvents::default();
        let room = memory::reserve(&mut events.found, found, "the frame's found pairs")
            .and_then(|()| memory::reserve(&mut events.lost, lost, "the frame's lost pairs"));
        if let Err(e) = room {
            self.spare = now;
            return Err(e);
        }
        events.persisting = merge_changes(&self.previous, &now, |&p, is_found| match is_found {
            true => events.found.push(p),
            false => events.lost.push(p),
        });
        self.spare = std::mem::replace(&mut self.previous, now);
        self.frames += 1;
        Ok(events)
    }

    /// The last frame's pairs, canonical.
    pub fn pairs(&self) -> &[Pair] {
        &self.previous
    }

    /// Frames seen since the tracker was made or reset.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Forgets the previous frame (the next one's pairs are all `found`).
    pub fn reset(&mut self) {
        self.previous.clear();
        self.frames = 0;
    }
}

/// `pairs` as a tracker keeps them: each `i < j`, canonical, no duplicates.
fn tidy(pairs: &mut Vec<Pair>) {
    for p in pairs.iter_mut().filter(|p| p[0] > p[1]) {
        p.swap(0, 1);
    }
    canonicalize(pairs);
    pairs.dedup();
}

/// The events from `before` to `after`, both canonical: one merge, O(|before| + |after|).
///
/// ```
/// let e = sweepfan::events::difference(&[[0, 1], [1, 2]], &[[1, 2], [2, 5]]);
/// assert_eq!((e.found, e.lost, e.persisting), (vec![[2, 5]], vec![[0, 1]], 1));
/// ```
pub fn difference(before: &[Pair], after: &[Pair]) -> FrameEvents {
    let mut events = FrameEvents::default();
    events.persisting = merge_changes(before, after, |&p, found| {
        if found {
            events.found.push(p)
        } else {
            events.lost.push(p)
        }
    });
    events
}

/// Frame events of a batch of worlds (docs/design.md §2.13): `found` and `lost` grouped by
/// world as [`WorldPairs`] are, each over the union of the two frames' worlds (so `offsets`
/// index both alike), and the pairs touching in both frames.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldEvents {
    /// Pairs touching now that did not in the previous frame, world by world.
    pub found: WorldPairs,
    /// Pairs that touched in the previous frame and do not now, world by world.
    pub lost: WorldPairs,
    /// Pairs touching in both frames, over all worlds.
    pub persisting: u64,
}

/// The previous frame's [`WorldPairs`] of a batch, and each new frame's [`WorldEvents`] against
/// it: events per world from either batch (`cpu::WorldBatch`, `gpu::GpuWorldBatch`), a pair
/// being the same pair when its world and its two batch indices are.
///
/// ```
/// use sweepfan::events::WorldEventTracker;
/// use sweepfan::{Method, Sphere, WorldPairs, cpu::WorldBatch};
/// use glam::Vec3;
///
/// let s = |x: f32| Sphere::new(Vec3::new(x, 0.0, 0.0), 1.0);
/// let (mut batch, mut tracker, mut pairs) = (WorldBatch::auto(), WorldEventTracker::new(), WorldPairs::new());
/// batch.find_pairs(&[s(0.0), s(1.5), s(0.0), s(5.0)], &[1, 1, 2, 2], Some(&mut pairs))?;
/// tracker.update(&pairs);
/// // World 1's spheres part, world 2's meet.
/// batch.find_pairs(&[s(0.0), s(3.0), s(0.0), s(1.0)], &[1, 1, 2, 2], Some(&mut pairs))?;
/// let events = tracker.update(&pairs);
/// assert_eq!((events.lost.of(1), events.found.of(2)), (&[[0, 1]][..], &[[2, 3]][..]));
/// assert!(events.found.of(1).is_empty() && events.lost.of(2).is_empty());
/// # Ok::<(), sweepfan::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct WorldEventTracker {
    previous: WorldPairs,
    events: WorldEvents,
    frames: u64,
}

impl WorldEventTracker {
    /// A tracker before its first frame: every pair of the first frame is `found`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes this frame's pairs (as a batch returns them), returns the events against the
    /// previous frame and keeps a copy of the pairs as the next frame's previous ones.
    pub fn update(&mut self, pairs: &WorldPairs) -> &WorldEvents {
        world_difference(&self.previous, pairs, &mut self.events);
        self.previous.clone_from(pairs);
        self.frames += 1;
        &self.events
    }

    /// The last frame's pairs.
    pub fn pairs(&self) -> &WorldPairs {
        &self.previous
    }

    /// Frames seen since the tracker was made or reset.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Forgets the previous frame (the next one's pairs are all `found`).
    pub fn reset(&mut self) {
        self.previous = WorldPairs::new();
        self.frames = 0;
    }
}

/// The events from `before` to `after` into `out`, world by world: one merge of the worlds and,
/// inside each, one of its pairs ([`merge_changes`]), O(|before| + |after|).
pub fn world_difference(before: &WorldPairs, after: &WorldPairs, out: &mut WorldEvents) {
    out.found.clear();
    out.lost.clear();
    out.persisting = 0;
    let (fp, fw, fo) = out.found.parts_mut();
    let (lp, lw, lo) = out.lost.parts_mut();
    fo.push(0);
    lo.push(0);
    let (bw, aw) = (before.worlds(), after.worlds());
    let (mut i, mut j) = (0, 0);
    while i < bw.len() || j < aw.len() {
        let w = match (bw.get(i), aw.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => unreachable!("the loop's condition"),
        };
        let b = if bw.get(i) == Some(&w) {
            i += 1;
            before.of(w)
        } else {
            &[]
        };
        let a = if aw.get(j) == Some(&w) {
            j += 1;
            after.of(w)
        } else {
            &[]
        };
        out.persisting += merge_changes(
            b,
            a,
            |&p, found| {
                if found { fp.push(p) } else { lp.push(p) }
            },
        );
        fw.push(w);
        lw.push(w);
        fo.push(fp.len());
        lo.push(lp.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The set identity on random frames: a set-based oracle, independent of the merge.
    #[test]
    fn events_match_set_differences_and_rebuild_every_frame() {
        let mut state = 12345u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut tracker = EventTracker::new();
        let mut rebuilt: BTreeSet<Pair> = BTreeSet::new();
        let mut previous: BTreeSet<Pair> = BTreeSet::new();
        for frame in 0..40 {
            let mut now: BTreeSet<Pair> = BTreeSet::new();
            for _ in 0..(next() % 60) {
                let i = (next() % 30) as u32;
                let j = (next() % 30) as u32;
                if i < j {
                    now.insert([i, j]);
                }
            }
            let mut shuffled: Vec<Pair> = now.iter().copied().collect();
            shuffled.reverse();
            let e = tracker.update(shuffled);
            let found: Vec<Pair> = now.difference(&previous).copied().collect();
            let lost: Vec<Pair> = previous.difference(&now).copied().collect();
            assert_eq!(e.found, found, "frame {frame}");
            assert_eq!(e.lost, lost, "frame {frame}");
            assert_eq!(e.persisting as usize, now.intersection(&previous).count());
            // pairs[t] = pairs[t-1] + found[t] - lost[t]
            for p in &e.found {
                assert!(rebuilt.insert(*p));
            }
            for p in &e.lost {
                assert!(rebuilt.remove(p));
            }
            assert_eq!(rebuilt, now, "frame {frame}");
            assert_eq!(e.pairs_now() as usize, now.len());
            previous = now;
        }
        assert_eq!(tracker.frames(), 40);
        tracker.reset();
        assert_eq!(tracker.update(vec![[1, 2]]).found, [[1, 2]]);
    }

    /// Pairs given the other way round, or twice, are the same pairs: no event of their own
    /// (a release build once merged them as given, reporting a persisting pair as lost and
    /// found); a long list of such pairs still sorts (its radix passes cover `i`'s bits too).
    #[test]
    fn turned_and_repeated_pairs_are_one_pair() {
        let mut tracker = EventTracker::new();
        tracker.update(vec![[1, 2], [3, 9]]);
        let e = tracker.update(vec![[9, 3], [2, 1], [1, 2], [4, 5]]);
        assert_eq!((e.found, e.lost, e.persisting), (vec![[4, 5]], vec![], 2));
        assert_eq!(tracker.pairs(), [[1, 2], [3, 9], [4, 5]]);
        let mut turned: Vec<Pair> = (0..5000u32).map(|k| [70_000 - k, k]).collect();
        crate::broadphase::canonicalize(&mut turned);
        assert!(
            turned.is_sorted(),
            "a long list given [j, i] came back unsorted"
        );
    }
}
