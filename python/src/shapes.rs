//! Oriented boxes and convex polygons: the separating-axis pipeline, CPU or GPU.

use crate::errors::{fails_with, to_py, with_row};
use crate::gpu::{self, Cache, shape_function};
use crate::input::{arg_error, indices_at_most, matrix, rows_fit};
use crate::interrupt::{BOX_PAIR, all_pairs, interruptible};
use crate::output::pair_array;
use glam::{Quat, Vec2, Vec3};
use numpy::PyArray2;
use pyo3::prelude::*;
use std::sync::LazyLock;
use sweepfan::Validate;
use sweepfan::geom::obb::validate_obbs;
use sweepfan::gpu::Proxy;
use sweepfan::{Backend, GpuBoxPipeline, Obb, Pair, Polygon, ShapeOverlaps, canonicalize, cpu};

/// GPU box pipelines kept between calls, per adapter.
pub static GPU_BOXES: LazyLock<Cache<GpuBoxPipeline>> = LazyLock::new(Cache::new);

pub(crate) fn gpu_pipeline(adapter: &str) -> PyResult<GpuBoxPipeline> {
    GpuBoxPipeline::new(gpu::context(adapter)?, Proxy::Aabb).map_err(to_py)
}

/// The SAT pipelines' entry points for one kind of shape: on a CPU pipeline, and on a GPU one
/// (storing into `out`).
type OnCpu<S> =
    fn(&mut cpu::sat::CpuBoxPipeline, &[S], &mut Vec<Pair>) -> sweepfan::Result<sweepfan::Stats>;
type OnGpu<S> = fn(&mut GpuBoxPipeline, &[S], &mut Vec<Pair>) -> sweepfan::Result<sweepfan::Stats>;

/// The overlapping pairs of the shapes that `shapes` makes (work Ctrl-C can interrupt, at most
/// `work`: [`crate::interrupt::Work`]), by the SAT pipeline of `backend`, as a canonical (K, 2) array: a fresh CPU
/// pipeline, or the adapter's kept GPU one. No shapes give no pairs.
fn sat_pair_array<'py, S>(
    py: Python<'py>,
    backend: Backend,
    adapter: &str,
    work: crate::interrupt::Work,
    shapes: impl FnOnce() -> PyResult<Vec<S>> + Send,
    (on_cpu, on_gpu): (OnCpu<S>, OnGpu<S>),
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let pairs = interruptible(py, work, || -> PyResult<Vec<Pair>> {
        let shapes = shapes()?;
        if shapes.is_empty() {
            return Ok(Vec::new());
        }
        let mut pairs = match backend {
            Backend::Cpu => {
                let mut pairs = Vec::new();
                on_cpu(&mut cpu::sat::CpuBoxPipeline::new(), &shapes, &mut pairs).map_err(to_py)?;
                pairs
            }
            Backend::Gpu => {
                let mut pairs = Vec::new();
                GPU_BOXES.with(
                    adapter.to_string(),
                    Some(adapter),
                    || gpu_pipeline(adapter),
                    |p| on_gpu(p, &shapes, &mut pairs),
                )?;
                pairs
            }
        };
        canonicalize(&mut pairs);
        Ok(pairs)
    })?;
    Ok(pair_array(py, pairs))
}

/// Which argument made box `b` fail with `problem`: its centre, half-extents or quaternion
/// where that part alone fails the same way, else the combination (a reach beyond the
/// coordinate range).
fn obb_culprit(b: &Obb, problem: &str) -> String {
    let unit = Vec3::splat(1.0);
    if fails_with(Obb::new(b.center, unit, Quat::IDENTITY).check(0), problem) {
        "centers".into()
    } else if fails_with(
        Obb::new(Vec3::ZERO, b.half_extents, Quat::IDENTITY).check(0),
        problem,
    ) {
        "half_extents".into()
    } else if fails_with(Obb::new(Vec3::ZERO, unit, b.rotation).check(0), problem) {
        "quaternions".into()
    } else {
        "centers and half_extents".into()
    }
}

