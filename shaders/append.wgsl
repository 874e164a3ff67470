// Appends without a hot address (docs/design.md §9.10): the threads of a workgroup reserve
// their items' slots in workgroup memory, and one thread per workgroup adds the workgroup's
// total to the global counter: one global atomic per workgroup instead of one per item. Every
// thread of the workgroup must call group_reserve and the kernel's workgroupUniformLoad of
// `append_base` after it (they have barriers), in uniform control flow. Portable: workgroup
// atomics and barriers only, no subgroup operation and no assumption about lane order.

var<workgroup> append_count: atomic<u32>;
var<workgroup> append_base: u32;

// (this thread's offset within the workgroup's reservation, the workgroup's total). The kernel
// then sets `append_base` from thread 0 (one global atomicAdd of the total) and reads it back
// with workgroupUniformLoad.
fn group_reserve(lid: u32, held: u32) -> vec2<u32> {
    if lid == 0u {
        atomicStore(&append_count, 0u);
    }
    workgroupBarrier();
    var offset = 0u;
    if held > 0u {
        offset = atomicAdd(&append_count, held);
    }
    workgroupBarrier();
    return vec2<u32>(offset, atomicLoad(&append_count));
}
