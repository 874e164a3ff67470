//! One frame of a simulation into the caller's buffers ([`SphereFrame`],
//! [`crate::BroadPhase::update_into`]), and the sorted-difference merge every event stream uses.

use super::{Pair, Stats};

/// A simulation's sphere frames, in vectors it keeps: this frame's pairs, and what changed
/// since the frame before. [`crate::BroadPhase::update_into`] refills them each frame; their
/// allocations are reused (the previous frame's pairs are kept in a second list that swaps
/// with `pairs`), so a frame loop allocates only while its lists grow.
///
/// ```
/// use glam::Vec3;
/// use sweepfan::{BroadPhase, Method, Sphere, SphereFrame, cpu};
///
/// let mut broad = cpu::broad_phase(Method::Auto);
/// let mut frame = SphereFrame::new();
/// let mut spheres = vec![
///     Sphere::new(Vec3::ZERO, 1.0),
///     Sphere::new(Vec3::new(1.5, 0.0, 0.0), 1.0),
///     Sphere::new(Vec3::new(9.0, 0.0, 0.0), 1.0),
/// ];
/// broad.update_into(&spheres, &mut frame)?;
/// assert_eq!((frame.pairs.as_slice(), frame.found.as_slice()), (&[[0, 1]][..], &[[0, 1]][..]));
/// spheres[2].center.x = 3.0; // now touching sphere 1
/// broad.update_into(&spheres, &mut frame)?;
/// assert_eq!(frame.found, [[1, 2]]);
/// assert_eq!((frame.lost.len(), frame.persisting, frame.frames()), (0, 1, 2));
/// # Ok::<(), sweepfan::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct SphereFrame {
    /// This frame's touching pairs, canonical (`i < j`, ascending).
    pub pairs: Vec<Pair>,
    /// Pairs touching now that did not in the frame before (canonical).
    pub found: Vec<Pair>,
    /// Pairs that touched in the frame before and do not now (canonical).
    pub lost: Vec<Pair>,
    /// Pairs touching in both frames.
    pub persisting: u64,
    /// What the broad phase did this frame.
    pub stats: Stats,
    /// The frame before's pairs while a frame runs; the list to reuse between frames.
    spare: Vec<Pair>,
    frames: u64,
}

impl SphereFrame {
    /// Before the first frame: every pair of the first frame is `found`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Frames completed since the frame was made or reset.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Forgets the frames so far (the next frame's pairs are all `found`); keeps the vectors'
    /// memory.
    pub fn reset(&mut self) {
        self.pairs.clear();
        self.found.clear();
        self.lost.clear();
        self.persisting = 0;
        self.stats = Stats::default();
        self.frames = 0;
    }

    /// Makes `pairs` the list the new frame fills, the frame before's kept aside.
    pub(crate) fn begin(&mut self) {
        std::mem::swap(&mut self.pairs, &mut self.spare);
    }

    /// The new frame's pairs are in `pairs`: its events against the frame before.
    pub(crate) fn finish(&mut self, stats: Stats) {
        let (found, lost) = (&mut self.found, &mut self.lost);
        found.clear();
        lost.clear();
        self.persisting = merge_changes(&self.spare, &self.pairs, |&p, is_found| {
            if is_found {
                found.push(p);
            } else {
                lost.push(p);
            }
        });
        self.stats = stats;
        self.frames += 1;
    }

    /// The new frame failed: the frame before's pairs are this frame's again (the next frame
    /// compares with the last that succeeded), and no events are reported.
    pub(crate) fn abandon(&mut self) {
        std::mem::swap(&mut self.pairs, &mut self.spare);
        self.found.clear();
        self.lost.clear();
        self.persisting = 0;
        self.stats = Stats::default();
    }
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
