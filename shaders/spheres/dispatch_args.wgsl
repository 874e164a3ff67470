// Indirect dispatch arguments for a caller's pass over the resident pair list
// (docs/design.md §10). CPU twin: `expected_args` in src/gpu/spheres/dispatch_args.rs.
//
// One thread reads the device's own pair count (the append slot, which counts past the list's
// capacity), clamps it to the capacity and writes (x, y, 1) workgroups of `workgroup` threads
// for one thread per pair, x at most `max_groups_x`, then the clamped count, which the caller's
// kernel compares its pair index with (the last workgroups run past it). No count comes back
// to the host.

// #import dispatch_grid.wgsl
// #import spheres/dispatch_args_params.wgsl

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> counters: array<u32>;
// [x, y, z, pairs]
@group(0) @binding(2) var<storage, read_write> args: array<u32, 4>;

@compute @workgroup_size(1)
fn pair_dispatch_args() {
    let count = min(counters[params.count_index], params.capacity);
    let grid = grid_2d(div_ceil(count, params.workgroup), params.max_groups_x);
    args[0] = grid.x;
    args[1] = grid.y;
    args[2] = 1u;
    args[3] = count;
}
