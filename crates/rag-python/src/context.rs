//! `RequestContext` and `Principal`: who is asking, for which tenant.

use pyo3::prelude::*;
use rag_core::{Principal, RequestContext};

/// The authenticated caller: an id and the ACL labels it holds.
#[pyclass(frozen, module = "rag_core", name = "Principal")]
#[derive(Clone)]
pub(crate) struct PyPrincipal {
    pub(crate) inner: Principal,
}

#[pymethods]
impl PyPrincipal {
    #[new]
    #[pyo3(signature = (id, acl_labels = Vec::new()))]
    fn new(id: String, acl_labels: Vec<String>) -> Self {
        Self {
            inner: Principal { id, acl_labels },
        }
    }

    /// Stable id of the caller (user, service account).
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    /// Labels the caller is cleared for; chunkers copy them onto the chunks they emit.
    #[getter]
    fn acl_labels(&self) -> Vec<String> {
        self.inner.acl_labels.clone()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        hash_of(&(&self.inner.id, &self.inner.acl_labels))
    }

    fn __repr__(&self) -> String {
        format!(
            "Principal(id={:?}, acl_labels={:?})",
            self.inner.id, self.inner.acl_labels
        )
    }
}

/// Who is asking, for which tenant: passed to every parse, chunk and pack call.
#[pyclass(frozen, module = "rag_core", name = "RequestContext")]
#[derive(Clone)]
pub(crate) struct PyRequestContext {
    pub(crate) inner: RequestContext,
}

#[pymethods]
impl PyRequestContext {
    #[new]
    #[pyo3(signature = (tenant_id, principal = None, request_id = None))]
    fn new(tenant_id: String, principal: Option<&Bound<'_, PyPrincipal>>, request_id: Option<String>) -> Self {
        let mut inner = match principal {
            Some(p) => RequestContext::new(tenant_id, p.get().inner.clone()),
            None => RequestContext::local(tenant_id),
        };
        inner.request_id = request_id;
        Self { inner }
    }

    /// A context for a local run: the tenant, and a principal named `local` with no labels.
    #[staticmethod]
    fn local(tenant_id: String) -> Self {
        Self {
            inner: RequestContext::local(tenant_id),
        }
    }

    /// A copy of this context with `request_id` set.
    fn with_request_id(&self, request_id: String) -> Self {
        Self {
            inner: self.inner.clone().with_request_id(request_id),
        }
    }

    /// The tenant every input and output of the call must belong to.
    #[getter]
    fn tenant_id(&self) -> &str {
        self.inner.tenant_id.as_str()
    }

    /// The caller.
    #[getter]
    fn principal(&self) -> PyPrincipal {
        PyPrincipal {
            inner: self.inner.principal.clone(),
        }
    }

    /// Correlation id for logs and traces, when the caller has one.
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.inner.request_id.as_deref()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        hash_of(&(
            self.inner.tenant_id.as_str(),
            &self.inner.principal.id,
            &self.inner.principal.acl_labels,
            &self.inner.request_id,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "RequestContext(tenant_id={:?}, principal={}, request_id={})",
            self.inner.tenant_id.as_str(),
            self.principal().__repr__(),
            self.inner
                .request_id
                .as_ref()
                .map_or("None".to_owned(), |r| format!("{r:?}"))
        )
    }
}

fn hash_of(value: &impl std::hash::Hash) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(value)
}
