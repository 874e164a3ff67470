//! The narrow phase by the caller's ids (docs/design.md §4.9): shapes named by [`Id`] as
//! `BoxBroadPhase` names them, its pairs taken as they come. The ids are sorted once with their
//! positions; each pair's ids are looked up, the position-based call runs, and its touching
//! pairs come back by id, `[min, max]`, sorted. Ids already strictly ascending are searched in
//! place, with no sort.

use crate::broadphase::{Id, IdPair, Pair, Stats};
use crate::error::{Error, Result};
use crate::geom::contact::Contact;
use rayon::prelude::*;

/// From this many items the lookups run in parallel.
const PARALLEL_MIN: usize = 1 << 14;

/// Each id's position in the caller's shapes.
enum IdIndex<'a> {
    /// The ids themselves, strictly ascending (a simulation's usual list): no sort, no copy.
    Ascending(&'a [Id]),
    /// `(id, position)` sorted by id.
    Sorted(Vec<(Id, u32)>),
}

impl<'a> IdIndex<'a> {
    /// The positions of `ids`, one per shape (`shapes` of them), each id once.
    fn new(ids: &'a [Id], shapes: usize) -> Result<Self> {
        crate::error::check_length("ids", ids.len(), shapes, || {
            format!(
                "ids has {} ids for {shapes} shapes; give one per shape",
                ids.len()
            )
        })?;
        crate::geom::check_u32_count(ids.len(), "shapes")?;
        if ids.windows(2).all(|w| w[0] < w[1]) {
            return Ok(Self::Ascending(ids));
        }
        let mut sorted: Vec<(Id, u32)> = ids.iter().zip(0u32..).map(|(&id, k)| (id, k)).collect();
        if ids.len() >= PARALLEL_MIN {
            sorted.par_sort_unstable();
        } else {
            sorted.sort_unstable();
        }
        // The lowest id given twice, with both of its places.
        if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::InvalidId {
                id: w[0].0,
                problem: format!("given twice (shapes {} and {})", w[0].1, w[1].1),
            });
        }
        Ok(Self::Sorted(sorted))
    }

    fn position(&self, id: Id) -> Option<u32> {
        match self {
            Self::Ascending(ids) => ids.binary_search(&id).ok().map(|k| k as u32),
            Self::Sorted(sorted) => sorted
                .binary_search_by_key(&id, |&(id, _)| id)
                .ok()
                .map(|k| sorted[k].1),
        }
    }

    /// `pairs` by position, in their order and orientation; a pair naming an id not among the
    /// shapes', or one id twice, is an error naming the pair (`argument`).
    fn positions(&self, pairs: &[IdPair], argument: &'static str) -> Result<Vec<Pair>> {
        let lookup = |(k, &[a, b]): (usize, &IdPair)| -> Result<Pair> {
            let unknown = |id: Id| {
                Error::invalid_argument(
                    argument,
                    format!("pair {k} = [{a}, {b}] names id {id}, which is not among the ids"),
                )
            };
            if a == b {
                return Err(Error::invalid_argument(
                    argument,
                    format!("pair {k} = [{a}, {b}] pairs id {a} with itself"),
                ));
            }
            let i = self.position(a).ok_or_else(|| unknown(a))?;
            let j = self.position(b).ok_or_else(|| unknown(b))?;
            Ok([i, j])
        };
        if pairs.len() >= PARALLEL_MIN {
            // `collect` into a `Result` stops at an error, not necessarily the first: the first
            // is named, as the sequential path names it.
            match pairs.par_iter().enumerate().map(lookup).collect() {
                Ok(v) => Ok(v),
                Err(_) => pairs.iter().enumerate().map(lookup).collect(),
            }
        } else {
            pairs.iter().enumerate().map(lookup).collect()
        }
    }
}

/// The touching pairs by id of `run` (a position-based call of the narrow phase on shapes named
/// by `ids`) on `candidates` by id: into `out` (cleared first) as `[min, max]` by id, sorted;
/// `out = None` only counts. Left empty on an error.
pub(crate) fn pairs_by_id(
    ids: &[Id],
    shapes: usize,
    candidates: &[IdPair],
    mut out: Option<&mut Vec<IdPair>>,
    run: impl FnOnce(&[Pair], Option<&mut Vec<Pair>>) -> Result<Stats>,
) -> Result<Stats> {
    if let Some(list) = out.as_deref_mut() {
        list.clear();
    }
    let index = IdIndex::new(ids, shapes)?;
    let positions = index.positions(candidates, "candidates")?;
    let mut touching = Vec::new();
    let stats = run(&positions, out.is_some().then_some(&mut touching))?;
    if let Some(list) = out {
        let by_id = |&[i, j]: &Pair| {
            let (a, b) = (ids[i as usize], ids[j as usize]);
            [a.min(b), a.max(b)]
        };
        if touching.len() >= PARALLEL_MIN {
            list.par_extend(touching.par_iter().map(by_id));
            list.par_sort_unstable();
        } else {
            list.extend(touching.iter().map(by_id));
            list.sort_unstable();
        }
    }
    Ok(stats)
}

/// The contacts of `run` (a position-based contact call on shapes named by `ids`) for `pairs`
/// by id, in their order and orientation (the normal from the first id's shape towards the
/// second's), into `out` (cleared first); left empty on an error.
pub(crate) fn contacts_by_id(
    ids: &[Id],
    shapes: usize,
    pairs: &[IdPair],
    out: &mut Vec<Contact>,
    run: impl FnOnce(&[Pair], &mut Vec<Contact>) -> Result<()>,
) -> Result<()> {
    out.clear();
    let positions = IdIndex::new(ids, shapes).and_then(|index| index.positions(pairs, "pairs"))?;
    let result = run(&positions, out);
    if result.is_err() {
        out.clear();
    }
    result
}
