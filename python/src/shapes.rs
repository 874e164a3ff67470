//! Oriented boxes and convex polygons: the separating-axis pipeline, CPU or GPU.

use crate::errors::{to_py, with_row};
use crate::gpu::{self, Cache};
use crate::input::{arg_error, indices, matrix};
use crate::output::pair_array;
use glam::{Quat, Vec2, Vec3};
use numpy::PyArray2;
use pyo3::prelude::*;
use std::sync::LazyLock;
use sweepfan::geom::obb::validate_obbs;
use sweepfan::gpu::Proxy;
use sweepfan::{Backend, GpuBoxPipeline, Obb, Pair, Polygon, canonicalize, cpu};

/// GPU box pipelines kept between calls, per adapter.
static GPU_BOXES: LazyLock<Cache<GpuBoxPipeline>> = LazyLock::new(Cache::new);

fn gpu_pipeline(adapter: &str) -> PyResult<GpuBoxPipeline> {
    GpuBoxPipeline::new(gpu::context(adapter)?, Proxy::Aabb).map_err(to_py)
}

/// Which argument made box `b` invalid (its centre, half-extents or quaternion alone, else
/// the combination: a reach beyond the coordinate range).
fn obb_culprit(b: &Obb) -> String {
    let unit = Vec3::splat(1.0);
    if Obb::new(b.center, unit, Quat::IDENTITY).check(0).is_err() {
        "centers".into()
    } else if Obb::new(Vec3::ZERO, b.half_extents, Quat::IDENTITY)
        .check(0)
        .is_err()
    {
        "half_extents".into()
    } else if Obb::new(Vec3::ZERO, unit, b.rotation).check(0).is_err() {
        "quaternions".into()
    } else {
        "centers and half_extents".into()
    }
}

/// obb_pairs(centers, half_extents, quaternions, *, backend="cpu", adapter=None)
/// --
///
/// Every overlapping (or touching) pair of oriented boxes: a (K, 2) uint32 array, i < j, rows
/// sorted. centers and half_extents are (N, 3) arrays (half-extents >= 0), quaternions an
/// (N, 4) array of unit rotations as (w, x, y, z) (norm within 1e-3 of 1). AABB sweep and
/// prune, then the separating-axis test, as `sweepfan bench --shape obb`.
#[pyfunction]
#[pyo3(signature = (centers, half_extents, quaternions, *, backend = "cpu", adapter = None))]
pub fn obb_pairs<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    half_extents: &Bound<'py, PyAny>,
    quaternions: &Bound<'py, PyAny>,
    backend: &str,
    adapter: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let backend = gpu::backend(backend)?;
    let adapter = gpu::adapter(backend, adapter)?;
    let centers = matrix("centers", centers, ["x", "y", "z"])?;
    let halves = matrix("half_extents", half_extents, ["hx", "hy", "hz"])?;
    let quats = matrix("quaternions", quaternions, ["w", "x", "y", "z"])?;
    if centers.is_empty() {
        return Err(arg_error(
            "centers",
            "empty scene: at least one box is needed",
        ));
    }
    for (arg, len) in [("half_extents", halves.len()), ("quaternions", quats.len())] {
        if len != centers.len() {
            return Err(arg_error(
                arg,
                format!("{len} rows, but centers has {}", centers.len()),
            ));
        }
    }
    let boxes: Vec<Obb> = (0..centers.len())
        .map(|i| {
            let [w, x, y, z] = quats[i];
            Obb::new(
                Vec3::from_array(centers[i]),
                Vec3::from_array(halves[i]),
                Quat::from_xyzw(x, y, z, w),
            )
        })
        .collect();
    validate_obbs(&boxes).map_err(|e| with_row(e, |i| obb_culprit(&boxes[i])))?;
    let pairs = py.detach(|| -> PyResult<Vec<Pair>> {
        let mut pairs = match backend {
            Backend::Cpu => {
                cpu::sat::CpuBoxPipeline::new()
                    .obb_overlaps(&boxes)
                    .map_err(to_py)?
                    .0
            }
            Backend::Gpu => {
                let mut pairs = Vec::new();
                GPU_BOXES.with(
                    adapter.clone(),
                    || gpu_pipeline(&adapter),
                    |p| p.obb_overlaps(&boxes, Some(&mut pairs)).map_err(to_py),
                )?;
                pairs
            }
        };
        canonicalize(&mut pairs);
        Ok(pairs)
    })?;
    Ok(pair_array(py, pairs))
}

/// The polygons of a flat vertex array and `offsets` (polygon i is
/// `vertices[offsets[i]:offsets[i + 1]]`).
fn polygons(vertices: &[[f32; 2]], offsets: &[u32]) -> PyResult<Vec<Polygon>> {
    if offsets.len() < 2 {
        return Err(arg_error(
            "offsets",
            "expected P + 1 offsets for P >= 1 polygons (offsets[0] = 0, offsets[-1] = len(vertices))",
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
    let points: Vec<Vec2> = vertices.iter().map(|v| Vec2::from_array(*v)).collect();
    offsets
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            Polygon::new(i, &points[w[0] as usize..w[1] as usize]).map_err(|e| match e {
                sweepfan::Error::InvalidObject { problem, .. } => arg_error(
                    "vertices",
                    format!("polygon {i} (rows {}..{}): {problem}", w[0], w[1]),
                ),
                other => to_py(other),
            })
        })
        .collect()
}

/// polygon_pairs(vertices, offsets, *, backend="cpu", adapter=None)
/// --
///
/// Every overlapping (or touching) pair of convex polygons (2D): a (K, 2) uint32 array, i < j,
/// rows sorted. vertices is an (M, 2) array; offsets a (P + 1,) integer array, offsets[0] = 0,
/// non-decreasing, offsets[-1] = M: polygon i is vertices[offsets[i]:offsets[i + 1]], at least
/// three vertices, convex, in either winding.
#[pyfunction]
#[pyo3(signature = (vertices, offsets, *, backend = "cpu", adapter = None))]
pub fn polygon_pairs<'py>(
    py: Python<'py>,
    vertices: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    backend: &str,
    adapter: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let backend = gpu::backend(backend)?;
    let adapter = gpu::adapter(backend, adapter)?;
    let vertices = matrix("vertices", vertices, ["x", "y"])?;
    let offsets = indices("offsets", offsets)?;
    let polygons = polygons(&vertices, &offsets)?;
    let pairs = py.detach(|| -> PyResult<Vec<Pair>> {
        let mut pairs = match backend {
            Backend::Cpu => {
                cpu::sat::CpuBoxPipeline::new()
                    .polygon_overlaps(&polygons)
                    .map_err(to_py)?
                    .0
            }
            Backend::Gpu => {
                let mut pairs = Vec::new();
                GPU_BOXES.with(
                    adapter.clone(),
                    || gpu_pipeline(&adapter),
                    |p| {
                        p.polygon_overlaps(&polygons, Some(&mut pairs))
                            .map_err(to_py)
                    },
                )?;
                pairs
            }
        };
        canonicalize(&mut pairs);
        Ok(pairs)
    })?;
    Ok(pair_array(py, pairs))
}
