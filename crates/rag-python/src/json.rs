//! JSON values between Rust and Python: chunk metadata, block attributes and drop details are
//! `serde_json` values in Rust and plain dicts, lists, strings and numbers in Python.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The Python value of a JSON value: `None`, `bool`, `int`, `float`, `str`, `list` or `dict`.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
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
            let items = items.iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => map_to_py(py, map)?.into_any(),
    })
}

/// A JSON object as a new Python dict.
pub(crate) fn map_to_py<'py>(py: Python<'py>, map: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in map {
        dict.set_item(key, to_py(py, value)?)?;
    }
    Ok(dict)
}

/// The JSON value of a Python value; `what` names the value in errors (`metadata['page']`).
///
/// Tuples become arrays, like `json.dumps` does; anything that is not JSON (a set, bytes, an
/// object, a float that is not finite, a dict key that is not a string) is a `TypeError` or
/// `ValueError` naming where it was found.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
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
        list.iter()
            .enumerate()
            .map(|(i, item)| from_py(&item, &format!("{what}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array)
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        tuple
            .iter()
            .enumerate()
            .map(|(i, item)| from_py(&item, &format!("{what}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array)
    } else if let Ok(dict) = obj.cast::<PyDict>() {
        map_from_py(dict, what).map(Value::Object)
    } else {
        let type_name = obj.get_type().name()?;
        Err(PyTypeError::new_err(format!(
            "{what}: a {type_name} is not JSON (use None, bool, int, float, str, list or dict)"
        )))
    }
}

/// A Python dict with string keys as a JSON object.
pub(crate) fn map_from_py(dict: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
    let mut map = Map::new();
    for (key, value) in dict.iter() {
        let Ok(key) = key.cast::<PyString>() else {
            let type_name = key.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "{what}: the key {key} is a {type_name}; JSON object keys are strings"
            )));
        };
        let key = key.to_cow()?;
        let value = from_py(&value, &format!("{what}['{key}']"))?;
        map.insert(key.into_owned(), value);
    }
    Ok(map)
}
