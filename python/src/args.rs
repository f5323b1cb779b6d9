//! The Python API's arguments, converted by hand so that every error names its argument.
//!
//! pyo3's own conversions say `'int' object is not an instance of 'str'`, or raise
//! `OverflowError` for a negative count, without the argument's name in the message. Each
//! function here takes the name the API gives the argument (`python/gpu16/__init__.py`) and
//! raises `TypeError` (`backend: expected str, got int`) or `ValueError` (`cycles: must be
//! >= 0, got -1`) whose message starts with it. A `bool` is not taken for an int, though
//! Python counts it as one: `max_cycles=True` is a mistake, not 1.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyString};
use std::borrow::Cow;
use std::path::PathBuf;

/// The name of `obj`'s type, as `type(obj).__name__` gives it.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string())
}

/// The `TypeError` of argument `name`, which wants `expected` and was given `obj`.
pub(crate) fn wrong_type(name: &str, expected: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{name}: expected {expected}, got {}",
        type_name(obj)
    ))
}

/// Argument `name` as a `str`.
pub(crate) fn string(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<PyBackedStr> {
    text(obj, name, "str")
}

/// Argument `name` as a `str`, or `None`.
pub(crate) fn optional_string(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<PyBackedStr>> {
    if obj.is_none() {
        return Ok(None);
    }
    text(obj, name, "str or None").map(Some)
}

/// Argument `name` as a `str`, the error saying it wants `expected`. A `str` that is not
/// UTF-8 (a lone surrogate) is a `ValueError`.
fn text(obj: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyResult<PyBackedStr> {
    if !obj.is_instance_of::<PyString>() {
        return Err(wrong_type(name, expected, obj));
    }
    obj.extract::<PyBackedStr>()
        .map_err(|e| PyValueError::new_err(format!("{name}: {}", e.value(obj.py()))))
}

/// Argument `name` as a `bool` (`True` or `False` only).
pub(crate) fn boolean(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    match obj.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(wrong_type(name, "bool", obj)),
    }
}

/// The contents of `obj` if it is `bytes` or `bytearray` (borrowed from `bytes`): a list
/// of ints, say, is not taken for them.
pub(crate) fn byte_string<'a>(obj: &'a Bound<'_, PyAny>) -> Option<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        Some(Cow::Borrowed(b.as_bytes()))
    } else if let Ok(b) = obj.cast::<PyByteArray>() {
        Some(Cow::Owned(b.to_vec()))
    } else {
        None
    }
}

/// Argument `name` as `bytes` or `bytearray`.
pub(crate) fn bytes<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Cow<'a, [u8]>> {
    byte_string(obj).ok_or_else(|| wrong_type(name, "bytes or bytearray", obj))
}

/// Argument `name` as a path: a `str` or an `os.PathLike`.
pub(crate) fn path(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<PathBuf> {
    if !obj.is_instance_of::<PyString>() && !obj.hasattr("__fspath__")? {
        return Err(wrong_type(name, "str or os.PathLike", obj));
    }
    obj.extract::<PathBuf>()
        .map_err(|e| PyTypeError::new_err(format!("{name}: {}", e.value(obj.py()))))
}

/// An int argument: its value (saturated to the `i128` range, which holds every bound the
/// API checks) and its decimal text, for a message.
pub(crate) struct Int {
    /// The value, or `i128::MIN`/`i128::MAX` for an int past them.
    pub(crate) value: i128,
    /// The int as Python prints it.
    pub(crate) text: String,
}

/// Argument `name` as an int (anything with `__index__` but a `bool`), the error saying it
/// wants `expected` (`int`, `int or None`).
fn int(obj: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyResult<Int> {
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, expected, obj));
    }
    let value = match obj.extract::<i128>() {
        Ok(v) => v,
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            if obj.lt(0)? {
                i128::MIN
            } else {
                i128::MAX
            }
        }
        Err(_) => return Err(wrong_type(name, expected, obj)),
    };
    // Python refuses to print an int of more than 4300 digits by default.
    let text = obj
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "an int too long to print".to_string());
    Ok(Int { value, text })
}

/// Argument `name`, an int in `lo..=hi`: else a `ValueError` `{name}: {v} is not in
/// {lo}..={hi}{why}` (`why`: why the bound, or nothing).
pub(crate) fn int_in(
    obj: &Bound<'_, PyAny>,
    name: &str,
    lo: u64,
    hi: u64,
    why: &str,
) -> PyResult<u64> {
    in_range(int(obj, name, "int")?, name, lo, hi, why)
}

/// Argument `name`, an int in `lo..=hi` or `None`.
pub(crate) fn optional_int_in(
    obj: &Bound<'_, PyAny>,
    name: &str,
    lo: u64,
    hi: u64,
) -> PyResult<Option<u64>> {
    if obj.is_none() {
        return Ok(None);
    }
    in_range(int(obj, name, "int or None")?, name, lo, hi, "").map(Some)
}

fn in_range(n: Int, name: &str, lo: u64, hi: u64, why: &str) -> PyResult<u64> {
    match u64::try_from(n.value) {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(PyValueError::new_err(format!(
            "{name}: {} is not in {lo}..={hi}{why}",
            n.text
        ))),
    }
}

/// Argument `name`, a count of cycles: an int of 0 or more. A count past `u64::MAX` is
/// `u64::MAX`, which no run reaches (the watchdog stops every run by 2^58 cycles).
pub(crate) fn count(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    count_of(int(obj, name, "int")?, name)
}

/// Argument `name`, a count of cycles ([`count`]), with the int as Python prints it: for a
/// message that echoes a count past `u64::MAX` as it was given.
pub(crate) fn count_and_text(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<(u64, String)> {
    let n = int(obj, name, "int")?;
    let text = n.text.clone();
    Ok((count_of(n, name)?, text))
}

/// Argument `name`, a count of cycles ([`count`]) or `None`.
pub(crate) fn optional_count(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<u64>> {
    if obj.is_none() {
        return Ok(None);
    }
    count_of(int(obj, name, "int or None")?, name).map(Some)
}

fn count_of(n: Int, name: &str) -> PyResult<u64> {
    if n.value < 0 {
        return Err(PyValueError::new_err(format!(
            "{name}: must be >= 0, got {}",
            n.text
        )));
    }
    Ok(u64::try_from(n.value).unwrap_or(u64::MAX))
}

/// Argument `name`, an int in `0..end` (a byte address): else a `ValueError` `{name}:
/// must be in 0..{end}, got {v}`.
pub(crate) fn index(obj: &Bound<'_, PyAny>, name: &str, end: usize) -> PyResult<usize> {
    let n = int(obj, name, "int")?;
    match usize::try_from(n.value) {
        Ok(v) if v < end => Ok(v),
        _ => Err(PyValueError::new_err(format!(
            "{name}: must be in 0..{end}, got {}",
            n.text
        ))),
    }
}
