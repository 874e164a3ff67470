// Many worlds (FLAG_WORLDS, docs/design.md §2.13): the bounds of one world's run in an order
// sorted by world rank (the owner walk of spheres/pairs.wgsl, the counts of
// spheres/min_axis.wgsl). The importer defines `world_at(p)`, the world rank at sorted position
// p < params.n.

// #import frame.wgsl

// The first sorted position whose world rank is above `w` (`above`), or at or above it.
fn world_run_bound(w: u32, above: bool) -> u32 {
    var lo = 0u;
    var hi = params.n;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if world_at(mid) < w || (above && world_at(mid) == w) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}
