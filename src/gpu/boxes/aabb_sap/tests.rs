use super::*;
use crate::gpu::context::test_gpu;
use crate::gpu::readback::Readback;

fn buffer_with(ctx: &GpuContext, data: &[u8]) -> wgpu::Buffer {
    let b = ctx.storage_buffer("test input", data.len() as u64).unwrap();
    ctx.write_buffer(&b, 0, data);
    b
}

fn run(ctx: &GpuContext, sap: &mut GpuAabbSap, shapes: SatShapes<'_>) -> Result<u64> {
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    sap.encode(ctx, &mut enc, shapes, &SweepLayout::single())?;
    finish(ctx, sap, enc)
}

/// Submits `enc` (holding `sap`'s passes) with the readback of its totals: the exact count.
fn finish(ctx: &GpuContext, sap: &GpuAabbSap, mut enc: wgpu::CommandEncoder) -> Result<u64> {
    let mut rb = Readback::new("test readback");
    let plan = sap.plan_readback(&mut rb);
    rb.record(ctx, &mut enc)?;
    ctx.submit(enc);
    Ok(rb
        .map(ctx, |bytes| sap.totals_from(ctx, bytes, &plan))??
        .candidates)
}

/// Offsets that run backwards or past the vertices are reported, not read out of bounds;
/// well-formed ones give the vertex-bounds candidates (two unit squares sharing an edge, a
/// third apart).
#[test]
fn polygon_offsets_are_checked_on_the_device() {
    let Some(ctx) = test_gpu() else { return };
    let mut sap = GpuAabbSap::new(&ctx).unwrap();
    let square = |x: f32| [[x, 0.0], [x + 1.0, 0.0], [x + 1.0, 1.0], [x, 1.0]];
    let vertices: Vec<[f32; 2]> = [square(0.0), square(1.0), square(3.0)].concat();
    let vb = buffer_with(&ctx, bytemuck::cast_slice(&vertices));
    let good = buffer_with(&ctx, bytemuck::cast_slice(&[0u32, 4, 8, 12]));
    fn shapes<'a>(vertices: &'a wgpu::Buffer, offsets: &'a wgpu::Buffer) -> SatShapes<'a> {
        SatShapes::Polygons {
            vertices,
            offsets,
            n: 3,
        }
    }
    assert_eq!(run(&ctx, &mut sap, shapes(&vb, &good)).unwrap(), 1);
    for bad in [[0u32, 4, 2, 12], [0, 4, 8, 99]] {
        let offsets = buffer_with(&ctx, bytemuck::cast_slice(&bad));
        let e = run(&ctx, &mut sap, shapes(&vb, &offsets)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    argument: "offsets",
                    ..
                }
            ),
            "{bad:?}: {e}"
        );
    }
    let e = run(
        &ctx,
        &mut sap,
        SatShapes::Polygons {
            vertices: &vb,
            offsets: &good,
            n: 0,
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::EmptyScene), "{e}");
}

#[test]
fn candidate_lists_beyond_one_binding_are_too_large() {
    let Some(ctx) = test_gpu() else { return };
    let mut sap = GpuAabbSap::new(&ctx).unwrap();
    let max = ctx.max_binding_bytes() / 8;
    let e = sap.grow_candidates(&ctx, max + 1).unwrap_err();
    assert!(
        matches!(e, Error::TooLarge { exceeds: Exceeds::Binding { needed, allowed }, .. }
            if needed == (max + 1) * 8 && allowed <= ctx.max_binding_bytes()),
        "{e:?}"
    );
    assert!(crate::gpu::context::is_size_limit(&e));
    sap.grow_candidates(&ctx, 1000).unwrap();
    assert!(sap.candidate_capacity() >= 1000);
}

