//! Recording one frame of the sweep: bounds, sorts, gather, walk, the wide pass and the copy of
//! the counters (docs/design.md §4.5).

use super::*;

/// What [`GpuAabbSap::validate`] checked and derived.
struct Checked {
    /// Shapes.
    n: u32,
    /// Sweep columns (`dims[0] * dims[1]`).
    column_count: u64,
    wide_count: u64,
    /// Invocations per wide shape.
    wide_lanes: u32,
    /// Workgroups of the wide pass (see [`wide_grid`]).
    wide_grid: [u32; 3],
    /// Workgroups per dispatch dimension.
    max_groups: u32,
}

/// The frame's passes, each timed as its label, in one encoder.
struct TimedPasses<'a> {
    ctx: &'a GpuContext,
    encoder: &'a mut wgpu::CommandEncoder,
    timer: &'a mut PassTimer,
}

impl TimedPasses<'_> {
    /// One pass of one dispatch: `pipeline` with `group`, `groups` workgroups.
    fn run(
        &mut self,
        label: &'static str,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: [u32; 3],
    ) {
        let timestamps = self.timer.pass(label);
        self.ctx
            .dispatch_pass(self.encoder, label, timestamps, pipeline, group, groups);
    }
}

impl GpuAabbSap {
    /// Records one frame (bounds, sorts, gather, walk, the wide pass, the copy of the counters)
    /// into `encoder`. `layout.columns` must bound the AABB widths of the shapes outside
    /// `layout.wide` (see [`SweepColumns`]; `single()` always does); `layout.wide` must be
    /// increasing input indices below n. The parameters go through `queue.write_buffer`: encode
    /// at most one frame per submission. Plan its readback ([`Self::plan_readback`]), submit, then read
    /// [`Self::totals_from`].
    pub fn encode<'a>(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        shapes: impl Into<SweepShapes<'a>>,
        layout: &SweepLayout,
    ) -> Result<()> {
        let shapes = shapes.into();
        let columns = layout.columns;
        let Checked {
            n,
            column_count,
            wide_count,
            wide_lanes,
            wide_grid,
            max_groups,
        } = self.validate(ctx, shapes, layout)?;
        self.ensure_scratch(ctx, n)?;
        if wide_count > 0 {
            let bytes: &[u8] = bytemuck::cast_slice(&layout.wide);
            let buffer =
                ctx.ensure_storage(&mut self.wide, "aabb_sap wide shapes", bytes.len() as u64)?;
            ctx.write_buffer(buffer, 0, bytes);
        } else {
            // The bind group needs a buffer; nothing reads it.
            ctx.ensure_storage(&mut self.wide, "aabb_sap wide shapes", 4)?;
        }
        let params = Params {
            n,
            capacity: self.capacity,
            dims_y: columns.dims[0],
            dims_z: columns.dims[1],
            origin_y: columns.origin[0],
            origin_z: columns.origin[1],
            inv_cell: 1.0 / columns.cell,
            reach: columns.reach,
            wide_count: wide_count as u32,
            wide_lanes,
        };
        ctx.write_buffer(&self.params, 0, &params.to_bytes()?);
        encoder.clear_buffer(&self.counters, 0, None);
        let s = self.scratch.as_ref().expect("allocated above");
        let grid = |(x, y): (u32, u32)| [x, y, 1];
        let groups = grid(dispatch_2d(n.div_ceil(WG), max_groups));
        let bind = |pipeline: &wgpu::ComputePipeline, buffers: &[(u32, &wgpu::Buffer)]| {
            ctx.bind_buffers("aabb_sap", pipeline, buffers)
        };
        // Most passes read the parameters and the shapes.
        let base = [(0, &self.params), (2, &s.boxes)];
        let per_object = [base.as_slice(), &[(3, &s.keys), (4, &s.values)]].concat();
        let (bounds_pipeline, bounds_buffers) = match shapes {
            SweepShapes::Aabbs { boxes, .. } => (&self.kernels.aabb_bounds, vec![(13, boxes)]),
            SweepShapes::Shapes(SatShapes::Obbs { frames, .. }) => {
                (&self.kernels.obb_bounds, vec![(7, frames)])
            }
            SweepShapes::Shapes(SatShapes::Polygons {
                vertices, offsets, ..
            }) => (
                &self.kernels.polygon_bounds,
                vec![(1, &self.counters), (8, vertices), (9, offsets)],
            ),
        };
        let bounds_group = bind(
            bounds_pipeline,
            &[per_object.as_slice(), &bounds_buffers].concat(),
        );
        let columns_group = bind(&self.kernels.columns, &per_object);
        let ranges_group = bind(
            &self.kernels.column_ranges,
            &[(0, &self.params), (3, &s.keys), (11, &s.ranges)],
        );
        // What the gather writes and the walk reads; the walk and the wide pass append pairs.
        let sorted = [
            base.as_slice(),
            &[(4, &s.values), (5, &s.sorted_yz), (10, &s.sorted_lo_x)],
        ]
        .concat();
        let appends = [(1, &self.counters), (6, &self.pairs)];
        let gather_group = bind(&self.kernels.gather, &sorted);
        let walk_group = bind(
            &self.kernels.walk,
            &[sorted.as_slice(), &appends, &[(11, &s.ranges)]].concat(),
        );
        let wide_buffer = self.wide.as_ref().expect("allocated above");
        let wide_shapes = [base.as_slice(), &[(12, wide_buffer)]].concat();
        let mark_group = bind(&self.kernels.mark_wide, &wide_shapes);
        let wide_group = bind(
            &self.kernels.wide_pairs,
            &[wide_shapes.as_slice(), &appends].concat(),
        );
        let mark_groups = grid(dispatch_2d((wide_count as u32).div_ceil(WG), max_groups));

        self.timer.reset();
        let mut p = TimedPasses {
            ctx,
            encoder,
            timer: &mut self.timer,
        };
        p.run("aabb bounds", bounds_pipeline, &bounds_group, groups);
        if wide_count > 0 {
            p.run(
                "aabb mark wide",
                &self.kernels.mark_wide,
                &mark_group,
                mark_groups,
            );
        }
        let (keys, values) = (&s.keys, &s.values);
        self.sort
            .encode(ctx, p.encoder, keys, values, n, 32, Some(&mut *p.timer))?;
        // Wide shapes take the key `column_count`, after every column.
        if column_count > 1 || wide_count > 0 {
            p.run(
                "aabb columns",
                &self.kernels.columns,
                &columns_group,
                groups,
            );
            // Stable: within a column the (min.x, index) order of the first sort stays.
            let last_key = column_count - 1 + (wide_count > 0) as u64;
            let column_bits = 64 - last_key.leading_zeros();
            let timer = Some(&mut *p.timer);
            self.sort
                .encode(ctx, p.encoder, keys, values, n, column_bits, timer)?;
        } else {
            // One column: every key is column 0.
            p.encoder.clear_buffer(&s.keys, 0, Some(4 * n as u64));
        }
        p.encoder.clear_buffer(&s.ranges, 0, Some(8 * column_count));
        p.run(
            "aabb columns",
            &self.kernels.column_ranges,
            &ranges_group,
            groups,
        );
        p.run("aabb gather", &self.kernels.gather, &gather_group, groups);
        p.run("aabb walk", &self.kernels.walk, &walk_group, groups);
        if wide_count > 0 {
            p.run(
                "aabb wide",
                &self.kernels.wide_pairs,
                &wide_group,
                wide_grid,
            );
        }
        p.timer.resolve(p.encoder);
        Ok(())
    }

    /// The input checks of [`Self::encode`]: buffers large enough for `n` shapes, `n > 0`,
    /// columns in range, wide indices increasing and below `n`, the wide pass within the grid
    /// limit.
    fn validate(
        &self,
        ctx: &GpuContext,
        shapes: SweepShapes<'_>,
        layout: &SweepLayout,
    ) -> Result<Checked> {
        let columns = layout.columns;
        let n = match shapes {
            SweepShapes::Aabbs { boxes, n } => {
                if boxes.size() < AABB_BYTES * n as u64 {
                    return Err(Error::invalid_argument(
                        "boxes",
                        format!(
                            "{n} boxes need {} bytes; the buffer has {}",
                            AABB_BYTES * n as u64,
                            boxes.size()
                        ),
                    ));
                }
                n
            }
            SweepShapes::Shapes(SatShapes::Obbs { frames, n }) => {
                if frames.size() < 64 * n as u64 {
                    return Err(Error::invalid_argument(
                        "frames",
                        format!(
                            "{n} box frames need {} bytes; the buffer has {}",
                            64 * n as u64,
                            frames.size()
                        ),
                    ));
                }
                n
            }
            SweepShapes::Shapes(SatShapes::Polygons { offsets, n, .. }) => {
                if offsets.size() < 4 * (n as u64 + 1) {
                    return Err(Error::invalid_argument(
                        "offsets",
                        format!(
                            "{n} polygons need {} offsets; the buffer holds {}",
                            n as u64 + 1,
                            offsets.size() / 4
                        ),
                    ));
                }
                n
            }
        };
        if n == 0 {
            return Err(Error::EmptyScene);
        }
        let column_count = columns.dims[0] as u64 * columns.dims[1] as u64;
        if columns.dims.contains(&0) || column_count > n as u64 {
            return Err(Error::invalid_argument(
                "columns",
                format!(
                    "sweep columns {:?}: at least 1 and at most {n} (one per shape) in all",
                    columns.dims
                ),
            ));
        }
        let wide_count = layout.wide.len() as u64;
        if !layout.wide.windows(2).all(|w| w[0] < w[1])
            || layout.wide.last().is_some_and(|&i| i >= n)
        {
            return Err(Error::invalid_argument(
                "wide",
                format!("wide shapes must be increasing indices below {n}"),
            ));
        }
        let max_groups = self
            .max_groups_per_dim
            .min(ctx.limits.max_compute_workgroups_per_dimension);
        let (wide_lanes, wide_grid) = wide_grid(n, wide_count, max_groups)?;
        Ok(Checked {
            n,
            column_count,
            wide_count,
            wide_lanes,
            wide_grid,
            max_groups,
        })
    }
}

