//! The parts' pairs kept by the frame (docs/design.md §2.10): each part's pairs that its tile
//! keeps, stored by global index while the caller's limit holds, then only counted; and the
//! giants' pass.

use super::PARALLEL_PART;
use super::plan::Tile;
use crate::broadphase::Pair;
use crate::error::Result;
use crate::geom::sphere::Sphere;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Whether a frame's pairs are stored, and how many may be: once the stored pairs pass
/// `limit`, the parts' lists are dropped and their pairs only counted, so that the caller's
/// error names the frame's exact count without the memory of every pair past it (each part on
/// a GPU stores its own list whatever the caller's limit: its limit is the frame's).
pub(super) struct Storing {
    on: bool,
    limit: u64,
    stored: AtomicU64,
}

impl Storing {
    pub(super) fn new(on: bool, limit: u64) -> Self {
        Self {
            on,
            limit,
            stored: AtomicU64::new(0),
        }
    }

    /// Whether the next part's pairs are stored.
    pub(super) fn now(&self) -> bool {
        self.on && !self.past()
    }

    /// `kept` more pairs stored; whether the stored pairs are past the limit now.
    pub(super) fn add(&self, kept: u64) -> bool {
        self.stored.fetch_add(kept, Relaxed).saturating_add(kept) > self.limit
    }

    /// Whether the stored pairs went past the limit (the frame's list is dropped).
    pub(super) fn past(&self) -> bool {
        self.stored.load(Relaxed) > self.limit
    }
}

/// Counts the pairs of `local` (a part's pairs, local indices) that `tile` keeps, and pushes
/// them to `found` by global index (`ids`), `i < j`, when asked.
pub(super) fn keep_pairs(
    tile: &Tile,
    local: &[Pair],
    ids: &[u32],
    found: Option<&mut Vec<Pair>>,
) -> Result<u64> {
    let kept = |&[a, b]: &Pair| {
        let (p, q) = (a.min(b), a.max(b));
        tile.keeps(p, q).then(|| {
            let (i, j) = (ids[p as usize], ids[q as usize]);
            [i.min(j), i.max(j)]
        })
    };
    let parallel = local.len() >= PARALLEL_PART;
    match found {
        Some(found) => {
            // Room for every pair of the part first: the list's growth is the run's largest
            // allocation, and a failed one aborts the process.
            reserve_pairs(found, local.len())?;
            let before = found.len();
            if parallel {
                found.par_extend(local.par_iter().filter_map(kept));
            } else {
                found.extend(local.iter().filter_map(kept));
            }
            Ok((found.len() - before) as u64)
        }
        None if parallel => Ok(local.par_iter().filter(|&p| kept(p).is_some()).count() as u64),
        None => Ok(local.iter().filter(|&p| kept(p).is_some()).count() as u64),
    }
}

/// Room in `list` for `more` pairs, or the pair list's memory error where the budget or the
/// allocator refuses it (under an address-space limit, `ulimit -v`, the estimate that chose the
/// parts can fall short of what the pairs take; a failed growth aborted the run).
pub(super) fn reserve_pairs(list: &mut Vec<Pair>, more: usize) -> Result<()> {
    use crate::broadphase::memory;
    // The growth within the process's memory budget first (read lazily: not for small
    // amounts; the list already held is no longer available, so only what it grows by). The
    // pairs as the list would hold them: `more` is room, at most as many found.
    let grown = more.saturating_sub(list.capacity() - list.len()) as u64 * size_of::<Pair>() as u64;
    let pairs = list.len() as u64 + more as u64;
    let held = list.len();
    memory::LazyBudget::new()
        .check("storing the pairs of the parts", grown)
        .and_then(|()| match list.try_reserve(more).or_else(|_| list.try_reserve_exact(more)) {
            Ok(()) => Ok(()),
            Err(_) => Err(memory::refused(
                &format!(
                    "storing the pairs found ({held} so far, up to {more} more; count the pairs \
                     without storing them, or use fewer objects)"
                ),
                pairs.saturating_mul(size_of::<Pair>() as u64),
            )),
        })
        .map_err(|e| memory::for_pair_list(e, pairs))
}

/// The giants' pass: each giant against every other object (each giant pair once); returns
/// (tests, pairs) and pushes the pairs when asked.
pub(super) fn giant_pass(
    spheres: &[Sphere],
    giants: &[u32],
    out: Option<&mut Vec<Pair>>,
) -> Result<(u64, u64)> {
    let n = spheres.len() as u64;
    let g = giants.len() as u64;
    if g == 0 {
        return Ok((0, 0));
    }
    let is_giant = |i: u32| giants.binary_search(&i).is_ok();
    let touching: Vec<Pair> = giants
        .iter()
        .flat_map(|&a| {
            let giant = spheres[a as usize];
            (0..spheres.len() as u32)
                .into_par_iter()
                // Other giants only above `a`: each giant pair once.
                .filter(move |&j| j != a && (!is_giant(j) || j > a))
                .filter(move |&j| giant.touches(&spheres[j as usize]))
                .map(move |j| [a.min(j), a.max(j)])
                .collect::<Vec<_>>()
        })
        .collect();
    let tests = g * (n - g) + g * (g - 1) / 2;
    let pairs = touching.len() as u64;
    if let Some(out) = out {
        reserve_pairs(out, touching.len())?;
        out.extend_from_slice(&touching);
    }
    Ok((tests, pairs))
}