/// Any column layout whose reach bounds the AABB widths gives the plain sweep's candidates:
/// narrow cells (a walk spans several columns per axis), an origin inside the scene (edge
/// columns clamp), a single row.
#[test]
fn column_layouts_give_the_plain_sweeps_candidates() {
    let Some(ctx) = test_gpu() else { return };
    let mut sap = GpuAabbSap::new(&ctx).unwrap();
    let boxes = crate::test_scenes::random_boxes(4_000, 3);
    let frames = crate::geom::obb::obb_frames(&boxes);
    let fb = buffer_with(&ctx, bytemuck::cast_slice(&frames));
    let shapes = SatShapes::Obbs {
        frames: &fb,
        n: boxes.len() as u32,
    };
    let mut candidates = |columns: SweepColumns| {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sap.encode(&ctx, &mut enc, shapes, &columns.into()).unwrap();
        let count = finish(&ctx, &sap, enc).unwrap();
        assert!(count <= sap.candidate_capacity() as u64);
        let mut pairs: Vec<[u32; 2]> = ctx.read(sap.candidates().pairs, count as usize).unwrap();
        pairs.sort_unstable();
        pairs
    };
    let plain = candidates(SweepColumns::single());
    assert!(plain.len() > 1_000, "{}", plain.len());
    let auto = SweepColumns::for_frames(&frames);
    assert!(auto.dims[0] > 4 && auto.dims[1] > 4, "{auto:?}");
    assert_eq!(candidates(auto), plain, "{auto:?}");
    let narrow = SweepColumns {
        cell: auto.reach / 3.0,
        dims: [40, 50],
        ..auto
    };
    assert_eq!(candidates(narrow), plain, "{narrow:?}");
    let clamped = SweepColumns {
        origin: [auto.origin[0] + 5.0, auto.origin[1] + 7.0],
        dims: [6, 1],
        ..narrow
    };
    assert_eq!(candidates(clamped), plain, "{clamped:?}");
    let too_many = SweepColumns {
        dims: [4_000, 2],
        ..auto
    };
    assert!(matches!(
        sap.encode(
            &ctx,
            &mut ctx.device.create_command_encoder(&Default::default()),
            shapes,
            &too_many.into()
        ),
        Err(Error::InvalidArgument {
            argument: "columns",
            ..
        })
    ));
}

#[test]
fn columns_cover_the_scene_with_at_most_one_per_shape() {
    let c = SweepColumns::covering([0.0, -10.0], [100.0, 10.0], 2.0, 10_000);
    assert_eq!(c.cell, 2.0);
    assert_eq!(c.dims, [51, 11]);
    assert_eq!(c.reach, 2.0);
    // Few shapes: at most sqrt(n) per axis, wider cells.
    let c = SweepColumns::covering([0.0, 0.0], [100.0, 100.0], 2.0, 100);
    assert_eq!(c.dims, [10, 10]);
    assert_eq!(c.cell, 10.0);
    // Degenerate extents: one column.
    assert_eq!(
        SweepColumns::covering([5.0, 5.0], [5.0, 5.0], 0.0, 100),
        SweepColumns::single()
    );
    // Reach: the widest AABB on y or z (here 2 x 3 on z), plus margins; a box turned 45
    // degrees about x is wider on y and z: 2 (2 + 3) / sqrt(2).
    let b = crate::geom::obb::Obb::axis_aligned(
        glam::Vec3::new(1.0, 2.0, 3.0),
        glam::Vec3::new(1.0, 2.0, 3.0),
    );
    let c = SweepColumns::for_frames(&[b.frame(), b.frame()]);
    assert!(c.reach >= 6.0 && c.reach < 6.001, "{c:?}");
    let turned = crate::geom::obb::Obb::new(
        b.center,
        b.half_extents,
        glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_4),
    );
    let c = SweepColumns::for_frames(&[b.frame(), turned.frame()]);
    let want = 10.0 / std::f32::consts::SQRT_2;
    assert!(c.reach >= want && c.reach < want * 1.001, "{c:?}");
}
fn boxes_with_giants(n: usize, seed: u64, giants: usize) -> Vec<crate::geom::obb::Obb> {
    use glam::{Quat, Vec3};
    let mut boxes = crate::test_scenes::random_boxes(n, seed);
    // Giants spread over the scene at several places, the first two overlapping each other.
    for k in 0..giants {
        let at = match k {
            1 => boxes[0].center + Vec3::new(2.0, 1.0, 0.0),
            _ => boxes[k * 37].center,
        };
        boxes.insert(
            k * 61 + 3,
            crate::geom::obb::Obb::new(
                at,
                Vec3::new(6.0 + k as f32, 0.4, 15.0),
                Quat::from_rotation_x(0.3 * k as f32),
            ),
        );
    }
    boxes
}

