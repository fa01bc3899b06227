//! Rendering packed chunks as prompt text.

mod template;

pub use template::ContextConfig;
pub(crate) use template::content_of;
