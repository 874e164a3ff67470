// Where an invocation sits in a dispatch that may be 2D (GpuContext::dispatch_2d splits a grid
// of more workgroups than one dimension allows into rows; kernels guard the overshoot): the
// builtins every kernel takes, and the flat indices made from them. Each importing file
// defines WG, its workgroup size.

struct Invocation {
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
}

// The workgroup's place alone. Kernels with barriers take it (and `local_invocation_index` as a
// parameter of its own) instead of Invocation: WGSL's uniformity analysis treats a struct
// parameter as one value, so a return guarded by `flat_group(inv)` would count as non-uniform
// and the barriers after it would be rejected (Tint does; naga does not check).
struct Group {
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
}

fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}

// Flat workgroup index.
fn flat_group(inv: Invocation) -> u32 {
    return group_index(inv.wid, inv.nwg);
}

// The same from a Group.
fn flat_group_of(g: Group) -> u32 {
    return group_index(g.wid, g.nwg);
}

// Flat invocation index.
fn flat_id(inv: Invocation) -> u32 {
    return flat_group(inv) * WG + inv.lid;
}
