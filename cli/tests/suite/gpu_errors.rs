//! Failures stay local (docs/design.md §9.7): a device error reported while a readback waits
//! fails that frame only. The staging buffer is unmapped on every path, so the next frame on the
//! same context (and the same broad phase, with its persistent readback buffer) runs whole and
//! finds the CPU's pairs (the context's own map and pipeline errors are unit tests beside it,
//! `src/gpu/context/tests.rs`). Each test opens a context of its own: the error it injects
//! must not reach tests running beside it. Fails (not skips) without an adapter unless
//! SWEEPFAN_NO_GPU=1.

use crate::common::{cpu_grid_pairs, shared_gpu};
use sweepfan::gpu::GpuBroadPhase;
use sweepfan::{BroadPhase, Error, Method, Pair, canonicalize};
use sweepfan_cli::run::verify::compare_pairs;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// A frame whose readback wait reports an injected error fails; the frames after it, on the
/// same context and broad phase, find the CPU's pairs.
#[test]
fn a_failed_frame_leaves_the_next_frame_whole() {
    let Some(ctx) = shared_gpu() else { return };
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(2000, 7));
    let want = cpu_grid_pairs(&scene.spheres);
    assert!(want.len() > 10, "{} pairs", want.len());
    let mut gpu = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let frame = |gpu: &mut GpuBroadPhase| -> sweepfan::Result<Vec<Pair>> {
        let mut pairs = Vec::new();
        gpu.find_pairs(&scene.spheres, Some(&mut pairs))?;
        canonicalize(&mut pairs);
        Ok(pairs)
    };
    let matches_cpu = |pairs: &[Pair], what: &str| {
        let cmp = compare_pairs(&scene.spheres, &want, pairs);
        assert!(cmp.is_ok(), "{what}: {}", cmp.summary());
    };
    // A first frame builds every kernel and buffer, so the injected error surfaces in the
    // second frame's readback wait, with the map of its staging buffer under way.
    matches_cpu(&frame(&mut gpu).unwrap(), "before the fault");
    let _fault = ctx.inject_fault();
    let e = frame(&mut gpu).expect_err("the injected error fails this frame");
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    for after in 0..2 {
        let pairs = frame(&mut gpu).unwrap_or_else(|e| panic!("frame {after} after: {e}"));
        matches_cpu(&pairs, &format!("frame {after} after the fault"));
    }
    ctx.check().unwrap();
}
