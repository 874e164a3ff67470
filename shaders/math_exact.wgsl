// The float operations whose rounding WGSL leaves to the device (docs/design.md §9.11), as the
// kernels call them. Kernels import `math.wgsl`; the composer (src/gpu/shader.rs) puts this file
// there by default, and math_sloppy.wgsl (the same functions, names and types) when
// SWEEPFAN_SLOPPY_MATH=1. Here each wrapper is the builtin itself: lavapipe rounds these
// correctly and fuses nothing, as the CPU reference does. WGSL has no overloading of user
// functions, so each takes one type (m_length2, m_length3). Integer division stays `/`.

fn m_sqrt(x: f32) -> f32 {
    return sqrt(x);
}

fn m_inverse_sqrt(x: f32) -> f32 {
    return inverseSqrt(x);
}

fn m_length2(v: vec2<f32>) -> f32 {
    return length(v);
}

fn m_length3(v: vec3<f32>) -> f32 {
    return length(v);
}

// a / b on f32.
fn m_div(a: f32, b: f32) -> f32 {
    return a / b;
}

// a % b on f32 (WGSL: a - b * trunc(a / b), with the precision that inherits).
fn m_rem(a: f32, b: f32) -> f32 {
    return a % b;
}

// The sphere touch test's squared distance: a sum of products a driver may fuse.
fn m_dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return dot(a, b);
}
