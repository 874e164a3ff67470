//! NumPy arrays in: every argument read with its name, so that a bad one raises a `ValueError`
//! that names it and its first bad row (docs/design.md §8.4).
//!
//! Arrays are read where they lie: a float32 or float64 array of any strides is read in place,
//! other real types (integers, float16) are converted once by NumPy. Values are copied into the
//! library's `f32` layout while the interpreter is held; the work then runs without it.

use numpy::ndarray::{ArrayViewD, Axis};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// A `ValueError` whose message starts with the argument's name.
pub fn arg_error(arg: &str, problem: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{arg}: {problem}"))
}

/// A real-valued array as NumPy holds it (float32 and float64 without a copy).
pub enum Real<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

/// `numpy.asarray(obj)` for argument `arg`. A `ValueError` or `TypeError` while reading
/// (ragged lists, objects NumPy cannot convert) becomes a `ValueError` naming `arg`, with the
/// original as its cause; anything else (`KeyboardInterrupt`, `MemoryError`) propagates as it
/// is. Masked arrays with a masked entry are refused: `asarray` would drop the mask.
pub(crate) fn as_array<'py>(
    arg: &str,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let ma = numpy.getattr("ma")?;
    if ma.call_method1("isMaskedArray", (obj,))?.is_truthy()?
        && ma
            .call_method1("getmask", (obj,))?
            .call_method0("any")?
            .is_truthy()?
    {
        return Err(arg_error(
            arg,
            "a masked array with masked entries (pass .filled(value) or .compressed() rows)",
        ));
    }
    let array = numpy.call_method1("asarray", (obj,)).map_err(|e| {
        if e.is_instance_of::<PyValueError>(py) || e.is_instance_of::<PyTypeError>(py) {
            let wrapped = arg_error(arg, format!("cannot be read as an array ({e})"));
            wrapped.set_cause(py, Some(e));
            wrapped
        } else {
            e
        }
    })?;
    Ok(array.cast_into::<PyUntypedArray>()?)
}

/// Whether NumPy can hand the array's memory over as it lies: aligned (then every stride is a
/// multiple of the item's alignment; a packed structured field or an offset buffer is not).
fn aligned(array: &Bound<'_, PyUntypedArray>) -> PyResult<bool> {
    array.getattr("flags")?.getattr("aligned")?.extract()
}

/// Reads `obj` (an array, a scalar or nested sequences) as real numbers; anything else
/// (complex, bool, strings, ragged lists) is a `ValueError` naming `arg`. float32 and float64
/// arrays are read in place when aligned; other real types (integers, float16, big-endian
/// floats, object arrays of numbers) are converted once by NumPy to float64.
pub fn real_array<'py>(arg: &str, obj: &Bound<'py, PyAny>) -> PyResult<Real<'py>> {
    let py = obj.py();
    // NumPy reads None as NaN (in an object array too): a missing value, named as such.
    if obj.is_none() {
        return Err(arg_error(
            arg,
            "None is not a number (expected a number or an array of numbers)",
        ));
    }
    let array = as_array(arg, obj)?;
    let dtype = array.dtype();
    if dtype.kind() == b'O' {
        // The size first: the look below and the copy after are as long as the array (a
        // broadcast view of 10^9 rows was scanned for 91 s before its copy was refused).
        copy_fits(arg, array.len(), 8)?;
        // None (NumPy would read NaN) and strings (NumPy would parse "1.5", where a string
        // array is refused) are not numbers: the first is named.
        let shape = array.shape().to_vec();
        let columns: usize = shape
            .get(1..)
            .map_or(1, |s| s.iter().product::<usize>().max(1));
        let flat = array.call_method1("reshape", (-1i64,))?;
        for (k, item) in flat.try_iter()?.enumerate() {
            let item = item?;
            let why = if item.is_none() {
                "None is not a number"
            } else if item.is_instance_of::<PyString>() || item.is_instance_of::<PyBytes>() {
                "a string is not a number (convert it first)"
            } else {
                continue;
            };
            return Err(arg_error(arg, format!("row {}: {why}", k / columns)));
        }
    }
    let f64_type = py.import("numpy")?.getattr("float64")?;
    let in_place = aligned(&array)?;
    if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) && in_place {
        return Ok(Real::F32(array.cast_into::<PyArrayDyn<f32>>()?.readonly()));
    }
    let array = if dtype.is_equiv_to(&numpy::dtype::<f64>(py)) && in_place {
        array.into_any()
    } else if matches!(dtype.kind(), b'f' | b'i' | b'u' | b'O') {
        // The copy must fit before it is made: a broadcast view claims no memory, its copy
        // all of it (and NumPy's allocation, past the memory, aborts or wakes the OOM killer).
        copy_fits(arg, array.len(), 8)?;
        // `astype` makes an aligned copy. Objects: Python numbers (an int beyond float64 is
        // an OverflowError, reported as not convertible).
        array.call_method1("astype", (&f64_type,)).map_err(|e| {
            if e.is_instance_of::<PyValueError>(py)
                || e.is_instance_of::<PyTypeError>(py)
                || e.is_instance_of::<PyOverflowError>(py)
            {
                arg_error(arg, format!("not convertible to real numbers ({e})"))
            } else {
                e
            }
        })?
    } else {
        return Err(arg_error(
            arg,
            format!(
                "dtype {} is not a real number type (float32, float64 or an integer type)",
                dtype.str()?
            ),
        ));
    };
    Ok(Real::F64(array.cast_into::<PyArrayDyn<f64>>()?.readonly()))
}

