// Pairs a thread holds until the end of its walk, when the workgroup (or, with subgroups, the
// subgroup) reserves their slots with one global atomic (flush_held, append.wgsl). A thread
// whose hand is full appends its HELD pairs with one atomic: never one global atomic per pair
// (docs/design.md §9.10). Shared by the sphere walks (spheres/pairs.wgsl) and the AABB sweep
// (boxes/aabb_sap.wgsl); the importer declares `pairs` (array<vec2<u32>>) and `counters`
// (atomic<u32> words) and imports append.wgsl.

const HELD: u32 = 4u;
var<private> held: array<vec2<u32>, HELD>;
var<private> held_n: u32;

// Writes held[k] at slot + k when that is below cap (a slot that wrapped past 2^32 lies in a
// list the host discards, its count being above the capacity).
fn write_held(slot: u32, k: u32, cap: u32) {
    if slot + k < cap && slot + k >= slot {
        pairs[slot + k] = held[k];
    }
}

// Holds the pair (min(a, b), max(a, b)); a full hand is first written at HELD slots reserved on
// counters[counter]. Returns the first of those slots, 0 when the hand had room.
fn hold_pair(a: u32, b: u32, counter: u32, cap: u32) -> u32 {
    var slot = 0u;
    if held_n == HELD {
        slot = atomicAdd(&counters[counter], HELD);
        // #unroll 4 write_held(slot, {k}u, cap);
        held_n = 0u;
    }
    held[held_n] = vec2<u32>(min(a, b), max(a, b));
    held_n++;
    return slot;
}

// Writes the held pairs at slots reserved on counters[counter] together. Every thread of the
// workgroup calls it, in uniform control flow. Returns what the group's atomic returned (0
// where this thread made none) and the group's total.
fn flush_held(lid: u32, counter: u32, cap: u32) -> vec2<u32> {
    let r = reserve(lid, held_n);
    var base = 0u;
    if r.leader && r.total > 0u {
        base = atomicAdd(&counters[counter], r.total);
    }
    let first = first_slot(r, base);
    for (var k = 0u; k < held_n; k++) {
        write_held(first, k, cap);
    }
    return vec2<u32>(base, r.total);
}