/// The wide pass's invocations per wide shape and its grid of workgroups (docs/design.md §4.5):
/// `wide_lanes` = ceil(n / WIDE_CHUNK) invocations per wide shape, so that each makes at most
/// WIDE_CHUNK steps; x = the workgroups of one shape's lanes, y (then z, past `max_groups`
/// rows) the wide shapes, `wide_pairs` reading shape `z * rows + y`. No flat invocation index:
/// at n = 2^24 with 65,536 wide shapes there are 2^32 invocations, which a u32 index wraps.
/// [`Error::TooLarge`] when a dimension would exceed `max_groups`.
pub(super) fn wide_grid(n: u32, wide_count: u64, max_groups: u32) -> Result<(u32, [u32; 3])> {
    let max_groups = max_groups.max(1);
    let wide_lanes = n.div_ceil(WIDE_CHUNK);
    let x = wide_lanes.div_ceil(WG).max(1);
    let max = max_groups as u64;
    let rows = match u32::try_from(wide_count) {
        Ok(rows) if x <= max_groups && wide_count <= max * max => rows,
        _ => {
            return Err(Error::too_large(
                Exceeds::Dispatch,
                format!(
                    "{wide_count} wide shapes among {n}: the wide pass needs {x} workgroups per \
                     wide shape and a row of them per wide shape; the adapter allows \
                     {max_groups} per dimension (rows fold into z, so {max_groups} x \
                     {max_groups} wide shapes at most)"
                ),
            ));
        }
    };
    let (y, z) = dispatch_2d(rows, max_groups);
    Ok((wide_lanes, [x, y, z]))
}
