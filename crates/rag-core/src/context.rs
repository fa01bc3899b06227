//! The request context every SPI call receives: who is asking, on behalf of which tenant.

use serde::{Deserialize, Serialize};

use crate::TenantId;

/// The authenticated caller: an id and the ACL labels it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Principal {
    /// Stable id of the caller (user, service account).
    pub id: String,
    /// Labels the caller is cleared for; chunkers copy them onto the chunks they emit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acl_labels: Vec<String>,
}

/// Who is asking, for which tenant: passed to every parser, chunker and packer call.
///
/// ```
/// use rag_core::{Principal, RequestContext};
///
/// let ctx = RequestContext::new("acme", Principal { id: "alice".into(), acl_labels: vec!["staff".into()] })
///     .with_request_id("req-42");
/// assert_eq!(ctx.tenant_id.as_str(), "acme");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestContext {
    /// The tenant every input and output of the call must belong to.
    pub tenant_id: TenantId,
    /// The caller.
    pub principal: Principal,
    /// Correlation id for logs and traces, when the caller has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl RequestContext {
    /// A context for `tenant_id` and `principal`, without a request id.
    pub fn new(tenant_id: impl Into<TenantId>, principal: Principal) -> Self {
        Self {
            tenant_id: tenant_id.into(),
            principal,
            request_id: None,
        }
    }

    /// A context for a local tool run: the tenant, and a principal named `local` with no labels.
    pub fn local(tenant_id: impl Into<TenantId>) -> Self {
        Self::new(
            tenant_id,
            Principal {
                id: "local".to_owned(),
                acl_labels: Vec::new(),
            },
        )
    }

    /// Sets the correlation id.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }
}
