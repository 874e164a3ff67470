//! Failures stay local (docs/design.md §9.7): a device error reported while a readback waits
//! fails that frame only. The staging buffer is unmapped on every path, so the next frame on the
//! same context (and the same broad phase, with its persistent readback buffer) runs whole and
//! finds the CPU's pairs; a map that itself fails leaves nothing behind either. Each test opens
//! a context of its own: the error it injects must not reach tests running beside it. Fails
//! (not skips) without an adapter unless SWEEPFAN_NO_GPU=1.

use crate::common::test_gpu;
use crate::common::{cpu_grid_pairs, shared_gpu};
use sweepfan::gpu::GpuBroadPhase;
use sweepfan::gpu::GpuContext;
use sweepfan::{BroadPhase, Error, Method, Pair, canonicalize};
use sweepfan_cli::run::verify::compare_pairs;
use sweepfan_scenes::{Scene, SceneKind, SceneParams};

/// Records a validation error on `ctx` outside any error scope, as a caller's bad command or a
/// driver fault would: a buffer that is both mappable and storage (refused without the
/// `MAPPABLE_PRIMARY_BUFFERS` feature, which the context never enables). The next wait reports
/// it. The buffer is returned so that it is not dropped during the test.
fn inject_fault(ctx: &GpuContext) -> wgpu::Buffer {
    ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("injected fault"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    })
}

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
    let _fault = inject_fault(&ctx);
    let e = frame(&mut gpu).expect_err("the injected error fails this frame");
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    for after in 0..2 {
        let pairs = frame(&mut gpu).unwrap_or_else(|e| panic!("frame {after} after: {e}"));
        matches_cpu(&pairs, &format!("frame {after} after the fault"));
    }
    ctx.check().unwrap();
}

/// `map_read` directly: after a wait that reports an error, the staging buffer is unmapped (a
/// copy into it is valid and it maps again); after a map that fails (a buffer without
/// `MAP_READ`), nothing is left mapped and no error is left for the next check.
#[test]
fn map_read_unmaps_after_a_failed_wait_and_a_failed_map() {
    let Some(ctx) = test_gpu() else { return };
    let data: Vec<u32> = (0..64).map(|i| i * 7 + 1).collect();
    let src = ctx.storage_buffer("map test source", 256).unwrap();
    ctx.queue()
        .write_buffer(&src, 0, bytemuck::cast_slice(&data));
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("map test staging"),
        size: 256,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let copy = || {
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&src, 0, &staging, 0, 256);
        ctx.queue().submit([enc.finish()]);
    };
    let words = |bytes: &[u8]| bytemuck::pod_collect_to_vec::<u8, u32>(bytes);
    copy();
    let _fault = inject_fault(&ctx);
    let e = ctx.map_read(&staging, 256, "staging", words).unwrap_err();
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    copy();
    assert_eq!(ctx.map_read(&staging, 256, "staging", words).unwrap(), data);
    ctx.check().unwrap();
    // A buffer that cannot be mapped: the map fails, and unmapping it leaves no error behind.
    let e = ctx.map_read(&src, 256, "source", words).unwrap_err();
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    ctx.check().unwrap();
    assert_eq!(ctx.read::<u32>(&src, 64).unwrap(), data);
    copy();
    assert_eq!(ctx.map_read(&staging, 256, "staging", words).unwrap(), data);
}

/// A pipeline the driver or wgpu refuses is an error naming the entry point, the adapter and
/// its driver, returned where it is built; the context stays usable.
#[test]
fn a_refused_pipeline_names_its_entry_the_adapter_and_the_driver() {
    let Some(ctx) = test_gpu() else { return };
    let module = ctx
        .shader(
            "one entry",
            "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
             @compute @workgroup_size(64) fn fill(@builtin(global_invocation_id) id: vec3<u32>) {\n\
                 if id.x < arrayLength(&out) { out[id.x] = id.x; }\n\
             }\n",
        )
        .unwrap();
    let e = ctx
        .pipeline(&module, "no_such_entry", &[])
        .expect_err("an entry point the module lacks");
    let text = e.to_string();
    assert!(
        matches!(
            e,
            Error::Gpu {
                failure: sweepfan::GpuFailure::Shader,
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("no_such_entry") && text.contains(&ctx.info().name),
        "{text}"
    );
    assert!(text.contains(&ctx.info().driver), "{text}");
    // Reported here, not left for the next check; the good entry still builds.
    ctx.check().unwrap();
    ctx.pipeline(&module, "fill", &[]).unwrap();
    ctx.check().unwrap();
}
