//! Contacts of touching pairs (docs/design.md §4.8): `sphere_contacts`, `obb_contacts`,
//! `polygon_contacts`, on the CPU or the GPU, as arrays beside the pairs.

use crate::errors::to_py;
use crate::gpu::{Cache, shape_function};
use crate::input::pair_rows;
use crate::interrupt::{Weighed, contacts_work, interruptible};
use crate::output::pair_array;
use numpy::IntoPyArray;
use numpy::ndarray::{Array1, Array2, Array3};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, LazyLock};
use sweepfan::cpu::CpuNarrowPhase;
use sweepfan::gpu::GpuContacts;
use sweepfan::{Contact, GpuContext, NarrowPhase, Pair, Shapes, Sphere, canonicalize, cpu};

/// The GPU contact kernels kept between calls, per adapter, with their context and the grid
/// that finds the spheres' pairs (made on first use).
pub static GPU_CONTACTS: LazyLock<Cache<Kernels>> = LazyLock::new(Cache::new);

pub struct Kernels {
    ctx: Arc<GpuContext>,
    contacts: GpuContacts,
    grid: Option<sweepfan::GpuBroadPhase>,
}

/// Runs `f` on the adapter's kept contact kernels (made on first use).
fn on_kernels(
    adapter: &str,
    f: impl FnOnce(&GpuContext, &mut GpuContacts) -> sweepfan::Result<()>,
) -> PyResult<()> {
    on_all_kernels(adapter, |k| f(&k.ctx, &mut k.contacts))
}

fn on_all_kernels(
    adapter: &str,
    f: impl FnOnce(&mut Kernels) -> sweepfan::Result<()>,
) -> PyResult<()> {
    GPU_CONTACTS.with(
        adapter.to_string(),
        Some(adapter),
        || {
            let ctx = crate::gpu::context(adapter)?;
            let contacts = GpuContacts::new(&ctx).map_err(to_py)?;
            Ok(Kernels {
                ctx,
                contacts,
                grid: None,
            })
        },
        f,
    )
}

/// The spheres' touching pairs (sorted) and contacts in one GPU submission: the adapter's kept
/// grid, then the contact kernel over its pair list.
fn gpu_sphere_frame(adapter: &str, spheres: &[Sphere]) -> PyResult<(Vec<Pair>, Vec<Contact>)> {
    let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
    on_all_kernels(adapter, |k| {
        let grid = match &mut k.grid {
            Some(g) => g,
            slot => slot.insert(sweepfan::GpuBroadPhase::new(
                k.ctx.clone(),
                sweepfan::Method::Grid,
            )?),
        };
        k.contacts
            .sphere_frame(grid, spheres, &mut pairs, &mut contacts)
            .map(|_| ())
    })?;
    Ok((pairs, contacts))
}

/// The pairs and contacts of every touching pair of `shapes`, sorted, in one GPU submission on
/// the adapter's kept box pipeline (`frame`: its boxes' or its polygons' entry point).
fn gpu_frame<S>(
    adapter: &str,
    shapes: &[S],
    frame: FrameContacts<S>,
) -> PyResult<(Vec<Pair>, Vec<Contact>)> {
    let (mut pairs, mut contacts) = (Vec::new(), Vec::new());
    if !shapes.is_empty() {
        crate::shapes::GPU_BOXES.with(
            adapter.to_string(),
            Some(adapter),
            || crate::shapes::gpu_pipeline(adapter),
            |p| frame(p, shapes, &mut pairs, &mut contacts),
        )?;
    }
    Ok((pairs, contacts))
}

type FrameContacts<S> = fn(
    &mut sweepfan::GpuBoxPipeline,
    &[S],
    &mut Vec<Pair>,
    &mut Vec<Contact>,
) -> sweepfan::Result<sweepfan::Stats>;

/// The pairs to take contacts of: the caller's (`pairs`, checked against the shapes), or every
/// touching pair (`find`, sorted).
fn pairs_of<S: Weighed>(
    py: Python<'_>,
    pairs: Option<&Bound<'_, PyAny>>,
    shapes: &[S],
    find: impl FnOnce() -> sweepfan::Result<Vec<Pair>> + Send,
) -> PyResult<Vec<Pair>> {
    match pairs {
        Some(p) => pair_rows("pairs", p, shapes.len()),
        None => interruptible(py, S::all_pairs_work(shapes), || {
            let mut found = find().map_err(to_py)?;
            canonicalize(&mut found);
            Ok(found)
        }),
    }
}

