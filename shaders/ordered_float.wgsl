// The order-preserving map f32 -> u32 behind every sort key of a float, and its inverse: the
// rule of `sweepfan::broadphase::keys` (`ordered_bits`, `from_ordered_bits`) word for word, and
// a test runs both over every class of float. -0 is folded into +0 by its bits (a float
// comparison would also fold subnormals on a device that flushes them); then a negative float
// has every bit flipped and any other gets the sign bit set: for non-NaN a and b, a < b <=>
// ordered(a) < ordered(b), and a == b <=> equal keys.
// Imported by frame.wgsl (the sphere stages) and boxes/aabb_sap.wgsl.

fn ordered(x: f32) -> u32 {
    let raw = bitcast<u32>(x);
    let b = select(raw, 0u, (raw & 0x7fffffffu) == 0u);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn unordered(u: u32) -> f32 {
    return bitcast<f32>(select(~u, u & 0x7fffffffu, (u & 0x80000000u) != 0u));
}