impl Real<'_> {
    pub fn shape(&self) -> Vec<usize> {
        match self {
            Real::F32(a) => a.shape().to_vec(),
            Real::F64(a) => a.shape().to_vec(),
        }
    }
}

/// The error of argument `arg` having `shape` where `expected` (such as "an (N, 3) array") is
/// wanted, the shape as Python prints it: `(5, 2)`, `(4,)`, `()`.
fn shape_error(arg: &str, expected: &str, shape: &[usize]) -> PyErr {
    let shown = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    arg_error(arg, format!("expected {expected}, got shape {shown}"))
}

/// One value as `f32`: NaN, infinities and float64 values beyond float32's range are errors.
trait ToF32: Copy {
    fn to_f32(self) -> Result<f32, String>;
}

impl ToF32 for f32 {
    fn to_f32(self) -> Result<f32, String> {
        finite(self)
    }
}

impl ToF32 for f64 {
    fn to_f32(self) -> Result<f32, String> {
        if self.is_finite() && (self as f32).is_infinite() {
            return Err(format!("= {self:e} is outside float32's range"));
        }
        if self != 0.0 && self.is_finite() && self as f32 == 0.0 {
            return Err(format!(
                "= {self:e} rounds to 0 in float32 (its smallest non-zero magnitude is 1.4e-45)"
            ));
        }
        finite(self as f32)
    }
}

fn finite(v: f32) -> Result<f32, String> {
    if v.is_nan() {
        Err("is NaN".into())
    } else if v.is_infinite() {
        Err("is infinite".into())
    } else {
        Ok(v)
    }
}

/// Rows of a `(N, K)` view as `[f32; K]`; `columns` names each column for messages.
fn rows_of<T: ToF32, const K: usize>(
    arg: &str,
    view: ArrayViewD<'_, T>,
    columns: [&str; K],
) -> PyResult<Vec<[f32; K]>> {
    let mut out = Vec::with_capacity(view.len() / K.max(1));
    if let Some(flat) = view.as_slice() {
        // C-contiguous: one pass over the memory as it lies.
        for (row, chunk) in flat.chunks_exact(K).enumerate() {
            out.push(one_row(arg, &columns, row, |k| chunk[k])?);
        }
    } else {
        for (row, r) in view.axis_iter(Axis(0)).enumerate() {
            out.push(one_row(arg, &columns, row, |k| r[k])?);
        }
    }
    Ok(out)
}

/// Row `row` as `[f32; K]`, value `k` read by `value(k)`.
#[inline(always)]
fn one_row<T: ToF32, const K: usize>(
    arg: &str,
    columns: &[&str; K],
    row: usize,
    value: impl Fn(usize) -> T,
) -> PyResult<[f32; K]> {
    let mut out = [0.0f32; K];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = value(k)
            .to_f32()
            .map_err(|p| arg_error(arg, format!("row {row}: {} {p}", columns[k])))?;
    }
    Ok(out)
}

