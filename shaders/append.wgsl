// Appends without a hot address (docs/design.md §9.10, §9.17): a group of threads reserves its
// items' slots together, and one thread of the group adds the group's total to the global
// counter: one global atomic per group instead of one per item. This is the portable variant:
// the group is the workgroup (workgroup atomics and barriers, no subgroup operation, no
// assumption about lane order). Its twin append_subgroup.wgsl is composed in its place where the
// device has SUBGROUP (src/gpu/shader.rs). Every thread of the workgroup calls `reserve` and
// then `first_slot`, in uniform control flow (and `group_sum`, below, likewise):
//
//     let r = reserve(lid, count);
//     var base = 0u;
//     if r.leader && r.total > 0u { base = atomicAdd(&counter, r.total); }
//     let slot = first_slot(r, base);

var<workgroup> append_count: atomic<u32>;
var<workgroup> append_base: u32;

// This thread's offset within its group's reservation, the group's total, and whether this
// thread is the one that makes the global atomic.
struct Reservation {
    offset: u32,
    total: u32,
    leader: bool,
}

fn reserve(lid: u32, count: u32) -> Reservation {
    if lid == 0u {
        atomicStore(&append_count, 0u);
    }
    workgroupBarrier();
    var offset = 0u;
    if count > 0u {
        offset = atomicAdd(&append_count, count);
    }
    workgroupBarrier();
    return Reservation(offset, atomicLoad(&append_count), lid == 0u);
}

// This thread's first slot, from the base the leader's atomic returned (`base` is read only on
// the leader).
fn first_slot(r: Reservation, base: u32) -> u32 {
    if r.leader {
        append_base = base;
    }
    return workgroupUniformLoad(&append_base) + r.offset;
}

// ---- Sums over the same groups: one global add per group for a count that is not an append.

var<workgroup> sum_halves: array<atomic<u32>, 2>;

// The group's sum of v as the sums of its values' low and high 16-bit halves (each below 2^24
// over 256 threads: neither wraps), valid on the leader only; the others hold 0.
struct GroupSum {
    halves: vec2<u32>,
    leader: bool,
}

fn group_sum(lid: u32, v: u32) -> GroupSum {
    if lid == 0u {
        atomicStore(&sum_halves[0], 0u);
        atomicStore(&sum_halves[1], 0u);
    }
    workgroupBarrier();
    if v != 0u {
        atomicAdd(&sum_halves[0], v & 0xffffu);
        atomicAdd(&sum_halves[1], v >> 16u);
    }
    workgroupBarrier();
    // Only the thread that resets reads, so a later call cannot reset under a reader.
    var halves = vec2<u32>(0u);
    if lid == 0u {
        halves = vec2<u32>(atomicLoad(&sum_halves[0]), atomicLoad(&sum_halves[1]));
    }
    return GroupSum(halves, lid == 0u);
}
