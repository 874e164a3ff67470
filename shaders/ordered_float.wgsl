// Order-preserving map f32 -> u32, identical to `sweepfan::gpu::radix_sort::f32_to_ordered_u32`:
// a < b (IEEE total order) <=> ordered_u32(a) < ordered_u32(b). Negative floats have every bit
// flipped (larger magnitude -> smaller key); non-negative ones get the sign bit set.
// Kernels that make sort keys from floats concatenate this file in front of their own:
//   ctx.shader("keys.wgsl", concat!(include_str!("../../shaders/ordered_float.wgsl"),
//                                   include_str!("../../shaders/sort/keys.wgsl")))
fn ordered_u32(f: f32) -> u32 {
    let bits = bitcast<u32>(f);
    if ((bits & 0x80000000u) != 0u) {
        return ~bits;
    }
    return bits | 0x80000000u;
}
