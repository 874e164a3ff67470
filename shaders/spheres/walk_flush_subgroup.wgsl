// The subgroup twin of walk_flush.wgsl (docs/design.md §9.17), composed in its place where the
// device has SUBGROUP: slots and counts are combined per subgroup, with one global atomic per
// subgroup and value, and no workgroup barrier, so a lane waits at most for its own subgroup
// (which runs together anyway), not for the workgroup's longest walk. Only scans, sums, maxima
// over the subgroup: no subgroup size is assumed (4 to 128 lanes), and every
// thread calls both functions in uniform control flow.

// Whether this is the subgroup's first active lane (the lanes before it count none). naga has
// no subgroupElect.
fn first_lane() -> bool {
    return subgroupExclusiveAdd(1u) == 0u;
}

// This thread's first slot for the `count` items it appends at counters[slot].
fn reserve_slots(lid: u32, slot: u32, count: u32) -> u32 {
    let offset = subgroupExclusiveAdd(count);
    let total = subgroupAdd(count);
    let elected = first_lane();
    var base = 0u;
    if elected && total > 0u {
        base = atomicAdd(&counters[slot], total);
    }
    // Only the elected lane holds a base; the others hold 0.
    return subgroupMax(base) + offset;
}

// Adds the threads' a and b to the u64 totals at counters[slot_a] and counters[slot_b]. The
// subgroup sums 16-bit halves, which stay below 2^23 over 128 lanes, so no sum wraps.
fn add_counts(lid: u32, slot_a: u32, a: u32, slot_b: u32, b: u32) {
    let s = subgroupAdd(vec4<u32>(a & 0xffffu, a >> 16u, b & 0xffffu, b >> 16u));
    let elected = first_lane();
    if elected {
        global_add64(slot_a, halves64(s.x, s.y));
        global_add64(slot_b, halves64(s.z, s.w));
    }
}

// low + high * 2^16 as (lo, hi) words.
fn halves64(low: u32, high: u32) -> vec2<u32> {
    return add64(vec2<u32>(low, 0u), vec2<u32>(high << 16u, high >> 16u));
}
