// Where an invocation sits in a dispatch that may be 2D (GpuContext::dispatch_2d splits a grid
// of more workgroups than one dimension allows into rows; kernels guard the overshoot): the
// builtins every kernel takes, and the flat indices made from them. Each importing file
// defines WG, its workgroup size.

struct Invocation {
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
}

// Flat workgroup index.
fn flat_group(inv: Invocation) -> u32 {
    return inv.wid.y * inv.nwg.x + inv.wid.x;
}

// Flat invocation index.
fn flat_id(inv: Invocation) -> u32 {
    return flat_group(inv) * WG + inv.lid;
}
