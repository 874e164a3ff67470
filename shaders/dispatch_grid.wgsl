// Indirect dispatch arguments written on the device (the SAT and contact stages' `prepare`, the
// rotating sector's `prepare_test`, spheres/dispatch_args.wgsl): a count of threads as
// workgroups, split into a 2D grid when there are more than one dimension allows. The kernels
// so dispatched guard the overshoot (dispatch.wgsl's flat indices).

// ceil(count / per), without the overflow of count + per - 1.
fn div_ceil(count: u32, per: u32) -> u32 {
    return count / per + select(0u, 1u, count % per != 0u);
}

// `groups` workgroups as (x, y): x = min(groups, max_x) a row, y = ceil(groups / x) rows; (0, 0)
// for none.
fn grid_2d(groups: u32, max_x: u32) -> vec2<u32> {
    let x = min(groups, max_x);
    var y = 0u;
    if x > 0u {
        y = div_ceil(groups, x);
    }
    return vec2<u32>(x, y);
}

// The indirect dispatch arguments (x, y, 1) for one thread each of `count`, in workgroups of
// `wg` threads, at most `max_x` of them a row.
fn indirect_args(count: u32, wg: u32, max_x: u32) -> array<u32, 3> {
    let grid = grid_2d(div_ceil(count, wg), max_x);
    return array<u32, 3>(grid.x, grid.y, 1u);
}
