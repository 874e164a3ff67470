// How a walk kernel of pairs.wgsl ends (src/gpu/spheres/pairs.rs, docs/design.md §9.17): the
// threads' counts reach the u64 totals (their held pairs get their slots by append.wgsl). This
// is the portable variant: the workgroup sums its counts in one tree (flush_counts,
// frame.wgsl), with barriers and no subgroup operation. Its twin walk_flush_subgroup.wgsl is
// composed in its place where the device has SUBGROUP. Every thread of the workgroup calls it,
// in uniform control flow.

// Adds the threads' a and b to the u64 totals at counters[slot_a] and counters[slot_b].
fn add_counts(lid: u32, slot_a: u32, a: u32, slot_b: u32, b: u32) {
    flush_counts(lid, slot_a, a, slot_b, b);
}
