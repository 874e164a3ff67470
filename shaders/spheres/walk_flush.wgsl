// How a walk kernel of pairs.wgsl ends (src/gpu/spheres/pairs.rs, docs/design.md §9.17): the
// threads' held pairs get their slots and the threads' counts reach the u64 totals. This is the
// portable variant: the workgroup reserves its slots with one global atomic (append.wgsl) and
// sums its counts in one tree (flush_counts, frame.wgsl), with barriers and no subgroup
// operation. Its twin walk_flush_subgroup.wgsl is composed in its place where the device has
// SUBGROUP. Every thread of the workgroup calls both, in uniform control flow.

// #import append.wgsl

// This thread's first slot for the `count` items it appends at counters[slot].
fn reserve_slots(lid: u32, slot: u32, count: u32) -> u32 {
    let r = group_reserve(lid, count);
    if lid == 0u && r.y > 0u {
        append_base = atomicAdd(&counters[slot], r.y);
    }
    return workgroupUniformLoad(&append_base) + r.x;
}

// Adds the threads' a and b to the u64 totals at counters[slot_a] and counters[slot_b].
fn add_counts(lid: u32, slot_a: u32, a: u32, slot_b: u32, b: u32) {
    flush_counts(lid, slot_a, a, slot_b, b);
}
