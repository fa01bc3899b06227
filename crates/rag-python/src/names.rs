//! Settings Python names by string (`order="descending"`, `trust="untrusted"`): the value of each
//! name, and one `ValueError` shape listing the names for a name that is none of them. [`Named`]
//! gives a library type's values and names; [`ByName`] keeps such a setting in a Python class's
//! field.

use std::convert::Infallible;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use rag_core::{BlockType, PackOrder, SelectionStrategy, TrustLevel};
use rag_packer::{Objective, RepackMethod, RepackMode, RepackPack};

/// A library setting that Python names by string: its values and each value's name.
pub(crate) trait Named: Clone + 'static {
    /// What the setting is called in the `ValueError` for an unknown name, e.g. `order`.
    const WHAT: &'static str;
    /// Every value Python can name, in the order the `ValueError` lists the names.
    const ALL: &'static [Self];

    /// The value's name.
    fn name(&self) -> &'static str;

    /// The value named `name`, or a `ValueError` such as
    /// `unknown mode "page"; expected chunk or context` (where `WHAT` is `mode`).
    fn from_name(name: &str) -> PyResult<Self> {
        if let Some(value) = Self::ALL.iter().find(|value| value.name() == name) {
            return Ok(value.clone());
        }
        let names: Vec<&str> = Self::ALL.iter().map(|value| value.name()).collect();
        let expected = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.concat(),
        };
        Err(PyValueError::new_err(format!(
            "unknown {} {name:?}; expected {expected}",
            Self::WHAT
        )))
    }
}

/// A setting kept as the library's value and seen by Python as its name, so that a
/// `#[pyo3(get)]` field of this type reads as the name. Its setter takes a `str` and calls
/// [`ByName::from_name`]: extracting the name here instead would add PyO3's "while processing"
/// note to the `ValueError` of an unknown name.
#[derive(Clone)]
pub(crate) struct ByName<T>(pub(crate) T);

impl<T: Named> ByName<T> {
    /// The value named `name`, or the `ValueError` of [`Named::from_name`].
    pub(crate) fn from_name(name: &str) -> PyResult<Self> {
        T::from_name(name).map(Self)
    }

    /// The value's name.
    pub(crate) fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl<'py, T: Named> IntoPyObject<'py> for ByName<T> {
    type Target = PyString;
    type Output = Bound<'py, PyString>;
    type Error = Infallible;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(PyString::new(py, self.name()))
    }
}

/// [`Named`] for the library's settings that list their values in `ALL` and name each with
/// `as_str`, so the names Python takes are the library's own: the word an error calls the setting,
/// then its type.
macro_rules! named_by_the_library {
    ($($what:literal => $setting:ty),+ $(,)?) => {
        $(
            impl Named for $setting {
                const WHAT: &'static str = $what;
                const ALL: &'static [Self] = &<$setting>::ALL;

                fn name(&self) -> &'static str {
                    self.as_str()
                }
            }
        )+
    };
}

named_by_the_library! {
    "order" => PackOrder,
    "strategy" => SelectionStrategy,
    "objective" => Objective,
    "trust level" => TrustLevel,
    "block type" => BlockType,
    "method" => RepackMethod,
    "mode" => RepackMode,
    "pack" => RepackPack,
}