/// The rule: none wide in an ordinary scene; giants set apart, and the columns then sized for
/// the others; more giants than `max_wide` -> every shape in the columns again.
#[test]
fn wide_shapes_are_the_few_far_wider_than_the_median() {
    let plain = crate::test_scenes::random_boxes(4_000, 1);
    let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&plain));
    assert!(layout.wide.is_empty());
    assert_eq!(
        layout.columns,
        SweepColumns::for_frames(&crate::geom::obb::obb_frames(&plain))
    );
    let giants = boxes_with_giants(4_000, 1, 3);
    let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&giants));
    assert_eq!(layout.wide, vec![3, 64, 125]);
    // random_boxes: half-extents below 0.6, so AABB widths below 2 sqrt(3) 0.6 ~ 2.08.
    assert!(layout.columns.reach < 2.1, "{layout:?}");
    assert!(layout.columns.dims.iter().all(|&d| d > 4), "{layout:?}");
    let many = SweepLayout::max_wide(4_064) + 1;
    let crowd = boxes_with_giants(4_000, 1, many);
    let layout = SweepLayout::for_frames(&crate::geom::obb::obb_frames(&crowd));
    assert!(layout.wide.is_empty());
    assert!(layout.columns.reach > 30.0, "{layout:?}");
    assert_eq!(SweepLayout::max_wide(1_000_000), 10_000);
    assert_eq!(SweepLayout::max_wide(6_400), 100);
    assert_eq!(SweepLayout::max_wide(63), 0);
}

/// The wide pass and the walk together give the plain sweep's candidates (every shape
/// walking in one column): for the host's wide list, for an arbitrary one (small boxes
/// set apart too, so wide-wide pairs among touching neighbours), and through 2D dispatch.
#[test]
fn wide_pass_gives_the_plain_sweeps_candidates() {
    let Some(ctx) = test_gpu() else { return };
    let mut sap = GpuAabbSap::new(&ctx).unwrap();
    let boxes = boxes_with_giants(3_000, 9, 4);
    let frames = crate::geom::obb::obb_frames(&boxes);
    let fb = buffer_with(&ctx, bytemuck::cast_slice(&frames));
    let n = boxes.len() as u32;
    let shapes = SatShapes::Obbs { frames: &fb, n };
    let candidates = |sap: &mut GpuAabbSap, layout: &SweepLayout| -> Result<Vec<[u32; 2]>> {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        sap.encode(&ctx, &mut enc, shapes, layout)?;
        let count = finish(&ctx, sap, enc)?;
        assert!(count <= sap.candidate_capacity() as u64);
        let mut pairs: Vec<[u32; 2]> = ctx.read(sap.candidates().pairs, count as usize)?;
        pairs.sort_unstable();
        Ok(pairs)
    };
    let plain = candidates(&mut sap, &SweepLayout::single()).unwrap();
    assert!(plain.len() > 1_000, "{}", plain.len());
    let auto = SweepLayout::for_frames(&frames);
    assert_eq!(auto.wide.len(), 4);
    let giant_pairs = plain
        .iter()
        .filter(|p| p.iter().any(|i| auto.wide.contains(i)))
        .count();
    assert!(giant_pairs > 100, "{giant_pairs}");
    assert!(
        plain.contains(&[auto.wide[0], auto.wide[1]]),
        "giants overlap"
    );
    assert_eq!(candidates(&mut sap, &auto).unwrap(), plain);
    // Every 7th shape and the giants apart; columns bound every width, so any list is sound.
    let arbitrary = SweepLayout {
        columns: SweepColumns::for_frames(&frames),
        wide: (0..n)
            .filter(|i| i % 7 == 0 || auto.wide.contains(i))
            .collect(),
    };
    let wide_wide = plain
        .iter()
        .filter(|p| p.iter().all(|i| arbitrary.wide.contains(i)))
        .count();
    assert!(wide_wide > 10, "{wide_wide}");
    assert_eq!(candidates(&mut sap, &arbitrary).unwrap(), plain);
    // 2D dispatch of every pass (at most 3 groups per dimension, then `side`): the wide pass
    // has a row of workgroups per wide shape, folded into z past the limit, so the arbitrary
    // list's hundreds of rows exceed 3 x 3 but fit side x side.
    sap.set_max_groups_per_dim(3);
    assert_eq!(candidates(&mut sap, &auto).unwrap(), plain);
    let e = candidates(&mut sap, &arbitrary).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");
    let side = (arbitrary.wide.len() as f64).sqrt().ceil() as u32;
    assert!(
        side > 3 && side * side >= arbitrary.wide.len() as u32,
        "{side}"
    );
    sap.set_max_groups_per_dim(side);
    assert_eq!(candidates(&mut sap, &arbitrary).unwrap(), plain);
    sap.set_max_groups_per_dim(u32::MAX);
    for bad in [vec![5, 5], vec![9, 4], vec![n]] {
        let layout = SweepLayout {
            wide: bad.clone(),
            ..auto.clone()
        };
        let e = candidates(&mut sap, &layout).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    argument: "wide",
                    ..
                }
            ),
            "{bad:?}: {e}"
        );
    }
}

