// Ballot arithmetic on vec4<u32> masks (lanes 0..127, lane l is bit l % 32 of word l / 32), for
// any subgroup size: pure functions, tested for every lane on any adapter (src/gpu/sort/
// radix_sort_subgroup.rs), since a device with 8 lanes only ever sets the first word.

fn popcount4(v: vec4<u32>) -> u32 {
    let c = countOneBits(v);
    return c.x + c.y + c.z + c.w;
}

// Ballot bits of the lanes below `lane` (subgroup_invocation_id numbering).
fn lanes_below(lane: u32) -> vec4<u32> {
    let rel = vec4<i32>(i32(lane)) - vec4<i32>(0, 32, 64, 96);
    let partial = (vec4<u32>(1u) << vec4<u32>(clamp(rel, vec4<i32>(0), vec4<i32>(31))))
        - vec4<u32>(1u);
    return select(select(vec4<u32>(0u), partial, rel > vec4<i32>(0)), vec4<u32>(~0u),
                  rel >= vec4<i32>(32));
}

// Lowest set ballot bit of a non-zero mask (straight-line selects, no divergent branches).
fn first_lane(m: vec4<u32>) -> u32 {
    let at = firstTrailingBit(m) + vec4<u32>(0u, 32u, 64u, 96u);
    var lane = at.w;
    lane = select(lane, at.z, m.z != 0u);
    lane = select(lane, at.y, m.y != 0u);
    lane = select(lane, at.x, m.x != 0u);
    return lane;
}