/// The boxes of `centers`, `half_extents` and `quaternions` (w, x, y, z) as `obb_pairs` reads
/// them, not yet validated ([`checked_boxes`]).
pub fn boxes_of(
    centers: &Bound<'_, PyAny>,
    half_extents: &Bound<'_, PyAny>,
    quaternions: &Bound<'_, PyAny>,
) -> PyResult<Vec<Obb>> {
    let centers = matrix("centers", centers, ["x", "y", "z"], rows_fit("centers", 12))?;
    let halves = matrix(
        "half_extents",
        half_extents,
        ["hx", "hy", "hz"],
        rows_fit("half_extents", 12),
    )?;
    let quats = matrix(
        "quaternions",
        quaternions,
        ["w", "x", "y", "z"],
        rows_fit("quaternions", 16),
    )?;
    for (arg, len) in [("half_extents", halves.len()), ("quaternions", quats.len())] {
        if len != centers.len() {
            return Err(arg_error(
                arg,
                format!("{len} rows, but centers has {}", centers.len()),
            ));
        }
    }
    Ok((0..centers.len())
        .map(|i| {
            let [w, x, y, z] = quats[i];
            Obb::new(
                Vec3::from_array(centers[i]),
                Vec3::from_array(halves[i]),
                Quat::from_xyzw(x, y, z, w),
            )
        })
        .collect())
}

/// `boxes` validated, a bad one named by its row and the argument at fault.
pub fn checked_boxes(boxes: Vec<Obb>) -> PyResult<Vec<Obb>> {
    validate_obbs(&boxes).map_err(|e| with_row(e, |i, p| obb_culprit(&boxes[i], p)))?;
    Ok(boxes)
}

shape_function! {
    /// Every overlapping (or touching) pair of oriented boxes: a (K, 2) uint32 array, i < j, rows
    /// sorted. centers and half_extents are (N, 3) arrays (half-extents >= 0), quaternions an
    /// (N, 4) array of unit rotations as (w, x, y, z) (norm within 1e-3 of 1). AABB sweep and
    /// prune, then the separating-axis test, as `sweepfan bench --shape obb`. backend: "auto" (the
    /// default: a hardware GPU when there is one, else the CPU), "cpu" or "gpu"; adapter as
    /// sphere_pairs takes it. No boxes give a (0, 2) array.
    fn obb_pairs(py, centers, half_extents, quaternions) -> PyArray2<u32>, backend = "auto"
    |backend, adapter| {
        let boxes = boxes_of(centers, half_extents, quaternions)?;
        if boxes.is_empty() {
            return Ok(pair_array(py, Vec::new()));
        }
        let work = all_pairs(boxes.len()).saturating_mul(BOX_PAIR);
        let shapes = move || checked_boxes(boxes);
        let on_cpu: OnCpu<Obb> = |cpu, s, out| cpu.obb_overlaps(s, Some(out));
        let on_gpu: OnGpu<Obb> = |gpu, s, out| gpu.obb_overlaps(s, Some(out));
        sat_pair_array(py, backend, &adapter, work, shapes, (on_cpu, on_gpu))
    }
}

