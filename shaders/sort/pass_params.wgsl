// What both scatter kernels of a radix sort pass share (sort/radix_sort.wgsl,
// sort/radix_sort_subgroup.wgsl): the digit's parameters, the key / value bindings and a key's
// digit. Binding 2 (`hist`) is each file's own: the portable module writes it, the subgroup
// scatter only reads it.

const RADIX: u32 = 256u;

struct PassParams {
    shift: u32,  // first bit of this pass's digit
    mask: u32,   // digit mask (narrower on the last pass when key_bits is not a multiple of 8)
}

@group(0) @binding(0) var<uniform> params: PassParams;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(3) var<storage, read> values_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> values_out: array<u32>;

// The digit of `key` this pass sorts on.
fn digit_of(key: u32) -> u32 {
    return (key >> params.shift) & params.mask;
}