/// The contacts of boxes or polygons: with the GPU and no pairs given, its whole frame (the SAT
/// pipeline to the contacts, one submission); else the given pairs or the SAT's (`find`,
/// sorted), then [`contacts_of`].
fn sat_contacts<'py, S: Sync + Weighed>(
    py: Python<'py>,
    (shapes, pairs): (&[S], Option<&Bound<'py, PyAny>>),
    (backend, adapter): (sweepfan::Backend, &str),
    (frame, find): (
        FrameContacts<S>,
        impl FnOnce(&[S]) -> sweepfan::Result<Vec<Pair>> + Send,
    ),
    (dims, most_points): (usize, usize),
) -> PyResult<Bound<'py, PyDict>>
where
    for<'a> Shapes<'a>: From<&'a [S]>,
{
    if let (sweepfan::Backend::Gpu, None) = (backend, pairs) {
        let (pairs, columns) = interruptible(py, S::all_pairs_work(shapes), || {
            let (pairs, contacts) = gpu_frame(adapter, shapes, frame)?;
            Ok((pairs, Columns::of(&contacts, dims, most_points)?))
        })?;
        return contact_dict(py, pairs, columns);
    }
    let pairs = pairs_of(py, pairs, shapes, || {
        if shapes.is_empty() {
            return Ok(Vec::new());
        }
        find(shapes)
    })?;
    contacts_of(py, (shapes, pairs), (backend, adapter), (dims, most_points))
}

/// The contacts of `pairs` of `shapes` on `backend` (the CPU's narrow phase or the GPU's
/// contact kernel), as [`contact_dict`] gives them.
fn contacts_of<'py, S: Sync + Weighed>(
    py: Python<'py>,
    (shapes, pairs): (&[S], Vec<Pair>),
    (backend, adapter): (sweepfan::Backend, &str),
    (dims, most_points): (usize, usize),
) -> PyResult<Bound<'py, PyDict>>
where
    for<'a> Shapes<'a>: From<&'a [S]>,
{
    let work = contacts_work(shapes, &pairs);
    let columns = interruptible(py, work, || {
        let mut out = Vec::new();
        match backend {
            sweepfan::Backend::Cpu => CpuNarrowPhase::default()
                .contacts(Shapes::from(shapes), &pairs, &mut out)
                .map_err(to_py)?,
            sweepfan::Backend::Gpu => on_kernels(adapter, |ctx, k| {
                k.contacts(ctx, Shapes::from(shapes), &pairs, &mut out)
            })?,
        }
        Columns::of(&out, dims, most_points)
    })?;
    contact_dict(py, pairs, columns)
}

/// The contacts as the result's arrays: per contact a normal, its points and their depths, a
/// depth and a count. Filled in parallel where the work runs (off the GIL, under a Ctrl-C's
/// watch: 4.7M contacts took 1.4 s on the GIL, serially), each allocated once at its size within
/// the budget (a collect grew them by doubling: under a memory limit the process aborted).
struct Columns {
    normals: Vec<f32>,
    depths: Vec<f32>,
    counts: Vec<u32>,
    points: Vec<f32>,
    point_depths: Vec<f32>,
    /// D: coordinates a normal and a point.
    dims: usize,
    /// P: points a contact.
    most_points: usize,
}

impl Columns {
    fn of(contacts: &[Contact], dims: usize, most_points: usize) -> PyResult<Self> {
        use rayon::prelude::*;
        let k = contacts.len();
        let bytes = 4 * (dims + most_points * (dims + 1) + 2) as u64;
        let what = format!("the contact arrays of {k} pairs");
        sweepfan::broadphase::limits::check_fits(&what, (k as u64).saturating_mul(bytes))
            .map_err(to_py)?;
        // A look for Ctrl-C before each (a column of 4.7M contacts' points takes about 0.1 s).
        let column = |len: usize, value: &(dyn Fn(usize) -> f32 + Sync)| -> PyResult<Vec<f32>> {
            crate::interrupt::stop_if_interrupted()?;
            let mut v = Vec::new();
            sweepfan::broadphase::limits::reserve(&mut v, len, &what).map_err(to_py)?;
            v.par_extend((0..len).into_par_iter().map(value));
            Ok(v)
        };
        let per = most_points * dims;
        let normals = column(k * dims, &|x| contacts[x / dims].normal[x % dims])?;
        let depths = column(k, &|x| contacts[x].depth)?;
        let points = column(k * per, &|x| {
            let point = &contacts[x / per].points[x % per / dims];
            point[x % dims]
        })?;
        let point_depths = column(k * most_points, &|x| {
            contacts[x / most_points].depths[x % most_points]
        })?;
        let mut counts = Vec::new();
        sweepfan::broadphase::limits::reserve(&mut counts, k, &what).map_err(to_py)?;
        counts.par_extend(contacts.par_iter().map(|c| c.count));
        Ok(Self {
            normals,
            depths,
            counts,
            points,
            point_depths,
            dims,
            most_points,
        })
    }
}