/// The polygons of a flat vertex array and `offsets` (polygon i is
/// `vertices[offsets[i]:offsets[i + 1]]`).
pub fn polygons(vertices: &[[f32; 2]], offsets: &[u32]) -> PyResult<Vec<Polygon>> {
    // No polygons: `[0]` (P + 1 offsets for P = 0), or no offsets at all, with no vertices.
    if vertices.is_empty() && offsets.iter().all(|&o| o == 0) && offsets.len() <= 1 {
        return Ok(Vec::new());
    }
    if offsets.len() < 2 {
        return Err(arg_error(
            "offsets",
            "expected P + 1 offsets for P polygons (offsets[0] = 0, offsets[-1] = len(vertices))",
        ));
    }
    if offsets[0] != 0 {
        return Err(arg_error(
            "offsets",
            format!("row 0: {} is not 0", offsets[0]),
        ));
    }
    let last = *offsets.last().expect("two or more offsets");
    if last as usize != vertices.len() {
        return Err(arg_error(
            "offsets",
            format!(
                "row {}: {last} is not len(vertices) = {}",
                offsets.len() - 1,
                vertices.len()
            ),
        ));
    }
    if let Some(row) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(arg_error(
            "offsets",
            format!(
                "row {}: {} is below the previous offset {} (offsets must not decrease)",
                row + 1,
                offsets[row + 1],
                offsets[row]
            ),
        ));
    }
    if let Some(row) = offsets.windows(2).position(|w| w[1] - w[0] < 3) {
        return Err(arg_error(
            "offsets",
            format!(
                "row {}: polygon {row} would have {} vertices (rows {}..{}); at least 3 needed",
                row + 1,
                offsets[row + 1] - offsets[row],
                offsets[row],
                offsets[row + 1]
            ),
        ));
    }
    let points: Vec<Vec2> = vertices.iter().map(|v| Vec2::from_array(*v)).collect();
    offsets
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            Polygon::new(&points[w[0] as usize..w[1] as usize]).map_err(|fault| {
                arg_error(
                    "vertices",
                    format!("polygon {i} (rows {}..{}): {fault}", w[0], w[1]),
                )
            })
        })
        .collect()
}

/// `vertices` and `offsets` as polygon_pairs reads them, before the polygons are made
/// ([`polygons`]).
pub fn polygon_arrays(
    vertices: &Bound<'_, PyAny>,
    offsets: &Bound<'_, PyAny>,
) -> PyResult<(Vec<[f32; 2]>, Vec<u32>)> {
    let vertices = matrix("vertices", vertices, ["x", "y"], rows_fit("vertices", 8))?;
    // P + 1 offsets for P polygons, each of its own vertices: more than one offset a vertex
    // plus one (a broadcast view of 2^26 offsets) is refused by its count, before any copy;
    // fewer are checked row by row in `polygons`.
    let offsets = indices_at_most(
        "offsets",
        offsets,
        vertices.len() + 1,
        "one more than the polygons, which are fewer than the vertices",
    )?;
    Ok((vertices, offsets))
}

shape_function! {
    /// Every overlapping (or touching) pair of convex polygons (2D): a (K, 2) uint32 array, i < j,
    /// rows sorted. vertices is an (M, 2) array; offsets a (P + 1,) integer array, offsets[0] = 0,
    /// non-decreasing, offsets[-1] = M: polygon i is vertices[offsets[i]:offsets[i + 1]], at least
    /// three vertices, convex, in either winding (a vertex where the boundary goes straight on,
    /// or bends inward by rounding alone, is dropped: a polygon is the convex hull of its vertices;
    /// no polygons: offsets [0] or empty, no vertices, give a (0, 2) array). backend: "auto" (the default: a hardware GPU when there is one, else
    /// the CPU), "cpu" or "gpu"; adapter as sphere_pairs takes it.
    fn polygon_pairs(py, vertices, offsets) -> PyArray2<u32>, backend = "auto"
    |backend, adapter| {
        let (vertices, offsets) = polygon_arrays(vertices, offsets)?;
        let on_cpu: OnCpu<Polygon> = |cpu, s, out| cpu.polygon_overlaps(s, Some(out));
        let on_gpu: OnGpu<Polygon> = |gpu, s, out| gpu.polygon_overlaps(s, Some(out));
        let shapes = || polygons(&vertices, &offsets);
        let work = all_pairs(vertices.len());
        sat_pair_array(py, backend, &adapter, work, shapes, (on_cpu, on_gpu))
    }
}
