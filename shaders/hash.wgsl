// A 32-bit mixer (lowbias32): every input bit moves about half the output bits. The grid's
// cell hash (frame.wgsl) and the sloppy math's error hash (math_sloppy.wgsl) both end in it.

fn lowbias32(x: u32) -> u32 {
    var h = x;
    h ^= h >> 16u;
    h *= 0x7feb352du;
    h ^= h >> 15u;
    h *= 0x846ca68bu;
    h ^= h >> 16u;
    return h;
}
