//! Tests of the context: dispatch grids, limits and growth (no device needed), and the device
//! basics.

use super::*;

#[test]
fn dispatch_2d_covers_every_group_within_limits() {
    for groups in [0u32, 1, 65_535, 65_536, 65_535 * 3 + 1, 4_000_000] {
        let (x, y) = dispatch_2d(groups, 65_535);
        assert!(x <= 65_535 && y <= 65_535);
        assert!(x as u64 * y as u64 >= groups as u64);
        // Not wasteful: less than one extra row.
        assert!((x as u64 * y as u64) < groups as u64 + x as u64 + 1);
    }
}

/// wgpu's 2^31 - 1 binding limit on Vulkan/DX12: every request between 1.43 and 2 GB used
/// to grow to the limit, round up to 2^31 and be refused.
#[test]
fn counts_past_u32_are_too_large() {
    assert_eq!(count_u32("spheres", 7).unwrap(), 7);
    assert_eq!(count_u32("spheres", u32::MAX as usize).unwrap(), u32::MAX);
    let e = count_u32("spheres", u32::MAX as usize + 1).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                exceeds: Exceeds::Index32 { count },
                ..
            } if count == u32::MAX as u64 + 1
        ) && e.to_string().contains("spheres"),
        "{e}"
    );
    assert!(
        !is_size_limit(&e),
        "a count is no device size: parts do not help"
    );
}

/// A binding past the limit set for the run: a device size (what parts overcome), with the
/// bytes asked for and allowed, decided from the kind (no message is read).
#[test]
fn bindings_past_the_limit_say_what_they_need_and_may_have() {
    let Some(ctx) = test_gpu() else { return };
    let small = GpuContext::new(&GpuOptions {
        max_binding_bytes: Some(1 << 16),
        ..Default::default()
    })
    .unwrap();
    let e = small
        .check_binding("a test list", (1 << 16) + 16)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                exceeds: Exceeds::Binding {
                    needed: 65552,
                    allowed: 65536
                },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(is_size_limit(&e));
    assert!(ctx.check_binding("a test list", 1 << 16).is_ok());
}

#[test]
fn growth_stays_within_an_odd_binding_limit() {
    let odd: u64 = (1 << 31) - 1;
    let max = odd - odd % BINDING_ALIGN;
    assert_eq!(max, (1 << 31) - 16);
    for bytes in [4u64, 1 << 20, 1_500_000_000, 1_431_655_764, max - 4, max] {
        let size = grown_bytes(bytes, max);
        assert!(
            size >= bytes && size <= max && size.is_multiple_of(4),
            "{bytes}: {size}"
        );
    }
}

/// 2^31 - 16 on every backend, whatever the adapter reports above it (Metal may report more
/// than 4 GiB, which naga's 32-bit sizes would wrap); smaller limits are kept, rounded down.
#[test]
fn the_binding_limit_is_clamped_on_every_backend() {
    let limits = |binding: u64, buffer: u64| wgpu::Limits {
        max_storage_buffer_binding_size: binding,
        max_buffer_size: buffer,
        ..wgpu::Limits::default()
    };
    let clamped = (1u64 << 31) - 16;
    for (binding, buffer, want) in [
        (1 << 33, 1 << 34, clamped),
        (u64::MAX, u64::MAX, clamped),
        (1 << 31, 1 << 32, clamped),
        ((1 << 31) - 1, 1 << 40, clamped),
        (128 << 20, 1 << 40, 128 << 20),
        (1 << 30, 1_000_000_007, 1_000_000_000),
    ] {
        let got = max_binding_bytes_of(&limits(binding, buffer));
        assert_eq!(got, want, "binding {binding}, buffer {buffer}");
    }
    assert_eq!(MAX_BINDING_BYTES % BINDING_ALIGN, 0);
}

#[test]
fn the_binding_limit_is_rounded_down() {
    let Some(mut ctx) = test_gpu() else { return };
    ctx.limits.max_storage_buffer_binding_size = (1 << 31) - 1;
    ctx.limits.max_buffer_size = u64::MAX;
    assert_eq!(ctx.max_binding_bytes(), (1 << 31) - 16);
    // A request just under it is accepted by the check (no allocation here).
    assert!(ctx.check_binding("t", (1 << 31) - 16).is_ok());
    assert!(ctx.check_binding("t", (1 << 31) - 12).is_err());
}

