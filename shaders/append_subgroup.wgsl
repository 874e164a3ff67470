// The subgroup twin of append.wgsl (docs/design.md §9.17), composed in its place where the
// device has SUBGROUP: the group is the subgroup, slots come from `subgroupExclusiveAdd` and
// `subgroupAdd`, with one global atomic per subgroup and no workgroup barrier, so a thread waits
// at most for its own subgroup, not for the workgroup's slowest. Only scans, sums, maxima over
// the subgroup: no subgroup size is assumed (4 to 128 lanes). Called as append.wgsl says, every
// thread in uniform control flow.

struct Reservation {
    offset: u32,
    total: u32,
    leader: bool,
}

// The leader is the subgroup's first active lane (the lanes before it count none): naga has no
// subgroupElect.
fn reserve(lid: u32, count: u32) -> Reservation {
    let offset = subgroupExclusiveAdd(count);
    let total = subgroupAdd(count);
    return Reservation(offset, total, subgroupExclusiveAdd(1u) == 0u);
}

// Only the leader's base counts; the others give 0 to the maximum.
fn first_slot(r: Reservation, base: u32) -> u32 {
    return subgroupMax(select(0u, base, r.leader)) + r.offset;
}

// The subgroup's sum of v as the sums of its values' low and high 16-bit halves (below 2^23
// over 128 lanes: neither wraps), on every lane; the leader is the first active lane.
struct GroupSum {
    halves: vec2<u32>,
    leader: bool,
}

fn group_sum(lid: u32, v: u32) -> GroupSum {
    let halves = subgroupAdd(vec2<u32>(v & 0xffffu, v >> 16u));
    return GroupSum(halves, subgroupExclusiveAdd(1u) == 0u);
}
