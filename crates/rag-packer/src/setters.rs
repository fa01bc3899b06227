//! The `setters!` macro: builder methods that each set one field and hand the value back.

/// Writes `#[must_use]` builder methods that each set one field and return `self`.
///
/// `pub fn with_order(order: PackOrder);` becomes
/// `pub fn with_order(mut self, order: PackOrder) -> Self { self.order = order; self }`, with the
/// doc comments written above it; `in config:` before the list sets `self.config.<field>`
/// instead. A setter that converts its argument or sets more than its field is written out by
/// hand, so that a reader sees every such method where it is.
macro_rules! setters {
    (in $inner:ident: $($(#[$attr:meta])* $vis:vis fn $name:ident($field:ident: $ty:ty);)+) => {
        $(
            $(#[$attr])*
            #[must_use]
            $vis fn $name(mut self, $field: $ty) -> Self {
                self.$inner.$field = $field;
                self
            }
        )+
    };
    ($($(#[$attr:meta])* $vis:vis fn $name:ident($field:ident: $ty:ty);)+) => {
        $(
            $(#[$attr])*
            #[must_use]
            $vis fn $name(mut self, $field: $ty) -> Self {
                self.$field = $field;
                self
            }
        )+
    };
}

pub(crate) use setters;