#[test]
fn device_reports_limits_and_reads_back() {
    let Some(ctx) = test_gpu() else { return };
    assert!(ctx.limits.max_storage_buffer_binding_size >= 128 << 20);
    let data: Vec<u32> = (0..1000).collect();
    let buf = ctx.storage_buffer("t", 4000).unwrap();
    ctx.write_buffer(&buf, 0, bytemuck::cast_slice(&data));
    assert_eq!(ctx.read::<u32>(&buf, 1000).unwrap(), data);
    let too_big = ctx.limits.max_storage_buffer_binding_size + 4;
    let e = ctx.check_binding("pairs", too_big).unwrap_err().to_string();
    assert!(e.contains("pairs") && e.contains("allows"), "{e}");
}

#[test]
fn unknown_adapter_name_is_a_clear_error() {
    let e = GpuContext::new(&GpuOptions {
        adapter: Some("no-such-gpu-xyz".into()),
        ..Default::default()
    })
    .err()
    .expect("must fail");
    assert!(matches!(e, Error::NoAdapter(_)), "{e}");
    assert!(e.to_string().contains("no-such-gpu-xyz"));
}

/// The adapter the GPU tests open, named on stderr. With `SWEEPFAN_EXPECT_ADAPTER` set, another
/// adapter fails here, naming both (`scripts/test.sh` runs this test first, so such a run fails
/// within a minute rather than after the whole suite).
#[test]
fn the_tests_run_on_the_expected_adapter() {
    use crate::gpu::adapter_check::adapter_mismatch;
    let Some(ctx) = test_gpu() else { return };
    eprintln!("GPU tests on {}", ctx.adapter_label());
    let env = |name: &str| std::env::var(name).ok();
    if let Some(expected) = GpuOptions::from_vars(env).unwrap().expect_adapter {
        assert_eq!(adapter_mismatch(&expected, &ctx.info), None);
    }
}

/// Modules and pipelines are compiled once per context (docs/design.md §6.1): a second broad
/// phase creates no pipeline (whatever its method: the sphere frame builds every method's
/// kernels at once), and the compile report, which times each pipeline from its source,
/// compiles every one again.
#[test]
fn a_second_gpu_broad_phase_on_a_context_compiles_nothing() {
    use crate::broadphase::Method;
    use crate::gpu::GpuBroadPhase;
    let Some(ctx) = test_gpu() else { return };
    let ctx = Arc::new(ctx);
    let pipelines = || ctx.counts().pipelines;
    let before = pipelines();
    let first = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    let made = pipelines() - before;
    assert!(
        made > 0,
        "a fresh context compiled no pipeline for the grid"
    );
    let second = GpuBroadPhase::new(ctx.clone(), Method::Grid).unwrap();
    assert_eq!(pipelines() - before, made, "the second grid compiled again");
    let _sap = GpuBroadPhase::new(ctx.clone(), Method::Sap).unwrap();
    assert_eq!(
        pipelines() - before,
        made,
        "sap's kernels are the grid's module's"
    );
    drop((first, second));
    let rows = crate::gpu::compile_report::compile_report(&ctx, None, |_| {}).unwrap();
    assert_eq!(pipelines() - before - made, rows.len() as u64);
}

/// The context's math comes from its options, and the options from the variables the caller
/// passes (the library reads none): `SWEEPFAN_SLOPPY_MATH=1` through `from_vars` opens a sloppy
/// context, `0` and an empty value an exact one, and a bad `WGPU_BACKEND` names itself.
#[test]
fn math_and_backends_come_from_the_options_the_caller_maps() {
    use crate::gpu::shader::MathMode;
    let env = |name: &str| std::env::var(name).ok();
    let with_switch = |value: &'static str| {
        move |name: &str| match name {
            "SWEEPFAN_SLOPPY_MATH" => Some(value.to_string()),
            _ => env(name),
        }
    };
    let Some(sloppy) = test_gpu_with(with_switch("1")) else {
        return;
    };
    assert_eq!(sloppy.math(), MathMode::Sloppy);
    for exact in ["0", ""] {
        assert_eq!(
            test_gpu_with(with_switch(exact)).unwrap().math(),
            MathMode::Exact
        );
    }
    let plain = GpuOptions {
        math: MathMode::Exact,
        ..GpuOptions::from_vars(env).unwrap()
    };
    assert_eq!(GpuContext::new(&plain).unwrap().math(), MathMode::Exact);
    let bad =
        GpuOptions::from_vars(|name| (name == "WGPU_BACKEND").then(|| "vulkan,nosuch".into()));
    let e = bad.unwrap_err().to_string();
    assert!(e.contains("WGPU_BACKEND") && e.contains("nosuch"), "{e}");
}