/// Reads `obj` as an `(N, K)` array of finite float32 values. `fits(N)` runs once the shape is
/// known, before anything is copied (a memory check: an allocation that fails would abort).
pub fn matrix<const K: usize>(
    arg: &str,
    obj: &Bound<'_, PyAny>,
    columns: [&str; K],
    fits: impl FnOnce(usize) -> PyResult<()>,
) -> PyResult<Vec<[f32; K]>> {
    let real = real_array(arg, obj)?;
    let shape = real.shape();
    // `[]` (shape (0,)): no rows, as an (0, K) array.
    if shape == [0] {
        return Ok(Vec::new());
    }
    if shape.len() != 2 || shape[1] != K {
        return Err(shape_error(arg, &format!("an (N, {K}) array"), &shape));
    }
    fits(shape[0])?;
    match &real {
        Real::F32(a) => rows_of(arg, a.as_array(), columns),
        Real::F64(a) => rows_of(arg, a.as_array(), columns),
    }
}

/// `fits` for [`matrix`]: `n` rows of `bytes_per_row` copied (twice over: the rows and the
/// library's objects built from them) fit the memory this process may use.
pub fn rows_fit(arg: &str, bytes_per_row: u64) -> impl FnOnce(usize) -> PyResult<()> + '_ {
    move |n| {
        crate::interrupt::limits()
            .run(|| {
                sweepfan::broadphase::limits::check_fits(
                    &format!("{n} rows of {arg}"),
                    (n as u64).saturating_mul(2 * bytes_per_row),
                )
            })
            .map_err(crate::errors::to_py)
    }
}

/// A per-object value: one for all, or one per row.
pub enum PerObject {
    All(f32),
    Each(Vec<f32>),
}

impl PerObject {
    pub fn get(&self, i: usize) -> f32 {
        match self {
            PerObject::All(v) => *v,
            PerObject::Each(v) => v[i],
        }
    }
}

/// Reads `obj` as a scalar or an `(n,)` array of finite, non-negative values named `what`
/// (radii: "radius").
pub fn per_object(arg: &str, what: &str, obj: &Bound<'_, PyAny>, n: usize) -> PyResult<PerObject> {
    let real = real_array(arg, obj)?;
    let shape = real.shape();
    let check = |v: f32| -> Result<f32, String> {
        if v < 0.0 {
            Err(format!("{what} is negative ({v})"))
        } else {
            Ok(v)
        }
    };
    if shape.is_empty() {
        let v = match &real {
            Real::F32(a) => a.as_array().iter().next().copied().map(ToF32::to_f32),
            Real::F64(a) => a.as_array().iter().next().copied().map(ToF32::to_f32),
        }
        .expect("a 0-d array holds one value")
        .map_err(|p| arg_error(arg, format!("{what} {p}")))?;
        return check(v).map(PerObject::All).map_err(|p| arg_error(arg, p));
    }
    if shape.len() != 1 || shape[0] != n {
        let expected = format!("a scalar or an ({n},) array (one per row of centers)");
        return Err(shape_error(arg, &expected, &shape));
    }
    let rows: Vec<[f32; 1]> = match &real {
        Real::F32(a) => rows_of(arg, a.as_array().insert_axis(Axis(1)), [what])?,
        Real::F64(a) => rows_of(arg, a.as_array().insert_axis(Axis(1)), [what])?,
    };
    rows.into_iter()
        .enumerate()
        .map(|(row, [v])| check(v).map_err(|p| arg_error(arg, format!("row {row}: {p}"))))
        .collect::<PyResult<Vec<f32>>>()
        .map(PerObject::Each)
}

/// Whether a copy of `values` values of `bytes` each, made from argument `arg`, fits the memory
/// this process may use: checked before the copy, as the arrays' own sizes are.
fn copy_fits(arg: &str, values: usize, bytes: u64) -> PyResult<()> {
    crate::interrupt::limits()
        .run(|| {
            sweepfan::broadphase::limits::check_fits(
                &format!("a copy of the {values} values of {arg}"),
                (values as u64).saturating_mul(bytes),
            )
        })
        .map_err(crate::errors::to_py)
}

