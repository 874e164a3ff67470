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
use crate::broadphase::{Pair, canonicalize};

/// The previous frame's canonical pair set, and the events of each new frame against it.
#[derive(Clone, Debug, Default)]
pub struct EventTracker {
    previous: Vec<Pair>,
    frames: u64,
}

impl EventTracker {
    /// A tracker before its first frame: every pair of the first frame is `found`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes this frame's pairs (each `i < j`, any order, no duplicates: what every
    /// [`crate::BroadPhase`] returns), returns the events against the previous frame and keeps
    /// the pairs, canonicalised, as the next frame's previous set.
    pub fn update(&mut self, mut pairs: Vec<Pair>) -> FrameEvents {
        canonicalize(&mut pairs);
        debug_assert!(pairs.windows(2).all(|w| w[0] < w[1]), "duplicate pair");
        let events = difference(&self.previous, &pairs);
        self.previous = pairs;
        self.frames += 1;
        events
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

/// The one sorted-difference merge (frame events by position, by the caller's id, across
/// ranks): walks two sorted lists without duplicates together, calls `changed(item, true)` for
/// each item of `after` not in `before` and `changed(item, false)` for each of `before` not in
/// `after`, in increasing order within each kind; returns how many are in both.
///
/// ```
/// let mut seen = Vec::new();
/// let both = sweepfan::events::merge_changes(&[1, 3, 5], &[3, 4], |&x, found| seen.push((x, found)));
/// assert_eq!((both, seen), (1, vec![(1, false), (4, true), (5, false)]));
/// ```
pub fn merge_changes<T: Ord>(before: &[T], after: &[T], mut changed: impl FnMut(&T, bool)) -> u64 {
    let (mut a, mut b, mut both) = (0, 0, 0);
    while a < before.len() && b < after.len() {
        match before[a].cmp(&after[b]) {
            std::cmp::Ordering::Less => {
                changed(&before[a], false);
                a += 1;
            }
            std::cmp::Ordering::Greater => {
                changed(&after[b], true);
                b += 1;
            }
            std::cmp::Ordering::Equal => {
                both += 1;
                a += 1;
                b += 1;
            }
        }
    }
    before[a..].iter().for_each(|x| changed(x, false));
    after[b..].iter().for_each(|x| changed(x, true));
    both
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
}