/// On a caller's device (`from_device`) sweepfan's own work runs inside error scopes: its
/// errors (a buffer wgpu refuses, a submission whose pass had no pipeline) come back from
/// `check`, the caller's handler never sees them, and the caller's own errors still reach it.
#[test]
fn errors_of_sweepfans_work_on_a_callers_device_come_back_as_errors() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let Some(owned) = test_gpu() else { return };
    let (device, queue) =
        pollster::block_on(owned.adapter.request_device(&Default::default())).unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    device.on_uncaptured_error(Arc::new(move |_: wgpu::Error| {
        counter.fetch_add(1, Relaxed);
    }));
    let ctx = GpuContext::from_device(owned.adapter.clone(), device.clone(), queue);
    // Mappable for reading and a storage binding at once: refused without a native feature.
    let refused = wgpu::BufferDescriptor {
        label: Some("refused"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    };
    let _ours = ctx.create_buffer(&refused);
    match ctx.check() {
        Err(Error::Gpu {
            failure: crate::error::GpuFailure::Validation,
            message,
        }) => assert!(message.contains("refused"), "{message}"),
        other => panic!("expected the buffer's error, got {other:?}"),
    }
    let mut enc = device.create_command_encoder(&Default::default());
    ctx.compute_pass(&mut enc, &Default::default())
        .dispatch_workgroups(1, 1, 1);
    ctx.submit(enc);
    assert!(
        matches!(ctx.check(), Err(Error::Gpu { .. })),
        "a pass without a pipeline"
    );
    assert_eq!(
        seen.load(Relaxed),
        0,
        "sweepfan's errors reached the caller's handler"
    );
    let _theirs = device.create_buffer(&refused);
    assert_eq!(
        seen.load(Relaxed),
        1,
        "the caller's own error goes to the caller"
    );
    assert!(ctx.check().is_ok());
}

/// `lower_limits` lowers the stages' limits, refuses to raise one (naming it), and leaves the
/// limits unchanged when it refuses.
#[test]
fn limits_can_be_lowered_never_raised() {
    let Some(mut ctx) = test_gpu() else { return };
    let granted = ctx.limits().clone();
    let e = ctx
        .lower_limits(|l| l.max_compute_workgroups_per_dimension += 1)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("max_compute_workgroups_per_dimension"),
        "{e}"
    );
    assert_eq!(ctx.limits(), &granted);
    ctx.lower_limits(|l| l.max_compute_workgroups_per_dimension = 5)
        .unwrap();
    assert_eq!(ctx.limits().max_compute_workgroups_per_dimension, 5);
    assert_eq!(
        ctx.limits().max_storage_buffer_binding_size,
        granted.max_storage_buffer_binding_size
    );
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
    let _fault = ctx.inject_fault();
    let e = ctx
        .map_read(&staging, 256, "staging", None, words)
        .unwrap_err();
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    copy();
    assert_eq!(
        ctx.map_read(&staging, 256, "staging", None, words).unwrap(),
        data
    );
    ctx.check().unwrap();
    // A buffer that cannot be mapped: the map fails, and unmapping it leaves no error behind.
    let e = ctx.map_read(&src, 256, "source", None, words).unwrap_err();
    assert!(matches!(e, Error::Gpu { .. }), "{e}");
    ctx.check().unwrap();
    assert_eq!(ctx.read::<u32>(&src, 64).unwrap(), data);
    copy();
    assert_eq!(
        ctx.map_read(&staging, 256, "staging", None, words).unwrap(),
        data
    );
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
                failure: crate::error::GpuFailure::Shader,
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
