//! What a GPU frame allocates on the host (docs/design.md §9.16): the caller's spheres are
//! copied once, straight into mapped staging memory, and only the results come back. A counting
//! allocator (this test binary's global allocator, per thread) sees any second copy of the
//! scene that creeps into a frame: a `to_vec`, a packing buffer, a staging `Vec`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the bytes each thread asks for.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn note(bytes: usize) {
    // `try_with`: a thread being torn down has no counter, and needs none.
    let _ = ALLOCATED.try_with(|a| a.set(a.get() + bytes as u64));
}

// SAFETY: every call is forwarded to `System` unchanged; the counter allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size.saturating_sub(layout.size()));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes this thread has allocated so far.
fn allocated() -> u64 {
    ALLOCATED.with(Cell::get)
}

/// Once sizes are stable a GPU frame allocates on the calling thread far less than a copy of
/// its spheres (16 bytes each), counting or storing (the stored pairs, 8 bytes each, are the one
/// result it must allocate), and sends the device 16 bytes a sphere plus a few parameters.
#[test]
fn a_gpu_frame_makes_no_host_copy_of_the_scene() {
    use sweepfan::{BroadPhase, Method};
    use sweepfan_scenes::{Scene, SceneKind, SceneParams};
    let n = 100_000;
    let ctx = std::sync::Arc::new(
        sweepfan::gpu::GpuContext::new(&crate::common::test_options()).unwrap(),
    );
    let mut scene = Scene::generate(SceneKind::Density, &SceneParams::new(n, 5));
    let scene_bytes = 16 * n as u64;
    for method in [Method::Grid, Method::Sap] {
        let mut gpu = sweepfan::gpu::GpuBroadPhase::new(ctx.clone(), method).unwrap();
        let mut pairs = Vec::new();
        for frame in 0..6 {
            let store = frame % 2 == 1;
            let before = (allocated(), ctx.counts());
            let out = store.then_some(&mut pairs);
            let stats = gpu.find_pairs(&scene.spheres, out).unwrap();
            let (bytes, counts) = (allocated() - before.0, ctx.counts().since(before.1));
            // The first two frames size the buffers and plan the readback.
            if frame >= 2 {
                let results = if store { 8 * stats.pairs } else { 0 };
                assert!(
                    bytes <= results + scene_bytes / 8,
                    "{method} frame {frame} (store {store}): {bytes} bytes allocated on the \
                     host for {} of pairs: a copy of the scene ({scene_bytes} bytes)?",
                    results
                );
                assert!(
                    counts.bytes_from_host <= scene_bytes + 4096,
                    "{method} frame {frame}: {counts:?}"
                );
            }
            scene.step();
        }
        assert!(!pairs.is_empty());
    }
}
