//! What a rank may hold (docs/design.md §2.11): its own objects when it loads them, and again
//! with what other ranks send it (migrations, ghosts) before it receives them.

use sweepfan::error::{Error, Result};

/// A rank's objects with their ghosts past its memory, said as such: more ranks give each
/// fewer objects of its own, but not fewer ghosts where large objects reach every slab.
pub(super) fn ghosts_past_memory(e: Error, own: usize, ghosts: usize) -> Error {
    let Error::TooLarge { exceeds, .. } = &e else {
        return e;
    };
    Error::too_large(
        *exceeds,
        format!(
            "this rank's {own} objects with the {ghosts} ghosts within reach of its slab (objects \
             of later slabs no farther than the largest radius) need more memory than it has: \
             start more ranks, or give the objects far larger than the rest their own run"
        ),
    )
}

/// Whether this rank's share of `objects` (`whole`: the scene, which every rank draws) fits
/// its memory with a frame's working space (`limits::HOST_BYTES_PER_OBJECT` an object).
pub(super) fn fits_on_this_rank(objects: usize, whole: bool) -> Result<()> {
    let per = sweepfan::broadphase::limits::HOST_BYTES_PER_OBJECT;
    let (what, more) = match whole {
        true => (
            "the scene's",
            "a smaller --n: every rank draws the whole scene",
        ),
        false => ("this rank's", "start more ranks"),
    };
    crate::run::check_count_fits(&format!("{what} {objects} objects"), objects, per, |fit| {
        format!("{more} (about {fit} objects fit on one)")
    })
}