/// The result dict: pairs (K, 2) uint32, normals (K, D), depths (K,), counts (K,) uint32,
/// points (K, P, D), point_depths (K, P), float32; D = 3, P = 4 (polygons: D = P = 2). The
/// arrays take the columns' memory (no copy).
fn contact_dict(py: Python<'_>, pairs: Vec<Pair>, c: Columns) -> PyResult<Bound<'_, PyDict>> {
    let (k, dims, most_points) = (c.depths.len(), c.dims, c.most_points);
    let d = PyDict::new(py);
    d.set_item("pairs", pair_array(py, pairs))?;
    let shape =
        |e: numpy::ndarray::ShapeError| pyo3::exceptions::PyRuntimeError::new_err(e.to_string());
    d.set_item(
        "normals",
        Array2::from_shape_vec((k, dims), c.normals)
            .map_err(shape)?
            .into_pyarray(py),
    )?;
    d.set_item("depths", Array1::from_vec(c.depths).into_pyarray(py))?;
    d.set_item("counts", Array1::from_vec(c.counts).into_pyarray(py))?;
    d.set_item(
        "points",
        Array3::from_shape_vec((k, most_points, dims), c.points)
            .map_err(shape)?
            .into_pyarray(py),
    )?;
    d.set_item(
        "point_depths",
        Array2::from_shape_vec((k, most_points), c.point_depths)
            .map_err(shape)?
            .into_pyarray(py),
    )?;
    Ok(d)
}

shape_function! {
    /// Contacts of touching spheres: a dict of arrays, one row per pair: "pairs" (K, 2)
    /// uint32; "normals" (K, 3), unit, from the pair's first sphere towards its second; "depths"
    /// (K,), the penetration (>= 0; 0 when touching exactly); "counts" (K,) uint32, points in use;
    /// "points" (K, 4, 3), midway between the surfaces (the first count of each row; spheres: one);
    /// "point_depths" (K, 4). pairs: a (K, 2) integer array of the pairs to take (in that order;
    /// a pair that does not touch gets count 0 and a negative depth, minus its gap), or None: every
    /// touching pair, sorted; with the GPU in one submission from the spheres to the contacts.
    /// centers and radii as sphere_pairs takes them. backend: "cpu" (the default; depths in float64 before rounding) or "gpu" (float32,
    /// within 2^-14 of the pair's extent of the CPU's; whether a pair touches is exact on both:
    /// the pairs within that of touching take the CPU's contact), "auto" as sphere_pairs takes it;
    /// adapter too.
    fn sphere_contacts(py, centers, radii; pairs) -> PyDict, backend = "cpu"
    |backend, adapter| {
        let spheres = crate::spheres::spheres(centers, radii)?;
        crate::spheres::check_spheres(&spheres)?;
        if let (sweepfan::Backend::Gpu, None) = (backend, pairs) {
            let (pairs, columns) = interruptible(py, Sphere::all_pairs_work(&spheres), || {
                let (pairs, contacts) = gpu_sphere_frame(&adapter, &spheres)?;
                Ok((pairs, Columns::of(&contacts, 3, 4)?))
            })?;
            return contact_dict(py, pairs, columns);
        }
        let pairs = pairs_of(py, pairs, &spheres, || {
            let mut found = Vec::new();
            cpu::broad_phase(sweepfan::Method::Grid).find_pairs(&spheres, Some(&mut found))?;
            Ok(found)
        })?;
        contacts_of(py, (&spheres, pairs), (backend, &adapter), (3, 4))
    }
}

shape_function! {
    /// Contacts of touching oriented boxes, as sphere_contacts gives them (up to four points: a
    /// face contact clipped and reduced, an edge-edge contact one point). centers, half_extents and
    /// quaternions as obb_pairs takes them; pairs as sphere_contacts takes them (None: every
    /// touching pair, sorted, with the GPU in one submission from the boxes to the contacts).
    /// backend: "cpu" (the default) or "gpu" (within the tolerance of the CPU's: depths within
    /// 2^-14 of the pair's extent, normals equal but where two axes tie), "auto" as obb_pairs takes
    /// it; adapter too.
    fn obb_contacts(py, centers, half_extents, quaternions; pairs) -> PyDict, backend = "cpu"
    |backend, adapter| {
        let boxes = crate::shapes::boxes_of(centers, half_extents, quaternions)?;
        let boxes = crate::shapes::checked_boxes(boxes)?;
        let frame = sweepfan::GpuBoxPipeline::obb_contacts;
        let find = |b: &[sweepfan::Obb]| cpu::sat::obb_overlaps(b).map(|r| r.0);
        let target = (backend, adapter.as_str());
        sat_contacts(py, (&boxes, pairs), target, (frame, find), (3, 4))
    }
}

shape_function! {
    /// Contacts of touching convex polygons (2D), as sphere_contacts gives them with D = 2:
    /// "normals" (K, 2), "points" (K, 2, 2), "point_depths" (K, 2) (up to two points). vertices
    /// and offsets as polygon_pairs takes them; pairs as sphere_contacts takes them (None:
    /// polygon_pairs' pairs, sorted; with the GPU in one submission from the polygons to the
    /// contacts); backend and adapter as obb_contacts takes them.
    fn polygon_contacts(py, vertices, offsets; pairs) -> PyDict, backend = "cpu"
    |backend, adapter| {
        let (vertices, offsets) = crate::shapes::polygon_arrays(vertices, offsets)?;
        let polygons = crate::shapes::polygons(&vertices, &offsets)?;
        let frame = sweepfan::GpuBoxPipeline::polygon_contacts;
        let find = |p: &[sweepfan::Polygon]| cpu::sat::polygon_overlaps(p).map(|r| r.0);
        let target = (backend, adapter.as_str());
        sat_contacts(
            py,
            (&polygons, pairs),
            target,
            (frame, find),
            (2, 2),
        )
    }
}
