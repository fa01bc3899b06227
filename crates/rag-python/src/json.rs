//! JSON values between Rust and Python: chunk metadata, block attributes and drop details are
//! `serde_json` values in Rust and plain dicts, lists, strings and numbers in Python.
//!
//! Both directions recurse into lists and dicts, so both stop at [`MAX_DEPTH`] levels with a
//! `ValueError` naming the value, and a Python value that contains itself is a `ValueError` too
//! (as `json.dumps` raises): without the limit a cyclic dict, or a list nested 20,000 deep,
//! would overflow the thread's stack and kill the interpreter.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How many levels of lists and dicts a JSON value may nest, counting the outermost one (so
/// `{"a": [1]}` nests 2 levels).
///
/// A chunk's JSON line adds one level around its `metadata`, and serde_json's parser, which
/// `Chunk.from_json` and `ragctl pack` read lines with, stops at 128; 100 leaves every value
/// Python can set readable back, with room to spare.
pub(crate) const MAX_DEPTH: usize = 100;

fn too_deep(what: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{what}: nested deeper than {MAX_DEPTH} levels of lists and dicts, the limit of JSON values here"
    ))
}

/// The Python value of a JSON value: `None`, `bool`, `int`, `float`, `str`, `list` or `dict`;
/// `what` names the value in errors.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value, what: &str) -> PyResult<Bound<'py, PyAny>> {
    value_to_py(py, value, what, 0)
}

/// A JSON object as a new Python dict (the dict is the first level of [`MAX_DEPTH`]).
pub(crate) fn map_to_py<'py>(py: Python<'py>, map: &Map<String, Value>, what: &str) -> PyResult<Bound<'py, PyDict>> {
    entries_to_py(py, map, what, 1)
}

/// The fields of a record (a chunk's JSON form) as a new Python dict: each field's value counts
/// its levels from itself, as the same value does where it is converted alone (`metadata`).
pub(crate) fn record_to_py<'py>(py: Python<'py>, map: &Map<String, Value>, what: &str) -> PyResult<Bound<'py, PyDict>> {
    entries_to_py(py, map, what, 0)
}

/// `value` at `depth` levels of lists and dicts below the value converted.
fn value_to_py<'py>(py: Python<'py>, value: &Value, what: &str, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                // Every other serde_json number is a finite f64.
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep(what));
            }
            let items = items
                .iter()
                .enumerate()
                .map(|(i, v)| value_to_py(py, v, &format!("{what}[{i}]"), depth + 1))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(too_deep(what));
            }
            entries_to_py(py, map, what, depth + 1)?.into_any()
        }
    })
}

/// A dict of `map`'s entries, each value `depth` levels below the value converted.
fn entries_to_py<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
    what: &str,
    depth: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in map {
        dict.set_item(key, value_to_py(py, value, &format!("{what}['{key}']"), depth)?)?;
    }
    Ok(dict)
}

/// The JSON value of a Python value; `what` names the value in errors (`metadata['page']`).
///
/// Tuples become arrays, like `json.dumps` does; anything that is not JSON (a set, bytes, an
/// object, a float that is not finite, a dict key that is not a string, a list or dict that
/// contains itself, more than [`MAX_DEPTH`] levels) is a `TypeError` or `ValueError` naming
/// where it was found.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    Containers::default().value(obj, what)
}

/// A Python dict with string keys as a JSON object (the dict is the first level of
/// [`MAX_DEPTH`]).
pub(crate) fn map_from_py(dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
    let mut open = Containers::default();
    open.enter(dict.as_any(), what)?;
    open.entries(dict, what)
}

/// A record's fields (a chunk's JSON form as a dict) as a JSON object: each field's value counts
/// its levels from itself, as in [`record_to_py`].
pub(crate) fn record_from_py(dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
    Containers::default().entries(dict, what)
}

/// The lists and dicts being converted, outermost first: the path from the value converted to
/// the current one. Its length is the depth, and a container already on it is a cycle.
#[derive(Default)]
struct Containers {
    open: Vec<*mut pyo3::ffi::PyObject>,
}

impl Containers {
    /// Opens `container`, which must not be open already and must fit within [`MAX_DEPTH`].
    fn enter(&mut self, container: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
        let ptr = container.as_ptr();
        if self.open.contains(&ptr) {
            return Err(PyValueError::new_err(format!(
                "{what}: a circular reference (the value contains itself), which JSON cannot hold"
            )));
        }
        if self.open.len() >= MAX_DEPTH {
            return Err(too_deep(what));
        }
        self.open.push(ptr);
        Ok(())
    }

    fn value(&mut self, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
        if obj.is_none() {
            Ok(Value::Null)
        } else if let Ok(b) = obj.cast::<PyBool>() {
            Ok(Value::Bool(b.is_true()))
        } else if obj.is_instance_of::<PyInt>() {
            if let Ok(i) = obj.extract::<i64>() {
                Ok(Value::from(i))
            } else if let Ok(u) = obj.extract::<u64>() {
                Ok(Value::from(u))
            } else {
                Err(PyValueError::new_err(format!(
                    "{what}: the integer {obj} does not fit in 64 bits, which JSON numbers are limited to here"
                )))
            }
        } else if let Ok(f) = obj.cast::<PyFloat>() {
            let value = f.value();
            Number::from_f64(value)
                .map(Value::Number)
                .ok_or_else(|| PyValueError::new_err(format!("{what}: {value} is not a finite number, so not JSON")))
        } else if let Ok(s) = obj.cast::<PyString>() {
            Ok(Value::String(s.to_cow()?.into_owned()))
        } else if let Ok(list) = obj.cast::<PyList>() {
            self.enter(obj, what)?;
            let items = list
                .iter()
                .enumerate()
                .map(|(i, item)| self.value(&item, &format!("{what}[{i}]")))
                .collect::<PyResult<Vec<_>>>();
            self.open.pop();
            items.map(Value::Array)
        } else if let Ok(tuple) = obj.cast::<PyTuple>() {
            self.enter(obj, what)?;
            let items = tuple
                .iter()
                .enumerate()
                .map(|(i, item)| self.value(&item, &format!("{what}[{i}]")))
                .collect::<PyResult<Vec<_>>>();
            self.open.pop();
            items.map(Value::Array)
        } else if let Ok(dict) = obj.cast::<PyDict>() {
            self.enter(obj, what)?;
            let map = self.entries(dict, what);
            self.open.pop();
            map.map(Value::Object)
        } else {
            let type_name = obj.get_type().name()?;
            Err(PyTypeError::new_err(format!(
                "{what}: a {type_name} is not JSON (use None, bool, int, float, str, list or dict)"
            )))
        }
    }

    /// The entries of `dict`, whose keys must be strings.
    fn entries(&mut self, dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
        let mut map = Map::new();
        for (key, value) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                let type_name = key.get_type().name()?;
                return Err(PyTypeError::new_err(format!(
                    "{what}: the key {key} is a {type_name}; JSON object keys are strings"
                )));
            };
            let key = key.to_cow()?;
            let value = self.value(&value, &format!("{what}['{key}']"))?;
            map.insert(key.into_owned(), value);
        }
        Ok(map)
    }
}
