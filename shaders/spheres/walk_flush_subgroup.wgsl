// The subgroup twin of walk_flush.wgsl (docs/design.md §9.17), composed in its place where the
// device has SUBGROUP: counts are summed per subgroup, with one global atomic per subgroup and
// value, and no workgroup barrier, so a lane waits at most for its own subgroup (which runs
// together anyway), not for the workgroup's longest walk. No subgroup size is assumed (4 to 128
// lanes), and every thread calls it in uniform control flow.

// Adds the threads' a and b to the u64 totals at counters[slot_a] and counters[slot_b]. The
// subgroup sums 16-bit halves, which stay below 2^23 over 128 lanes, so no sum wraps.
fn add_counts(lid: u32, slot_a: u32, a: u32, slot_b: u32, b: u32) {
    let s = subgroupAdd(vec4<u32>(a & 0xffffu, a >> 16u, b & 0xffffu, b >> 16u));
    // The subgroup's first active lane adds (naga has no subgroupElect).
    if subgroupExclusiveAdd(1u) == 0u {
        global_add64(slot_a, halves64(s.x, s.y));
        global_add64(slot_b, halves64(s.z, s.w));
    }
}

// low + high * 2^16 as (lo, hi) words.
fn halves64(low: u32, high: u32) -> vec2<u32> {
    return add64(vec2<u32>(low, 0u), vec2<u32>(high << 16u, high >> 16u));
}
