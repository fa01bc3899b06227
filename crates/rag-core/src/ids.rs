//! Identifier newtypes.
//!
//! Each id is a string on the wire (`"tenant-a"`, not `{"0": ...}`) but a distinct type in Rust, so a
//! tenant id can never be passed where a chunk id is expected.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps a string as this id.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Unwraps the id into its string.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id!(
    /// The tenant that owns a document, a chunk or a request. Data never crosses tenants.
    TenantId
);
string_id!(
    /// A source document (a file, a scanned page, a web page).
    DocumentId
);
string_id!(
    /// A named collection of documents, e.g. one knowledge base.
    CorpusId
);
string_id!(
    /// One chunk. Unique within a chunker run; chunkers derive it deterministically from their input.
    ChunkId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_serialise_as_plain_strings() {
        let id = ChunkId::new("doc-1#0003");
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""doc-1#0003""#);
        let back: ChunkId = serde_json::from_str(r#""doc-1#0003""#).unwrap();
        assert_eq!(back, id);
        assert_eq!(back.to_string(), "doc-1#0003");
    }

    #[test]
    fn ids_order_lexicographically() {
        assert!(ChunkId::from("a") < ChunkId::from("b"));
        assert!(TenantId::from("t-10") < TenantId::from("t-9"));
    }
}