/// Reads `obj` as a one-dimensional array of integers (a `uint32`-ranged index array) of at most `most` entries (`why` says what limits them): a longer array (a
/// broadcast view of a few bytes can stand for 2^26 offsets) is refused before it is copied.
pub fn indices_at_most(
    arg: &str,
    obj: &Bound<'_, PyAny>,
    most: usize,
    why: &str,
) -> PyResult<Vec<u32>> {
    let values = integers(arg, obj, u32::MAX as u64, Some((most, why)))?;
    Ok(values.into_iter().map(|v| v as u32).collect())
}

/// Reads `obj` as a one-dimensional array of integers in `0..=u64::MAX` (the caller's ids).
pub fn ids(arg: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    integers(arg, obj, u64::MAX, None)
}

/// A list or tuple of Python ints read as they are (NumPy would make a list mixing values past
/// 2^63 with smaller ones float64, and refuse it as not integers), each in `0..=max`; `None`
/// for anything else (read as an array).
fn python_ints(
    arg: &str,
    obj: &Bound<'_, PyAny>,
    max: u64,
    most: Option<(usize, &str)>,
) -> PyResult<Option<Vec<u64>>> {
    use pyo3::types::{PyInt, PyList, PyTuple};
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    refuse_booleans(arg, &items)?;
    if items.is_empty() || !items.iter().all(|v| v.is_instance_of::<PyInt>()) {
        return Ok(None);
    }
    if let Some((most, why)) = most
        && items.len() > most
    {
        return Err(arg_error(
            arg,
            format!("{} entries, at most {most} ({why})", items.len()),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(row, v)| match v.extract::<u64>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(arg_error(
                arg,
                format!("row {row}: {} is outside 0..={max}", v.str()?),
            )),
        })
        .collect::<PyResult<Vec<u64>>>()
        .map(Some)
}

/// The error naming `arg` and the row of the first boolean among `items` (NumPy would read a
/// list's True as 1: a boolean is no integer id).
pub fn refuse_booleans(arg: &str, items: &[Bound<'_, PyAny>]) -> PyResult<()> {
    match items.iter().position(is_boolean) {
        Some(row) => Err(arg_error(
            arg,
            format!("row {row}: a boolean, not an integer"),
        )),
        None => Ok(()),
    }
}

/// Whether `v` is a boolean: Python's, or a NumPy scalar of kind `b` (`np.True_`).
fn is_boolean(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<pyo3::types::PyBool>()
        || v.getattr("dtype")
            .and_then(|d| d.getattr("kind"))
            .and_then(|k| k.extract::<String>())
            .is_ok_and(|k| k == "b")
}

/// Reads `obj` as a one-dimensional array of integers, each in `0..=max`.
fn integers(
    arg: &str,
    obj: &Bound<'_, PyAny>,
    max: u64,
    most: Option<(usize, &str)>,
) -> PyResult<Vec<u64>> {
    if let Some(values) = python_ints(arg, obj, max, most)? {
        return Ok(values);
    }
    let numpy = obj.py().import("numpy")?;
    let array = as_array(arg, obj)?;
    if array.ndim() != 1 {
        return Err(shape_error(arg, "a one-dimensional array", array.shape()));
    }
    if let Some((most, why)) = most
        && array.len() > most
    {
        return Err(arg_error(
            arg,
            format!("{} entries, at most {most} ({why})", array.len()),
        ));
    }
    if array.len() == 0 {
        return Ok(Vec::new());
    }
    let dtype = array.dtype();
    let unsigned = match dtype.kind() {
        b'i' => false,
        b'u' => true,
        _ => {
            return Err(arg_error(
                arg,
                format!("dtype {} is not an integer type", dtype.str()?),
            ));
        }
    };
    // Widened to 64 bits by NumPy, then read: both copies must fit before either is made (a
    // broadcast view of a few bytes can stand for gigabytes of values).
    copy_fits(arg, array.len(), 8 + 8)?;
    let out_of_range = |row: usize, v: &dyn std::fmt::Display| {
        arg_error(arg, format!("row {row}: {v} is outside 0..={max}"))
    };
    if unsigned {
        let wide = array.call_method1("astype", (numpy.getattr("uint64")?,))?;
        let wide = wide.cast_into::<PyArrayDyn<u64>>()?.readonly();
        return wide
            .as_array()
            .iter()
            .enumerate()
            .map(|(row, &v)| {
                if v <= max {
                    Ok(v)
                } else {
                    Err(out_of_range(row, &v))
                }
            })
            .collect();
    }
    let wide = array.call_method1("astype", (numpy.getattr("int64")?,))?;
    let wide = wide.cast_into::<PyArrayDyn<i64>>()?.readonly();
    wide.as_array()
        .iter()
        .enumerate()
        .map(|(row, &v)| match u64::try_from(v) {
            Ok(u) if u <= max => Ok(u),
            _ => Err(out_of_range(row, &v)),
        })
        .collect()
}

/// Reads `obj` as a `(K, 2)` integer array of pairs of positions among `objects` shapes: every
/// entry in `0..objects`, no shape paired with itself; a bad row is named.
pub fn pair_rows(arg: &str, obj: &Bound<'_, PyAny>, objects: usize) -> PyResult<Vec<[u32; 2]>> {
    let array = as_array(arg, obj)?;
    let shape = array.shape().to_vec();
    // `[]` (shape (0,), any dtype): no pairs, as a (0, 2) array.
    if shape == [0] {
        return Ok(Vec::new());
    }
    if shape.len() != 2 || shape[1] != 2 {
        return Err(shape_error(arg, "a (K, 2) array of pairs", &shape));
    }
    // No rows: no pairs, whatever the dtype (`np.zeros((0, 2))` is float64).
    if shape[0] == 0 {
        return Ok(Vec::new());
    }
    let unsigned = match array.dtype().kind() {
        b'u' => true,
        b'i' => false,
        _ => {
            return Err(arg_error(
                arg,
                format!("dtype {} is not an integer type", array.dtype().str()?),
            ));
        }
    };
    // Each value: numpy's flat copy and widened copy (8 B each), the widened values read out
    // (8 B), the pair kept (4 B).
    copy_fits(arg, 2 * shape[0], 8 + 8 + 8 + 4)?;
    let numpy = obj.py().import("numpy")?;
    let flat = array.call_method1("reshape", (-1i64,))?;
    // Negative entries as `objects` (outside the range) once widened.
    let values: Vec<u64> = if unsigned {
        let wide = flat.call_method1("astype", (numpy.getattr("uint64")?,))?;
        let wide = wide.cast_into::<PyArrayDyn<u64>>()?.readonly();
        // One copy of the contiguous copy `astype` made (a walk by index took 0.16 s of 4.7M
        // pairs, holding the GIL).
        match wide.as_slice() {
            Ok(slice) => slice.to_vec(),
            Err(_) => wide.as_array().iter().copied().collect(),
        }
    } else {
        let wide = flat.call_method1("astype", (numpy.getattr("int64")?,))?;
        let wide = wide.cast_into::<PyArrayDyn<i64>>()?.readonly();
        let shown: Vec<u64> = wide
            .as_array()
            .iter()
            .map(|&v| u64::try_from(v).unwrap_or(u64::MAX))
            .collect();
        if let Some(k) = wide.as_array().iter().position(|&v| v < 0) {
            return Err(arg_error(
                arg,
                format!("row {}: {} is negative", k / 2, wide.as_array()[k]),
            ));
        }
        shown
    };
    values
        .chunks(2)
        .enumerate()
        .map(|(row, p)| {
            if let Some(v) = p.iter().find(|&&v| v >= objects as u64) {
                return Err(arg_error(
                    arg,
                    match objects.checked_sub(1) {
                        Some(last) => format!(
                            "row {row}: {v} is not one of the {objects} shapes (0 to {last})"
                        ),
                        None => format!("row {row}: {v} names a shape, but there are none"),
                    },
                ));
            }
            if p[0] == p[1] {
                return Err(arg_error(
                    arg,
                    format!("row {row}: shape {} paired with itself", p[0]),
                ));
            }
            Ok([p[0] as u32, p[1] as u32])
        })
        .collect()
}
