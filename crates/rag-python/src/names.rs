//! Settings Python names by string (`order="descending"`, `trust="untrusted"`): the value of each
//! name, and one `ValueError` shape listing the names for a name that is none of them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The value named `name` in `named`, or a `ValueError` such as
/// `unknown mode "page"; expected chunk or context`, where `what` is `mode`.
pub(crate) fn from_name<T: Copy>(what: &str, name: &str, named: &[(&str, T)]) -> PyResult<T> {
    if let Some(&(_, value)) = named.iter().find(|(n, _)| *n == name) {
        return Ok(value);
    }
    let names: Vec<&str> = named.iter().map(|&(n, _)| n).collect();
    let expected = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    };
    Err(PyValueError::new_err(format!(
        "unknown {what} {name:?}; expected {expected}"
    )))
}