/// The wide pass's grid at n = 2^24 with 65,536 wide shapes (the most `max_wide` sets apart
/// there): 2^32 invocations, which a flat u32 index wrapped; the grid keeps every dimension
/// within 65,535 and every index the shader forms below 2^32, and reaches each wide shape once.
/// No device needed.
#[test]
fn the_wide_grid_at_n_2_24_stays_within_limits_and_indices() {
    let (n, wide_count, max) = (1u32 << 24, 65_536u64, 65_535u32);
    assert_eq!(SweepLayout::max_wide(n as usize), wide_count as usize);
    let (lanes, [x, y, z]) = encode::wide_grid(n, wide_count, max).unwrap();
    assert_eq!(lanes, n / WIDE_CHUNK);
    // The flat index of the old dispatch: wide_count x lanes invocations.
    assert!(wide_count * lanes as u64 > u32::MAX as u64);
    assert!(x <= max && y <= max && z <= max, "{x} x {y} x {z}");
    assert!(x as u64 * WG as u64 >= lanes as u64);
    assert!(y as u64 * z as u64 >= wide_count);
    // The shader's largest indices, in its own u32 arithmetic.
    let last_lane = (x - 1).checked_mul(WG).and_then(|v| v.checked_add(WG - 1));
    let last_wide = (z - 1).checked_mul(y).and_then(|v| v.checked_add(y - 1));
    assert!(last_lane.is_some_and(|l| l >= lanes - 1), "{last_lane:?}");
    assert!(
        last_wide.is_some_and(|k| k as u64 >= wide_count - 1),
        "{last_wide:?}"
    );
    // Each wide shape has exactly one row (a small grid, enumerated).
    for (count, max) in [(40u64, 7u32), (49, 7), (1, 3), (9, 3)] {
        let (_, [_, y, z]) = encode::wide_grid(1000, count, max).unwrap();
        let mut rows: Vec<u64> = (0..z)
            .flat_map(|zz| (0..y).map(move |yy| (zz * y + yy) as u64))
            .filter(|&k| k < count)
            .collect();
        rows.sort_unstable();
        assert_eq!(rows, (0..count).collect::<Vec<_>>(), "{count} in {max}");
    }
    // Past what the adapter's dimensions hold: a clear TooLarge, never a wrapped grid.
    for (n, count, max) in [
        (1000, 10, 3),
        (u32::MAX, 1, 65_535),
        (1 << 24, 1 << 33, 65_535),
    ] {
        let e = encode::wide_grid(n, count, max).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
    }
}

crate::gpu::shader::uniform_layout_test!(Params, "boxes/aabb_sap.wgsl", "params");
