// Scene motion on the device (src/gpu/spheres/motion.rs; docs/design.md §10): every sphere
// moves by its velocity and bounces off the walls of the cube [-half, half]^3, exactly as
// `step_in_cube` in src/geom/motion.rs does on the CPU: each step one f32 add, subtract or
// doubling, which Vulkan and WebGPU round as the CPU does (a doubling is exact, so a fused
// `2 limit - c` rounds the same), and the same comparisons.

// #import dispatch.wgsl
// #import spheres/motion_params.wgsl

const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
// x, y, z, radius.
@group(0) @binding(1) var<storage, read_write> spheres: array<vec4<f32>>;
// x, y, z, 0.
@group(0) @binding(2) var<storage, read_write> velocities: array<vec4<f32>>;

@compute @workgroup_size(256)
fn step_in_cube(inv: Invocation) {
    let i = flat_id(inv);
    if i >= params.n {
        return;
    }
    let s = spheres[i];
    var v = velocities[i];
    let limit = max(params.half_extent - s.w, 0.0);
    var c = s.xyz + v.xyz;
    for (var axis = 0u; axis < 3u; axis++) {
        if c[axis] > limit {
            c[axis] = 2.0 * limit - c[axis];
            v[axis] = -v[axis];
        } else if c[axis] < -limit {
            c[axis] = -2.0 * limit - c[axis];
            v[axis] = -v[axis];
        }
    }
    spheres[i] = vec4<f32>(c, s.w);
    velocities[i] = v;
}
